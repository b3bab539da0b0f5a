/*
 * pageable - host-to-device copies from pageable memory.
 *
 * Each step uploads a 64 MB batch and runs a kernel on it.
 *
 * broken: the batch lives in malloc'd (pageable) memory.  The driver cannot
 *         DMA from pageable pages, so cudaMemcpy first copies the data into
 *         a small pinned staging buffer and then to the GPU, chunk by chunk,
 *         and the host is blocked for the whole copy.
 * fixed:  the batch lives in pinned memory (cudaHostAlloc), so the copy
 *         engine reads it directly at full PCIe speed, and cudaMemcpyAsync
 *         returns at once.
 */
#include "zoo.h"

enum { N = 16 << 20 }; /* floats per batch: 64 MB */

__global__ void scale_sum(const float *x, int n, float *out)
{
	float s = 0.0f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		s += 0.5f * x[i];
	atomicAdd(out, s);
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "pageable", argc, argv, 30);

	cudaStream_t st;
	float *host, *dev, *d_out;

	CK(cudaStreamCreate(&st));
	if (!z.fixed) {
		/* BROKEN: ordinary pageable memory. */
		host = (float *)malloc(N * sizeof(float));
		if (!host) {
			fprintf(stderr, "zoo: pageable: out of memory\n");
			return 1;
		}
	} else {
		/* FIXED: page-locked memory the copy engine can read directly. */
		CK(cudaHostAlloc((void **)&host, N * sizeof(float), cudaHostAllocDefault));
	}
	for (int i = 0; i < N; i++) /* touch every page before timing */
		host[i] = (float)(i % 1000) * 1e-3f;
	CK(cudaMalloc((void **)&dev, N * sizeof(float)));
	CK(cudaMalloc((void **)&d_out, sizeof(float)));

	for (int i = 0; i < z.total; i++) {
		zoo_step_begin(&z, i);
		if (!z.fixed)
			CK(cudaMemcpy(dev, host, N * sizeof(float), cudaMemcpyHostToDevice));
		else
			CK(cudaMemcpyAsync(dev, host, N * sizeof(float), cudaMemcpyHostToDevice, st));
		CK(cudaMemsetAsync(d_out, 0, sizeof(float), st));
		scale_sum<<<528, 256, 0, st>>>(dev, N, d_out);
		zoo_step_end(&z, i, st);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	return 0;
}
