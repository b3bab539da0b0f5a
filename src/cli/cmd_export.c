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

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 't' },
		{ "type", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "force-overwrite", no_argument, NULL, 'f' },
		{ "no-progress", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct export_opts o = { .progress = 1 };
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
		case 'h':
			printf("usage: %s\n\n"
			       "  --format F   perfetto (default), chrome, sqlite, csv, json, html\n"
			       "  -o OUT       output file (csv: a prefix); '-' = stdout; default from REPORT\n"
			       "  --force      overwrite an existing output file\n"
			       "  --no-progress  no progress line on a terminal\n",
			       export_usage);
			return EXIT_OK;
		default:
			return getopt_error(export_usage, c, argv);
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
	if (load_input(&m, argv[optind])) {
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
