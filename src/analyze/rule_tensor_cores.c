/*
 * rule_tensor_cores.c - tensor-cores-unused: GEMM and convolution kernels
 * whose names show a non-tensor-core path (sgemm, ffma, simt ...) taking a
 * large share of GPU time.
 *
 * The kernel classifier (model/kernel_class.c) says which kernels are
 * matrix work (GEMM, convolution, attention) and whether they run on the
 * tensor cores; only those known to run off them (FP32 without TF32, SIMT,
 * FFMA) count: bf16/fp16/fp8 kernels, FlashAttention, nvjet, Tensile
 * BBS/HHS never do, nor kernels whose path the name does not show.  Gain:
 * that time x (1 - 1/speedup) / analysed GPU time, the speedup from the
 * GPU datasheet table (model/gpu_facts.c).  GPM tensor activity, when the
 * report has it, is shown as evidence.
 */
#include "internal.h"
#include "../stats/stats.h"
#include "model/device_facts.h"
#include "model/gpu_facts.h"
#include "model/kernel_class.h"

#include <stdlib.h>
#include <string.h>

/* Speedup when nothing is known of the GPU: about the middle of the table's ratios (2 to 8). */
#define DEFAULT_SPEEDUP 4.0

/*
 * How the table row was found, for the evidence: by the device's name
 * (recorded, or itself filled from the table) or by its compute
 * capability and SM count.
 */
static void add_identity(struct strbuf *why, const struct model *m, const struct trace_device *d)
{
	const char *name = model_str(m, d->name_id);
	const char *nsrc = model_fact_source(m, d, MODEL_FACT_NAME);

	if (*name && !strncmp(nsrc, "recorded", 8)) {
		strbuf_addf(why, "by the recorded name '%s'", name);
		return;
	}
	strbuf_addf(why, "by cc %u.%u (%s) and %u SMs (%s)", d->cc_major, d->cc_minor,
		    model_fact_source(m, d, MODEL_FACT_CC), d->sm_count, model_fact_source(m, d, MODEL_FACT_SMS));
}

/*
 * The tensor-core speedup of FP32 matrix work on the report's GPU (the
 * device row with the highest compute capability), from the datasheet
 * table: TF32/FP32 where TF32 is at least 1.5x FP32 (flipping a flag is
 * enough), else BF16/FP32 (mixed precision).  @why gets where it came
 * from: "table: ROW ..." with how the row was found, or "default (GPU
 * unknown)".
 */
static double device_speedup(const struct az_ctx *c, struct strbuf *why, int *no_tf32)
{
	const struct trace_device *d = NULL;
	struct gpu_facts g;
	const struct gpu_fact_val *f32, *t32, *b16;
	const char *row;

	*no_tf32 = 0;
	for (size_t i = 0; i < c->m->devices.n; i++)
		if (!d || c->m->devices.v[i].cc_major > d->cc_major)
			d = &c->m->devices.v[i];
	if (!d || gpu_facts_lookup(model_str(c->m, d->name_id), d->cc_major, d->cc_minor, d->sm_count,
				   d->global_mem, &g)) {
		strbuf_addf(why, "default (GPU unknown: %s)",
			    !d ? "the input has no device row" : "not in the GPU table");
		return DEFAULT_SPEEDUP;
	}
	row = g.model ? g.model : "the rows that match";
	f32 = &g.f[GF_FP32];
	t32 = &g.f[GF_TF32];
	b16 = &g.f[GF_BF16];
	if (f32->src && f32->v > 0 && t32->src && t32->v > f32->v * 1.5) {
		strbuf_addf(why, "table: %s, dense tf32/fp32 = %g/%g TFLOP/s, GPU found ", row, t32->v, f32->v);
		add_identity(why, c->m, d);
		return t32->v / f32->v;
	}
	if (f32->src && f32->v > 0 && b16->src && b16->v > f32->v) {
		*no_tf32 = 1;
		strbuf_addf(why, "table: %s, dense bf16-or-fp16/fp32 = %g/%g TFLOP/s (TF32 gains little or nothing "
			    "here), GPU found ", row, b16->v, f32->v);
		add_identity(why, c->m, d);
		return b16->v / f32->v;
	}
	strbuf_addf(why, "default (GPU %s: no FP32/tensor-core peaks in the table)", g.model ? g.model : "unknown");
	return DEFAULT_SPEEDUP;
}

static uint32_t cc_major(const struct az_ctx *c)
{
	uint32_t cc = 0;

	for (size_t i = 0; i < c->m->devices.n; i++)
		if (c->m->devices.v[i].cc_major > cc)
			cc = c->m->devices.v[i].cc_major;
	return cc;
}

