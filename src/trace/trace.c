/*
 * trace.c - report format: names, entry buffers, writer and streaming reader.
 */
#include "trace.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

_Static_assert(sizeof(struct trace_file_header) == TRACE_HEADER_SIZE, "file header size");
_Static_assert(sizeof(struct trace_chunk_header) == TRACE_CHUNK_HEADER_SIZE, "chunk header size");
_Static_assert(sizeof(struct trace_entry) == 8, "entry header size");
_Static_assert(sizeof(struct trace_kmetric) == 64, "kmetric record size (docs/report-format.md)");
_Static_assert(sizeof(struct trace_proc_attr) == 80, "proc_attr record size (docs/report-format.md)");
_Static_assert(sizeof(struct trace_torch_mem) == 112, "torch_mem record size (docs/report-format.md)");
_Static_assert(sizeof(struct trace_oom) == 152, "oom record size (docs/report-format.md)");

static const struct {
	const char *name;
	size_t size;
} event_types[TRACE_EV__COUNT] = {
	[TRACE_EV_STRING] = { "string", sizeof(struct trace_string) },
	[TRACE_EV_PROCESS] = { "process", sizeof(struct trace_process) },
	[TRACE_EV_THREAD] = { "thread", sizeof(struct trace_thread) },
	[TRACE_EV_NVTX_RANGE] = { "nvtx_range", sizeof(struct trace_nvtx_range) },
	[TRACE_EV_NVTX_END] = { "nvtx_end", sizeof(struct trace_nvtx_end) },
	[TRACE_EV_NVTX_MARK] = { "nvtx_mark", sizeof(struct trace_nvtx_mark) },
	[TRACE_EV_NAME] = { "name", sizeof(struct trace_name) },
	[TRACE_EV_OSRT] = { "osrt", sizeof(struct trace_osrt) },
	[TRACE_EV_CPU_SAMPLE] = { "cpu_sample", sizeof(struct trace_cpu_sample) },
	[TRACE_EV_API] = { "api", sizeof(struct trace_api) },
	[TRACE_EV_KERNEL] = { "kernel", sizeof(struct trace_kernel) },
	[TRACE_EV_MEMCPY] = { "memcpy", sizeof(struct trace_memcpy) },
	[TRACE_EV_MEMSET] = { "memset", sizeof(struct trace_memset) },
	[TRACE_EV_SYNC] = { "sync", sizeof(struct trace_sync) },
	[TRACE_EV_MEMORY] = { "memory", sizeof(struct trace_memory) },
	[TRACE_EV_DEVICE] = { "device", sizeof(struct trace_device) },
	[TRACE_EV_METRIC] = { "metric", sizeof(struct trace_metric) },
	[TRACE_EV_DROPS] = { "drops", sizeof(struct trace_drops) },
	[TRACE_EV_CAPTURE] = { "capture", sizeof(struct trace_capture) },
	[TRACE_EV_WARNING] = { "warning", sizeof(struct trace_warning) },
	[TRACE_EV_KMETRIC] = { "kmetric", sizeof(struct trace_kmetric) },
	[TRACE_EV_PROC_ATTR] = { "proc_attr", sizeof(struct trace_proc_attr) },
	[TRACE_EV_TORCH_MEM] = { "torch_mem", sizeof(struct trace_torch_mem) },
	[TRACE_EV_OOM] = { "oom", sizeof(struct trace_oom) },
};

const char *trace_event_name(unsigned type)
{
	return type < TRACE_EV__COUNT ? event_types[type].name : NULL;
}

int trace_event_type_by_name(const char *name)
{
	for (unsigned i = 1; i < TRACE_EV__COUNT; i++)
		if (event_types[i].name && !strcmp(event_types[i].name, name))
			return (int)i;
	return -1;
}

size_t trace_record_size(unsigned type)
{
	return type < TRACE_EV__COUNT ? event_types[type].size : 0;
}

