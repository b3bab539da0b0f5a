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
_Static_assert(sizeof(struct trace_index_head) == 16, "index head size (docs/report-format.md)");
_Static_assert(sizeof(struct trace_index_entry) == 64, "index entry size (docs/report-format.md)");
_Static_assert(sizeof(struct trace_index_tail) == 16, "index tail size (docs/report-format.md)");

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

/* ---- chunk summaries (the index) ---- */

/*
 * How each entry type places itself in time, for the index: records that
 * start with a start, end pair; records whose first field is a time; the
 * nvtx_end, whose end is its second field.  Types not named have no time
 * (strings, processes, names, devices, drops).  ins: the type counts in a
 * report's span as model_finish() computes it.
 */
enum { TK_NONE, TK_INTERVAL, TK_POINT, TK_END };
static const struct {
	unsigned char kind, in_span;
} time_kind[TRACE_EV__COUNT] = {
	[TRACE_EV_NVTX_RANGE] = { TK_INTERVAL, 1 }, [TRACE_EV_OSRT] = { TK_INTERVAL, 1 },
	[TRACE_EV_API] = { TK_INTERVAL, 1 },        [TRACE_EV_KERNEL] = { TK_INTERVAL, 1 },
	[TRACE_EV_MEMCPY] = { TK_INTERVAL, 1 },     [TRACE_EV_MEMSET] = { TK_INTERVAL, 1 },
	[TRACE_EV_SYNC] = { TK_INTERVAL, 1 },
	[TRACE_EV_NVTX_MARK] = { TK_POINT, 1 },     [TRACE_EV_MEMORY] = { TK_POINT, 1 },
	[TRACE_EV_TORCH_MEM] = { TK_POINT, 1 },     [TRACE_EV_OOM] = { TK_POINT, 1 },
	[TRACE_EV_CPU_SAMPLE] = { TK_POINT, 0 },    [TRACE_EV_METRIC] = { TK_POINT, 0 },
	[TRACE_EV_CAPTURE] = { TK_POINT, 0 },       [TRACE_EV_KMETRIC] = { TK_POINT, 0 },
	[TRACE_EV_THREAD] = { TK_POINT, 0 },        [TRACE_EV_WARNING] = { TK_POINT, 0 },
	[TRACE_EV_PROC_ATTR] = { TK_POINT, 0 },
	[TRACE_EV_NVTX_END] = { TK_END, 0 },
};

unsigned trace_index_timed_types(void)
{
	unsigned mask = 0;

	for (unsigned t = 0; t < TRACE_EV__COUNT && t < 32; t++)
		if (time_kind[t].kind != TK_NONE)
			mask |= 1u << t;
	return mask;
}

static void extend(uint64_t *lo, uint64_t *hi, int *any, uint64_t a, uint64_t b)
{
	if (!*any || a < *lo)
		*lo = a;
	if (!*any || b > *hi)
		*hi = b;
	*any = 1;
}

