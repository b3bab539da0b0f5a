/*
 * kernel_class.c - the kernel name table (see kernel_class.h, docs/kernels.md).
 *
 * The name is lower-cased once.  Then:
 *  1. the rows of k_rows[] are tried in order; each row that matches may
 *     decide some of op, library, precision, tensor cores; a field is decided
 *     by the first matching row that sets it, so specific rows come first;
 *  2. precision is the type a family decoder read (Tensile, nvjet), else
 *     the narrowest data type named anywhere in the name (k_types[]:
 *     template arguments, parameter types, dtype codes), else the type a
 *     matching row implies (sgemm: fp32);
 *  3. a field no row decided falls back: op other, library other, tensor
 *     cores from the op and precision (see tc_default()).
 */
#include "kernel_class.h"
#include "model.h"

#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UNSET 0xff

enum how {
	SUB,    /* anywhere */
	PRE,    /* at the start, after an optional "void " */
	WORD,   /* anywhere, not preceded by a letter */
	NOALPHA, /* anywhere, neither preceded nor followed by a letter */
};

struct k_row {
	const char *pat;
	unsigned char how, op, lib, prec, tc;
	void (*decode)(const char *low, struct kernel_info *ki);
};

static void decode_tensile(const char *low, struct kernel_info *ki);
static void decode_nvjet(const char *low, struct kernel_info *ki);

#define R(p, h, o, l, pr, t) { p, h, o, l, pr, t, NULL }
#define OP(p, h, o) R(p, h, o, UNSET, UNSET, UNSET)
#define LIB(p, h, l) R(p, h, UNSET, l, UNSET, UNSET)
#define TC(p, h, t) R(p, h, UNSET, UNSET, UNSET, t)
#define PREC(p, h, pr) R(p, h, UNSET, UNSET, pr, UNSET)

/*
 * One row per pattern, in priority order.  docs/kernels.md lists the same
 * rows in the same order with the reason for each; keep them in step.
 */
