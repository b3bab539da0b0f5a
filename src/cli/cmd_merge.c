/*
 * cmd_merge.c - `gpuscope merge -o OUT R1 R2...`: several reports into one.
 */
#include "commands.h"
#include "rank_merge.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char merge_usage[] = "gpuscope merge [--force] [--align] -o OUT REPORT|TRACE...";

/*
 * Reports of one host are joined chunk for chunk (trace_merge); Kineto and
 * nsys traces, reports of several hosts, and --align take the aligning path
 * (rank_merge.c, docs/distributed.md).
 */
static int merge_to(const char *out, const char *const *in, size_t n, int excl,
		    const struct rank_merge_opts *ro, int aligned)
{
	struct rank_merge_opts o = *ro;

	if (!aligned)
		return trace_merge(out, in, n, excl);
	o.excl = excl;
	return rank_merge(out, in, n, &o);
}

static const struct cli_opt merge_opts[] = {
	{ "output", 'o', 'o', ARG_REQUIRED, "OUT", "the merged report (.gpuscope is added when missing)",
	  "<file>", 0 },
	{ "force", 'f', 'f', ARG_BOOL, NULL, "overwrite an existing OUT", NULL, 0 },
	{ "align", 0, 'A', ARG_NONE, NULL,
	  "align the inputs' clocks (wall-clock offsets, then shared collectives; docs/distributed.md)", NULL, 0 },
	{ "as-ranks", 0, 'R', ARG_NONE, NULL, "take input K as rank K (benches)", NULL, OPT_HIDDEN },
	{ 0 },
};

const struct cli_cmd cli_merge = {
	.name = "merge",
	.synopsis = merge_usage,
	.summary = "put several reports (processes, ranks) into one",
	.description = "Puts several reports (the processes or ranks of one run, or the parts an "
		       "interrupted profile left) into one report on one time line.",
	.opts = merge_opts,
	.example = "gpuscope merge -o all rank0.gpuscope rank1.gpuscope",
	.args = "<file>",
};

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	char *path;
	struct stat st;
	int force = 0, c, ret, aligned, want_align = 0;
	struct opt_iter it;
	struct rank_merge_opts ro = { 0 };

	opt_iter_init(&it, &cli_merge, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'o': out = it.arg; break;
		case 'f': force = opt_bool(&it); break;
		case 'A': want_align = 1; break;
		case 'R': ro.as_ranks = 1; want_align = 1; break;
		default:
			return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (!out)
		return usage_error(merge_usage, "no output given (-o OUT)");
	if (optind >= argc)
		return usage_error(merge_usage, "no reports given");
	aligned = want_align ||
		  rank_merge_wanted((const char *const *)argv + optind, (size_t)(argc - optind));
	path = strstr(out, TRACE_FILE_EXT) ? xstrdup(out) : xstrfmt("%s%s", out, TRACE_FILE_EXT);
	if (force && !lstat(path, &st)) {
		/*
		 * Replace the existing report only once the new one is whole: a
		 * failed write (a full disk) must not lose it, and an input may be
		 * the output itself.  lstat(): a link, dangling or not, is
		 * replaced by the rename, never written through.
		 */
		char *tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
		ret = merge_to(tmp, (const char *const *)argv + optind, (size_t)(argc - optind), 1, &ro, aligned);
		if (!ret && rename(tmp, path) < 0) {
			ret = error("cannot write '%s': %s", path, strerror(errno));
			unlink(tmp);
		}
		free(tmp);
	} else {
		ret = merge_to(path, (const char *const *)argv + optind, (size_t)(argc - optind), !force, &ro,
			       aligned);
	}
	if (!ret)
		fprintf(stderr, "gpuscope: wrote '%s' from %d %s\n", path, argc - optind,
			aligned ? "inputs, clocks aligned (see `gpuscope info`)" : "reports");
	free(path);
	return ret ? EXIT_USAGE : EXIT_OK;
}
