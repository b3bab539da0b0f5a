/*
 * test_analyze.c - every rule on a synthetic report with a known answer and
 * on its fixed twin; edge cases that must never crash or print NaN.
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "analyze/internal.h"
#include "cases.h"
#include "synth.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", gstest_tmpdir(), name);
	return buf[k];
}

static const struct synth_case *find_case(const char *name)
{
	for (const struct synth_case *c = synth_cases; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* Print @r both ways into one string (owned by the caller). */
static char *render(const struct model *m, const struct analyze_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK(analyze_print_text(f, m, r) == 0);
	CHECK(analyze_print_json(f, m, r) == 0);
	fclose(f);
	return buf;
}

/* No NaN or infinity printed as a number (words like "nanosleep" are fine). */
static void check_no_nan(const char *out)
{
	for (const char *p = out; p && (p = strstr(p, "nan")) != NULL; p++) {
		int before = p == out ? ' ' : p[-1], after = p[3];
		if (!isalpha((unsigned char)before) && !isalpha((unsigned char)after))
			gstest_fail(__FILE__, __LINE__, "output prints NaN: ...%.40s", p > out + 20 ? p - 20 : out);
	}
	for (const char *p = out; p && (p = strstr(p, "inf")) != NULL; p++) {
		int before = p == out ? ' ' : p[-1], after = p[3];
		if (!isalpha((unsigned char)before) && !isalpha((unsigned char)after))
			gstest_fail(__FILE__, __LINE__, "output prints infinity: ...%.40s", p > out + 20 ? p - 20 : out);
	}
}

static int analyze_file(const char *path, const struct analyze_opts *o, struct model *m,
			struct analyze_result *r)
{
	static const struct analyze_opts none;

	model_init(m);
	if (model_load_report(m, path) < 0)
		return -1;
	return analyze_run(m, o ? o : &none, r);
}

static const struct finding *find(const struct analyze_result *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->findings[i].id, id))
			return &r->findings[i];
	return NULL;
}

/* Whether a note of @r contains @text. */
static int has_note(const struct analyze_result *r, const char *text)
{
	for (size_t i = 0; i < r->nnotes; i++)
		if (strstr(r->notes[i], text))
			return 1;
	return 0;
}

/*
 * The broken report's top finding is the case's, with the known gain within
 * @tol; the fixed twin has no finding above 5%.  Returns the text output.
 */
static void check_case(const char *name, double tol, const char *must_contain)
{
	const struct synth_case *c = find_case(name);
	const char *bp = tmp("broken.gpuscope"), *fp = tmp("fixed.gpuscope");
	struct model m;
	struct analyze_result r;
	char *out;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->write(bp, 0) == 0);
	CHECK(c->write(fp, 1) == 0);

	CHECK(analyze_file(bp, NULL, &m, &r) == 0);
	out = render(&m, &r);
	check_no_nan(out);
	CHECK(r.n >= 1);
	if (r.n >= 1) {
		CHECK_STR(r.findings[0].id, c->finding);
		CHECK_NEAR(r.findings[0].gain, c->gain, tol);
		CHECK(r.findings[0].evidence && *r.findings[0].evidence);
		CHECK(r.findings[0].recommendation && *r.findings[0].recommendation);
		CHECK(r.findings[0].gain_formula && *r.findings[0].gain_formula);
	}
	for (size_t i = 1; i < r.n; i++)
		CHECK(r.findings[i].gain <= r.findings[i - 1].gain);
	/* every finding carries its what-if: the transformation, the time as recorded and after it (issue 16) */
	for (size_t i = 0; i < r.n; i++) {
		const struct finding *f = &r.findings[i];
		CHECK(f->transform && *f->transform);
		CHECK(f->whatif == FINDING_WHATIF_REPLAY || f->whatif == FINDING_WHATIF_MODEL);
		CHECK(f->actual_s > 0);
		CHECK(f->replayed_s >= 0 && f->replayed_s <= f->actual_s);
		if (f->actual_s > 0)
			CHECK_NEAR(1 - f->replayed_s / f->actual_s, f->gain, 0.001);
	}
	if (must_contain)
		CHECK_CONTAINS(out, must_contain);
	if (getenv("GS_TEST_VERBOSE"))
		fputs(out, stderr);
	free(out);
	analyze_result_release(&r);
	model_release(&m);

	CHECK(analyze_file(fp, NULL, &m, &r) == 0);
	out = render(&m, &r);
	check_no_nan(out);
	for (size_t i = 0; i < r.n; i++) {
		if (r.findings[i].gain > 0.05)
			gstest_fail(__FILE__, __LINE__, "fixed twin of '%s' has finding '%s' with gain %.3f",
				    name, r.findings[i].id, r.findings[i].gain);
		if (!strcmp(r.findings[i].id, c->finding) && r.findings[i].severity >= SEV_WARNING)
			gstest_fail(__FILE__, __LINE__, "fixed twin of '%s' still has '%s' (%s)", name,
				    c->finding, r.findings[i].title);
	}
	if (getenv("GS_TEST_VERBOSE"))
		fputs(out, stderr);
	free(out);
	analyze_result_release(&r);
	model_release(&m);
}

