/*
 * synth.c - see synth.h.
 */
#include "synth.h"

#include <string.h>
#include <unistd.h>

int synth_open(struct synth *s, const char *path, uint32_t pid, const char *cmdline)
{
	memset(s, 0, sizeof(*s));
	unlink(path);
	if (trace_builder_open(&s->b, path, 0, 0) < 0)
		return -1;
	synth_process(s, pid, cmdline);
	return 0;
}

void synth_process(struct synth *s, uint32_t pid, const char *cmdline)
{
	struct trace_process p;

	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.ppid = 1;
	p.cmdline_id = trace_builder_str(&s->b, cmdline);
	p.exe_id = trace_builder_str(&s->b, cmdline);
	trace_builder_add(&s->b, TRACE_EV_PROCESS, &p, sizeof(p));
	s->pid = pid;
}

void synth_thread(struct synth *s, uint32_t tid, const char *name)
{
	struct trace_thread t;

	memset(&t, 0, sizeof(t));
	t.pid = s->pid;
	t.tid = tid;
	t.name_id = trace_builder_str(&s->b, name);
	t.flags = TRACE_THREAD_NAME;
	trace_builder_add(&s->b, TRACE_EV_THREAD, &t, sizeof(t));
}

void synth_device(struct synth *s, uint32_t id, uint32_t sms, uint64_t mem, uint32_t clock_mhz)
{
	struct trace_device d;

	memset(&d, 0, sizeof(d));
	d.id = id;
	d.name_id = trace_builder_str(&s->b, "NVIDIA H200");
	d.sm_count = sms;
	d.cc_major = 9;
	d.core_clock_khz = clock_mhz * 1000;
	d.global_mem = mem;
	d.pid = s->pid;
	trace_builder_add(&s->b, TRACE_EV_DEVICE, &d, sizeof(d));
}

uint32_t synth_api(struct synth *s, uint32_t tid, const char *name, uint64_t start, uint64_t end)
{
	struct trace_api a;

	memset(&a, 0, sizeof(a));
	a.start = start;
	a.end = end;
	a.pid = s->pid;
	a.tid = tid;
	a.correlation = ++s->corr;
	a.name_id = trace_builder_str(&s->b, name);
	a.domain = TRACE_API_RUNTIME;
	trace_builder_add(&s->b, TRACE_EV_API, &a, sizeof(a));
	return a.correlation;
}

void synth_kernel(struct synth *s, uint32_t tid, uint64_t as, uint64_t ae, uint64_t ks, uint64_t ke,
		  const struct synth_kernel *k)
{
	struct trace_kernel r;

	memset(&r, 0, sizeof(r));
	r.correlation = as || ae ? synth_api(s, tid, "cudaLaunchKernel", as, ae) : ++s->corr;
	r.start = ks;
	r.end = ke;
	r.pid = s->pid;
	r.device = k->device;
	r.stream = k->stream ? k->stream : 7;
	r.name_id = trace_builder_str(&s->b, k->name);
	r.grid[0] = k->grid ? k->grid : 132;
	r.grid[1] = r.grid[2] = 1;
	r.block[0] = k->block ? k->block : 256;
	r.block[1] = r.block[2] = 1;
	r.flags = k->flags;
	trace_builder_add(&s->b, TRACE_EV_KERNEL, &r, sizeof(r));
}

void synth_copy(struct synth *s, uint32_t tid, const char *api, uint64_t as, uint64_t ae, uint64_t cs,
		uint64_t ce, unsigned kind, unsigned src_kind, unsigned dst_kind, uint64_t bytes,
		uint32_t stream)
{
	struct trace_memcpy r;

	memset(&r, 0, sizeof(r));
	r.correlation = synth_api(s, tid, api, as, ae);
	r.start = cs;
	r.end = ce;
	r.bytes = bytes;
	r.pid = s->pid;
	r.stream = stream;
	r.kind = (uint8_t)kind;
	r.src_kind = (uint8_t)src_kind;
	r.dst_kind = (uint8_t)dst_kind;
	if (strstr(api, "Async"))
		r.flags = TRACE_GPU_ASYNC;
	trace_builder_add(&s->b, TRACE_EV_MEMCPY, &r, sizeof(r));
}

void synth_osrt(struct synth *s, uint32_t tid, unsigned func, uint64_t start, uint64_t end)
{
	struct trace_osrt r;

	memset(&r, 0, sizeof(r));
	r.start = start;
	r.end = end;
	r.pid = s->pid;
	r.tid = tid;
	r.func = (uint16_t)func;
	r.arg = -1;
	trace_builder_add(&s->b, TRACE_EV_OSRT, &r, sizeof(r));
}

void synth_nvtx(struct synth *s, uint32_t tid, const char *name, uint64_t start, uint64_t end)
{
	struct trace_nvtx_range r;

	memset(&r, 0, sizeof(r));
	r.start = start;
	r.end = end;
	r.pid = s->pid;
	r.tid = tid;
	r.end_tid = tid;
	r.kind = TRACE_NVTX_PUSHPOP;
	r.name_id = trace_builder_str(&s->b, name);
	trace_builder_add(&s->b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
}

void synth_memory(struct synth *s, uint64_t t, unsigned op, uint64_t addr, uint64_t bytes)
{
	struct trace_memory r;

	memset(&r, 0, sizeof(r));
	r.time = t;
	r.address = addr;
	r.bytes = bytes;
	r.pid = s->pid;
	r.op = (uint8_t)op;
	r.mem_kind = MEM_DEVICE;
	trace_builder_add(&s->b, TRACE_EV_MEMORY, &r, sizeof(r));
}

void synth_cpu(struct synth *s, uint32_t tid, uint64_t t, uint64_t run_ns)
{
	struct trace_cpu_sample r;

	memset(&r, 0, sizeof(r));
	r.time = t;
	r.run_ns = run_ns;
	r.pid = s->pid;
	r.tid = tid;
	trace_builder_add(&s->b, TRACE_EV_CPU_SAMPLE, &r, sizeof(r));
}

void synth_metric(struct synth *s, uint64_t t, uint32_t device, const char *name, double v)
{
	struct trace_metric r;

	memset(&r, 0, sizeof(r));
	r.time = t;
	r.value = v;
	r.device = device;
	r.name_id = trace_builder_str(&s->b, name);
	r.pid = s->pid;
	trace_builder_add(&s->b, TRACE_EV_METRIC, &r, sizeof(r));
}

int synth_close(struct synth *s)
{
	return trace_builder_close(&s->b, 0);
}
