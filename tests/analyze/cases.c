/*
 * cases.c - synthetic reports that show one pathology each with a known
 * answer, and their fixed twins (see cases.h).
 */
#include "cases.h"
#include "synth.h"

#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define T0 (1000 * MS)      /* reports start at 1 s of CLOCK_MONOTONIC */
#define MAIN 100            /* pid and main tid */

static const struct synth_kernel K_GEMM = { "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", 0, 7, 264, 256, 0 };
static const struct synth_kernel K_ELT = { "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>", 0, 7, 528, 128, 0 };

static int open_py(struct synth *s, const char *path)
{
	if (synth_open(s, path, MAIN, "python3 train.py") < 0)
		return -1;
	synth_thread(s, MAIN, "python3");
	synth_device(s, 0, 132, 143771ull << 20, 1980);
	return 0;
}

/*
 * dataloader: 100 steps of 20 ms read() on the main thread, then one 10 ms
 * kernel.  Idle 2/3, all of it I/O; period 30 ms.
 * fixed: a loader thread reads while the GPU computes; the main thread
 * launches ahead, kernels back to back.
 */
static int c_dataloader(const char *path, int fixed)
{
	struct synth s;

	if (open_py(&s, path) < 0)
		return -1;
	synth_thread(&s, MAIN + 1, "loader");
	for (int i = 0; i < 100; i++) {
		if (!fixed) {
			uint64_t t = T0 + (uint64_t)i * 30 * MS;
			synth_osrt(&s, MAIN, OSRT_READ, t, t + 20 * MS);
			synth_kernel(&s, MAIN, t + 20 * MS, t + 20 * MS + 5 * US, t + 20 * MS + 10 * US,
				     t + 30 * MS, &K_GEMM);
		} else {
			uint64_t t = T0 + (uint64_t)i * 10 * MS;
			synth_osrt(&s, MAIN + 1, OSRT_READ, t, t + 8 * MS);
			synth_kernel(&s, MAIN, t > 10 * US ? t - 5 * MS : t, t - 5 * MS + 5 * US, t + 1 * US,
				     t + 10 * MS, &K_GEMM);
		}
	}
	return synth_close(&s);
}

/*
 * launch-bound: 20000 kernels of 3 us, one launched every 10 us by a
 * cudaLaunchKernel of 8 us; the queue is empty between them (7 us gaps):
 * gain (7 - 0.1) / 10.
 * fixed: the same kernels replayed from CUDA graphs, 1 us apart.
 */
static int c_launch(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel k = { "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>>", 0, 7, 132, 128, 0 };

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 20000; i++) {
		if (!fixed) {
			uint64_t t = T0 + (uint64_t)i * 10 * US;
			synth_kernel(&s, MAIN, t, t + 8 * US, t + 9 * US, t + 12 * US, &k);
		} else {
			uint64_t t = T0 + (uint64_t)i * 4 * US;
			k.flags = TRACE_GPU_GRAPH;
			if (i % 100 == 0)
				synth_api(&s, MAIN, "cudaGraphLaunch", t - 20 * US, t - 10 * US);
			synth_kernel(&s, MAIN, 0, 0, t, t + 3 * US, &k);
		}
	}
	return synth_close(&s);
}

/*
 * sync (as the zoo's sync.cu): per step the host prepares a batch on the CPU
 * (3 ms), uploads it, launches 16 kernels of 200 us and a loss kernel, then
 * reads the loss back with a blocking cudaMemcpy.  The GPU idles while the
 * next batch is prepared, right after the blocking read: gain = min(3 ms,
 * ~3.2 ms blocked) / ~6.4 ms per step ~ 0.47.
 * fixed: the loss is read asynchronously; preparation overlaps the GPU.
 */
