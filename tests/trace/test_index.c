/*
 * test_index.c - the chunk index: written by the builder and by merge, used
 * by windowed loads to skip chunks, checked before it is trusted.
 *
 * The report of gen() has many small chunks in two streams, whose records
 * are out of time order across chunks (a thread's buffer written late),
 * start/end ranges left open across many chunks, strings defined in a chunk
 * after their first use, marks, samples, metrics, allocations (kept whole
 * by a window that asks for them) and thread records.  Every windowed load
 * through the index must store what a windowed scan of the same report
 * stores, table by table, and the same as a whole load clipped to the
 * window.
 */
#include "gstest.h"
#include "model/model.h"
#include "trace/trace.h"
#include "util/util.h"

#include <fcntl.h>
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

#define MS 1000000ull
#define BLOCKS 200            /* chunks of events per stream */

/* Stream @stream of gen(): one block of rows per chunk, BLOCKS blocks, 1 ms apart. */
static void gen_stream(const char *path, uint32_t stream, uint32_t pid)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	uint32_t late_id = 0;

	CHECK(trace_builder_open(&b, path, 1, stream) == 0);
	p.pid = pid;
	p.start_mono_ns = 1000;
	p.cmdline_id = trace_builder_str(&b, "./train");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	for (uint32_t i = 0; i < BLOCKS; i++) {
		/* blocks 100-109 are written at the end: out of order across chunks */
		uint32_t blk = i < 100 ? i : i < 190 ? i + 10 : i - 90;
		uint64_t t = 10 * MS + (uint64_t)blk * MS + pid;
		struct trace_kernel k = { 0 };
		struct trace_api a = { 0 };
		struct trace_nvtx_range r = { 0 };

		a.start = t;
		a.end = t + 20000;
		a.pid = pid;
		a.tid = pid + 1;
		a.correlation = blk + 1;
		a.name_id = trace_builder_str(&b, "cudaLaunchKernel");
		trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
		k.start = t + 30000;
		k.end = t + 30000 + 200000 + (blk % 7) * 10000;
		k.pid = pid;
		k.stream = 7;
		k.correlation = blk + 1;
		k.grid[0] = 132;
		k.block[0] = 256;
		if (blk == 150) {
			/* a name whose definition comes in a later chunk (an id handed out early) */
			late_id = 9000;
			k.name_id = late_id;
		} else {
			k.name_id = trace_builder_str(&b, blk % 2 ? "gemm" : "relu");
		}
		trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		if (blk % 10 == 0) {
			/* a start/end range open for 25 blocks, ended by an nvtx_end later */
			r.start = t;
			r.pid = pid;
			r.tid = pid + 1;
			r.kind = TRACE_NVTX_STARTEND;
			r.range_id = blk + 1;
			r.name_id = trace_builder_str(&b, "epoch");
			trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		}
		if (blk >= 25 && blk % 10 == 5) {
			struct trace_nvtx_end e = { 0 };
			e.range_id = blk - 25 + 1;
			e.end = t;
			e.tid = pid + 1;
			trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
		}
		if (blk % 3 == 0) {
			struct trace_nvtx_mark mk = { 0 };
			mk.time = t + 5;
			mk.pid = pid;
			mk.tid = pid + 1;
			mk.name_id = trace_builder_str(&b, "tick");
			trace_builder_add(&b, TRACE_EV_NVTX_MARK, &mk, sizeof(mk));
		}
		if (blk % 4 == 0) {
			struct trace_cpu_sample cs = { 0 };
			struct trace_metric mt = { 0 };
			cs.time = t + 7;
			cs.pid = pid;
			cs.tid = pid + 1;
			cs.run_ns = blk * 100;
			trace_builder_add(&b, TRACE_EV_CPU_SAMPLE, &cs, sizeof(cs));
			mt.time = t + 9;
			mt.value = blk;
			mt.name_id = trace_builder_str(&b, "gpu_util");
			trace_builder_add(&b, TRACE_EV_METRIC, &mt, sizeof(mt));
		}
		if (blk % 5 == 0) {
			struct trace_memory m = { 0 };
			m.time = t + 11;
			m.pid = pid;
			m.bytes = 1 << 20;
			m.address = 0x1000 + blk;
			trace_builder_add(&b, TRACE_EV_MEMORY, &m, sizeof(m));
		}
		if (blk == 60) {
			struct trace_thread th = { 0 };
			th.time = t;
			th.pid = pid;
			th.tid = pid + 2;
			th.flags = TRACE_THREAD_START | TRACE_THREAD_NAME;
			th.name_id = trace_builder_str(&b, "loader");
			trace_builder_add(&b, TRACE_EV_THREAD, &th, sizeof(th));
		}
		if (i == BLOCKS - 1 && late_id)
			trace_buf_add_string(&b.buf, late_id, "late_kernel", 11);
		CHECK(trace_builder_flush(&b) == 0);
	}
	CHECK(trace_builder_close(&b, 0) == 0);
}

