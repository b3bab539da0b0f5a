/*
 * cmd_diff.c - `gpuscope diff BEFORE AFTER` and `diff A1 A2 -- B1 B2`:
 * the optimisation-verification table.
 */
#include "captures.h"
#include "commands.h"
#include "../diff/diff.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
	"gpuscope diff [--step RANGE] [--start T] [--end T] [--capture K] [--noise PCT] [--format text|json|csv|html] [-o FILE] "
	"BEFORE AFTER | BEFORE... -- AFTER...";

enum { O_FORCE = 256, O_START, O_END, O_CAPTURE };

static const struct cli_opt diff_opts[] = {
	{ "step", 's', 's', ARG_REQUIRED, "RANGE", "the NVTX range that marks a step (per-step figures)",
	  NULL, 0 },
	{ "noise", 'n', 'n', ARG_REQUIRED, "PCT",
	  "changes smaller than PCT (default from the runs' spread) are noise", NULL, 0 },
	{ "format", 'f', 'f', ARG_REQUIRED, "FMT", "text (default), json, csv or html",
	  "text json csv html", 0 },
	{ "output", 'o', 'o', ARG_REQUIRED, "FILE", "write to FILE instead of standard output",
	  "<file>", 0 },
	{ "start", 0, O_START, ARG_REQUIRED, "T",
	  "compare each run from T after its start (\"1.5s\", \"200ms\"; seconds when bare)", NULL, 0 },
	{ "end", 0, O_END, ARG_REQUIRED, "T", "compare each run up to T after its start", NULL, 0 },
	{ "capture", 0, O_CAPTURE, ARG_REQUIRED, "K",
	  "compare capture K of each run (profile --on-demand, capture ranges: what changed when it slowed "
	  "down; docs/always-on.md)", NULL, 0 },
	{ "force", 0, O_FORCE, ARG_BOOL, NULL, "overwrite an existing -o FILE", NULL, 0 },
	{ "force-overwrite", 0, O_FORCE, ARG_BOOL, NULL, "nsys's name for --force", NULL, OPT_HIDDEN },
	{ "color", 0, 'C', ARG_OPTIONAL, "WHEN", "colour the verdicts: auto (default), always or never",
	  "auto always never", 0 },
	{ 0 },
};

const struct cli_cmd cli_diff = {
	.name = "diff",
	.synopsis = diff_usage,
	.summary = "compare runs before and after a change",
	.description = "Compares runs before and after a change: time per step, GPU busy, kernels, "
		       "copies and launches side by side, each change judged against the noise "
		       "(docs/diff.md).  Several runs per side give the noise from their spread.",
	.opts = diff_opts,
	.example = "gpuscope diff before.gpuscope after.gpuscope\n"
		   "gpuscope diff --step train_step a1.gpuscope a2.gpuscope -- b1.gpuscope b2.gpuscope",
	.args = "<file>",
};

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o;
	const char *format = "text", *out = NULL;
	struct run_summary before, after;
	struct diff_result r;
	int c, sep = -1, nb, na, status = EXIT_OK, nopt = argc, force = 0;
	struct opt_iter it;
	struct output_file of;

	diff_opts_init(&o);
	/* "--" splits the runs of the two sides; options come before it */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			sep = i;
			nopt = i;
			break;
		}
	}
	opt_iter_init(&it, &cli_diff, nopt, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 's': o.step = it.arg; break;
		case 'n':
			if (parse_fraction(it.arg, &o.noise) < 0)
				return usage_error(diff_usage, "bad --noise '%s' (say 5%%)", it.arg);
			break;
		case 'f': format = it.arg; break;
		case 'o': out = it.arg; break;
		case 'C':
			if (color_set_mode(it.arg) < 0)
				return usage_error(diff_usage, NULL);
			break;
		case O_FORCE: force = opt_bool(&it); break;
		case O_START:
		case O_END:
			/* a window of every run, loaded alone (issue 19, docs/cli.md) */
			if (parse_duration_ns(it.arg, c == O_START ? &o.start : &o.end, "s") < 0)
				return usage_error(diff_usage, "bad time '%s'", it.arg);
			o.windowed = 1;
			break;
		case O_CAPTURE: {
			char *e;
			unsigned long v = strtoul(it.arg, &e, 10);
			if (!*it.arg || *e || !v || v > 1000000)
				return usage_error(diff_usage, "bad capture '%s' (1, 2, ...)", it.arg);
			o.capture = (unsigned)v;
			o.keep_capture = capture_only;
			break;
		}
		default:
			return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (o.windowed && o.capture)
		return usage_error(diff_usage, "--capture and --start/--end: a capture is its own window");
	if (o.windowed && o.end && o.end <= o.start)
		return usage_error(diff_usage, "--end must be after --start");
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
	if (output_check(out, force) < 0)
		return EXIT_USAGE;
	if (run_summarize_paths(argv + optind, (size_t)nb, &o, &before) < 0)
		return EXIT_USAGE;
	if (run_summarize_paths(argv + sep, (size_t)na, &o, &after) < 0) {
		run_summary_release(&before);
		return EXIT_USAGE;
	}
	diff_compare(&before, &after, &o, &r);
	if (output_open(&of, out, force) < 0) {
		status = EXIT_USAGE;
	} else if (of.f == stdout && !strcmp(format, "text") && color_on(stdout)) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		if (!mem || diff_print(mem, format, &before, &after, &r) < 0 || fclose(mem) ||
		    print_colored(stdout, buf, len) < 0)
			status = EXIT_FAIL;
		free(buf);
	} else if (diff_print(of.f, format, &before, &after, &r) < 0) {
		/* on standard output reported by finish_stdout() */
		if (of.f != stdout)
			error("cannot write '%s': %s", out, strerror(errno ? errno : EIO));
		output_abort(&of);
		status = EXIT_FAIL;
	} else if (output_commit(&of) < 0) {
		status = EXIT_FAIL;
	}
	diff_result_release(&r);
	run_summary_release(&before);
	run_summary_release(&after);
	return status;
}
