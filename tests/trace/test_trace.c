/*
 * test_trace.c - the report format: round trip, damage, versions, merge.
 */
#include "gstest.h"
#include "model/model.h"
#include "trace/trace.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", gstest_tmpdir(), name);
	return buf[k];
}

/* A small report with one process, two kernels, an NVTX range and a start/end pair. */
static void write_small(const char *path, uint32_t stream, uint32_t pid, int chunks)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_kernel k = { 0 };
	struct trace_nvtx_range r = { 0 };
	struct trace_nvtx_end e = { 0 };

	CHECK(trace_builder_open(&b, path, 1, stream) == 0);
	p.pid = pid;
	p.ppid = 1;
	p.cmdline_id = trace_builder_str(&b, "./app --flag");
	p.start_mono_ns = 1000;
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	for (int i = 0; i < 2; i++) {
		k.start = 2000 + (uint64_t)i * 1000;
		k.end = k.start + 500;
		k.pid = pid;
		k.device = 0;
		k.stream = 7;
		k.grid[0] = 132;
		k.block[0] = 256;
		k.name_id = trace_builder_str(&b, i ? "gemm" : "relu");
		trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		if (chunks)
			trace_builder_flush(&b);
	}
	r.start = 1500;
	r.end = 4000;
	r.pid = pid;
	r.tid = pid;
	r.kind = TRACE_NVTX_PUSHPOP;
	r.name_id = trace_builder_str(&b, "step");
	trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	/* start/end range from thread pid+1, ended on thread pid+2 */
	memset(&r, 0, sizeof(r));
	r.start = 1600;
	r.pid = pid;
	r.tid = pid + 1;
	r.kind = TRACE_NVTX_STARTEND;
	r.range_id = 42;
	r.name_id = trace_builder_str(&b, "load batch");
	trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	e.range_id = 42;
	e.end = 3600;
	e.tid = pid + 2;
	trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
	CHECK(trace_builder_close(&b, 0) == 0);
}

static void test_roundtrip(void)
{
	const char *path = tmp("a.gpuscope");
	struct model m;

	write_small(path, 0, 100, 1);
	if (getenv("GS_SEED_DIR")) { /* seeds the fuzz corpus with real writer output */
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/small.gpuscope'", path, getenv("GS_SEED_DIR"));
		CHECK(system(cmd) == 0);
	}
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_EQ_U64(m.procs.v[0].pid, 100);
	CHECK(m.procs.v[0].ended);
	CHECK_STR(model_str(&m, m.procs.v[0].cmdline_id), "./app --flag");
	CHECK_EQ_U64(m.kernels.n, 2);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "relu");
	CHECK_STR(model_str(&m, m.kernels.v[1].name_id), "gemm");
	CHECK_EQ_U64(m.kernels.v[1].start, 3000);
	CHECK_EQ_U64(m.kernels.v[0].grid[0], 132);
	CHECK_EQ_U64(m.nvtx.n, 2);
	CHECK_STR(model_str(&m, m.nvtx.v[0].name_id), "step");
	CHECK_STR(model_str(&m, m.nvtx.v[1].name_id), "load batch");
	CHECK_EQ_U64(m.nvtx.v[1].end, 3600);
	CHECK_EQ_U64(m.nvtx.v[1].end_tid, 102);
	CHECK_EQ_U64(m.nvtx_open, 0);
	CHECK_EQ_U64(m.t_min, 1500);
	CHECK_EQ_U64(m.t_max, 4000);
	CHECK_EQ_U64(m.nr_warnings, 0);
	CHECK(m.has & MODEL_HAS_CUDA);
	CHECK(m.has & MODEL_HAS_NVTX);
	CHECK(!(m.has & MODEL_HAS_OSRT));
	model_release(&m);
}

static void test_no_overwrite(void)
{
	const char *path = tmp("b.gpuscope");
	struct trace_writer w;

	write_small(path, 0, 1, 0);
	set_error_quiet(1);
	CHECK(trace_writer_open(&w, path, 1) < 0);
	set_error_quiet(0);
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : st.st_size;
}

/* Where the chunks before the chunk index end (the file size when there is no index). */
static off_t data_end(const char *path)
{
	struct trace_index_tail tail;
	off_t size = file_size(path);
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	if (size >= (off_t)sizeof(tail) && fseeko(f, size - (off_t)sizeof(tail), SEEK_SET) == 0 &&
	    fread(&tail, sizeof(tail), 1, f) == 1 && !memcmp(tail.magic, TRACE_INDEX_MAGIC, 8))
		size = (off_t)tail.index_offset;
	fclose(f);
	return size;
}

