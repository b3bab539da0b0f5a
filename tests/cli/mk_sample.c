/*
 * mk_sample.c - write a small sample report through the real writer, for the
 * CLI end-to-end tests: one process, two threads, NVTX, OS runtime, CUDA
 * API calls, kernels, copies, a sync, memory and metrics.
 * usage: mk_sample OUT.gpuscope
 */
#include "trace/trace.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_thread th = { 0 };
	struct trace_device d = { 0 };
	const uint64_t t0 = 1000000000ull;

	if (argc != 2) {
		fprintf(stderr, "usage: mk_sample OUT\n");
		return 2;
	}
	if (trace_builder_open(&b, argv[1], 0, 0) < 0)
		return 1;
	p.pid = 4242;
	p.ppid = 1;
	p.start_mono_ns = t0;
	p.start_realtime_ns = 1764460800000000000ull;
	p.cmdline_id = trace_builder_str(&b, "./train --epochs 1");
	p.exe_id = trace_builder_str(&b, "/usr/bin/train");
	p.host_id = trace_builder_str(&b, "node1");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	th.time = t0;
	th.pid = 4242;
	th.tid = 4242;
	th.name_id = trace_builder_str(&b, "main");
	th.flags = TRACE_THREAD_START | TRACE_THREAD_NAME;
	trace_builder_add(&b, TRACE_EV_THREAD, &th, sizeof(th));
	th.tid = 4243;
	th.time = t0 + 100;
	th.name_id = trace_builder_str(&b, "loader");
	trace_builder_add(&b, TRACE_EV_THREAD, &th, sizeof(th));
	d.id = 0;
	d.name_id = trace_builder_str(&b, "NVIDIA H200");
	d.sm_count = 132;
	d.cc_major = 9;
	d.global_mem = 150754820096ull;
	d.core_clock_khz = 1980000;
	d.pci_bus = 0x1a;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));

	for (int step = 0; step < 3; step++) {
		uint64_t s = t0 + 1000 + (uint64_t)step * 100000;
		struct trace_nvtx_range r = { 0 };
		struct trace_osrt o = { 0 };
		struct trace_api a = { 0 };
		struct trace_kernel k = { 0 };
		struct trace_memcpy c = { 0 };
		struct trace_cpu_sample cs = { 0 };

		o.start = s;
		o.end = s + 30000;
		o.pid = 4242;
		o.tid = 4243;
		o.func = OSRT_READ;
		o.result = 1 << 20;
		o.arg = 7;
		trace_builder_add(&b, TRACE_EV_OSRT, &o, sizeof(o));
		r.start = s;
		r.end = s + 90000;
		r.pid = 4242;
		r.tid = 4242;
		r.kind = TRACE_NVTX_PUSHPOP;
		r.name_id = trace_builder_str(&b, "step");
		r.payload_type = TRACE_PAYLOAD_U64;
		r.payload = (uint64_t)step;
		trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
		c.start = s + 31000;
		c.end = s + 41000;
		c.bytes = 1 << 20;
		c.pid = 4242;
		c.stream = 7;
		c.correlation = 10 + (uint32_t)step * 2;
		c.kind = COPY_HTOD;
		c.src_kind = MEM_PAGEABLE;
		c.dst_kind = MEM_DEVICE;
		trace_builder_add(&b, TRACE_EV_MEMCPY, &c, sizeof(c));
		a.start = s + 42000;
		a.end = s + 47000;
		a.pid = 4242;
		a.tid = 4242;
		a.correlation = 11 + (uint32_t)step * 2;
		a.cbid = 211;
		a.domain = TRACE_API_RUNTIME;
		a.name_id = trace_builder_str(&b, "cudaLaunchKernel");
		trace_builder_add(&b, TRACE_EV_API, &a, sizeof(a));
		k.start = s + 50000;
		k.end = s + 80000;
		k.pid = 4242;
		k.stream = 7;
		k.correlation = a.correlation;
		k.grid[0] = 64;
		k.grid[1] = k.grid[2] = 1;
		k.block[0] = 256;
		k.block[1] = k.block[2] = 1;
		k.registers = 32;
		k.name_id = trace_builder_str(&b, "sgemm_kernel");
		trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		cs.time = s + 90000;
		cs.pid = 4242;
		cs.tid = 4243;
		cs.run_ns = 25000 * (uint64_t)(step + 1);
		trace_builder_add(&b, TRACE_EV_CPU_SAMPLE, &cs, sizeof(cs));
	}
	{
		struct trace_sync sy = { 0 };
		struct trace_memory mm = { 0 };
		struct trace_metric me = { 0 };

		sy.start = t0 + 290000;
		sy.end = t0 + 295000;
		sy.pid = 4242;
		sy.type = SYNC_CONTEXT;
		trace_builder_add(&b, TRACE_EV_SYNC, &sy, sizeof(sy));
		mm.time = t0 + 500;
		mm.pid = 4242;
		mm.bytes = 1 << 20;
		mm.op = TRACE_MEM_ALLOC;
		mm.mem_kind = MEM_DEVICE;
		trace_builder_add(&b, TRACE_EV_MEMORY, &mm, sizeof(mm));
		me.time = t0 + 150000;
		me.value = 87.5;
		me.name_id = trace_builder_str(&b, "gpu_util");
		trace_builder_add(&b, TRACE_EV_METRIC, &me, sizeof(me));
	}
	return trace_builder_close(&b, 0) ? 1 : 0;
}
