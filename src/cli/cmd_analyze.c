/*
 * cmd_analyze.c - `gpuscope analyze`: the ranked diagnosis (docs/rules.md).
 */
#include "commands.h"
#include "captures.h"
#include "../analyze/analyze.h"
#include "../analyze/critpath.h"
#include "../import/import.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

static const char analyze_usage[] =
	"gpuscope analyze [options] REPORT|TRACE.json|EXPORT.sqlite\n"
	"       gpuscope analyze --rules    (the rules and their thresholds)";

enum {
	O_FORMAT = 'f', O_START = 256, O_END, O_NVTX, O_STEP, O_SET, O_DATA_RANGE, O_CP, O_CP_ANN,
	O_CP_INST, O_RULES, O_COLOR, O_NO_PROGRESS, O_RANK, O_CAPTURE,
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

int cmd_analyze(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *start = NULL, *end = NULL;
	struct analyze_opts o;
	struct analyze_result r;
	struct model m;
	struct critpath_opts cpo = { 0 };
	int cp_on = 0, rules = 0, c, progress = 1, rank = -1;
	unsigned capture = 0;
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