static void test_truncated_keeps_whole_chunks(void)
{
	const char *path = tmp("t.gpuscope");
	struct model m;
	off_t size;

	write_small(path, 0, 5, 1); /* kernels in separate chunks */
	size = data_end(path);  /* the chunk index, and with it the stream end, go */
	/* cut into the last chunk(s): drop the stream-end marker and some bytes */
	CHECK(truncate(path, size - TRACE_CHUNK_HEADER_SIZE - 10) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK(m.truncated);
	CHECK_EQ_U64(m.kernels.n, 2);    /* both kernel chunks were whole */
	CHECK(m.nr_warnings >= 1);
	CHECK_CONTAINS(m.warnings[0], "damaged");
	CHECK(!m.procs.v[0].ended);
	model_release(&m);
}

static void test_corrupt_chunk_is_skipped(void)
{
	const char *path = tmp("c.gpuscope");
	struct model m;
	int fd;
	unsigned char byte;
	off_t off = TRACE_HEADER_SIZE + TRACE_CHUNK_HEADER_SIZE + 3; /* inside 1st payload */

	write_small(path, 0, 5, 1);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, &byte, 1, off) == 1);
	byte ^= 0xff;
	CHECK(pwrite(fd, &byte, 1, off) == 1);
	close(fd);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.chunks_bad, 1);
	CHECK_EQ_U64(m.kernels.n, 1); /* the first chunk (process + relu) is gone */
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "gemm");
	CHECK(m.nr_warnings >= 1);
	model_release(&m);
}

static void test_corrupt_header_resyncs(void)
{
	const char *path = tmp("h.gpuscope");
	struct model m;
	int fd;
	unsigned char junk[4] = { 1, 2, 3, 4 };

	write_small(path, 0, 5, 1);
	fd = open(path, O_RDWR);
	CHECK(pwrite(fd, junk, 4, TRACE_HEADER_SIZE) == 4); /* smash the first chunk's magic */
	close(fd);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.chunks_bad, 1);
	CHECK_EQ_U64(m.kernels.n, 1);
	model_release(&m);
}

static void test_not_a_report(void)
{
	const char *path = tmp("x.txt");
	FILE *f = fopen(path, "w");
	struct model m;

	fputs("hello world, this is not a report at all\n", f);
	fclose(f);
	model_init(&m);
	set_error_quiet(1);
	CHECK(model_load_report(&m, path) < 0);
	CHECK(model_load_report(&m, tmp("missing.gpuscope")) < 0);
	set_error_quiet(0);
	model_release(&m);
}

static void test_newer_version_rejected(void)
{
	const char *path = tmp("v.gpuscope");
	struct trace_file_header h;
	int fd;
	struct model m;

	write_small(path, 0, 5, 0);
	fd = open(path, O_RDWR);
	CHECK(pread(fd, &h, sizeof(h), 0) == sizeof(h));
	h.version = TRACE_VERSION + 5;
	h.min_reader = TRACE_VERSION + 3;
	h.header_crc = crc32c(0, &h, offsetof(struct trace_file_header, header_crc));
	CHECK(pwrite(fd, &h, sizeof(h), 0) == sizeof(h));
	close(fd);
	model_init(&m);
	set_error_quiet(1);
	CHECK(model_load_report(&m, path) < 0);
	set_error_quiet(0);
	model_release(&m);
}

static void test_unknown_chunks_and_entries_skipped(void)
{
	const char *path = tmp("u.gpuscope");
	struct trace_writer w;
	struct trace_buf buf = { 0 };
	struct trace_kernel k = { 0 };
	unsigned char future[40] = { 0 };
	struct model m;

	CHECK(trace_writer_open(&w, path, 1) == 0);
	CHECK(trace_writer_chunk(&w, 77, 0, "future stuff", 12, 0) == 0);
	trace_buf_add(&buf, 250, future, sizeof(future));   /* unknown entry type */
	k.start = 10;
	k.end = 20;
	trace_buf_add(&buf, TRACE_EV_KERNEL, &k, 40);       /* an older, shorter kernel record */
	{
		unsigned char longer[sizeof(k) + 16] = { 0 }; /* a newer, longer record */
		memcpy(longer, &k, sizeof(k));
		trace_buf_add(&buf, TRACE_EV_KERNEL, longer, sizeof(longer));
	}
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 0, buf.data, buf.len, 1) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	trace_buf_release(&buf);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.kernels.n, 2);
	CHECK_EQ_U64(m.kernels.v[0].end, 20);
	CHECK_EQ_U64(m.kernels.v[0].grid[0], 0);
	model_release(&m);
}

