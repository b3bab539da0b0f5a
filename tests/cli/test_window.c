/*
 * test_window.c - windowed loads (issue 19, item 7): `analyze --start/--end`
 * loads only the rows near its window (load_opts.windowed) and must find
 * what an analysis of the same window over the whole report finds.
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "diff/diff.h"
#include "import/import.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>

/* analyze_print_json() of @m over [t_min + s, t_min + e] (or --nvtx @nvtx), GPU busy over the whole run left out. */
static char *analyze_json_nvtx(struct model *m, uint64_t s, uint64_t e, const char *nvtx)
{
	struct analyze_opts o;
	struct analyze_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(&o, 0, sizeof(o));
	if (nvtx) {
		o.nvtx = nvtx;
	} else {
		o.start = m->t_min + s;
		o.end = m->t_min + e;
	}
	if (analyze_run(m, &o, &r) < 0)
		return NULL;
	/* a whole-run figure: the windowed path prints it as unknown (cmd_analyze.c) */
	r.summary.run_gpu_busy = -1;
	f = open_memstream(&buf, &len);
	if (!f || analyze_print_json(f, m, &r) < 0)
		len = 0;
	if (f)
		fclose(f);
	analyze_result_release(&r);
	return buf;
}

static char *analyze_json(struct model *m, uint64_t s, uint64_t e)
{
	return analyze_json_nvtx(m, s, e, NULL);
}

/* Both paths on @rel over [s, e] ns from its start; the windowed one stores fewer rows when @fewer. */
static void same_findings(const char *rel, uint64_t s, uint64_t e, int fewer)
{
	struct model whole, win;
	struct load_opts lo = { 0 };
	char *a, *b;

	model_init(&whole);
	model_init(&win);
	CHECK(load_input(&whole, gstest_data(rel)) == 0);
	lo.windowed = 1;
	lo.win_start = s;
	lo.win_end = e;
	lo.win_margin = LOAD_WINDOW_MARGIN_NS;
	lo.win_keep = 1u << TRACE_EV_MEMORY; /* as cmd_analyze.c */
	CHECK(load_input_opts(&win, gstest_data(rel), &lo) == 0);
	CHECK(lo.win_loaded == 1);
	/* the windowed model keeps the report's span: times count from its start */
	CHECK_EQ_U64(win.t_min, whole.t_min);
	CHECK_EQ_U64(win.t_max, whole.t_max);
	if (fewer)
		CHECK(win.events < whole.events);
	a = analyze_json(&whole, s, e);
	b = analyze_json(&win, s, e);
	CHECK(a && b);
	if (a && b) {
		CHECK_CONTAINS(a, "\"findings\":[{");
		CHECK_STR(b, a);
	}
	free(a);
	free(b);
	model_release(&whole);
	model_release(&win);
}

#define S 1000000000ull

/*
 * Windows inside each run's GPU work (its kernels run from the times in
 * the comments on), so that the analyses have findings to compare.
 */
static void test_window_resnet(void)
{
	/* ResNet-50 steps on an H200: kernels from 6.8 s to 8.3 s of 9.2 s; allocations from 6.8 s */
	same_findings("cuda/h200_resnet50.gpuscope", 7 * S, 75 * S / 10, 1);
	same_findings("cuda/h200_resnet50.gpuscope", 75 * S / 10, 83 * S / 10, 1);
	same_findings("cuda/h200_resnet50.gpuscope", 69 * S / 10, 72 * S / 10, 1);
}

static void test_window_torch(void)
{
	/* a PyTorch step loop: kernels from 3.36 s to 3.56 s */
	same_findings("cuda/h200_torch.gpuscope", 34 * S / 10, 35 * S / 10, 1);
	/* the launch-bound zoo case: kernels from 3.33 s to 3.38 s */
	same_findings("zoo/launch-bound.broken.gpuscope", 334 * S / 100, 337 * S / 100, 1);
}

static void test_window_zoo(void)
{
	/* a two-rank communication wait: kernels from 5.49 s to 5.84 s */
	same_findings("zoo/comm-wait.broken.gpuscope", 55 * S / 10, 57 * S / 10, 1);
	same_findings("zoo/comm-wait.broken.gpuscope", 57 * S / 10, 585 * S / 100, 1);
	/* a dataloader-bound run: kernels from 3.6 s to 9.2 s */
	same_findings("zoo/dataloader.broken.gpuscope", 87 * S / 10, 92 * S / 10, 1);
}

static void test_window_memory(void)
{
	/* PyTorch allocator reports: a leak (its steps from 9.34 s) and an out-of-memory */
	same_findings("torchmem/h200_mem-leak.broken.gpuscope", 93 * S / 10, 102 * S / 10, 1);
	same_findings("torchmem/h200_mem-oom.broken.gpuscope", 5 * S, 11 * S, 1);
}

/*
 * diff --start/--end: each run summarised on its window loaded alone is
 * the summary of the whole load clipped to the same window.
 */
