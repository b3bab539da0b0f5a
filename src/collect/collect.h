/*
 * collect.h - the injected collector's internal contract (libgpuscope-collect.so).
 *
 * One shared library serves three entry points: LD_PRELOAD (a constructor
 * plus the OS-runtime interposers), NVTX_INJECTION64_PATH
 * (InitializeInjectionNvtx2) and CUDA_INJECTION64_PATH (InitializeInjection,
 * in cupti.c).  All three reach the same globals.
 *
 * Configuration comes from the environment once, in cl_init() (called from
 * the constructor and from every entry point; idempotent and thread-safe):
 * config.c reads every GPUSCOPE_* variable (env.h) into cl_config, before
 * the program's code runs.  After cl_init() returns, cl_config is read-only
 * (fork() keeps it as it is); no other file calls getenv() for a setting
 * but cupti_load.c for GPUSCOPE_CUPTI_PATH (tests/cupti link the loader alone).
 *
 * Recording: a hook calls cl_reserve() for a record of a given type, fills
 * it, and calls cl_commit().  The record lands in the calling thread's
 * buffer: no lock, no allocation, no I/O once the thread's buffer exists.
 * A background writer thread streams committed records into this process's
 * part file (a report of its own) at least every cl_config.flush_ns, so a
 * crash loses at most that much; exit paths and fatal signals flush the rest.
 *
 * Environment (set by `gpuscope profile`, documented in docs/collector.md):
 *   GPUSCOPE_DIR           directory for part files (required to record)
 *   GPUSCOPE_TRACE         comma list: nvtx,osrt,cuda
 *   GPUSCOPE_OSRT_THRESHOLD_NS, GPUSCOPE_CPU_SAMPLE_HZ, GPUSCOPE_CAPTURE,
 *   GPUSCOPE_CAPTURE_END, GPUSCOPE_DELAY_NS, GPUSCOPE_DURATION_NS,
 *   GPUSCOPE_CUDA_ALL_APIS, GPUSCOPE_BUFFER_KB, GPUSCOPE_MAX_BUFFER_MB
 *   GPUSCOPE_KERNEL_METRICS, GPUSCOPE_KERNEL_FILTER, GPUSCOPE_KERNEL_COUNT,
 *   GPUSCOPE_KERNEL_MAX (read by kmetrics.c, see kmetrics.h)
 */
#ifndef GS_COLLECT_H
#define GS_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"

#define CL_EXPORT __attribute__((visibility("default")))

enum cl_trace {
	CL_TRACE_NVTX = 1u << 0,
	CL_TRACE_OSRT = 1u << 1,
	CL_TRACE_CUDA = 1u << 2,
};

enum cl_capture_mode {
	CL_CAPTURE_NONE = 0,        /* record from the start (after --delay) */
	CL_CAPTURE_NVTX = 1,        /* between push/start and pop/end of a named range */
	CL_CAPTURE_CUDA_PROFILER = 2, /* between cudaProfilerStart and cudaProfilerStop */
};

struct cl_config {
	int enabled;                /* GPUSCOPE_DIR was set and the part file opened */
	unsigned trace;             /* enum cl_trace */
	uint64_t osrt_threshold_ns;
	unsigned cpu_sample_hz;     /* 0 = off */
	int capture_mode;           /* enum cl_capture_mode */
	char capture_name[256];     /* NVTX range name for CL_CAPTURE_NVTX */
	char capture_domain[128];   /* "" = any domain */
	int capture_repeat;         /* --capture-range-end=repeat */
	uint64_t delay_ns, duration_ns;
	int cuda_all_apis;          /* --cuda-trace-all-apis */
	uint64_t flush_ns;          /* writer period (default 50 ms) */
	size_t buffer_bytes;        /* per block */
	size_t max_buffer_bytes;    /* cap on all blocks; past it records are dropped */
	int watch_fd;               /* profile's liveness pipe (read end), -1 = none */
	int zstd_level;             /* GPUSCOPE_ZSTD_LEVEL (default 1) */
	int clock_monotonic;        /* GPUSCOPE_CLOCK=monotonic: no TSC clock */
	int keep_layout;            /* GPUSCOPE_KEEP_LAYOUT (default 1): layout.c holds */
	uint64_t start_ns;          /* GPUSCOPE_START_NS: the program's start, 0 = unknown */
	/* CUDA tracing (cupti.c, cupti_load.c); developers' knobs, docs/cuda.md */
	struct {
		char api_mode[32];      /* GPUSCOPE_CUPTI_API_MODE, "" = callback */
		char kinds[256];        /* GPUSCOPE_CUPTI_KINDS */
		int kinds_set;          /* ... was given */
		int no_subscribe;       /* GPUSCOPE_CUPTI_SUBSCRIBE=0 */
		int cupti_clock;        /* GPUSCOPE_CUPTI_CLOCK=cupti */
		unsigned driver;        /* GPUSCOPE_CUPTI_DRIVER: 0 or 1 (default) */
		unsigned pool;          /* GPUSCOPE_CUPTI_POOL: 0 or 1 (default) */
		size_t buffer_bytes;    /* GPUSCOPE_CUPTI_BUFFER_KB: 64 KiB .. 1 GiB (4 MiB) */
		unsigned flush_ms;      /* GPUSCOPE_CUPTI_FLUSH_MS: 0 .. 600000 (1000) */
	} cupti;
	/* on-demand tracing (ondemand.c, docs/always-on.md) */
	int on_demand;              /* GPUSCOPE_ON_DEMAND=1: idle until a capture */
	uint64_t ring_ns;           /* flight recorder: how far back a capture reaches */
	size_t ring_bytes;          /* flight recorder: its memory */
	char step_range[128];       /* NVTX range name prefix that marks a step */
	int trigger;                /* enum trigger_kind (trigger.h), 0 = none */
	double trigger_value;       /* its threshold */
	char report_name[256];      /* `gpuscope capture NAME` finds the run by it */
	char ctl_dir[1024];         /* "" = $XDG_RUNTIME_DIR/gpuscope or /tmp/gpuscope-UID */
	char dir[4096];
};