/* Two streams merged: the merge writes the index of the merged report. */
static const char *gen(void)
{
	const char *a = tmp("a.gpuscope"), *bb = tmp("b.gpuscope"), *out = tmp("ab.gpuscope");
	const char *in[2];

	unlink(a);
	unlink(bb);
	unlink(out);
	gen_stream(a, 0, 100);
	gen_stream(bb, 0, 200);
	in[0] = a;
	in[1] = bb;
	CHECK(trace_merge(out, in, 2, 1) == 0);
	return out;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : st.st_size;
}

static void copy_file(const char *from, const char *to, off_t len)
{
	FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
	char buf[65536];
	size_t n;

	CHECK(f && g);
	while (len > 0 && (n = fread(buf, 1, len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf), f)) > 0) {
		CHECK(fwrite(buf, 1, n, g) == n);
		len -= (off_t)n;
	}
	fclose(f);
	fclose(g);
}

/* The index's tail: where the index chunk starts (0 when there is none). */
static uint64_t index_offset(const char *path)
{
	struct trace_index_tail tail;
	FILE *f = fopen(path, "rb");
	uint64_t at = 0;

	CHECK(f != NULL);
	if (fseeko(f, -(off_t)sizeof(tail), SEEK_END) == 0 && fread(&tail, sizeof(tail), 1, f) == 1 &&
	    !memcmp(tail.magic, TRACE_INDEX_MAGIC, 8))
		at = tail.index_offset;
	fclose(f);
	return at;
}

/* The same report without its index: the chunks before it. */
static const char *strip_index(const char *path)
{
	const char *out = tmp("noindex.gpuscope");
	uint64_t at = index_offset(path);

	CHECK(at > 0);
	copy_file(path, out, (off_t)at);
	return out;
}

static void load_window(struct model *m, const char *path, uint64_t lo, uint64_t hi, unsigned keep)
{
	struct model_sink s;

	memset(&s, 0, sizeof(s));
	s.window_lo = lo;
	s.window_hi = hi;
	s.window_keep = keep;
	model_init(m);
	CHECK(model_load_report_sink(m, path, &s) == 0);
}

/* Same rows in every table (counts, and the rows themselves, which are sorted). */
#define SAME_TABLE(a, b, t)                                                            \
	do {                                                                           \
		CHECK_EQ_U64((a)->t.n, (b)->t.n);                                      \
		if ((a)->t.n == (b)->t.n && (a)->t.n)                                  \
			CHECK(!memcmp((a)->t.v, (b)->t.v, (a)->t.n * sizeof((a)->t.v[0]))); \
	} while (0)

static void same_rows(const struct model *a, const struct model *b)
{
	SAME_TABLE(a, b, nvtx);
	SAME_TABLE(a, b, marks);
	SAME_TABLE(a, b, api);
	SAME_TABLE(a, b, kernels);
	SAME_TABLE(a, b, cpu);
	SAME_TABLE(a, b, metrics);
	SAME_TABLE(a, b, memory);
	SAME_TABLE(a, b, procs);
	CHECK_EQ_U64(a->threads.n, b->threads.n);
	CHECK_EQ_U64(a->events, b->events);
	CHECK_EQ_U64(a->nvtx_open, b->nvtx_open);
	CHECK_EQ_U64(a->t_min, b->t_min);
	CHECK_EQ_U64(a->t_max, b->t_max);
	/* string ids may differ in number order; the names must not */
	for (size_t i = 0; i < a->kernels.n && a->kernels.n == b->kernels.n; i++)
		CHECK_STR(model_str(a, a->kernels.v[i].name_id), model_str(b, b->kernels.v[i].name_id));
}

static void test_builder_and_merge_write_an_index(void)
{
	const char *path = gen();
	struct trace_reader r;
	size_t events = 0;

	CHECK(trace_reader_open(&r, path) == 0);
	CHECK_EQ_I64(trace_reader_index(&r, 0), 1);
	for (size_t i = 0; i < r.nr_index; i++) {
		const struct trace_index_entry *e = &r.index[i];
		if (e->chunk_type != TRACE_CHUNK_EVENTS)
			continue;
		events++;
		CHECK(e->flags & TRACE_IDX_KNOWN);
		CHECK(e->t_lo <= e->t_hi);
	}
	/* two streams of BLOCKS event chunks, each ended */
	CHECK_EQ_U64(events, 2 * BLOCKS);
	CHECK_EQ_U64(r.nr_index, 2 * BLOCKS + 2);
	CHECK_EQ_U64(r.index_offset, index_offset(path));
	trace_reader_close(&r);
}

