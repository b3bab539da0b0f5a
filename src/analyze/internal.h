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
#include "engine.h"

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
	/*
	 * AZ_SCOPE_RUN: the rule judges state that builds up over the whole
	 * run (device memory, the allocator: a leak's growth, the OOM at the
	 * end), so a report analysed in windows runs it once over the whole
	 * run's memory records rather than in each window (analyze_opts.rules).
	 */
	int scope;
};
enum { AZ_SCOPE_WINDOW = 0, AZ_SCOPE_RUN = 1 };

extern const struct az_rule az_rules[];
extern const size_t az_nrules;

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
/* The ranking of findings (qsort): fatal first, then by gain, severity, id (analyze.c). */
int az_cmp_finding(const void *pa, const void *pb);
/* Free what a finding owns and zero it (analyze.c). */
void az_finding_release(struct finding *f);

/* Append "a-b s" (relative seconds) for @iv to @sb. */
void az_fmt_window(const struct az_ctx *c, struct strbuf *sb, const struct interval *iv);
/* Percent of wall (gain as a fraction): "12.3%". */
const char *az_pct(char *buf, size_t n, double frac);

/* The cause (enum az_cause) of an OS-runtime call, or -1 for driver work such as ioctl. */
int az_osrt_cause(unsigned func);

/* Is the range @name a data-loading frame (PyTorch's DataLoader, or a --data-range pattern)? */
int az_is_data_frame(const char *name, const char *const *data_ranges);
/* az_is_data_frame() of string @id with the analysis's --data-range, cached per name. */
int az_is_data_id(struct az_ctx *c, uint32_t id);
/* Does API class @cls block until the GPU's work is done (synchronise, synchronous copy, free)? */
int az_api_blocks(int cls);

/*
 * az_steps_line - "in 3 of 9 steps (most 38.2 ms, the step at 1.234 s)" for
 * the idle time of @causes, appended to @sb with a newline; nothing without
 * NVTX steps.
 */
void az_steps_line(const struct az_ctx *c, const int *causes, size_t n, struct strbuf *sb);

/* The name behind a tally key: an API call, an OS-runtime call, an NVTX range or an upload. */
void az_describe_key(const struct az_ctx *c, uint64_t key, struct strbuf *sb);
/* Set the replay fields of @f: the transformation, actual and replayed analysed time (ns). */
void az_set_replay(struct finding *f, const char *transform, uint64_t actual_ns, uint64_t replayed_ns);
/*
 * az_replay_gain - the gain of transformation @x by the replay: the time
 * the GPUs finish earlier over the analysed GPU time; -1 without a graph
 * (no API records, a window of several pieces).  *saved_ns gets the time.
 */
double az_replay_gain(struct az_ctx *c, const struct az_xform *x, uint64_t *saved_ns);
/* Record on @f the replay that gave its gain (nothing without a graph). */
void az_replay_finding(struct az_ctx *c, struct finding *f, const char *transform, uint64_t saved_ns);
/*
 * az_model_finding - record on @f a what-if by the rule's own model: the
 * transformation @transform, the analysed time as recorded and as the
 * gain says it would be (actual x (1 - gain)).  For fixes the graph cannot
 * express (another stream, a balanced rank, memory) and for graphs that
 * could not be built; a replay already recorded on @f stays.
 */
void az_model_finding(struct az_ctx *c, struct finding *f, const char *transform);
/*
 * az_replay_kernel_cut - the replay's gain when each kernel row r of the
 * model runs @cut[r] ns shorter (@cut has m->kernels.n entries, 4 bytes
 * each: a cut is at most 4.29 s); -1 without a graph.  *saved_ns gets the
 * time saved.
 */
double az_replay_kernel_cut(struct az_ctx *c, const char *what, const uint32_t *cut, uint64_t *saved_ns);
/* Up to 3 largest gaps of the given causes, largest first, into @out; returns how many. */
size_t az_where_of(const struct az_ctx *c, const int *causes, size_t n, struct interval out[3]);
/* "GPU idle 12 ms of 40 ms analysed GPU time ..." and the GPU-side line, to @ev. */
void az_idle_line(const struct az_ctx *c, struct strbuf *ev);
/* What the thread CPU samples say about the CPU-work parts of the idle time (nothing without samples). */
void az_cpu_line(const struct az_ctx *c, struct strbuf *ev);

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
/*
 * The device of a unit whose compute capability is known: (pid, device)'s own
 * record, else another process's record of the same device id; NULL when none.
 */
const struct trace_device *az_unit_device(const struct az_ctx *c, uint32_t pid, uint32_t device);
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
void rule_straggler(struct az_ctx *c, const struct az_rule *self);
void rule_placement(struct az_ctx *c, const struct az_rule *self);
void rule_p2p(struct az_ctx *c, const struct az_rule *self);
void rule_tensor_cores(struct az_ctx *c, const struct az_rule *self);
void rule_kernel_limits(struct az_ctx *c, const struct az_rule *self);
void rule_underfill(struct az_ctx *c, const struct az_rule *self);
void rule_alloc(struct az_ctx *c, const struct az_rule *self);
void rule_memory(struct az_ctx *c, const struct az_rule *self);
/* PyTorch's caching allocator (rule_memory.c, docs/memory.md) */
void rule_oom(struct az_ctx *c, const struct az_rule *self);
void rule_fragmentation(struct az_ctx *c, const struct az_rule *self);
void rule_leak(struct az_ctx *c, const struct az_rule *self);
void rule_headroom(struct az_ctx *c, const struct az_rule *self);
void rule_throttle(struct az_ctx *c, const struct az_rule *self);

/* The rule row of @id, or NULL. */
const struct az_rule *az_rule_find(const char *id);

#endif
