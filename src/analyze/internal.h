/*
 * internal.h - what the rules of `gpuscope analyze` share (not a public API).
 *
 * analyze_run() builds one struct az_ctx per run: the analysed window, the
 * GPU "units" (one per process and device, as nsys's gpu_gaps rule keys its
 * gaps), their busy sets, and one pass over every GPU idle gap that says
 * what the CPU thread which launched the next GPU work was doing during it
 * (the attribution, timeline.c).  Rules then read the context and add
 * findings with az_add().  A rule is one file rule_<name>.c and one row of
 * az_rules[] (rules.c).
 */
#ifndef GS_ANALYZE_INTERNAL_H
#define GS_ANALYZE_INTERNAL_H

#include "analyze.h"

/* A threshold of a rule: "rule.key" on the command line (--set). */
struct az_param {
	const char *key;
	double def;
	const char *why;           /* one line: why the default is what it is */
};

struct az_ctx;

struct az_rule {
	const char *id;            /* kebab-case rule id, also the --set prefix */
	const char *title;
	void (*run)(struct az_ctx *c, const struct az_rule *self);
	const struct az_param *params; /* terminated by { NULL } */
	const char *emits;         /* finding ids it can emit, comma-separated */
};

extern const struct az_rule az_rules[];
extern const size_t az_nrules;

/*
 * What a CPU thread was doing while the GPU it feeds was idle.  The order
 * is the order of the text report's breakdown.
 */
enum az_cause {
	CAUSE_IO,          /* read/pread/recv/open/fread/write... (osrt) */
	CAUSE_WAIT,        /* poll/select/epoll/waitpid: waiting on other processes */
	CAUSE_LOCK,        /* mutex/condition/futex/semaphore/join */
	CAUSE_SLEEP,       /* nanosleep/usleep/sleep */
	CAUSE_DATA_CPU,    /* running inside an NVTX range named like data work */
	CAUSE_CPU,         /* running (or unrecorded) outside any traced call */
	CAUSE_SYNC,        /* after a blocking sync call or a synchronous copy */
	CAUSE_PAGEABLE,    /* inside a copy call from/to pageable memory */
	CAUSE_ALLOC,       /* inside / after cudaMalloc, cudaFree and kin */
	CAUSE_API,         /* inside another CUDA API call */
	CAUSE_LAUNCH,      /* launching: launch latency and short dispatch pauses */
	CAUSE_INIT,        /* one-time CUDA start-up: context creation, module loading */
	CAUSE_UNKNOWN,     /* no CPU data for the process */
	CAUSE__N
};
const char *az_cause_name(int cause);

/* Classes of CUDA API names (az_api_class()). */
enum az_api_class {
	API_OTHER = 0,
	API_LAUNCH,        /* kernel launches, graph launches */
	API_SYNC,          /* device/stream/event/context synchronise, event query not */
	API_COPY_SYNC,     /* cudaMemcpy, cudaMemset (not *Async) */
	API_COPY_ASYNC,    /* cudaMemcpyAsync, cudaMemsetAsync, ... */
	API_ALLOC,         /* cudaMalloc*, cuMemAlloc*, cudaHostAlloc */
	API_FREE,          /* cudaFree*, cuMemFree* (implicitly synchronising) */
	API_INIT,          /* cuInit, primary context, module/library loading: once per process */
};
int az_api_class(const char *name);

#define AZ_TOP 8

/* A small "top N by time" tally of (pid, tid) or of a name id. */
struct az_tally {
	uint64_t key[AZ_TOP];
	uint64_t ns[AZ_TOP];
	size_t n;
};
void az_tally_add(struct az_tally *t, uint64_t key, uint64_t ns);
/* Index of the largest entry, or -1 when empty. */
int az_tally_top(const struct az_tally *t);

/* The idle time of one cause, over every unit. */
struct az_cause_stat {
	uint64_t ns;               /* idle time attributed */
	uint64_t gaps;             /* gaps where this cause took some time */
	struct az_tally threads;   /* key = pid << 32 | tid */
	struct az_tally names;     /* osrt func / API name id / NVTX name id */
	struct interval big[3];    /* the gaps where this cause took the most time */
	uint64_t big_ns[3];
};