const char *trace_osrt_name(unsigned func)
{
	static const char *names[OSRT__COUNT] = {
		[OSRT_READ] = "read", [OSRT_WRITE] = "write", [OSRT_PREAD] = "pread",
		[OSRT_PWRITE] = "pwrite", [OSRT_READV] = "readv", [OSRT_WRITEV] = "writev",
		[OSRT_RECV] = "recv", [OSRT_RECVFROM] = "recvfrom", [OSRT_RECVMSG] = "recvmsg",
		[OSRT_SEND] = "send", [OSRT_SENDTO] = "sendto", [OSRT_SENDMSG] = "sendmsg",
		[OSRT_POLL] = "poll", [OSRT_PPOLL] = "ppoll", [OSRT_SELECT] = "select",
		[OSRT_PSELECT] = "pselect", [OSRT_EPOLL_WAIT] = "epoll_wait",
		[OSRT_EPOLL_PWAIT] = "epoll_pwait", [OSRT_NANOSLEEP] = "nanosleep",
		[OSRT_USLEEP] = "usleep", [OSRT_SLEEP] = "sleep",
		[OSRT_CLOCK_NANOSLEEP] = "clock_nanosleep",
		[OSRT_MUTEX_LOCK] = "pthread_mutex_lock",
		[OSRT_COND_WAIT] = "pthread_cond_wait",
		[OSRT_COND_TIMEDWAIT] = "pthread_cond_timedwait",
		[OSRT_JOIN] = "pthread_join", [OSRT_SEM_WAIT] = "sem_wait",
		[OSRT_SEM_TIMEDWAIT] = "sem_timedwait", [OSRT_OPEN] = "open",
		[OSRT_OPENAT] = "openat", [OSRT_FSYNC] = "fsync", [OSRT_FDATASYNC] = "fdatasync",
		[OSRT_WAITPID] = "waitpid", [OSRT_WAIT] = "wait", [OSRT_CONNECT] = "connect",
		[OSRT_ACCEPT] = "accept", [OSRT_FUTEX] = "futex",
		[OSRT_RWLOCK_RDLOCK] = "pthread_rwlock_rdlock",
		[OSRT_RWLOCK_WRLOCK] = "pthread_rwlock_wrlock", [OSRT_FOPEN] = "fopen",
		[OSRT_FREAD] = "fread", [OSRT_FWRITE] = "fwrite", [OSRT_IOCTL] = "ioctl",
		[OSRT_MMAP] = "mmap",
	};
	return func < OSRT__COUNT && names[func] ? names[func] : "unknown";
}