extern struct cl_config cl_config;

/* Initialise from the environment; safe to call many times.  0 or -1 (disabled). */
int cl_init(void);

/*
 * cl_reserve - space for one record of @type (@size bytes, the record
 * without entry header) in this thread's buffer, or NULL when not recording
 * or when the record must be dropped (then the drop is already counted).
 * Must be followed by cl_commit() before the next cl_reserve() on this thread.
 */
void *cl_reserve(unsigned type, size_t size);
/*
 * cl_reserve_at - the same for a record of something that happened at
 * @time (report clock), judged by that time against the capture windows,
 * --delay and --duration rather than by now: GPU records arrive after the
 * work they describe, possibly after the window has closed.
 */
void *cl_reserve_at(unsigned type, size_t size, uint64_t time);
void cl_commit(void);

/*
 * cl_intern - the id of string @s (of @len bytes) in this process's stream,
 * defining it in the stream on first use.  0 for the empty string or when
 * not recording.  Safe from any thread; takes no lock on a hit.
 * (A first use writes a definition record: intern before cl_reserve(),
 * never between cl_reserve() and cl_commit().)
 */
uint32_t cl_intern(const char *s, size_t len);

/* Time on the report clock (CLOCK_MONOTONIC ns). */
uint64_t cl_now(void);
uint32_t cl_pid(void);
uint32_t cl_tid(void);

/* Whether events happening now should be kept (capture range, delay, duration). */
int cl_recording(void);
/* Whether an event that happened at @time is kept (the windows so far). */
int cl_recording_at(uint64_t time);
/* Capture range edges, from NVTX or cudaProfilerStart/Stop hooks. */
void cl_capture_begin(void);
void cl_capture_end(void);
/*
 * cl_capture_begin_by - open a capture window now, opened by @trigger
 * (enum trace_capture_trigger); an on-demand capture ends after @steps step
 * ranges or @duration_ns, whichever comes first (0: no such bound).
 * Returns the capture's number (from 1), or 0 when one is already open or
 * capturing is over.
 */
uint32_t cl_capture_begin_by(unsigned trigger, uint32_t steps, uint64_t duration_ns);
/* Whether a capture window is open now. */
int cl_capturing(void);

/* Count @n dropped records of @source (enum trace_drop_source). */
void cl_add_drops(unsigned source, uint64_t n);
/* A one-line warning stored in the report ("CUDA tracing off: ..."). */
void cl_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write this process's TRACE_EV_PROC_ATTR record (procinfo.c; once, from cl_init()). */
void cl_procinfo_emit(void);
/* Write everything committed so far (all threads) to the part file. */
void cl_flush_all(void);

/* Re-entrancy guard: hooks do nothing while this thread is inside the collector. */
int cl_guard_enter(void);   /* returns 0 when already inside (skip the hook) */
void cl_guard_leave(void);

/*
 * CUDA backend hooks (cupti.c).  cl_cuda_flush() is called by the exit and
 * signal paths before the final write (@final: the process is ending);
 * cl_cuda_atfork_child() marks CUPTI unusable in a forked child.
 */
void cl_cuda_flush(int final);
void cl_cuda_atfork_child(void);
/*
 * cl_cuda_capture - under --on-demand, switch CUDA tracing on (@on: CUPTI
 * subscribed and its activity kinds enabled, the first time CUPTI is
 * started at all) or off (kinds disabled, buffers flushed).  Called by the
 * writer thread when a capture opens or closes.
 */
void cl_cuda_capture(int on);

#endif