static int c_sync(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel loss = { "loss_sum(const float*, int, float*)", 0, 7, 264, 256, 0 };
	struct synth_kernel layer = { "layer(const float*, float*, int, float)", 0, 7, 8192, 256, 0 };
	uint64_t t = T0, gpu = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 60; i++) {
		uint64_t a, cs;
		synth_api(&s, MAIN, "cudaEventSynchronize", t, t + 2 * US);
		t += 3 * MS; /* prepare_batch: CPU only */
		cs = t + 10 * US > gpu ? t + 10 * US : gpu;
		synth_copy(&s, MAIN, "cudaMemcpyAsync", t, t + 5 * US, cs, cs + 168 * US, COPY_HTOD, MEM_PINNED,
			   MEM_DEVICE, 8u << 20, 7);
		gpu = cs + 168 * US;
		t += 6 * US;
		for (int j = 0; j < 17; j++) {
			uint64_t ks = t + 8 * US > gpu ? t + 8 * US : gpu;
			uint64_t d = j < 16 ? 200 * US : 100 * US;
			synth_kernel(&s, MAIN, t, t + 5 * US, ks, ks + d, j < 16 ? &layer : &loss);
			gpu = ks + d;
			t += 6 * US;
		}
		if (!fixed) {
			a = t;
			synth_copy(&s, MAIN, "cudaMemcpy", a, gpu + 12 * US, gpu + 1 * US, gpu + 3 * US, COPY_DTOH,
				   MEM_DEVICE, MEM_PAGEABLE, 4, 7);
			gpu += 3 * US;
			t = gpu + 12 * US;
		} else {
			synth_copy(&s, MAIN, "cudaMemcpyAsync", t, t + 4 * US, gpu + 1 * US, gpu + 3 * US, COPY_DTOH,
				   MEM_DEVICE, MEM_PINNED, 4, 7);
			gpu += 3 * US;
			t += 5 * US;
		}
	}
	return synth_close(&s);
}

/*
 * dataloader-cpu (as the zoo's dataloader.py): the training loop transforms
 * each batch on the CPU (20 ms, no I/O call, no NVTX) and copies it from
 * pageable memory; the GPU step (4 ms) runs while the CPU already prepares
 * the next batch.  Idle ~16.4 ms of ~20.4 ms per step, all before the
 * host-to-device copy: data loading.
 * fixed: workers prepare batches; the main thread only waits briefly.
 */
static int c_dataloader_cpu(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0, gpu = T0;
	uint64_t prep = fixed ? 50 * US : 20 * MS;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 30; i++) {
		uint64_t cs;
		if (fixed)
			synth_osrt(&s, MAIN, OSRT_POLL, t, t + prep);
		t += prep;
		cs = t + 210 * US > gpu ? t + 210 * US : gpu;
		synth_copy(&s, MAIN, "cudaMemcpyAsync", t, t + 200 * US, cs, cs + 150 * US, COPY_HTOD,
			   fixed ? MEM_PINNED : MEM_PAGEABLE, MEM_DEVICE, 3538944, 7);
		gpu = cs + 150 * US;
		t += 210 * US;
		for (int j = 0; j < 20; j++) {
			uint64_t ks = t + 8 * US > gpu ? t + 8 * US : gpu;
			synth_kernel(&s, MAIN, t, t + 5 * US, ks, ks + 200 * US, &K_GEMM);
			gpu = ks + 200 * US;
			t += 10 * US;
		}
	}
	return synth_close(&s);
}

/*
 * pageable: 50 steps: cudaMemcpy of 64 MiB from pageable memory (2 ms
 * staging, then 10 ms on the GPU at 6.7 GB/s), then a 5 ms kernel.
 * Gain: (2 ms + 10 ms x (1 - 1.34/10)) / 17 ms ~ 0.63 (no pinned copy to
 * measure: 50 GB/s assumed for a cc 9.0 GPU).
 * fixed: pinned copies at 25 GB/s on a copy stream, overlapped with compute.
 */
