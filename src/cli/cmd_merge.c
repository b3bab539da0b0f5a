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

struct merge_args {
	const char *out;
	int force, want_align;
	struct rank_merge_opts ro;
	char **in;        /* the inputs */
	int nin;
};

int cmd_merge_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct merge_args *a = xcalloc(1, sizeof(*a));
	struct opt_iter it;
	int c;

	s->priv = a;
	s->priv_free = free;
	opt_iter_init(&it, &cli_merge, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'o': a->out = it.arg; break;
		case 'f': a->force = opt_bool(&it); break;
		case 'A': a->want_align = 1; break;
		case 'R': a->ro.as_ranks = 1; a->want_align = 1; break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (!a->out)
		return usage_error(merge_usage, "no output given (-o OUT)");
	if (it.ind >= argc)
		return usage_error(merge_usage, "no reports given");
	a->in = argv + it.ind;
	a->nin = argc - it.ind;
	return CMD_RUN;
}

int cmd_merge_run(struct cmd_setup *s)
{
	const struct merge_args *a = s->priv;
	const char *out = a->out;
	const char *const *in = (const char *const *)a->in;
	size_t n = (size_t)a->nin;
	int force = a->force, ret, aligned;
	const struct rank_merge_opts ro = a->ro;
	struct stat st;
	char *path;

	aligned = a->want_align || rank_merge_wanted(in, n);
	path = strstr(out, TRACE_FILE_EXT) ? xstrdup(out) : xstrfmt("%s%s", out, TRACE_FILE_EXT);
	if (force && !lstat(path, &st)) {
		/*
		 * Replace the existing report only once the new one is whole: a
		 * failed write (a full disk) must not lose it, and an input may be
		 * the output itself.  lstat(): a link, dangling or not, is
		 * replaced by the rename, never written through.
		 */
		char *tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
		ret = merge_to(tmp, in, n, 1, &ro, aligned);
		if (!ret && rename(tmp, path) < 0) {
			ret = error("cannot write '%s': %s", path, strerror(errno));
			unlink(tmp);
		}
		free(tmp);
	} else {
		ret = merge_to(path, in, n, !force, &ro, aligned);
	}
	if (!ret)
		fprintf(stderr, "gpuscope: wrote '%s' from %d %s\n", path, a->nin,
			aligned ? "inputs, clocks aligned (see `gpuscope info`)" : "reports");
	free(path);
	return ret ? EXIT_USAGE : EXIT_OK;
}