static void same_summary(const char *rel, uint64_t s, uint64_t e)
{
	struct diff_opts o;
	struct run_summary a, b;
	struct model m;
	uint64_t lo, hi;

	diff_opts_init(&o);
	o.windowed = 1;
	o.start = s;
	o.end = e;
	CHECK(run_summarize_path(gstest_data(rel), &o, &b) == 0);
	model_init(&m);
	CHECK(load_input(&m, gstest_data(rel)) == 0);
	lo = m.t_min + s;
	hi = m.t_min + e;
	model_clip(&m, lo, hi);
	m.t_min = m.t_min < lo ? lo : m.t_min;
	m.t_max = m.t_max > hi ? hi : m.t_max;
	diff_opts_init(&o);
	CHECK(run_summarize_model(&m, gstest_data(rel), &o, &a) == 0);
	CHECK_EQ_U64(b.n, a.n);
	CHECK_EQ_U64(b.nf, a.nf);
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		CHECK_STR(b.m[i].key, a.m[i].key);
		CHECK(b.m[i].value == a.m[i].value || (isnan(a.m[i].value) && isnan(b.m[i].value)));
	}
	for (size_t i = 0; i < a.nf && i < b.nf; i++)
		CHECK_STR(b.f[i].id, a.f[i].id);
	/* the wall time is the window's */
	for (size_t i = 0; i < b.n; i++)
		if (!strcmp(b.m[i].key, "wall_s"))
			CHECK_NEAR(b.m[i].value, (double)(e - s) / 1e9, 1e-9);
	run_summary_release(&a);
	run_summary_release(&b);
	model_release(&m);
}

static void test_window_diff(void)
{
	same_summary("zoo/comm-wait.broken.gpuscope", 5 * S, 59 * S / 10);
	same_summary("zoo/comm-wait.fixed.gpuscope", 5 * S, 59 * S / 10);
	same_summary("cuda/h200_resnet50.gpuscope", 7 * S, 8 * S);
}

/* analyze --nvtx RANGE: the instances' extent (load_nvtx_extent) loaded alone, as cmd_analyze.c does */
static void same_findings_nvtx(const char *rel, const char *range)
{
	struct model whole, win;
	struct load_opts lo = { 0 };
	uint64_t a0, b0;
	char *a, *b;

	model_init(&whole);
	model_init(&win);
	CHECK(load_input(&whole, gstest_data(rel)) == 0);
	CHECK(load_nvtx_extent(gstest_data(rel), range, &a0, &b0) == 1);
	CHECK(a0 > whole.t_min && b0 <= whole.t_max);
	lo.windowed = lo.win_absolute = 1;
	lo.win_start = a0;
	lo.win_end = b0;
	lo.win_margin = LOAD_WINDOW_MARGIN_NS;
	lo.win_keep = 1u << TRACE_EV_MEMORY;
	CHECK(load_input_opts(&win, gstest_data(rel), &lo) == 0);
	CHECK(lo.win_loaded == 1);
	CHECK(win.events < whole.events);
	CHECK_EQ_U64(win.t_min, whole.t_min);
	a = analyze_json_nvtx(&whole, 0, 0, range);
	b = analyze_json_nvtx(&win, 0, 0, range);
	CHECK(a && b);
	if (a && b) {
		CHECK_CONTAINS(a, "\"findings\":[{");
		CHECK_STR(b, a);
	}
	free(a);
	free(b);
	model_release(&whole);
	model_release(&win);
}

static void test_window_nvtx(void)
{
	uint64_t lo, hi;

	same_findings_nvtx("zoo/dataloader.broken.gpuscope", "step");
	same_findings_nvtx("zoo/comm-wait.broken.gpuscope", "ncclAllReduce");
	same_findings_nvtx("zoo/host-bound.broken.gpuscope", "step");
	CHECK(load_nvtx_extent(gstest_data("zoo/dataloader.broken.gpuscope"), "no-such-range", &lo, &hi) == 0);
	CHECK(load_nvtx_extent(gstest_data("import/simple_add.json.gz"), "step", &lo, &hi) == 0);
}

static void test_window_other_format(void)
{
	/* a Kineto trace loads whole: the window is the caller's to apply */
	struct model m;
	struct load_opts lo = { 0 };

	model_init(&m);
	lo.windowed = 1;
	lo.win_start = 0;
	lo.win_end = S / 1000;
	CHECK(load_input_opts(&m, gstest_data("import/simple_add.json.gz"), &lo) == 0);
	CHECK(lo.win_loaded == 0);
	CHECK(m.kernels.n > 0);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_window_resnet),
	GSTEST(test_window_torch),
	GSTEST(test_window_zoo),
	GSTEST(test_window_memory),
	GSTEST(test_window_diff),
	GSTEST(test_window_nvtx),
	GSTEST(test_window_other_format),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
