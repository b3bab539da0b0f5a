/*
 * serial-copy - copies and compute serialised on one stream.
 *
 * Each step uploads a 64 MB batch, processes it and downloads the result
 * (from and to pinned memory).
 *
 * broken: upload, kernel and download of the whole batch are queued on one
 *         stream, so the copy engines idle while the kernel runs and the SMs
 *         idle while the copies run: the step costs upload + compute +
 *         download.
 * fixed:  the batch is cut into CHUNKS pieces issued alternately on two
 *         streams; the upload of one chunk, the kernel of another and the
 *         download of a third run at the same time (the H2D and D2H copy
 *         engines and the SMs are separate units), so the step costs about
 *         the slowest of the three.  Same bytes, same kernels.
 */
#include "zoo.h"

enum {
	N = 16 << 20,  /* floats per batch: 64 MB up, 64 MB down */
	ITERS = 300,   /* arithmetic per element: kernel time close to copy time */
	CHUNKS = 8,
};

__global__ void process(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float x = in[i];
	for (int k = 0; k < ITERS; k++)
		x = x * 0.999f + 0.25f * __sinf(x);
	out[i] = x;
}

/* Upload, process and download @n floats starting at @off on @st. */
static void run_piece(const float *h_in, float *h_out, float *d_in, float *d_out,
		      size_t off, int n, cudaStream_t st)
{
	CK(cudaMemcpyAsync(d_in + off, h_in + off, n * sizeof(float), cudaMemcpyHostToDevice, st));
	process<<<(n + 255) / 256, 256, 0, st>>>(d_in + off, d_out + off, n);
	CK(cudaMemcpyAsync(h_out + off, d_out + off, n * sizeof(float), cudaMemcpyDeviceToHost, st));
}

int main(int argc, char **argv)
{
	struct zoo z;
	zoo_init(&z, "serial-copy", argc, argv, 30);

	cudaStream_t st[2];
	cudaEvent_t begin, side_done;
	float *h_in, *h_out, *d_in, *d_out;

	for (int s = 0; s < 2; s++)
		CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&begin, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&side_done, cudaEventDisableTiming));
	CK(cudaHostAlloc((void **)&h_in, N * sizeof(float), cudaHostAllocDefault));
	CK(cudaHostAlloc((void **)&h_out, N * sizeof(float), cudaHostAllocDefault));
	CK(cudaMalloc((void **)&d_in, N * sizeof(float)));
	CK(cudaMalloc((void **)&d_out, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		h_in[i] = (float)(i % 977) * 1e-3f;

	for (int i = 0; i < z.total; i++) {
		zoo_step_begin(&z, i);
		if (!z.fixed) {
			/* BROKEN: everything in order on one stream. */
			run_piece(h_in, h_out, d_in, d_out, 0, N, st[0]);
		} else {
			/* FIXED: chunks alternate between two streams, so chunk
			 * c+1's upload overlaps chunk c's kernel and chunk c-1's
			 * download.  st[1] starts after st[0]'s previous step and
			 * st[0] waits for st[1] before the step ends. */
			CK(cudaEventRecord(begin, st[0]));
			CK(cudaStreamWaitEvent(st[1], begin, 0));
			for (int c = 0; c < CHUNKS; c++) {
				size_t off = (size_t)c * (N / CHUNKS);
				run_piece(h_in, h_out, d_in, d_out, off, N / CHUNKS, st[c % 2]);
			}
			CK(cudaEventRecord(side_done, st[1]));
			CK(cudaStreamWaitEvent(st[0], side_done, 0));
		}
		zoo_step_end(&z, i, st[0]);
	}
	CK(cudaGetLastError());
	zoo_finish(&z);
	return 0;
}
