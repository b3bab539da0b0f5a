/*
 * test_diff.c - verdicts and the noise rule, combining runs, baseline files.
 */
#include "gstest.h"
#include "diff/diff.h"

#include <stdlib.h>

static struct run_metric mk(const char *key, double v, double lo, double hi, int n, int dir, int kind)
{
	struct run_metric m;

	memset(&m, 0, sizeof(m));
	snprintf(m.key, sizeof(m.key), "%s", key);
	snprintf(m.label, sizeof(m.label), "%s", key);
	m.value = v;
	m.lo = lo;
	m.hi = hi;
	m.n = n;
	m.dir = dir;
	m.kind = kind;
	return m;
}

static int verdict_for(struct run_metric b, struct run_metric a)
{
	struct run_summary sb = { 0 }, sa = { 0 };
	struct diff_opts o;
	struct diff_result r;
	int v;

	diff_opts_init(&o);
	sb.m = &b;
	sb.n = 1;
	sa.m = &a;
	sa.n = 1;
	diff_compare(&sb, &sa, &o, &r);
	v = r.rows[0].verdict;
	diff_result_release(&r);
	return v;
}

static void test_single_run_threshold(void)
{
	/* one run a side: times move only beyond 5% */
	CHECK_EQ_I64(verdict_for(mk("t", 10, 10, 10, 1, DIR_LOWER, MK_TIME),
				 mk("t", 10.4, 10.4, 10.4, 1, DIR_LOWER, MK_TIME)), V_SAME);
	CHECK_EQ_I64(verdict_for(mk("t", 10, 10, 10, 1, DIR_LOWER, MK_TIME),
				 mk("t", 8, 8, 8, 1, DIR_LOWER, MK_TIME)), V_BETTER);
	CHECK_EQ_I64(verdict_for(mk("t", 10, 10, 10, 1, DIR_LOWER, MK_TIME),
				 mk("t", 12, 12, 12, 1, DIR_LOWER, MK_TIME)), V_WORSE);
	/* fractions move in points: 2 points */
	CHECK_EQ_I64(verdict_for(mk("b", 0.50, .5, .5, 1, DIR_HIGHER, MK_FRACTION),
				 mk("b", 0.515, .515, .515, 1, DIR_HIGHER, MK_FRACTION)), V_SAME);
	CHECK_EQ_I64(verdict_for(mk("b", 0.50, .5, .5, 1, DIR_HIGHER, MK_FRACTION),
				 mk("b", 0.60, .6, .6, 1, DIR_HIGHER, MK_FRACTION)), V_BETTER);
	/* no direction: changed, never better/worse */
	CHECK_EQ_I64(verdict_for(mk("n", 10, 10, 10, 1, DIR_NEUTRAL, MK_COUNT),
				 mk("n", 20, 20, 20, 1, DIR_NEUTRAL, MK_COUNT)), V_CHANGED);
}

static void test_overlapping_runs_are_noise(void)
{
	/* medians 20% apart, but the after median lies inside the before range */
	CHECK_EQ_I64(verdict_for(mk("t", 10, 7, 13, 3, DIR_LOWER, MK_TIME),
				 mk("t", 8, 7.5, 9, 3, DIR_LOWER, MK_TIME)), V_SAME);
	/* disjoint ranges and beyond the threshold: a change */
	CHECK_EQ_I64(verdict_for(mk("t", 10, 9.8, 10.3, 3, DIR_LOWER, MK_TIME),
				 mk("t", 8, 7.9, 8.2, 3, DIR_LOWER, MK_TIME)), V_BETTER);
}

static struct run_metric with_ci(struct run_metric m, double lo, double hi, int n)
{
	m.ci_lo = lo;
	m.ci_hi = hi;
	m.ci_n = n;
	return m;
}

static void test_single_run_step_ci(void)
{
	struct run_metric b = with_ci(mk("step_time_s", 5.9, 5.9, 5.9, 1, DIR_LOWER, MK_TIME), 1.8, 8.0, 9);

	/* 33% apart, but each median inside the other's 95% interval over its steps */
	CHECK_EQ_I64(verdict_for(b, with_ci(mk("step_time_s", 7.9, 7.9, 7.9, 1, DIR_LOWER, MK_TIME),
					    2.9, 8.1, 9)), V_SAME);
	/* the after median outside the before interval: a change */
	CHECK_EQ_I64(verdict_for(b, with_ci(mk("step_time_s", 9.0, 9.0, 9.0, 1, DIR_LOWER, MK_TIME),
					    5.0, 9.5, 9)), V_WORSE);
	/* tight intervals that do not overlap: a change */
	CHECK_EQ_I64(verdict_for(with_ci(mk("step_time_s", 7.6, 7.6, 7.6, 1, DIR_LOWER, MK_TIME), 7.4, 7.8, 9),
				 with_ci(mk("step_time_s", 5.9, 5.9, 5.9, 1, DIR_LOWER, MK_TIME), 5.8, 6.0, 9)),
		     V_BETTER);
	/* one side without an interval: the plain 5% rule */
	CHECK_EQ_I64(verdict_for(mk("step_time_s", 5.9, 5.9, 5.9, 1, DIR_LOWER, MK_TIME),
				 with_ci(mk("step_time_s", 7.9, 7.9, 7.9, 1, DIR_LOWER, MK_TIME), 2.9, 8.1, 9)),
		     V_WORSE);
}