static void test_dataloader(void)
{
	const char *bp = tmp("dl.gpuscope");
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	check_case("dataloader", 0.02, "read");
	CHECK(find_case("dataloader")->write(bp, 0) == 0);
	CHECK(analyze_file(bp, NULL, &m, &r) == 0);
	/* 100 steps of 30 ms: wall = 99 x 30 + 10 ms, idle 99 x 20 ms */
	CHECK_NEAR(r.summary.wall_s, 2.98, 0.001);
	CHECK_NEAR(r.summary.gpu_idle, 1980.0 / 2980, 0.005);
	CHECK_NEAR(r.summary.step_period_s, 0.030, 0.0005);
	CHECK_EQ_U64(r.summary.gaps, 99);
	CHECK(r.summary.step_source && strstr(r.summary.step_source, "periodic"));
	f = find(&r, "data-loading");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->evidence, "I/O");
		CHECK_CONTAINS(f->evidence, "thread 'python3' pid 100 tid 100");
		CHECK(f->nwhere >= 1);
		CHECK(f->severity == SEV_CRITICAL);
		CHECK_CONTAINS(f->recommendation, "num_workers"); /* PyTorch-aware */
	}
	analyze_result_release(&r);
	model_release(&m);
}

/* CPU-only batch preparation before a host-to-device copy is data loading too. */
static void test_dataloader_cpu(void)
{
	check_case("dataloader-cpu", 0.02, "host work before a batch upload");
}

static void test_launch_bound(void)
{
	const char *bp = tmp("lb.gpuscope");
	struct model m;
	struct analyze_result r;

	check_case("launch-bound", 0.03, "CUDA graph");
	/* a launch-bound gpuscope recording: the note on the tracer's own cost */
	CHECK(find_case("launch-bound")->write(bp, 0) == 0);
	CHECK(analyze_file(bp, NULL, &m, &r) == 0);
	CHECK(has_note(&r, "is the tracer's own"));
	analyze_result_release(&r);
	model_release(&m);
	/* ... and none where launches are few against the run's time */
	CHECK(find_case("dataloader")->write(bp, 0) == 0);
	CHECK(analyze_file(bp, NULL, &m, &r) == 0);
	CHECK(!has_note(&r, "is the tracer's own"));
	analyze_result_release(&r);
	model_release(&m);
}

static void test_sync(void)
{
	check_case("sync", 0.02, "mostly in cudaMemcpy");
}

static void test_pageable(void)
{
	check_case("pageable", 0.03, "pageable");
}

static void test_serial_copy(void)
{
	check_case("serial-copy", 0.02, "no kernel running beside it");
}

static void test_tensor_cores(void)
{
	check_case("tensor-core", 0.02, "ampere_sgemm_128x64_nn");
}

static void test_underfill(void)
{
	check_case("underfill", 0.02, "4-4 blocks on 132 SMs");
}

static void test_alloc_churn(void)
{
	check_case("alloc-churn", 0.02, "cudaFree");
}

/* a sync that waits for an upload from pageable memory is named as such, with its fix */
static void test_sync_upload(void)
{
	check_case("sync-upload", 0.03, "follow an asynchronous copy of at most 8 B from pageable host memory");
}

static void test_comm(void)
{
	check_case("comm-wait", 0.02, "ncclDevKernel_AllReduce");
	/* compute that needs every SM runs at half rate beside the all-reduce */
	check_case("comm-wait-wide", 0.02, "ncclDevKernel_AllReduce");
}

static void test_memory(void)
{
	check_case("memory", 0.001, "device memory");
}

static void test_throttle(void)
{
	check_case("throttle", 0.02, "thermal");
}

static void test_data_names(void)
{
	static const char *const ranges[] = { "load_*", "Decode", NULL };

	/* the framework's own DataLoader frames */
	CHECK(az_is_data_frame("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", NULL));
	CHECK(az_is_data_frame("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", NULL));
	CHECK(az_is_data_frame("enumerate(DataPipe)#ShardingFilterIterDataPipe", NULL));
	/* a word in a name decides nothing */
	CHECK(!az_is_data_frame("load_batch", NULL));
	CHECK(!az_is_data_frame("## sparse_data_dist ##", NULL));
	CHECK(!az_is_data_frame("DataLoader", NULL));
	CHECK(!az_is_data_frame("prepare_input_data", NULL));
	CHECK(!az_is_data_frame("", NULL));
	/* the user's word does (--data-range, shell patterns) */
	CHECK(az_is_data_frame("load_batch", ranges));
	CHECK(az_is_data_frame("Decode", ranges));
	CHECK(!az_is_data_frame("decode", ranges));
	CHECK(!az_is_data_frame("reload_weights", ranges));
}

