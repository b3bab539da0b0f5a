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

#define STATS_MAX_COLS 24

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
};

struct stats_opts {
	uint64_t start, end;       /* absolute window; 0/0 = all */
	const char *nvtx;          /* NVTX range name filter (window = its instances), or NULL */
	const char *nvtx_domain;
	const char *timeunit;      /* "ns" (default), "us", "ms", "s" */
};

/* The known report names, NULL-terminated; default_set: those run without --report. */
const char *const *stats_report_names(void);
const char *const *stats_default_reports(void);
/* One-line description of a report, or NULL when unknown. */
const char *stats_report_title(const char *report);

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

#endif