static int c_pageable(const char *path, int fixed)
{
	struct synth s;
	uint64_t bytes = 64ull << 20;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		if (!fixed) {
			uint64_t t = T0 + (uint64_t)i * 17020 * US;
			synth_copy(&s, MAIN, "cudaMemcpy", t, t + 12 * MS, t + 2 * MS, t + 12 * MS, COPY_HTOD,
				   MEM_PAGEABLE, MEM_DEVICE, bytes, 7);
			synth_kernel(&s, MAIN, t + 12 * MS, t + 12 * MS + 5 * US, t + 12 * MS + 10 * US,
				     t + 17010 * US, &K_GEMM);
		} else {
			uint64_t t = T0 + (uint64_t)i * 5 * MS;
			synth_copy(&s, MAIN, "cudaMemcpyAsync", t - 1 * MS, t - 1 * MS + 8 * US, t + 100 * US,
				   t + 100 * US + 2684 * US, COPY_HTOD, MEM_PINNED, MEM_DEVICE, bytes, 8);
			synth_kernel(&s, MAIN, t - 1 * MS, t - 1 * MS + 5 * US, t, t + 5 * MS - 1 * US, &K_GEMM);
		}
	}
	return synth_close(&s);
}

/*
 * serial-copy (as the zoo's serial-copy.cu): per step a pinned 64 MiB upload
 * (1.3 ms), a 1.12 ms kernel and a 64 MiB download (1.3 ms) in order on one
 * stream.  Pipelined, the step costs max(compute, 1.3 + 0.65 x 1.3) =
 * 2.145 ms: gain (3.72 - 2.145) / 3.72 ~ 0.42.
 * fixed: 8 chunks on two streams: uploads back to back (slowed to 0.2 ms by
 * the concurrent downloads), each chunk's kernel and download after it.
 */
static int c_serial(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel k = { "scale_kernel(const float*, float*, int)", 0, 7, 65536, 256, 0 };
	uint64_t bytes = 64ull << 20, t = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		uint64_t a = T0 - 1 * MS + (uint64_t)i * 20 * US;
		if (!fixed) {
			synth_copy(&s, MAIN, "cudaMemcpyAsync", a, a + 5 * US, t, t + 1300 * US, COPY_HTOD,
				   MEM_PINNED, MEM_DEVICE, bytes, 7);
			synth_kernel(&s, MAIN, a + 6 * US, a + 9 * US, t + 1300 * US, t + 2420 * US, &k);
			synth_copy(&s, MAIN, "cudaMemcpyAsync", a + 10 * US, a + 15 * US, t + 2420 * US,
				   t + 3720 * US, COPY_DTOH, MEM_DEVICE, MEM_PINNED, bytes, 7);
			t += 3721 * US;
		} else {
			uint64_t dend = t;
			for (int c = 0; c < 8; c++) {
				uint64_t hs = t + (uint64_t)c * 200 * US, ks = hs + 200 * US, ds;
				k.stream = 7 + (uint32_t)(c % 2);
				synth_copy(&s, MAIN, "cudaMemcpyAsync", a, a + 1 * US, hs, hs + 200 * US, COPY_HTOD,
					   MEM_PINNED, MEM_DEVICE, bytes / 8, k.stream);
				synth_kernel(&s, MAIN, a + 1 * US, a + 2 * US, ks, ks + 140 * US, &k);
				ds = ks + 140 * US > dend ? ks + 140 * US : dend;
				synth_copy(&s, MAIN, "cudaMemcpyAsync", a + 2 * US, a + 3 * US, ds, ds + 200 * US,
					   COPY_DTOH, MEM_DEVICE, MEM_PINNED, bytes / 8, k.stream);
				dend = ds + 200 * US;
			}
			t = dend + 1 * US;
		}
	}
	return synth_close(&s);
}

/*
 * tensor-core: per step an FP32 SIMT GEMM of 8 ms and 2 ms of element-wise
 * work, queued ahead.  Gain: 0.8 x (1 - 1/7.4) ~ 0.69 (cc 9.0: TF32/FP32 7.4x).
 * fixed: a BF16 tensor-core GEMM of 2 ms.
 */