static void test_api_classes(void)
{
	CHECK_EQ_I64(az_api_class("cudaLaunchKernel"), API_LAUNCH);
	CHECK_EQ_I64(az_api_class("cudaLaunchKernelExC_v11060"), API_LAUNCH);
	CHECK_EQ_I64(az_api_class("cuLaunchKernel"), API_LAUNCH);
	CHECK_EQ_I64(az_api_class("cudaGraphLaunch_v10000"), API_LAUNCH);
	CHECK_EQ_I64(az_api_class("hipLaunchKernel"), API_LAUNCH);
	CHECK_EQ_I64(az_api_class("cudaDeviceSynchronize"), API_SYNC);
	CHECK_EQ_I64(az_api_class("cudaStreamSynchronize"), API_SYNC);
	CHECK_EQ_I64(az_api_class("cuEventSynchronize"), API_SYNC);
	CHECK_EQ_I64(az_api_class("hipDeviceSynchronize"), API_SYNC);
	CHECK_EQ_I64(az_api_class("cudaMemcpy"), API_COPY_SYNC);
	CHECK_EQ_I64(az_api_class("cuMemcpyDtoH_v2"), API_COPY_SYNC);
	CHECK_EQ_I64(az_api_class("cudaMemcpyAsync"), API_COPY_ASYNC);
	CHECK_EQ_I64(az_api_class("cudaMemsetAsync"), API_COPY_ASYNC);
	CHECK_EQ_I64(az_api_class("cudaMalloc"), API_ALLOC);
	CHECK_EQ_I64(az_api_class("cudaMallocAsync"), API_OTHER);
	CHECK_EQ_I64(az_api_class("cudaFree"), API_FREE);
	CHECK_EQ_I64(az_api_class("cudaFreeAsync"), API_OTHER);
	CHECK_EQ_I64(az_api_class("cuDevicePrimaryCtxRetain"), API_INIT);
	CHECK_EQ_I64(az_api_class("cuLibraryLoadData"), API_INIT);
	CHECK_EQ_I64(az_api_class("cudaGetDevice"), API_OTHER);
	CHECK_EQ_I64(az_api_class("cudaStreamWaitEvent"), API_OTHER);
	CHECK_EQ_I64(az_api_class(""), API_OTHER);
}

/* A step loop whose gaps are filled by @fill(s, tid, gap_start, gap_end). */
static void write_loop(const char *path, void (*fill)(struct synth *, uint64_t, uint64_t))
{
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	uint64_t t = 1000 * MS;

	CHECK(synth_open(&s, path, 100, "./app") == 0);
	synth_thread(&s, 100, "app");
	synth_device(&s, 0, 132, 80ull << 30, 1980);
	for (int i = 0; i < 50; i++) {
		fill(&s, t, t + 4 * MS);
		synth_kernel(&s, 100, t + 4 * MS, t + 4 * MS + 5 * US, t + 4 * MS + 10 * US, t + 10 * MS, &k);
		t += 10 * MS;
	}
	CHECK(synth_close(&s) == 0);
}

static void fill_lock(struct synth *s, uint64_t a, uint64_t b)
{
	synth_osrt(s, 100, OSRT_MUTEX_LOCK, a, b);
}

static void fill_init(struct synth *s, uint64_t a, uint64_t b)
{
	synth_api(s, 100, "cudaGetDevice", a, b);
	synth_api(s, 100, "cuLibraryLoadData", a + 10 * US, b - 10 * US);
}

/* CPU samples around each gap: the thread ran 10% of it */
static void fill_offcpu(struct synth *s, uint64_t a, uint64_t b)
{
	static uint64_t run;

	synth_cpu(s, 100, a - 1 * US, run);
	run += (b - a) / 10;
	synth_cpu(s, 100, b + 1 * US, run);
}

static void fill_nothing(struct synth *s, uint64_t a, uint64_t b)
{
	(void)s;
	(void)a;
	(void)b;
}

/* What the thread did in the gap decides the finding. */
static void test_attribution(void)
{
	const char *p = tmp("attr.gpuscope");
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	/* a lock: gpu-starvation, titled so, about 4/10 of the time */
	write_loop(p, fill_lock);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "gpu-starvation");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->title, "lock");
		CHECK_CONTAINS(f->evidence, "mutex");
		CHECK_NEAR(f->gain, 49 * 4.0 / (49 * 10 + 6), 0.01);
	}
	analyze_result_release(&r);
	model_release(&m);

	/* no CPU record at all for the gap: host code between launches, said so */
	write_loop(p, fill_nothing);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "host-bound");
	CHECK(f != NULL);
	if (f)
		CHECK_CONTAINS(f->evidence, "CPU work outside traced calls");
	analyze_result_release(&r);
	model_release(&m);

	/* the same, but CPU samples show the thread mostly off the CPU */
	write_loop(p, fill_offcpu);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "host-bound");
	CHECK(f != NULL);
	if (f)
		CHECK_CONTAINS(f->evidence, "ran on a CPU 10% of its CPU-work idle time (mostly off-CPU");
	analyze_result_release(&r);
	model_release(&m);

	/* one-time start-up inside the gap counts in no gain */
	write_loop(p, fill_init);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "gpu-starvation");
	CHECK(!f || f->gain < 0.02);
	CHECK(r.nnotes >= 1);
	CHECK(has_note(&r, "one-time CUDA start-up"));
	analyze_result_release(&r);
	model_release(&m);
}

