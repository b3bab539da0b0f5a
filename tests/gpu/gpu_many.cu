// gpu_many.cu - N empty kernel launches (default 50000) in batches of 256
// with a device synchronisation after each batch.  Prints host ns per launch.
// Used by t_many.sh (nothing dropped, exact count) and bench/overhead.
#include <cstdio>
#include <cstdlib>
#include <time.h>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static double now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000;
	empty_kernel<<<1, 1>>>();          // warm-up: context and module
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	double t0 = now_ns();
	for (long i = 1; i < n; i++) {
		empty_kernel<<<1, 1>>>();
		if (i % 256 == 0)
			cudaDeviceSynchronize();
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	double t1 = now_ns();
	printf("launches %ld ns_per_launch %.1f\n", n, (t1 - t0) / (double)(n - 1));
	return 0;
}