const char *trace_copy_kind_name(unsigned kind)
{
	static const char *names[] = { "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
				       "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
	return kind < ARRAY_SIZE(names) ? names[kind] : "unknown";
}

const char *trace_mem_kind_name(unsigned kind)
{
	static const char *names[] = { "unknown", "pageable", "pinned", "device", "array",
				       "managed", "device_static", "managed_static" };
	return kind < ARRAY_SIZE(names) ? names[kind] : "unknown";
}

const char *trace_sync_type_name(unsigned type)
{
	static const char *names[] = { "unknown", "event_sync", "stream_wait_event",
				       "stream_sync", "context_sync" };
	return type < ARRAY_SIZE(names) ? names[type] : "unknown";
}

const char *trace_drop_source_name(unsigned src)
{
	static const char *names[TRACE_DROP__COUNT] = {
		[TRACE_DROP_BUFFER] = "buffer", [TRACE_DROP_CUPTI] = "cupti",
		[TRACE_DROP_NVTX] = "nvtx", [TRACE_DROP_WRITE] = "write",
		[TRACE_DROP_METRIC] = "metric",
	};
	return src < TRACE_DROP__COUNT && names[src] ? names[src] : "unknown";
}

/* ---- entry buffers ---- */

void trace_buf_add(struct trace_buf *b, unsigned type, const void *rec, size_t size)
{
	size_t esz = trace_entry_size(size);
	struct trace_entry e = { (uint16_t)type, (uint16_t)esz, 0 };

	if (esz > UINT16_MAX)
		BUG("entry too large: %zu", esz);
	ALLOC_GROW(b->data, b->len + esz, b->alloc);
	memcpy(b->data + b->len, &e, sizeof(e));
	memcpy(b->data + b->len + sizeof(e), rec, size);
	memset(b->data + b->len + sizeof(e) + size, 0, esz - sizeof(e) - size);
	b->len += esz;
}

uint32_t trace_buf_add_string(struct trace_buf *b, uint32_t id, const char *s, size_t len)
{
	struct trace_string ts = { id, 0 };
	size_t esz;
	struct trace_entry e;

	if (len > UINT16_MAX - 64)
		len = UINT16_MAX - 64; /* strings are cut at 64 KiB */
	ts.len = (uint32_t)len;
	esz = trace_entry_size(sizeof(ts) + len);
	e = (struct trace_entry){ TRACE_EV_STRING, (uint16_t)esz, 0 };
	ALLOC_GROW(b->data, b->len + esz, b->alloc);
	memcpy(b->data + b->len, &e, sizeof(e));
	memcpy(b->data + b->len + sizeof(e), &ts, sizeof(ts));
	memcpy(b->data + b->len + sizeof(e) + sizeof(ts), s, len);
	memset(b->data + b->len + sizeof(e) + sizeof(ts) + len, 0,
	       esz - sizeof(e) - sizeof(ts) - len);
	b->len += esz;
	return id;
}

void trace_buf_release(struct trace_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ---- headers ---- */

void trace_file_header_fill(struct trace_file_header *hdr, uint64_t features)
{
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->magic, TRACE_MAGIC, 8);
	hdr->version = TRACE_VERSION;
	hdr->min_reader = TRACE_MIN_READER;
	hdr->header_size = TRACE_HEADER_SIZE;
	hdr->features = features;
	hdr->created_realtime_ns = now_realtime_ns();
	hdr->header_crc = crc32c(0, hdr, offsetof(struct trace_file_header, header_crc));
}

void trace_chunk_header_fill(struct trace_chunk_header *hdr, unsigned type, unsigned flags,
			     uint32_t stream, const void *payload, uint32_t stored_size,
			     uint32_t raw_size)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = TRACE_CHUNK_MAGIC;
	hdr->type = (uint16_t)type;
	hdr->flags = (uint16_t)flags;
	hdr->stream = stream;
	hdr->stored_size = stored_size;
	hdr->raw_size = raw_size;
	hdr->payload_crc = crc32c(0, payload, stored_size);
	hdr->header_crc = crc32c(0, hdr, offsetof(struct trace_chunk_header, header_crc));
}

static int chunk_header_ok(const struct trace_chunk_header *h)
{
	return h->magic == TRACE_CHUNK_MAGIC &&
	       h->header_crc == crc32c(0, h, offsetof(struct trace_chunk_header, header_crc)) &&
	       h->stored_size <= TRACE_MAX_CHUNK && h->raw_size <= TRACE_MAX_CHUNK;
}

/* ---- writer ---- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int trace_writer_fdopen(struct trace_writer *w, int fd, const char *path, int header)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(path);
	w->level = 1;
	if (header) {
		struct trace_file_header hdr;
		trace_file_header_fill(&hdr, TRACE_FEAT_ZSTD);
		if (write_all(fd, &hdr, sizeof(hdr)) < 0) {
			int e = errno;
			close(fd);
			w->fd = -1;
			free(w->path);
			w->path = NULL;
			return error("cannot write '%s': %s", path, strerror(e));
		}
		w->offset = sizeof(hdr);
	}
	return 0;
}

int trace_writer_open(struct trace_writer *w, const char *path, int excl)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC), 0644);

	if (fd < 0) {
		memset(w, 0, sizeof(*w));
		w->fd = -1;
		if (errno == EEXIST)
			return error("report '%s' already exists (use --force to overwrite)", path);
		return error("cannot create '%s': %s", path, strerror(errno));
	}
	return trace_writer_fdopen(w, fd, path, 1);
}

int trace_writer_raw(struct trace_writer *w, const struct trace_chunk_header *hdr,
		     const void *stored)
{
	if (write_all(w->fd, hdr, sizeof(*hdr)) < 0 ||
	    write_all(w->fd, stored, hdr->stored_size) < 0) {
		int e = errno;
		/* one line for a disk that stays full, not one per chunk */
		if (!w->failed)
			error("cannot write '%s': %s", w->path, strerror(e));
		w->failed = 1;
		errno = e;
		return -1;
	}
	w->offset += sizeof(*hdr) + hdr->stored_size;
	return 0;
}

