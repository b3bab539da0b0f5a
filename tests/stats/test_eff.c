/*
 * test_eff.c - operator work (FLOPs, bytes) from input shapes, the shapes
 * the Kineto importer keeps, the kernel-to-operator links, and the reports
 * cuda_kern_eff and cuda_kern_class_sum.
 *
 * Every expected number is worked out by hand below from shapes read in
 * the JSON by eye (zcat FILE | grep '"External id": N,').  The formulas are
 * docs/stats.md's: 2MNK for mm, + MN for addmm, 2BMNK for bmm, convolution
 * 2 N C_out (C_in/groups) prod(kernel) prod(output), attention
 * 2 B H S_q S_k (D + D_v), halved when causal.
 *
 * Real traces: tests/data/import/sampled_rank-0.json.gz (always there) and,
 * from the traces recorded by others, real/tracelens__h100_timesformer_
 * inference.json.gz, found in env GS_SHARED_DIR, else $GS_SOURCE_DIR/../shared,
 * else /work/shared (the test says "skip" and passes that part when none has it).
 */
#include "gstest.h"
#include "import/import.h"
#include "model/model.h"
#include "stats/stats.h"
#include "stats/stats_int.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- helpers ---- */

static double work_flops(const char *op, const char *dims, const char *types, const char *conc,
			 int expect_ret)
{
	struct stats_op_work w;
	int ret = stats_op_work(op, dims, types, conc, &w);

	if (ret != expect_ret)
		gstest_fail(__FILE__, __LINE__, "stats_op_work(%s, %s) returned %d, expected %d (%s)", op,
			    dims, ret, expect_ret, w.note ? w.note : "no note");
	if (ret == 1 && !w.has_flops)
		gstest_fail(__FILE__, __LINE__, "%s %s: no FLOPs", op, dims);
	return ret == 1 ? w.flops : -1;
}

/* A trace of shared/validation/real, or NULL (and a "skip" line) when not there. */
static const char *shared_trace(const char *name)
{
	static char path[1200];
	const char *dir = gstest_shared_dir();

	if (dir) {
		snprintf(path, sizeof(path), "%s/validation/real/%s", dir, name);
		if (!access(path, R_OK))
			return path;
	}
	printf("# skip %s: not in shared/validation/real (GS_SHARED_DIR, $GS_SOURCE_DIR/../shared, /work/shared)\n",
	       name);
	return NULL;
}

static const struct model_op_shape *op_by_ext(const struct model *m, uint64_t ext)
{
	for (size_t i = 0; i < m->op_shapes.n; i++)
		if (m->op_shapes.v[i].ext_id == ext)
			return &m->op_shapes.v[i];
	gstest_fail(__FILE__, __LINE__, "no op with External id %llu", (unsigned long long)ext);
	return NULL;
}

static double op_flops(const struct model *m, const struct model_op_shape *o, double *bytes)
{
	struct stats_op_work w;

	CHECK(stats_op_work(model_str(m, o->name_id), model_str(m, o->dims_id),
			    o->types_id ? model_str(m, o->types_id) : NULL,
			    o->concrete_id ? model_str(m, o->concrete_id) : NULL, &w) == 1);
	CHECK(w.has_flops);
	if (bytes)
		*bytes = w.has_bytes ? w.bytes : -1;
	return w.flops;
}

static int col(const struct stats_table *t, const char *name)
{
	int c = stats_col_index(t, name);

	if (c < 0)
		gstest_fail(__FILE__, __LINE__, "report %s has no column '%s'", t->report, name);
	return c;
}

/* The row whose Name is @name and Op is @op (NULL: no op), or -1. */
static long find_row(const struct stats_table *t, const char *name, const char *op)
{
	int cn = col(t, "Name"), co = col(t, "Op");

	for (size_t r = 0; r < t->nrows; r++) {
		if (strcmp(stats_cell_at(t, r, (size_t)cn)->s, name))
			continue;
		if (!op ? !stats_cell_valid(t, r, (size_t)co)
			: stats_cell_valid(t, r, (size_t)co) && !strcmp(stats_cell_at(t, r, (size_t)co)->s, op))
			return (long)r;
	}
	return -1;
}

