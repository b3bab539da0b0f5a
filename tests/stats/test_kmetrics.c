/*
 * test_kmetrics.c - per-kernel hardware counters (TRACE_EV_KMETRIC) from the
 * report through the model to `stats --report cuda_kern_metrics`, on a
 * report built here with values chosen by hand:
 *
 *   kernel "gemm(float*)"  correlation 7, 1000 ns long; one profiled
 *     instance, 3 passes, 5000 ns of host time (5.0x): SM 81.5 %, DRAM
 *     12.25 %, tensor HMMA unavailable on the "GPU" (never 0);
 *   kernel "copy(float*)"  correlation 9, 2000 ns long; one instance whose
 *     profiling failed: every value unknown, cost 0 (not stated).
 */
#include "gstest.h"
#include "model/model.h"
#include "stats/stats.h"
#include "trace/trace.h"
#include "util/util.h"

#include <string.h>

static void add_km(struct trace_builder *b, uint64_t time, uint32_t corr, const char *kernel,
		   const char *key, const char *metric, double value, unsigned flags, uint64_t cost,
		   unsigned passes)
{
	struct trace_kmetric k;

	memset(&k, 0, sizeof(k));
	k.time = time;
	k.cost_ns = cost;
	k.value = value;
	k.pid = 42;
	k.tid = 42;
	k.correlation = corr;
	k.device = 0;
	k.kernel_id = trace_builder_str(b, kernel);
	k.key_id = trace_builder_str(b, key);
	k.metric_id = trace_builder_str(b, metric);
	k.passes = (uint16_t)passes;
	k.flags = (uint16_t)flags;
	trace_builder_add(b, TRACE_EV_KMETRIC, &k, sizeof(k));
}

static void add_kernel(struct trace_builder *b, uint64_t start, uint64_t end, uint32_t corr,
		       const char *name)
{
	struct trace_kernel k;

	memset(&k, 0, sizeof(k));
	k.start = start;
	k.end = end;
	k.pid = 42;
	k.correlation = corr;
	k.name_id = trace_builder_str(b, name);
	k.grid[0] = k.block[0] = 1;
	trace_builder_add(b, TRACE_EV_KERNEL, &k, sizeof(k));
}

static const char *write_report(void)
{
	static char path[512];
	struct trace_builder b;
	struct trace_process p;

	snprintf(path, sizeof(path), "%s/kmetrics.gpuscope", gstest_tmpdir());
	CHECK(trace_builder_open(&b, path, 0, 0) == 0);
	memset(&p, 0, sizeof(p));
	p.pid = 42;
	p.start_mono_ns = 1000;
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	add_kernel(&b, 10000, 11000, 7, "gemm(float*)");
	add_kernel(&b, 20000, 22000, 9, "copy(float*)");
	add_km(&b, 9000, 7, "gemm(float*)", "duration_ns", "gpu__time_duration.sum", 1100,
	       TRACE_KM_VALID, 5000, 3);
	add_km(&b, 9000, 7, "gemm(float*)", "sm_throughput_pct",
	       "sm__throughput.avg.pct_of_peak_sustained_elapsed", 81.5, TRACE_KM_VALID, 5000, 3);
	add_km(&b, 9000, 7, "gemm(float*)", "dram_throughput_pct",
	       "dram__throughput.avg.pct_of_peak_sustained_elapsed", 12.25, TRACE_KM_VALID, 5000, 3);
	add_km(&b, 9000, 7, "gemm(float*)", "tensor_hmma_pct", "sm__pipe_tensor_op_hmma_x|other", 0,
	       TRACE_KM_UNAVAILABLE, 5000, 3);
	add_km(&b, 19000, 9, "copy(float*)", "sm_throughput_pct",
	       "sm__throughput.avg.pct_of_peak_sustained_elapsed", 0, TRACE_KM_FAILED, 0, 3);
	add_km(&b, 19000, 9, "copy(float*)", "dram_throughput_pct",
	       "dram__throughput.avg.pct_of_peak_sustained_elapsed", 0, TRACE_KM_FAILED, 0, 3);
	CHECK(trace_builder_close(&b, 0) == 0);
	return path;
}

static void test_record_layout(void)
{
	/* docs/report-format.md, "kmetric": the byte layout */
	CHECK_EQ_U64(sizeof(struct trace_kmetric), 64);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, value), 16);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, pid), 24);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, correlation), 32);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, kernel_id), 40);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, instance), 52);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, passes), 56);
	CHECK_EQ_U64(offsetof(struct trace_kmetric, flags), 58);
	CHECK_EQ_U64(trace_record_size(TRACE_EV_KMETRIC), 64);
	CHECK_STR(trace_event_name(TRACE_EV_KMETRIC), "kmetric");
	CHECK(trace_event_type_by_name("kmetric") == TRACE_EV_KMETRIC);
}

