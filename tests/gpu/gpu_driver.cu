// gpu_driver.cu - kernels launched through the driver API (cuLaunchKernel,
// cuLaunchKernelEx: the way Triton and NCCL launch) next to runtime launches.
// 6 runtime launches, 5 cuLaunchKernel, 3 cuLaunchKernelEx.
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "%s:%d: CUresult %d\n", __FILE__, __LINE__, (int)r_); exit(1); } } while (0)

__global__ void rt_kernel(int *p) { atomicAdd(p, 1); }
__global__ void drv_kernel(int *p) { atomicAdd(p, 10); }

int main()
{
	int *d, h = 0;
	cudaFunction_t f;
	CK(cudaMalloc(&d, sizeof(int)));
	CK(cudaMemset(d, 0, sizeof(int)));
	CK(cudaGetFuncBySymbol(&f, (const void *)drv_kernel));
	for (int i = 0; i < 6; i++)
		rt_kernel<<<1, 32>>>(d);
	void *args[] = { &d };
	for (int i = 0; i < 5; i++)
		CU(cuLaunchKernel((CUfunction)f, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL));
	CUlaunchConfig cfg = {};
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = 64; cfg.blockDimY = cfg.blockDimZ = 1;
	for (int i = 0; i < 3; i++)
		CU(cuLaunchKernelEx(&cfg, (CUfunction)f, args, NULL));
	CK(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	printf("gpu_driver: sum %d (expect %d)\n", h, 6 * 32 + 5 * 320 + 3 * 640);
	return h == 6 * 32 + 5 * 320 + 3 * 640 ? 0 : 1;
}
