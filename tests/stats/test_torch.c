/*
 * test_torch.c - `stats --report torch_op_sum` (stats_torch.c) and the
 * grouping of instance-numbered NVTX ranges, on a model built here with
 * values chosen by hand:
 *
 *   thread 1, emit_nvtx ranges:
 *     "aten::linear, seq = 1, sizes = [[4, 8], [16, 8]]"  [100, 1000)
 *       "aten::addmm, seq = 2, sizes = [[16], [4, 8], [8, 16]]" [200, 800)
 *         launch at 300 (corr 1) -> kernel of 50 ns
 *       launch at 900 (corr 2, in linear, not in addmm) -> kernel of 30 ns
 *     "aten::linear, seq = 3, sizes = [[4, 8], [16, 8]]"  [2000, 2500), no launch
 *     "ProfilerStep#5" [50, 1500), "ProfilerStep#6" [1500, 3000): not operators
 *     "layer_1", "layer_2": not operators, two ranges
 *   thread 2, a Kineto cpu_op "aten::mm" [100, 400) with Input Dims
 *     "[[2,3],[3,4]]", launch at 150 (corr 3) -> kernel of 20 ns
 *   a range "scope::thing(int)" of the default domain: not an operator
 *   (no ", " after the name).
 */
#include "gstest.h"
#include "model/model.h"
#include "stats/stats.h"
#include "trace/trace.h"
#include "util/util.h"

#include <string.h>

static void range(struct model *m, uint32_t tid, uint64_t s, uint64_t e, const char *name, const char *domain)
{
	struct trace_nvtx_range *r = MODEL_PUSH(m->nvtx);

	memset(r, 0, sizeof(*r));
	r->start = s;
	r->end = e;
	r->pid = 42;
	r->tid = tid;
	r->end_tid = tid;
	r->name_id = model_intern(m, name);
	r->domain_id = domain ? model_intern(m, domain) : 0;
	r->kind = TRACE_NVTX_PUSHPOP;
}

static void launch(struct model *m, uint32_t tid, uint64_t t, uint32_t corr, uint64_t kernel_ns)
{
	struct trace_api *a = MODEL_PUSH(m->api);
	struct trace_kernel *k = MODEL_PUSH(m->kernels);

	memset(a, 0, sizeof(*a));
	a->start = t;
	a->end = t + 5;
	a->pid = 42;
	a->tid = tid;
	a->correlation = corr;
	a->domain = TRACE_API_RUNTIME;
	a->name_id = model_intern(m, "cudaLaunchKernel");
	memset(k, 0, sizeof(*k));
	k->start = 5000 + corr * 100;
	k->end = k->start + kernel_ns;
	k->pid = 42;
	k->stream = 7;
	k->correlation = corr;
	k->name_id = model_intern(m, "void k<float>(float*)");
	k->grid[0] = k->grid[1] = k->grid[2] = 1;
	k->block[0] = k->block[1] = k->block[2] = 1;
}

static void build(struct model *m)
{
	struct model_op_shape *s;

	model_init(m);
	range(m, 1, 100, 1000, "aten::linear, seq = 1, sizes = [[4, 8], [16, 8]]", NULL);
	range(m, 1, 200, 800, "aten::addmm, seq = 2, sizes = [[16], [4, 8], [8, 16]]", NULL);
	range(m, 1, 2000, 2500, "aten::linear, seq = 3, sizes = [[4, 8], [16, 8]]", NULL);
	range(m, 1, 50, 1500, "ProfilerStep#5", NULL);
	range(m, 1, 1500, 3000, "ProfilerStep#6", NULL);
	range(m, 1, 3000, 3100, "layer_1", NULL);
	range(m, 1, 3100, 3200, "layer_2", NULL);
	range(m, 1, 3300, 3400, "scope::thing(int)", NULL);
	range(m, 2, 100, 400, "aten::mm", "kineto:cpu_op");
	s = MODEL_PUSH(m->op_shapes);
	memset(s, 0, sizeof(*s));
	s->start = 100;
	s->end = 400;
	s->pid = 42;
	s->tid = 2;
	s->name_id = model_intern(m, "aten::mm");
	s->dims_id = model_intern(m, "[[2,3],[3,4]]");
	launch(m, 1, 300, 1, 50);
	launch(m, 1, 900, 2, 30);
	launch(m, 2, 150, 3, 20);
	m->has |= MODEL_HAS_CUDA | MODEL_HAS_NVTX | MODEL_HAS_API;
	model_finish(m);
}

static int64_t cell(const struct stats_table *t, size_t r, const char *col)
{
	int c = stats_col_index(t, col);

	CHECK(c >= 0);
	if (c < 0 || r >= t->nrows)
		return -1;
	return stats_cell_at(t, r, (size_t)c)->i;
}