/* Windows: inside, at the edges, across the out-of-order blocks, none, all. */
static const struct { uint64_t lo, hi; } windows[] = {
	{ 50 * MS, 60 * MS },
	{ 10 * MS, 10 * MS + 100 },
	{ 105 * MS, 115 * MS },
	{ 150 * MS, 150 * MS + 1 },
	{ 209 * MS + 200, 500 * MS },
	{ 1, 5 * MS },
	{ 1, UINT64_MAX - 1 },
};

static void test_window_through_index_is_the_scan(void)
{
	const char *path = gen(), *plain = strip_index(path);
	uint64_t skipped = 0;

	for (size_t w = 0; w < ARRAY_SIZE(windows); w++) {
		for (int keep = 0; keep < 2; keep++) {
			struct model a, b;
			unsigned k = keep ? 1u << TRACE_EV_MEMORY : 0;
			load_window(&a, path, windows[w].lo, windows[w].hi, k);
			load_window(&b, plain, windows[w].lo, windows[w].hi, k);
			same_rows(&a, &b);
			CHECK_EQ_U64(b.chunks_skipped, 0); /* no index: every chunk read */
			skipped += a.chunks_skipped;
			if (keep) /* allocations asked for whole: all of them, whatever the window */
				CHECK_EQ_U64(a.memory.n, 2 * BLOCKS / 5);
			model_release(&a);
			model_release(&b);
		}
	}
	/* the 10 ms windows read about a tenth of 400 chunks: the index skips most */
	CHECK(skipped > 1000);
}

static void test_window_is_the_whole_load_clipped(void)
{
	const char *path = gen();
	struct model whole;

	model_init(&whole);
	CHECK(model_load_report(&whole, path) == 0);
	CHECK_EQ_U64(whole.kernels.n, 2 * BLOCKS);
	CHECK_STR(model_str(&whole, whole.kernels.v[0].name_id), "relu");
	for (size_t w = 0; w < ARRAY_SIZE(windows); w++) {
		struct model a, c;
		load_window(&a, path, windows[w].lo, windows[w].hi, 0);
		model_clip(&a, windows[w].lo, windows[w].hi);
		model_init(&c);
		CHECK(model_load_report(&c, path) == 0);
		model_clip(&c, windows[w].lo, windows[w].hi);
		SAME_TABLE(&a, &c, nvtx);
		SAME_TABLE(&a, &c, marks);
		SAME_TABLE(&a, &c, api);
		SAME_TABLE(&a, &c, kernels);
		SAME_TABLE(&a, &c, cpu);
		SAME_TABLE(&a, &c, metrics);
		SAME_TABLE(&a, &c, memory);
		model_release(&a);
		model_release(&c);
	}
	/* the late string is defined at the end and found in a window that skips its chunk's neighbours */
	{
		struct model a;
		int found = 0;
		load_window(&a, path, 160 * MS, 161 * MS, 0); /* block 150 */
		for (size_t i = 0; i < a.kernels.n; i++)
			found += !strcmp(model_str(&a, a.kernels.v[i].name_id), "late_kernel");
		CHECK_EQ_I64(found, 2); /* one per stream */
		CHECK(a.chunks_skipped > 0);
		model_release(&a);
	}
	model_release(&whole);
}

static void test_span_from_index(void)
{
	const char *path = gen(), *plain = strip_index(path);
	uint64_t a0, a1, b0, b1;
	struct model whole;

	CHECK(model_report_span(path, &a0, &a1) == 0);
	CHECK(model_report_span(plain, &b0, &b1) == 0);
	model_init(&whole);
	CHECK(model_load_report(&whole, path) == 0);
	CHECK_EQ_U64(a0, whole.t_min);
	CHECK_EQ_U64(a1, whole.t_max);
	CHECK_EQ_U64(b0, whole.t_min);
	CHECK_EQ_U64(b1, whole.t_max);
	model_release(&whole);
}