void trace_chunk_summary(const unsigned char *data, size_t len, struct trace_index_entry *e)
{
	unsigned char scratch[512];
	size_t pos = 0, size;
	unsigned type;
	const void *rec;
	int ret, any = 0, any_span = 0;
	uint64_t t[2];

	e->t_lo = e->t_hi = e->span_lo = e->span_hi = e->end_hi = 0;
	e->types = 0;
	e->flags = 0;
	while ((ret = trace_entry_next(data, len, &pos, &type, &rec, &size, scratch,
				       sizeof(scratch))) > 0) {
		unsigned kind;

		if (type >= 32) {
			e->flags |= TRACE_IDX_WIDE;
			continue;
		}
		e->types |= 1u << type;
		kind = type < TRACE_EV__COUNT ? time_kind[type].kind : TK_NONE;
		if (kind == TK_NONE)
			continue;
		/* every timed record is at least 16 bytes, zero-filled when older */
		memcpy(t, rec, sizeof(t));
		if (kind == TK_END) {
			extend(&e->t_lo, &e->t_hi, &any, t[1], t[1]);
			if (t[1] > e->end_hi)
				e->end_hi = t[1];
			continue;
		}
		if (kind == TK_POINT)
			t[1] = t[0];
		else if (type == TRACE_EV_NVTX_RANGE && !t[1] &&
			 ((const struct trace_nvtx_range *)rec)->kind == TRACE_NVTX_STARTEND)
			e->flags |= TRACE_IDX_OPEN;
		if (time_kind[type].in_span) {
			/* as model_finish() spans: lo from non-zero starts, hi from either */
			uint64_t hi = t[1] > t[0] ? t[1] : t[0];
			if (t[0] && (!e->span_lo || t[0] < e->span_lo))
				e->span_lo = t[0];
			if (!any_span || hi > e->span_hi)
				e->span_hi = hi;
			any_span = 1;
		}
		if (type == TRACE_EV_NVTX_RANGE && !t[1])
			t[1] = UINT64_MAX; /* not ended yet: its end is not known here */
		else if (t[1] < t[0])
			t[1] = t[0];
		extend(&e->t_lo, &e->t_hi, &any, t[0], t[1]);
	}
	if (ret == 0)
		e->flags |= TRACE_IDX_KNOWN;
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

/* Write one chunk; its index entry from @sum (NULL: nothing known of its payload). */
static int writer_put(struct trace_writer *w, const struct trace_chunk_header *hdr,
		      const void *stored, const struct trace_index_entry *sum)
{
	uint64_t at = w->offset;

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
	if (w->indexed) {
		struct trace_index_entry *e;
		ALLOC_GROW(w->index, w->nr_index + 1, w->alloc_index);
		e = &w->index[w->nr_index++];
		if (sum)
			*e = *sum;
		else
			memset(e, 0, sizeof(*e));
		e->offset = at;
		e->stream = hdr->stream;
		e->chunk_type = hdr->type;
		e->reserved = 0;
	}
	return 0;
}

int trace_writer_raw(struct trace_writer *w, const struct trace_chunk_header *hdr,
		     const void *stored)
{
	/* a payload already encoded: its content is not known here, so it is never skipped */
	return writer_put(w, hdr, stored, NULL);
}

int trace_writer_chunk(struct trace_writer *w, unsigned type, uint32_t stream,
		       const void *raw, size_t len, int compress)
{
	struct trace_chunk_header hdr;
	struct trace_index_entry sum;
	const void *stored = raw;
	size_t stored_len = len;
	unsigned flags = 0;

	if (len > TRACE_MAX_CHUNK)
		BUG("chunk of %zu bytes", len);
	memset(&sum, 0, sizeof(sum));
	if (w->indexed) {
		if (type == TRACE_CHUNK_EVENTS)
			trace_chunk_summary(raw, len, &sum);
		else
			sum.flags = TRACE_IDX_KNOWN; /* no entries */
	}
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
	return writer_put(w, &hdr, stored, &sum);
}

int trace_writer_index(struct trace_writer *w)
{
	struct trace_index_head head = { sizeof(struct trace_index_entry), 0, 0 };
	struct trace_index_tail tail;
	size_t len;
	unsigned char *p;
	int ret;

	if (!w->indexed || w->failed || w->fd < 0)
		return w->failed ? -1 : 0;
	w->indexed = 0; /* a chunk after the index would leave it not last: stop here */
	len = sizeof(head) + w->nr_index * sizeof(*w->index) + sizeof(tail);
	if (len > TRACE_MAX_CHUNK) {
		/* 4 M chunks: readers scan such a report, as one without an index */
		free(w->index);
		w->index = NULL;
		w->nr_index = w->alloc_index = 0;
		return 0;
	}
	head.count = (uint32_t)w->nr_index;
	memset(&tail, 0, sizeof(tail));
	tail.index_offset = w->offset;
	memcpy(tail.magic, TRACE_INDEX_MAGIC, 8);
	p = xmalloc(len);
	memcpy(p, &head, sizeof(head));
	if (w->nr_index)
		memcpy(p + sizeof(head), w->index, w->nr_index * sizeof(*w->index));
	memcpy(p + len - sizeof(tail), &tail, sizeof(tail));
	/* stored raw: its tail must be the file's last 16 bytes */
	ret = trace_writer_chunk(w, TRACE_CHUNK_INDEX, 0, p, len, 0);
	free(p);
	free(w->index);
	w->index = NULL;
	w->nr_index = w->alloc_index = 0;
	return ret;
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
	free(w->index);
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

/*
 * Read the chunk at r->offset into @c: 1 a chunk, 2 a chunk skipped (damaged,
 * or of a type this reader skips; r->offset is then past it), 0 the end,
 * -1 an I/O error.
 */
static int read_chunk(struct trace_reader *r, struct trace_chunk *c)
{
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
		return 2;
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
		return 2;
	}
	if (h.type == TRACE_CHUNK_INDEX)
		return 2; /* read by trace_reader_index(), not a chunk of data */
	if (h.type != TRACE_CHUNK_EVENTS && h.type != TRACE_CHUNK_STREAM_END) {
		r->chunks_unknown++;
		return 2;
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
			return 2;
		}
		c->data = r->raw;
	} else {
		if (h.raw_size != h.stored_size) {
			r->chunks_bad++;
			note_problem(r, "chunk at byte %llu has inconsistent sizes",
				     (unsigned long long)c->offset);
			return 2;
		}
		c->data = r->stored;
	}
	c->hdr = h;
	c->len = h.raw_size;
	r->chunks_read++;
	return 1;
}

