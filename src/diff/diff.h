/*
 * diff.h - run summaries and their comparison: `gpuscope diff`, `check`
 * and `baseline`.
 *
 * A run summary is a flat list of named metrics computed from one report
 * (wall time, time per step, GPU busy, launches and syncs per step, copy time
 * and bytes by kind, exposed communication, top kernels) plus the findings of
 * `analyze` with their gains.  Summaries of several runs of one side combine
 * into medians with a spread; diff_compare() then gives each metric a verdict
 * that never calls noise a change (docs/diff.md explains the rule).
 */
#ifndef GS_DIFF_H
#define GS_DIFF_H

#include <stdio.h>

#include "../model/model.h"

enum metric_dir {
	DIR_LOWER = -1,            /* lower is better (times, counts of overheads) */
	DIR_NEUTRAL = 0,           /* no better or worse (e.g. number of steps) */
	DIR_HIGHER = 1,            /* higher is better (GPU busy) */
};

enum metric_kind {
	MK_TIME = 1,               /* seconds; compared relatively */
	MK_COUNT,                  /* counts; compared relatively */
	MK_FRACTION,               /* 0..1; compared in absolute points */
	MK_BYTES,
};

struct run_metric {
	char key[96];              /* stable id: "step_time_s", "kernel_s:<name>" ... */
	char label[128];           /* for people */
	double value;
	double lo, hi;             /* spread over the runs of a side (lo == hi for one run) */
	int n;                     /* runs that had this metric */
	/*
	 * One run's own uncertainty, where the metric is a median over steps:
	 * the distribution-free 95% confidence interval of that median (ci_n
	 * steps; 0 = none).  With one run a side, the noise rule uses it.
	 */
	double ci_lo, ci_hi;
	int ci_n;
	int dir, kind;
};

struct run_finding {
	char id[48];
	char title[200];
	double gain;
	/*
	 * Compared whatever its gain (run_finding_counts()): FINDING_FATAL
	 * (the run failed or is on course to: an out-of-memory, a fast leak)
	 * or FINDING_NO_TIME (a warning or worse whose cost is memory, not
	 * time: its gain is 0 by nature, not because it is small).
	 */
	unsigned flags;
};

enum { FINDING_FATAL = 1u << 0, FINDING_NO_TIME = 1u << 1 };

/* Whether @f takes part in a comparison at @min_gain. */
static inline int run_finding_counts(const struct run_finding *f, double min_gain)
{
	return f->gain >= min_gain || (f->flags & (FINDING_FATAL | FINDING_NO_TIME));
}

struct run_summary {
	char *source;              /* report path or baseline name */
	int runs;                  /* reports summarised */
	char *step_source;         /* how steps were found, or NULL */
	struct run_metric *m;
	size_t n, alloc;
	struct run_finding *f;
	size_t nf, allocf;
};

struct diff_opts {
	const char *step;          /* NVTX range that marks one step, or NULL (detect) */
	double noise;              /* relative threshold for one-run sides (default 0.05) */
	double noise_points;       /* absolute threshold for fractions (default 0.02) */
	double finding_min_gain;   /* findings below this gain do not count (default 0.05) */
	/*
	 * A window of every run (diff --start/--end), ns from each report's
	 * first event (@end 0: to its end), when @windowed: each run is
	 * summarised on the rows that overlap it, loaded alone (load_opts).
	 */
	int windowed;
	uint64_t start, end;
	/*
	 * Compare capture @capture (from 1) of every run (diff --capture K,
	 * docs/always-on.md), kept by @keep_capture after the load (cli's
	 * capture_only(): captures are a report's, which the command knows);
	 * 0: the whole run.
	 */
	unsigned capture;
	int (*keep_capture)(struct model *m, unsigned k);
};

void diff_opts_init(struct diff_opts *o);

/* Summarise the model of one run into @s (initialised here); 0 or -1. */
int run_summarize_model(const struct model *m, const char *source, const struct diff_opts *o,
			struct run_summary *s);
/* Load @path (any input load_input() takes) and summarise it; 0 or -1 after error(). */
int run_summarize_path(const char *path, const struct diff_opts *o, struct run_summary *s);
/* Summarise @n inputs and combine them into @out (one side of a diff); 0 or -1. */
int run_summarize_paths(char *const *paths, size_t n, const struct diff_opts *o,
			struct run_summary *out);
/* Combine @n run summaries of one side into medians with spreads. */
void run_summary_combine(const struct run_summary *runs, size_t n, struct run_summary *out);
const struct run_metric *run_metric_find(const struct run_summary *s, const char *key);
void run_summary_release(struct run_summary *s);

/* Save / load a summary as a baseline file (docs/diff.md: a small text format). */
int run_summary_save(const struct run_summary *s, const char *path);
int run_summary_load(struct run_summary *s, const char *path);

enum verdict {
	V_SAME = 0,                /* within noise */
	V_BETTER,
	V_WORSE,
	V_CHANGED,                 /* moved, but the metric has no better direction */
	V_ONLY_BEFORE,
	V_ONLY_AFTER,
};

struct diff_row {
	const struct run_metric *before, *after; /* either may be NULL */
	double delta, rel;         /* after - before; delta / |before| (0 when before is 0) */
	int verdict;               /* enum verdict */
};

struct diff_result {
	struct diff_row *rows;
	size_t n, alloc;
	/* findings: resolved (before only), remaining (both), new (after only) */
	const struct run_finding **resolved, **remaining_before, **remaining_after, **added;
	size_t nresolved, nremaining, nadded;
};

void diff_compare(const struct run_summary *before, const struct run_summary *after,
		  const struct diff_opts *o, struct diff_result *r);
void diff_result_release(struct diff_result *r);
const char *verdict_name(int verdict);

/* Output of a diff: "text", "json", "csv" or "html"; 0 or -1 on a write error. */
int diff_print(FILE *f, const char *format, const struct run_summary *before,
	       const struct run_summary *after, const struct diff_result *r);

/* Format a metric value for people ("12.3 ms", "48.2%", "1.5 MiB", "42"). */
const char *metric_fmt(char *buf, size_t n, const struct run_metric *m, double v);

/* ---- the baseline library (baseline.c) ---- */

/* The directory: @opt, else $GPUSCOPE_BASELINE_DIR, else ".gpuscope-baselines". */
const char *baseline_dir(const char *opt);
/* Names are letters, digits, '-', '_' and '.', not starting with '.'. */
int baseline_name_ok(const char *name);
char *baseline_path(const char *dir, const char *name);
int baseline_list(const char *dir, char ***names, size_t *n);
int baseline_mkdir(const char *dir);

#endif