static double fcell(const struct stats_table *t, long r, const char *c)
{
	int k = col(t, c);

	if (r < 0 || !stats_cell_valid(t, (size_t)r, (size_t)k))
		gstest_fail(__FILE__, __LINE__, "row %ld column '%s' is unknown", r, c);
	return r < 0 ? NAN : stats_cell_at(t, (size_t)r, (size_t)k)->f;
}

static int64_t icell(const struct stats_table *t, long r, const char *c)
{
	int k = col(t, c);

	if (r < 0 || !stats_cell_valid(t, (size_t)r, (size_t)k))
		gstest_fail(__FILE__, __LINE__, "row %ld column '%s' is unknown", r, c);
	return r < 0 ? -1 : stats_cell_at(t, (size_t)r, (size_t)k)->i;
}

static const char *scell(const struct stats_table *t, long r, const char *c)
{
	int k = col(t, c);

	if (r < 0 || !stats_cell_valid(t, (size_t)r, (size_t)k))
		return "-";
	return stats_cell_at(t, (size_t)r, (size_t)k)->s;
}

static int known(const struct stats_table *t, long r, const char *c)
{
	return r >= 0 && stats_cell_valid(t, (size_t)r, (size_t)col(t, c));
}

/* ---- formulas on synthetic shapes ---- */

static void test_gemm_formulas(void)
{
	struct stats_op_work w;

	/* mm (64 x 128)(128 x 32): 2 * 64 * 32 * 128 = 524288 */
	CHECK_NEAR(work_flops("aten::mm", "[[64,128],[128,32]]", "[\"float\",\"float\"]", NULL, 1),
		   524288, 0);
	/* bytes: (64*128 + 128*32 + 64*32) * 4 = (8192 + 4096 + 2048) * 4 = 57344 */
	stats_op_work("aten::mm", "[[64,128],[128,32]]", "[\"float\",\"float\"]", NULL, &w);
	CHECK(w.has_bytes);
	CHECK_NEAR(w.bytes, 57344, 0);
	CHECK(w.matmul);
	/* addmm (bias [32], 64 x 128, 128 x 32): 524288 + 64 * 32 = 526336 */
	CHECK_NEAR(work_flops("aten::addmm", "[[32],[64,128],[128,32],[],[]]", NULL, NULL, 1), 526336, 0);
	/* bmm (8 x 16 x 64)(8 x 64 x 4): 2 * 8 * 16 * 4 * 64 = 65536 */
	CHECK_NEAR(work_flops("aten::bmm", "[[8,16,64],[8,64,4]]", NULL, NULL, 1), 65536, 0);
	/* baddbmm adds B*M*N = 8 * 16 * 4 = 512 */
	CHECK_NEAR(work_flops("aten::baddbmm", "[[8,16,4],[8,16,64],[8,64,4],[],[]]", NULL, NULL, 1), 66048, 0);
	/* linear input (2 x 5 x 64), weight (10 x 64): 2 * (2*5) * 10 * 64 = 12800 */
	CHECK_NEAR(work_flops("aten::linear", "[[2,5,64],[10,64],[10]]", NULL, NULL, 1), 12800, 0);
	/* matmul (4 x 1 x 8 x 16)(3 x 16 x 32): batch broadcast 4 x 3 = 12: 2 * 12 * 8 * 32 * 16 = 98304 */
	CHECK_NEAR(work_flops("aten::matmul", "[[4,1,8,16],[3,16,32]]", NULL, NULL, 1), 98304, 0);
	/* matmul vector . matrix (16)(16 x 32): 2 * 32 * 16 = 1024 */
	CHECK_NEAR(work_flops("aten::matmul", "[[16],[16,32]]", NULL, NULL, 1), 1024, 0);
	/* shapes that do not fit */
	work_flops("aten::mm", "[[64,128],[127,32]]", NULL, NULL, -1);
	work_flops("aten::matmul", "[[4,8,16],[3,16,32]]", NULL, NULL, -1);
	work_flops("aten::bmm", "[[8,16]]", NULL, NULL, -1);
	/* no formula for this op */
	CHECK(stats_op_work("aten::relu", "[[4,4]]", NULL, NULL, &w) == 0);
	CHECK(!w.has_flops && !w.has_bytes);
	/* malformed lists give no shapes, never a crash */
	work_flops("aten::mm", "[[64,", NULL, NULL, -1);
	work_flops("aten::mm", "", NULL, NULL, -1);
	work_flops("aten::mm", NULL, NULL, NULL, -1);
}

