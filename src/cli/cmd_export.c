/*
 * cmd_export.c - `gpuscope export REPORT --format F [-o OUT]`: write a run
 * in the formats other tools read (docs/export.md).
 */
#include "commands.h"
#include "../analyze/analyze.h"
#include "../export/export.h"
#include "../import/import.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char export_usage[] =
	"gpuscope export REPORT [--format perfetto|chrome|sqlite|csv|json|html] [-o OUT] [--force]\n"
	"                [--start T] [--end T | --duration T] [--nvtx RANGE] [--step RANGE]\n"
	"                [--set rule.key=value ...] [--data-range PATTERN ...]";

static const struct cli_opt export_opts[] = {
	{ "format", 't', 't', ARG_REQUIRED, "FMT", "perfetto (default), chrome, sqlite, csv, json, html",
	  "perfetto chrome sqlite csv json html", 0 },
	{ "type", 0, 't', ARG_REQUIRED, "FMT", "nsys's name for --format", NULL, OPT_HIDDEN },
	{ "output", 'o', 'o', ARG_REQUIRED, "OUT",
	  "output file (csv: a prefix); '-' = stdout; default from REPORT", "<file>", 0 },
	{ "force", 'f', 'f', ARG_BOOL, NULL, "overwrite an existing output file", NULL, 0 },
	{ "force-overwrite", 0, 'f', ARG_BOOL, NULL, "nsys's name for --force", NULL, OPT_HIDDEN },
	{ "no-progress", 0, 'P', ARG_NONE, NULL, "no progress line on a terminal", NULL, 0 },
	{ "start", 0, 'S', ARG_REQUIRED, "T",
	  "the findings' window starts T after the report's start (\"1.5s\", \"200ms\"; seconds when bare)",
	  NULL, 0 },
	{ "end", 0, 'E', ARG_REQUIRED, "T", "the findings' window ends T after the report's start", NULL, 0 },
	{ "duration", 0, 'D', ARG_REQUIRED, "T", "the findings' window lasts T (instead of --end)", NULL, 0 },
	{ "nvtx", 0, 'N', ARG_REQUIRED, "RANGE", "analyse the instances of this NVTX range", NULL, 0 },
	{ "step", 0, 'T', ARG_REQUIRED, "RANGE", "the NVTX range that marks one step", NULL, 0 },
	{ "set", 0, 'V', ARG_REQUIRED, "RULE.KEY=V", "a rule's threshold (gpuscope analyze --rules)", NULL,
	  OPT_REPEAT },
	{ "data-range", 0, 'R', ARG_REQUIRED, "PATTERN", "NVTX ranges (a shell pattern) that mark data loading",
	  NULL, OPT_REPEAT },
	{ 0 },
};

const struct cli_cmd cli_export = {
	.name = "export",
	.synopsis = export_usage,
	.summary = "write Perfetto, Chrome, SQLite, CSV/JSON or HTML",
	.description = "Writes a report as a Perfetto trace (ui.perfetto.dev), Chrome JSON, an "
		       "nsys-like SQLite database, CSV or JSON tables, or one offline HTML page "
		       "(docs/export.md).  The findings that sqlite, csv, json and html carry are "
		       "analyze's with the same window and thresholds (--start, --end, --nvtx, --set ...).",
	.opts = export_opts,
	.example = "gpuscope export --format perfetto run.gpuscope\n"
		   "gpuscope export --format html --start 2s --set launch-bound.min_gain=0.05 -o run.html run.gpuscope",
	.args = "<file>",
};


/*
 * The analysis every format with findings shows (sqlite, csv, json, html),
 * computed once here with analyze's window and thresholds, so `export`
 * shows the findings `analyze` prints with the same options.
 */
struct export_analysis {
	const char *start, *end, *duration;
	const char **set, **ranges;
	size_t nset, nranges;
	struct analyze_opts ao;
};

