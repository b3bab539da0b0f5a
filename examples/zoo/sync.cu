/*
 * sync - over-synchronisation.
 *
 * Each step the host prepares the next batch (CPU work), uploads it, runs a
 * few GPU kernels and computes a loss.
 *
 * broken: the loop reads the loss back with a blocking cudaMemcpy every step
 *         ("print the loss"), so the host waits for the GPU to drain, and
 *         the GPU then idles while the host prepares the next batch: CPU
 *         time and GPU time add up.
 * fixed:  the loss is copied asynchronously into pinned memory and read a
 *         few steps later; the host prepares batch i+1 while the GPU runs
 *         step i, so the step costs max(CPU, GPU) instead of CPU + GPU.
 */
#include "zoo.h"

enum {
	N = 2 << 20,    /* floats per batch (8 MB) */
	LAYERS = 16,    /* kernels per step */
	ITERS = 300,    /* arithmetic per element per kernel */
	SLOTS = 2,      /* pinned input buffers (double buffering) */
	LAG = 2,        /* fixed: read the loss this many steps late */
};

__global__ void layer(const float *in, float *out, int n, float w)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float x = in[i];
	for (int k = 0; k < ITERS; k++)
		x = x * w + 0.5f * __sinf(x);
	out[i] = x;
}

__global__ void loss_sum(const float *x, int n, float *loss)
{
	__shared__ float part[256];
	float s = 0.0f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		s += x[i] * x[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(loss, part[0]);
}

/* The CPU side of a step: generate and normalise the next batch. */
static void prepare_batch(float *dst, int n, unsigned step)
{
	unsigned s = 2654435761u * (step + 1);
	for (int i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		dst[i] = (float)(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
	}
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "sync", argc, argv, 60);

	cudaStream_t st;
	float *host_in[SLOTS], *d_a, *d_b, *d_loss, *host_loss;
	cudaEvent_t uploaded[SLOTS], loss_ready[LAG + 1];
	double sum = 0.0;

	CK(cudaStreamCreate(&st));
	for (int s = 0; s < SLOTS; s++) {
		CK(cudaHostAlloc((void **)&host_in[s], N * sizeof(float), cudaHostAllocDefault));
		CK(cudaEventCreateWithFlags(&uploaded[s], cudaEventDisableTiming));
	}
	for (int s = 0; s <= LAG; s++)
		CK(cudaEventCreateWithFlags(&loss_ready[s], cudaEventDisableTiming));
	CK(cudaHostAlloc((void **)&host_loss, (LAG + 1) * sizeof(float), cudaHostAllocDefault));
	CK(cudaMalloc((void **)&d_a, N * sizeof(float)));
	CK(cudaMalloc((void **)&d_b, N * sizeof(float)));
	CK(cudaMalloc((void **)&d_loss, (LAG + 1) * sizeof(float)));

	for (int i = 0; i < z.total; i++) {
		int slot = i % SLOTS, ls = i % (LAG + 1);
		zoo_step_begin(&z, i);

		/* Do not overwrite a pinned buffer the GPU may still be reading. */
		CK(cudaEventSynchronize(uploaded[slot]));
		prepare_batch(host_in[slot], N, (unsigned)i);
		CK(cudaMemcpyAsync(d_a, host_in[slot], N * sizeof(float), cudaMemcpyHostToDevice, st));
		CK(cudaEventRecord(uploaded[slot], st));
		for (int l = 0; l < LAYERS; l++) {
			float *in = l % 2 ? d_b : d_a, *out = l % 2 ? d_a : d_b;
			layer<<<(N + 255) / 256, 256, 0, st>>>(in, out, N, 0.999f);
		}
		CK(cudaMemsetAsync(&d_loss[ls], 0, sizeof(float), st));
		loss_sum<<<264, 256, 0, st>>>(d_a, N, &d_loss[ls]);

		if (!z.fixed) {
			/* BROKEN: a blocking read of this step's loss: the host waits
			 * here for every kernel above before it can prepare the next
			 * batch. */
			float loss;
			CK(cudaMemcpy(&loss, &d_loss[ls], sizeof(float), cudaMemcpyDeviceToHost));
			sum += loss;
		} else {
			/* FIXED: queue the copy, and read the loss of step i-LAG,
			 * which has long finished, without stalling the pipeline. */
			CK(cudaMemcpyAsync(&host_loss[ls], &d_loss[ls], sizeof(float),
					   cudaMemcpyDeviceToHost, st));
			CK(cudaEventRecord(loss_ready[ls], st));
			if (i >= LAG) {
				int old = (i - LAG) % (LAG + 1);
				CK(cudaEventSynchronize(loss_ready[old]));
				sum += host_loss[old];
			}
		}
		zoo_step_end(&z, i, st);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	(void)sum; /* a real loop would log it */
	return 0;
}
