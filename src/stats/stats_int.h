/*
 * stats_int.h - internals shared by the files of the stats part: building
 * tables, the summary numbers (Avg, Med, StdDev ...), grouping rows by key,
 * row filters, and the report table.
 */
#ifndef GS_STATS_INT_H
#define GS_STATS_INT_H

#include "stats.h"

/* ---- building tables ---- */

void st_init(struct stats_table *t, const char *report, const char *title);
/* Add a column; returns its index.  BUG() past STATS_MAX_COLS. */
size_t st_col(struct stats_table *t, const char *name, int type);
/* Append a row whose cells are all unknown; returns its index. */
size_t st_row(struct stats_table *t);
void st_str(struct stats_table *t, size_t r, size_t c, const char *s);
void st_int(struct stats_table *t, size_t r, size_t c, int64_t v);
void st_f(struct stats_table *t, size_t r, size_t c, double v);
/* Set the line said after the rows (printf format). */
void st_note(struct stats_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Say why the table has no rows (printf format). */
void st_empty(struct stats_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- summary numbers ---- */

/*
 * struct summ - what a summary row says about a set of values.  StdDev is
 * the sample standard deviation (divisor n - 1), 0 for a single value; the
 * median of an even count is the mean of the two middle values.
 */
struct summ {
	uint64_t total, count, min, max;
	double avg, med, stddev;
};

struct u64vec {
	uint64_t *v;
	size_t n, alloc;
};
static inline void u64vec_push(struct u64vec *a, uint64_t x)
{
	if (a->n == a->alloc)
		ALLOC_GROW(a->v, a->n + 1, a->alloc);
	a->v[a->n++] = x;
}

/* Compute @s over v[0..n) (n > 0); reorders @v (selection, not a sort). */
void summ_compute(uint64_t *v, size_t n, struct summ *s);

/* The 8 columns Time (%), Total Time (ns), @count_name, Avg .. StdDev (ns); returns the first. */
size_t st_summary_cols(struct stats_table *t, const char *count_name);
/* Fill the 8 summary cells of row @r from column @c0; @grand: the sum of every row's total. */
void st_summary_row(struct stats_table *t, size_t r, size_t c0, const struct summ *s,
		    uint64_t grand);

/* ---- grouping rows by a key ---- */

#define GRP_KEY_WORDS 8

struct grp {
	uint32_t key[GRP_KEY_WORDS];
	struct u64vec d;           /* the values of the group's rows */
	uint64_t total;            /* their sum */
	uint64_t aux, aux2;        /* report-defined */
};

struct grpmap {
	struct grp *v;
	size_t n, alloc;
	uint32_t *slots;           /* open addressing: index + 1, 0 = empty */
	size_t nslots;
};

/* The group of @key, created empty when new.  The pointer lasts until the next call. */
struct grp *grpmap_get(struct grpmap *g, const uint32_t *key);
void grpmap_release(struct grpmap *g);
/* Sort the groups by total, largest first (ties by key). */
void grpmap_sort_by_total(struct grpmap *g);

/* ---- filters (--start/--end, --nvtx) ---- */

struct stats_filter {
	int active;
	struct interval *w;        /* sorted, disjoint windows [start, end] */
	size_t n;
};

/* Build the filter of @o over @m; -1 after error() (no such NVTX range). */
int stats_filter_init(struct stats_filter *f, const struct model *m, const struct stats_opts *o);
/* Does a row [start, end] overlap a window? */
int stats_filter_pass(const struct stats_filter *f, uint64_t start, uint64_t end);
void stats_filter_release(struct stats_filter *f);

/* ---- reports ---- */

/*
 * A streaming accumulator: rows go in one by one with stream-local string
 * ids (@stream) or model ids (stream = STATS_MODEL_IDS), and the table comes
 * out at the end.
 */
#define STATS_MODEL_IDS UINT32_MAX

struct stats_acc {
	const struct stats_report_def *def;
	struct grpmap g;
	int filtered;              /* a window or NVTX filter was applied */
	/*
	 * Direct index for reports keyed by a name alone: per stream (below
	 * STATS_DIRECT_STREAMS), group index + 1 by string id; other rows go
	 * through the hash.  Valid until the groups are sorted or resolved.
	 */
	struct stats_direct {
		uint32_t *v;
		size_t n;
	} *direct;
	size_t ndirect;
};
#define STATS_DIRECT_STREAMS 4096

/* The group of key {name, stream} in @a, through the direct index when it can. */
struct grp *stats_acc_name_group(struct stats_acc *a, uint32_t stream, uint32_t name);

struct stats_report_def {
	const char *name;
	const char *title;
	/* whole-model report; NULL for accumulator reports */
	int (*run)(const struct model *m, const struct stats_opts *o,
		   const struct stats_filter *f, struct stats_table *t);
	/* accumulator reports: the row types (bits 1u << TRACE_EV_*) they read */
	unsigned types;
	void (*add)(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec);
	int key0_string;           /* key[0] is a string id, key[1] the stream it belongs to */
	void (*table)(struct stats_acc *a, const struct model *m, struct stats_table *t);
	/* it prints kernel names, and takes nsys's ":base" and ":mangled" (stats_report_parse) */
	int kernel_names;
};

const struct stats_report_def *stats_report_find(const char *name);
/*
 * stats_report_parse - the report of a name as `-r` gives it, with nsys's
 * kernel-name option: "cuda_gpu_kern_sum" (*@names = STATS_NAMES_FULL),
 * "cuda_gpu_kern_sum:base", "cuda_gpu_kern_sum:mangled"; NULL for an
 * unknown report or an option the report does not take (nothing said).
 */
const struct stats_report_def *stats_report_parse(const char *report, int *names);

/* Accumulator reports (stats_sum.c). */
extern const struct stats_report_def stats_def_cuda_api_sum, stats_def_cuda_gpu_kern_sum,
	stats_def_cuda_gpu_kern_gb_sum, stats_def_cuda_gpu_mem_time_sum,
	stats_def_cuda_gpu_mem_size_sum, stats_def_osrt_sum;
/* Ranks side by side (stats_rank.c). */
extern const struct stats_report_def stats_def_rank_sum;
extern const struct stats_report_def stats_def_nccl_sum;
/* Whole-model reports (stats_trace.c, stats_nvtx.c, stats_gpu.c). */
extern const struct stats_report_def stats_def_cuda_gpu_trace, stats_def_cuda_api_trace,
	stats_def_cuda_kern_exec_sum, stats_def_nvtx_sum, stats_def_nvtx_gpu_proj_sum,
	stats_def_nvtx_kern_sum, stats_def_gpu_metrics_sum, stats_def_gpu_util;
/* Per-kernel hardware counters (stats_kmetrics.c). */
extern const struct stats_report_def stats_def_cuda_kern_metrics;
/* Kernel efficiency and kernel time by class (stats_eff.c). */
extern const struct stats_report_def stats_def_cuda_kern_eff, stats_def_cuda_kern_class_sum;
/*
 * A row of one thread found by its start time: rows sorted by (pid, tid,
 * start) with stats_cmp_tix, then searched (stats_nvtx.c's API join,
 * stats_torch.c's Kineto shapes).
 */
struct stats_tix {
	uint32_t pid, tid;
	uint64_t start;
	size_t idx;
};
int stats_cmp_tix(const void *pa, const void *pb);

/* PyTorch's operator view (stats_torch.c). */
extern const struct stats_report_def stats_def_torch_op_sum;
/* PyTorch's caching allocator (stats_torchmem.c). */
extern const struct stats_report_def stats_def_torch_mem_sum;

/* Feed every row of @m that @a's report reads and @f passes. */
void stats_acc_feed_model(struct stats_acc *a, const struct model *m, const struct stats_filter *f);
/* Turn stream-local string keys into model ids with @map (after a streaming load). */
void stats_acc_resolve(struct stats_acc *a, const struct model_strmap *map);
void stats_acc_release(struct stats_acc *a);

/* "[CUDA memcpy Host-to-Device]" ... for a copy kind; "[CUDA memset]" for sets. */
const char *stats_copy_op_name(unsigned kind);
#define STATS_OP_MEMSET 255u

/* The empty-table line for rows that @m could not record vs. did not have. */
void st_no_data(struct stats_table *t, const struct model *m, unsigned has_bit,
		const char *what, int filtered);

#endif