int trace_writer_chunk(struct trace_writer *w, unsigned type, uint32_t stream,
		       const void *raw, size_t len, int compress)
{
	struct trace_chunk_header hdr;
	const void *stored = raw;
	size_t stored_len = len;
	unsigned flags = 0;

	if (len > TRACE_MAX_CHUNK)
		BUG("chunk of %zu bytes", len);
	if (compress && len) {
		size_t bound = ZSTD_compressBound(len), n;
		if (!w->zctx)
			w->zctx = ZSTD_createCCtx();
		if (bound > w->zcap) {
			free(w->zbuf);
			w->zbuf = xmalloc(bound);
			w->zcap = bound;
		}
		n = ZSTD_compressCCtx(w->zctx, w->zbuf, w->zcap, raw, len, w->level);
		if (!ZSTD_isError(n) && n < len) {
			stored = w->zbuf;
			stored_len = n;
			flags |= TRACE_CHUNK_ZSTD;
		}
	}
	trace_chunk_header_fill(&hdr, type, flags, stream, stored, (uint32_t)stored_len,
				(uint32_t)len);
	return trace_writer_raw(w, &hdr, stored);
}

int trace_writer_close(struct trace_writer *w, int sync)
{
	int ret = 0;

	if (w->fd >= 0) {
		if (sync && fsync(w->fd) < 0 && errno != EINVAL)
			ret = error("cannot write '%s': %s", w->path, strerror(errno));
		if (close(w->fd) < 0)
			ret = error("cannot write '%s': %s", w->path, strerror(errno));
	}
	w->fd = -1;
	if (w->zctx)
		ZSTD_freeCCtx(w->zctx);
	free(w->zbuf);
	free(w->path);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	return ret;
}

/* ---- reader ---- */

int trace_is_report(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(magic, 1, 8, f);
	fclose(f);
	return n == 8 && !memcmp(magic, TRACE_MAGIC, 8);
}

int trace_reader_open(struct trace_reader *r, const char *path)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "rb");
	if (!r->f)
		return error("cannot open report '%s': %s", path, strerror(errno));
	r->path = xstrdup(path);
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		trace_reader_close(r);
		return error("cannot read report '%s': is a directory", path);
	}
	r->file_size = (uint64_t)st.st_size;
	{
		size_t n = fread(&r->hdr, 1, sizeof(r->hdr), r->f);
		r->bytes_read = n;
		if (n < 8 || memcmp(r->hdr.magic, TRACE_MAGIC, 8)) {
			trace_reader_close(r);
			return error("'%s' is not a gpuscope report", path);
		}
		if (n < sizeof(r->hdr)) {
			trace_reader_close(r);
			return error("report '%s': truncated header", path);
		}
	}
	if (r->hdr.header_crc != crc32c(0, &r->hdr, offsetof(struct trace_file_header, header_crc))) {
		trace_reader_close(r);
		return error("report '%s': corrupt header (checksum mismatch)", path);
	}
	if (r->hdr.min_reader > TRACE_VERSION) {
		unsigned v = r->hdr.version, m = r->hdr.min_reader;
		trace_reader_close(r);
		return error("report '%s': format version %u needs a reader of version %u or newer "
			     "(this gpuscope reads version %d)", path, v, m, TRACE_VERSION);
	}
	if (r->hdr.header_size < TRACE_HEADER_SIZE || r->hdr.header_size > 4096) {
		trace_reader_close(r);
		return error("report '%s': corrupt header (size %u)", path, r->hdr.header_size);
	}
	if (fseeko(r->f, r->hdr.header_size, SEEK_SET) < 0) {
		trace_reader_close(r);
		return error("cannot read report '%s': %s", path, strerror(errno));
	}
	r->offset = r->hdr.header_size;
	return 0;
}