static void test_conv_formulas(void)
{
	struct stats_op_work w;

	/*
	 * conv2d input (8, 3, 224, 224), weight (64, 3, 7, 7), stride 2, padding 3,
	 * dilation 1: output (224 + 6 - 6 - 1) / 2 + 1 = 112 each way;
	 * FLOPs 2 * 8 * 64 * 3 * 49 * 112 * 112 = 1888223232.
	 */
	CHECK_NEAR(work_flops("aten::conv2d", "[[8,3,224,224],[64,3,7,7],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"[2, 2]\",\"[3, 3]\",\"[1, 1]\",\"1\"]", 1),
		   1888223232.0, 0);
	/*
	 * Groups: input (2, 64, 56, 56), weight (64, 8, 3, 3) (C_in/groups = 8),
	 * stride 1, padding 1: output 56; 2 * 2 * 64 * 8 * 9 * 56 * 56 = 57802752.
	 */
	CHECK_NEAR(work_flops("aten::convolution", "[[2,64,56,56],[64,8,3,3],[],[],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"[1, 1]\",\"[1, 1]\",\"[1, 1]\",\"False\",\"[0, 0]\",\"8\"]", 1),
		   57802752.0, 0);
	/*
	 * cudnn_convolution lists padding before stride: (self, weight, padding,
	 * stride, dilation, ...).  Input (1, 16, 32, 32), weight (32, 16, 4, 4),
	 * padding 0, stride 4: output 8; 2 * 1 * 32 * 16 * 16 * 64 = 1048576.
	 */
	CHECK_NEAR(work_flops("aten::cudnn_convolution", "[[1,16,32,32],[32,16,4,4],[],[],[]]", NULL,
			      "[\"\",\"\",\"[0, 0]\",\"[4, 4]\",\"[1, 1]\"]", 1),
		   1048576.0, 0);
	/* dilation 2, 3-wide kernel on 10: (10 - 2*2 - 1) / 1 + 1 = 6: 2 * 1 * 1 * 1 * 3 * 6 = 36 (conv1d) */
	CHECK_NEAR(work_flops("aten::conv1d", "[[1,1,10],[1,1,3],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"[1]\",\"[0]\",\"[2]\",\"1\"]", 1),
		   36.0, 0);
	/* scalars not recorded: stride 1, padding 0, dilation 1 assumed and said: 28 x 28 output */
	CHECK(stats_op_work("aten::conv2d", "[[1,1,30,30],[1,1,3,3]]", NULL, NULL, &w) == 1);
	CHECK_NEAR(w.flops, 2.0 * 9 * 28 * 28, 0);
	CHECK_CONTAINS(w.note, "assumed");
	/* padding "same": the output keeps the input's size */
	CHECK_NEAR(work_flops("aten::conv2d", "[[1,1,30,30],[1,1,3,3],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"[1, 1]\",\"same\",\"[1, 1]\",\"1\"]", 1),
		   2.0 * 9 * 30 * 30, 0);
	/* transposed convolutions have no formula here: -1 with a reason */
	CHECK(stats_op_work("aten::convolution", "[[1,1,8,8],[1,1,3,3]]", NULL,
			    "[\"\",\"\",\"\",\"[1, 1]\",\"[0, 0]\",\"[1, 1]\",\"True\",\"[0, 0]\",\"1\"]", &w) == -1);
	CHECK_CONTAINS(w.note, "transposed");
	/* bytes: bf16 input 1*1*30*30 + weight 9 + output 28*28, times 2 */
	CHECK(stats_op_work("aten::conv2d", "[[1,1,30,30],[1,1,3,3],[]]",
			    "[\"c10::BFloat16\",\"c10::BFloat16\",\"\"]", NULL, &w) == 1);
	CHECK_NEAR(w.bytes, (900 + 9 + 784) * 2.0, 0);
}

