/*
 * cmd_export.c - `gpuscope export REPORT --format F [-o OUT]`: write a run
 * in the formats other tools read (docs/export.md).
 */
#include "commands.h"
#include "../analyze/analyze.h"
#include "../export/export.h"
#include "../import/import.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char export_usage[] =
	"gpuscope export REPORT [--format perfetto|chrome|sqlite|csv|json|html] [-o OUT] [--force]\n"
	"                [--start T] [--end T | --duration T] [--nvtx RANGE] [--step RANGE]\n"
	"                [--set rule.key=value ...] [--data-range PATTERN ...]";

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
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 't' },
		{ "type", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "force-overwrite", no_argument, NULL, 'f' },
		{ "no-progress", no_argument, NULL, 'P' },
		{ "start", required_argument, NULL, 'S' },
		{ "end", required_argument, NULL, 'E' },
		{ "duration", required_argument, NULL, 'D' },
		{ "nvtx", required_argument, NULL, 'N' },
		{ "step", required_argument, NULL, 'T' },
		{ "set", required_argument, NULL, 'V' },
		{ "data-range", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct export_opts o = { .progress = 1 };
	struct export_analysis a = { 0 };
	struct analyze_result r;
	struct export_input in;
	int analysed = 0;
	const char *fmt_name = "perfetto", *out = NULL;
	char *def_out = NULL;
	struct model m;
	struct stat st;
	int c, format, ret;

	optind = 0; /* a full reset: profile --report-html calls us after its own getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:o:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 't': fmt_name = optarg; break;
		case 'o': out = optarg; break;
		case 'f': o.force = 1; break;
		case 'P': o.progress = 0; break;
		case 'S': a.start = optarg; break;
		case 'E': a.end = optarg; break;
		case 'D': a.duration = optarg; break;
		case 'N': a.ao.nvtx = optarg; break;
		case 'T': a.ao.step = optarg; break;
		case 'V':
			a.set = xrealloc(a.set, (a.nset + 2) * sizeof(*a.set));
			a.set[a.nset++] = optarg;
			a.set[a.nset] = NULL;
			break;
		case 'R':
			a.ranges = xrealloc(a.ranges, (a.nranges + 2) * sizeof(*a.ranges));
			a.ranges[a.nranges++] = optarg;
			a.ranges[a.nranges] = NULL;
			break;
		case 'h':
			printf("usage: %s\n\n"
			       "  --format F   perfetto (default), chrome, sqlite, csv, json, html\n"
			       "  -o OUT       output file (csv: a prefix); '-' = stdout; default from REPORT\n"
			       "  --force      overwrite an existing output file\n"
			       "  --no-progress  no progress line on a terminal\n"
			       "  The findings (sqlite, csv, json, html) are analyze's with the same options:\n"
			       "  --start T, --end T, --duration T  the analysed window, T from the report's start\n"
			       "               (\"1.5s\", \"200ms\"; seconds by default)\n"
			       "  --nvtx RANGE   analyse the instances of this NVTX range\n"
			       "  --step RANGE   the NVTX range that marks one step\n"
			       "  --set rule.key=value  a threshold (gpuscope analyze --rules)\n"
			       "  --data-range PATTERN  NVTX ranges that mark data loading\n",
			       export_usage);
			ret = EXIT_OK;
			goto out_opts;
		default:
			ret = getopt_error(export_usage, c, argv);
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
	 * found before the input is read.  CSV's file names are made by
	 * export_write(), which refuses them there.
	 */
	if (!o.force && format != EXPORT_CSV && strcmp(out, "-") && !stat(out, &st) &&
	    S_ISREG(st.st_mode)) {
		error("output '%s' exists (use --force to overwrite)", out);
		ret = EXIT_USAGE;
		goto out_opts;
	}
	if (output_creatable(out) < 0) {
		ret = EXIT_USAGE;
		goto out_opts;
	}
	model_init(&m);
	if (load_input(&m, argv[optind])) {
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
