/*
 * cmd_diff.c - `gpuscope diff BEFORE AFTER` and `diff A1 A2 -- B1 B2`:
 * the optimisation-verification table.
 */
#include "commands.h"
#include "../diff/diff.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
	"gpuscope diff [--step RANGE] [--noise PCT] [--format text|json|csv|html] [-o FILE] "
	"BEFORE AFTER | BEFORE... -- AFTER...";

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "step", required_argument, NULL, 's' },
		{ "noise", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff_opts o;
	const char *format = "text", *out = NULL;
	struct run_summary before, after;
	struct diff_result r;
	int c, sep = -1, nb, na, status = EXIT_OK, nopt = argc;
	FILE *f = stdout;

	diff_opts_init(&o);
	/* "--" splits the runs of the two sides; options come before it */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			sep = i;
			nopt = i;
			break;
		}
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(nopt, argv, ":s:n:f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': o.step = optarg; break;
		case 'n':
			if (parse_fraction(optarg, &o.noise) < 0)
				return usage_error(diff_usage, "bad --noise '%s' (say 5%%)", optarg);
			break;
		case 'f': format = optarg; break;
		case 'o': out = optarg; break;
		case 'h': printf("usage: %s\n", diff_usage); return EXIT_OK;
		default: return getopt_error(diff_usage, c, argv);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv") &&
	    strcmp(format, "html"))
		return usage_error(diff_usage, "unknown format '%s'", format);
	if (sep < 0) {
		if (argc - optind != 2)
			return usage_error(diff_usage, "give BEFORE and AFTER, or BEFORE... -- AFTER...");
		sep = optind + 1;
		nb = 1;
		na = 1;
	} else {
		nb = sep - optind;
		na = argc - sep - 1;
		if (nb < 1 || na < 1)
			return usage_error(diff_usage, "each side of '--' needs at least one run");
		sep++;
	}
	if (run_summarize_paths(argv + optind, (size_t)nb, &o, &before) < 0)
		return EXIT_USAGE;
	if (run_summarize_paths(argv + sep, (size_t)na, &o, &after) < 0) {
		run_summary_release(&before);
		return EXIT_USAGE;
	}
	diff_compare(&before, &after, &o, &r);
	if (out) {
		f = fopen(out, "w");
		if (!f) {
			error("cannot create '%s': %s", out, strerror(errno));
			status = EXIT_USAGE;
		}
	}
	if (f) {
		if (diff_print(f, format, &before, &after, &r) < 0 && f == stdout)
			status = EXIT_FAIL; /* reported by finish_stdout() */
		if (f != stdout && close_checked(f, out) < 0)
			status = EXIT_FAIL;
		if (f != stdout && status != EXIT_OK)
			remove_partial_output(out);
	}
	diff_result_release(&r);
	run_summary_release(&before);
	run_summary_release(&after);
	return status;
}