/* A span whose end is an nvtx_end: the index alone cannot say it; the join reads only those chunks. */
static void test_span_with_late_end(void)
{
	const char *path = tmp("late.gpuscope");
	struct trace_builder b;
	struct trace_nvtx_range r = { 0 };
	struct trace_nvtx_end e = { 0 }, orphan = { 0 };
	struct trace_kernel k = { 0 };
	uint64_t t0, t1;
	struct model whole;

	unlink(path);
	CHECK(trace_builder_open(&b, path, 1, 0) == 0);
	r.start = 1000;
	r.kind = TRACE_NVTX_STARTEND;
	r.range_id = 5;
	r.pid = 1;
	trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	trace_builder_flush(&b);
	k.start = 2000;
	k.end = 3000;
	k.pid = 1;
	trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	trace_builder_flush(&b);
	e.range_id = 5;
	e.end = 9000;
	trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
	/* an end nothing started: not in the span */
	orphan.range_id = 77;
	orphan.end = 99000;
	trace_builder_add(&b, TRACE_EV_NVTX_END, &orphan, sizeof(orphan));
	CHECK(trace_builder_close(&b, 0) == 0);
	CHECK(model_report_span(path, &t0, &t1) == 0);
	model_init(&whole);
	CHECK(model_load_report(&whole, path) == 0);
	CHECK_EQ_U64(whole.t_max, 9000);
	CHECK_EQ_U64(t0, 1000);
	CHECK_EQ_U64(t1, 9000);
	model_release(&whole);
}

static void test_report_without_index_loads(void)
{
	const char *path = gen(), *plain = strip_index(path);
	struct trace_reader r;
	struct model a, b;

	CHECK(trace_reader_open(&r, plain) == 0);
	CHECK_EQ_I64(trace_reader_index(&r, 0), 0);
	CHECK(r.index == NULL);
	trace_reader_close(&r);
	model_init(&a);
	model_init(&b);
	CHECK(model_load_report(&a, path) == 0);
	CHECK(model_load_report(&b, plain) == 0);
	same_rows(&a, &b);
	/* the index chunk is neither unknown nor damage */
	CHECK_EQ_U64(a.nr_warnings, 0);
	CHECK_EQ_U64(a.chunks_bad, 0);
	model_release(&a);
	model_release(&b);
}

/* Write @len bytes of @data at @off of @path. */
static void poke(const char *path, off_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);

	CHECK(fd >= 0);
	CHECK(pwrite(fd, data, len, off) == (ssize_t)len);
	close(fd);
}

/* A damaged index is ignored, with a warning, and the windowed load reads every chunk. */
static void check_ignored(const char *path, const char *ref)
{
	struct trace_reader r;
	struct model a, b;

	set_error_quiet(1);
	CHECK(trace_reader_open(&r, path) == 0);
	CHECK_EQ_I64(trace_reader_index(&r, 0), 0);
	CHECK(r.index == NULL);
	trace_reader_close(&r);
	load_window(&a, path, 50 * MS, 60 * MS, 0);
	set_error_quiet(0);
	load_window(&b, ref, 50 * MS, 60 * MS, 0);
	CHECK_EQ_U64(a.chunks_skipped, 0);
	same_rows(&a, &b);
	model_release(&a);
	model_release(&b);
}

static void test_corrupt_index_is_ignored(void)
{
	const char *path = gen(), *bad = tmp("bad.gpuscope");
	off_t size = file_size(path);
	uint64_t at = index_offset(path);
	struct trace_index_entry e;
	struct trace_index_tail tail;
	unsigned char byte;

	/* a flipped byte in an entry: the payload checksum fails */
	copy_file(path, bad, size);
	{
		FILE *f = fopen(bad, "rb");
		CHECK(f && fseeko(f, (off_t)at + TRACE_CHUNK_HEADER_SIZE + 16 + 8, SEEK_SET) == 0);
		CHECK(fread(&byte, 1, 1, f) == 1);
		fclose(f);
	}
	byte ^= 0x40;
	poke(bad, (off_t)at + TRACE_CHUNK_HEADER_SIZE + 16 + 8, &byte, 1);
	check_ignored(bad, path);

	/* a tail that points outside the file, and one that points at a chunk that is no index */
	copy_file(path, bad, size);
	memset(&tail, 0, sizeof(tail));
	memcpy(tail.magic, TRACE_INDEX_MAGIC, 8);
	tail.index_offset = (uint64_t)size * 2;
	poke(bad, size - (off_t)sizeof(tail), &tail, sizeof(tail));
	check_ignored(bad, path);
	tail.index_offset = TRACE_HEADER_SIZE;
	poke(bad, size - (off_t)sizeof(tail), &tail, sizeof(tail));
	check_ignored(bad, path);

	/*
	 * An index whose checksums hold but whose entry names an offset
	 * inside a chunk (crafted, or a writer's bug): re-sealed with a valid
	 * checksum, it must still be refused by the check against the chunks.
	 */
	{
		struct trace_chunk_header h;
		unsigned char *p = xmalloc((size_t)(size - (off_t)at));
		FILE *f = fopen(path, "rb");
		size_t plen;
		CHECK(f && fseeko(f, (off_t)at, SEEK_SET) == 0);
		CHECK(fread(p, 1, (size_t)(size - (off_t)at), f) == (size_t)(size - (off_t)at));
		fclose(f);
		memcpy(&h, p, sizeof(h));
		plen = h.stored_size;
		memcpy(&e, p + sizeof(h) + 16 + 3 * sizeof(e), sizeof(e));
		e.offset += 8;
		memcpy(p + sizeof(h) + 16 + 3 * sizeof(e), &e, sizeof(e));
		trace_chunk_header_fill(&h, TRACE_CHUNK_INDEX, 0, 0, p + sizeof(h), (uint32_t)plen,
					(uint32_t)plen);
		memcpy(p, &h, sizeof(h));
		copy_file(path, bad, size);
		poke(bad, (off_t)at, p, (size_t)(size - (off_t)at));
		free(p);
		check_ignored(bad, path);
	}

	/* truncated inside the index: no tail, no index, the chunks before it whole */
	copy_file(path, bad, size - 5);
	{
		struct model a;
		load_window(&a, bad, 50 * MS, 60 * MS, 0);
		CHECK_EQ_U64(a.chunks_skipped, 0);
		CHECK(a.kernels.n > 0);
		model_release(&a);
	}
}