static void test_attention_formulas(void)
{
	struct stats_op_work w;

	/* SDPA q, k, v (2, 8, 128, 64): 4 * 2 * 8 * 128 * 128 * 64 = 67108864, not causal */
	CHECK_NEAR(work_flops("aten::scaled_dot_product_attention",
			      "[[2,8,128,64],[2,8,128,64],[2,8,128,64],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"\",\"0.\",\"False\",\"\",\"False\"]", 1),
		   67108864.0, 0);
	/* causal (is_causal, argument 5, is "True"): half */
	CHECK_NEAR(work_flops("aten::scaled_dot_product_attention",
			      "[[2,8,128,64],[2,8,128,64],[2,8,128,64],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"\",\"0.\",\"True\",\"\",\"False\"]", 1),
		   33554432.0, 0);
	/* causal not recorded: not causal assumed, and said */
	CHECK(stats_op_work("aten::_scaled_dot_product_flash_attention",
			    "[[2,8,128,64],[2,8,128,64],[2,8,128,64]]", NULL, NULL, &w) == 1);
	CHECK_NEAR(w.flops, 67108864.0, 0);
	CHECK_CONTAINS(w.note, "causal");
	/*
	 * _flash_attention_forward takes (B, S, H, D): q (1, 77, 12, 64), k, v
	 * (1, 77, 12, 64), is_causal (argument 8) True:
	 * 77 * 77 = 5929; 4 * 1 * 12 * 5929 * 64 = 18213888; / 2 = 9106944.
	 */
	CHECK_NEAR(work_flops("aten::_flash_attention_forward",
			      "[[1,77,12,64],[1,77,12,64],[1,77,12,64],[],[],[],[],[],[],[],[]]", NULL,
			      "[\"\",\"\",\"\",\"\",\"\",\"77\",\"77\",\"0.\",\"True\",\"False\",\"0.125\"]", 1),
		   9106944.0, 0);
	/* different S_q, S_k and D_v: q (1, 4, 16, 32), k (1, 4, 64, 32), v (1, 4, 64, 16):
	 * 2 * 1 * 4 * 16 * 64 * (32 + 16) = 393216 */
	CHECK_NEAR(work_flops("aten::_scaled_dot_product_efficient_attention",
			      "[[1,4,16,32],[1,4,64,32],[1,4,64,16]]", NULL,
			      "[\"\",\"\",\"\",\"\",\"\",\"0.\",\"False\"]", 1),
		   393216.0, 0);
	/* _efficient_attention_forward: custom_mask_type (argument 9) 1 = causal */
	CHECK_NEAR(work_flops("aten::_efficient_attention_forward",
			      "[[1,16,4,32],[1,16,4,32],[1,16,4,32]]", NULL,
			      "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.\",\"1\"]", 1),
		   2.0 * 4 * 16 * 16 * 64 / 2, 0);
	/* a variable-length batch (3-D q) cannot be counted */
	CHECK(stats_op_work("aten::_flash_attention_forward", "[[300,12,64],[300,12,64],[300,12,64]]",
			    NULL, NULL, &w) == -1);
	CHECK_CONTAINS(w.note, "variable-length");
}

static void test_dtype_sizes(void)
{
	CHECK_EQ_I64(stats_dtype_size("float"), 4);
	CHECK_EQ_I64(stats_dtype_size("c10::BFloat16"), 2);
	CHECK_EQ_I64(stats_dtype_size("c10::Half"), 2);
	CHECK_EQ_I64(stats_dtype_size("c10::Float8_e4m3fn"), 1);
	CHECK_EQ_I64(stats_dtype_size("long"), 8);
	CHECK_EQ_I64(stats_dtype_size("Scalar"), 0);
	CHECK_EQ_I64(stats_dtype_size(""), 0);
}