static void test_model_loads_kmetrics(void)
{
	struct model m;

	model_init(&m);
	CHECK(model_load_report(&m, write_report()) == 0);
	CHECK_EQ_U64(m.kmetrics.n, 6);
	CHECK(m.has & MODEL_HAS_KMETRICS);
	/* sorted by time: the gemm instance first; string ids remapped to the model */
	CHECK_STR(model_str(&m, m.kmetrics.v[0].kernel_id), "gemm(float*)");
	CHECK_STR(model_str(&m, m.kmetrics.v[5].kernel_id), "copy(float*)");
	for (size_t i = 0; i < m.kmetrics.n; i++)
		if (!strcmp(model_str(&m, m.kmetrics.v[i].key_id), "tensor_hmma_pct")) {
			CHECK(!(m.kmetrics.v[i].flags & TRACE_KM_VALID));
			CHECK_STR(model_str(&m, m.kmetrics.v[i].metric_id), "sm__pipe_tensor_op_hmma_x|other");
		}
	model_clip(&m, 15000, 30000);
	CHECK_EQ_U64(m.kmetrics.n, 2);
	model_release(&m);
}

static void test_stats_report(void)
{
	struct model m;
	struct stats_table t;
	int ck, cd, cp, cc, cx, csm, cdr, cth;

	model_init(&m);
	CHECK(model_load_report(&m, write_report()) == 0);
	CHECK(stats_run(&m, "cuda_kern_metrics", NULL, &t) == 0);
	CHECK_EQ_U64(t.nrows, 2);
	ck = stats_col_index(&t, "Kernel");
	cd = stats_col_index(&t, "Duration (ns)");
	cp = stats_col_index(&t, "Passes");
	cc = stats_col_index(&t, "Replay Cost (ns)");
	cx = stats_col_index(&t, "Cost (x)");
	csm = stats_col_index(&t, "SM Throughput (%)");
	cdr = stats_col_index(&t, "DRAM Throughput (%)");
	cth = stats_col_index(&t, "Tensor HMMA Pipe (%)");
	CHECK(ck >= 0 && cd >= 0 && cp >= 0 && cc >= 0 && cx >= 0 && csm >= 0 && cdr >= 0 && cth >= 0);
	/* no column for the duration key: it is the Duration column's fallback */
	CHECK(stats_col_index(&t, "duration_ns") < 0);
	/* the metric columns come in the order of the sets: SM, DRAM, then tensor */
	CHECK(csm < cdr && cdr < cth);
	CHECK_STR(stats_cell_at(&t, 0, ck)->s, "gemm(float*)");
	CHECK_EQ_I64(stats_cell_at(&t, 0, cd)->i, 1000);   /* the kernel record, not the counter */
	CHECK_EQ_I64(stats_cell_at(&t, 0, cp)->i, 3);
	CHECK_EQ_I64(stats_cell_at(&t, 0, cc)->i, 5000);
	CHECK_NEAR(stats_cell_at(&t, 0, cx)->f, 5.0, 1e-9);
	CHECK_NEAR(stats_cell_at(&t, 0, csm)->f, 81.5, 1e-9);
	CHECK_NEAR(stats_cell_at(&t, 0, cdr)->f, 12.25, 1e-9);
	CHECK(!stats_cell_valid(&t, 0, cth));             /* unavailable: "-", never 0 */
	CHECK_STR(stats_cell_at(&t, 1, ck)->s, "copy(float*)");
	CHECK_EQ_I64(stats_cell_at(&t, 1, cd)->i, 2000);
	CHECK(!stats_cell_valid(&t, 1, csm));             /* failed instance: unknown */
	CHECK(!stats_cell_valid(&t, 1, cdr));
	CHECK(!stats_cell_valid(&t, 1, cc));              /* no cost stated */
	CHECK(!stats_cell_valid(&t, 1, cx));
	CHECK(t.note != NULL);
	CHECK_CONTAINS(t.note, "2 instances of 2 kernels profiled with kernel replay");
	CHECK_CONTAINS(t.note, "ran its kernel 3 times (passes)");
	CHECK_CONTAINS(t.note, "unavailable on this GPU: tensor_hmma_pct (sm__pipe_tensor_op_hmma_x|other)");
	stats_table_release(&t);
	model_release(&m);
}

static void test_stats_empty(void)
{
	struct model m;
	struct stats_table t;

	model_init(&m);
	model_finish(&m);
	CHECK(stats_run(&m, "cuda_kern_metrics", NULL, &t) == 0);
	CHECK_EQ_U64(t.nrows, 0);
	CHECK(t.empty_reason != NULL);
	CHECK_CONTAINS(t.empty_reason, "no kernel metrics were recorded");
	stats_table_release(&t);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_record_layout),
	GSTEST(test_model_loads_kmetrics),
	GSTEST(test_stats_report),
	GSTEST(test_stats_empty),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