static const struct k_row k_rows[] = {
	/* -- communication: first, so no compute word in a collective's name wins -- */
	R("nccldevkernel", SUB, KOP_COMM, KLIB_NCCL, UNSET, KTC_NO),
	R("ncclkernel", SUB, KOP_COMM, KLIB_NCCL, UNSET, KTC_NO),
	R("nccl", PRE, KOP_COMM, KLIB_NCCL, UNSET, KTC_NO),
	R("rccl", WORD, KOP_COMM, KLIB_NCCL, UNSET, KTC_NO),
	R("hccl", PRE, KOP_COMM, KLIB_OTHER, UNSET, KTC_NO),
	R("nvshmem", SUB, KOP_COMM, KLIB_NVSHMEM, UNSET, KTC_NO),
	R("deep_ep", SUB, KOP_COMM, KLIB_EP, UNSET, KTC_NO),
	R("deepep", SUB, KOP_COMM, KLIB_EP, UNSET, KTC_NO),
	R("pplx", WORD, KOP_COMM, KLIB_EP, UNSET, KTC_NO),
	R("multimem", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("cross_device_reduce", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("all_reduce", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("allreduce", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("all_gather", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("allgather", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("reduce_scatter", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("reducescatter", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("all_to_all", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("alltoall", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),
	R("sendrecv", SUB, KOP_COMM, UNSET, UNSET, KTC_NO),

	/* -- generated code: the fused-op list in the name is not what the kernel does -- */
	R("triton_poi", PRE, KOP_ELEMENTWISE, KLIB_INDUCTOR, UNSET, KTC_NO),
	R("triton_per", PRE, KOP_REDUCTION, KLIB_INDUCTOR, UNSET, KTC_NO),
	R("triton_red", PRE, KOP_REDUCTION, KLIB_INDUCTOR, UNSET, KTC_NO),
	R("triton_tem", PRE, KOP_GEMM, KLIB_INDUCTOR, UNSET, UNSET),
	R("triton_", PRE, KOP_OTHER, KLIB_INDUCTOR, UNSET, UNSET),
	R("nvfuser_pointwise", SUB, KOP_ELEMENTWISE, KLIB_NVFUSER, UNSET, KTC_NO),
	R("nvfuser_reduction", SUB, KOP_REDUCTION, KLIB_NVFUSER, UNSET, KTC_NO),
	R("nvfuser_inner_persistent", SUB, KOP_REDUCTION, KLIB_NVFUSER, UNSET, KTC_NO),
	R("nvfuser_outer_persistent", SUB, KOP_REDUCTION, KLIB_NVFUSER, UNSET, KTC_NO),
	R("nvfuser_matmul", SUB, KOP_GEMM, KLIB_NVFUSER, UNSET, UNSET),
	R("nvfuser_", SUB, KOP_OTHER, KLIB_NVFUSER, UNSET, UNSET),

	/* -- namespaces that name the library even when its templates use another's types -- */
	LIB("tensorrt_llm", SUB, KLIB_TRTLLM),
	LIB("moe::dev::", WORD, KLIB_TRTLLM),
	LIB("vllm::", WORD, KLIB_VLLM),

	/* -- attention -- */
	R("flash_fwd", SUB, KOP_ATTENTION, KLIB_FLASH, UNSET, UNSET),
	R("flash_bwd", SUB, KOP_ATTENTION, KLIB_FLASH, UNSET, UNSET),
	R("flash_attn", SUB, KOP_ATTENTION, KLIB_FLASH, UNSET, UNSET),
	R("flash::", SUB, KOP_ATTENTION, KLIB_FLASH, UNSET, UNSET),
	LIB("flashinfer", SUB, KLIB_FLASHINFER),
	R("fmhasm1", SUB, KOP_ATTENTION, KLIB_TRTLLM, UNSET, UNSET),
	R("fmha", SUB, KOP_ATTENTION, UNSET, UNSET, UNSET),
	OP("reshape_and_cache", SUB, KOP_COPY),
	OP("paged_attention", SUB, KOP_ATTENTION),
	OP("unified_attention", SUB, KOP_ATTENTION),
	OP("attn_fwd", WORD, KOP_ATTENTION),
	OP("attn_bwd", WORD, KOP_ATTENTION),
	OP("attention", SUB, KOP_ATTENTION),
	OP("reduce_segments", WORD, KOP_REDUCTION),

	/* -- library namespaces and prefixes (library only, unless the family fixes more) -- */
	R("cijk_", PRE, KOP_GEMM, KLIB_ROCM_BLAS, UNSET, UNSET),
	LIB("_zn2ck", PRE, KLIB_ROCM_BLAS),
	LIB("_zn7ck_tile", PRE, KLIB_ROCM_BLAS),
	LIB("ck::", WORD, KLIB_ROCM_BLAS),
	LIB("ck_tile::", WORD, KLIB_ROCM_BLAS),
	LIB("rocblas", SUB, KLIB_ROCM_BLAS),
	LIB("hipblaslt", SUB, KLIB_ROCM_BLAS),
	R("igemm_", PRE, KOP_CONV, KLIB_MIOPEN, UNSET, UNSET),
	LIB("miopen", SUB, KLIB_MIOPEN),
	R("subtensorop", PRE, KOP_ELEMENTWISE, KLIB_MIOPEN, UNSET, KTC_NO),
	R("batched_transpose_", PRE, KOP_COPY, KLIB_MIOPEN, UNSET, KTC_NO),
	R("transpose_nchw2cnhw", PRE, KOP_COPY, KLIB_MIOPEN, UNSET, KTC_NO),
	R("transpose_cnhw2nchw", PRE, KOP_COPY, KLIB_MIOPEN, UNSET, KTC_NO),
	R("im2d2col", PRE, KOP_COPY, KLIB_MIOPEN, UNSET, KTC_NO),
	R("nvjet_", PRE, KOP_GEMM, KLIB_CUBLAS, UNSET, UNSET),
	LIB("cudnn", SUB, KLIB_CUDNN),
	LIB("cutlass", SUB, KLIB_CUTLASS),
	LIB("cublas", SUB, KLIB_CUBLAS),
	LIB("maxwell_", PRE, KLIB_CUBLAS),
	LIB("volta_", PRE, KLIB_CUBLAS),
	LIB("turing_", PRE, KLIB_CUBLAS),
	LIB("ampere_", PRE, KLIB_CUBLAS),
	LIB("sm80_xmma_gemm", PRE, KLIB_CUBLAS),
	LIB("sm90_xmma_gemm", PRE, KLIB_CUBLAS),
	LIB("wgrad_alg0_engine", PRE, KLIB_CUDNN),
	LIB("fbgemm", SUB, KLIB_FBGEMM),
	LIB("split_embedding", PRE, KLIB_FBGEMM),
	LIB("dense_embedding", PRE, KLIB_FBGEMM),
	LIB("bounds_check_indices", PRE, KLIB_FBGEMM),
	LIB("permute_pooled_embs", PRE, KLIB_FBGEMM),
	R("bmm_", PRE, KOP_GEMM, KLIB_TRTLLM, UNSET, KTC_YES),
	LIB("cub::", SUB, KLIB_CUB),
	LIB("thrust::", SUB, KLIB_CUB),
	LIB("rocprim", SUB, KLIB_CUB),
	LIB("hipcub", SUB, KLIB_CUB),
	R("_matmul_ogs_", PRE, KOP_GEMM, KLIB_TRITON, UNSET, UNSET),
	R("_finalize_matmul_scatter", PRE, KOP_REDUCTION, KLIB_TRITON, UNSET, KTC_NO),
	R("_topk_forward", PRE, KOP_INDEX, KLIB_TRITON, UNSET, KTC_NO),
	R("_sum_bitmatrix_rows", PRE, KOP_REDUCTION, KLIB_TRITON, UNSET, KTC_NO),
	R("_combined_routing_memset", PRE, KOP_ELEMENTWISE, KLIB_TRITON, UNSET, KTC_NO),
	R("_combined_routing", PRE, KOP_INDEX, KLIB_TRITON, UNSET, KTC_NO),
	LIB("at::native::", SUB, KLIB_TORCH),
	LIB("at::cuda::", SUB, KLIB_TORCH),
	LIB("at_cuda_detail::", SUB, KLIB_TORCH),
	LIB("c10d::", SUB, KLIB_TORCH),
	LIB("softmax_warp_", SUB, KLIB_TORCH),
	LIB("multi_tensor_apply_kernel", SUB, KLIB_TORCH),
	LIB("c10::", SUB, KLIB_TORCH),

	/* -- tensor-core evidence in the name -- */
	TC("ffma", SUB, KTC_NO),
	TC("simt", SUB, KTC_NO),
	TC("tensorop", SUB, KTC_YES),
	TC("wmma", SUB, KTC_YES),
	TC("hmma", SUB, KTC_YES),
	TC("imma", SUB, KTC_YES),
	TC("gmma", SUB, KTC_YES),
	TC("warpgroupsize", SUB, KTC_YES),
	TC("tensor16x8", SUB, KTC_YES),
	TC("s16816", SUB, KTC_YES),
	TC("h16816", SUB, KTC_YES),
	TC("i16832", SUB, KTC_YES),
	TC("s1688", SUB, KTC_YES),
	TC("h1688", SUB, KTC_YES),
	TC("i8816", SUB, KTC_YES),
	TC("h884", SUB, KTC_YES),
	TC("s884", SUB, KTC_YES),
	TC("xdl", SUB, KTC_YES),
	TC("mfma", SUB, KTC_YES),
	TC("gtcx", SUB, KTC_YES),
	PREC("tensorop_s1688gemm", SUB, KPREC_TF32),
	PREC("tensorop_s1688fprop", SUB, KPREC_TF32),
	PREC("tensorop_s1688dgrad", SUB, KPREC_TF32),
	PREC("tensorop_s1688wgrad", SUB, KPREC_TF32),

	/* -- operations of library-internal helper kernels -- */
	OP("routing", SUB, KOP_INDEX),
	OP("histogram", SUB, KOP_INDEX),
	OP("rotary", SUB, KOP_ELEMENTWISE),
	OP("upsample", SUB, KOP_ELEMENTWISE),
	OP("finalize", SUB, KOP_REDUCTION),
	OP("splitkreduce", SUB, KOP_REDUCTION),
	OP("reducesplitk", SUB, KOP_REDUCTION),
	OP("reduce_wgrad", SUB, KOP_REDUCTION),
	OP("epilogue::", SUB, KOP_ELEMENTWISE),
	OP("computeoffsets", SUB, KOP_OTHER),
	OP("computewgradboffsets", SUB, KOP_OTHER),
	OP("computewgradsplitkoffsets", SUB, KOP_OTHER),
	OP("computeboffsets", SUB, KOP_OTHER),
	OP("init_device_workspace", SUB, KOP_OTHER),
	OP("scalepackedtensor", SUB, KOP_ELEMENTWISE),
	OP("bn_fw", SUB, KOP_REDUCTION),
	OP("bn_bw", SUB, KOP_REDUCTION),
	OP("batchnorm", SUB, KOP_REDUCTION),

	/* -- convolution before GEMM (implicit-GEMM convolutions name both) and before index ("indexed") -- */
	OP("fprop", SUB, KOP_CONV),
	OP("dgrad", SUB, KOP_CONV),
	OP("wgrad", SUB, KOP_CONV),
	OP("wrw", WORD, KOP_CONV),
	OP("convolution", SUB, KOP_CONV),
	OP("convolve", SUB, KOP_CONV),
	OP("conv_", SUB, KOP_CONV),
	OP("conv1d", SUB, KOP_CONV),
	OP("conv2d", SUB, KOP_CONV),
	OP("conv3d", SUB, KOP_CONV),
	OP("dconv", SUB, KOP_CONV),
	R("scudnn", SUB, KOP_CONV, UNSET, KPREC_FP32, KTC_NO),
	OP("winograd", SUB, KOP_CONV),
	OP("fft2d", SUB, KOP_CONV),
	OP("dgrad_engine", SUB, KOP_CONV),
	OP("wgrad_alg", SUB, KOP_CONV),

	/* -- matrix products; BLAS level 1/2 are reductions (memory-bound, no tensor cores) -- */
	R("gemmk1", SUB, KOP_GEMM, UNSET, UNSET, KTC_NO),
	R("gemmsn", SUB, KOP_GEMM, UNSET, UNSET, KTC_NO),
	R("gemv", SUB, KOP_REDUCTION, UNSET, UNSET, KTC_NO),
	R("dot_kernel", WORD, KOP_REDUCTION, UNSET, UNSET, KTC_NO),
	R("scal_kernel", WORD, KOP_ELEMENTWISE, UNSET, UNSET, KTC_NO),
	R("sgemm", SUB, KOP_GEMM, KLIB_CUBLAS, KPREC_FP32, KTC_NO),
	R("cgemm", SUB, KOP_GEMM, KLIB_CUBLAS, KPREC_FP32, KTC_NO),
	R("dgemm", SUB, KOP_GEMM, KLIB_CUBLAS, KPREC_FP64, UNSET),
	R("zgemm", SUB, KOP_GEMM, KLIB_CUBLAS, KPREC_FP64, UNSET),
	R("hgemm", SUB, KOP_GEMM, KLIB_CUBLAS, KPREC_FP16, UNSET),
	R("xmma_gemm", SUB, KOP_GEMM, KLIB_CUBLAS, UNSET, UNSET),
	OP("gemm", WORD, KOP_GEMM),
	OP("matmul", SUB, KOP_GEMM),
	OP("bmm", WORD, KOP_GEMM),

	/* -- normalisation and softmax (random "normal" and dropout first: they are elementwise) -- */
	OP("softmax", SUB, KOP_SOFTMAX),
	OP("distribution_", SUB, KOP_ELEMENTWISE),
	OP("dropout", SUB, KOP_ELEMENTWISE),
	OP("layernorm", SUB, KOP_REDUCTION),
	OP("groupnorm", SUB, KOP_REDUCTION),
	OP("rmsnorm", SUB, KOP_REDUCTION),
	OP("instancenorm", SUB, KOP_REDUCTION),
	OP("norm", NOALPHA, KOP_REDUCTION), /* not "normal" (random, __normal_iterator) */
	OP("moments", SUB, KOP_REDUCTION),
	OP("gammabeta", SUB, KOP_REDUCTION),
	OP("fusedparams", SUB, KOP_REDUCTION),
	OP("internalgradients", SUB, KOP_REDUCTION),

	/* -- copies and layout changes -- */
	OP("direct_copy", SUB, KOP_COPY),
	OP("_copy_kernel", SUB, KOP_COPY),
	OP("catarray", SUB, KOP_COPY),
	OP("copy_page_indices", SUB, KOP_COPY),
	OP("nchwtonhwc", SUB, KOP_COPY),
	OP("nhwctonchw", SUB, KOP_COPY),
	OP("transpose", SUB, KOP_COPY),
	OP("permute", SUB, KOP_COPY),
	OP("im2col", SUB, KOP_COPY),
	OP("memcpy", SUB, KOP_COPY),

	/* -- sort, scan, index -- */
	OP("elementwise_kernel_with_index", SUB, KOP_ELEMENTWISE),
	OP("radixsort", SUB, KOP_INDEX),
	OP("sort", SUB, KOP_INDEX),
	OP("scan", SUB, KOP_INDEX),
	OP("topk", SUB, KOP_INDEX),
	OP("partition", SUB, KOP_INDEX),
	OP("compact", SUB, KOP_INDEX),
	OP("bucketize", SUB, KOP_INDEX),
	OP("scatter", SUB, KOP_INDEX),
	OP("gather", SUB, KOP_INDEX),
	OP("embedding", SUB, KOP_INDEX),
	OP("embs", SUB, KOP_INDEX),
	OP("index", SUB, KOP_INDEX),
	OP("offsets_range", SUB, KOP_INDEX),

	/* -- the rest of the operations -- */
	OP("reduce", SUB, KOP_REDUCTION),
	OP("loss", SUB, KOP_REDUCTION),
	OP("pool", SUB, KOP_REDUCTION),
	OP("sum", SUB, KOP_REDUCTION),
	OP("mean", WORD, KOP_REDUCTION),
	OP("elementwise", SUB, KOP_ELEMENTWISE),
	OP("functor", SUB, KOP_ELEMENTWISE),
	OP("pointwise", SUB, KOP_ELEMENTWISE),
	OP("multi_tensor_apply", SUB, KOP_ELEMENTWISE),
	OP("fill", WORD, KOP_ELEMENTWISE),
	OP("memset", SUB, KOP_ELEMENTWISE),
	OP("quant", SUB, KOP_ELEMENTWISE),
	OP("_to_float", SUB, KOP_ELEMENTWISE),
	OP("axpy", SUB, KOP_ELEMENTWISE),
};

/*
 * Data types named in a kernel name.  WORD tokens must not follow a letter
 * ("f16" is not the end of "bf16", "float" not the end of "bfloat");
 * NOALPHA tokens must not be followed by a letter either.
 */
static const struct k_type {
	const char *pat;
	unsigned char how;
	unsigned char prec;
} k_types[] = {
	{ "mxfp4", SUB, KPREC_FP4 }, { "nvfp4", SUB, KPREC_FP4 }, { "e2m1", SUB, KPREC_FP4 },
	{ "fp4", WORD, KPREC_FP4 },
	{ "e4m3", SUB, KPREC_FP8 }, { "e5m2", SUB, KPREC_FP8 }, { "fp8", SUB, KPREC_FP8 },
	{ "float8", SUB, KPREC_FP8 },
	{ "int8", WORD, KPREC_INT8 }, { "imma", SUB, KPREC_INT8 }, { "i8816", SUB, KPREC_INT8 },
	{ "df16b", SUB, KPREC_BF16 }, /* Itanium mangling of std::bfloat16_t */
	{ "df16_", SUB, KPREC_FP16 }, /* ... of _Float16 */
	{ "bf16", SUB, KPREC_BF16 }, { "bfloat", SUB, KPREC_BF16 }, { "bhalf", SUB, KPREC_BF16 },
	{ "fp16", SUB, KPREC_FP16 }, { "f16", WORD, KPREC_FP16 }, { "half", WORD, KPREC_FP16 },
	{ "float16", WORD, KPREC_FP16 }, { "h884", SUB, KPREC_FP16 }, { "h1688", SUB, KPREC_FP16 },
	{ "h16816", SUB, KPREC_FP16 },
	{ "tf32", SUB, KPREC_TF32 }, { "tfloat32", SUB, KPREC_TF32 }, { "xf32", SUB, KPREC_TF32 },
	{ "fp32", SUB, KPREC_FP32 }, { "f32", WORD, KPREC_FP32 }, { "float", WORD, KPREC_FP32 },
	{ "fp64", SUB, KPREC_FP64 }, { "f64", WORD, KPREC_FP64 }, { "double", NOALPHA, KPREC_FP64 },
};

/* Words that contain a type name but are not a data type. */
static const char *const k_not_types[] = {
	"fp8kvcachedatatype",  /* vLLM's Fp8KVCacheDataType enum: a mode, the tensors are the template types */
};

/* Position of @pat in @low under @how, or NULL. */
static const char *match(const char *low, const char *pat, unsigned how)
{
	const char *s = low, *p;
	size_t n = strlen(pat);

	if (how == PRE) {
		if (!strncmp(s, "void ", 5))
			s += 5;
		return strncmp(s, pat, n) ? NULL : s;
	}
	for (p = strstr(s, pat); p; p = strstr(p + 1, pat)) {
		if (how == SUB)
			return p;
		if (p > low && isalpha((unsigned char)p[-1]))
			continue;
		if (how == NOALPHA && isalpha((unsigned char)p[n]))
			continue;
		return p;
	}
	return NULL;
}

/* The narrowest data type named in @low (KPREC_UNKNOWN when none). */
static enum kernel_prec scan_types(char *low)
{
	unsigned best = KPREC_UNKNOWN;

	for (size_t i = 0; i < ARRAY_SIZE(k_not_types); i++)
		for (char *p = strstr(low, k_not_types[i]); p; p = strstr(p, k_not_types[i]))
			memset(p, '_', strlen(k_not_types[i]));
	for (size_t i = 0; i < ARRAY_SIZE(k_types); i++) {
		const struct k_type *t = &k_types[i];
		if (t->prec > best && match(low, t->pat, t->how))
			best = t->prec;
	}
	return (enum kernel_prec)best;
}

/*
 * Tensile (rocBLAS/hipBLASLt) names: Cijk_<A index>_<B index>_<types>_...
 * The types code's first letter is the input type (S fp32, D fp64, H fp16,
 * B bf16, X xf32, I int8, F8/B8 fp8); MI<m>x<n>x<k> names the matrix-core
 * (MFMA) instruction the kernel is built on, its absence a vector-ALU kernel.
 */
static void decode_tensile(const char *low, struct kernel_info *ki)
{
	const char *p = low;
	int field = 0;

	if (!strncmp(p, "void ", 5))
		p += 5;
	while (*p && field < 3)
		if (*p++ == '_')
			field++;
	if (field == 3 && ki->prec == (enum kernel_prec)UNSET) {
		if (!strncmp(p, "f8", 2) || !strncmp(p, "b8", 2))
			ki->prec = KPREC_FP8;
		else if (!strncmp(p, "i8", 2) || *p == 'i')
			ki->prec = KPREC_INT8;
		else if (*p == 's')
			ki->prec = KPREC_FP32;
		else if (*p == 'd')
			ki->prec = KPREC_FP64;
		else if (*p == 'h')
			ki->prec = KPREC_FP16;
		else if (*p == 'b')
			ki->prec = KPREC_BF16;
		else if (*p == 'x')
			ki->prec = KPREC_TF32;
	}
	if (ki->tc == (enum kernel_tc)UNSET) {
		const char *m = strstr(low, "_mi");
		ki->tc = m && isdigit((unsigned char)m[3]) ? KTC_YES : KTC_NO;
	}
}

/*
 * cuBLAS nvjet names: nvjet_[smNN_]<A><compute><C>_...: the first letter is
 * the input type (h fp16, t bf16, s fp32); nvjet kernels are the tensor-core
 * (TMA/wgmma) GEMMs of cuBLAS 12.8+; an fp32 one may or may not use TF32.
 */
static void decode_nvjet(const char *low, struct kernel_info *ki)
{
	const char *p = strstr(low, "nvjet_") + 6;

	if (!strncmp(p, "sm", 2) && isdigit((unsigned char)p[2]))
		p = strchr(p, '_') ? strchr(p, '_') + 1 : p;
	if (ki->prec == (enum kernel_prec)UNSET) {
		if (*p == 'h')
			ki->prec = KPREC_FP16;
		else if (*p == 't')
			ki->prec = KPREC_BF16;
		else if (*p == 's')
			ki->prec = KPREC_FP32;
	}
	if (ki->tc == (enum kernel_tc)UNSET && *p != 's')
		ki->tc = KTC_YES;
}

/*
 * Tensor cores when no row said: matrix work (GEMM, convolution, attention)
 * in a tensor-core type runs on them (the libraries pick tensor-core paths
 * for these types), in FP32 it does not (FP32 without TF32 runs on CUDA
 * cores), FP64 and unknown types stay unknown; the other operations never
 * use them, except "other", which is unknown.
 */
static enum kernel_tc tc_default(enum kernel_op op, enum kernel_prec prec)
{
	if (op == KOP_GEMM || op == KOP_CONV || op == KOP_ATTENTION) {
		if (prec >= KPREC_TF32)
			return KTC_YES;
		if (prec == KPREC_FP32)
			return KTC_NO;
		return KTC_UNKNOWN;
	}
	return op == KOP_OTHER ? KTC_UNKNOWN : KTC_NO;
}

enum kernel_op kernel_classify(const char *name, const struct kernel_hints *hints, struct kernel_info *out)
{
	char stack[1024], *low;
	size_t n = name ? strlen(name) : 0;
	unsigned row_prec = UNSET;

	out->op = (enum kernel_op)UNSET;
	out->lib = (enum kernel_lib)UNSET;
	out->prec = (enum kernel_prec)UNSET;
	out->tc = (enum kernel_tc)UNSET;
	out->op_row = out->lib_row = -1;
	low = n < sizeof(stack) ? stack : xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = 0;
	if (hints && hints->collective) {
		out->op = KOP_COMM;
		out->tc = KTC_NO;
	}
	for (size_t i = 0; n && i < ARRAY_SIZE(k_rows); i++) {
		const struct k_row *r = &k_rows[i];
		if (!match(low, r->pat, r->how))
			continue;
		if (r->op != UNSET && out->op == (enum kernel_op)UNSET) {
			out->op = (enum kernel_op)r->op;
			out->op_row = (int)i;
		}
		if (r->lib != UNSET && out->lib == (enum kernel_lib)UNSET) {
			out->lib = (enum kernel_lib)r->lib;
			out->lib_row = (int)i;
		}
		if (r->prec != UNSET && row_prec == UNSET)
			row_prec = r->prec;
		if (r->tc != UNSET && out->tc == (enum kernel_tc)UNSET)
			out->tc = (enum kernel_tc)r->tc;
		if (!strcmp(r->pat, "cijk_"))
			decode_tensile(low, out);
		else if (!strcmp(r->pat, "nvjet_"))
			decode_nvjet(low, out);
	}
	if (out->op == (enum kernel_op)UNSET)
		out->op = KOP_OTHER;
	if (out->lib == (enum kernel_lib)UNSET)
		out->lib = KLIB_OTHER;
	if (out->prec == (enum kernel_prec)UNSET) /* a decoder's type first, then the type words */
		out->prec = n ? scan_types(low) : KPREC_UNKNOWN;
	if (out->prec == KPREC_UNKNOWN && row_prec != UNSET) /* then the family's type (sgemm: fp32) */
		out->prec = (enum kernel_prec)row_prec;
	if (out->tc == (enum kernel_tc)UNSET)
		out->tc = tc_default(out->op, out->prec);
	if (low != stack)
		free(low);
	return out->op;
}

unsigned kernel_class_flags(const char *name)
{
	struct kernel_info ki;
	unsigned f = 0;

	kernel_classify(name, NULL, &ki);
	if (ki.op == KOP_COMM)
		f |= KCF_COMM;
	if (ki.op == KOP_GEMM || ki.op == KOP_CONV || ki.op == KOP_ATTENTION)
		f |= KCF_MATMUL;
	if (ki.tc == KTC_YES)
		f |= KCF_TC;
	else if (ki.tc == KTC_NO)
		f |= KCF_NO_TC;
	return f;
}

const char *kernel_op_name(enum kernel_op op)
{
	static const char *const n[KOP__N] = {
		"other", "gemm", "conv", "attention", "elementwise", "reduction", "softmax", "copy", "comm", "index",
	};
	return (unsigned)op < KOP__N ? n[op] : "other";
}

const char *kernel_lib_name(enum kernel_lib lib)
{
	static const char *const n[KLIB__N] = {
		"other", "cublas", "cutlass", "cudnn", "flash-attention", "flashinfer", "triton", "inductor", "nccl",
		"nvshmem", "expert-parallel", "rocm-blas", "miopen", "pytorch", "cub", "fbgemm", "vllm", "tensorrt-llm",
		"nvfuser",
	};
	return (unsigned)lib < KLIB__N ? n[lib] : "other";
}

const char *kernel_prec_name(enum kernel_prec prec)
{
	static const char *const n[KPREC__N] = {
		"-", "fp64", "fp32", "tf32", "bf16", "fp16", "int8", "fp8", "fp4",
	};
	return (unsigned)prec < KPREC__N ? n[prec] : "-";
}

const char *kernel_tc_name(enum kernel_tc tc)
{
	return tc == KTC_YES ? "yes" : tc == KTC_NO ? "no" : "-";
}

/* Case-insensitive substring test. */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (; *s; s++)
		if (!strncasecmp(s, w, n))
			return 1;
	return 0;
}

const char *kernel_collective(const char *name)
{
	/* the longer names first: ReduceScatter and AllReduce before Reduce */
	static const struct { const char *word, *coll; } t[] = {
		{ "reducescatter", "reduce-scatter" }, { "reduce_scatter", "reduce-scatter" },
		{ "allreduce", "all-reduce" }, { "all_reduce", "all-reduce" },
		{ "allgather", "all-gather" }, { "all_gather", "all-gather" },
		{ "alltoall", "all-to-all" }, { "all_to_all", "all-to-all" },
		{ "sendrecv", "send/recv" }, { "_send", "send/recv" }, { "_recv", "send/recv" },
		{ "broadcast", "broadcast" }, { "_reduce", "reduce" },
	};

	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (has_word(name, t[i].word))
			return t[i].coll;
	return NULL;
}

int kernel_is_comm(const struct model *m, const struct trace_kernel *k, uint8_t *cache)
{
	if (k->flags & TRACE_GPU_COMM)
		return 1;
	if (k->name_id >= m->str.nr)
		return 0;
	if (!cache)
		return (kernel_class_flags(model_str(m, k->name_id)) & KCF_COMM) != 0;
	if (!cache[k->name_id])
		cache[k->name_id] = (kernel_class_flags(model_str(m, k->name_id)) & KCF_COMM) ? 2 : 1;
	return cache[k->name_id] == 2;
}