/* Work queued before the GPU went idle waited on the GPU side: not the CPU's fault. */
static void test_gpu_side_gap(void)
{
	const char *p = tmp("queued.gpuscope");
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	struct model m;
	struct analyze_result r;
	uint64_t t = 1000 * MS;

	CHECK(synth_open(&s, p, 100, "./app") == 0);
	synth_thread(&s, 100, "app");
	for (int i = 0; i < 50; i++) {
		/* launched 1 ms after the run began, long before its turn */
		synth_kernel(&s, 100, 999 * MS + (uint64_t)i * 10 * US, 999 * MS + (uint64_t)i * 10 * US + 5 * US,
			     t + 4 * MS, t + 10 * MS, &k);
		t += 10 * MS;
	}
	CHECK(synth_close(&s) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	CHECK_NEAR(r.summary.gpu_idle, 49 * 4.0 / (49 * 10 + 6), 0.01);
	CHECK(r.n == 0);
	analyze_result_release(&r);
	model_release(&m);
}

/*
 * Deep NVTX nesting: a run-long "train" range, per step a "load_batch" range
 * holding thousands of short operator ranges.  The name alone decides
 * nothing (host work); named with --data-range the gap inside it is data
 * loading (the far parent's name counts), found without walking siblings.
 */
static void test_nested_nvtx(void)
{
	const char *p = tmp("nested.gpuscope");
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	struct model m;
	struct analyze_result r;
	uint64_t t = 1000 * MS;
	const struct finding *f;

	CHECK(synth_open(&s, p, 100, "python3 x.py") == 0);
	synth_nvtx(&s, 100, "train", t - 1 * MS, t + 30 * 10 * MS);
	for (int i = 0; i < 30; i++) {
		synth_nvtx(&s, 100, "load_batch", t, t + 6 * MS);
		for (int j = 0; j < 2000; j++)
			synth_nvtx(&s, 100, "aten::add", t + (uint64_t)j * 3 * US, t + (uint64_t)j * 3 * US + 2 * US);
		synth_kernel(&s, 100, t + 6 * MS, t + 6 * MS + 5 * US, t + 6 * MS + 10 * US, t + 10 * MS, &k);
		t += 10 * MS;
	}
	CHECK(synth_close(&s) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	CHECK(find(&r, "data-loading") == NULL);
	analyze_result_release(&r);
	model_release(&m);
	{
		static const char *const ranges[] = { "load_*", NULL };
		struct analyze_opts o = { 0 };
		o.data_ranges = ranges;
		CHECK(analyze_file(p, &o, &m, &r) == 0);
	}
	f = find(&r, "data-loading");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->evidence, "NVTX 'load_batch'");
		CHECK_NEAR(f->gain, 29 * 6.0 / (29 * 10 + 4), 0.01);
	}
	analyze_result_release(&r);
	model_release(&m);
}

/* One stall in twenty steps is reported as such. */
static void test_occasional_stall(void)
{
	const char *p = tmp("stall.gpuscope");
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	struct model m;
	struct analyze_result r;
	uint64_t t = 1000 * MS;
	const struct finding *f;

	CHECK(synth_open(&s, p, 100, "./train") == 0);
	for (int i = 0; i < 20; i++) {
		uint64_t stall = i == 10 ? 40 * MS : 0;
		synth_nvtx(&s, 100, "step", t, t + stall + 10 * MS);
		if (stall)
			synth_osrt(&s, 100, OSRT_READ, t, t + stall);
		synth_kernel(&s, 100, t + stall, t + stall + 5 * US, t + stall + 10 * US, t + stall + 10 * MS, &k);
		t += stall + 10 * MS;
	}
	CHECK(synth_close(&s) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "data-loading");
	CHECK(f != NULL);
	if (f && getenv("GS_TEST_VERBOSE"))
		fputs(f->evidence, stderr);
	if (f) {
		CHECK_CONTAINS(f->evidence, "in 1 of 19 steps (most: 40.000 ms");
		CHECK_CONTAINS(f->evidence, "an occasional stall");
	}
	analyze_result_release(&r);
	model_release(&m);
}

/* --set overrides a threshold; bad names are errors, not ignored. */
static void test_set(void)
{
	const char *bp = tmp("set.gpuscope");
	const char *hi[] = { "gpu-starvation.min_gain=0.9", NULL };
	const char *bad_rule[] = { "no-such-rule.min_gain=1", NULL };
	const char *bad_key[] = { "launch-bound.nope=1", NULL };
	const char *bad_val[] = { "launch-bound.min_gain=abc", NULL };
	struct analyze_opts o = { 0 };
	struct model m;
	struct analyze_result r;

	CHECK(find_case("dataloader")->write(bp, 0) == 0);
	o.set = hi;
	CHECK(analyze_file(bp, &o, &m, &r) == 0);
	CHECK(find(&r, "data-loading") == NULL);
	analyze_result_release(&r);
	model_release(&m);
	o.set = bad_rule;
	CHECK(analyze_file(bp, &o, &m, &r) == -1);
	model_release(&m);
	o.set = bad_key;
	CHECK(analyze_file(bp, &o, &m, &r) == -1);
	model_release(&m);
	o.set = bad_val;
	CHECK(analyze_file(bp, &o, &m, &r) == -1);
	model_release(&m);
}