static void test_merge_keeps_streams_apart(void)
{
	const char *a = tmp("m1.gpuscope"), *b = tmp("m2.gpuscope"), *out = tmp("m.gpuscope");
	const char *in[2] = { a, b };
	struct model m;

	write_small(a, 0, 10, 1);
	write_small(b, 0, 20, 0); /* same stream id and same string ids, other strings order */
	CHECK(trace_merge(out, in, 2, 1) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(m.procs.n, 2);
	CHECK_EQ_U64(m.kernels.n, 4);
	CHECK_EQ_U64(m.nvtx.n, 4);
	CHECK_EQ_U64(m.nvtx_open, 0); /* start/end ids joined within their own stream */
	for (size_t i = 0; i < m.kernels.n; i++) {
		const char *n = model_str(&m, m.kernels.v[i].name_id);
		CHECK(!strcmp(n, "relu") || !strcmp(n, "gemm"));
	}
	model_release(&m);
}

static void test_string_defined_after_use(void)
{
	const char *path = tmp("late.gpuscope");
	struct trace_writer w;
	struct trace_buf buf = { 0 };
	struct trace_kernel k = { 0 };
	struct model m;

	k.start = 1;
	k.end = 2;
	k.name_id = 9;
	trace_buf_add(&buf, TRACE_EV_KERNEL, &k, sizeof(k));
	CHECK(trace_writer_open(&w, path, 1) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 3, buf.data, buf.len, 1) == 0);
	buf.len = 0;
	trace_buf_add_string(&buf, 9, "late_kernel", 11);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 3, buf.data, buf.len, 0) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	trace_buf_release(&buf);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "late_kernel");
	model_release(&m);
}

static void test_many_startend_ranges_join(void)
{
	const char *path = tmp("se.gpuscope");
	struct trace_builder b;
	struct model m;

	CHECK(trace_builder_open(&b, path, 1, 0) == 0);
	/* 100 ranges, started in order, ended in reverse order, from another thread */
	for (int i = 0; i < 100; i++) {
		struct trace_nvtx_range r = { 0 };
		r.start = 1000 + (uint64_t)i;
		r.pid = 1;
		r.tid = 1;
		r.kind = TRACE_NVTX_STARTEND;
		r.range_id = (uint64_t)(i * 7919 % 1000 + 1);
		r.name_id = trace_builder_str(&b, "r");
		trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	}
	for (int i = 99; i >= 0; i--) {
		struct trace_nvtx_end e = { 0 };
		e.range_id = (uint64_t)(i * 7919 % 1000 + 1);
		e.end = 5000 + (uint64_t)i;
		e.tid = 2;
		trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
	}
	CHECK(trace_builder_close(&b, 0) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.nvtx.n, 100);
	CHECK_EQ_U64(m.nvtx_open, 0);
	CHECK_EQ_U64(m.nvtx_orphan_ends, 0);
	for (size_t i = 0; i < m.nvtx.n; i++) {
		CHECK_EQ_U64(m.nvtx.v[i].end - m.nvtx.v[i].start, 4000);
		CHECK_EQ_U64(m.nvtx.v[i].end_tid, 2);
	}
	model_release(&m);
}

static void test_crc32c_known_values(void)
{
	/* RFC 3720 (iSCSI) test vectors; the hardware and table paths agree */
	unsigned char zeros[32] = { 0 }, ones[32], inc[32];

	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	CHECK_EQ_U64(crc32c(0, zeros, 32), 0x8a9136aa);
	CHECK_EQ_U64(crc32c(0, ones, 32), 0x62a8ab43);
	CHECK_EQ_U64(crc32c(0, inc, 32), 0x46dd794e);
	CHECK_EQ_U64(crc32c(0, "123456789", 9), 0xe3069283);
	/* unaligned starts and odd lengths */
	CHECK_EQ_U64(crc32c(crc32c(0, inc, 5), inc + 5, 27), 0x46dd794e);
}

static void test_metric_devices_follow_cuda(void)
{
	/* NVML (sampler, pid 1) sees GPUs A as 0 and B as 1; CUDA (pid 2) sees only B, as 0 */
	const char *path = tmp("dev.gpuscope");
	struct trace_builder b;
	struct trace_device d = { 0 };
	struct trace_metric x = { 0 };
	struct trace_kernel k = { 0 };
	struct model m;

	CHECK(trace_builder_open(&b, path, 1, 0) == 0);
	d.pid = 1;
	d.id = 0;
	d.uuid[0] = 0xaa;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	d.id = 1;
	d.uuid[0] = 0xbb;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	d.pid = 2;
	d.id = 0;
	d.sm_count = 132;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	for (uint32_t g = 0; g < 2; g++) {
		x.time = 10;
		x.pid = 1;
		x.device = g;
		x.value = g ? 99 : 1;
		x.name_id = trace_builder_str(&b, "gpu_util");
		trace_builder_add(&b, TRACE_EV_METRIC, &x, sizeof(x));
	}
	k.pid = 2;
	k.start = 5;
	k.end = 20;
	trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	CHECK(trace_builder_close(&b, 0) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.devices.n, 2); /* B once (as CUDA 0), A as 100 */
	for (size_t i = 0; i < m.metrics.n; i++) {
		if (m.metrics.v[i].value == 99)
			CHECK_EQ_U64(m.metrics.v[i].device, 0);
		else
			CHECK_EQ_U64(m.metrics.v[i].device, 100);
	}
	CHECK(model_device(&m, 0) && model_device(&m, 0)->sm_count == 132);
	CHECK(model_device(&m, 100) && model_device(&m, 100)->uuid[0] == 0xaa);
	model_release(&m);
}

