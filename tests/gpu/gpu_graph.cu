// gpu_graph.cu - a CUDA graph (3 kernels + 1 memset) captured once, launched 5 times.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void graph_step(float *p, int n, float f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * f + 1.0f;
}

int main()
{
	const int n = 1 << 16;
	float *d;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;

	CK(cudaMalloc(&d, n * sizeof(float)));
	CK(cudaStreamCreate(&s));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemsetAsync(d, 0, n * sizeof(float), s));
	for (int k = 0; k < 3; k++)
		graph_step<<<n / 256, 256, 0, s>>>(d, n, 0.5f + k);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < 5; i++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
	printf("gpu_graph: ok\n");
	return 0;
}
