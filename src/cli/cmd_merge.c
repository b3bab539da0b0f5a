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

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "align", no_argument, NULL, 'A' },
		{ "as-ranks", no_argument, NULL, 'R' }, /* benches: rank = input index */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	char *path;
	int force = 0, c, ret, aligned, want_align = 0;
	struct rank_merge_opts ro = { 0 };

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = 1; break;
		case 'A': want_align = 1; break;
		case 'R': ro.as_ranks = 1; want_align = 1; break;
		case 'h': printf("usage: %s\n", merge_usage); return EXIT_OK;
		default: return getopt_error(merge_usage, c, argv);
		}
	}
	if (!out)
		return usage_error(merge_usage, "no output given (-o OUT)");
	if (optind >= argc)
		return usage_error(merge_usage, "no reports given");
	aligned = want_align ||
		  rank_merge_wanted((const char *const *)argv + optind, (size_t)(argc - optind));
	path = strstr(out, TRACE_FILE_EXT) ? xstrdup(out) : xstrfmt("%s%s", out, TRACE_FILE_EXT);
	if (force && !access(path, F_OK)) {
		/*
		 * Replace the existing report only once the new one is whole: a
		 * failed write (a full disk) must not lose it, and an input may be
		 * the output itself.
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
