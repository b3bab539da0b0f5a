/*
 * gen_report.c - write a large synthetic report for the stats benchmark,
 * through the real writer (trace_builder).
 *
 *   gen_report PATH EVENTS [STREAMS]
 *
 * The mix, per block of 100 events on one thread: one push/pop "step" range
 * with a nested "forward" range (2), 40 kernel launches (cudaLaunchKernel +
 * kernel: 80), 5 async copies (API + copy: 10), 2 async sets (API + set: 4),
 * 3 cudaStreamSynchronize calls (3) and one OS-runtime read (1).  Kernels
 * take 64 names, grids vary; durations vary with a fixed pseudo-random
 * sequence, so the output is the same on every run.  STREAMS (default 1)
 * writes the events as that many process streams, as a merged multi-process
 * report would hold them.
 */
#include "trace/trace.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct gen {
	struct trace_builder b;
	uint64_t t;
	uint32_t corr, pid, tid;
	uint32_t kname[64], api_launch, api_copy, api_set, api_sync, step, fwd;
	uint64_t written;
};

static void api(struct gen *g, uint32_t name, uint64_t start, uint64_t end, uint32_t corr)
{
	struct trace_api a = { 0 };

	a.start = start;
	a.end = end;
	a.pid = g->pid;
	a.tid = g->tid;
	a.correlation = corr;
	a.name_id = name;
	a.domain = TRACE_API_RUNTIME;
	trace_builder_add(&g->b, TRACE_EV_API, &a, sizeof(a));
	g->written++;
}