/* A chunk written after the index leaves the report without one (the index must be last). */
static void test_chunk_after_index_means_no_index(void)
{
	const char *path = gen(), *out = tmp("appended.gpuscope");
	off_t size = file_size(path);
	struct trace_writer w;
	struct trace_reader r;
	int fd;

	copy_file(path, out, size);
	fd = open(out, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK(trace_writer_fdopen(&w, fd, out, 0) == 0);
	CHECK(trace_writer_chunk(&w, TRACE_CHUNK_STREAM_END, 5, NULL, 0, 0) == 0);
	CHECK(trace_writer_close(&w, 0) == 0);
	CHECK(trace_reader_open(&r, out) == 0);
	CHECK_EQ_I64(trace_reader_index(&r, 1), 0);
	trace_reader_close(&r);
}

static void test_summary_extents(void)
{
	struct trace_buf b = { 0 };
	struct trace_index_entry e;
	struct trace_kernel k = { 0 };
	struct trace_nvtx_range r = { 0 };
	struct trace_metric mt = { 0 };
	struct trace_nvtx_end end = { 0 };

	k.start = 500;
	k.end = 400; /* an end before its start counts as the start */
	trace_buf_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	mt.time = 100;
	trace_buf_add(&b, TRACE_EV_METRIC, &mt, sizeof(mt));
	trace_chunk_summary(b.data, b.len, &e);
	CHECK(e.flags & TRACE_IDX_KNOWN);
	CHECK_EQ_U64(e.t_lo, 100);
	CHECK_EQ_U64(e.t_hi, 500);
	CHECK_EQ_U64(e.span_lo, 500); /* metrics are not in the span */
	CHECK_EQ_U64(e.span_hi, 500);
	CHECK_EQ_U64(e.types, (1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_METRIC));
	r.start = 700;
	r.kind = TRACE_NVTX_STARTEND;
	trace_buf_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	end.end = 900;
	trace_buf_add(&b, TRACE_EV_NVTX_END, &end, sizeof(end));
	trace_chunk_summary(b.data, b.len, &e);
	CHECK(e.flags & TRACE_IDX_OPEN);
	CHECK_EQ_U64(e.t_hi, UINT64_MAX); /* an open range's end is not known */
	CHECK_EQ_U64(e.span_hi, 700);
	CHECK_EQ_U64(e.end_hi, 900);
	/* a malformed entry: nothing known, the chunk is never skipped */
	b.data[b.len - 32 + 2] = 3;
	trace_chunk_summary(b.data, b.len, &e);
	CHECK(!(e.flags & TRACE_IDX_KNOWN));
	trace_buf_release(&b);
}

static const struct gstest tests[] = {
	GSTEST(test_builder_and_merge_write_an_index),
	GSTEST(test_window_through_index_is_the_scan),
	GSTEST(test_window_is_the_whole_load_clipped),
	GSTEST(test_span_from_index),
	GSTEST(test_span_with_late_end),
	GSTEST(test_report_without_index_loads),
	GSTEST(test_corrupt_index_is_ignored),
	GSTEST(test_chunk_after_index_means_no_index),
	GSTEST(test_summary_extents),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
