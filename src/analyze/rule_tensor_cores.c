/*
 * rule_tensor_cores.c - tensor-cores-unused: GEMM and convolution kernels
 * whose names show a non-tensor-core path (sgemm, ffma, simt ...) taking a
 * large share of GPU time.
 *
 * A kernel is GEMM-like when its name holds gemm, matmul, conv..., xmma,
 * cutlass, cublas; it is a tensor-core kernel when the name also holds a
 * tensor-core data type or instruction (tf32, bf16, f16, hmma, wgmma, gmma,
 * imma, tensorop, 16816, 1688 ...).  Gain: non-tensor-core GEMM time x
 * (1 - 1 / tensor-cores-unused.speedup) / analysed GPU time.  GPM tensor
 * activity, when the report has it, is shown as evidence.
 */
#include "internal.h"

#include <string.h>

/*
 * Peak dense TF32 tensor-core throughput over FP32 CUDA-core throughput of
 * the report's GPU: A100 156/19.5 = 8, H100/H200 495/67 = 7.4, B200 ~8;
 * GA10x/AD10x have TF32 equal to FP32, so only BF16/FP16 help (~2x).
 */
static double device_speedup(const struct az_ctx *c)
{
	const struct trace_device *d = NULL;

	for (size_t i = 0; i < c->m->devices.n; i++)
		if (!d || c->m->devices.v[i].cc_major > d->cc_major)
			d = &c->m->devices.v[i];
	if (!d || !d->cc_major)
		return 4;
	if (d->cc_major == 8)
		return d->cc_minor == 0 ? 8 : 2;
	if (d->cc_major == 9)
		return 7.4;
	if (d->cc_major >= 10)
		return 8;
	return 4; /* Volta/Turing: FP16 tensor cores only, with mixed precision */
}

static uint32_t cc_major(const struct az_ctx *c)
{
	uint32_t cc = 0;

	for (size_t i = 0; i < c->m->devices.n; i++)
		if (c->m->devices.v[i].cc_major > cc)
			cc = c->m->devices.v[i].cc_major;
	return cc;
}

static int has_cc(const struct az_ctx *c)
{
	return cc_major(c) != 0;
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

	if (speedup <= 0)
		speedup = device_speedup(c);
	if (!c->has_gpu || speedup <= 1)
		return;
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		unsigned cls;
		uint64_t d;
		if (!az_in_win(c, k->start))
			continue;
		cls = az_kernel_class(c, k->name_id);
		if (!(cls & KC_GEMM))
			continue;
		d = k->end > k->start ? k->end - k->start : 0;
		gemm += d;
		if (cls & KC_TC) {
			tc += d;
			continue;
		}
		non += d;
		nnon++;
		az_tally_add(&names, k->name_id, d);
		if (nw < 3)
			where[nw++] = (struct interval){ k->start, k->end > k->start ? k->end : k->start + 1 };
	}
	if (!non || az_div((double)non, (double)c->busy_ns) < az_param(c, self, "min_share"))
		return;
	gain = az_div((double)non * (1 - 1 / speedup), (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	strbuf_addf(&ev, "assumed tensor-core speedup %.1fx (%s)\n", speedup,
		    az_param(c, self, "speedup") > 0 ? "tensor-cores-unused.speedup"
		    : has_cc(c) ? "peak tensor-core/FP32 ratio of this GPU" : "GPU model not in the report");
	strbuf_addf(&ev, "GEMM/convolution kernels: %s, of which %s (%llu launches, %.0f%% of GPU busy time) on "
		    "non-tensor-core paths and %s on tensor cores\n",
		    fmt_duration(b1, sizeof(b1), (double)gemm), fmt_duration(b2, sizeof(b2), (double)non),
		    (unsigned long long)nnon, az_div((double)non, (double)c->busy_ns) * 100,
		    fmt_duration(b3, sizeof(b3), (double)tc));
	for (size_t shown = 0; shown < 3 && shown < names.n; shown++) {
		int t = az_tally_top(&names);
		if (t < 0 || !names.ns[t])
			break;
		strbuf_addf(&ev, "non-tensor-core kernel: %s (%s)\n",
			    kernel_label(name, sizeof(name), model_str(m, (uint32_t)names.key[t]), AZ_NAME_MAX),
			    fmt_duration(b1, sizeof(b1), (double)names.ns[t]));
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
	az_add(c, "tensor-cores-unused", az_severity(gain), gain,
	       "Matrix multiplies/convolutions run without tensor cores",
	       "non-tensor-core GEMM/convolution kernel time x (1 - 1/speedup) / analysed GPU time, speedup = the "
	       "GPU's peak TF32 tensor-core / FP32 ratio (tensor-cores-unused.speedup), which large GEMMs reach",
	       ev.buf,
	       c->pytorch && cc_major(c) && cc_major(c) < 8
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
	strbuf_release(&ev);
}
