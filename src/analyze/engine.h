/*
 * engine.h - the analysis engine of `gpuscope analyze`: the analysed window,
 * the GPU units and their busy sets, the idle gaps with what the CPU did
 * during each (timeline.c), and the dependency graph of the run with its
 * what-if replay (replay.c).  The rules (internal.h, rule_*.c) read it; it
 * never calls a rule.  Its thresholds are the "engine" row of the rule
 * table (rules.c): --set engine.KEY=VALUE.
 */
#ifndef GS_ANALYZE_ENGINE_H
#define GS_ANALYZE_ENGINE_H

#include "analyze.h"

struct az_rule;

/*
 * What a CPU thread was doing while the GPU it feeds was idle.  The order
 * is the order of the text report's breakdown.
 */
enum az_cause {
	CAUSE_IO,          /* reads: read/pread/recv/open/fread/mmap... (osrt) */
	CAUSE_IO_WRITE,    /* writes: write/pwrite/send/fsync/fwrite... (osrt): output, not input */
	CAUSE_WAIT,        /* poll/select/epoll/waitpid: waiting on other processes */
	CAUSE_LOCK,        /* mutex/condition/futex/semaphore/join */
	CAUSE_SLEEP,       /* nanosleep/usleep/sleep */
	CAUSE_DATA_CPU,    /* inside a data-loading frame (PyTorch DataLoader, --data-range) */
	CAUSE_DATA_PREP,   /* host work that ends in a large host-to-device upload (a batch) */
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
	uint32_t api;              /* API row of the launch that ended it, UINT32_MAX: none or queued */
	int oneoff;                /* a one-off (start-up, first launch, JIT): no cause counts it */
	uint32_t part[CAUSE__N];   /* ns per cause inside the window (clamped to 4.29 s) */
};

/* A one-off: start-up, first-launch module loading, JIT compilation, a cold start. */
struct az_oneoff {
	uint64_t start, len;
	int cause;                 /* what the thread mostly did */
	uint32_t name, name_tag;   /* name key of that cause: tag 1 API, 2 osrt, 3 NVTX, 4 upload */
	int next_kind;             /* the GPU operation that followed: 0 kernel, 1 copy, 2 set */
	uint32_t next_name;        /* its kernel name id (first of its name) */
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
	uint64_t *unit_keys;       /* (pid << 32 | device) << 20 | index, sorted: az_unit_find's index */
	size_t nunit_keys;         /* units it covers (rebuilt when units were added) */
	uint64_t busy_ns, idle_ns; /* summed over units */
	uint64_t unit_wall_ns;     /* wall_ns * nunits: the denominator of gains */

	/* gaps (>= gpu-starvation.min_gap_us) of every unit, in time order per unit */
	struct az_gap *gaps;
	size_t ngaps, alloc_gaps;
	uint64_t gpu_side_ns;      /* idle while the next work was already queued */
	uint64_t gpu_side_gaps;
	struct az_cause_stat cause[CAUSE__N];
	struct az_oneoff *oneoffs;  /* one-off gaps, in time order; not in any cause */
	size_t noneoffs, alloc_oneoffs;
	uint64_t oneoff_ns;
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
	struct az_replay *replay;  /* the dependency graph, built on first use (az_replay_get) */
	int replay_tried;          /* az_replay_get() ran: replay is the graph or NULL for good */
	struct model_corr corr;    /* launch correlation, built by the timeline, used by the replay */
	uint8_t *kclass;           /* name id -> enum az_kernel_class | 0x80 once computed */
	uint8_t *data_frame;       /* name id -> 0 unknown, 1 no, 2 a data-loading frame (az_is_data_id) */
};

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
/* timeline.c: units, busy sets, gaps and their attribution. */
void az_build_timeline(struct az_ctx *c);
void az_release_timeline(struct az_ctx *c);
/* @out = union of three normalised sets (empty sets allowed), without sorting. */
void az_merge3(struct interval_set *out, const struct interval_set *a, const struct interval_set *b,
	       const struct interval_set *c);


/* ---- the dependency graph and its replay (replay.c) ---- */

struct az_replay;

/*
 * A transformation of the graph: the fix a finding recommends.  Each hook
 * is optional and returns the new value of what it is given.
 *  - causes: bits (1u << enum az_cause): the launching thread's host time
 *    of these causes in each idle gap (the attribution) is removed;
 *  - call(node, api row, duration, &nodep): an API call's duration; set
 *    *nodep to drop its wait on the GPU (a sync removed);
 *  - op(op, kind, row, duration): a GPU operation's duration;
 *  - latency: an operation's launch latency; spacing: the spacing behind
 *    the previous operation on its stream of an operation that waited for
 *    its launch (queued ones keep the GPU's own spacing);
 *  - seg(node, api row, host time): the host time before a call.
 */
struct az_xform {
	const char *what;          /* the fix in words ("the allocations served from a cache") */
	unsigned causes;
	void *ctx;
	uint64_t (*call)(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			 uint32_t api_row, uint64_t dur, int *nodep);
	uint64_t (*op)(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op,
		       int kind, uint32_t row, uint64_t dur);
	uint64_t (*latency)(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op,
			    uint64_t lat);
	uint64_t (*spacing)(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op,
			    uint64_t kk);
	/* the host time before call @node (after the cut by causes) */
	uint64_t (*seg)(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			uint32_t api_row, uint64_t seg);
};

/*
 * az_replay_build - the dependency graph of the analysed window (built
 * after the timeline), or NULL where it cannot be built: no API records
 * (no launch edges), no GPU work, or a window of several pieces.
 */
struct az_replay *az_replay_build(struct az_ctx *c);
void az_replay_free(struct az_replay *rp);
/* The graph of the window, built on the first call (NULL where it cannot be built). */
struct az_replay *az_replay_get(struct az_ctx *c);
/*
 * az_replay_run - replay under @x (NULL: as recorded).  Returns the time
 * by which the GPUs' last operations end earlier, summed over GPUs (0 when
 * nothing changed); per GPU into @unit_saved (c->nunits entries) if given.
 */
uint64_t az_replay_run(struct az_ctx *c, struct az_replay *rp, const struct az_xform *x,
		       int64_t *unit_saved);
/* The kind (0 kernel, 1 copy, 2 set) and model row of GPU operation @op; 0, or -1 out of range. */
int az_replay_op_row(const struct az_replay *rp, uint32_t op, int *kind, uint32_t *row);
/*
 * The host code in the recorded host time before call @node: that time less
 * OS-runtime I/O, waits, locks and sleeps and data-loading frames in it.
 */
uint64_t az_replay_host_code(const struct az_replay *rp, uint32_t node);
/* The node of API row @api_row (UINT32_MAX when none). */
uint32_t az_replay_node_of_api(const struct az_replay *rp, uint32_t api_row);

/* The engine's threshold @key (the "engine" row of the rule table, --set engine.KEY=V). */
double az_engine_param(const struct az_ctx *c, const char *key);

#endif