static int c_tensor(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel g = { "ampere_sgemm_128x64_nn", 0, 7, 264, 256, 0 };
	uint64_t t = T0, gl = fixed ? 2 * MS : 8 * MS;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		uint64_t a = T0 - 1 * MS + (uint64_t)i * 10 * US;
		synth_kernel(&s, MAIN, a, a + 4 * US, t, t + gl, fixed ? &K_GEMM : &g);
		synth_kernel(&s, MAIN, a + 5 * US, a + 9 * US, t + gl + 1 * US, t + gl + 2 * MS, &K_ELT);
		t += gl + 2 * MS + 2 * US;
	}
	return synth_close(&s);
}

/*
 * underfill: a 10 ms kernel with 4 blocks of 32 warps on a 132-SM GPU, back
 * to back.  Gain: 1 - 4 x 32 / (132 x 16) ~ 0.94.  fixed: 264 blocks.
 */
static int c_underfill(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel k = { "reduce_rows_kernel", 0, 7, fixed ? 264 : 4, 1024, 0 };
	uint64_t t = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		uint64_t a = T0 - 1 * MS + (uint64_t)i * 10 * US;
		synth_kernel(&s, MAIN, a, a + 4 * US, t, t + 10 * MS, &k);
		t += 10 * MS + 1 * US;
	}
	return synth_close(&s);
}

/*
 * alloc-churn: per step cudaMalloc (1 ms), a 5 ms kernel, cudaFree blocking
 * until the kernel ends; the GPU idles through the free and the next malloc
 * (~1.03 ms of ~6.03 ms): gain ~0.17.  fixed: one allocation before the loop.
 */
static int c_alloc(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0;

	if (open_py(&s, path) < 0)
		return -1;
	if (fixed) {
		synth_api(&s, MAIN, "cudaMalloc", t - 2 * MS, t - 1 * MS);
		synth_memory(&s, t - 1 * MS, TRACE_MEM_ALLOC, 0x7f0000000000ull, 256ull << 20);
	}
	for (int i = 0; i < 100; i++) {
		if (!fixed) {
			synth_api(&s, MAIN, "cudaMalloc", t, t + 1 * MS);
			synth_memory(&s, t + 1 * MS, TRACE_MEM_ALLOC, 0x7f0000000000ull, 256ull << 20);
			synth_kernel(&s, MAIN, t + 1 * MS, t + 1 * MS + 5 * US, t + 1 * MS + 10 * US,
				     t + 6 * MS + 10 * US, &K_GEMM);
			synth_api(&s, MAIN, "cudaFree", t + 1 * MS + 20 * US, t + 6 * MS + 30 * US);
			synth_memory(&s, t + 6 * MS + 30 * US, TRACE_MEM_FREE, 0x7f0000000000ull, 256ull << 20);
			t += 6 * MS + 30 * US;
		} else {
			synth_kernel(&s, MAIN, T0 - 1 * MS + (uint64_t)i * 10 * US,
				     T0 - 1 * MS + (uint64_t)i * 10 * US + 5 * US, t, t + 5 * MS, &K_GEMM);
			t += 5 * MS + 1 * US;
		}
	}
	return synth_close(&s);
}

/*
 * sync-upload: per step the host launches 16 kernels of 200 us (3.2 ms of
 * GPU work), uploads an 8-byte value from pageable memory with
 * cudaMemcpyAsync and waits for it with cudaStreamSynchronize (PyTorch's
 * tensor.to("cuda") of a CPU scalar), which returns when the GPU drains;
 * then 1 ms of host work leaves the GPU idle.  Without the wait, the host
 * work overlaps the GPU: gain 1 ms of a ~4.2 ms step.
 * fixed: no upload and no wait (the value is made on the GPU).
 */