/* One GPU: a (process, device) pair with GPU work. */
struct az_unit {
	uint32_t pid, device;
	uint64_t first, last;      /* first start, last end of its GPU work in the window */
	uint64_t busy_ns, idle_ns; /* within the window and [first, last] */
	struct interval_set compute; /* non-communication kernels */
	struct interval_set comm;    /* communication kernels */
	struct interval_set copy;    /* memcpys and memsets */
	uint64_t kernels, copies;
	int has_work;
};

struct az_gap {
	uint64_t start, len;       /* len: the part inside the window */
	size_t unit;
};

struct az_ctx {
	const struct model *m;
	const struct analyze_opts *o;
	struct analyze_result *r;
	double *params;            /* resolved thresholds, az_nrules * AZ_MAX_PARAMS */

	struct interval_set win;   /* the analysed window (normalised) */
	uint64_t lo, hi;           /* first start / last end of win */
	uint64_t wall_ns;          /* |win| */
	uint64_t t0;               /* report start: times print relative to it */

	struct az_unit *units;
	size_t nunits;
	uint64_t busy_ns, idle_ns; /* summed over units */
	uint64_t unit_wall_ns;     /* wall_ns * nunits: the denominator of gains */

	/* gaps (>= gpu-starvation.min_gap_us) of every unit, in time order per unit */
	struct az_gap *gaps;
	size_t ngaps, alloc_gaps;
	uint64_t gpu_side_ns;      /* idle while the next work was already queued */
	uint64_t gpu_side_gaps;
	struct az_cause_stat cause[CAUSE__N];
	uint64_t launch_gaps;      /* gaps (any length) whose next launch came after the gap began */
	uint64_t cpu_sampled_ns;   /* CPU-work idle time that thread CPU samples bracket */
	uint64_t cpu_on_ns;        /* the part of it the thread was running */

	/* steps */
	double step_period_s;
	uint64_t nsteps;           /* step instances (NVTX) or wall / period; 0 = unknown */
	struct interval *steps;    /* NVTX step instances in the window, or NULL */
	size_t nsteps_nvtx;
	char *step_source;
	uint64_t *step_cause;       /* nsteps_nvtx x CAUSE__N: idle time per step and cause */
	uint64_t warmup_skipped;    /* ns of the first step left out of the window */

	int pytorch;               /* the report shows PyTorch */
	int has_runtime;           /* runtime API rows exist: count calls at that level */
	int has_gpu;               /* any GPU work in the window */
	uint32_t *api_class;       /* API name id -> enum az_api_class (m->str.nr) */
	uint8_t *kclass;           /* name id -> enum az_kernel_class | 0x80 once computed */
};

#define AZ_MAX_PARAMS 12

/* The value of threshold @key of @rule (defaults overridden by --set). */
double az_param(const struct az_ctx *c, const struct az_rule *rule, const char *key);

/*
 * Should a rule count this API call?  Driver calls made inside runtime calls
 * are recorded too; counting one level keeps counts true.
 */
static inline int az_api_counted(const struct az_ctx *c, const struct trace_api *a)
{
	return !c->has_runtime || a->domain == TRACE_API_RUNTIME;
}

/* Is @t inside the window?  (Inline: rules call it once per row.) */
int az_in_win_slow(const struct az_ctx *c, uint64_t t);
static inline int az_in_win(const struct az_ctx *c, uint64_t t)
{
	if (t < c->lo || t >= c->hi)
		return 0;
	return c->win.n <= 1 ? 1 : az_in_win_slow(c, t);
}
/* Length of [a, b) inside the window. */
uint64_t az_win_overlap(const struct az_ctx *c, uint64_t a, uint64_t b);
/* Seconds of @t relative to the report start. */
double az_rel_s(const struct az_ctx *c, uint64_t t);

