// gpu_kmetrics_cublas.cu - cuBLAS GEMMs for `profile --kernel-metrics` (t_kmetrics.sh):
//   gpu_kmetrics_cublas bf16   cublasGemmEx, bf16 in and out, FP32 accumulation
//                              (Hopper: wgmma kernels, the GMMA tensor pipe)
//   gpu_kmetrics_cublas fp32   cublasSgemm with the default math mode: TF32 off,
//                              so no tensor-core kernel may run
// Each GEMM (n = 8192) runs 3 times.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "%s:%d: cuBLAS status %d\n", __FILE__, __LINE__, (int)s_); exit(1); } } while (0)

int main(int argc, char **argv)
{
	const int n = 8192;
	int bf16 = argc > 1 && !strcmp(argv[1], "bf16");
	size_t elem = bf16 ? sizeof(__nv_bfloat16) : sizeof(float);
	void *a, *b, *c;
	cublasHandle_t h;
	float one = 1.0f, zero = 0.0f;

	if (argc < 2 || (!bf16 && strcmp(argv[1], "fp32"))) {
		fprintf(stderr, "usage: gpu_kmetrics_cublas bf16|fp32\n");
		return 2;
	}
	CK(cudaMalloc(&a, (size_t)n * n * elem));
	CK(cudaMalloc(&b, (size_t)n * n * elem));
	CK(cudaMalloc(&c, (size_t)n * n * elem));
	CK(cudaMemset(a, 0, (size_t)n * n * elem));
	CK(cudaMemset(b, 0, (size_t)n * n * elem));
	CB(cublasCreate(&h));
	/* the default: no TF32 for FP32 GEMMs (stated, in case the default changes) */
	CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
	for (int r = 0; r < 3; r++) {
		if (bf16)
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b,
					CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
					CUBLAS_GEMM_DEFAULT));
		else
			CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)a, n,
				       (const float *)b, n, &zero, (float *)c, n));
	}
	CK(cudaDeviceSynchronize());
	CB(cublasDestroy(h));
	printf("gpu_kmetrics_cublas %s: ok\n", argv[1]);
	return 0;
}
