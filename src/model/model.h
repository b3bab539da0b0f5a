/*
 * model.h - the in-memory model every command downstream of a report reads.
 *
 * Collectors and importers only produce a model; stats, rules, exporters and
 * diff only consume it.  A model is a set of tables, one per event type, each
 * an array of the report's own record structs (trace.h), plus processes,
 * threads and one interned string table.
 *
 * Invariants after model_finish():
 *  - every string id in every row refers to m->str (0 = "");
 *  - every table with times is sorted by start (or time), ties by end;
 *  - NVTX start/end ranges are joined with their ends; a range never closed
 *    has end == 0 and is counted in m->nvtx_open;
 *  - t_min/t_max span every timed row (0/0 for an empty model);
 *  - m->has says which kinds of data the input could contain at all, so a
 *    consumer can tell "none happened" from "not recorded" (MODEL_HAS_*).
 *
 * Ownership: the model owns every array and string; model_release() frees
 * them.  Importers fill a model with model_init(), model_intern(), the
 * MODEL_PUSH() macro and model_finish().
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include "../trace/trace.h"
#include "../util/util.h"

#define MODEL_TABLE(type) struct { type *v; size_t n, alloc; }
/* Append a zeroed row to table @t and return a pointer to it. */
#define MODEL_PUSH(t) \
	((__typeof__((t).v))model_table_push((void **)&(t).v, &(t).n, &(t).alloc, sizeof((t).v[0])))
void *model_table_push(void **v, size_t *n, size_t *alloc, size_t elem);

struct model_process {
	uint32_t pid, ppid;
	uint64_t start_realtime_ns, start_mono_ns;
	uint32_t cmdline_id, exe_id, host_id;
	int ended;                 /* the stream ended cleanly */
	uint32_t stream;           /* stream index in the report, or 0 */
	/*
	 * Rank, affinity, memory policy and clock alignment (TRACE_EV_PROC_ATTR;
	 * Kineto's distributedInfo).  String ids refer to m->str.  When nothing
	 * said (has_attr 0), model_finish() sets attr.rank, local_rank,
	 * world_size and mempolicy to -1: read them through model_proc_rank().
	 */
	struct trace_proc_attr attr;
	int has_attr;
};

struct model_thread {
	uint32_t pid, tid;
	uint32_t name_id;
	uint64_t first, last;      /* first and last time seen, 0 when unknown */
};

enum model_has {
	MODEL_HAS_CUDA = 1u << 0,     /* kernels/copies/API could be recorded */
	MODEL_HAS_NVTX = 1u << 1,
	MODEL_HAS_OSRT = 1u << 2,
	MODEL_HAS_CPU_SAMPLES = 1u << 3,
	MODEL_HAS_METRICS = 1u << 4,
	MODEL_HAS_API = 1u << 5,      /* runtime/driver API calls */
	MODEL_HAS_SYNC = 1u << 6,     /* synchronisation records */
	MODEL_HAS_MEMORY = 1u << 7,   /* allocation records */
	MODEL_HAS_KMETRICS = 1u << 8, /* per-kernel hardware counters (--kernel-metrics) */
	MODEL_HAS_TORCH_MEM = 1u << 9, /* PyTorch caching-allocator samples or OOMs (docs/memory.md) */
};

/*
 * Where a device fact came from, so that `info` can say it and a consumer
 * can tell a recorded number from a looked-up or an unknown one.  Each
 * source is a string id in m->str:
 *  - "recorded": read from the input (report, trace, export);
 *  - "table": filled in from gpuscope's table of GPU facts by model name;
 *  - "-: REASON": unknown, and why ("-: the export has no TARGET_INFO_GPU table");
 *  - 0: not said.  A consumer then takes a non-zero value as recorded and a
 *    zero one as unknown for no stated reason (trace_device zero = unknown).
 * A row annotates the trace_device row with the same id and pid; importers
 * push them with MODEL_PUSH(m->device_sources); devices without one use the
 * default above.
 */
enum model_fact {
	MODEL_FACT_NAME,
	MODEL_FACT_SMS,            /* sm_count */
	MODEL_FACT_CC,             /* cc_major.cc_minor */
	MODEL_FACT_MEMORY,         /* global_mem */
	MODEL_FACT__COUNT,
};

struct model_device_source {
	uint32_t device, pid;      /* the trace_device row's id and pid */
	uint32_t src[MODEL_FACT__COUNT];
};

