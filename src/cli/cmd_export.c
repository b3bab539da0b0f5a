/*
 * cmd_export.c - `gpuscope export REPORT --format F [-o OUT]`: write a run
 * in the formats other tools read (docs/export.md).
 */
#include "commands.h"
#include "../export/export.h"
#include "../import/import.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char export_usage[] =
	"gpuscope export REPORT [--format perfetto|chrome|sqlite|csv|json|html] [-o OUT] [--force]";

static const struct cli_opt export_opts[] = {
	{ "format", 't', 't', ARG_REQUIRED, "FMT", "perfetto (default), chrome, sqlite, csv, json, html",
	  "perfetto chrome sqlite csv json html", 0 },
	{ "type", 0, 't', ARG_REQUIRED, "FMT", "nsys's name for --format", NULL, OPT_HIDDEN },
	{ "output", 'o', 'o', ARG_REQUIRED, "OUT",
	  "output file (csv: a prefix); '-' = stdout; default from REPORT", "<file>", 0 },
	{ "force", 'f', 'f', ARG_BOOL, NULL, "overwrite an existing output file", NULL, 0 },
	{ "force-overwrite", 0, 'f', ARG_BOOL, NULL, "nsys's name for --force", NULL, OPT_HIDDEN },
	{ "no-progress", 0, 'P', ARG_NONE, NULL, "no progress line on a terminal", NULL, 0 },
	{ NULL },
};

const struct cli_cmd cli_export = {
	.name = "export",
	.synopsis = export_usage,
	.summary = "write Perfetto, Chrome, SQLite, CSV/JSON or HTML",
	.description = "Writes a report as a Perfetto trace (ui.perfetto.dev), Chrome JSON, an "
		       "nsys-like SQLite database, CSV or JSON tables, or one offline HTML page "
		       "(docs/export.md).",
	.opts = export_opts,
	.example = "gpuscope export --format perfetto run.gpuscope\n"
		   "gpuscope export --format html -o run.html run.gpuscope",
	.args = "<file>",
};

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { .progress = 1 };
	const char *fmt_name = "perfetto", *out = NULL;
	char *def_out = NULL;
	struct model m;
	struct stat st;
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
		default:
			return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return usage_error(export_usage, argc - optind > 1 ? "export takes one report"
								    : "missing REPORT");
	format = export_format_by_name(fmt_name);
	if (format < 0)
		return usage_error(export_usage, "unknown format '%s' (perfetto, chrome, sqlite, csv, json, html)",
				   fmt_name);
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
		free(def_out);
		return EXIT_USAGE;
	}
	if (output_creatable(out) < 0) {
		free(def_out);
		return EXIT_USAGE;
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
		model_release(&m);
		free(def_out);
		return EXIT_USAGE;
	}
	report_damage(&m);
	o.title = argv[optind];
	ret = export_write(&m, format, out, &o);
	if (!ret && strcmp(out, "-") && format != EXPORT_CSV)
		fprintf(stderr, "gpuscope: wrote '%s'\n", out);
	free(def_out);
	model_release(&m);
	return ret ? EXIT_FAIL : EXIT_OK;
}