static void test_intervals(void)
{
	struct interval_set a = { 0 }, b = { 0 }, g = { 0 };

	ivset_add(&a, 10, 20);
	ivset_add(&a, 15, 30);
	ivset_add(&a, 50, 60);
	ivset_add(&a, 5, 8);
	CHECK_EQ_U64(ivset_total(&a), 3 + 20 + 10);
	CHECK_EQ_U64(a.n, 3);
	CHECK_EQ_U64(ivset_overlap(&a, 0, 100), 33);
	CHECK_EQ_U64(ivset_overlap(&a, 25, 55), 10);
	ivset_add(&b, 0, 12);
	ivset_add(&b, 55, 100);
	CHECK_EQ_U64(ivset_intersect_total(&a, &b), 3 + 2 + 5);
	ivset_gaps(&a, 0, 70, &g);
	CHECK_EQ_U64(g.n, 4); /* [0,5) [8,10) [30,50) [60,70) */
	CHECK_EQ_U64(ivset_total(&g), 5 + 2 + 20 + 10);
	ivset_release(&a);
	ivset_release(&b);
	ivset_release(&g);
}

static void test_clip(void)
{
	const char *path = tmp("clip.gpuscope");
	struct model m;

	write_small(path, 0, 5, 0);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	model_clip(&m, 2600, 10000);
	CHECK_EQ_U64(m.kernels.n, 1);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "gemm");
	CHECK(m.has & MODEL_HAS_CUDA);
	model_release(&m);
}

static int has_warning(const struct model *m, const char *needle)
{
	for (size_t i = 0; i < m->nr_warnings; i++)
		if (strstr(m->warnings[i], needle))
			return 1;
	return 0;
}

/*
 * A string definition is 24 bytes; with id 2^25 it used to make the loader
 * allocate a 256 MiB map for its stream (and as much again per stream).  Ids
 * no writer reaches in a file that small are skipped, with a warning.
 */
static void test_huge_string_id_is_skipped(void)
{
	const char *path = tmp("bomb.gpuscope");
	struct trace_writer w;
	struct trace_buf buf = { 0 };
	struct trace_kernel k = { 0 };
	struct model m;

	trace_buf_add_string(&buf, 1, "relu", 4);
	for (uint32_t s = 0; s < 8; s++) {
		buf.len = s ? 0 : buf.len;
		trace_buf_add_string(&buf, 1u << 25, "bomb", 4);
		k.start = 10 + s;
		k.end = 20 + s;
		k.name_id = s ? 1u << 25 : 1;
		trace_buf_add(&buf, TRACE_EV_KERNEL, &k, sizeof(k));
		if (!s)
			CHECK(trace_writer_open(&w, path, 1) == 0);
		CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, s, buf.data, buf.len, 0) == 0);
	}
	CHECK(trace_writer_close(&w, 0) == 0);
	trace_buf_release(&buf);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.kernels.n, 8);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "relu");
	CHECK_STR(model_str(&m, m.kernels.v[1].name_id), "");
	CHECK(has_warning(&m, "skipped 8 string definitions with implausibly large ids"));
	model_release(&m);
}

/* NaN and infinite metric samples are dropped on load (exports cannot write them). */
static void test_non_finite_metrics_dropped(void)
{
	const char *path = tmp("nan.gpuscope");
	struct trace_writer w;
	struct trace_buf buf = { 0 };
	struct trace_metric x = { 0 };
	const double values[] = { 1.5, NAN, INFINITY, -INFINITY, 2.5 };
	struct model m;

	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		x.time = 100 + i;
		x.value = values[i];
		trace_buf_add(&buf, TRACE_EV_METRIC, &x, sizeof(x));
	}
	CHECK(trace_writer_open(&w, path, 1) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 0, buf.data, buf.len, 1) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	trace_buf_release(&buf);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.metrics.n, 2);
	CHECK_NEAR(m.metrics.v[0].value, 1.5, 0);
	CHECK_NEAR(m.metrics.v[1].value, 2.5, 0);
	CHECK_EQ_U64(m.events, 2);
	CHECK(has_warning(&m, "skipped 3 metric samples that are not finite numbers"));
	model_release(&m);
}