/* Does kernel @k run matrix work (GEMM, convolution, attention) off the tensor cores?  Cached per name. */
static int non_tc_matmul(const struct model *m, uint8_t *cache, uint32_t id, int *matmul)
{
	if (id >= m->str.nr) {
		*matmul = 0;
		return 0;
	}
	if (!cache[id]) {
		struct kernel_info ki;
		kernel_classify(model_str(m, id), NULL, &ki);
		cache[id] = (uint8_t)(0x80 | (ki.op == KOP_GEMM || ki.op == KOP_CONV || ki.op == KOP_ATTENTION ? 1 : 0) |
				      (ki.tc == KTC_NO ? 2 : 0) | (ki.tc == KTC_YES ? 4 : 0));
	}
	*matmul = cache[id] & 1;
	return (cache[id] & 3) == 3;
}

/*
 * Hardware counters decide where the name cannot (profile --kernel-metrics,
 * docs/cuda.md): a GEMM, convolution or attention kernel whose profiled
 * instances kept the tensor pipes busy under tensor-cores-unused.counter_pct
 * of their cycles runs on the CUDA cores, one above it on the tensor cores.
 * Fills @cache (non_tc_matmul's bits) for those names; returns how many
 * names the counters decided (*ntc on tensor cores, *nnon off them).
 */
static size_t counters_decide(const struct az_ctx *c, const struct az_rule *self, uint8_t *cache, size_t *ntc,
			      size_t *nnon)
{
	const struct model *m = c->m;
	double lim = az_param(c, self, "counter_pct");
	uint32_t key = UINT32_MAX;
	size_t n = 0;

	*ntc = *nnon = 0;
	for (size_t i = 0; i < m->kmetrics.n && key == UINT32_MAX; i++)
		if (!strcmp(model_str(m, m->kmetrics.v[i].key_id), "tensor_pipe_pct"))
			key = m->kmetrics.v[i].key_id;
	for (size_t i = 0; key != UINT32_MAX && i < m->kmetrics.n; i++) {
		const struct trace_kmetric *x = &m->kmetrics.v[i];
		uint32_t id = x->kernel_id;
		int matmul;
		if (x->key_id != key || !(x->flags & TRACE_KM_VALID) || id >= m->str.nr)
			continue;
		(void)non_tc_matmul(m, cache, id, &matmul);
		if (!matmul || (cache[id] & 0x40))
			continue; /* not matrix work, or already decided by its first instance */
		cache[id] = (uint8_t)(0x80 | 0x40 | 1 | (x->value < lim ? 2 : 4));
		n++;
		if (x->value < lim)
			(*nnon)++;
		else
			(*ntc)++;
	}
	return n;
}

/* The replay's transformation: kernels of the names found off the tensor cores run speedup times faster. */
struct tc_xf {
	const uint8_t *cache;      /* non_tc_matmul()'s bits per name, filled for the window's kernels */
	double speedup;
};

static uint64_t tc_op(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op, int kind,
		      uint32_t row, uint64_t dur)
{
	const struct tc_xf *x = ctx;
	uint32_t id;

	(void)rp;
	(void)op;
	if (kind != 0 || row >= c->m->kernels.n)
		return dur;
	id = c->m->kernels.v[row].name_id;
	if (id >= c->m->str.nr || (x->cache[id] & 3) != 3)
		return dur;
	return (uint64_t)((double)dur / x->speedup);
}

