/*
 * analyze.h - the rules of `gpuscope analyze` and their findings.
 *
 * Each rule is one file, src/analyze/rule_<name>.c, registered in one table
 * (rules.c) with its id, title and default thresholds (docs/rules.md).  A
 * rule reads the model and adds findings: what holds the program back, the
 * evidence (times, counts, names: enough to find it on a timeline), the
 * estimated gain with the formula in words, and a recommendation.
 */
#ifndef GS_ANALYZE_H
#define GS_ANALYZE_H

#include <stdio.h>

#include "../model/model.h"

enum finding_severity {
	SEV_INFO = 0,
	SEV_WARNING = 1,
	SEV_CRITICAL = 2,
};

struct finding {
	const char *id;            /* rule id, kebab-case: "gpu-starvation", "launch-bound" ... */
	char *title;               /* specific one-line title */
	int severity;              /* enum finding_severity */
	double gain;               /* estimated gain: fraction of the analysed wall time, 0..1 */
	char *gain_formula;        /* how the gain was estimated, in words */
	char *evidence;            /* lines of evidence, '\n'-separated */
	char *recommendation;
	struct interval *where;    /* time windows to look at on a timeline (owned) */
	size_t nwhere;
	/*
	 * The what-if replay behind the gain (docs/rules.md, "The replay"):
	 * the transformation of the run's dependency graph that the fix
	 * amounts to, the analysed time as recorded and as replayed with it
	 * (per GPU, summed over GPUs); NULL and -1 where the gain is not a
	 * replay's.
	 */
	char *transform;
	double actual_s, replayed_s;
	/*
	 * What computed replayed_s: FINDING_WHATIF_REPLAY, the replay of the
	 * dependency graph under the transformation; FINDING_WHATIF_MODEL, the
	 * rule's own model of the fix (gain_formula), where the graph cannot
	 * express the transformation or could not be built: replayed =
	 * actual x (1 - gain).
	 */
	int whatif;
	/*
	 * The run failed or is on course to fail (an out-of-memory; a leak
	 * that fills the device within memory-leak.fatal_horizon_s): ranked
	 * before every time gain, since a run that dies has no step time left
	 * to shorten.
	 */
	int fatal;
};

enum { FINDING_WHATIF_NONE = 0, FINDING_WHATIF_REPLAY, FINDING_WHATIF_MODEL };

/* A one-off in the window: start-up, first-launch module loading, JIT, a cold start. */
struct analyze_oneoff {
	char *what;                /* one line: what the thread did, what followed */
	double start_s, duration_s; /* start relative to the report's start */
};

struct analyze_summary {
	double wall_s;             /* analysed span */
	uint64_t win_start, win_end; /* the analysed window, absolute ns (first start, last end; 0/0 = empty) */
	/*
	 * GPU busy: the share of the analysed time during which a kernel, copy
	 * or memset ran on a GPU, averaged over the (process, GPU) pairs with
	 * GPU work (docs/rules.md, "GPU busy"); 0..1, -1 when no GPU data.
	 */
	double gpu_busy, gpu_idle;
	double win_start_s, win_end_s; /* the analysed window, from the report's start */
	double run_s;              /* the whole run: the report's first to last event */
	double run_gpu_busy;       /* GPU busy over the whole run (same definition), -1 when no GPU data */
	double step_period_s;      /* detected period or --step range median; 0 when none */
	size_t gaps;               /* GPU idle gaps counted by the starvation rule */
	double gap_median_s;
	char *step_source;         /* "nvtx range 'step'", "periodic idle gaps", or NULL */
};

struct analyze_result {
	struct analyze_summary summary;
	struct finding *findings;  /* sorted by gain, largest first */
	size_t n, alloc;
	char **notes;              /* what the input lacks, said once ("no OS-runtime data ...") */
	size_t nnotes, alloc_notes;
	struct analyze_oneoff *oneoffs; /* the largest one-offs, largest first (at most 16) */
	size_t noneoffs;
	double oneoff_s;           /* all one-offs together (GPU time, summed over GPUs) */
	/*
	 * With analyze_opts.check_replay: the largest difference, over GPUs,
	 * between the recorded span of a GPU's work and its unchanged replay
	 * (0 = the graph reproduces the run); -1 without a graph.
	 */
	int64_t replay_check_ns;
	/*
	 * 0: the analysis of one window (or of the whole report) at once; N:
	 * merged from the analyses of N windows that tile the report
	 * (analyze_merge_*, docs/rules.md "Long reports").
	 */
	size_t windows;
};