/* A chunk of stream 900000 in a small file: its entries are skipped (the loader kept state for every stream below it). */
static void test_huge_stream_id_is_skipped(void)
{
	const char *path = tmp("streams.gpuscope");
	struct trace_writer w;
	struct trace_buf buf = { 0 };
	struct trace_kernel k = { 0 };
	struct model m;

	k.start = 10;
	k.end = 20;
	trace_buf_add(&buf, TRACE_EV_KERNEL, &k, sizeof(k));
	CHECK(trace_writer_open(&w, path, 1) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 0, buf.data, buf.len, 0) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 1, buf.data, buf.len, 0) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 900000, buf.data, buf.len, 0) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	trace_buf_release(&buf);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.kernels.n, 2);
	CHECK(has_warning(&m, "skipped 1 entries of streams numbered beyond what the file can hold"));
	model_release(&m);
}

/* Issue 19: a chunk of stream 0xFFFFFFFF made the merger's map index wrap (s + 1 == 0). */
static void test_merge_stream_id_max(void)
{
	const char *in = tmp("max.gpuscope"), *out = tmp("max-merged.gpuscope");
	const char *inputs[1] = { in };
	struct trace_builder b;
	struct trace_kernel k = { 0 };
	struct model m;

	CHECK(trace_builder_open(&b, in, 1, 0) == 0);
	k.start = 100;
	k.end = 200;
	k.name_id = trace_builder_str(&b, "kept");
	trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	CHECK(trace_builder_flush(&b) == 0);
	/* the same entries again, as stream 0xFFFFFFFF */
	b.stream = UINT32_MAX;
	k.start = 300;
	k.end = 400;
	k.name_id = trace_builder_str(&b, "wrapped");
	trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	CHECK(trace_builder_close(&b, 0) == 0);
	set_error_quiet(1);
	CHECK(trace_merge(out, inputs, 1, 1) == 0);
	set_error_quiet(0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(m.kernels.n, 1); /* the out-of-range stream's chunks are skipped */
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "kept");
	model_release(&m);
}

/* Is anything but "." and ".." in @dir? */
static int dir_has_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * Issue 19: a disk that fills as the merge starts left a 0-byte report, and
 * the next run refused with "already exists".  A file-size limit of 0 bytes
 * (RLIMIT_FSIZE, what `ulimit -f 0` sets; this test runs in its own child
 * process) fails the very first write, as a full disk does.
 */
static void test_merge_failure_leaves_no_file(void)
{
	const char *in = tmp("fs-in.gpuscope");
	const char *inputs[1] = { in };
	char dir[512], out[600];
	struct rlimit rl = { 0, 0 };
	struct rlimit old;

	write_small(in, 0, 7, 1);
	snprintf(dir, sizeof(dir), "%s/fsout", gstest_tmpdir());
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(out, sizeof(out), "%s/merged.gpuscope", dir);
	signal(SIGXFSZ, SIG_IGN); /* as gpuscope's main(): the write fails with EFBIG */
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	rl.rlim_max = old.rlim_max;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	set_error_quiet(1);
	CHECK(trace_merge(out, inputs, 1, 1) < 0);
	set_error_quiet(0);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(access(out, F_OK) != 0);
	CHECK_EQ_U64(dir_has_files(dir), 0); /* nor its temporary */
	/* and the next merge, with room, succeeds */
	CHECK(trace_merge(out, inputs, 1, 1) == 0);
	CHECK(access(out, F_OK) == 0);
	/* an existing report is refused before any work, and kept */
	set_error_quiet(1);
	CHECK(trace_merge(out, inputs, 1, 1) < 0);
	set_error_quiet(0);
	CHECK_EQ_U64(dir_has_files(dir), 1);
}

/* Does the file system of @path report the hole of a sparse file (SEEK_DATA)? */
static int holes_reported(const char *path, off_t at)
{
	int fd = open(path, O_RDONLY);
	off_t d;

	if (fd < 0)
		return 0;
	d = lseek(fd, at, SEEK_DATA);
	close(fd);
	return d < 0 && errno == ENXIO;
}

/* Read every chunk of @path; returns the bytes the reader read. */
static uint64_t read_all_chunks(const char *path, uint64_t *chunks)
{
	struct trace_reader r;
	struct trace_chunk c;
	uint64_t n;

	CHECK(trace_reader_open(&r, path) == 0);
	while (trace_reader_next(&r, &c) > 0)
		;
	n = r.bytes_read;
	*chunks = r.chunks_read;
	trace_reader_close(&r);
	return n;
}

