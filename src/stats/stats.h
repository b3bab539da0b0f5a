/*
 * stats.h - the summary reports of `gpuscope stats` (names and columns after
 * `nsys stats`, listed in docs/stats.md), as tables any output can format.
 *
 * A report computes a struct stats_table from a model; stats_format() prints
 * it as a table, CSV or JSON.  Exporters (CSV/JSON, HTML) and diff use the
 * same tables, so every number a user sees comes from one place.
 */
#ifndef GS_STATS_H
#define GS_STATS_H

#include <stdio.h>

#include "../model/model.h"

enum stats_col_type {
	STATS_STR = 1,   /* cell.s */
	STATS_INT,       /* cell.i: a count or id */
	STATS_DUR,       /* cell.i: nanoseconds, printed in --timeunit */
	STATS_PCT,       /* cell.f: percent, 0..100 */
	STATS_BYTES,     /* cell.f: bytes (may be fractional averages) */
	STATS_FLOAT,     /* cell.f */
	STATS_DURF,      /* cell.f: fractional nanoseconds (averages), printed in --timeunit */
};

struct stats_col {
	const char *name;          /* as nsys prints it: "Time (%)", "Total Time (ns)" ... */
	int type;                  /* enum stats_col_type */
};

union stats_cell {
	int64_t i;
	double f;
	const char *s;             /* points into table->strings */
	int valid;                 /* see stats_cell_valid() */
};

#define STATS_MAX_COLS 32

struct stats_table {
	const char *report;        /* "cuda_gpu_kern_sum" */
	const char *title;         /* one line, e.g. "CUDA GPU Kernel Summary" */
	size_t ncols;
	struct stats_col cols[STATS_MAX_COLS];
	size_t nrows, alloc;
	union stats_cell *cells;   /* row-major, nrows * ncols */
	unsigned char *invalid;    /* nrows * ncols flags: 1 = unknown, printed "-" */
	struct strtab strings;     /* owns the strings of STATS_STR cells */
	char *empty_reason;        /* set when the report has no rows: why (one line) */
	char *note;                /* owned; a line said after the rows (what was left out), or NULL */
};

struct stats_opts {
	uint64_t start, end;       /* absolute window; 0/0 = all */
	const char *nvtx;          /* NVTX range name filter (window = its instances), or NULL */
	const char *nvtx_domain;
	const char *timeunit;      /* "ns" (default), "us", "ms", "s" */
	int relative;              /* start/end count from the report's first event (t_min) */
};

/* The known report names, NULL-terminated; default_set: those run without --report. */
const char *const *stats_report_names(void);
const char *const *stats_default_reports(void);
/*
 * One-line description of a report, or NULL when unknown.  A report that
 * prints kernel names may carry nsys's option (stats_lean_finish() runs
 * it): "NAME:base" groups and prints kernels by their base name (the
 * function's own name without scopes, template arguments and parameters,
 * kernel_base_name() in util.h), "NAME:mangled" by their mangled name where
 * the report recorded one (else the demangled name, as nsys does).
 */
const char *stats_report_title(const char *report);
enum { STATS_NAMES_FULL, STATS_NAMES_BASE, STATS_NAMES_MANGLED };

/*
 * stats_run - compute @report over @m into @out (initialised here).
 * Returns 0 (possibly with no rows and out->empty_reason set), or -1 after
 * error() when the report name is unknown (the message lists known names).
 */
int stats_run(const struct model *m, const char *report, const struct stats_opts *o,
	      struct stats_table *out);
void stats_table_release(struct stats_table *t);

/* Print @t as "table", "csv" or "json"; 0, or -1 on a write error. */
int stats_format(FILE *f, const struct stats_table *t, const char *format, const char *timeunit);

/* ---- added by the stats part (additive) ---- */

/* Cell (@r, @c) of @t, and whether it holds a known value (0 = unknown, printed "-"). */
static inline const union stats_cell *stats_cell_at(const struct stats_table *t, size_t r, size_t c)
{
	return &t->cells[r * t->ncols + c];
}
static inline int stats_cell_valid(const struct stats_table *t, size_t r, size_t c)
{
	return !t->invalid[r * t->ncols + c];
}
/* Index of the column named @name, or -1. */
int stats_col_index(const struct stats_table *t, const char *name);

/*
 * Column labels follow the time unit: a column of type STATS_DUR/STATS_DURF
 * is named "... (ns)" in the table; stats_col_label() writes the label for
 * @timeunit ("Total Time (us)") into @buf and returns it.
 */
const char *stats_col_label(const struct stats_col *col, const char *timeunit, char *buf,
			    size_t n);