/* One block of (at most) 100 events; returns the events written. */
static void block(struct gen *g, uint64_t left)
{
	uint64_t step_start = g->t, fwd_start;
	struct trace_nvtx_range r = { 0 };
	uint64_t before = g->written;

	g->t += 100;
	fwd_start = g->t;
	for (int i = 0; i < 40 && g->written - before + 2 < left; i++) {
		struct trace_kernel k = { 0 };
		uint32_t n = rnd(64);
		uint64_t s = g->t;

		g->corr++;
		api(g, g->api_launch, s, s + 2000 + rnd(3000), g->corr);
		k.start = s + 5000 + rnd(1000);
		k.end = k.start + 1000 + (uint64_t)n * 500 + rnd(20000);
		k.pid = g->pid;
		k.device = 0;
		k.context = 1;
		k.stream = 7 + rnd(2);
		k.correlation = g->corr;
		k.name_id = g->kname[n];
		k.grid[0] = 132 * (1 + n % 4);
		k.grid[1] = k.grid[2] = 1;
		k.block[0] = 256;
		k.block[1] = k.block[2] = 1;
		k.registers = 64;
		trace_builder_add(&g->b, TRACE_EV_KERNEL, &k, sizeof(k));
		g->written++;
		g->t = s + 6000;
	}
	for (int i = 0; i < 5 && g->written - before + 2 < left; i++) {
		struct trace_memcpy c = { 0 };
		uint64_t s = g->t;

		g->corr++;
		api(g, g->api_copy, s, s + 3000 + rnd(2000), g->corr);
		c.start = s + 4000;
		c.end = c.start + 2000 + rnd(50000);
		c.bytes = 4096ull << rnd(12);
		c.pid = g->pid;
		c.device = 0;
		c.stream = 9;
		c.correlation = g->corr;
		c.kind = (uint8_t)(1 + rnd(3) % 2 + (rnd(5) == 0 ? 6 : 0)); /* HtoD, DtoH, DtoD */
		if (c.kind > COPY_PTOP)
			c.kind = COPY_DTOD;
		trace_builder_add(&g->b, TRACE_EV_MEMCPY, &c, sizeof(c));
		g->written++;
		g->t = s + 8000;
	}
	for (int i = 0; i < 2 && g->written - before + 2 < left; i++) {
		struct trace_memset m = { 0 };
		uint64_t s = g->t;

		g->corr++;
		api(g, g->api_set, s, s + 1500, g->corr);
		m.start = s + 2500;
		m.end = m.start + 800 + rnd(400);
		m.bytes = 1 << 20;
		m.pid = g->pid;
		m.stream = 7;
		m.correlation = g->corr;
		trace_builder_add(&g->b, TRACE_EV_MEMSET, &m, sizeof(m));
		g->written++;
		g->t = s + 3000;
	}
	for (int i = 0; i < 3 && g->written - before + 2 < left; i++) {
		g->corr++;
		api(g, g->api_sync, g->t, g->t + 10000 + rnd(100000), g->corr);
		g->t += 120000;
	}
	if (g->written - before + 2 < left) {
		struct trace_osrt o = { 0 };
		o.start = g->t;
		o.end = g->t + 500 + rnd(5000);
		o.pid = g->pid;
		o.tid = g->tid;
		o.func = OSRT_READ;
		o.result = 4096;
		o.arg = 3;
		trace_builder_add(&g->b, TRACE_EV_OSRT, &o, sizeof(o));
		g->written++;
		g->t += 6000;
	}
	r.start = fwd_start;
	r.end = g->t;
	r.pid = g->pid;
	r.tid = g->tid;
	r.name_id = g->fwd;
	r.kind = TRACE_NVTX_PUSHPOP;
	r.level = 1;
	trace_builder_add(&g->b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	r.start = step_start;
	r.end = g->t + 100;
	r.name_id = g->step;
	r.level = 0;
	trace_builder_add(&g->b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
	g->written += 2;
	g->t += 200;
}

static int gen_stream(const char *path, uint32_t stream, uint64_t events)
{
	struct gen g;
	struct trace_process p = { 0 };

	memset(&g, 0, sizeof(g));
	if (trace_builder_open(&g.b, path, 0, 0) < 0)
		return -1;
	g.pid = 1000 + stream;
	g.tid = g.pid;
	g.t = 1000000000ull;
	p.pid = g.pid;
	p.ppid = 1;
	p.start_mono_ns = g.t;
	p.cmdline_id = trace_builder_str(&g.b, "python train.py");
	trace_builder_add(&g.b, TRACE_EV_PROCESS, &p, sizeof(p));
	for (int i = 0; i < 64; i++) {
		char name[128];
		snprintf(name, sizeof(name), "void kernel_%02d<float, 128>(float const*, float*, int)",
			 i);
		g.kname[i] = trace_builder_str(&g.b, name);
	}
	g.api_launch = trace_builder_str(&g.b, "cudaLaunchKernel");
	g.api_copy = trace_builder_str(&g.b, "cudaMemcpyAsync");
	g.api_set = trace_builder_str(&g.b, "cudaMemsetAsync");
	g.api_sync = trace_builder_str(&g.b, "cudaStreamSynchronize");
	g.step = trace_builder_str(&g.b, "step");
	g.fwd = trace_builder_str(&g.b, "forward");
	while (g.written < events)
		block(&g, events - g.written);
	return trace_builder_close(&g.b, 0);
}

int main(int argc, char **argv)
{
	uint64_t events, per;
	uint32_t streams = 1;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: gen_report PATH EVENTS [STREAMS]\n");
		return 2;
	}
	set_error_prefix("gen_report");
	events = strtoull(argv[2], NULL, 10);
	if (argc == 4)
		streams = (uint32_t)strtoul(argv[3], NULL, 10);
	if (!events || !streams)
		return 2;
	unlink(argv[1]);
	if (streams == 1)
		return gen_stream(argv[1], 0, events) < 0;
	/* several processes: one part each, merged as `profile` merges them */
	{
		char **parts = xcalloc(streams, sizeof(*parts));
		int ret;
		per = events / streams;
		for (uint32_t s = 0; s < streams; s++) {
			parts[s] = xstrfmt("%s.part%u", argv[1], s);
			if (gen_stream(parts[s], s, s + 1 == streams ? events - per * s : per) < 0)
				return 1;
		}
		ret = trace_merge(argv[1], (const char *const *)parts, streams, 0);
		for (uint32_t s = 0; s < streams; s++) {
			unlink(parts[s]);
			free(parts[s]);
		}
		free(parts);
		return ret < 0;
	}
}
