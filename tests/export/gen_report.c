/*
 * gen_report.c - write a synthetic report through the real writer
 * (trace_builder) with every kind of event the exporters handle.
 *
 *   gen_report OUT EVENTS [PID]
 *
 * A training-like loop on one process: per step an NVTX push/pop "step"
 * range on the main thread holding kernel launches (cudaLaunchKernel with a
 * correlation id, the kernel on stream 7 or 13 of device 0), an async HtoD
 * copy, a memset, a cudaStreamSynchronize with its sync record and an ioctl
 * inside it; a loader thread with read() calls and NVTX start/end ranges
 * that overlap each other; marks; CPU samples of both threads every 1 ms;
 * GPU metrics every 1 ms; a device allocation and free per step.  Kernels on
 * stream 13 sometimes start 100 ns before the previous one ends (CUPTI-like
 * jitter), which the exporters must move to a further lane.  Stops once
 * EVENTS records are written.  Deterministic.
 */
#include "trace/trace.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t nevents;

static void add(struct trace_builder *b, unsigned type, const void *rec, size_t size)
{
	trace_builder_add(b, type, rec, size);
	nevents++;
}

int main(int argc, char **argv)
{
	struct trace_builder b;
	uint64_t target, t = 1000000000ull, next_sample = 0;
	uint32_t pid, main_tid, loader_tid, corr = 1;
	uint64_t step = 0, range_id = 1;
	uint64_t stream_free[2] = { 0, 0 };
	uint64_t run_main = 0, run_loader = 0, loader_open_start = 0;
	static const char *const kernels[] = {
		"void gemm_kernel<float, 128>(float const*, float*, int)",
		"relu_kernel", "softmax_fwd(float*, int)", "layer_norm \"fused\"\\x",
	};

	if (argc < 3) {
		fprintf(stderr, "usage: gen_report OUT EVENTS [PID]\n");
		return 2;
	}
	target = strtoull(argv[2], NULL, 10);
	pid = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 4242;
	main_tid = pid;
	loader_tid = pid + 1;
	if (trace_builder_open(&b, argv[1], 0, 0))
		return 1;
	{
		struct trace_process p = { 0 };
		struct trace_thread th = { 0 };
		struct trace_device d = { 0 };
		p.pid = pid;
		p.ppid = 1;
		p.start_mono_ns = t;
		p.start_realtime_ns = 1700000000000000000ull;
		p.cmdline_id = trace_builder_str(&b, "./train --epochs 1");
		p.exe_id = trace_builder_str(&b, "/usr/bin/train");
		add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
		th.time = t;
		th.pid = pid;
		th.tid = main_tid;
		th.name_id = trace_builder_str(&b, "train");
		th.flags = TRACE_THREAD_START | TRACE_THREAD_NAME;
		add(&b, TRACE_EV_THREAD, &th, sizeof(th));
		th.tid = loader_tid;
		th.name_id = trace_builder_str(&b, "loader");
		add(&b, TRACE_EV_THREAD, &th, sizeof(th));
		d.id = 0;
		d.name_id = trace_builder_str(&b, "NVIDIA H200");
		d.sm_count = 132;
		d.cc_major = 9;
		d.global_mem = 150ull << 30;
		d.core_clock_khz = 1980000;
		d.mem_clock_khz = 2619000;
		d.mem_bus_width = 6144;
		d.pid = pid;
		d.uuid[0] = 0xab;
		add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	}

	while (nevents < target) {
		uint64_t step_start = t, alloc_addr = 0x7f0000000000ull + (step % 64) * 0x100000;
		struct trace_nvtx_range r = { 0 };
		struct trace_api a = { 0 };
		struct trace_memory mem = { 0 };

		mem.time = t;
		mem.address = alloc_addr;
		mem.bytes = 1 << 20;
		mem.pid = pid;
		mem.mem_kind = MEM_DEVICE;
		mem.op = TRACE_MEM_ALLOC;
		add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
		t += 2000;

		/* async HtoD copy */
		a.pid = pid;
		a.tid = main_tid;
		a.domain = TRACE_API_RUNTIME;
		a.start = t;
		a.end = t + 3000;
		a.correlation = corr;
		a.name_id = trace_builder_str(&b, "cudaMemcpyAsync");
		add(&b, TRACE_EV_API, &a, sizeof(a));
		{
			struct trace_memcpy c = { 0 };
			c.start = (t + 4000 > stream_free[0] ? t + 4000 : stream_free[0]);
			c.end = c.start + 8000;
			c.bytes = 4 << 20;
			c.pid = pid;
			c.stream = 7;
			c.correlation = corr++;
			c.kind = COPY_HTOD;
			c.src_kind = MEM_PINNED;
			c.dst_kind = MEM_DEVICE;
			c.flags = TRACE_GPU_ASYNC;
			add(&b, TRACE_EV_MEMCPY, &c, sizeof(c));
			stream_free[0] = c.end;
		}
		t += 4000;
		/* memset */
		a.start = t;
		a.end = t + 2000;
		a.correlation = corr;
		a.name_id = trace_builder_str(&b, "cudaMemsetAsync");
		add(&b, TRACE_EV_API, &a, sizeof(a));
		{
			struct trace_memset s = { 0 };
			s.start = stream_free[0] + 500;
			s.end = s.start + 1500;
			s.bytes = 1 << 20;
			s.pid = pid;
			s.stream = 7;
			s.correlation = corr++;
			s.mem_kind = MEM_DEVICE;
			add(&b, TRACE_EV_MEMSET, &s, sizeof(s));
			stream_free[0] = s.end;
		}
		t += 3000;
		for (int k = 0; k < 8 && nevents < target; k++) {
			struct trace_kernel kr = { 0 };
			int st = k & 1;
			a.start = t;
			a.end = t + 4000;
			a.correlation = corr;
			a.name_id = trace_builder_str(&b, "cudaLaunchKernel");
			add(&b, TRACE_EV_API, &a, sizeof(a));
			kr.start = t + 5000 > stream_free[st] ? t + 5000 : stream_free[st];
			if (st && k == 3 && stream_free[st] > t + 100)
				kr.start = stream_free[st] - 100; /* jitter: overlaps the previous kernel */
			kr.end = kr.start + 10000 + (uint64_t)k * 1000;
			kr.pid = pid;
			kr.stream = st ? 13 : 7;
			kr.correlation = corr++;
			kr.name_id = trace_builder_str(&b, kernels[k % 4]);
			kr.grid[0] = 132;
			kr.grid[1] = kr.grid[2] = 1;
			kr.block[0] = 256;
			kr.block[1] = kr.block[2] = 1;
			kr.registers = 64;
			kr.static_smem = 1024;
			kr.dynamic_smem = 4096;
			add(&b, TRACE_EV_KERNEL, &kr, sizeof(kr));
			stream_free[st] = kr.end;
			t += 6000;
		}
		/* synchronise: API, sync record, an ioctl inside */
		{
			uint64_t done = stream_free[0] > stream_free[1] ? stream_free[0] : stream_free[1];
			struct trace_sync s = { 0 };
			struct trace_osrt o = { 0 };
			if (done < t + 2000)
				done = t + 2000;
			a.start = t;
			a.end = done + 1000;
			a.correlation = corr;
			a.name_id = trace_builder_str(&b, "cudaStreamSynchronize");
			add(&b, TRACE_EV_API, &a, sizeof(a));
			s.start = t + 500;
			s.end = done + 500;
			s.pid = pid;
			s.stream = 7;
			s.correlation = corr++;
			s.type = SYNC_STREAM;
			add(&b, TRACE_EV_SYNC, &s, sizeof(s));
			o.start = t + 600;
			o.end = done;
			o.pid = pid;
			o.tid = main_tid;
			o.func = OSRT_IOCTL;
			o.arg = 5;
			add(&b, TRACE_EV_OSRT, &o, sizeof(o));
			t = done + 2000;
		}
		mem.time = t;
		mem.op = TRACE_MEM_FREE;
		mem.bytes = 0;
		add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
		/* the step range around it all (nested: written at the pop) */
		r.start = step_start;
		r.end = t;
		r.pid = pid;
		r.tid = main_tid;
		r.kind = TRACE_NVTX_PUSHPOP;
		r.name_id = trace_builder_str(&b, "step");
		add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		if (step % 4 == 0) {
			struct trace_nvtx_mark mk = { 0 };
			mk.time = step_start + 1000;
			mk.pid = pid;
			mk.tid = main_tid;
			mk.name_id = trace_builder_str(&b, "checkpoint");
			add(&b, TRACE_EV_NVTX_MARK, &mk, sizeof(mk));
		}
		/* loader thread: a read, and start/end ranges that overlap (each ends after the next starts) */
		{
			struct trace_osrt o = { 0 };
			struct trace_nvtx_end e = { 0 };
			o.start = step_start + 100;
			o.end = step_start + 20000;
			o.pid = pid;
			o.tid = loader_tid;
			o.func = OSRT_READ;
			o.result = 65536;
			o.arg = 9;
			add(&b, TRACE_EV_OSRT, &o, sizeof(o));
			memset(&r, 0, sizeof(r));
			r.start = step_start + 50;
			r.pid = pid;
			r.tid = loader_tid;
			r.kind = TRACE_NVTX_STARTEND;
			r.range_id = range_id;
			r.name_id = trace_builder_str(&b, "load batch");
			add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
			if (loader_open_start) {
				e.range_id = range_id - 1;
				e.end = step_start + 30000;
				e.tid = loader_tid;
				add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
			}
			loader_open_start = r.start;
			range_id++;
		}
		/* samples every 1 ms */
		while (next_sample <= t) {
			struct trace_cpu_sample c = { 0 };
			struct trace_metric mt = { 0 };
			if (!next_sample)
				next_sample = step_start;
			c.time = next_sample;
			c.pid = pid;
			c.tid = main_tid;
			run_main += 700000;
			c.run_ns = run_main;
			add(&b, TRACE_EV_CPU_SAMPLE, &c, sizeof(c));
			c.tid = loader_tid;
			run_loader += 200000;
			c.run_ns = run_loader;
			add(&b, TRACE_EV_CPU_SAMPLE, &c, sizeof(c));
			mt.time = next_sample;
			mt.device = 0;
			mt.pid = pid;
			mt.name_id = trace_builder_str(&b, "gpu_util");
			mt.value = (double)(50 + (next_sample / 1000000) % 50);
			add(&b, TRACE_EV_METRIC, &mt, sizeof(mt));
			mt.name_id = trace_builder_str(&b, "sm_clock_mhz");
			mt.value = 1980;
			add(&b, TRACE_EV_METRIC, &mt, sizeof(mt));
			next_sample += 1000000;
		}
		step++;
	}
	if (trace_builder_close(&b, 0))
		return 1;
	printf("%llu\n", (unsigned long long)nevents);
	return 0;
}