/*
 * Operator input shapes (Kineto's record_shapes): one row per CPU operator
 * instance that recorded "Input Dims", kept so that stats can compute the
 * work (FLOPs, bytes) of the kernels the operator launched.  Ops without
 * shapes have no row.  The operator's range is also an NVTX row in the
 * domain "kineto:cpu_op" with the same pid, tid, start and name.
 *
 * The three argument lists are interned strings in m->str, in compact JSON
 * (no spaces), one element per operator input, as Kineto wrote them:
 *  - dims_id: "[[2048,4096],[4096,1024],[],[]]" (a tensor list is a nested
 *    list: "[[[128,1,768],[128,196,768]],[]]");
 *  - types_id: ["float","float","Scalar","Scalar"], 0 when not recorded;
 *  - concrete_id: "Concrete Inputs", the values of scalar and list inputs as
 *    strings (["","","[1, 1]","1"]), 0 when not recorded.
 * Interning keeps a training loop's repeated shapes once.
 */
struct model_op_shape {
	uint64_t start, end;
	uint64_t ext_id;           /* Kineto "External id", 0 when none */
	uint32_t pid, tid;
	uint32_t name_id;          /* the operator, "aten::mm" */
	uint32_t dims_id, types_id, concrete_id;
};

/*
 * A runtime or driver call that names the operator that made it (Kineto's
 * "External id" on cuda_runtime/cuda_driver events); kept only for calls
 * whose External id is an operator with shapes.  The kernel a call launched
 * has the call's (pid, correlation): model_corr finds the call, this row
 * its operator.
 */
struct model_op_launch {
	uint32_t pid, correlation;
	uint64_t ext_id;
};

struct model {
	struct strtab str;
	const char *format;        /* "gpuscope", "kineto", "nsys-sqlite" */
	char *path;
	unsigned has;              /* enum model_has */

	MODEL_TABLE(struct model_process) procs;
	MODEL_TABLE(struct model_thread) threads;
	MODEL_TABLE(struct trace_device) devices;
	MODEL_TABLE(struct trace_nvtx_range) nvtx;
	MODEL_TABLE(struct trace_nvtx_mark) marks;
	MODEL_TABLE(struct trace_name) names;
	MODEL_TABLE(struct trace_osrt) osrt;
	MODEL_TABLE(struct trace_cpu_sample) cpu;
	MODEL_TABLE(struct trace_api) api;
	MODEL_TABLE(struct trace_kernel) kernels;
	MODEL_TABLE(struct trace_memcpy) memcpys;
	MODEL_TABLE(struct trace_memset) memsets;
	MODEL_TABLE(struct trace_sync) syncs;
	MODEL_TABLE(struct trace_memory) memory;
	MODEL_TABLE(struct trace_metric) metrics;
	MODEL_TABLE(struct trace_capture) captures;

	uint64_t drops[TRACE_DROP__COUNT]; /* summed over processes */
	uint64_t nvtx_open;        /* start/end ranges never ended */
	uint64_t nvtx_orphan_ends; /* ends with no start */
	char **warnings;           /* owned; shown by info, stats, analyze */
	size_t nr_warnings, alloc_warnings;

	uint64_t t_min, t_max;
	uint64_t events;           /* rows loaded, all tables */

	/* reader diagnostics for a report */
	int truncated;
	uint64_t chunks_bad, bytes_skipped;
	uint64_t chunks_skipped;   /* events chunks a windowed load left unread (the chunk index) */

	/* where device facts came from (struct model_device_source), shown by `info` */
	MODEL_TABLE(struct model_device_source) device_sources;

	/*
	 * Hardware counters of profiled kernel instances (`profile
	 * --kernel-metrics`), sorted by time, then instance and key; string ids
	 * (kernel_id, key_id, metric_id) refer to m->str.  Rows of one instance
	 * share pid, time and correlation; a metric the GPU lacks is a row
	 * without TRACE_KM_VALID (never a 0).  MODEL_HAS_KMETRICS is set when
	 * there is at least one row.
	 */
	MODEL_TABLE(struct trace_kmetric) kmetrics;
	/* operator input shapes and their launches (struct model_op_shape, below) */
	MODEL_TABLE(struct model_op_shape) op_shapes;
	MODEL_TABLE(struct model_op_launch) op_launches;