/* ---- the importer keeps the shapes ---- */

static struct model S;
static int s_loaded;

static const struct model *sampled(void)
{
	if (!s_loaded) {
		model_init(&S);
		CHECK(load_input(&S, gstest_data("import/sampled_rank-0.json.gz")) == 0);
		s_loaded = 1;
	}
	return &S;
}

static void test_import_shapes(void)
{
	const struct model *m = sampled();
	const struct model_op_shape *o;
	double bytes;

	/*
	 * The trace has 2329 cpu_op events; 2011 of them have "Input Dims" (the
	 * 10 user_annotation events with "Input Dims", "nccl:all_reduce", are no
	 * operators): one row each.
	 */
	CHECK_EQ_U64(m->op_shapes.n, 2011);
	/* this trace is an older Kineto's: runtime External ids are correlation ids, no op's */
	CHECK_EQ_U64(m->op_launches.n, 0);

	/*
	 * External id 72118: "aten::addmm", "Input Dims": [[256], [2048, 6948],
	 * [6948, 256], [], []], "Input type": ["float", "float", "float",
	 * "Scalar", "Scalar"].  M = 2048, K = 6948, N = 256:
	 * 2 * 2048 * 256 * 6948 = 7285506048, + M*N = 524288: 7286030336.
	 * Bytes: (256 + 2048*6948 + 6948*256 + 2048*256) * 4
	 *      = (256 + 14229504 + 1778688 + 524288) * 4 = 66130944.
	 */
	o = op_by_ext(m, 72118);
	CHECK_STR(model_str(m, o->name_id), "aten::addmm");
	CHECK_STR(model_str(m, o->dims_id), "[[256],[2048,6948],[6948,256],[],[]]");
	CHECK_STR(model_str(m, o->types_id), "[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]");
	CHECK_EQ_U64(o->concrete_id, 0); /* this Kineto did not record Concrete Inputs */
	CHECK_NEAR(op_flops(m, o, &bytes), 7286030336.0, 0);
	CHECK_NEAR(bytes, 66130944.0, 0);

	/*
	 * External id 87405: "aten::bmm", [[2048, 160, 45], [2048, 45, 20]]:
	 * 2 * 2048 * 160 * 20 * 45 = 589824000.
	 */
	o = op_by_ext(m, 87405);
	CHECK_STR(model_str(m, o->name_id), "aten::bmm");
	CHECK_NEAR(op_flops(m, o, NULL), 589824000.0, 0);

	/*
	 * External id 41928: "aten::mm", [[2048, 512], [512, 38313]]:
	 * 2 * 2048 * 38313 * 512 = 80348184576.
	 */
	o = op_by_ext(m, 41928);
	CHECK_STR(model_str(m, o->name_id), "aten::mm");
	CHECK_NEAR(op_flops(m, o, NULL), 80348184576.0, 0);
}

/* ---- the report on the sampled trace (no deviceProperties: peaks unknown) ---- */