/*
 * --start/--end/--duration into @s and @e (from the report's start; @e 0:
 * none); 1 when a window is given, 0 when none, or a usage error (< 0).
 */
static int export_window_parse(struct export_analysis *a, uint64_t *s, uint64_t *e)
{
	uint64_t d = 0;

	*s = *e = 0;
	if (a->start && parse_duration_ns(a->start, s, "s") < 0)
		return -usage_error(export_usage, "bad time '%s'", a->start);
	if (a->end && parse_duration_ns(a->end, e, "s") < 0)
		return -usage_error(export_usage, "bad time '%s'", a->end);
	if (a->duration && parse_duration_ns(a->duration, &d, "s") < 0)
		return -usage_error(export_usage, "bad time '%s'", a->duration);
	if (a->end && a->duration)
		return -usage_error(export_usage, "--end and --duration are one window end: give one");
	if (a->duration) {
		if (!d)
			return -usage_error(export_usage, "--duration must be more than 0");
		*e = *s + d;
	}
	if (!a->start && !a->end && !a->duration)
		return 0;
	if ((a->end || a->duration) && *e <= *s)
		return -usage_error(export_usage, "--end must be after --start");
	return 1;
}

/* --start/--end/--duration into the absolute window of @ao (analyze's rule); 0 or a usage error. */
static int export_window(struct export_analysis *a, const struct model *m)
{
	uint64_t s = 0, e = 0, d = 0;

	if (a->start && parse_duration_ns(a->start, &s, "s") < 0)
		return usage_error(export_usage, "bad time '%s'", a->start);
	if (a->end && parse_duration_ns(a->end, &e, "s") < 0)
		return usage_error(export_usage, "bad time '%s'", a->end);
	if (a->duration && parse_duration_ns(a->duration, &d, "s") < 0)
		return usage_error(export_usage, "bad time '%s'", a->duration);
	if (a->end && a->duration)
		return usage_error(export_usage, "--end and --duration are one window end: give one");
	if (a->duration) {
		if (!d)
			return usage_error(export_usage, "--duration must be more than 0");
		e = s + d;
	}
	if (!a->start && !a->end && !a->duration)
		return 0;
	if ((a->end || a->duration) && e <= s)
		return usage_error(export_usage, "--end must be after --start");
	a->ao.start = m->t_min + s;
	a->ao.end = (a->end || a->duration) ? m->t_min + e : 0;
	if (!a->ao.end && !a->ao.start)
		a->ao.start = m->t_min ? m->t_min : 1; /* "--start 0": the whole report from its start */
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { .progress = 1 };
	struct export_analysis a = { 0 };
	struct analyze_result r;
	struct export_input in;
	int analysed = 0;
	const char *fmt_name = "perfetto", *out = NULL;
	char *def_out = NULL;
	struct model m;
	int c, format, ret;
	struct opt_iter it;
	struct progress prog;
	struct load_opts lo = { 0 };

	opt_iter_init(&it, &cli_export, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 't': fmt_name = it.arg; break;
		case 'o': out = it.arg; break;
		case 'f': o.force = opt_bool(&it); break;
		case 'P': o.progress = 0; break;
		case 'S': a.start = it.arg; break;
		case 'E': a.end = it.arg; break;
		case 'D': a.duration = it.arg; break;
		case 'N': a.ao.nvtx = it.arg; break;
		case 'T': a.ao.step = it.arg; break;
		case 'V':
			a.set = xrealloc(a.set, (a.nset + 2) * sizeof(*a.set));
			a.set[a.nset++] = it.arg;
			a.set[a.nset] = NULL;
			break;
		case 'R':
			a.ranges = xrealloc(a.ranges, (a.nranges + 2) * sizeof(*a.ranges));
			a.ranges[a.nranges++] = it.arg;
			a.ranges[a.nranges] = NULL;
			break;
		default:
			ret = c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
			goto out_opts;
		}
	}
	a.ao.set = a.set;
	a.ao.data_ranges = a.ranges;
	if (optind != argc - 1) {
		ret = usage_error(export_usage, argc - optind > 1 ? "export takes one report" : "missing REPORT");
		goto out_opts;
	}
	format = export_format_by_name(fmt_name);
	if (format < 0) {
		ret = usage_error(export_usage, "unknown format '%s' (perfetto, chrome, sqlite, csv, json, html)",
				  fmt_name);
		goto out_opts;
	}
	/*
	 * A closed pipe or a file-size limit must be an error we report (and
	 * a partial file we remove), not a silent death by signal.
	 */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);

	if (!out)
		out = def_out = export_default_path(argv[optind], format);
	/*
	 * An existing output file is bad usage (2), as it is for merge and profile,
	 * found before the input is read (output_check, as the dispatcher's
	 * CMD_OPENS_OUTPUT does).  CSV's file names are made by export_write(),
	 * which refuses them there: only their directory is checked here.
	 */
	if ((format == EXPORT_CSV ? output_creatable(out) : output_check(out, o.force)) < 0) {
		ret = EXIT_USAGE;
		goto out_opts;
	}
	{
		/*
		 * A window (issue 19): a gpuscope report's rows within
		 * LOAD_WINDOW_MARGIN_NS (import.h) of it are loaded, and
		 * allocations whole, as `analyze` loads them: the findings are
		 * analyze's, the timeline holds the window and what is near it.
		 */
		uint64_t ws, we;
		int w = export_window_parse(&a, &ws, &we);
		if (w < 0) {
			ret = -w;
			goto out_opts;
		}
		if (w && (ws || we)) { /* "--start 0" alone: the whole report */
			lo.windowed = 1;
			lo.win_start = ws;
			lo.win_end = we;
		} else if (a.ao.nvtx) {
			/* --nvtx RANGE: the instances' extent, known from a pass over the NVTX ranges */
			int found = load_nvtx_extent(argv[optind], a.ao.nvtx, &ws, &we);
			if (found < 0) {
				ret = EXIT_USAGE;
				goto out_opts;
			}
			lo.windowed = lo.win_absolute = found;
			lo.win_start = ws;
			lo.win_end = we;
		}
		lo.win_margin = LOAD_WINDOW_MARGIN_NS;
		lo.win_keep = 1u << TRACE_EV_MEMORY;
	}
	model_init(&m);
	/* a progress line while a big report loads, then the writer's own */
	progress_init(&prog, o.progress, "gpuscope export: reading", 0);
	prog.unit = NULL;
	lo.progress = progress_cb;
	lo.progress_ctx = &prog;
	ret = load_input_opts(&m, argv[optind], &lo);
	progress_end(&prog);
	if (ret) {
		ret = EXIT_USAGE;
		goto out_model;
	}
	report_damage(&m);
	if ((ret = export_window(&a, &m)))
		goto out_model;
	/* the timeline formats carry no findings: no analysis for them */
	if (format == EXPORT_SQLITE || format == EXPORT_CSV || format == EXPORT_JSON || format == EXPORT_HTML) {
		if (analyze_run(&m, &a.ao, &r) < 0) {
			ret = EXIT_USAGE;
			goto out_model;
		}
		analysed = 1;
		/* the whole run's GPU work was not loaded: unknown, as analyze says */
		if (lo.win_loaded)
			r.summary.run_gpu_busy = -1;
	}
	o.title = argv[optind];
	in = (struct export_input){ .m = &m, .findings = analysed ? &r : NULL, .aopts = &a.ao, .o = o };
	ret = export_write(&in, format, out) ? EXIT_FAIL : EXIT_OK;
	if (!ret && strcmp(out, "-") && format != EXPORT_CSV)
		fprintf(stderr, "gpuscope: wrote '%s'\n", out);
	if (analysed)
		analyze_result_release(&r);
out_model:
	model_release(&m);
out_opts:
	free(def_out);
	free(a.set);
	free(a.ranges);
	return ret;
}