	/*
	 * PyTorch's caching allocator (docs/memory.md): samples of
	 * torch.cuda.memory_stats() per device (the profile hook) or after each
	 * allocation and free (Kineto's [memory] events), sorted by time, pid,
	 * device; and its out-of-memory events, sorted by time (detail_id refers
	 * to m->str).  A field a source did not measure has its flag clear
	 * (TRACE_TM_HAS_*, TRACE_OOM_HAS_*) and reads as unknown, never 0.
	 * MODEL_HAS_TORCH_MEM is set when either table has a row.
	 */
	MODEL_TABLE(struct trace_torch_mem) torch_mem;
	MODEL_TABLE(struct trace_oom) ooms;
};

void model_init(struct model *m);
void model_release(struct model *m);
static inline uint32_t model_intern(struct model *m, const char *s)
{
	return strtab_intern(&m->str, s);
}
static inline const char *model_str(const struct model *m, uint32_t id)
{
	return strtab_get(&m->str, id);
}
/* Add a warning (printf format), kept once: a repeated text is not added again. */
void model_warn(struct model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * model_load_report - load a gpuscope report into an initialised model and
 * finish it.  A truncated or damaged report loads what is whole and adds a
 * warning.  Returns 0, or -1 after error() when @path is not a readable report.
 */
int model_load_report(struct model *m, const char *path);

/*
 * Lean loading (for consumers that summarise rows as they pass, such as
 * `stats`): rows of the types in sink->types are handed to sink->row() and
 * not stored.  Their string ids are still stream-local (the string may be
 * defined later in the stream): sink->strings() is called once at the end
 * with a map that turns (stream, local id) into a model string id.  Rows
 * handed to the sink count in m->events, m->has and the span t_min/t_max
 * (a later model_finish() or model_clip() forgets their span).
 * sink->progress (optional) is called after each chunk with bytes read and
 * the file size.
 */
struct model_strmap;
struct model_sink {
	unsigned types;            /* bits 1u << TRACE_EV_*; only record types with times */
	void *ctx;
	void (*row)(void *ctx, uint32_t stream, unsigned type, const void *rec);
	void (*strings)(void *ctx, const struct model_strmap *map);
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	/*
	 * A window (absolute report times; window_hi == 0: none): rows of the
	 * record types with times (ranges, calls, GPU work, marks, samples,
	 * allocations, metrics, capture edges, kernel metrics) that end before
	 * window_lo or start after window_hi are neither stored nor handed to
	 * row(), so a load takes memory in proportion to the window.  A
	 * start/end range not yet ended when it starts is kept when it starts
	 * by window_hi (its end is not known then); model_clip() with the same
	 * bounds trims exactly.  Processes, threads, devices, names, strings,
	 * drops and warnings are always loaded.  Times relative to the report's
	 * start need model_report_span() first.
	 */
	uint64_t window_lo, window_hi;
	/*
	 * Record types (bits 1u << TRACE_EV_*) loaded whole despite the window:
	 * state that accumulates from the report's start (allocations: the
	 * bytes live when the window starts), for `analyze` of a window.
	 */
	unsigned window_keep;
};
uint32_t model_strmap_id(const struct model_strmap *map, uint32_t stream, uint32_t local_id);
/*
 * model_window_fits - can a windowed load of @path that keeps @share (0-1)
 * of its rows fit (the whole load's estimate, scaled)?  0 when it can or
 * nobody can tell, -1 after a one-line error that says how much it needs
 * and that --start/--end narrow it.
 */
int model_window_fits(const char *path, double share);
/*
 * model_report_raw_bytes - the decompressed size of @path's event entries,
 * from the chunk headers alone (what a whole load's memory follows: ×1.25
 * for the model, MODEL_BYTES_PER_RAW).  0, or -1 after error().
 */
int model_report_raw_bytes(const char *path, uint64_t *raw);
/* model_load_report() with a sink (NULL = store everything). */
int model_load_report_sink(struct model *m, const char *path, const struct model_sink *sink);

/*
 * model_report_span - the span (t_min, t_max) that model_load_report() of
 * @path would give, read in one streaming pass that stores none of the
 * timed rows but NVTX ranges (joined with their ends).  For a window
 * relative to the report's start.  Returns 0, or -1 after error().
 */
int model_report_span(const char *path, uint64_t *t_min, uint64_t *t_max);

/*
 * A histogram of times (the starts of a report's rows, counted by a lean
 * load's sink) whose buckets double their width to take a time outside it,
 * so that any span fits: `dump` and `analyze` cut a long report into slices
 * of about N rows with it (timehist.c).  Zero-initialise.
 */
#define TIME_HIST_BUCKETS 8192
struct time_hist {
	uint64_t lo, width;        /* the first bucket's start, every bucket's width (ns); 0: empty */
	uint64_t n[TIME_HIST_BUCKETS];
	uint64_t total;            /* times added */
};
void time_hist_add(struct time_hist *h, uint64_t t);
/*
 * time_hist_next_cut - the end (exclusive) of the slice that begins at
 * bucket *@b once it holds @per times or more, cut at a bucket's edge;
 * UINT64_MAX for the last slice.  Advances *@b past it: start with *@b = 0
 * and the slice [0, first cut), then [cut, next cut) until UINT64_MAX.
 */
uint64_t time_hist_next_cut(const struct time_hist *h, size_t *b, uint64_t per);

/* Sort tables, join NVTX start/end pairs, compute the span.  Idempotent. */
void model_finish(struct model *m);

/* Keep only rows that overlap [lo, hi]; then re-finish. */
void model_clip(struct model *m, uint64_t lo, uint64_t hi);

/* The process / thread rows for an id, or NULL. */
const struct model_process *model_process(const struct model *m, uint32_t pid);
const struct model_thread *model_thread(const struct model *m, uint32_t pid, uint32_t tid);
/*
 * model_proc_set_attr - merge @a into process @pid's attributes (creating
 * the process row when there is none): the fields @a knows (rank >= 0,
 * string ids and masks != 0, mempolicy >= 0, flags) override.  String ids
 * in @a must already be m->str ids.
 */
void model_proc_attr_unknown(struct trace_proc_attr *a); /* every field "unknown" (-1 / 0) */
void model_proc_set_attr(struct model *m, uint32_t pid, const struct trace_proc_attr *a);
/* The rank of process @pid, or -1 when unknown (no process row or no rank recorded). */
int model_proc_rank(const struct model *m, uint32_t pid);
/*
 * model_ranks - the distinct known ranks of the model's processes, sorted,
 * into @out (caller frees); returns how many (0 when no process has one).
 */
size_t model_ranks(const struct model *m, int32_t **out);
/*
 * model_keep_rank - keep only the rows of the processes whose rank is @rank
 * (`--rank N`), then re-finish.  Returns 0, or -1 after error() when no
 * process has that rank.
 */
int model_keep_rank(struct model *m, int rank);

/* A thread's display name: its name, else "tid N". Returns a static buffer when unnamed. */
const char *model_thread_name(const struct model *m, uint32_t pid, uint32_t tid);
/*
 * The thread that runs a loop of NVTX ranges named @name_id: the one with
 * the most complete ranges of that name (ties: the one whose first such
 * range starts first).  With several ranks or threads stepping in lockstep,
 * their ranges interleave in time; one thread's ranges stand for the loop.
 * Sets *pid and *tid; returns that thread's count (0: no such range).
 */
size_t model_range_thread(const struct model *m, uint32_t name_id, uint32_t *pid, uint32_t *tid);
/* The device row for a CUDA ordinal (first process that reported it), or NULL. */
const struct trace_device *model_device(const struct model *m, uint32_t id);
/* The source row of device row @d (same id and pid), or NULL when none was given. */
static inline const struct model_device_source *model_device_source(const struct model *m,
								    const struct trace_device *d)
{
	for (size_t i = 0; i < m->device_sources.n; i++)
		if (m->device_sources.v[i].device == d->id && m->device_sources.v[i].pid == d->pid)
			return &m->device_sources.v[i];
	return NULL;
}

/* ---- launch correlation (corr.c) ---- */

/*
 * Correlation ids are small integers that grow with time in each process:
 * a dense array per process (filled and read in time order, so cache
 * friendly), with a hash for processes whose ids are too sparse.  Where
 * several API rows share an id (a graph launch and its nested driver
 * call), the first one owns the id.
 */
struct model_corr_pid {
	uint32_t pid;
	uint32_t max;              /* largest id */
	size_t rows;
	uint32_t *dense;           /* id -> row + 1, or NULL: use the hash */
};

struct model_corr {
	struct model_corr_pid *pids;
	size_t npids;
	size_t last;               /* lookup cache */
	uint32_t *slot;            /* hash: row + 1, 0 = empty */
	size_t mask;
};

void model_corr_build(struct model_corr *h, const struct model *m);
/* The API row that launched (pid, corr), or NULL. */
const struct trace_api *model_corr_find(struct model_corr *h, const struct model *m, uint32_t pid, uint32_t corr);
void model_corr_release(struct model_corr *h);

/* ---- interval algebra (nanosecond half-open intervals [start, end)) ---- */

struct interval {
	uint64_t start, end;
};

struct interval_set {
	struct interval *v;
	size_t n, alloc;
	int normal;                /* sorted and disjoint */
};

void ivset_add(struct interval_set *s, uint64_t start, uint64_t end);
/* Sort and merge overlapping or touching intervals. */
void ivset_normalize(struct interval_set *s);
uint64_t ivset_total(struct interval_set *s);
/* Length of the intersection of @s with [lo, hi). */
uint64_t ivset_overlap(struct interval_set *s, uint64_t lo, uint64_t hi);
/* Length of the intersection of two sets. */
uint64_t ivset_intersect_total(struct interval_set *a, struct interval_set *b);
/* The gaps of @s inside [lo, hi), appended to @out (normalised). */
void ivset_gaps(struct interval_set *s, uint64_t lo, uint64_t hi, struct interval_set *out);
void ivset_release(struct interval_set *s);

/*
 * model_gpu_busy - the union of kernel, copy and set intervals on @device
 * (UINT32_MAX = all devices) into @out.
 */
void model_gpu_busy(const struct model *m, uint32_t device, struct interval_set *out);

/* ---- steps (steps.c) ---- */

/*
 * What a step is, for every command (analyze's step period and warm-up,
 * diff's time per step, check and baseline).
 *
 * A name's stripped form is the name lower-cased (ASCII) with its trailing
 * digits, '#', '_', ' ' and '-' cut: "ProfilerStep#12" -> "profilerstep",
 * "Step 3" -> "step", "train_step_7" -> "train_step".  Loops number their
 * step ranges ("ProfilerStep#N", "step_N"): the stripped form is the loop's
 * name, the same for every instance.
 *
 * A step name is a name whose stripped form is one of "profilerstep",
 * "step", "train_step", "train step", "training_step", "training step",
 * "train", "train_iter", "iteration", "iter": the names training and
 * inference loops give a step by habit (torch.profiler's ProfilerStep#N,
 * Lightning's training_step, hand-written loops).  This is the union of the
 * two lists analyze and diff had kept apart ("step", "ProfilerStep*",
 * "train_step", "iteration" in diff, case-sensitive), read with analyze's
 * stripping; diff's "any name that starts with ProfilerStep" narrows to
 * ProfilerStep followed only by a number ("ProfilerStepper" is not a step).
 */

/*
 * model_name_matches - does NVTX range name @name answer @want (the rule of
 * `--step RANGE` and `--nvtx RANGE`)?  Yes when they are equal, or when their
 * stripped forms are equal and not empty: "ProfilerStep" and
 * "ProfilerStep#3" both match "ProfilerStep#12".  Returns 1 or 0.
 */
int model_name_matches(const char *name, const char *want);

/* model_is_step_name - is @name a step name (above)?  Returns 1 or 0. */
int model_is_step_name(const char *name);

/* The instances of one loop's step range; model_steps_release() frees them. */
struct model_steps {
	struct interval *v;        /* in start order and disjoint (owned) */
	size_t n, alloc;
	uint32_t name_id;          /* the first instance's name (meaningful when n > 0) */
	uint32_t pid, tid;         /* the thread whose loop they are */
};

/*
 * model_find_steps - the NVTX step instances of one thread's loop that
 * overlap the window @win (a normalised interval set, or NULL for the whole
 * model; a step overlapping the window counts, as it starts before its first
 * kernel).  Only complete ranges (end > start) count.
 *  - the loop's name: the first range in the window that matches @want
 *    (model_name_matches()), or with @want NULL the first whose name is a
 *    step name; its name id goes to out->name_id;
 *  - the thread: the one with the most ranges of that name id
 *    (model_range_thread()); with several ranks or threads stepping in
 *    lockstep, one thread's ranges stand for the loop;
 *  - the instances: that thread's ranges whose name matches @want, or with
 *    @want NULL the loop's name (model_name_matches(), so "ProfilerStep#1"
 *    follows "ProfilerStep#0");
 *  - a range that starts inside the previous instance is nested (a step
 *    range pushed twice, a sub-range with the same name) and is skipped.
 * Fills @out (initialised here; the caller releases it with
 * model_steps_release(), also when none was found) and returns out->n.
 */
size_t model_find_steps(const struct model *m, const char *want, const struct interval_set *win,
			struct model_steps *out);
void model_steps_release(struct model_steps *s);

#endif
