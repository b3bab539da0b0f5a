/*
 * synth.h - write synthetic reports through the real writer (trace_builder)
 * for the analyze tests and benchmark: one process per writer, rows with
 * correlation ids joining launches to GPU work.
 *
 * Times are nanoseconds; every helper takes absolute times.
 */
#ifndef GS_TEST_SYNTH_H
#define GS_TEST_SYNTH_H

#include "trace/trace.h"

struct synth {
	struct trace_builder b;
	uint32_t pid;
	uint32_t corr;
	int failed;
};

/* Open @path (overwriting it) for process @pid with @cmdline; 0 or -1. */
int synth_open(struct synth *s, const char *path, uint32_t pid, const char *cmdline);
/* Add another process to the same report (same stream; pids differ). */
void synth_process(struct synth *s, uint32_t pid, const char *cmdline);
void synth_thread(struct synth *s, uint32_t tid, const char *name);
void synth_device(struct synth *s, uint32_t id, uint32_t sms, uint64_t mem, uint32_t clock_mhz);

/* An API call on thread @tid; returns its correlation id (new one). */
uint32_t synth_api(struct synth *s, uint32_t tid, const char *name, uint64_t start, uint64_t end);

struct synth_kernel {
	const char *name;
	uint32_t device, stream;
	uint32_t grid, block;      /* 1-D; 0 grid = 132 */
	uint16_t flags;
};

/* A kernel [ks, ke) launched by cudaLaunchKernel [as, ae) on @tid (no API when as == ae == 0). */
void synth_kernel(struct synth *s, uint32_t tid, uint64_t as, uint64_t ae, uint64_t ks, uint64_t ke,
		  const struct synth_kernel *k);
/* A copy [cs, ce) by API @api [as, ae) on @tid. */
void synth_copy(struct synth *s, uint32_t tid, const char *api, uint64_t as, uint64_t ae, uint64_t cs,
		uint64_t ce, unsigned kind, unsigned src_kind, unsigned dst_kind, uint64_t bytes,
		uint32_t stream);
void synth_osrt(struct synth *s, uint32_t tid, unsigned func, uint64_t start, uint64_t end);
void synth_nvtx(struct synth *s, uint32_t tid, const char *name, uint64_t start, uint64_t end);
void synth_memory(struct synth *s, uint64_t t, unsigned op, uint64_t addr, uint64_t bytes);
/* A CPU sample of thread @tid: cumulative run time @run_ns at @t. */
void synth_cpu(struct synth *s, uint32_t tid, uint64_t t, uint64_t run_ns);
void synth_metric(struct synth *s, uint64_t t, uint32_t device, const char *name, double v);
/* Close; 0 or -1. */
int synth_close(struct synth *s);

#endif
