// gpu_kmetrics.cu - kernels with known hardware-counter profiles, for
// `profile --kernel-metrics` (t_kmetrics.sh):
//   wmma_gemm_bf16   a tiled bf16 GEMM on the tensor cores (WMMA = HMMA pipe)
//   wmma_peak_bf16   back-to-back WMMA on registers: the HMMA pipe near its peak
//   sgemm_fp32       a tiled FP32 GEMM on the FMA pipe (no tensor cores, no TF32)
//   copy_f4          a 1 GiB device-to-device copy: DRAM-bound
//   axpy_f32         y = a*x + y over 2^28 floats: DRAM-bound
// Each kernel runs REPS times; the first instances are the profiled ones,
// the later copies are timed with events and give the measured copy
// bandwidth ("copy_bw_gbs"), to compare with the counters' DRAM throughput.
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

// 64x64 output tile per block of 4 warps (2x2), each warp 32x32 (2x2 fragments), K step 32.
#define TM 64
#define TN 64
#define TK 32

__global__ void wmma_gemm_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c, int n)
{
	__shared__ __nv_bfloat16 sa[TM][TK];
	__shared__ __nv_bfloat16 sb[TK][TN];
	int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
	int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::fill_fragment(acc[i][j], 0.0f);
	for (int k0 = 0; k0 < n; k0 += TK) {
		for (int e = threadIdx.x; e < TM * TK; e += blockDim.x) {
			int r = e / TK, k = e % TK;
			sa[r][k] = a[(size_t)(row0 + r) * n + k0 + k];
		}
		for (int e = threadIdx.x; e < TK * TN; e += blockDim.x) {
			int k = e / TN, col = e % TN;
			sb[k][col] = b[(size_t)(k0 + k) * n + col0 + col];
		}
		__syncthreads();
		for (int kk = 0; kk < TK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[2];
			for (int i = 0; i < 2; i++)
				wmma::load_matrix_sync(fa[i], &sa[wm * 32 + i * 16][kk], TK);
			for (int j = 0; j < 2; j++)
				wmma::load_matrix_sync(fb[j], &sb[kk][wn * 32 + j * 16], TN);
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 2; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads();
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::store_matrix_sync(c + (size_t)(row0 + wm * 32 + i * 16) * n + col0 + wn * 32 + j * 16,
						acc[i][j], n, wmma::mem_row_major);
}

// The same fragments multiplied again and again: nothing but the tensor pipe.
__global__ void wmma_peak_bf16(const __nv_bfloat16 *a, float *out, int iters)
{
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];

	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, a, 16);
	for (int j = 0; j < 4; j++)
		wmma::fill_fragment(acc[j], 0.0f);
	for (int i = 0; i < iters; i++)
		for (int j = 0; j < 4; j++)
			wmma::mma_sync(acc[j], fa, fb, acc[j]);
	for (int j = 1; j < 4; j++)
		for (int e = 0; e < acc[0].num_elements; e++)
			acc[0].x[e] += acc[j].x[e];
	wmma::store_matrix_sync(out + (size_t)(blockIdx.x * blockDim.x / 32 + threadIdx.x / 32) * 256,
				acc[0], 16, wmma::mem_row_major);
}

#define ST 16
__global__ void sgemm_fp32(const float *a, const float *b, float *c, int n)
{
	__shared__ float sa[ST][ST], sb[ST][ST];
	int row = blockIdx.y * ST + threadIdx.y, col = blockIdx.x * ST + threadIdx.x;
	float acc = 0.0f;

	for (int k0 = 0; k0 < n; k0 += ST) {
		sa[threadIdx.y][threadIdx.x] = a[(size_t)row * n + k0 + threadIdx.x];
		sb[threadIdx.y][threadIdx.x] = b[(size_t)(k0 + threadIdx.y) * n + col];
		__syncthreads();
#pragma unroll
		for (int k = 0; k < ST; k++)
			acc = fmaf(sa[threadIdx.y][k], sb[k][threadIdx.x], acc);
		__syncthreads();
	}
	c[(size_t)row * n + col] = acc;
}

