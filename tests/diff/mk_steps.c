/*
 * mk_steps.c - write a report of N training-like steps through the real writer:
 * each step is an NVTX range "step" on the main thread holding a pageable or
 * pinned H2D copy, K kernel launches (API call + kernel) and a device sync.
 * usage: mk_steps OUT STEPS STEP_US GPU_US [KERNELS] [pageable 0|1] [jitter_pct] [seed]
 */
#include "trace/trace.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_device d = { 0 };
	uint64_t t = 1000000000ull;
	int steps, kernels = 4, pageable = 1;
	double step_us, gpu_us, jitter = 0;
	unsigned seed = 1;
	uint32_t corr = 1;

	if (argc < 5) {
		fprintf(stderr, "usage: mk_steps OUT STEPS STEP_US GPU_US [KERNELS] [PAGEABLE] [JITTER%%] [SEED]\n");
		return 2;
	}
	steps = atoi(argv[2]);
	step_us = atof(argv[3]);
	gpu_us = atof(argv[4]);
	if (argc > 5)
		kernels = atoi(argv[5]);
	if (argc > 6)
		pageable = atoi(argv[6]);
	if (argc > 7)
		jitter = atof(argv[7]) / 100;
	if (argc > 8)
		seed = (unsigned)atoi(argv[8]);
	srand(seed);
	if (trace_builder_open(&b, argv[1], 0, 0) < 0)
		return 1;
	p.pid = 100;
	p.start_mono_ns = t;
	p.cmdline_id = trace_builder_str(&b, "python3 train.py");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	d.name_id = trace_builder_str(&b, "NVIDIA H200");
	d.sm_count = 132;
	d.cc_major = 9;
	d.global_mem = 150754820096ull;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	for (int s = 0; s < steps; s++) {
		double j = 1 + jitter * (2.0 * rand() / RAND_MAX - 1);
		uint64_t len = (uint64_t)(step_us * 1000 * j), gpu = (uint64_t)(gpu_us * 1000 * j);
		uint64_t cpu = len > gpu ? len - gpu : 0, cur;
		struct trace_nvtx_range r = { 0 };
		struct trace_memcpy c = { 0 };
		struct trace_api a = { 0 };
		struct trace_kernel k = { 0 };
		struct trace_sync sy = { 0 };

		r.start = t;
		r.end = t + len;
		r.pid = r.tid = 100;
		r.kind = TRACE_NVTX_PUSHPOP;
		r.name_id = trace_builder_str(&b, "step");
		trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		/* CPU work first (the GPU idles), then the copy and kernels */
		cur = t + cpu;
		c.start = cur;
		c.end = cur + gpu / 10;
		c.bytes = 4 << 20;
		c.pid = 100;
		c.stream = 7;
		c.kind = COPY_HTOD;
		c.src_kind = pageable ? MEM_PAGEABLE : MEM_PINNED;
		c.dst_kind = MEM_DEVICE;
		c.correlation = corr++;
		trace_builder_add(&b, TRACE_EV_MEMCPY, &c, sizeof(c));
		cur = c.end;
		for (int i = 0; i < kernels; i++) {
			uint64_t kl = (gpu - gpu / 10) / (uint64_t)kernels;
			a.start = cur > 3000 ? cur - 3000 : cur;
			a.end = a.start + 2000;
			a.pid = a.tid = 100;
			a.correlation = corr;
			a.domain = TRACE_API_RUNTIME;
			a.name_id = trace_builder_str(&b, "cudaLaunchKernel");
			trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
			k.start = cur;
			k.end = cur + kl;
			k.pid = 100;
			k.stream = 7;
			k.correlation = corr++;
			k.grid[0] = 264;
			k.block[0] = 256;
			k.name_id = trace_builder_str(&b, i % 2 ? "gemm_bf16_tensorop" : "elementwise_add");
			trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
			cur = k.end;
		}
		a.start = cur - 1000;
		a.end = t + len;
		a.correlation = corr;
		a.name_id = trace_builder_str(&b, "cudaDeviceSynchronize");
		trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
		sy.start = a.start;
		sy.end = a.end;
		sy.pid = 100;
		sy.type = SYNC_CONTEXT;
		sy.correlation = corr++;
		trace_builder_add(&b, TRACE_EV_SYNC, &sy, sizeof(sy));
		t += len;
	}
	return trace_builder_close(&b, 0) ? 1 : 0;
}
