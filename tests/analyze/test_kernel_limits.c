/*
 * test_kernel_limits.c - the theoretical occupancy of a launch, and the
 * kernel-limits rule on a real report recorded with hardware counters.
 *
 * The occupancy cases are launch configurations from real Kineto traces
 * (shared/validation: V100, RTX 2080 Ti, A100 and H100 runs recorded by
 * other people) with a grid large enough to fill every SM, where Kineto's
 * "est. achieved occupancy %" (CUPTI's occupancy calculation) is the
 * theoretical occupancy; each expected value below is the one Kineto wrote.
 * Over all such kernels of those traces (16,092) the arithmetic agrees
 * within 1 point on every kernel where Kineto's estimate is not 0 (Kineto
 * writes 0 for kernels that opt in to more than 48 KB of shared memory).
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "import/import.h"
#include "model/occupancy.h"

#include <string.h>

struct occ_case {
	uint32_t major, minor, threads, regs, smem;
	double pct;                /* Kineto's est. achieved occupancy % */
	enum occ_limit limit;
};

static const struct occ_case cases[] = {
	{ 7, 0, 256, 32, 9216, 100, OCC_LIMIT_NONE },
	{ 8, 0, 128, 28, 4096, 100, OCC_LIMIT_NONE },
	{ 9, 0, 32, 64, 2816, 50, OCC_LIMIT_BLOCKS },      /* 32 blocks of one warp: half the 64 slots */
	{ 8, 0, 512, 64, 35904, 50, OCC_LIMIT_REGISTERS },
	{ 8, 0, 512, 40, 144, 75, OCC_LIMIT_REGISTERS },
	{ 7, 0, 128, 34, 0, 75, OCC_LIMIT_REGISTERS },
	{ 7, 5, 512, 45, 26768, 100, OCC_LIMIT_NONE },
	{ 7, 5, 256, 122, 10496, 50, OCC_LIMIT_REGISTERS },
	{ 8, 0, 512, 40, 26768, 75, OCC_LIMIT_REGISTERS },
	{ 7, 5, 64, 126, 8704, 43.75, OCC_LIMIT_SMEM },    /* 7 blocks by shared memory, 8 by registers */
};

static void test_occupancy_matches_kineto(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct occ_case *k = &cases[i];
		struct occ_result r;
		CHECK(occupancy_compute(k->major, k->minor, k->threads, k->regs, k->smem, &r) == 0);
		CHECK_NEAR(r.pct, k->pct, 0.01);
		CHECK_EQ_U64(r.limit, k->limit);
	}
}

static void test_occupancy_unknown(void)
{
	struct occ_result r;

	CHECK(occupancy_compute(12, 0, 256, 32, 0, &r) == -1); /* not in the table: unknown, not guessed */
	CHECK(occupancy_compute(9, 0, 0, 32, 0, &r) == -1);    /* no launch configuration */
	CHECK(occupancy_compute(9, 0, 256, 32, 300 * 1024, &r) == 0);
	CHECK_EQ_U64(r.blocks_per_sm, 0);                      /* more shared memory than an SM has */
	CHECK_EQ_U64(r.limit, OCC_LIMIT_SMEM);
}

static const struct finding *find(const struct analyze_result *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->findings[i].id, id))
			return &r->findings[i];
	return NULL;
}

/*
 * h200_kmetrics.gpuscope: five kernels profiled on an H200 with
 * --kernel-metrics=full (tests/cupti/t_kmetrics_reports.sh checks the
 * counters themselves).  copy_f4 and axpy_f32 stream memory, sgemm_fp32
 * keeps the FMA pipes busy, wmma_gemm_bf16 (a naive WMMA GEMM) keeps
 * neither busy and waits on global loads.
 */
static void test_rule_on_h200_counters(void)
{
	struct model m;
	struct analyze_result r;
	const char *set[] = { "kernel-limits.min_gain=0", NULL };
	struct analyze_opts o = { .set = set };
	const struct finding *f;

	model_init(&m);
	CHECK(load_input(&m, gstest_data("cuda/h200_kmetrics.gpuscope")) == 0);
	CHECK(analyze_run(&m, &o, &r) == 0);
	f = find(&r, "kernel-bound");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->evidence, "copy_f4: memory-bound");
		CHECK_CONTAINS(f->evidence, "axpy_f32: memory-bound");
		CHECK_CONTAINS(f->evidence, "sgemm_fp32: compute-bound");
		CHECK_CONTAINS(f->evidence, "wmma_gemm_bf16: latency-bound");
		/* 128 threads, 64 registers: 8 blocks by registers (32 of 64 warps) */
		CHECK_CONTAINS(f->evidence, "theoretical occupancy 50% (8 blocks of 128 threads per SM, 64 registers/thread");
		CHECK(f->gain == 0);
	}
	f = find(&r, "latency-bound-kernel");
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->evidence, "wmma_gemm_bf16");
		CHECK_CONTAINS(f->evidence, "top stall long_scoreboard");
		CHECK_CONTAINS(f->recommendation, "registers limit it to 50% occupancy");
		CHECK(!strstr(f->evidence, "copy_f4"));
		CHECK(f->gain > 0 && f->gain < 0.01); /* the GPU is busy 0.3% of the run */
	}
	analyze_result_release(&r);
	/* without the override the latency-bound gain is under min_gain: no finding */
	o.set = NULL;
	CHECK(analyze_run(&m, &o, &r) == 0);
	CHECK(find(&r, "latency-bound-kernel") == NULL);
	CHECK(find(&r, "kernel-bound") != NULL);
	analyze_result_release(&r);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_occupancy_matches_kineto),
	GSTEST(test_occupancy_unknown),
	GSTEST(test_rule_on_h200_counters),
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
