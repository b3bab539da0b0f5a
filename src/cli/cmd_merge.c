/*
 * cmd_merge.c - `gpuscope merge -o OUT R1 R2...`: several reports into one.
 */
#include "commands.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static const char merge_usage[] = "gpuscope merge [--force] -o OUT REPORT...";

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	char *path;
	int force = 0, c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = 1; break;
		case 'h': printf("usage: %s\n", merge_usage); return EXIT_OK;
		default: return getopt_error(merge_usage, c, argv);
		}
	}
	if (!out)
		return usage_error(merge_usage, "no output given (-o OUT)");
	if (optind >= argc)
		return usage_error(merge_usage, "no reports given");
	path = strstr(out, TRACE_FILE_EXT) ? xstrdup(out) : xstrfmt("%s%s", out, TRACE_FILE_EXT);
	if (force && !access(path, F_OK)) {
		/*
		 * Replace the existing report only once the new one is whole: a
		 * failed write (a full disk) must not lose it, and an input may be
		 * the output itself.
		 */
		char *tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
		ret = trace_merge(tmp, (const char *const *)argv + optind, (size_t)(argc - optind), 1);
		if (!ret && rename(tmp, path) < 0) {
			ret = error("cannot write '%s': %s", path, strerror(errno));
			unlink(tmp);
		}
		free(tmp);
	} else {
		ret = trace_merge(path, (const char *const *)argv + optind, (size_t)(argc - optind), !force);
	}
	if (!ret)
		fprintf(stderr, "gpuscope: wrote '%s' from %d reports\n", path, argc - optind);
	free(path);
	return ret ? EXIT_USAGE : EXIT_OK;
}