static int c_sync_upload(const char *path, int fixed)
{
	struct synth s;
	struct synth_kernel layer = { "layer(const float*, float*, int, float)", 0, 7, 8192, 256, 0 };
	uint64_t t = T0, gpu = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 60; i++) {
		for (int j = 0; j < 16; j++) {
			uint64_t ks = t + 8 * US > gpu ? t + 8 * US : gpu;
			synth_kernel(&s, MAIN, t, t + 5 * US, ks, ks + 200 * US, &layer);
			gpu = ks + 200 * US;
			t += 6 * US;
		}
		if (!fixed) {
			uint64_t cs = gpu + 1 * US;
			synth_copy(&s, MAIN, "cudaMemcpyAsync", t, t + 5 * US, cs, cs + 2 * US, COPY_HTOD, MEM_PAGEABLE,
				   MEM_DEVICE, 8, 7);
			gpu = cs + 2 * US;
			synth_api(&s, MAIN, "cudaStreamSynchronize", t + 6 * US, gpu + 10 * US);
			t = gpu + 10 * US;
		}
		t += 1 * MS; /* host work */
	}
	return synth_close(&s);
}

/*
 * comm-wait: two ranks; per step 6 ms of compute then a 4 ms NCCL
 * all-reduce (16 blocks) that nothing overlaps; the ranks are equal, so it is
 * all transfer.  The compute is a GEMM of 264 blocks of 256 threads: 8 fit
 * on an SM of cc 9.0 (2,048 threads), so one wave fills 33 SMs, and beside
 * the all-reduce (16 of 132 SMs held) it still runs in one wave at full
 * rate: gain 0.4.  fixed: the all-reduce runs on stream 20 beside the
 * compute.
 * comm-wait-wide: the same with a GEMM of 264 blocks of 1,024 threads: 2
 * per SM, one wave on 132 SMs, two waves on the 116 the all-reduce leaves,
 * so compute runs at half rate beside it: gain 0.4 x 1/2.
 */
static int comm_case(const char *path, int fixed, const struct synth_kernel *gemm)
{
	struct synth s;
	struct synth_kernel nccl = { "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 0, 20, 16, 512, TRACE_GPU_COMM };

	if (synth_open(&s, path, 200, "python3 -m torch.distributed.run train.py") < 0)
		return -1;
	for (uint32_t r = 0; r < 2; r++) {
		uint64_t t = T0;
		if (r)
			synth_process(&s, 201, "python3 -m torch.distributed.run train.py");
		synth_thread(&s, 200 + r, "python3");
		synth_device(&s, 0, 132, 143771ull << 20, 1980);
		for (int i = 0; i < 50; i++) {
			uint64_t a = T0 - 1 * MS + (uint64_t)i * 20 * US;
			synth_kernel(&s, 200 + r, a, a + 4 * US, t, t + 6 * MS, gemm);
			if (!fixed) {
				synth_kernel(&s, 200 + r, a + 5 * US, a + 9 * US, t + 6 * MS + 1 * US, t + 10 * MS, &nccl);
				t += 10 * MS + 2 * US;
			} else {
				synth_kernel(&s, 200 + r, a + 5 * US, a + 9 * US, t + 1 * MS, t + 5 * MS, &nccl);
				t += 6 * MS + 1 * US;
			}
		}
	}
	return synth_close(&s);
}

static int c_comm(const char *path, int fixed)
{
	return comm_case(path, fixed, &K_GEMM);
}

static int c_comm_wide(const char *path, int fixed)
{
	static const struct synth_kernel wide = { "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_tn", 0, 7, 264, 1024, 0 };
	return comm_case(path, fixed, &wide);
}

/*
 * memory: allocations grow to 97% of the device (broken) or stay at 30%.
 */
static int c_memory(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0, cap = 143771ull << 20, step = fixed ? cap / 300 : cap / 103;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 100; i++) {
		uint64_t a = T0 - 1 * MS + (uint64_t)i * 10 * US;
		synth_kernel(&s, MAIN, a, a + 4 * US, t, t + 5 * MS, &K_GEMM);
		synth_memory(&s, t + 1 * MS, TRACE_MEM_ALLOC, 0x7f0000000000ull + (uint64_t)i * (1ull << 32), step);
		if (fixed && i)
			synth_memory(&s, t + 2 * MS, TRACE_MEM_FREE, 0x7f0000000000ull + (uint64_t)(i - 1) * (1ull << 32), 0);
		t += 5 * MS + 1 * US;
	}
	return synth_close(&s);
}

