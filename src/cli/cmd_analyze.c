/*
 * cmd_analyze.c - `gpuscope analyze`: the ranked diagnosis (docs/rules.md).
 */
#include "commands.h"
#include "captures.h"
#include "../analyze/analyze.h"
#include "../analyze/critpath.h"
#include "../model/device_facts.h"
#include "../import/import.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

static const char analyze_usage[] =
	"gpuscope analyze [options] REPORT|TRACE.json|EXPORT.sqlite\n"
	"       gpuscope analyze --rules    (the rules and their thresholds)";

enum {
	O_FORMAT = 'f', O_START = 256, O_END, O_NVTX, O_STEP, O_SET, O_DATA_RANGE, O_CP, O_CP_ANN,
	O_CP_INST, O_RULES, O_COLOR, O_NO_PROGRESS, O_RANK, O_CAPTURE, O_WINDOW_MB, O_WINDOWS,
};

static const struct cli_opt analyze_opts[] = {
	{ "format", 'f', O_FORMAT, ARG_REQUIRED, "FMT", "text (default) or json", "text json", 0 },
	{ "start", 0, O_START, ARG_REQUIRED, "T",
	  "analyse from T after the report's start (\"1.5s\", \"200ms\"; seconds when bare)", NULL, 0 },
	{ "end", 0, O_END, ARG_REQUIRED, "T", "analyse up to T after the report's start", NULL, 0 },
	{ "nvtx", 0, O_NVTX, ARG_REQUIRED, "RANGE", "analyse the instances of the NVTX range RANGE",
	  NULL, 0 },
	{ "step", 0, O_STEP, ARG_REQUIRED, "RANGE",
	  "the NVTX range that marks a training step (per-step figures)", NULL, 0 },
	{ "set", 0, O_SET, ARG_REQUIRED, "RULE.KEY=V", "change a rule's threshold (see --rules)", NULL,
	  OPT_REPEAT },
	{ "data-range", 0, O_DATA_RANGE, ARG_REQUIRED, "PATTERN",
	  "NVTX ranges (a shell pattern) that mark the program's data loading", NULL, OPT_REPEAT },
	{ "rank", 0, O_RANK, ARG_REQUIRED, "N",
	  "analyse rank N of a merged distributed run alone (docs/distributed.md)", NULL, 0 },
	{ "capture", 0, O_CAPTURE, ARG_REQUIRED, "K",
	  "analyse capture K alone, with the flight recorder's ring before it\n"
	  "(`gpuscope info` lists them; docs/always-on.md)", NULL, 0 },
	{ "window-mb", 0, O_WINDOW_MB, ARG_REQUIRED, "N",
	  "a report whose whole analysis needs more than N MiB (default 256) is\n"
	  "analysed in windows of about N MiB each (docs/rules.md, \"Long reports\"); 0: whole",
	  NULL, 0 },
	{ "windows", 0, O_WINDOWS, ARG_REQUIRED, "K",
	  "analyse the report in K windows of about the same number of rows, one at a time,\n"
	  "whatever its size (a gpuscope report)", NULL, 0 },
	{ "critical-path", 0, O_CP, ARG_NONE, NULL, "the critical path of one window instead", NULL, 0 },
	{ "cp-annotation", 0, O_CP_ANN, ARG_REQUIRED, "NAME",
	  "with --critical-path: the NVTX range that marks the window", NULL, 0 },
	{ "cp-instance", 0, O_CP_INST, ARG_REQUIRED, "N",
	  "with --critical-path: which instance of that range (from 0)", NULL, 0 },
	{ "rules", 0, O_RULES, ARG_NONE, NULL, "list the rules and their thresholds, then exit", NULL,
	  0 },
	{ "no-progress", 0, O_NO_PROGRESS, ARG_NONE, NULL, "no progress line on a terminal", NULL, 0 },
	{ "color", 0, O_COLOR, ARG_OPTIONAL, "WHEN",
	  "colour the severities: auto (default: on a terminal), always or never",
	  "auto always never", 0 },
	{ 0 },
};