static void note_problem(struct trace_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note_problem(struct trace_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->first_problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->first_problem, sizeof(r->first_problem), fmt, ap);
	va_end(ap);
}

/* fread() that counts what it read in r->bytes_read (`info` and tests/trace). */
static size_t reader_fread(struct trace_reader *r, void *buf, size_t n)
{
	size_t got = fread(buf, 1, n, r->f);

	r->bytes_read += got;
	return got;
}

/*
 * The first offset at or after @pos that holds data, skipping holes of a
 * sparse file (SEEK_DATA): a hole reads as zeros, and zeros hold no chunk
 * header.  @pos itself where the file system does not say; -1 when only a
 * hole is left.
 */
static int64_t next_data(struct trace_reader *r, uint64_t pos)
{
	off_t d = lseek(fileno(r->f), (off_t)pos, SEEK_DATA);

	if (d < 0)
		return errno == ENXIO ? -1 : (int64_t)pos;
	return d < (off_t)pos ? (int64_t)pos : (int64_t)d;
}

/*
 * Scan forward from @from for the next valid chunk header; returns its
 * offset or -1.  Holes are skipped without reading them (a 2 GB sparse file
 * with a valid header once took 10 s here), and the scan looks for the
 * magic's first byte with memchr rather than comparing at every offset.
 */
static int64_t resync(struct trace_reader *r, uint64_t from)
{
	unsigned char buf[65536 + TRACE_CHUNK_HEADER_SIZE];
	uint64_t pos = from;

	for (;;) {
		int64_t d = next_data(r, pos);
		size_t n, i = 0;

		if (d < 0)
			return -1;
		pos = (uint64_t)d;
		if (fseeko(r->f, (off_t)pos, SEEK_SET) < 0)
			return -1;
		n = reader_fread(r, buf, sizeof(buf));
		if (n < TRACE_CHUNK_HEADER_SIZE)
			return -1;
		while (i + TRACE_CHUNK_HEADER_SIZE <= n) {
			const unsigned char *c = memchr(buf + i, 'C', n - TRACE_CHUNK_HEADER_SIZE + 1 - i);
			struct trace_chunk_header h;
			if (!c)
				break;
			i = (size_t)(c - buf);
			if (!memcmp(c, "CHNK", 4)) {
				memcpy(&h, c, sizeof(h));
				if (chunk_header_ok(&h))
					return (int64_t)(pos + i);
			}
			i++;
		}
		pos += n - TRACE_CHUNK_HEADER_SIZE + 1;
	}
}

