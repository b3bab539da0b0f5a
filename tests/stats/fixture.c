/*
 * fixture.c - the small hand-checkable report the stats tests read, written
 * through the real writer (trace_builder).  Every time is in nanoseconds;
 * the expected values in test_stats.c are computed by hand from the numbers
 * here (the comments give the sums).
 *
 * Process 100, threads 101 "main", 102 and 103; device 0 "NVIDIA H200".
 *
 *   API on 101          kernel / copy / set           stream
 *   a1  launch 1000-1010  A 1100-1110 (10) grid 4 1 1 block 128 1 1   7
 *   a2  launch 1200-1220  A 1300-1320 (20) grid 4 1 1 block 128 1 1   7
 *   a3  launch 1400-1405  A 1500-1560 (60) grid 8 1 1 block 128 1 1   7
 *   a4  launch 1600-1610  B 1700-1730 (30) grid 1 1 1 block 32 1 1    8
 *   a5  launch 1800-1810  B 1850-1900 (50) grid 1 1 1 block 32 1 1    8
 *   a6  launch 2000-2040  C 2030-2070 (40) grid 2 2 1 block 64 2 1    7
 *   a7  memcpyAsync 2100-2110  HtoD 2200-2300, 1000 B                 7
 *   a8  memcpyAsync 2400-2410  HtoD 2500-2800, 3000 B                 8
 *   a9  memcpy 2900-3100       DtoH 2950-3000, 2000 B                 7
 *   a10 memsetAsync 3200-3205  set  3300-3320, 500 B                  7
 *   a11 deviceSynchronize 3400-3900 (no GPU work)
 *
 *   NVTX: push/pop "step" 900-3950 (101, level 0); "fwd" 950-2050 and
 *   2090-2500 (101, level 1); start/end "load" in domain "io" 500-800
 *   (started on 102, ended on 103); start/end "never" from 600, never ended.
 *   OS runtime on 101: read 100 ns, read 300 ns, poll 1000 ns.
 *   Metrics: device 0 gpu_util 10, 20, 60; sm_clock_mhz 1980, 1980; host cpu_util 50.
 */
#include "fixture.h"

#include <string.h>

static void api(struct trace_builder *b, const char *name, uint64_t s, uint64_t e,
		uint32_t corr)
{
	struct trace_api a = { 0 };

	a.start = s;
	a.end = e;
	a.pid = 100;
	a.tid = 101;
	a.correlation = corr;
	a.name_id = trace_builder_str(b, name);
	a.domain = TRACE_API_RUNTIME;
	trace_builder_add(b, TRACE_EV_API, &a, sizeof(a));
}

static void kernel(struct trace_builder *b, const char *name, uint64_t s, uint64_t e,
		   uint32_t corr, uint32_t stream, uint32_t gx, uint32_t gy, uint32_t bx,
		   uint32_t by)
{
	struct trace_kernel k = { 0 };

	k.start = s;
	k.end = e;
	k.pid = 100;
	k.device = 0;
	k.context = 1;
	k.stream = stream;
	k.correlation = corr;
	k.name_id = trace_builder_str(b, name);
	k.grid[0] = gx;
	k.grid[1] = gy;
	k.grid[2] = 1;
	k.block[0] = bx;
	k.block[1] = by;
	k.block[2] = 1;
	k.registers = 32;
	k.static_smem = 1024;
	k.dynamic_smem = 0;
	trace_builder_add(b, TRACE_EV_KERNEL, &k, sizeof(k));
}

static void copy(struct trace_builder *b, unsigned kind, uint64_t s, uint64_t e,
		 uint64_t bytes, uint32_t corr, uint32_t stream)
{
	struct trace_memcpy c = { 0 };

	c.start = s;
	c.end = e;
	c.bytes = bytes;
	c.pid = 100;
	c.device = 0;
	c.context = 1;
	c.stream = stream;
	c.correlation = corr;
	c.kind = (uint8_t)kind;
	c.src_kind = kind == COPY_HTOD ? MEM_PINNED : MEM_DEVICE;
	c.dst_kind = kind == COPY_HTOD ? MEM_DEVICE : MEM_PAGEABLE;
	trace_builder_add(b, TRACE_EV_MEMCPY, &c, sizeof(c));
}