const struct cli_cmd cli_analyze = {
	.name = "analyze",
	.synopsis = analyze_usage,
	.summary = "diagnose what holds the GPU back, with estimated gains",
	.description = "Reads a report, a Kineto/Chrome trace or an nsys SQLite export and ranks what "
		       "holds the GPU back (docs/rules.md), each finding with its evidence and the "
		       "time it would save.",
	.opts = analyze_opts,
	.example = "gpuscope analyze run.gpuscope\n"
		   "gpuscope analyze --step train_step --set launch-bound.min_share=10% run.gpuscope",
	.args = "<file>",
};

/*
 * ---- a long report in windows (issue 19: the whole file in bounded memory) ----
 *
 * A report whose whole analysis would need more than --window-mb is cut
 * into K windows of about the same number of rows (a first streaming pass
 * counts row starts in a time histogram, as `dump` slices a report), K
 * being the estimate over the budget; each window is loaded alone (the
 * loader's window and the chunk index: its rows and 1 s around it),
 * analysed and released before the next, and the windows' results merge
 * into the whole report's (analyze_merge, src/analyze/merge.c).  Memory is
 * one window's, whatever the report's length.
 */

/* Default --window-mb: a long run's report is read beside the job that recorded it. */
#define ANALYZE_WINDOW_MB 256
/*
 * analyze's peak memory per byte of decompressed entries, loaded whole:
 * the model (MODEL_BYTES_PER_RAW, 1.25) and the analysis beside it.
 * Measured on the long-run bench's synthetic reports (bench/RESULTS.md,
 * "Long runs: the whole report in windows"): 2.41 at 1 M events, 2.48 at
 * 10 M; the H200 recordings in tests/data gave 2.1-2.75.
 */
#define ANALYZE_BYTES_PER_RAW 2.5

/*
 * The timed record types the first pass counts and does not store.  It
 * stores the rest: NVTX ranges (the steps: the warm-up step a whole
 * analysis leaves out), allocations, GPU metrics and the allocator's
 * samples and OOMs (the memory rules, run once over the whole run).
 */
#define ANALYZE_SCAN_TYPES                                                                      \
	((1u << TRACE_EV_NVTX_MARK) | (1u << TRACE_EV_OSRT) |                                   \
	 (1u << TRACE_EV_CPU_SAMPLE) | (1u << TRACE_EV_API) | (1u << TRACE_EV_KERNEL) |         \
	 (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) | (1u << TRACE_EV_SYNC) |            \
	 (1u << TRACE_EV_CAPTURE) | (1u << TRACE_EV_KMETRIC))

struct window_scan {
	struct time_hist hist;     /* of row starts */
	uint64_t gpu_lo, gpu_hi;   /* the first start and last end of GPU work (a whole analysis's window) */
	struct progress prog;
};

static void count_start(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct window_scan *ws = ctx;
	uint64_t t;

	(void)stream;
	(void)type;
	memcpy(&t, rec, sizeof(t)); /* every timed record starts with its time or start */
	time_hist_add(&ws->hist, t);
	if (type == TRACE_EV_KERNEL || type == TRACE_EV_MEMCPY || type == TRACE_EV_MEMSET) {
		/* kernels, copies and sets all begin with start, end */
		uint64_t e;
		memcpy(&e, (const char *)rec + sizeof(t), sizeof(e));
		if (!ws->gpu_lo || t < ws->gpu_lo)
			ws->gpu_lo = t;
		if (e > ws->gpu_hi)
			ws->gpu_hi = e;
	}
}

static void count_progress(void *ctx, uint64_t done, uint64_t total)
{
	progress_cb(&((struct window_scan *)ctx)->prog, done, total);
}

/*
 * analyze_in_windows - analyse report @path in windows when its whole
 * analysis needs more than @budget bytes (above), or in @force windows
 * when @force > 0.  Returns 1 when it does not (nothing done: analyse it
 * whole), 0 with @r the whole report's result
 * and @m a model with no timed rows but the report's span, path and
 * format (for the output), or -1 after error().
 */