struct analyze_opts {
	uint64_t start, end;       /* absolute window; 0/0 = all */
	const char *nvtx;          /* analyse the instances of this NVTX range */
	const char *step;          /* NVTX range that marks one step, or NULL to detect */
	const char *const *set;    /* threshold overrides "rule.key=value", NULL-terminated, or NULL */
	const char *const *data_ranges; /* NVTX range patterns that mark data loading, NULL-terminated, or NULL */
	int check_replay;          /* replay the graph unchanged: result->replay_check_ns (tests) */
	/*
	 * With start/end: the window is one of those that tile a report
	 * analysed in windows (analyze --windows, --window-mb), analysed as a
	 * whole analysis treats that part of the run: one-offs are set apart,
	 * not counted as steady state as in an asked-for window.
	 */
	int in_windows;
	/*
	 * With @in_windows, in the first window of a run of three steps or
	 * more: the second step's start.  The window then leaves the first
	 * step out as a whole analysis does (from there, or from where the
	 * first step's GPU work ends if later); 0: nothing left out.
	 * @warmup_lo: where the run's analysis would start without it (the
	 * first GPU work), for the note that says how much was left out.
	 */
	uint64_t warmup_from, warmup_lo;
	/*
	 * Which rules run: ANALYZE_RULES_ALL; for a report analysed in
	 * windows, ANALYZE_RULES_WINDOW in each window (the rules of the
	 * window's work) and ANALYZE_RULES_RUN once over the whole run's memory
	 * records (the rules of state that builds up over the run: docs/rules.md,
	 * "Long reports").
	 */
	int rules;
};
enum { ANALYZE_RULES_ALL = 0, ANALYZE_RULES_WINDOW, ANALYZE_RULES_RUN };

/*
 * Merging the analyses of windows that tile a report (merge.c): a report
 * too large to analyse whole is loaded and analysed one window at a time,
 * in time order, each result added with analyze_merge_add() (which takes
 * and releases its contents), then analyze_merge_finish() gives the whole
 * report's result (findings ranked, result.windows set).
 */
struct merge_row;
struct analyze_merge {
	struct analyze_result acc;
	struct merge_row *rows;
	size_t nrows, arows, windows;
	double busy_s, idle_s, gpu_wall_s; /* GPU busy and idle times, over the windows with GPU data */
	double gap_median_sum;     /* gap medians weighted by their gap counts */
	double period_sum, period_wall; /* step periods weighted by wall time */
	unsigned long long step_instances; /* steps found, summed over the windows */
};
void analyze_merge_init(struct analyze_merge *mg);
void analyze_merge_add(struct analyze_merge *mg, struct analyze_result *w);
/* The result of the whole-run rules (ANALYZE_RULES_RUN): its findings as they are, not its notes. */
void analyze_merge_add_run(struct analyze_merge *mg, struct analyze_result *w);
void analyze_merge_finish(struct analyze_merge *mg, struct analyze_result *out);

/* The rule ids, NULL-terminated. */
const char *const *analyze_rule_ids(void);

/*
 * analyze_run - run every rule over @m.  Returns 0, or -1 after error() on
 * bad options (an unknown threshold name, say).  @r is initialised here.
 */
int analyze_run(const struct model *m, const struct analyze_opts *o, struct analyze_result *r);
void analyze_result_release(struct analyze_result *r);

/*
 * analyze_print_rules - list every rule (id, title, finding ids) and its
 * thresholds with their defaults and reasons (`gpuscope analyze --rules`).
 * Returns 0, or -1 on a write error.
 */
int analyze_print_rules(FILE *f);

/* Print as text or as the documented JSON schema (docs/rules.md); 0 or -1. */
int analyze_print_text(FILE *f, const struct model *m, const struct analyze_result *r);
int analyze_print_json(FILE *f, const struct model *m, const struct analyze_result *r);

#endif