/*
 * Issue 19: `info` on a 2 GB sparse file with a valid header read all of
 * it, looking for a chunk header in the zeros (10 s).  Holes are skipped:
 * the reader reads less than 1 MiB of a 2 GiB file, whether the hole
 * follows whole chunks or the bare file header.
 */
static void test_sparse_file_not_read_through(void)
{
	const char *a = tmp("sparse-a.gpuscope"), *b = tmp("sparse-b.gpuscope");
	const off_t big = (off_t)2 << 30;
	struct trace_writer w;
	uint64_t chunks;

	write_small(a, 0, 9, 1);
	CHECK(truncate(a, big) == 0);
	if (!holes_reported(a, big - 4096)) {
		printf("# SKIP sparse files: the file system of %s does not report holes\n",
		       gstest_tmpdir());
		unlink(a);
		return;
	}
	CHECK(read_all_chunks(a, &chunks) < (1u << 20));
	CHECK_EQ_U64(chunks, 4); /* three event chunks and the stream end */
	CHECK(trace_writer_open(&w, b, 1) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	CHECK(truncate(b, big) == 0);
	CHECK(read_all_chunks(b, &chunks) < (1u << 20));
	CHECK_EQ_U64(chunks, 0);
	unlink(a);
	unlink(b);
}

/* VmSize of this process in bytes, from /proc/self/status; 0 when unknown (unused under ASan). */
static __attribute__((unused)) uint64_t vm_size(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb << 10;
}

/*
 * Issue 19: a report too big for memory was killed with no message.  A
 * report of 8 event chunks of 64 MiB each (zeros: a few kB compressed) needs
 * about 640 MiB to load whole; under an address-space limit 256 MiB above
 * what the test uses, the load is refused with one error that says how much
 * it needs and which commands read it streaming.
 */
static void test_load_refused_when_memory_short(void)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("# SKIP memory estimate: AddressSanitizer reserves the address space RLIMIT_AS limits\n");
#else
	const char *path = tmp("huge.gpuscope");
	const size_t len = (size_t)64 << 20;
	struct trace_writer w;
	struct rlimit rl, old;
	struct model m;
	char *zeros = calloc(1, len);
	int fd[2], ret;
	char msg[1024] = "";
	ssize_t n;

	CHECK(zeros != NULL);
	CHECK(trace_writer_open(&w, path, 1) == 0);
	for (int i = 0; i < 8; i++)
		CHECK(trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, 0, zeros, len, 1) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	free(zeros);
	CHECK(file_size(path) < (1 << 20));
	CHECK(getrlimit(RLIMIT_AS, &old) == 0);
	rl.rlim_cur = vm_size() + (256u << 20);
	rl.rlim_max = old.rlim_max;
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	/* the error line, through a pipe in place of stderr */
	CHECK(pipe(fd) == 0);
	fflush(stderr);
	{
		int saved = dup(2);
		dup2(fd[1], 2);
		model_init(&m);
		ret = model_load_report(&m, path);
		model_release(&m);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	close(fd[1]);
	n = read(fd[0], msg, sizeof(msg) - 1);
	close(fd[0]);
	if (n > 0)
		msg[n] = '\0';
	CHECK(setrlimit(RLIMIT_AS, &old) == 0);
	CHECK(ret < 0);
	CHECK_CONTAINS(msg, "huge.gpuscope' needs about 640.0 MiB of memory to load whole (512.0 MiB of events)");
	CHECK_CONTAINS(msg, "`gpuscope info` reads it streaming, and `stats`, `analyze`, `export` and `diff` with --start T --end T load only that window");
	CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1); /* one line */
	/*
	 * A window of the same report (model_window_fits): all of it does not
	 * fit either, with its own one line; a tenth (64 MiB) does.
	 */
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	CHECK(pipe(fd) == 0);
	fflush(stderr);
	{
		int saved = dup(2);
		dup2(fd[1], 2);
		ret = model_window_fits(path, 1.0);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	close(fd[1]);
	n = read(fd[0], msg, sizeof(msg) - 1);
	close(fd[0]);
	msg[n > 0 ? n : 0] = '\0';
	CHECK(ret < 0);
	CHECK_CONTAINS(msg, "huge.gpuscope': the window needs about 640.0 MiB of memory (100% of the report's 512.0 MiB of events)");
	CHECK_CONTAINS(msg, "narrow it with --start T --end T");
	CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1); /* one line */
	CHECK(model_window_fits(path, 0.1) == 0);
	CHECK(setrlimit(RLIMIT_AS, &old) == 0);
	unlink(path);
#endif
}