static void range(struct trace_builder *b, const char *name, const char *domain, unsigned kind,
		  uint64_t s, uint64_t e, uint32_t tid, uint16_t level, uint64_t id)
{
	struct trace_nvtx_range r = { 0 };

	r.start = s;
	r.end = e;
	r.pid = 100;
	r.tid = tid;
	r.name_id = trace_builder_str(b, name);
	r.domain_id = domain ? trace_builder_str(b, domain) : 0;
	r.kind = (uint8_t)kind;
	r.level = level;
	r.range_id = id;
	trace_builder_add(b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
}

static void osrt(struct trace_builder *b, unsigned func, uint64_t s, uint64_t e)
{
	struct trace_osrt o = { 0 };

	o.start = s;
	o.end = e;
	o.pid = 100;
	o.tid = 101;
	o.func = (uint16_t)func;
	o.arg = -1;
	trace_builder_add(b, TRACE_EV_OSRT, &o, sizeof(o));
}

static void metric(struct trace_builder *b, uint32_t device, const char *name, uint64_t t,
		   double v)
{
	struct trace_metric s = { 0 };

	s.time = t;
	s.value = v;
	s.device = device;
	s.name_id = trace_builder_str(b, name);
	s.pid = 100;
	trace_builder_add(b, TRACE_EV_METRIC, &s, sizeof(s));
}

static int write_fixture(const char *path, int reversed);

int fixture_write(const char *path)
{
	return write_fixture(path, 0);
}

int fixture_write_reversed(const char *path)
{
	return write_fixture(path, 1);
}

static int write_fixture(const char *path, int reversed)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_thread th = { 0 };
	struct trace_device d = { 0 };
	struct trace_memset ms = { 0 };
	struct trace_nvtx_end e = { 0 };

	if (trace_builder_open(&b, path, 0, 0) < 0)
		return -1;
	if (reversed) {
		/* define the names first, in reverse order: every id differs from the plain fixture's */
		static const char *const names[] = { "cpu_util", "sm_clock_mhz", "gpu_util", "never",
			"io", "load", "fwd", "step", "C", "B", "A", "cudaDeviceSynchronize",
			"cudaMemsetAsync", "cudaMemcpy", "cudaMemcpyAsync", "cudaLaunchKernel",
			"NVIDIA H200", "main", "./fixture", "padding" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			trace_builder_str(&b, names[i]);
	}
	p.pid = 100;
	p.ppid = 1;
	p.start_mono_ns = 400;
	p.cmdline_id = trace_builder_str(&b, "./fixture");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	th.time = 450;
	th.pid = 100;
	th.tid = 101;
	th.name_id = trace_builder_str(&b, "main");
	th.flags = TRACE_THREAD_START | TRACE_THREAD_NAME;
	trace_builder_add(&b, TRACE_EV_THREAD, &th, sizeof(th));
	d.id = 0;
	d.name_id = trace_builder_str(&b, "NVIDIA H200");
	d.sm_count = 132;
	d.pid = 100;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));

	api(&b, "cudaLaunchKernel", 1000, 1010, 1);
	api(&b, "cudaLaunchKernel", 1200, 1220, 2);
	api(&b, "cudaLaunchKernel", 1400, 1405, 3);
	api(&b, "cudaLaunchKernel", 1600, 1610, 4);
	api(&b, "cudaLaunchKernel", 1800, 1810, 5);
	api(&b, "cudaLaunchKernel", 2000, 2040, 6);
	api(&b, "cudaMemcpyAsync", 2100, 2110, 7);
	api(&b, "cudaMemcpyAsync", 2400, 2410, 8);
	api(&b, "cudaMemcpy", 2900, 3100, 9);
	api(&b, "cudaMemsetAsync", 3200, 3205, 10);
	api(&b, "cudaDeviceSynchronize", 3400, 3900, 11);

	kernel(&b, "A", 1100, 1110, 1, 7, 4, 1, 128, 1);
	kernel(&b, "A", 1300, 1320, 2, 7, 4, 1, 128, 1);
	kernel(&b, "A", 1500, 1560, 3, 7, 8, 1, 128, 1);
	kernel(&b, "B", 1700, 1730, 4, 8, 1, 1, 32, 1);
	kernel(&b, "B", 1850, 1900, 5, 8, 1, 1, 32, 1);
	kernel(&b, "C", 2030, 2070, 6, 7, 2, 2, 64, 2);
	copy(&b, COPY_HTOD, 2200, 2300, 1000, 7, 7);
	copy(&b, COPY_HTOD, 2500, 2800, 3000, 8, 8);
	copy(&b, COPY_DTOH, 2950, 3000, 2000, 9, 7);
	ms.start = 3300;
	ms.end = 3320;
	ms.bytes = 500;
	ms.pid = 100;
	ms.device = 0;
	ms.context = 1;
	ms.stream = 7;
	ms.correlation = 10;
	ms.mem_kind = MEM_DEVICE;
	trace_builder_add(&b, TRACE_EV_MEMSET, &ms, sizeof(ms));

	range(&b, "step", NULL, TRACE_NVTX_PUSHPOP, 900, 3950, 101, 0, 0);
	range(&b, "fwd", NULL, TRACE_NVTX_PUSHPOP, 950, 2050, 101, 1, 0);
	range(&b, "fwd", NULL, TRACE_NVTX_PUSHPOP, 2090, 2500, 101, 1, 0);
	range(&b, "load", "io", TRACE_NVTX_STARTEND, 500, 0, 102, 0, 5);
	e.range_id = 5;
	e.end = 800;
	e.tid = 103;
	trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
	range(&b, "never", NULL, TRACE_NVTX_STARTEND, 600, 0, 102, 0, 6);

	osrt(&b, OSRT_READ, 1000, 1100);
	osrt(&b, OSRT_READ, 2000, 2300);
	osrt(&b, OSRT_POLL, 3000, 4000);

	metric(&b, 0, "gpu_util", 1000, 10);
	metric(&b, 0, "gpu_util", 2000, 20);
	metric(&b, 0, "gpu_util", 3000, 60);
	metric(&b, 0, "sm_clock_mhz", 1000, 1980);
	metric(&b, 0, "sm_clock_mhz", 2000, 1980);
	metric(&b, UINT32_MAX, "cpu_util", 1500, 50);
	return trace_builder_close(&b, 0);
}

int fixture_write_empty(const char *path)
{
	struct trace_builder b;
	struct trace_process p = { 0 };

	if (trace_builder_open(&b, path, 0, 0) < 0)
		return -1;
	p.pid = 7;
	p.cmdline_id = trace_builder_str(&b, "./nothing");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	return trace_builder_close(&b, 0);
}