/*
 * throttle: SM clock 1500 MHz of 1980 while busy, 90 C.  Gain: 1 - 1500/1980
 * ~ 0.24 (busy share 1).  fixed: 1980 MHz, 60 C.
 */
static int c_throttle(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 100; i++) {
		uint64_t a = T0 - 1 * MS + (uint64_t)i * 10 * US;
		synth_kernel(&s, MAIN, a, a + 4 * US, t, t + 5 * MS, &K_GEMM);
		synth_metric(&s, t + 2 * MS, 0, "sm_clock_mhz", fixed ? 1980 : 1500);
		synth_metric(&s, t + 2 * MS, 0, "temp_c", fixed ? 60 : 90);
		synth_metric(&s, t + 2 * MS, 0, "temp_slowdown_c", 87); /* a limit, not a reading */
		synth_metric(&s, t + 2 * MS, 0, "sm_clock_max_mhz", 1980);
		synth_metric(&s, t + 2 * MS, 0, "throttle_reasons", fixed ? 0 : 0x20);
		t += 5 * MS + 1 * US;
	}
	return synth_close(&s);
}

/*
 * host-bound: 2000 ops of eager code: 200 us of Python/framework work, a
 * 10 us cudaLaunchKernel, a 20 us kernel that starts 5 us into the launch
 * call.  Each gap (190 us) is host code, longer than engine.max_gap_us.
 * A CUDA graph replays the kernels launch-bound.graph_gap_us (0.1 us)
 * apart: gain 1 - (2000 x 20 + 1999 x 0.1) / (1999 x 210 + 20).
 * fixed: the same ops after 5 us of host code each, 300 us kernels (the
 * GPU is the bottleneck, the CPU runs ahead).
 */
static int c_host(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0, gpu = T0;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 2000; i++) {
		uint64_t host = fixed ? 5 * US : 200 * US, kd = fixed ? 300 * US : 20 * US, ks;
		t += host;
		ks = t + 5 * US > gpu ? t + 5 * US : gpu;
		synth_kernel(&s, MAIN, t, t + 10 * US, ks, ks + kd, &K_ELT);
		gpu = ks + kd;
		t += 10 * US;
	}
	return synth_close(&s);
}

/*
 * copy-bound: 50 steps of a pinned 256 MiB upload (20 ms on the GPU) and a
 * 0.5 ms kernel that uses it, all queued ahead by the CPU: 97.6% of the
 * GPU's time is copies with no kernel beside them.  With the data resident
 * the kernels run back to back: gain 1 - 50 x 0.5 / (50 x 20.5).
 * fixed: the data is resident; only the kernels run.
 */
static int c_copy_bound(const char *path, int fixed)
{
	struct synth s;
	uint64_t t = T0, gpu = T0 + 1 * MS;

	if (open_py(&s, path) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		if (!fixed) {
			synth_copy(&s, MAIN, "cudaMemcpyAsync", t, t + 10 * US, gpu, gpu + 20 * MS, COPY_HTOD,
				   MEM_PINNED, MEM_DEVICE, 256ull << 20, 7);
			gpu += 20 * MS;
			t += 20 * US;
		}
		synth_kernel(&s, MAIN, t, t + 5 * US, gpu, gpu + 500 * US, &K_GEMM);
		gpu += 500 * US;
		t += 10 * US;
	}
	return synth_close(&s);
}

/*
 * host-io: 100 steps of a 10 ms kernel, then 20 ms of write() on the
 * launching thread (results, logs) before the next launch: idle 2/3, all
 * of it output.  Writes on a background thread remove it: gain 20 / 30.
 * fixed: a writer thread writes while the main thread launches ahead.
 */