static int analyze_in_windows(const char *path, struct analyze_opts *o, uint64_t budget,
			      uint64_t force, int progress, struct model *m, struct analyze_result *r)
{
	struct window_scan *ws;
	struct model_steps st;
	size_t ns;
	struct model_sink sink = { 0 };
	struct analyze_merge mg;
	struct progress prog;
	uint64_t raw, need, k, per, a, rows = 0, lo0 = 0, hi0 = UINT64_MAX, warmup_from = 0, warmup_lo = 0;
	size_t b = 0, n = 0;
	char b1[32], b2[32];
	int ret = 0;

	if (force && trace_is_report(path) != 1)
		return error("--windows: '%s' is not a gpuscope report (other formats are analysed whole)",
			     path);
	if ((!budget && !force) || trace_is_report(path) != 1)
		return 1;
	if (model_report_raw_bytes(path, &raw) < 0)
		return -1; /* a damaged header: said once, as a whole load would say it */
	need = (uint64_t)((double)raw * ANALYZE_BYTES_PER_RAW);
	if (!force && need <= budget)
		return 1;
	k = force ? force : (need + budget - 1) / budget;
	ws = xcalloc(1, sizeof(*ws));
	sink.types = ANALYZE_SCAN_TYPES;
	sink.row = count_start;
	sink.progress = count_progress;
	sink.ctx = ws;
	progress_init(&ws->prog, progress, "gpuscope analyze: counting rows", 0);
	ws->prog.unit = NULL;
	ret = model_load_report_sink(m, path, &sink);
	progress_end(&ws->prog);
	if (ret < 0) {
		free(ws);
		return -1;
	}
	/*
	 * The windows tile what a whole analysis analyses: from the first GPU
	 * work to the end of the last (the report's span without any), cut
	 * into K of about the same number of rows starting there.
	 */
	if (ws->gpu_hi > ws->gpu_lo) {
		lo0 = ws->gpu_lo;
		hi0 = ws->gpu_hi;
	}
	{
		/*
		 * With three steps or more a whole analysis leaves the first
		 * out as warm-up (analyze.c, skip_warmup): so do the windows.
		 */
		struct interval_set win = { 0 };
		ivset_add(&win, lo0, hi0);
		ivset_normalize(&win);
		ns = model_find_steps(m, o->step, &win, &st);
		if (ns >= 3 && st.v[1].start > lo0 && st.v[1].start < hi0) {
			/* the windows start there; the first one moves on to where step 0's GPU work ends */
			warmup_lo = lo0;
			warmup_from = lo0 = st.v[1].start;
		}
		ivset_release(&win);
	}
	a = lo0;
	if (ws->hist.width && lo0 > ws->hist.lo)
		b = (size_t)((lo0 - ws->hist.lo) / ws->hist.width);
	for (size_t i = b; i < TIME_HIST_BUCKETS; i++)
		if (ws->hist.lo + i * ws->hist.width <= hi0)
			rows += ws->hist.n[i];
	per = (rows + k - 1) / k;
	analyze_merge_init(&mg);
	while (a != UINT64_MAX && !ret) {
		uint64_t hi = time_hist_next_cut(&ws->hist, &b, per ? per : 1);
		/*
		 * With steps, windows hold whole steps: a cut moves on to the next
		 * step's start, so that a step's launches (the CPU runs ahead)
		 * and its GPU work are analysed together.
		 */
		if (ns >= 2 && hi != UINT64_MAX) {
			size_t lo_i = 0, hi_i = ns;
			while (lo_i < hi_i) {   /* the first step starting at or after the cut */
				size_t mid = lo_i + (hi_i - lo_i) / 2;
				if (st.v[mid].start < hi)
					lo_i = mid + 1;
				else
					hi_i = mid;
			}
			hi = lo_i < ns && st.v[lo_i].start < hi0 ? st.v[lo_i].start : UINT64_MAX;
		}
		struct load_opts lo = { 0 };
		struct analyze_result w;
		struct model wm;
		char *what = xstrfmt("gpuscope analyze: window %zu of about %llu", ++n, (unsigned long long)k);

		lo.windowed = lo.win_absolute = 1;
		lo.win_start = a;
		lo.win_end = hi;
		/* no allocations kept from the start: the memory rules run once, over the whole run (below) */
		lo.win_margin = LOAD_WINDOW_MARGIN_NS;
		progress_init(&prog, progress, what, 0);
		prog.unit = NULL;
		lo.progress = progress_cb;
		lo.progress_ctx = &prog;
		model_init(&wm);
		ret = load_input_opts(&wm, path, &lo);
		progress_end(&prog);
		free(what);
		if (!ret) {
			o->start = a > wm.t_min ? a : wm.t_min;
			o->end = hi == UINT64_MAX || hi > hi0 ? (hi0 < wm.t_max ? hi0 : wm.t_max) : hi;
			o->in_windows = 1;
			o->rules = ANALYZE_RULES_WINDOW;
			o->warmup_from = mg.windows ? 0 : warmup_from;
			o->warmup_lo = warmup_lo;
			if (n == 1) {
				m->t_min = wm.t_min; /* the report's span, as every windowed load keeps it */
				m->t_max = wm.t_max;
			}
			if (o->start >= o->end)
				; /* a window outside the GPU work (start-up, the end): nothing to analyse */
			else if (analyze_run(&wm, o, &w) < 0)
				ret = -1;
			else
				analyze_merge_add(&mg, &w);
		}
		model_release(&wm);
		a = hi >= hi0 ? UINT64_MAX : hi;
	}
	free(ws);
	model_steps_release(&st);
	if (!ret) {
		/* the rules of state that builds up over the run, over the first pass's memory records */
		struct analyze_opts ro = *o;
		struct analyze_result w;
		ro.start = ro.end = 0;
		ro.in_windows = 0;
		ro.warmup_from = 0;
		ro.rules = ANALYZE_RULES_RUN;
		model_finish(m);
		model_apply_gpu_facts(m);
		if (analyze_run(m, &ro, &w) < 0)
			ret = -1;
		else
			analyze_merge_add_run(&mg, &w);
	}
	analyze_merge_finish(&mg, r);
	if (ret < 0) {
		analyze_result_release(r);
		return -1;
	}
	{
		char *note = force ? xstrfmt("the report was analysed in %zu windows of about %llu rows "
					     "each, one at a time (--windows %llu; docs/rules.md, \"Long "
					     "reports\")", r->windows, (unsigned long long)per,
					     (unsigned long long)force)
			     : xstrfmt("the report was analysed in %zu windows of about %llu rows each, one "
				       "at a time: analysing it whole would take about %s of memory, more "
				       "than --window-mb %s (docs/rules.md, \"Long reports\")",
				       r->windows, (unsigned long long)per,
				       fmt_bytes(b1, sizeof(b1), (double)need),
				       fmt_bytes(b2, sizeof(b2), (double)budget));
		r->notes = xrealloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes));
		memmove(r->notes + 1, r->notes, r->nnotes * sizeof(*r->notes));
		r->notes[0] = note;
		r->nnotes++;
		r->alloc_notes = r->nnotes;
	}
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *start = NULL, *end = NULL;
	struct analyze_opts o;
	struct analyze_result r;
	struct model m;
	struct critpath_opts cpo = { 0 };
	int cp_on = 0, rules = 0, c, progress = 1, rank = -1;
	unsigned capture = 0;
	uint64_t window_mb = ANALYZE_WINDOW_MB, windows = 0;
	struct opt_iter it;
	struct progress prog;
	struct load_opts lo = { 0 };
	const char **set = xcalloc((size_t)argc + 1, sizeof(*set));
	const char **ranges = xcalloc((size_t)argc + 1, sizeof(*ranges));
	size_t nset = 0, nranges = 0;
	int ret;

	memset(&o, 0, sizeof(o));
	opt_iter_init(&it, &cli_analyze, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case O_FORMAT: format = it.arg; break;
		case O_START: start = it.arg; break;
		case O_END: end = it.arg; break;
		case O_NVTX: o.nvtx = it.arg; break;
		case O_STEP: o.step = it.arg; break;
		case O_SET: set[nset++] = it.arg; break;
		case O_DATA_RANGE: ranges[nranges++] = it.arg; break;
		/* HTA's critical path of one window (docs/critical-path.md) */
		case O_CP: cp_on = 1; break;
		case O_CP_ANN: cpo.annotation = it.arg; break;
		case O_CP_INST: cpo.instance = (unsigned)strtoul(it.arg, NULL, 10); break;
		case O_RULES: rules = 1; break;
		case O_RANK: {
			/* one rank of a distributed run alone (docs/distributed.md) */
			char *e;
			long v = strtol(it.arg, &e, 10);
			if (*e || !*it.arg || v < 0 || v > INT32_MAX) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, "bad rank '%s'", it.arg);
			}
			rank = (int)v;
			break;
		}
		case O_CAPTURE: {
			char *e;
			unsigned long v = strtoul(it.arg, &e, 10);
			if (*e || !*it.arg || *it.arg == '-' || !v || v > UINT32_MAX) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, "bad capture '%s' (1, 2, ...)", it.arg);
			}
			capture = (unsigned)v;
			break;
		}
		case O_WINDOW_MB: {
			char *e;
			unsigned long long v = strtoull(it.arg, &e, 10);
			if (*e || !*it.arg || *it.arg == '-' || v > (1ull << 40)) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, "bad --window-mb '%s' (MiB, 0: whole)", it.arg);
			}
			window_mb = v;
			break;
		}
		case O_WINDOWS: {
			char *e;
			unsigned long long v = strtoull(it.arg, &e, 10);
			if (*e || !*it.arg || *it.arg == '-' || !v || v > 100000) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, "bad --windows '%s' (1 to 100000)", it.arg);
			}
			windows = v;
			break;
		}
		case O_NO_PROGRESS: progress = 0; break;
		case O_COLOR:
			if (color_set_mode(it.arg) < 0) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, NULL);
			}
			break;
		default:
			free(set);
			free(ranges);
			return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (rules) {
		free(set);
		free(ranges);
		return analyze_print_rules(stdout) < 0 ? EXIT_FAIL : EXIT_OK;
	}
	if (argc - it.ind > 1) {
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "more than one input ('%s' and '%s')", argv[it.ind],
				   argv[it.ind + 1]);
	}
	path = it.ind < argc ? argv[it.ind] : NULL;
	if (!path) {
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "no input given");
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "unknown format '%s' (text or json)", format);
	}
	o.set = nset ? set : NULL;
	o.data_ranges = nranges ? ranges : NULL;

	if (start || end) {
		uint64_t s = 0, e = 0;
		if ((start && parse_duration_ns(start, &s, "s") < 0) ||
		    (end && parse_duration_ns(end, &e, "s") < 0)) {
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "bad time '%s'", start && parse_duration_ns(start, &s, "s") < 0
					   ? start : end);
		}
		if (end && e <= s) {
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "--end must be after --start");
		}
		/*
		 * A windowed load (issue 19): a gpuscope report's rows that do not
		 * come near the window are not stored, so memory follows the
		 * window, not the file.  Not with --rank (the span then is the
		 * rank's, known only after a whole load) nor --critical-path
		 * (its window is an NVTX range's).  LOAD_WINDOW_MARGIN_NS
		 * (import.h) says what "near" is.
		 */
		if (rank < 0 && !cp_on && (s || end)) { /* "--start 0" alone: the whole report */
			lo.windowed = 1;
			lo.win_start = s;
			lo.win_end = end ? e : 0;
			/* allocations from the start: the bytes live when the window opens (rule_memory) */
			lo.win_keep = 1u << TRACE_EV_MEMORY;
			lo.win_margin = LOAD_WINDOW_MARGIN_NS;
		}
	}
	if (o.nvtx && !start && !end && rank < 0 && !cp_on) {
		/* --nvtx RANGE: the instances' extent, from a pass that keeps only NVTX ranges */
		uint64_t nlo, nhi;
		int found = load_nvtx_extent(path, o.nvtx, &nlo, &nhi);
		if (found < 0) {
			free(set);
			free(ranges);
			return EXIT_USAGE;
		}
		if (found) {
			lo.windowed = lo.win_absolute = 1;
			lo.win_start = nlo;
			lo.win_end = nhi;
			lo.win_keep = 1u << TRACE_EV_MEMORY;
			lo.win_margin = LOAD_WINDOW_MARGIN_NS;
		}
	}
	model_init(&m);
	if (windows && (start || end || o.nvtx || rank >= 0 || capture || cp_on)) {
		model_release(&m);
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "--windows analyses the whole report: not with --start, "
				   "--end, --nvtx, --rank, --capture or --critical-path");
	}
	if (!start && !end && !o.nvtx && rank < 0 && !capture && !cp_on) {
		ret = analyze_in_windows(path, &o, window_mb << 20, windows, progress, &m, &r);
		if (ret < 0) {
			model_release(&m);
			free(set);
			free(ranges);
			return EXIT_USAGE;
		}
		if (ret == 0)
			goto print;
		model_release(&m);
		model_init(&m);
	}
	/* a progress line while a big report loads, on a terminal */
	progress_init(&prog, progress, "gpuscope analyze: reading", 0);
	prog.unit = NULL;
	lo.progress = progress_cb;
	lo.progress_ctx = &prog;
	ret = load_input_opts(&m, path, &lo);
	progress_end(&prog);
	if (ret == 0 && rank >= 0)
		ret = model_keep_rank(&m, rank);
	if (ret == 0 && capture)
		ret = capture_keep(&m, capture);
	if (ret < 0) {
		model_release(&m);
		free(set);
		free(ranges);
		return EXIT_USAGE;
	}
	if (cp_on) {
		struct critpath cp;
		ret = critpath_run(&m, &cpo, &cp);
		if (!ret)
			critpath_print_summary(stdout, &m, &cp);
		critpath_release(&cp);
		model_release(&m);
		free(set);
		free(ranges);
		return ret ? EXIT_USAGE : EXIT_OK;
	}
	if (start || end) {
		uint64_t s = 0, e = 0;
		/* checked above */
		if (start)
			parse_duration_ns(start, &s, "s");
		if (end)
			parse_duration_ns(end, &e, "s");
		o.start = m.t_min + s;
		o.end = end ? m.t_min + e : 0;
		if (!o.end && !o.start)
			o.start = m.t_min ? m.t_min : 1; /* "--start 0": the whole report from its start */
		if (m.t_max > m.t_min && start && o.start >= m.t_max) {
			char b1[32];
			error("--start %s is after the end of the report (%s)", start,
			      fmt_duration(b1, sizeof(b1), (double)(m.t_max - m.t_min)));
			model_release(&m);
			free(set);
			free(ranges);
			return EXIT_USAGE;
		}
	}
	if (analyze_run(&m, &o, &r) < 0) {
		model_release(&m);
		free(set);
		free(ranges);
		return EXIT_USAGE;
	}
	/*
	 * GPU busy over the whole run needs the whole run's GPU work, which a
	 * windowed load did not keep: unknown, not the window's figure.
	 */
	if (lo.win_loaded)
		r.summary.run_gpu_busy = -1;
print:
	if (!strcmp(format, "json"))
		ret = analyze_print_json(stdout, &m, &r);
	else if (color_on(stdout)) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		ret = mem ? analyze_print_text(mem, &m, &r) : -1;
		if (mem && fclose(mem) == 0 && ret == 0)
			ret = print_colored(stdout, buf, len);
		free(buf);
	} else {
		ret = analyze_print_text(stdout, &m, &r);
	}
	analyze_result_release(&r);
	model_release(&m);
	free(set);
	free(ranges);
	/* main() flushes and checks stdout (finish_stdout) after every command */
	if (ret < 0 || fflush(stdout) != 0)
		return EXIT_FAIL;
	return EXIT_OK;
}
