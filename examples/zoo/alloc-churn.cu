/*
 * alloc-churn - cudaMalloc and cudaFree inside the loop.
 *
 * Each step runs three kernels that need temporary buffers of 64, 32 and
 * 16 MB.
 *
 * broken: the temporaries are allocated with cudaMalloc and released with
 *         cudaFree every step.  Both are slow driver calls (they map and
 *         unmap GPU memory), and cudaFree waits for the GPU to finish, so
 *         the GPU idles while the host allocates for the next step.
 * fixed:  the temporaries are allocated once before the loop and reused
 *         (what a caching allocator such as PyTorch's does for you).
 */
#include "zoo.h"

enum { N = 16 << 20, ITERS = 24 };

static const size_t temp_bytes[3] = { 64u << 20, 32u << 20, 16u << 20 };

__global__ void stage(const float *in, int n_in, float *out, int n_out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n_out)
		return;
	float x = in[i % n_in];
	for (int k = 0; k < ITERS; k++)
		x = x * 0.999f + 0.25f * __sinf(x);
	out[i] = x;
}

/* The step's work: input -> t0 -> t1 -> t2 -> result. */
static void run_stages(const float *in, float *t[3], float *res, cudaStream_t st)
{
	int n0 = (int)(temp_bytes[0] / sizeof(float));
	int n1 = (int)(temp_bytes[1] / sizeof(float));
	int n2 = (int)(temp_bytes[2] / sizeof(float));
	stage<<<(n0 + 255) / 256, 256, 0, st>>>(in, N, t[0], n0);
	stage<<<(n1 + 255) / 256, 256, 0, st>>>(t[0], n0, t[1], n1);
	stage<<<(n2 + 255) / 256, 256, 0, st>>>(t[1], n1, t[2], n2);
	stage<<<(N + 255) / 256, 256, 0, st>>>(t[2], n2, res, N);
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "alloc-churn", argc, argv, 100);

	cudaStream_t st;
	float *in, *res, *t[3];

	CK(cudaStreamCreate(&st));
	CK(cudaMalloc((void **)&in, N * sizeof(float)));
	CK(cudaMalloc((void **)&res, N * sizeof(float)));
	CK(cudaMemsetAsync(in, 0, N * sizeof(float), st));
	if (z.fixed) /* FIXED: allocate once, reuse every step. */
		for (int k = 0; k < 3; k++)
			CK(cudaMalloc((void **)&t[k], temp_bytes[k]));

	for (int i = 0; i < z.total; i++) {
		zoo_step_begin(&z, i);
		if (!z.fixed) /* BROKEN: fresh temporaries every step. */
			for (int k = 0; k < 3; k++)
				CK(cudaMalloc((void **)&t[k], temp_bytes[k]));
		run_stages(in, t, res, st);
		if (!z.fixed) /* BROKEN: cudaFree waits for the GPU to go idle. */
			for (int k = 0; k < 3; k++)
				CK(cudaFree(t[k]));
		zoo_step_end(&z, i, st);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	if (z.fixed)
		for (int k = 0; k < 3; k++)
			CK(cudaFree(t[k]));
	return 0;
}