void rule_tensor_cores(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double speedup = az_param(c, self, "speedup");
	uint64_t gemm = 0, tc = 0, non = 0, nnon = 0;
	struct az_tally names = { 0 };
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain, tsum = 0;
	uint64_t tn = 0;
	char b1[64], b2[64], b3[64], name[AZ_NAME_MAX + 1];

	struct strbuf why = STRBUF_INIT;
	uint8_t *cache;
	uint64_t saved = 0;
	int replayed = 0;
	struct finding *f;
	int no_tf32 = 0, is_mm;
	size_t ncounted, ncounter_tc, ncounter_non;

	if (!c->has_gpu)
		return;
	if (speedup > 0)
		strbuf_addf(&why, "set by tensor-cores-unused.speedup");
	else
		speedup = device_speedup(c, &why, &no_tf32);
	if (speedup <= 1) {
		strbuf_release(&why);
		return;
	}
	cache = xcalloc(m->str.nr + 1, 1);
	ncounted = counters_decide(c, self, cache, &ncounter_tc, &ncounter_non);
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		unsigned cls;
		uint64_t d;
		if (!az_in_win(c, k->start))
			continue;
		cls = (unsigned)non_tc_matmul(m, cache, k->name_id, &is_mm);
		if (!is_mm)
			continue;
		d = k->end > k->start ? k->end - k->start : 0;
		gemm += d;
		if (!cls) { /* on tensor cores, or not known to be off them (fp64, unknown types) */
			tc += d;
			continue;
		}
		non += d;
		nnon++;
		az_tally_add(&names, k->name_id, d);
		if (nw < 3)
			where[nw++] = (struct interval){ k->start, k->end > k->start ? k->end : k->start + 1 };
	}
	gain = az_div((double)non * (1 - 1 / speedup), (double)c->unit_wall_ns);
	if (non && gain >= az_param(c, self, "min_gain")) {
		/* the replay: what the faster GEMMs save where the GPU, not the CPU, sets the pace */
		struct tc_xf tx = { cache, speedup };
		struct az_xform x = { 0 };
		double g;
		x.what = "the matrix kernels off the tensor cores run at the tensor-core rate";
		x.ctx = &tx;
		x.op = tc_op;
		g = az_replay_gain(c, &x, &saved);
		if (g >= 0)
			gain = g;
		replayed = g >= 0;
	}
	free(cache);
	if (!non || az_div((double)non, (double)c->busy_ns) < az_param(c, self, "min_share") ||
	    gain < az_param(c, self, "min_gain")) {
		strbuf_release(&why);
		return;
	}
	strbuf_addf(&ev, "assumed tensor-core speedup %.1fx (%s)\n", speedup, why.buf);
	if (ncounted)
		strbuf_addf(&ev, "hardware counters decided %zu kernel names: %zu with the tensor pipes busy under %g%% "
			    "of cycles (CUDA cores), %zu above (tensor cores); names decided the rest\n", ncounted,
			    ncounter_non, az_param(c, self, "counter_pct"), ncounter_tc);
	strbuf_release(&why);
	strbuf_addf(&ev, "GEMM/convolution/attention kernels: %s, of which %s (%llu launches, %.0f%% of GPU busy time) "
		    "known to run off the tensor cores (FP32 without TF32, SIMT) and %s on tensor cores or of unknown "
		    "path\n",
		    fmt_duration(b1, sizeof(b1), (double)gemm), fmt_duration(b2, sizeof(b2), (double)non),
		    (unsigned long long)nnon, az_div((double)non, (double)c->busy_ns) * 100,
		    fmt_duration(b3, sizeof(b3), (double)tc));
	for (size_t shown = 0; shown < 3 && shown < names.n; shown++) {
		int t = az_tally_top(&names);
		if (t < 0 || !names.ns[t])
			break;
		double pct;
		strbuf_addf(&ev, "non-tensor-core kernel: %s (%s",
			    kernel_label(name, sizeof(name), model_str(m, (uint32_t)names.key[t]), AZ_NAME_MAX),
			    fmt_duration(b1, sizeof(b1), (double)names.ns[t]));
		/* achieved throughput where the input gives shapes (stats cuda_kern_eff) */
		if (m->op_shapes.n && !stats_kernel_efficiency(m, (uint32_t)names.key[t], &pct))
			strbuf_addf(&ev, "; %.0f%% of this GPU's peak for its precision%s", pct,
				    pct >= 50 ? ": near what its units give, tensor cores are the way up"
					      : ": far from its units' peak");
		strbuf_addstr(&ev, ")\n");
		names.ns[t] = 0; /* shown: the next top is the next largest */
	}
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		if (az_in_win(c, x->time) && strstr(model_str(m, x->name_id), "tensor")) {
			tsum += x->value;
			tn++;
		}
	}
	if (tn)
		strbuf_addf(&ev, "sampled tensor-core activity: mean %.3g over %llu samples\n", tsum / (double)tn,
			    (unsigned long long)tn);
	f = az_add(c, "tensor-cores-unused", az_severity(gain), gain,
	       "Matrix multiplies/convolutions run without tensor cores",
	       "the replay with each GEMM/convolution/attention kernel known to run off the tensor cores shortened by "
	       "(1 - 1/speedup), over the analysed GPU time (without a graph: that kernel time x (1 - 1/speedup) / "
	       "analysed GPU time); speedup = the GPU's datasheet TF32/FP32 peak ratio (BF16/FP32 where TF32 gains "
	       "nothing; tensor-cores-unused.speedup overrides), which large GEMMs reach",
	       ev.buf,
	       c->pytorch && ((cc_major(c) && cc_major(c) < 8) || no_tf32)
	       ? "This GPU's tensor cores take FP16 only: run the model in mixed precision (torch.autocast(\"cuda\", "
		 "dtype=torch.float16) with torch.cuda.amp.GradScaler); keep matrix dimensions multiples of 8"
	       : c->pytorch
	       ? "Let FP32 matmuls use TF32 tensor cores (torch.set_float32_matmul_precision(\"high\"), "
		 "torch.backends.cudnn.allow_tf32 = True) or run the model in mixed precision (torch.autocast(\"cuda\", "
		 "dtype=torch.bfloat16)); keep matrix dimensions multiples of 8 (16 for FP8)"
	       : "Use tensor-core GEMMs: cublasGemmEx/cublasLt with CUBLAS_COMPUTE_32F_FAST_TF32 (or "
		 "cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH)), or BF16/FP16 inputs with FP32 accumulation; "
		 "cuDNN: CUDNN_TENSOR_OP_MATH; dimensions multiples of 8",
	       where, nw);
	if (replayed)
		az_replay_finding(c, f, "the matrix kernels off the tensor cores run at the tensor-core rate", saved);
	else
		az_model_finding(c, f, "the matrix kernels off the tensor cores run at the tensor-core rate");
	strbuf_release(&ev);
}