static void test_eff_report_sampled(void)
{
	const struct model *m = sampled();
	struct stats_table t;
	long r;

	CHECK(stats_run(m, "cuda_kern_eff", NULL, &t) == 0);
	/*
	 * "ampere_sgemm_128x128_tn" is launched (cudaLaunchKernel inside the op's
	 * range on its thread) by two aten::bmm with [[2048, 160, 20], [2048, 20,
	 * 606]] (External ids 87611 and 157762), kernel durations 1328 and 1338 us.
	 * FLOPs each 2 * 2048 * 160 * 606 * 20 = 7942963200; both 15.8859264 GFLOP
	 * in 2666000 ns: 15885926400 / 2666000 / 1000 = 5.958712 TFLOP/s.
	 */
	r = find_row(&t, "ampere_sgemm_128x128_tn", "aten::bmm");
	CHECK(r >= 0);
	CHECK_EQ_I64(icell(&t, r, "Instances"), 2);
	CHECK_EQ_I64(icell(&t, r, "Total Time (ns)"), 2666000);
	CHECK_EQ_I64(icell(&t, r, "FLOP Inst"), 2);
	CHECK_NEAR(fcell(&t, r, "GFLOP"), 15.8859264, 1e-9);
	CHECK_NEAR(fcell(&t, r, "TFLOP/s"), 15885926400.0 / 2666000 / 1000, 1e-9);
	CHECK_STR(scell(&t, r, "Class"), "gemm");
	CHECK_STR(scell(&t, r, "Precision"), "fp32");
	CHECK_STR(scell(&t, r, "Peak"), "fp32 cuda-core");
	/* no deviceProperties in this trace: no peak, printed "-" */
	CHECK(!known(&t, r, "Peak TFLOP/s"));
	CHECK(!known(&t, r, "Peak (%)"));
	/*
	 * bytes each (2048*160*20 + 2048*20*606 + 2048*160*606) * 4
	 *           = (6553600 + 24821760 + 198574080) * 4 = 919797760; two: 1839595520.
	 */
	CHECK_NEAR(fcell(&t, r, "Bytes (MB)"), 1839595520.0, 0.5);
	CHECK_NEAR(fcell(&t, r, "GB/s"), 1839595520.0 / 2666000, 1e-6);

	/*
	 * aten::addmm [[1], [2048, 512], [512, 1]] (External ids 84866, 155278)
	 * launches scal_kernel (elementwise) and sgemm_largek_lds64 (gemm): the
	 * FLOPs 2 * 2048 * 1 * 512 + 2048 = 2099200 each go to the GEMM kernel.
	 */
	r = find_row(&t, "sgemm_largek_lds64<true, true, 6, 3, 4, 5, 2, 66>", "aten::addmm");
	CHECK(r >= 0);
	CHECK_NEAR(fcell(&t, r, "GFLOP"), 2 * 2099200 / 1e9, 1e-12);
	r = find_row(&t, "scal_kernel<float, float, 1, false, 6, 5, 5, 3>", "aten::addmm");
	CHECK(r >= 0);
	CHECK(!known(&t, r, "GFLOP"));
	CHECK_EQ_I64(icell(&t, r, "FLOP Inst"), 0);

	/* communication kernels have no FLOPs: unknown, never 0 */
	r = find_row(&t, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "record_param_comms");
	CHECK(r >= 0);
	CHECK(!known(&t, r, "GFLOP"));
	CHECK(!known(&t, r, "TFLOP/s"));
	CHECK_CONTAINS(t.note, "linked to an operator with shapes");
	stats_table_release(&t);
}

/* ---- the report on an H100 trace with deviceProperties and Concrete Inputs ---- */