static int c_host_io(const char *path, int fixed)
{
	struct synth s;

	if (open_py(&s, path) < 0)
		return -1;
	synth_thread(&s, MAIN + 1, "writer");
	for (int i = 0; i < 100; i++) {
		if (!fixed) {
			uint64_t t = T0 + (uint64_t)i * 30 * MS;
			synth_kernel(&s, MAIN, t, t + 5 * US, t + 10 * US, t + 10 * MS, &K_GEMM);
			synth_osrt(&s, MAIN, OSRT_WRITE, t + 10 * MS, t + 30 * MS - 20 * US);
		} else {
			uint64_t t = T0 + (uint64_t)i * 10 * MS;
			synth_kernel(&s, MAIN, t > 10 * US ? t - 5 * MS : t, t - 5 * MS + 5 * US, t + 1 * US, t + 10 * MS,
				     &K_GEMM);
			synth_osrt(&s, MAIN + 1, OSRT_WRITE, t, t + 8 * MS);
		}
	}
	return synth_close(&s);
}

/*
 * one-off: a 600 ms cold start (host code, then the first run of a kernel
 * never seen before) and then 200 back-to-back steps of 10 ms kernels: the
 * start-up is a one-off, the steady state is healthy (no finding).
 * fixed: the same without the cold start.
 */
static int c_oneoff(const char *path, int fixed)
{
	static const struct synth_kernel K_INIT = { "void init_weights_kernel<float>(float*, int)", 0, 7, 264, 256, 0 };
	struct synth s;
	uint64_t gpu = T0 + 1 * MS;

	if (open_py(&s, path) < 0)
		return -1;
	synth_kernel(&s, MAIN, T0, T0 + 5 * US, gpu, gpu + 1 * MS, &K_ELT);
	gpu += 1 * MS;
	if (!fixed) {
		synth_kernel(&s, MAIN, gpu + 600 * MS - 10 * US, gpu + 600 * MS - 5 * US, gpu + 600 * MS,
			     gpu + 601 * MS, &K_INIT);
		gpu += 601 * MS;
	}
	for (int i = 0; i < 200; i++) {
		synth_kernel(&s, MAIN, gpu - 1 * MS, gpu - 1 * MS + 5 * US, gpu, gpu + 10 * MS, &K_GEMM);
		gpu += 10 * MS;
	}
	return synth_close(&s);
}

const struct synth_case synth_cases[] = {
	{ "dataloader", "data-loading", 2.0 / 3, c_dataloader },
	{ "launch-bound", "launch-bound", (7 - 0.1) / 10, c_launch },
	{ "sync", "synchronization", 3.0 / (3 + 0.006 + 0.168 + 3.3 + 0.012 + 0.012 - 0.006), c_sync },
	{ "dataloader-cpu", "data-loading", 29 * 16.26 / (29 * 20.41 + 4.15), c_dataloader_cpu },
	{ "pageable", "pageable-copy", (2 + 10 * (1 - 67108864 / 50e9 * 1e3 / 10)) / 17.02, c_pageable },
	{ "serial-copy", "serial-copy", (3.721 - 2.145) / 3.721, c_serial },
	{ "tensor-core", "tensor-cores-unused", 0.8 * (1 - 1 / 7.4), c_tensor },
	{ "underfill", "under-filled-launch", 1 - 4.0 * 32 / (132 * 16), c_underfill },
	{ "alloc-churn", "allocation-churn", 0.17, c_alloc },
	{ "sync-upload", "synchronization", 1.0 / 4.22, c_sync_upload },
	{ "comm-wait", "exposed-communication", 0.4, c_comm },
	{ "comm-wait-wide", "exposed-communication", 0.4 * 0.5, c_comm_wide },
	{ "host-bound", "host-bound", 1 - (2000 * 20 + 1999 * 0.1) / (1999 * 210.0 + 20), c_host },
	{ "copy-bound", "copy-bound", 1 - 50 * 0.5 / (50 * 20.5), c_copy_bound },
	{ "host-io", "host-io", 20.0 / 30, c_host_io },
	{ "one-off", NULL, 0, c_oneoff },
	{ "memory", "memory-pressure", 0, c_memory },
	{ "throttle", "throttling", 0.24, c_throttle },
	{ NULL, NULL, 0, NULL },
};