/*
 * The loader's window (struct model_sink window_lo/window_hi): rows wholly
 * outside are not stored, and the load then clipped equals the whole load
 * clipped; model_report_span() gives the whole load's span.  100 kernels
 * and API calls 1 µs apart, a mark and an allocation each 10 µs, a start/end
 * range opened at 5 µs and ended at 95 µs; the window is 20-30 µs.
 */
static void test_window_load(void)
{
	const char *path = tmp("win.gpuscope");
	struct trace_builder b;
	struct model whole, win;
	struct model_sink sink = { 0 };
	uint64_t t_min = 0, t_max = 0;

	CHECK(trace_builder_open(&b, path, 1, 0) == 0);
	for (int i = 0; i < 100; i++) {
		struct trace_kernel k = { 0 };
		struct trace_api a = { 0 };
		k.start = 1000 + (uint64_t)i * 1000;
		k.end = k.start + 500;
		k.name_id = trace_builder_str(&b, "k");
		trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		a.start = k.start - 200;
		a.end = k.start - 100;
		a.pid = a.tid = 1;
		trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
		if (i % 10 == 0) {
			struct trace_nvtx_mark mk = { 0 };
			struct trace_memory mem = { 0 };
			mk.time = k.start + 1;
			mk.pid = mk.tid = 1;
			trace_builder_add(&b, TRACE_EV_NVTX_MARK, &mk, sizeof(mk));
			mem.time = k.start + 2;
			mem.op = TRACE_MEM_ALLOC;
			mem.bytes = 4096;
			trace_builder_add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
		}
		if (i == 4) {
			struct trace_nvtx_range r = { 0 };
			r.start = 5000;
			r.pid = r.tid = 1;
			r.kind = TRACE_NVTX_STARTEND;
			r.range_id = 7;
			r.name_id = trace_builder_str(&b, "open");
			trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		}
		if (i == 94) {
			struct trace_nvtx_end e = { 7, 95000, 1, 0 };
			trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
		}
		if (i % 25 == 24)
			CHECK(trace_builder_flush(&b) == 0);
	}
	CHECK(trace_builder_close(&b, 0) == 0);

	model_init(&whole);
	CHECK(model_load_report(&whole, path) == 0);
	CHECK(model_report_span(path, &t_min, &t_max) == 0);
	CHECK_EQ_U64(t_min, whole.t_min);
	CHECK_EQ_U64(t_max, whole.t_max);
	CHECK_EQ_U64(t_min, 800);       /* the first API call */
	CHECK_EQ_U64(t_max, 100500);    /* the last kernel's end */

	model_init(&win);
	sink.window_lo = 20000;
	sink.window_hi = 30000;
	CHECK(model_load_report_sink(&win, path, &sink) == 0);
	/* kernels 19..29 start 20000..30000 (19 ends at 20500); calls end 100 ns before their kernels */
	CHECK_EQ_U64(win.kernels.n, 11);
	CHECK_EQ_U64(win.api.n, 10);    /* calls 20..29: call 30 starts at 30800 */
	CHECK_EQ_U64(win.marks.n, 1);   /* 21001; 31001 is past the window */
	CHECK_EQ_U64(win.memory.n, 1);
	CHECK_EQ_U64(win.nvtx.n, 1);    /* opened before the window, ended after it: it overlaps */
	CHECK_EQ_U64(win.nvtx.v[0].end, 95000);
	CHECK_EQ_U64(win.events, 11 + 10 + 1 + 1 + 1 + 1); /* and the range's end entry, always loaded */
	model_clip(&whole, 20000, 30000);
	model_clip(&win, 20000, 30000);
	CHECK_EQ_U64(win.kernels.n, whole.kernels.n);
	CHECK_EQ_U64(win.api.n, whole.api.n);
	CHECK_EQ_U64(win.marks.n, whole.marks.n);
	CHECK_EQ_U64(win.memory.n, whole.memory.n);
	CHECK_EQ_U64(win.nvtx.n, whole.nvtx.n);
	CHECK_EQ_U64(win.t_min, whole.t_min);
	CHECK_EQ_U64(win.t_max, whole.t_max);
	model_release(&win);
	model_release(&whole);
}

