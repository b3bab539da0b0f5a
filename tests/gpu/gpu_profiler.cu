// gpu_profiler.cu - a middle part to capture, marked three ways:
//   gpu_profiler          cudaProfilerStart/Stop around each window
//   gpu_profiler nvtx     NVTX ranges named "capture" around each window
//   gpu_profiler timed    no marks: 3 s pauses before and after the middle
//                         part, for --delay and --duration
// 7 launches of before_kernel, 20 of inside_kernel (two windows of 10; one
// window when timed), 5 of between_kernel, 9 of after_kernel.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void before_kernel() {}
__global__ void inside_kernel() {}
__global__ void between_kernel() {}
__global__ void after_kernel() {}

enum mode { PROFILER_API, NVTX, TIMED };

static void pause_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

static void window(enum mode m, int begin)
{
	if (m == PROFILER_API)
		CK(begin ? cudaProfilerStart() : cudaProfilerStop());
	else if (m == NVTX && begin)
		nvtxRangePushA("capture");
	else if (m == NVTX)
		nvtxRangePop();
	else
		pause_s(3.0);
}

int main(int argc, char **argv)
{
	enum mode m = argc > 1 && !strcmp(argv[1], "nvtx") ? NVTX
		    : argc > 1 && !strcmp(argv[1], "timed") ? TIMED : PROFILER_API;
	int windows = m == TIMED ? 1 : 2;

	for (int i = 0; i < 7; i++)
		before_kernel<<<1, 32>>>();
	CK(cudaDeviceSynchronize());
	for (int w = 0; w < windows; w++) {
		window(m, 1);
		for (int i = 0; i < 20 / windows; i++)
			inside_kernel<<<2, 64>>>();
		CK(cudaDeviceSynchronize());
		window(m, 0);
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