__global__ void copy_f4(const float4 *src, float4 *dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

__global__ void axpy_f32(float a, const float *x, float *y, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}

__global__ void fill_bf16(__nv_bfloat16 *p, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16(v);
}

__global__ void fill_f32(float *p, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

int main(int argc, char **argv)
{
	const int reps = argc > 1 ? atoi(argv[1]) : 3;
	const int gn = 4096, sn = 2048;
	const size_t vn = (size_t)1 << 28;           // floats: 1 GiB per vector
	__nv_bfloat16 *ha, *hb;
	float *hc, *sa, *sb, *sc, *x, *y, *peak;
	cudaEvent_t e0, e1;
	int sms = 0;
	float ms = 0, h = 0;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&ha, (size_t)gn * gn * sizeof(*ha)));
	CK(cudaMalloc(&hb, (size_t)gn * gn * sizeof(*hb)));
	CK(cudaMalloc(&hc, (size_t)gn * gn * sizeof(*hc)));
	CK(cudaMalloc(&sa, (size_t)sn * sn * sizeof(float)));
	CK(cudaMalloc(&sb, (size_t)sn * sn * sizeof(float)));
	CK(cudaMalloc(&sc, (size_t)sn * sn * sizeof(float)));
	CK(cudaMalloc(&x, vn * sizeof(float)));
	CK(cudaMalloc(&y, vn * sizeof(float)));
	CK(cudaMalloc(&peak, (size_t)sms * 4 * 8 * 256 * sizeof(float)));   // one tile per warp
	fill_bf16<<<1024, 256>>>(ha, (size_t)gn * gn, 0.5f);
	fill_bf16<<<1024, 256>>>(hb, (size_t)gn * gn, 0.25f);
	fill_f32<<<1024, 256>>>(sa, (size_t)sn * sn, 0.5f);
	fill_f32<<<1024, 256>>>(sb, (size_t)sn * sn, 0.25f);
	fill_f32<<<4096, 256>>>(x, vn, 1.0f);
	fill_f32<<<4096, 256>>>(y, vn, 2.0f);
	CK(cudaDeviceSynchronize());

	for (int r = 0; r < reps; r++) {
		wmma_gemm_bf16<<<dim3(gn / TN, gn / TM), 128>>>(ha, hb, hc, gn);
		wmma_peak_bf16<<<sms * 4, 256>>>(ha, peak, 500);
		sgemm_fp32<<<dim3(sn / ST, sn / ST), dim3(ST, ST)>>>(sa, sb, sc, sn);
		copy_f4<<<sms * 8, 512>>>((const float4 *)x, (float4 *)y, vn / 4);
		axpy_f32<<<sms * 8, 512>>>(2.0f, x, y, vn);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	// results: bf16 0.5 * 0.25 summed over gn; fp32 likewise over sn
	CK(cudaMemcpy(&h, hc, sizeof(h), cudaMemcpyDeviceToHost));
	if (h != 0.125f * gn) {
		fprintf(stderr, "gpu_kmetrics: wmma result %g, expected %g\n", h, 0.125f * gn);
		return 1;
	}
	CK(cudaMemcpy(&h, sc, sizeof(h), cudaMemcpyDeviceToHost));
	if (h != 0.125f * sn) {
		fprintf(stderr, "gpu_kmetrics: sgemm result %g, expected %g\n", h, 0.125f * sn);
		return 1;
	}
	// the measured copy bandwidth (read + write), after the profiled instances
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventRecord(e0));
	for (int r = 0; r < 5; r++)
		copy_f4<<<sms * 8, 512>>>((const float4 *)x, (float4 *)y, vn / 4);
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	printf("copy_bw_gbs %.1f\n", 5.0 * 2.0 * vn * sizeof(float) / (ms / 1e3) / 1e9);
	printf("copy_bytes %zu\n", vn * sizeof(float));
	printf("gpu_kmetrics: ok\n");
	return 0;
}
