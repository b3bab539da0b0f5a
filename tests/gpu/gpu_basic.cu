// gpu_basic.cu - every kind of CUDA work gpuscope records, in known numbers.
// Built twice: static cudart (gpu_basic) and shared cudart (gpu_basic_shared).
// Expected counts are checked by t_basic.sh / t_basic_shared.sh.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

extern "C" __global__ void c_kernel(float *p, int n)   // not mangled
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 2.0f + 1.0f;
}

template <typename T, int N>
__global__ void tmpl_kernel(T *p, int n)               // mangled, templated
{
	__shared__ T tile[N];
	extern __shared__ T dyn[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x % N] = (T)i;
	dyn[threadIdx.x] = tile[(threadIdx.x + 1) % N];
	__syncthreads();
	if (i < n)
		p[i] += dyn[threadIdx.x];
}

__global__ void grid3d_kernel(int *out)
{
	if (threadIdx.x == 0 && threadIdx.y == 0)
		atomicAdd(out, 1);
}

__global__ void empty_kernel() {}

int main()
{
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	float *d_a, *d_b, *h_page, *h_pin;
	int *d_cnt, dev = -1;
	cudaStream_t s1, s2;
	cudaEvent_t ev;

	// trivial calls PyTorch makes all the time: not recorded by default
	for (int i = 0; i < 50; i++) {
		CK(cudaGetDevice(&dev));
		(void)cudaGetLastError();
		(void)cudaPeekAtLastError();
	}
	CK(cudaMalloc(&d_a, bytes));                     // memory: 3 device allocs
	CK(cudaMalloc(&d_b, bytes));
	CK(cudaMalloc(&d_cnt, sizeof(int)));
	CK(cudaMallocHost(&h_pin, bytes));               // 1 pinned alloc
	h_page = (float *)malloc(bytes);
	for (int i = 0; i < n; i++)
		h_page[i] = (float)i;
	memcpy(h_pin, h_page, bytes);
	CK(cudaStreamCreate(&s1));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreate(&ev));

	CK(cudaMemcpy(d_a, h_page, bytes, cudaMemcpyHostToDevice));             // HtoD pageable sync
	CK(cudaMemcpy(d_b, h_pin, bytes, cudaMemcpyHostToDevice));              // HtoD pinned sync
	CK(cudaMemset(d_cnt, 0, sizeof(int)));                                  // memset sync
	CK(cudaMemsetAsync(d_b, 0, bytes, s1));                                 // memset async

	c_kernel<<<(n + 255) / 256, 256>>>(d_a, n);                              // 1
	tmpl_kernel<float, 64><<<(n + 127) / 128, 128, 128 * sizeof(float), s1>>>(d_b, n); // 1
	grid3d_kernel<<<dim3(4, 4, 2), dim3(8, 8, 1), 0, s2>>>(d_cnt);         // 1
	for (int i = 0; i < 10; i++)
		empty_kernel<<<1, 1, 0, s1>>>();                                     // 10
	CK(cudaGetLastError());

	CK(cudaEventRecord(ev, s1));
	CK(cudaStreamWaitEvent(s2, ev, 0));
	(void)cudaEventQuery(ev);
	CK(cudaEventSynchronize(ev));                                           // sync: event
	CK(cudaMemcpyAsync(d_a, d_b, bytes, cudaMemcpyDeviceToDevice, s2));     // DtoD async
	CK(cudaMemcpyAsync(h_pin, d_a, bytes, cudaMemcpyDeviceToHost, s2));     // DtoH pinned async
	CK(cudaStreamSynchronize(s2));                                          // sync: stream
	CK(cudaMemcpy(h_page, d_a, bytes, cudaMemcpyDeviceToHost));             // DtoH pageable sync
	CK(cudaDeviceSynchronize());                                            // sync: context

	CK(cudaEventDestroy(ev));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFree(d_a));                                                      // 3 frees
	CK(cudaFree(d_b));
	CK(cudaFree(d_cnt));
	CK(cudaFreeHost(h_pin));                                                // 1 pinned free
	free(h_page);
	printf("gpu_basic: ok (device %d)\n", dev);
	return 0;
}