/* a / b, or 0 when b is 0 or the result is not finite. */
double az_div(double a, double b);

/*
 * az_add - add a finding (copied strings; @gain is clamped to 0..1).
 * @where: time windows (absolute ns), copied.  Returns the finding.
 */
struct finding *az_add(struct az_ctx *c, const char *id, int severity, double gain,
		       const char *title, const char *formula, const char *evidence,
		       const char *recommendation, const struct interval *where, size_t nwhere);
/* Severity from gain: >= 20% critical, >= 5% warning, else info. */
int az_severity(double gain);
/* Add a note about what the input lacks (kept once). */
void az_note(struct az_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append "a-b s" (relative seconds) for @iv to @sb. */
void az_fmt_window(const struct az_ctx *c, struct strbuf *sb, const struct interval *iv);
/* Percent of wall (gain as a fraction): "12.3%". */
const char *az_pct(char *buf, size_t n, double frac);

/* timeline.c: units, busy sets, gaps and their attribution. */
void az_build_timeline(struct az_ctx *c);
void az_release_timeline(struct az_ctx *c);
/* @out = union of three normalised sets (empty sets allowed), without sorting. */
void az_merge3(struct interval_set *out, const struct interval_set *a, const struct interval_set *b,
	       const struct interval_set *c);

/* Does the NVTX range name look like data work (load, batch, read, decode ...)? */
int az_is_data_name(const char *name);

/*
 * az_steps_line - "in 3 of 9 steps (most 38.2 ms, the step at 1.234 s)" for
 * the idle time of @causes, appended to @sb with a newline; nothing without
 * NVTX steps.
 */
void az_steps_line(const struct az_ctx *c, const int *causes, size_t n, struct strbuf *sb);

/* "I/O 3.1 s (120 gaps; mostly in read 2.9 s; thread 'main' pid 1 tid 1)" */
void az_describe_cause(const struct az_ctx *c, int cause, struct strbuf *sb);

/* Kernel name classes (timeline.c), computed once per name. */
enum az_kernel_class {
	KC_COMM = 1u << 0,         /* NCCL and other communication kernels */
	KC_GEMM = 1u << 1,         /* GEMM or convolution */
	KC_TC = 1u << 2,           /* named as a tensor-core kernel */
};
unsigned az_kernel_class(struct az_ctx *c, uint32_t name_id);
/* Longest kernel name in a finding (kernel_label): stats and dump keep full names. */
#define AZ_NAME_MAX 100
int az_is_comm(struct az_ctx *c, const struct trace_kernel *k);
/* The unit of (pid, device), or NULL. */
struct az_unit *az_unit_find(struct az_ctx *c, uint32_t pid, uint32_t device);
/* SM count of a unit's device (0 when unknown). */
uint32_t az_unit_sms(const struct az_ctx *c, uint32_t pid, uint32_t device);
/* Thread blocks a kernel launched (grid x * y * z; an unset dimension is 1). */
static inline uint64_t az_kernel_blocks(const struct trace_kernel *k)
{
	return (uint64_t)k->grid[0] * (k->grid[1] ? k->grid[1] : 1) * (k->grid[2] ? k->grid[2] : 1);
}

/* The rules. */
void rule_starvation(struct az_ctx *c, const struct az_rule *self);
void rule_launch(struct az_ctx *c, const struct az_rule *self);
void rule_sync(struct az_ctx *c, const struct az_rule *self);
void rule_copies(struct az_ctx *c, const struct az_rule *self);
void rule_comm(struct az_ctx *c, const struct az_rule *self);
void rule_tensor_cores(struct az_ctx *c, const struct az_rule *self);
void rule_underfill(struct az_ctx *c, const struct az_rule *self);
void rule_alloc(struct az_ctx *c, const struct az_rule *self);
void rule_memory(struct az_ctx *c, const struct az_rule *self);
void rule_throttle(struct az_ctx *c, const struct az_rule *self);

/* The rule row of @id, or NULL. */
const struct az_rule *az_rule_find(const char *id);

#endif
