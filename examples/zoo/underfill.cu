/*
 * underfill - a hot kernel launched with fewer blocks than the GPU has SMs.
 *
 * Each step runs a compute-heavy grid-stride kernel over 32 M elements.
 *
 * broken: the grid is hard-coded to 64 blocks of 256 threads (a size tuned
 *         once for a smaller GPU); an H200 has 132 SMs, so half of them get
 *         no work, and the busy ones hold only 8 warps each, too few to hide
 *         arithmetic latency.
 * fixed:  the grid is sized from the device: SMs x the blocks per SM the
 *         occupancy calculator allows, so every SM is full.  The kernel and
 *         the work are the same; only the launch configuration differs.
 */
#include "zoo.h"

enum {
	N = 32 << 20,
	ITERS = 64,
	THREADS = 256,
	BROKEN_BLOCKS = 64,
};

__global__ void hot(const float *in, float *out, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		float x = in[i];
		for (int k = 0; k < ITERS; k++)
			x = x * 0.999f + 0.25f * __sinf(x);
		out[i] = x;
	}
}

__global__ void fill(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = (float)(i % 1013) * 1e-3f;
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "underfill", argc, argv, 100);

	cudaStream_t st;
	float *in, *out;
	int blocks = BROKEN_BLOCKS;

	if (z.fixed) {
		/* FIXED: fill the machine: every SM, as many blocks as fit. */
		int dev, sms, per_sm;
		CK(cudaGetDevice(&dev));
		CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hot, THREADS, 0));
		blocks = sms * per_sm;
	}
	CK(cudaStreamCreate(&st));
	CK(cudaMalloc((void **)&in, N * sizeof(float)));
	CK(cudaMalloc((void **)&out, N * sizeof(float)));
	fill<<<(N + 255) / 256, 256, 0, st>>>(in, N);

	for (int i = 0; i < z.total; i++) {
		zoo_step_begin(&z, i);
		hot<<<blocks, THREADS, 0, st>>>(in, out, N);
		zoo_step_end(&z, i, st);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	fprintf(stderr, "zoo: underfill: %d blocks of %d threads\n", blocks, THREADS);
	return 0;
}