static const char *str(const struct stats_table *t, size_t r, const char *col)
{
	int c = stats_col_index(t, col);

	CHECK(c >= 0);
	if (c < 0 || r >= t->nrows)
		return "";
	return stats_cell_at(t, r, (size_t)c)->s;
}

static void test_torch_op_sum(void)
{
	struct model m;
	struct stats_opts o = { 0 };
	struct stats_table t;

	build(&m);
	CHECK(stats_run(&m, "torch_op_sum", &o, &t) == 0);
	CHECK_EQ_U64(t.nrows, 3);
	/* sorted by GPU self time: addmm 50, linear 30, mm 20 */
	CHECK_STR(str(&t, 0, "Operator"), "aten::addmm");
	CHECK_STR(str(&t, 0, "Input Shapes"), "[[16], [4, 8], [8, 16]]");
	CHECK_EQ_I64(cell(&t, 0, "Calls"), 1);
	CHECK_EQ_I64(cell(&t, 0, "CPU Total (ns)"), 600);
	CHECK_EQ_I64(cell(&t, 0, "CPU Self (ns)"), 600);
	CHECK_EQ_I64(cell(&t, 0, "GPU Total (ns)"), 50);
	CHECK_EQ_I64(cell(&t, 0, "GPU Self (ns)"), 50);
	CHECK_EQ_I64(cell(&t, 0, "Kernels"), 1);

	CHECK_STR(str(&t, 1, "Operator"), "aten::linear");
	CHECK_STR(str(&t, 1, "Input Shapes"), "[[4, 8], [16, 8]]");
	CHECK_EQ_I64(cell(&t, 1, "Calls"), 2);
	CHECK_EQ_I64(cell(&t, 1, "CPU Total (ns)"), 900 + 500);
	CHECK_EQ_I64(cell(&t, 1, "CPU Self (ns)"), (900 - 600) + 500);
	CHECK_EQ_I64(cell(&t, 1, "GPU Total (ns)"), 50 + 30);
	CHECK_EQ_I64(cell(&t, 1, "GPU Self (ns)"), 30);
	CHECK_EQ_I64(cell(&t, 1, "Kernels"), 1);

	CHECK_STR(str(&t, 2, "Operator"), "aten::mm");
	CHECK_STR(str(&t, 2, "Input Shapes"), "[[2,3],[3,4]]");
	CHECK_EQ_I64(cell(&t, 2, "CPU Total (ns)"), 300);
	CHECK_EQ_I64(cell(&t, 2, "GPU Self (ns)"), 20);
	stats_table_release(&t);

	/* a window keeps the operators that overlap it */
	o.start = 1900;
	o.end = 2600;
	CHECK(stats_run(&m, "torch_op_sum", &o, &t) == 0);
	CHECK_EQ_U64(t.nrows, 1);
	CHECK_STR(str(&t, 0, "Operator"), "aten::linear");
	CHECK_EQ_I64(cell(&t, 0, "Calls"), 1);
	CHECK_EQ_I64(cell(&t, 0, "GPU Total (ns)"), 0);
	stats_table_release(&t);
	model_release(&m);
}

static void test_no_operators(void)
{
	struct model m;
	struct stats_opts o = { 0 };
	struct stats_table t;

	model_init(&m);
	range(&m, 1, 10, 20, "my range", NULL);
	m.has |= MODEL_HAS_NVTX;
	model_finish(&m);
	CHECK(stats_run(&m, "torch_op_sum", &o, &t) == 0);
	CHECK_EQ_U64(t.nrows, 0);
	CHECK(t.empty_reason != NULL);
	if (t.empty_reason)
		CHECK_CONTAINS(t.empty_reason, "no PyTorch operator");
	stats_table_release(&t);
	model_release(&m);
}

static void test_step_instances_group(void)
{
	struct model m;
	struct stats_opts o = { 0 };
	struct stats_table t;
	int step = -1, l1 = -1, l2 = -1;

	build(&m);
	CHECK(stats_run(&m, "nvtx_sum", &o, &t) == 0);
	for (size_t r = 0; r < t.nrows; r++) {
		const char *name = str(&t, r, "Range");
		CHECK(strstr(name, "ProfilerStep#") == NULL);
		if (!strcmp(name, "ProfilerStep"))
			step = (int)r;
		if (!strcmp(name, "layer_1"))
			l1 = (int)r;
		if (!strcmp(name, "layer_2"))
			l2 = (int)r;
	}
	/* one range, two instances; numbered names without '#' stay apart */
	CHECK(step >= 0);
	if (step >= 0) {
		CHECK_EQ_I64(cell(&t, (size_t)step, "Instances"), 2);
		CHECK_EQ_I64(cell(&t, (size_t)step, "Total Time (ns)"), 1450 + 1500);
	}
	CHECK(l1 >= 0 && l2 >= 0);
	stats_table_release(&t);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_torch_op_sum),
	GSTEST(test_no_operators),
	GSTEST(test_step_instances_group),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