/* --start/--end and --nvtx restrict the window. */
static void test_window(void)
{
	const char *p = tmp("win.gpuscope");
	struct analyze_opts o = { 0 };
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	struct model m;
	struct analyze_result r;
	uint64_t t0 = 1000 * MS;

	/* first second: busy back to back; second second: 50% idle from sleeps */
	CHECK(synth_open(&s, p, 100, "./app") == 0);
	synth_thread(&s, 100, "app");
	for (int i = 0; i < 100; i++)
		synth_kernel(&s, 100, t0 - 1 * MS + (uint64_t)i * US, t0 - 1 * MS + (uint64_t)i * US + 500,
			     t0 + (uint64_t)i * 10 * MS, t0 + (uint64_t)i * 10 * MS + 10 * MS - 1 * US, &k);
	for (int i = 0; i < 100; i++) {
		uint64_t t = t0 + 1000 * MS + (uint64_t)i * 10 * MS;
		synth_osrt(&s, 100, OSRT_NANOSLEEP, t, t + 5 * MS);
		synth_kernel(&s, 100, t + 5 * MS, t + 5 * MS + 5 * US, t + 5 * MS + 10 * US, t + 10 * MS, &k);
	}
	synth_nvtx(&s, 100, "phase2", t0 + 1000 * MS, t0 + 2000 * MS);
	CHECK(synth_close(&s) == 0);

	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	CHECK_NEAR(r.summary.gpu_idle, 0.25, 0.01);
	analyze_result_release(&r);
	model_release(&m);

	o.nvtx = "phase2";
	CHECK(analyze_file(p, &o, &m, &r) == 0);
	CHECK_NEAR(r.summary.wall_s, 1.0, 0.001);
	CHECK_NEAR(r.summary.gpu_idle, 0.5, 0.01);
	CHECK(r.n >= 1 && !strcmp(r.findings[0].id, "gpu-starvation"));
	if (r.n)
		CHECK_CONTAINS(r.findings[0].evidence, "sleeping");
	analyze_result_release(&r);
	model_release(&m);

	memset(&o, 0, sizeof(o));
	o.start = t0;
	o.end = t0 + 1000 * MS;
	CHECK(analyze_file(p, &o, &m, &r) == 0);
	CHECK_NEAR(r.summary.gpu_idle, 0.0, 0.01);
	CHECK(r.n == 0);
	analyze_result_release(&r);
	model_release(&m);

	memset(&o, 0, sizeof(o));
	o.nvtx = "no such range";
	CHECK(analyze_file(p, &o, &m, &r) == -1);
	model_release(&m);
}

