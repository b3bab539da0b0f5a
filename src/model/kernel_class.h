/*
 * kernel_class.h - one classification of GPU kernels by name.
 *
 * Every part that needs to know what a kernel is (a GEMM? on tensor cores?
 * communication?) asks here, so that the importers, the timeline and the
 * rules agree.  The classifier reads only the kernel's name (often a full
 * C++ signature whose template arguments carry the data type) and optional
 * hints; it is a table of patterns, one row each, in kernel_class.c and
 * documented row for row in docs/kernels.md.
 *
 * Cost: a few hundred substring tests per name.  Callers classify each
 * distinct name once and cache the answer by string id.
 */
#ifndef GS_MODEL_KERNEL_CLASS_H
#define GS_MODEL_KERNEL_CLASS_H

#include <stdint.h>

enum kernel_op {
	KOP_OTHER = 0,
	KOP_GEMM,          /* matrix-matrix products (GEMM, batched GEMM, grouped GEMM) */
	KOP_CONV,          /* convolution (implicit GEMM, Winograd, FFT, direct) */
	KOP_ATTENTION,     /* fused attention (FlashAttention, FMHA, paged attention) */
	KOP_ELEMENTWISE,   /* pointwise maps, fills, casts in arithmetic kernels, random */
	KOP_REDUCTION,     /* reductions and normalisations (sum, mean, norm, loss, pool, gemv) */
	KOP_SOFTMAX,
	KOP_COPY,          /* copies, concatenation, transposes and layout changes */
	KOP_COMM,          /* communication: collectives, send/recv, expert-parallel dispatch/combine */
	KOP_INDEX,         /* sort, scan, top-k, gather/scatter, index/embedding lookup */
	KOP__N
};

enum kernel_lib {
	KLIB_OTHER = 0,
	KLIB_CUBLAS,       /* cuBLAS, cuBLASLt, nvjet */
	KLIB_CUTLASS,
	KLIB_CUDNN,
	KLIB_FLASH,        /* FlashAttention (Dao-AILab) */
	KLIB_FLASHINFER,
	KLIB_TRITON,       /* hand-written Triton kernels (not Inductor's) */
	KLIB_INDUCTOR,     /* torch.compile's generated Triton kernels */
	KLIB_NCCL,         /* NCCL and RCCL (same kernel names) */
	KLIB_NVSHMEM,
	KLIB_EP,           /* DeepEP and other expert-parallel dispatch/combine kernels */
	KLIB_ROCM_BLAS,    /* rocBLAS, hipBLASLt, Tensile, Composable Kernel */
	KLIB_MIOPEN,
	KLIB_TORCH,        /* PyTorch native (ATen, c10d) */
	KLIB_CUB,          /* CUB, Thrust, rocPRIM, hipCUB */
	KLIB_FBGEMM,
	KLIB_VLLM,
	KLIB_TRTLLM,       /* TensorRT-LLM kernels (also shipped inside FlashInfer) */
	KLIB_NVFUSER,
	KLIB__N
};

/* Ordered from the widest to the narrowest type; "lower" wins when a name shows several. */
enum kernel_prec {
	KPREC_UNKNOWN = 0,
	KPREC_FP64,
	KPREC_FP32,
	KPREC_TF32,
	KPREC_BF16,
	KPREC_FP16,
	KPREC_INT8,
	KPREC_FP8,
	KPREC_FP4,         /* fp4 and microscaling (mx) formats */
	KPREC__N
};

enum kernel_tc {
	KTC_UNKNOWN = 0,
	KTC_NO,
	KTC_YES,
};

/* Optional facts that sharpen the answer (all may be zero). */
struct kernel_hints {
	int collective;    /* the input tied the kernel to a collective (Kineto "Collective name") */
};

struct kernel_info {
	enum kernel_op op;
	enum kernel_lib lib;
	enum kernel_prec prec;
	enum kernel_tc tc;
	int op_row, lib_row; /* index of the table row that decided op / library, -1 = default */
};

/*
 * kernel_classify - classify the kernel called @name (NULL or "" gives all
 * unknown/other).  @hints may be NULL.  Fills @out; returns @out->op.
 */
enum kernel_op kernel_classify(const char *name, const struct kernel_hints *hints, struct kernel_info *out);

/* Bits of kernel_class_flags(); the first three have the values of analyze's KC_*. */
enum {
	KCF_COMM = 1u << 0,    /* communication */
	KCF_MATMUL = 1u << 1,  /* GEMM, convolution or attention */
	KCF_TC = 1u << 2,      /* tensor cores: yes */
	KCF_NO_TC = 1u << 3,   /* tensor cores: no (known) */
};
/* kernel_class_flags - the KCF_* bits of @name (see kernel_classify). */
unsigned kernel_class_flags(const char *name);

struct model;
struct trace_kernel;
/*
 * kernel_is_comm - is kernel @k of @m communication: the input's flag,
 * else its name (kernel_class_flags).  @cache (m->str.nr + 1 zeroed bytes)
 * keeps the answer per name, or NULL.  analyze has its own cache
 * (az_is_comm).
 */
int kernel_is_comm(const struct model *m, const struct trace_kernel *k, uint8_t *cache);

/*
 * kernel_collective - the collective a communication kernel runs, from its
 * name (NCCL and RCCL kernel names, custom all-reduce kernels):
 * "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send/recv",
 * "broadcast", "reduce", or NULL when the name says none (docs/kernels.md).
 */
const char *kernel_collective(const char *name);

/* Short names for printing and for tests/data/kernels/names.tsv ("gemm", "cublas", "bf16", "yes"). */
const char *kernel_op_name(enum kernel_op op);
const char *kernel_lib_name(enum kernel_lib lib);
const char *kernel_prec_name(enum kernel_prec prec);
const char *kernel_tc_name(enum kernel_tc tc);

#endif