static void test_combine_medians(void)
{
	struct run_summary runs[3], out;

	memset(runs, 0, sizeof(runs));
	for (int i = 0; i < 3; i++) {
		struct run_metric m = mk("step_time_s", i == 1 ? 30 : 10 + i, 0, 0, 1, DIR_LOWER, MK_TIME);
		runs[i].source = "x";
		runs[i].m = xmalloc(sizeof(m));
		runs[i].m[0] = m;
		runs[i].n = 1;
	}
	run_summary_combine(runs, 3, &out);
	CHECK_EQ_U64(out.n, 1);
	CHECK_NEAR(out.m[0].value, 12, 1e-9); /* median of 10, 30, 12 */
	CHECK_NEAR(out.m[0].lo, 10, 1e-9);
	CHECK_NEAR(out.m[0].hi, 30, 1e-9);
	CHECK_EQ_I64(out.m[0].n, 3);
	CHECK_EQ_I64(out.runs, 3);
	for (int i = 0; i < 3; i++)
		free(runs[i].m);
	run_summary_release(&out);
}

static void test_baseline_roundtrip(void)
{
	struct run_summary s = { 0 }, t;
	struct run_metric m = mk("kernel_s:my\tkernel", 0.25, 0.2, 0.3, 2, DIR_LOWER, MK_TIME);
	struct run_finding f = { "out-of-memory", "Out of memory", 0, FINDING_FATAL | FINDING_NO_TIME };
	char path[600];

	snprintf(path, sizeof(path), "%s/b.baseline", gstest_tmpdir());
	s.source = "base";
	s.runs = 2;
	s.m = &m;
	s.n = 1;
	s.f = &f;
	s.nf = 1;
	CHECK(run_summary_save(&s, path) == 0);
	CHECK(run_summary_load(&t, path) == 0);
	CHECK_EQ_U64(t.n, 1);
	CHECK_STR(t.m[0].key, "kernel_s:my kernel"); /* tabs cannot break the format */
	CHECK_NEAR(t.m[0].value, 0.25, 1e-15);
	CHECK_NEAR(t.m[0].hi, 0.3, 1e-15);
	CHECK_EQ_I64(t.m[0].dir, DIR_LOWER);
	CHECK_EQ_U64(t.nf, 1);
	CHECK_STR(t.f[0].id, "out-of-memory");
	CHECK_EQ_U64(t.f[0].flags, FINDING_FATAL | FINDING_NO_TIME); /* a 0-gain finding that still counts */
	CHECK(run_finding_counts(&t.f[0], 0.05));
	CHECK_EQ_I64(t.runs, 2);
	run_summary_release(&t);
}

/* A baseline of an older version: findings without the flags field read as 0. */
static void test_baseline_old_finding(void)
{
	char path[600];
	FILE *f;
	struct run_summary t;

	snprintf(path, sizeof(path), "%s/old.baseline", gstest_tmpdir());
	f = fopen(path, "w");
	fputs("gpuscope-baseline\t1\nsource\tx\nruns\t1\nfinding\tlaunch-bound\t0.12\tLaunch-bound\n", f);
	fclose(f);
	CHECK(run_summary_load(&t, path) == 0);
	CHECK_EQ_U64(t.nf, 1);
	CHECK_NEAR(t.f[0].gain, 0.12, 1e-12);
	CHECK_EQ_U64(t.f[0].flags, 0);
	CHECK(!run_finding_counts(&t.f[0], 0.2));
	run_summary_release(&t);
}

static void test_baseline_rejects_garbage(void)
{
	char path[600];
	FILE *f;
	struct run_summary t;

	snprintf(path, sizeof(path), "%s/bad.baseline", gstest_tmpdir());
	f = fopen(path, "w");
	fputs("gpuscope-baseline\t1\nmetric\tx\t-1\t99\tnan\t0\t0\t1\tx\n", f);
	fclose(f);
	set_error_quiet(1);
	CHECK(run_summary_load(&t, path) < 0);
	f = fopen(path, "w");
	fputs("hello\n", f);
	fclose(f);
	CHECK(run_summary_load(&t, path) < 0);
	set_error_quiet(0);
}

