/*
 * tensor-core - an FP32 matrix multiply that leaves the tensor cores idle.
 *
 * Each step multiplies two 8192 x 8192 FP32 matrices with cuBLAS.
 *
 * broken: compute type CUBLAS_COMPUTE_32F: full-precision FP32 on the CUDA
 *         cores, a fraction of what the GPU's tensor cores can do.
 * fixed:  compute type CUBLAS_COMPUTE_32F_FAST_TF32: the same FP32 inputs
 *         and outputs, but the products run on the tensor cores in TF32
 *         (10-bit mantissa, FP32 accumulation), what deep-learning
 *         frameworks use for FP32 training (torch: allow_tf32 /
 *         set_float32_matmul_precision("high")).  One argument differs.
 */
#include <cublas_v2.h>

#include "zoo.h"

enum { M = 8192 };

#define CKB(call)                                                            \
	do {                                                                 \
		cublasStatus_t s_ = (call);                                  \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                           \
			fprintf(stderr, "zoo: %s:%d: %s: cublas status %d\n", \
				__FILE__, __LINE__, #call, (int)s_);         \
			exit(1);                                             \
		}                                                            \
	} while (0)

__global__ void fill(float *x, size_t n, unsigned seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = (float)((i * 2654435761u + seed) % 1024) / 1024.0f - 0.5f;
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "tensor-core", argc, argv, 20);

	const size_t n = (size_t)M * M;
	const float alpha = 1.0f, beta = 0.0f;
	cublasHandle_t h;
	cudaStream_t st;
	float *a, *b, *c;
	/* BROKEN: CUBLAS_COMPUTE_32F, plain FP32 on the CUDA cores.
	 * FIXED: CUBLAS_COMPUTE_32F_FAST_TF32 lets cuBLAS use the tensor cores. */
	cublasComputeType_t compute = z.fixed ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

	CK(cudaStreamCreate(&st));
	CKB(cublasCreate(&h));
	CKB(cublasSetStream(h, st));
	CK(cudaMalloc((void **)&a, n * sizeof(float)));
	CK(cudaMalloc((void **)&b, n * sizeof(float)));
	CK(cudaMalloc((void **)&c, n * sizeof(float)));
	fill<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(a, n, 1);
	fill<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(b, n, 7);

	for (int i = 0; i < z.total; i++) {
		zoo_step_begin(&z, i);
		CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, M, M, &alpha,
				 a, CUDA_R_32F, M, b, CUDA_R_32F, M, &beta,
				 c, CUDA_R_32F, M, compute, CUBLAS_GEMM_DEFAULT));
		zoo_step_end(&z, i, st);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	CKB(cublasDestroy(h));
	return 0;
}