static void test_eff_report_h100(void)
{
	const char *path = shared_trace("tracelens__h100_timesformer_inference.json.gz");
	struct model m;
	struct stats_table t;
	const char *conv = "cutlass__5x_cudnn::Kernel<...>";
	double pct, tflops;
	long r;

	if (!path)
		return;
	model_init(&m);
	CHECK(load_input(&m, path) == 0);
	/* runtime calls name their op by External id in this Kineto */
	CHECK(m.op_launches.n > 0);
	CHECK(stats_run(&m, "cuda_kern_eff", NULL, &t) == 0);

	/*
	 * External id 3600, "aten::cudnn_convolution": Input Dims [[128, 3, 224,
	 * 224], [768, 3, 16, 16], ...], Concrete Inputs padding "[0, 0]", stride
	 * "[16, 16]", dilation "[1, 1]": output (224 - 15 - 1) / 16 + 1 = 14.
	 * FLOPs 2 * 128 * 768 * 3 * 256 * 196 = 29595009024.  It launched four
	 * kernels (two nchwToNhwc, the conv, one nhwcToNchw); the conv kernel
	 * (cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop...>) ran
	 * 863.099 us: 29595009024 / 863099 / 1000 = 34.2893 TFLOP/s.  The device
	 * is "NVIDIA H100 80GB HBM3": the table's H100 SXM, BF16 tensor 989.5.
	 */
	r = find_row(&t, conv, "aten::cudnn_convolution");
	CHECK(r >= 0);
	CHECK_EQ_I64(icell(&t, r, "Instances"), 1);
	CHECK_EQ_I64(icell(&t, r, "Total Time (ns)"), 863099);
	CHECK_NEAR(fcell(&t, r, "GFLOP"), 29.595009024, 1e-9);
	tflops = 29595009024.0 / 863099 / 1000;
	CHECK_NEAR(fcell(&t, r, "TFLOP/s"), tflops, 1e-9);
	CHECK_STR(scell(&t, r, "Class"), "conv");
	CHECK_STR(scell(&t, r, "Peak"), "bf16 tensor");
	CHECK_NEAR(fcell(&t, r, "Peak TFLOP/s"), 989.5, 0);
	CHECK_STR(scell(&t, r, "Peak Source"), "table");
	CHECK_NEAR(fcell(&t, r, "Peak (%)"), 100 * tflops / 989.5, 1e-9);
	/*
	 * bytes (bf16): input 128*3*224*224 = 19267584, weight 768*3*16*16 =
	 * 589824, output 128*768*14*14 = 19267584: 39124992 * 2 = 78249984.
	 * Memory bandwidth 3350 GB/s.
	 */
	CHECK_NEAR(fcell(&t, r, "Bytes (MB)"), 78249984.0, 0.5);
	CHECK_NEAR(fcell(&t, r, "Peak GB/s"), 3350, 0);
	CHECK_NEAR(fcell(&t, r, "BW Peak (%)"), 100 * (78249984.0 / 863099) / 3350, 1e-9);
	/* the layout kernels of that op carry none of its FLOPs */
	r = find_row(&t, "cudnn::engines_precompiled::nhwcToNchwKernel<...>", "aten::cudnn_convolution");
	CHECK(r >= 0);
	CHECK(!known(&t, r, "GFLOP"));

	/* the same number through the evidence call a rule makes */
	CHECK(stats_kernel_efficiency(&m, strtab_find(&m.str,
		"void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)"),
		&pct) == 0);
	CHECK_NEAR(pct, 100 * tflops / 989.5, 1e-9);

	/*
	 * The one host-to-device copy: 38535168 bytes in 3461.358 us, 11.133 GB/s;
	 * H100 SXM host link 128 GB/s both ways, 64 one way: 17.4 %.
	 */
	r = find_row(&t, "[CUDA memcpy Host-to-Device]", "aten::copy_");
	CHECK(r >= 0);
	CHECK_NEAR(fcell(&t, r, "GB/s"), 38535168.0 / 3461358, 1e-9);
	CHECK_NEAR(fcell(&t, r, "Peak GB/s"), 64, 0);
	CHECK_STR(scell(&t, r, "BW Peak"), "host link (one way)");
	CHECK_NEAR(fcell(&t, r, "BW Peak (%)"), 100 * (38535168.0 / 3461358) / 64, 1e-9);
	stats_table_release(&t);
	model_release(&m);
}

/*
 * A ROCm trace lists its one GPU as device 0 ("AMD Instinct MI300X") while
 * its kernels say device 2: the peak still comes from that GPU's row
 * (MI300X BF16 1307.4 TFLOP/s, memory 5300 GB/s, docs/gpus.md).
 */