static void test_summary_of_steps(void)
{
	char path[600], cmd[1400];
	struct run_summary s;
	struct diff_opts o;
	const struct run_metric *m;

	snprintf(path, sizeof(path), "%s/s.gpuscope", gstest_tmpdir());
	snprintf(cmd, sizeof(cmd), "%s/tests/mk_steps '%s' 20 10000 4000 4 1", getenv("GS_BUILD_DIR"),
		 path);
	CHECK(system(cmd) == 0);
	diff_opts_init(&o);
	CHECK(run_summarize_path(path, &o, &s) == 0);
	CHECK_STR(s.step_source, "nvtx range 'step'");
	m = run_metric_find(&s, "step_time_s");
	CHECK(m != NULL);
	if (m)
		CHECK_NEAR(m->value, 0.010, 1e-9);
	m = run_metric_find(&s, "gpu_busy");
	CHECK(m != NULL);
	if (m)
		CHECK_NEAR(m->value, 0.4, 1e-6);
	m = run_metric_find(&s, "kernels_per_step");
	CHECK(m && m->value == 4);
	m = run_metric_find(&s, "launches_per_step");
	CHECK(m && m->value == 4);
	m = run_metric_find(&s, "syncs_per_step");
	CHECK(m && m->value == 1);
	m = run_metric_find(&s, "copy_HtoD_bytes_per_step");
	CHECK(m && m->value == 4 << 20);
	m = run_metric_find(&s, "pageable_bytes_per_step");
	CHECK(m && m->value == 4 << 20);
	run_summary_release(&s);
}

/* A kernel row as summary.c makes it: key "kernel_s:NAME", spread over @n runs. */
static struct run_metric mk_kernel(const char *name, double v, int n)
{
	struct run_metric m = mk("x", v, v * 0.9, v * 1.1, n, DIR_LOWER, MK_TIME);

	snprintf(m.key, sizeof(m.key), "kernel_s:%.80s", name);
	snprintf(m.label, sizeof(m.label), "kernel %.100s per step", name);
	return m;
}

static void test_kernel_row_names(void)
{
	static const char *const names[] = {
		"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
		"void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(float const*, long)",
		"void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::Half, float>(int, c10::Half*)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float*)",
	};
	struct run_metric b[5], a[5];
	struct run_summary sb = { 0 }, sa = { 0 };
	struct diff_opts o;
	struct diff_result r;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, nlines = 0;
	long verdict_col = -1;
	char seen[8][128];
	FILE *f;

	for (int i = 0; i < 4; i++) {
		b[i] = mk_kernel(names[i], 0.001 * (i + 1), 3);
		a[i] = mk_kernel(names[i], 0.0012 * (i + 1), 3);
	}
	b[4] = mk("step_time_s", 0.5, 0.45, 0.55, 3, DIR_LOWER, MK_TIME);
	a[4] = mk("step_time_s", 0.4, 0.35, 0.45, 3, DIR_LOWER, MK_TIME);
	diff_opts_init(&o);
	sb.m = b;
	sb.n = 5;
	sb.runs = 3;
	sb.source = "before";
	sa.m = a;
	sa.n = 5;
	sa.runs = 3;
	sa.source = "after";
	diff_compare(&sb, &sa, &o, &r);
	f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	CHECK(diff_print(f, "text", &sb, &sa, &r) == 0);
	fclose(f);
	if (getenv("GS_TEST_VERBOSE"))
		fputs(buf, stderr);
	/* the base name tells the pool kernels apart, where 40 characters read the same */
	CHECK_CONTAINS(buf, "kernel max_pool_backward_nchw per step ");
	CHECK_CONTAINS(buf, "kernel vectorized_elementwise_kernel per step ");
	/* two instantiations of one base name: with their template arguments */
	CHECK(strstr(buf, "kernel max_pool_forward_nchw per step ") == NULL);
	CHECK_CONTAINS(buf, "kernel max_pool_forward_nchw<float, float> per step ");
	CHECK_CONTAINS(buf, "kernel max_pool_forward_nchw<c10::Half, float> per step ");
	/* every table line (header and rows) puts its verdict in the same column, rows read differently */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *v = NULL;
		long col;
		if (strncmp(line, "metric ", 7) && strncmp(line, "kernel ", 7) && strncmp(line, "step_time_s", 11))
			continue;
		v = strrchr(line, ' ');
		CHECK(v != NULL);
		col = (long)(v - line);
		if (verdict_col < 0)
			verdict_col = col;
		CHECK_EQ_I64(col, verdict_col);
		if (nlines < 8) {
			snprintf(seen[nlines], sizeof(seen[nlines]), "%.*s", (int)(strstr(line, "  ") ? strstr(line, "  ") - line : 40), line);
			for (size_t k = 0; k < nlines; k++)
				CHECK(strcmp(seen[k], seen[nlines]) != 0);
			nlines++;
		}
	}
	CHECK_EQ_I64((long long)nlines, 6); /* header + 5 rows */
	free(buf);
	diff_result_release(&r);
}

static const struct gstest tests[] = {
	GSTEST(test_single_run_threshold),
	GSTEST(test_overlapping_runs_are_noise),
	GSTEST(test_single_run_step_ci),
	GSTEST(test_combine_medians),
	GSTEST(test_baseline_roundtrip),
	GSTEST(test_baseline_old_finding),
	GSTEST(test_baseline_rejects_garbage),
	GSTEST(test_summary_of_steps),
	GSTEST(test_kernel_row_names),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