int trace_reader_next(struct trace_reader *r, struct trace_chunk *c)
{
	for (;;) {
		struct trace_chunk_header h;
		size_t n;

		if (fseeko(r->f, (off_t)r->offset, SEEK_SET) < 0)
			return error("cannot read report '%s': %s", r->path, strerror(errno));
		n = reader_fread(r, &h, sizeof(h));
		if (n == 0)
			return 0;
		if (n < sizeof(h)) {
			r->truncated = 1;
			r->bytes_skipped += n;
			note_problem(r, "chunk at byte %llu truncated", (unsigned long long)r->offset);
			return 0;
		}
		if (!chunk_header_ok(&h)) {
			int64_t next = resync(r, r->offset + 1);
			r->chunks_bad++;
			note_problem(r, "corrupt chunk header at byte %llu",
				     (unsigned long long)r->offset);
			if (next < 0) {
				r->bytes_skipped += r->file_size - r->offset;
				return 0;
			}
			r->bytes_skipped += (uint64_t)next - r->offset;
			r->offset = (uint64_t)next;
			continue;
		}
		if (r->offset + sizeof(h) + h.stored_size > r->file_size) {
			r->truncated = 1;
			r->bytes_skipped += r->file_size - r->offset;
			note_problem(r, "chunk at byte %llu truncated (%u of %u payload bytes)",
				     (unsigned long long)r->offset,
				     (unsigned)(r->file_size - r->offset - sizeof(h)),
				     h.stored_size);
			return 0;
		}
		if (h.stored_size > r->stored_cap) {
			free(r->stored);
			r->stored_cap = h.stored_size;
			r->stored = xmalloc(r->stored_cap);
		}
		if (reader_fread(r, r->stored, h.stored_size) != h.stored_size)
			return error("cannot read report '%s': %s", r->path,
				     ferror(r->f) ? strerror(errno) : "short read");
		c->offset = r->offset;
		r->offset += sizeof(h) + h.stored_size;
		if (crc32c(0, r->stored, h.stored_size) != h.payload_crc) {
			r->chunks_bad++;
			r->bytes_skipped += sizeof(h) + h.stored_size;
			note_problem(r, "chunk at byte %llu has a bad checksum",
				     (unsigned long long)c->offset);
			continue;
		}
		if (h.type != TRACE_CHUNK_EVENTS && h.type != TRACE_CHUNK_STREAM_END) {
			r->chunks_unknown++;
			continue;
		}
		if (h.flags & TRACE_CHUNK_ZSTD) {
			size_t got;
			if (h.raw_size > r->raw_cap) {
				free(r->raw);
				r->raw_cap = h.raw_size;
				r->raw = xmalloc(r->raw_cap);
			}
			if (!r->dctx)
				r->dctx = ZSTD_createDCtx();
			got = ZSTD_decompressDCtx(r->dctx, r->raw, h.raw_size, r->stored,
						  h.stored_size);
			if (ZSTD_isError(got) || got != h.raw_size) {
				r->chunks_bad++;
				r->bytes_skipped += sizeof(h) + h.stored_size;
				note_problem(r, "chunk at byte %llu does not decompress",
					     (unsigned long long)c->offset);
				continue;
			}
			c->data = r->raw;
		} else {
			if (h.raw_size != h.stored_size) {
				r->chunks_bad++;
				note_problem(r, "chunk at byte %llu has inconsistent sizes",
					     (unsigned long long)c->offset);
				continue;
			}
			c->data = r->stored;
		}
		c->hdr = h;
		c->len = h.raw_size;
		r->chunks_read++;
		return 1;
	}
}

void trace_reader_sizes(struct trace_reader *r, uint64_t *raw_bytes, uint64_t *chunks)
{
	uint64_t pos = r->offset;

	*raw_bytes = *chunks = 0;
	for (;;) {
		struct trace_chunk_header h;
		if (fseeko(r->f, (off_t)pos, SEEK_SET) < 0 || reader_fread(r, &h, sizeof(h)) != sizeof(h) ||
		    !chunk_header_ok(&h) || pos + sizeof(h) + h.stored_size > r->file_size)
			break;
		if (h.type == TRACE_CHUNK_EVENTS) {
			*raw_bytes += h.raw_size;
			(*chunks)++;
		}
		pos += sizeof(h) + h.stored_size;
	}
	clearerr(r->f);
}

void trace_reader_close(struct trace_reader *r)
{
	if (r->f)
		fclose(r->f);
	if (r->dctx)
		ZSTD_freeDCtx(r->dctx);
	free(r->stored);
	free(r->raw);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

int trace_entry_next(const unsigned char *data, size_t len, size_t *pos, unsigned *type,
		     const void **rec, size_t *size, void *scratch, size_t scratch_size)
{
	struct trace_entry e;
	size_t known, have;

	if (*pos >= len)
		return 0;
	if (len - *pos < sizeof(e))
		return -1;
	memcpy(&e, data + *pos, sizeof(e));
	if (e.size < sizeof(e) || (e.size & 7) || e.size > len - *pos)
		return -1;
	*type = e.type;
	have = e.size - sizeof(e);
	*size = have;
	known = trace_record_size(e.type);
	if (e.type == TRACE_EV_STRING || have >= known || !known) {
		*rec = data + *pos + sizeof(e);
	} else {
		/* an older, shorter record: zero-fill the fields it lacks */
		if (known > scratch_size)
			return -1;
		memcpy(scratch, data + *pos + sizeof(e), have);
		memset((char *)scratch + have, 0, known - have);
		*rec = scratch;
	}
	*pos += e.size;
	return 1;
}