int trace_reader_next(struct trace_reader *r, struct trace_chunk *c)
{
	for (;;) {
		int ret;

		if (r->index) {
			const struct trace_index_entry *e;
			if (r->index_pos >= r->nr_index) {
				r->offset = r->file_size;
				return 0;
			}
			e = &r->index[r->index_pos++];
			if (r->want && !r->want(r->want_ctx, e)) {
				r->chunks_skipped++;
				continue;
			}
			r->offset = e->offset;
		}
		ret = read_chunk(r, c);
		if (ret != 2)
			return ret;
	}
}

/* Read @n bytes at @off without moving the stream (counted in bytes_read); 0 or -1. */
static int reader_pread(struct trace_reader *r, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t got = pread(fileno(r->f), (char *)buf + done, n - done, (off_t)(off + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	r->bytes_read += n;
	return 0;
}

/* Say why the index is not used (once), and read the report by scanning. */
static int index_ignored(struct trace_reader *r, int quiet, const char *why)
{
	if (!quiet)
		warning("report '%s': chunk index ignored (%s); reading every chunk", r->path, why);
	free(r->index);
	r->index = NULL;
	r->nr_index = r->index_pos = 0;
	return 0;
}

int trace_reader_index(struct trace_reader *r, int quiet)
{
	struct trace_index_tail tail;
	struct trace_index_head head;
	struct trace_chunk_header h;
	unsigned char *p;
	uint64_t at, need;
	size_t esz;

	if (r->index)
		return 1;
	if (r->file_size < r->hdr.header_size + sizeof(h) + sizeof(head) + sizeof(tail) ||
	    reader_pread(r, &tail, sizeof(tail), r->file_size - sizeof(tail)) < 0 ||
	    memcmp(tail.magic, TRACE_INDEX_MAGIC, 8))
		return 0; /* no index: an older writer, a collector part, a truncated file */
	at = tail.index_offset;
	if (at < r->hdr.header_size || at > r->file_size - sizeof(h) - sizeof(tail) ||
	    reader_pread(r, &h, sizeof(h), at) < 0)
		return index_ignored(r, quiet, "its offset is out of range");
	if (!chunk_header_ok(&h) || h.type != TRACE_CHUNK_INDEX || (h.flags & TRACE_CHUNK_ZSTD) ||
	    h.stored_size != h.raw_size || at + sizeof(h) + h.stored_size != r->file_size ||
	    h.stored_size < sizeof(head) + sizeof(tail))
		return index_ignored(r, quiet, "bad index chunk header");
	p = xmalloc(h.stored_size);
	if (reader_pread(r, p, h.stored_size, at + sizeof(h)) < 0 ||
	    crc32c(0, p, h.stored_size) != h.payload_crc) {
		free(p);
		return index_ignored(r, quiet, "bad checksum");
	}
	memcpy(&head, p, sizeof(head));
	esz = head.entry_size;
	need = sizeof(head) + (uint64_t)head.count * esz + sizeof(tail);
	if (esz < sizeof(struct trace_index_entry) || esz % 8 || need != h.stored_size) {
		free(p);
		return index_ignored(r, quiet, "inconsistent sizes");
	}
	r->nr_index = head.count;
	r->index = xcalloc(head.count ? head.count : 1, sizeof(*r->index));
	for (size_t i = 0; i < head.count; i++)
		memcpy(&r->index[i], p + sizeof(head) + i * esz, sizeof(*r->index));
	free(p);
	/*
	 * Every entry against the chunk it names: the chunks must follow each
	 * other from the first byte after the file header to the index, so
	 * that a trusted index skips nothing it does not list.  32 bytes a
	 * chunk are read, as trace_reader_sizes() reads them.
	 */
	{
		uint64_t pos = r->hdr.header_size;
		for (size_t i = 0; i < r->nr_index; i++) {
			struct trace_chunk_header ch;
			const struct trace_index_entry *e = &r->index[i];
			if (e->offset != pos || pos + sizeof(ch) > at ||
			    reader_pread(r, &ch, sizeof(ch), pos) < 0)
				return index_ignored(r, quiet, "an entry's offset does not hold a chunk");
			if (!chunk_header_ok(&ch) || ch.type != e->chunk_type || ch.stream != e->stream ||
			    pos + sizeof(ch) + ch.stored_size > at)
				return index_ignored(r, quiet, "an entry does not match its chunk");
			pos += sizeof(ch) + ch.stored_size;
		}
		if (pos != at)
			return index_ignored(r, quiet, "chunks missing from the index");
	}
	r->index_offset = at;
	r->index_pos = 0;
	return 1;
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
	free(r->index);
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