static void test_eff_device_fallback(void)
{
	const char *path = shared_trace("tracelens__mi300_xdit_sd35_compiled.json.gz");
	struct model m;
	struct stats_table t;
	long r;

	if (!path)
		return;
	model_init(&m);
	CHECK(load_input(&m, path) == 0);
	CHECK_EQ_U64(m.devices.n, 1);
	CHECK_EQ_U64(m.devices.v[0].id, 0);
	CHECK(stats_run(&m, "cuda_kern_eff", NULL, &t) == 0);
	r = find_row(&t, "attn_fwd", "aten::_flash_attention_forward");
	CHECK(r >= 0);
	CHECK_EQ_I64(icell(&t, r, "Device"), 2);
	/* the kernel's name says no precision: the op's first input is c10::BFloat16 */
	CHECK(!known(&t, r, "Precision"));
	CHECK_STR(scell(&t, r, "Peak"), "bf16 tensor");
	CHECK_NEAR(fcell(&t, r, "Peak TFLOP/s"), 1307.4, 1e-9);
	CHECK_NEAR(fcell(&t, r, "Peak GB/s"), 5300, 0);
	CHECK_NEAR(fcell(&t, r, "Peak (%)"), 100 * fcell(&t, r, "TFLOP/s") / 1307.4, 1e-9);
	stats_table_release(&t);
	model_release(&m);
}

/* ---- cuda_kern_class_sum ---- */

static void test_class_sum(void)
{
	const struct model *m = sampled();
	struct stats_table t;
	uint64_t total = 0, inst = 0, sum_total = 0, sum_inst = 0;
	double pct = 0;
	int found_gemm_tc = 0;

	for (size_t i = 0; i < m->kernels.n; i++) {
		total += m->kernels.v[i].end - m->kernels.v[i].start;
		inst++;
	}
	CHECK(stats_run(m, "cuda_kern_class_sum", NULL, &t) == 0);
	CHECK(t.nrows > 3);
	for (size_t r = 0; r < t.nrows; r++) {
		sum_total += (uint64_t)icell(&t, (long)r, "Total Time (ns)");
		sum_inst += (uint64_t)icell(&t, (long)r, "Instances");
		pct += fcell(&t, (long)r, "Time (%)");
		if (!strcmp(scell(&t, (long)r, "Class"), "gemm") && !strcmp(scell(&t, (long)r, "Library"), "cutlass") &&
		    !strcmp(scell(&t, (long)r, "Precision"), "tf32") && !strcmp(scell(&t, (long)r, "Tensor Cores"), "yes"))
			found_gemm_tc = 1;
		/* rows are sorted by time, largest first */
		if (r)
			CHECK(icell(&t, (long)r, "Total Time (ns)") <= icell(&t, (long)r - 1, "Total Time (ns)"));
	}
	/* every kernel is in exactly one class row */
	CHECK_EQ_U64(sum_total, total);
	CHECK_EQ_U64(sum_inst, inst);
	CHECK_NEAR(pct, 100, 1e-6);
	/* the cutlass_80_tensorop_s1688gemm kernels: TF32 GEMMs on tensor cores */
	CHECK(found_gemm_tc);
	/* the largest share: the NCCL SendRecv kernels (47.7 % + 17.5 % of the eff report) */
	CHECK_STR(scell(&t, 0, "Class"), "comm");
	CHECK_STR(scell(&t, 0, "Library"), "nccl");
	stats_table_release(&t);
}

/* A trace without shapes: FLOPs unknown and the note says why. */
static void test_no_shapes(void)
{
	struct model m;
	struct stats_table t;
	int cg;

	model_init(&m);
	CHECK(load_input(&m, gstest_data("import/simple_add.json.gz")) == 0);
	CHECK_EQ_U64(m.op_shapes.n, 0);
	CHECK(stats_run(&m, "cuda_kern_eff", NULL, &t) == 0);
	CHECK(t.nrows > 0);
	cg = col(&t, "GFLOP");
	for (size_t r = 0; r < t.nrows; r++)
		CHECK(!stats_cell_valid(&t, r, (size_t)cg));
	CHECK_CONTAINS(t.note, "no operator input shapes");
	stats_table_release(&t);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_gemm_formulas),
	GSTEST(test_conv_formulas),
	GSTEST(test_attention_formulas),
	GSTEST(test_dtype_sizes),
	GSTEST(test_import_shapes),
	GSTEST(test_eff_report_sampled),
	GSTEST(test_eff_report_h100),
	GSTEST(test_eff_device_fallback),
	GSTEST(test_class_sum),
	GSTEST(test_no_shapes),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