/* NVTX step ranges give the step period. */
static void test_nvtx_steps(void)
{
	const char *p = tmp("steps.gpuscope");
	struct synth s;
	struct synth_kernel k = { "ampere_bf16_s16816gemm_bf16", 0, 7, 264, 256, 0 };
	struct model m;
	struct analyze_result r;
	uint64_t t0 = 1000 * MS;
	char name[32];

	CHECK(synth_open(&s, p, 100, "python3 x.py") == 0);
	for (int i = 0; i < 20; i++) {
		uint64_t t = t0 + (uint64_t)i * 25 * MS;
		snprintf(name, sizeof(name), "ProfilerStep#%d", i + 3);
		synth_nvtx(&s, 100, name, t, t + 25 * MS);
		synth_kernel(&s, 100, t, t + 5 * US, t + 10 * US, t + 20 * MS, &k);
	}
	CHECK(synth_close(&s) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	CHECK_NEAR(r.summary.step_period_s, 0.025, 1e-6);
	CHECK(r.summary.step_source && strstr(r.summary.step_source, "ProfilerStep#"));
	/* the first of the 20 steps is left out as warm-up, and said so */
	CHECK_NEAR(r.summary.wall_s, 18 * 0.025 + 0.02, 1e-6);
	CHECK(r.nnotes >= 1);
	analyze_result_release(&r);
	model_release(&m);

	/* --step names the range (without its number); --start 0 keeps the warm-up */
	{
		struct analyze_opts o = { 0 };
		o.step = "ProfilerStep";
		o.start = 1;
		CHECK(analyze_file(p, &o, &m, &r) == 0);
		CHECK_NEAR(r.summary.step_period_s, 0.025, 1e-6);
		CHECK(r.summary.wall_s > 19 * 0.025);
		analyze_result_release(&r);
		model_release(&m);
		o.step = "nosuchstep";
		CHECK(analyze_file(p, &o, &m, &r) == 0);
		CHECK(r.summary.step_period_s == 0 || (r.summary.step_source &&
						       strstr(r.summary.step_source, "periodic")));
		analyze_result_release(&r);
		model_release(&m);
	}
}

/* ---- edge cases: never crash, never NaN ---- */

static void run_edge(const char *path, const char *must_contain)
{
	struct model m;
	struct analyze_result r;
	char *out;

	CHECK(analyze_file(path, NULL, &m, &r) == 0);
	out = render(&m, &r);
	check_no_nan(out);
	CHECK_CONTAINS(out, "\"summary\":{\"wall_s\":");
	if (must_contain)
		CHECK_CONTAINS(out, must_contain);
	if (getenv("GS_TEST_VERBOSE"))
		fputs(out, stderr);
	free(out);
	analyze_result_release(&r);
	model_release(&m);
}

static void test_empty(void)
{
	const char *p = tmp("empty.gpuscope");
	struct synth s;

	CHECK(synth_open(&s, p, 1, "true") == 0);
	CHECK(synth_close(&s) == 0);
	run_edge(p, "no CUDA data");
	run_edge(p, "\"gpu_busy\":null");
}

static void test_cpu_only(void)
{
	const char *p = tmp("cpu.gpuscope");
	struct synth s;

	CHECK(synth_open(&s, p, 1, "./cpu") == 0);
	synth_thread(&s, 1, "cpu");
	for (int i = 0; i < 50; i++) {
		synth_osrt(&s, 1, OSRT_READ, 1000 * MS + (uint64_t)i * MS, 1000 * MS + (uint64_t)i * MS + 500 * US);
		synth_nvtx(&s, 1, "work", 1000 * MS + (uint64_t)i * MS, 1000 * MS + (uint64_t)i * MS + 900 * US);
	}
	CHECK(synth_close(&s) == 0);
	run_edge(p, "no CUDA data");
}

static void test_one_kernel(void)
{
	const char *p = tmp("one.gpuscope");
	struct synth s;
	struct synth_kernel k = { "k", 0, 7, 1, 1, 0 };

	CHECK(synth_open(&s, p, 1, "./one") == 0);
	synth_kernel(&s, 1, 10 * US, 12 * US, 20 * US, 30 * US, &k);
	CHECK(synth_close(&s) == 0);
	run_edge(p, "GPU busy 100.0%");
}

static void test_unsorted_overlapping(void)
{
	const char *p = tmp("unsorted.gpuscope");
	struct synth s;
	struct synth_kernel k = { "sgemm_x", 0, 7, 2, 64, 0 };

	CHECK(synth_open(&s, p, 1, "python3 u.py") == 0);
	for (int i = 99; i >= 0; i--) {
		uint64_t t = 1000 * MS + (uint64_t)(i * 37 % 100) * MS;
		k.stream = 7 + (uint32_t)(i % 3);
		synth_kernel(&s, 1, t - 50 * US, t - 40 * US, t, t + 3 * MS, &k); /* overlapping */
		synth_copy(&s, 1, "cudaMemcpy", t + 2 * MS, t + 1 * MS, t + 2 * MS, t + 2 * MS, COPY_DTOH,
			   MEM_PAGEABLE, MEM_DEVICE, 0, 7); /* end before start, zero length */
		synth_api(&s, 1, "cudaStreamSynchronize", t + 5 * MS, t + 4 * MS);
		synth_osrt(&s, 1, OSRT_FUTEX, t + 3 * MS, t);
		synth_nvtx(&s, 1, "step", t, t + 1 * MS);
	}
	CHECK(synth_close(&s) == 0);
	run_edge(p, NULL);
}

static void test_huge_numbers(void)
{
	const char *p = tmp("huge.gpuscope");
	struct synth s;
	struct synth_kernel k = { "huge", 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, 0 };
	uint64_t big = UINT64_MAX / 2;

	CHECK(synth_open(&s, p, UINT32_MAX, "python3") == 0);
	synth_device(&s, 0, 0, UINT64_MAX, UINT32_MAX / 1000);
	synth_kernel(&s, UINT32_MAX, 1, 2, 3, big, &k);
	synth_kernel(&s, UINT32_MAX, big, big + 10, UINT64_MAX - 10, UINT64_MAX - 1, &k);
	synth_copy(&s, UINT32_MAX, "cudaMemcpy", 5, big, 6, big - 1, COPY_HTOD, MEM_PAGEABLE, MEM_DEVICE,
		   UINT64_MAX, 0);
	synth_memory(&s, 7, TRACE_MEM_ALLOC, 1, UINT64_MAX);
	synth_memory(&s, 8, TRACE_MEM_ALLOC, 2, UINT64_MAX);
	synth_metric(&s, 9, 0, "sm_clock_mhz", 1e300);
	synth_metric(&s, 10, 0, "temperature_c", -1e300);
	CHECK(synth_close(&s) == 0);
	run_edge(p, NULL);
}

/* docs/rules.md documents every rule and every threshold with its default. */
static void test_docs(void)
{
	char path[4096], *doc = NULL, line[512];
	size_t len = 0, cap = 0, n;
	const char *root = getenv("GS_SOURCE_DIR");
	FILE *f;

#ifdef GS_SOURCE_DIR_DEFAULT
	if (!root)
		root = GS_SOURCE_DIR_DEFAULT;
#endif
	snprintf(path, sizeof(path), "%s/docs/rules.md", root ? root : ".");
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	do {
		ALLOC_GROW(doc, len + 4096 + 1, cap);
		n = fread(doc + len, 1, 4096, f);
		len += n;
	} while (n);
	fclose(f);
	doc[len] = 0;
	for (size_t i = 0; i < az_nrules; i++) {
		const struct az_rule *r = &az_rules[i];
		snprintf(line, sizeof(line), "### `%s`", r->id);
		CHECK_CONTAINS(doc, line);
		for (size_t k = 0; r->params[k].key; k++) {
			snprintf(line, sizeof(line), "| `%s` | %.15g |", r->params[k].key, r->params[k].def);
			CHECK_CONTAINS(doc, line);
		}
	}
	free(doc);
}

/* kernel names as the findings show them (util kernel_label) */
static void test_kernel_label(void)
{
	char b[256], small[8];
	const char *bn = "void at::native::batch_norm_backward_kernel<c10::BFloat16, float, float, int>("
			 "torch::headeronly::detail::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul>, bool, float)";

	CHECK_STR(kernel_label(b, sizeof(b), "c_kernel", 100), "c_kernel");
	CHECK_STR(kernel_label(b, sizeof(b), "empty_kernel()", 100), "empty_kernel");
	CHECK_STR(kernel_label(b, sizeof(b), "void tmpl_kernel<float, 64>(float*, int)", 100), "tmpl_kernel<float, 64>");
	CHECK_STR(kernel_label(b, sizeof(b), bn, 100),
		  "at::native::batch_norm_backward_kernel<c10::BFloat16, float, float, int>");
	CHECK_STR(kernel_label(b, sizeof(b), bn, 50), "at::native::batch_norm_backward_kernel<...>");
	CHECK_STR(kernel_label(b, sizeof(b), bn, 30), "at::native::batch_norm_back...");
	/* an anonymous namespace is not a parameter list; only the last group is */
	CHECK_STR(kernel_label(b, sizeof(b), "void (anonymous namespace)::k<(anonymous namespace)::T>(int)", 100),
		  "(anonymous namespace)::k<(anonymous namespace)::T>");
	CHECK_STR(kernel_label(b, sizeof(b), "(f)", 100), "(f)");
	/* unbalanced brackets: cut, never read past the name */
	CHECK_STR(kernel_label(b, sizeof(b), "operator<<unbalanced_and_long_name_here", 20), "operator<<unbalan...");
	CHECK_STR(kernel_label(small, sizeof(small), "a_long_kernel_name", 100), "a_long_");
}

/*
 * The what-if replay.  Host code between launches, output written on the
 * launching thread, and copies of data that could stay resident each get
 * the replay's gain, with the transformation and both times in the
 * finding: gain = 1 - replayed / actual.
 */
static void check_replay_fields(const struct finding *f)
{
	CHECK(f->transform != NULL && *f->transform);
	CHECK(f->actual_s > 0);
	CHECK(f->replayed_s >= 0 && f->replayed_s <= f->actual_s);
	if (f->actual_s > 0)
		CHECK_NEAR(f->gain, 1 - f->replayed_s / f->actual_s, 1e-6);
}

static void test_host_bound(void)
{
	const char *p = tmp("host.gpuscope");
	struct model m;
	struct analyze_result r;
	const struct finding *f;
	char *out;

	check_case("host-bound", 0.01, "host code between launches");
	CHECK(find_case("host-bound")->write(p, 0) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "host-bound");
	CHECK(f != NULL);
	if (f)
		check_replay_fields(f);
	/* one cause, one finding: no launch-bound or gpu-starvation beside it */
	CHECK(find(&r, "launch-bound") == NULL);
	CHECK(find(&r, "gpu-starvation") == NULL);
	out = render(&m, &r);
	CHECK_CONTAINS(out, "replay: the launching thread's CPU time between launches cut to a CUDA graph replay's");
	CHECK_CONTAINS(out, "\"transform\":\"the launching thread's CPU time between launches cut to a CUDA graph replay's\"");
	CHECK_CONTAINS(out, "\"actual_s\":");
	free(out);
	analyze_result_release(&r);
	model_release(&m);
}

static void test_copy_bound(void)
{
	const char *p = tmp("copyb.gpuscope");
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	check_case("copy-bound", 0.01, "with no kernel beside them");
	CHECK(find_case("copy-bound")->write(p, 0) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	f = find(&r, "copy-bound");
	CHECK(f != NULL);
	if (f)
		check_replay_fields(f);
	analyze_result_release(&r);
	model_release(&m);
}

static void test_host_io(void)
{
	check_case("host-io", 0.02, "writing output (I/O)");
}

/* A cold start is a one-off: a note with its size, no gain; --start 0 counts it. */
static void test_one_off(void)
{
	const char *p = tmp("oneoff.gpuscope");
	struct model m;
	struct analyze_result r;
	struct analyze_opts o = { 0 };
	char *out;

	CHECK(find_case("one-off")->write(p, 0) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	for (size_t i = 0; i < r.n; i++)
		CHECK(r.findings[i].gain <= 0.05);
	CHECK(r.noneoffs == 1);
	if (r.noneoffs == 1) {
		CHECK_NEAR(r.oneoffs[0].duration_s, 0.600, 0.001);
		CHECK_CONTAINS(r.oneoffs[0].what, "before the first run of init_weights_kernel<float>");
	}
	out = render(&m, &r);
	CHECK_CONTAINS(out, "one-off: 600.");
	CHECK_CONTAINS(out, "\"one_offs\":[{\"what\":");
	free(out);
	analyze_result_release(&r);
	model_release(&m);
	/* the whole report asked for: the cold start is a gap like any other */
	model_init(&m);
	CHECK(model_load_report(&m, p) == 0);
	o.start = m.t_min;
	CHECK(analyze_run(&m, &o, &r) == 0);
	CHECK(r.noneoffs == 0);
	CHECK(r.n >= 1 && r.findings[0].gain > 0.2);
	analyze_result_release(&r);
	model_release(&m);
	/* the fixed twin has neither */
	CHECK(find_case("one-off")->write(p, 1) == 0);
	CHECK(analyze_file(p, NULL, &m, &r) == 0);
	CHECK(r.noneoffs == 0);
	for (size_t i = 0; i < r.n; i++)
		CHECK(r.findings[i].gain <= 0.05);
	analyze_result_release(&r);
	model_release(&m);
}

/* Replayed unchanged, the graph gives back every GPU's recorded span, for every case. */
static void test_replay_identity(void)
{
	const char *p = tmp("ident.gpuscope");
	struct analyze_opts o = { 0 };

	o.check_replay = 1;
	for (const struct synth_case *c = synth_cases; c->name; c++)
		for (int fixed = 0; fixed < 2; fixed++) {
			struct model m;
			struct analyze_result r;
			CHECK(c->write(p, fixed) == 0);
			CHECK(analyze_file(p, &o, &m, &r) == 0);
			if (r.replay_check_ns)
				gstest_fail(__FILE__, __LINE__, "case '%s' (%s): replay off by %lld ns", c->name,
					    fixed ? "fixed" : "broken", (long long)r.replay_check_ns);
			analyze_result_release(&r);
			model_release(&m);
		}
}

/*
 * Hardware counters decide where the name cannot: a matrix kernel whose
 * name says nothing of tensor cores, measured with its tensor pipes idle,
 * is reported; the same kernel measured busy is not (profile --kernel-metrics).
 */
static void build_counter_model(struct model *m, double tensor_pct, int with_counters)
{
	uint32_t name, key, metric;
	uint64_t t = 1000000000ull;
	struct trace_device *d;

	model_init(m);
	m->format = "gpuscope";
	m->has = MODEL_HAS_CUDA;
	name = model_intern(m, "matmul_tile(void*, int)");
	key = model_intern(m, "tensor_pipe_pct");
	metric = model_intern(m, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
	d = MODEL_PUSH(m->devices);
	d->id = 0;
	d->pid = 1;
	d->name_id = model_intern(m, "NVIDIA H100 80GB HBM3");
	d->sm_count = 132;
	d->cc_major = 9;
	for (int i = 0; i < 100; i++) {
		struct trace_kernel *k = MODEL_PUSH(m->kernels);
		k->start = t;
		k->end = t + 1000000;      /* 1 ms each, back to back: the GPU is busy */
		k->pid = 1;
		k->stream = 7;
		k->name_id = name;
		k->grid[0] = 1024;
		k->block[0] = 256;
		t += 1000000 + 1000;
	}
	if (with_counters) {
		struct trace_kmetric *x = MODEL_PUSH(m->kmetrics);
		x->time = 1000000000ull;
		x->pid = 1;
		x->kernel_id = name;
		x->key_id = key;
		x->metric_id = metric;
		x->value = tensor_pct;
		x->flags = TRACE_KM_VALID;
		m->has |= MODEL_HAS_KMETRICS;
	}
	model_finish(m);
}

static void test_tensor_counters(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	/* by name alone: unknown, no finding */
	build_counter_model(&m, 0, 0);
	CHECK(analyze_run(&m, NULL, &r) == 0);
	CHECK(find(&r, "tensor-cores-unused") == NULL);
	analyze_result_release(&r);
	model_release(&m);
	/* measured idle tensor pipes: the CUDA cores ran it */
	build_counter_model(&m, 0.02, 1);
	CHECK(analyze_run(&m, NULL, &r) == 0);
	f = find(&r, "tensor-cores-unused");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->evidence, "hardware counters decided 1 kernel names: 1 with the tensor pipes busy under 1%");
		CHECK(f->gain > 0.5);
	}
	analyze_result_release(&r);
	model_release(&m);
	/* measured busy tensor pipes: on the tensor cores */
	build_counter_model(&m, 45, 1);
	CHECK(analyze_run(&m, NULL, &r) == 0);
	CHECK(find(&r, "tensor-cores-unused") == NULL);
	analyze_result_release(&r);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_docs),
	GSTEST(test_dataloader),
	GSTEST(test_dataloader_cpu),
	GSTEST(test_launch_bound),
	GSTEST(test_sync),
	GSTEST(test_pageable),
	GSTEST(test_serial_copy),
	GSTEST(test_tensor_cores),
	GSTEST(test_underfill),
	GSTEST(test_alloc_churn),
	GSTEST(test_sync_upload),
	GSTEST(test_comm),
	GSTEST(test_memory),
	GSTEST(test_throttle),
	GSTEST(test_host_bound),
	GSTEST(test_copy_bound),
	GSTEST(test_host_io),
	GSTEST(test_one_off),
	GSTEST(test_replay_identity),
	GSTEST(test_tensor_counters),
	GSTEST(test_data_names),
	GSTEST(test_api_classes),
	GSTEST(test_attribution),
	GSTEST(test_nested_nvtx),
	GSTEST(test_occasional_stall),
	GSTEST(test_gpu_side_gap),
	GSTEST(test_set),
	GSTEST(test_window),
	GSTEST(test_nvtx_steps),
	GSTEST(test_empty),
	GSTEST(test_cpu_only),
	GSTEST(test_one_kernel),
	GSTEST(test_unsorted_overlapping),
	GSTEST(test_huge_numbers),
	GSTEST(test_kernel_label),
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