/* Is @unit one of "ns", "us", "ms", "s"? */
int stats_timeunit_valid(const char *unit);

/*
 * stats_run_report - load the gpuscope report @path and compute the @n
 * reports @names into @out (n tables, initialised here), holding as little
 * as it can: rows that only streaming reports need (API calls, kernels,
 * copies, sets, OS runtime calls) are summarised while they load instead of
 * being stored, when every requested report allows it and @o has no window
 * or NVTX filter; otherwise the whole model is loaded.  @progress, when not
 * NULL, is called now and then with bytes done and total.  Returns 0, or -1
 * after error() (unreadable report, unknown report name).
 */
int stats_run_report(const char *path, const char *const *names, size_t n,
		     const struct stats_opts *o, struct stats_table *out,
		     void (*progress)(void *ctx, uint64_t done, uint64_t total), void *ctx);

/*
 * The same fast path in steps, for load_input_opts() (import.h), the one
 * loader of every command: stats_lean_new() checks the report names and
 * fills @sink (NULL after error(): an unknown report); load the input with
 * it; stats_lean_finish() computes the @n tables into @out (initialised
 * there) from @m, with @sunk as load_input_opts() set it (0: the input was
 * loaded whole, as an import is); 0 or -1.  stats_lean_free() frees.
 * A name with a kernel-name option ("cuda_gpu_kern_sum:base") is run on
 * @m's kernels with those names, put back after; its table's report is
 * that name (@names must outlive the tables).
 */
struct stats_lean;
struct stats_lean *stats_lean_new(const char *const *names, size_t n, const struct stats_opts *o,
				  struct model_sink *sink);
int stats_lean_finish(struct stats_lean *l, struct model *m, int sunk, const char *const *names,
		      const struct stats_opts *o, struct stats_table *out);
/*
 * stats_lean_window - with --start/--end, load only the rows in the window
 * (the loader's window on @sink; @path must be a gpuscope report); 0 or -1.
 */
int stats_lean_window(struct stats_lean *l, struct model_sink *sink, const char *path, const struct stats_opts *o);
void stats_lean_free(struct stats_lean *l);

/*
 * stats_print_warnings - say on stderr what the input lost or could not
 * read: the model's warnings and its drop counts (nothing is lost silently).
 */
void stats_print_warnings(const struct model *m);

/* Can @report be computed while rows stream past (see stats_run_report)? */
int stats_report_streams(const char *report);

/* ---- operator work and kernel efficiency (stats_work.c, stats_eff.c) ---- */

/*
 * The work of one operator instance from its recorded input shapes
 * (docs/stats.md, "Operator work", has every formula).
 */
struct stats_op_work {
	double flops;              /* valid when has_flops */
	double bytes;              /* inputs + outputs x element size; valid when has_bytes */
	int has_flops, has_bytes;
	int matmul;                /* the op is a GEMM, convolution or attention: its work is its
				    * GEMM/conv/attention kernels' (not its layout or copy kernels') */
	const char *note;          /* static text: the assumption made, or why no work; NULL */
};

/*
 * stats_op_work - FLOPs and bytes of operator @op ("aten::mm") from its
 * argument lists in the model's compact JSON (model.h, struct
 * model_op_shape: @dims "[[2,3],[3,4]]", @types "[\"float\",\"float\"]",
 * @concrete likewise; @types and @concrete may be NULL).  Returns 1 when a
 * formula applied (w->has_flops / w->has_bytes say what it gave), 0 when
 * gpuscope has no formula for @op, -1 when the shapes do not fit the
 * formula (w->note says why).
 */
int stats_op_work(const char *op, const char *dims, const char *types, const char *concrete,
		  struct stats_op_work *w);
/* Bytes per element of a PyTorch dtype as Kineto names it ("float", "c10::BFloat16"); 0 = unknown. */
int stats_dtype_size(const char *type);

/*
 * stats_kernel_efficiency - the achieved share of the GPU's peak of the
 * kernels named @kernel_name_id, over all their instances whose FLOPs are
 * known (the cuda_kern_eff report's Peak (%) for that name, its rows of
 * every op together).  Builds the kernel-to-operator links of the whole
 * model on each call (milliseconds for a 100k-kernel trace): a rule calls
 * it for a few names.  Returns 0 and sets *pct_of_peak (0..100 and more),
 * or -1 when unknown (no shapes, no formula, or no peak for the GPU).
 */
int stats_kernel_efficiency(const struct model *m, uint32_t kernel_name_id, double *pct_of_peak);

#endif
