// gpu_profiler.cu - cudaProfilerStart/Stop around the middle part:
// 7 launches of before_kernel, 20 of inside_kernel (two windows of 10),
// 5 of between_kernel, 9 of after_kernel.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void before_kernel() {}
__global__ void inside_kernel() {}
__global__ void between_kernel() {}
__global__ void after_kernel() {}

int main()
{
	for (int i = 0; i < 7; i++)
		before_kernel<<<1, 32>>>();
	CK(cudaDeviceSynchronize());
	for (int w = 0; w < 2; w++) {
		CK(cudaProfilerStart());
		for (int i = 0; i < 10; i++)
			inside_kernel<<<2, 64>>>();
		CK(cudaDeviceSynchronize());
		CK(cudaProfilerStop());
		if (w == 0) {
			for (int i = 0; i < 5; i++)
				between_kernel<<<1, 32>>>();
			CK(cudaDeviceSynchronize());
		}
	}
	for (int i = 0; i < 9; i++)
		after_kernel<<<1, 32>>>();
	CK(cudaDeviceSynchronize());
	printf("gpu_profiler: ok\n");
	return 0;
}