/* A report of @n kernels, each with its launch call and, every 50th, a push/pop range. */
static void write_kernels(const char *path, uint64_t n)
{
	struct trace_builder b;
	struct trace_process p = { 0 };

	CHECK(trace_builder_open(&b, path, 1, 0) == 0);
	p.pid = 3;
	p.cmdline_id = trace_builder_str(&b, "./long");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	for (uint64_t i = 0; i < n; i++) {
		struct trace_kernel k = { 0 };
		struct trace_api a = { 0 };
		a.start = 1000 + i * 3000;
		a.end = a.start + 800;
		a.pid = 3;
		a.tid = 3 + (uint32_t)(i % 4);
		a.correlation = (uint32_t)i;
		a.name_id = trace_builder_str(&b, "cudaLaunchKernel");
		trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
		k.start = a.start + 1000;
		k.end = k.start + 1500;
		k.pid = 3;
		k.correlation = (uint32_t)i;
		k.name_id = trace_builder_str(&b, i & 1 ? "gemm" : "relu");
		trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		if (i % 50 == 0) {
			struct trace_nvtx_range r = { 0 };
			r.start = a.start;
			r.end = k.end;
			r.pid = 3;
			r.tid = 3;
			r.kind = TRACE_NVTX_PUSHPOP;
			r.name_id = trace_builder_str(&b, "step");
			trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		}
	}
	CHECK(trace_builder_close(&b, 0) == 0);
}

/* Peak RSS (KiB) of `gpuscope @argv...`, its output to /dev/null; -1 when it fails. */
static long gpuscope_rss_kb(const char *gpuscope, char *const argv[])
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execv(gpuscope, argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return ru.ru_maxrss;
}

/*
 * Issue 19: `info` took 1.88 GB for a 104 MB report.  It streams now: its
 * peak RSS on a report of 2,020,001 events is within 6 MiB of its peak on
 * one of 202,001 (a whole model grows by about 100 B per event: 180 MiB
 * here).  The 6 MiB allow for the reader's buffers and the allocator.
 * The same for `stats` of a time window.
 */
static void test_info_and_stats_window_memory(void)
{
	const char *build = getenv("GS_BUILD_DIR");
	const char *small = tmp("info-small.gpuscope"), *big = tmp("info-big.gpuscope");
	char gpuscope[512];
	long rs, rb;

	if (!build) {
		printf("# SKIP info memory: GS_BUILD_DIR is not set\n");
		return;
	}
	snprintf(gpuscope, sizeof(gpuscope), "%s/gpuscope", build);
	if (access(gpuscope, X_OK)) {
		printf("# SKIP info memory: no %s\n", gpuscope);
		return;
	}
	write_kernels(small, 100000);
	write_kernels(big, 1000000);
	rs = gpuscope_rss_kb(gpuscope, (char *[]){ gpuscope, "info", (char *)small, NULL });
	rb = gpuscope_rss_kb(gpuscope, (char *[]){ gpuscope, "info", (char *)big, NULL });
	printf("# info peak RSS: %ld KiB (202,001 events), %ld KiB (2,020,001 events)\n", rs, rb);
	CHECK(rs > 0 && rb > 0);
	CHECK(rb - rs < 6 * 1024);
	/*
	 * `stats` of a 10 ms window (3,334 kernels and calls, 3 µs apart) loads
	 * only the window: the same 6 MiB bound between the two reports.
	 */
	rs = gpuscope_rss_kb(gpuscope, (char *[]){ gpuscope, "stats", "--start", "0.1", "--end", "0.11",
						   (char *)small, NULL });
	rb = gpuscope_rss_kb(gpuscope, (char *[]){ gpuscope, "stats", "--start", "0.1", "--end", "0.11",
						   (char *)big, NULL });
	printf("# stats --start 0.1 --end 0.11 peak RSS: %ld KiB (202,001 events), %ld KiB (2,020,001 events)\n",
	       rs, rb);
	CHECK(rs > 0 && rb > 0);
	CHECK(rb - rs < 6 * 1024);
	unlink(small);
	unlink(big);
}

static const struct gstest tests[] = {
	GSTEST(test_roundtrip),
	GSTEST(test_no_overwrite),
	GSTEST(test_truncated_keeps_whole_chunks),
	GSTEST(test_corrupt_chunk_is_skipped),
	GSTEST(test_corrupt_header_resyncs),
	GSTEST(test_not_a_report),
	GSTEST(test_newer_version_rejected),
	GSTEST(test_unknown_chunks_and_entries_skipped),
	GSTEST(test_merge_keeps_streams_apart),
	GSTEST(test_string_defined_after_use),
	GSTEST(test_many_startend_ranges_join),
	GSTEST(test_crc32c_known_values),
	GSTEST(test_metric_devices_follow_cuda),
	GSTEST(test_intervals),
	GSTEST(test_clip),
	GSTEST(test_huge_string_id_is_skipped),
	GSTEST(test_non_finite_metrics_dropped),
	GSTEST(test_huge_stream_id_is_skipped),
	GSTEST(test_merge_stream_id_max),
	GSTEST(test_merge_failure_leaves_no_file),
	GSTEST(test_sparse_file_not_read_through),
	GSTEST(test_load_refused_when_memory_short),
	GSTEST(test_window_load),
	GSTEST(test_info_and_stats_window_memory),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
