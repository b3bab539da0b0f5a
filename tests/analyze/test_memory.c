/*
 * test_memory.c - memory-pressure's growth check compares like with like:
 * live bytes at the end of each step must rise step after step, and a
 * window whose allocations are all freed before it ends shows no growth.
 *
 * Each report: a Python process, one H200-sized device (140 GiB, so never
 * "nearly full"), 20 steps of 10 ms with one 8 ms kernel each; every step
 * allocates a 1 GiB buffer it keeps and a 2 GiB scratch buffer it frees
 * while its kernel still runs.
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "synth.h"

#include <stdio.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define T0 (1000 * MS)
#define PID 4242
#define NSTEPS 20
#define GIB (1ull << 30)

static const struct synth_kernel K = { "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", 0, 7, 264, 256, 0 };

enum shape {
	KEPT,          /* every step's 1 GiB buffer is kept: growth */
	FREED,         /* the kept buffers are all freed in the last step, before the window ends */
	KEPT_NO_STEPS, /* as KEPT, without NVTX step ranges (equally spaced points) */
};

static const char *tmp(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", gstest_tmpdir(), name);
	return buf[k];
}

static int write_report(const char *path, enum shape shape)
{
	struct synth s;
	uint64_t kept = 0x7f0000000000ull, scratch = 0x7e0000000000ull;

	if (synth_open(&s, path, PID, "python3 train.py") < 0)
		return -1;
	synth_thread(&s, PID, "python3");
	synth_device(&s, 0, 132, 140 * GIB, 1980);
	for (int i = 0; i < NSTEPS; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", i);
		if (shape != KEPT_NO_STEPS)
			synth_nvtx(&s, PID, name, t, t + 10 * MS);
		synth_memory(&s, t + 100 * US, TRACE_MEM_ALLOC, kept + (uint64_t)i * 4 * GIB, GIB);
		synth_memory(&s, t + 200 * US, TRACE_MEM_ALLOC, scratch + (uint64_t)i * 4 * GIB, 2 * GIB);
		synth_kernel(&s, PID, t + 300 * US, t + 310 * US, t + 1 * MS, t + 9 * MS, &K);
		synth_memory(&s, t + 8 * MS + 500 * US, TRACE_MEM_FREE, scratch + (uint64_t)i * 4 * GIB, 0);
		if (shape == FREED && i == NSTEPS - 1)
			for (int j = 0; j < NSTEPS; j++)
				synth_memory(&s, t + 500 * US, TRACE_MEM_FREE, kept + (uint64_t)j * 4 * GIB, 0);
	}
	return synth_close(&s);
}

/* The memory-pressure finding titled @title in @r, or NULL. */
static const struct finding *find_titled(const struct analyze_result *r, const char *title)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->findings[i].id, "memory-pressure") && strstr(r->findings[i].title, title))
			return &r->findings[i];
	return NULL;
}

static void run(enum shape shape, struct model *m, struct analyze_result *r)
{
	static const struct analyze_opts none;
	const char *p = tmp("mem.gpuscope");

	CHECK_EQ_I64(write_report(p, shape), 0);
	model_init(m);
	CHECK_EQ_I64(model_load_report(m, p), 0);
	CHECK_EQ_I64(analyze_run(m, &none, r), 0);
}

/* Kept buffers: 1 GiB more at the end of every step; the finding says so, from the steps. */
static void test_growth_kept(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(KEPT, &m, &r);
	f = find_titled(&r, "grows step after step");
	CHECK(f != NULL);
	if (f) {
		/* the first step is warm-up (left out): 18 changes between the 19 step ends, all rising */
		/*
		 * The first step is warm-up (left out) and the window ends with the
		 * last kernel, before the last step does: the ends of steps 1..18,
		 * 17 changes, all rising, 1 GiB kept per step (2 GiB after step 1).
		 */
		CHECK_CONTAINS(f->evidence, "grew from 2.0 GiB to 19.0 GiB, rising in 17 of 17 steps "
				"(live bytes at the end of each NVTX step)");
		/* at the start: step 0's buffer; at the end (the last kernel's end): all 20 */
		CHECK_CONTAINS(f->evidence, "live at the window's start 1.0 GiB, at its end 20.0 GiB");
		CHECK_EQ_U64(f->gain * 1000, 0);
	}
	CHECK(find_titled(&r, "nearly full") == NULL);
	analyze_result_release(&r);
	model_release(&m);
}

/* The same buffers, all freed in the last step: at the window's end live bytes are back: no growth. */
static void test_growth_freed(void)
{
	struct model m;
	struct analyze_result r;

	run(FREED, &m, &r);
	CHECK(m.memory.n == 3 * NSTEPS + NSTEPS);
	CHECK(find_titled(&r, "grows") == NULL);
	analyze_result_release(&r);
	model_release(&m);
}

/* Without NVTX steps the points are the ends of ten equal parts of the window. */
static void test_growth_no_steps(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(KEPT_NO_STEPS, &m, &r);
	f = find_titled(&r, "grows step after step");
	CHECK(f != NULL);
	if (f)
		CHECK_CONTAINS(f->evidence, "of 9 equal parts of the window");
	analyze_result_release(&r);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_growth_kept),
	GSTEST(test_growth_freed),
	GSTEST(test_growth_no_steps),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
