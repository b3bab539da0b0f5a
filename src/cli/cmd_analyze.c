/*
 * cmd_analyze.c - `gpuscope analyze`: the ranked diagnosis (docs/rules.md).
 */
#include "commands.h"
#include "../analyze/analyze.h"
#include "../analyze/critpath.h"
#include "../import/import.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

static const char analyze_usage[] =
	"gpuscope analyze REPORT|TRACE.json|EXPORT.sqlite [--format text|json]\n"
	"                 [--start T] [--end T] [--nvtx RANGE] [--step RANGE] [--set rule.key=value ...]\n"
	"                 [--data-range PATTERN ...] [--rank N]\n"
	"                 [--critical-path [--cp-annotation NAME] [--cp-instance N]]\n"
	"       gpuscope analyze --rules    (the rules and their thresholds)\n"
	"  T is a time from the start of the report (\"1.5s\", \"200ms\"; seconds by default)\n"
	"  --data-range PATTERN: NVTX ranges (shell pattern) that mark the program's data loading";

/* "--opt=value" or "--opt value"; returns the value or NULL (usage error set). */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], name)) {
		if (*i + 1 >= argc)
			return NULL;
		return argv[++*i];
	}
	return NULL;
}

static int is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return !strcmp(arg, name) || (!strncmp(arg, name, n) && arg[n] == '=');
}

int cmd_analyze(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *start = NULL, *end = NULL;
	struct analyze_opts o;
	struct analyze_result r;
	struct model m;
	struct critpath_opts cpo = { 0 };
	int cp_on = 0, rank = -1;
	const char **set = xcalloc((size_t)argc + 1, sizeof(*set));
	const char **ranges = xcalloc((size_t)argc + 1, sizeof(*ranges));
	size_t nset = 0, nranges = 0;
	int ret;

	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (is_opt(a, "--format")) {
			if (!(v = opt_value(argc, argv, &i, "--format")))
				goto missing;
			format = v;
		} else if (is_opt(a, "--start")) {
			if (!(start = opt_value(argc, argv, &i, "--start")))
				goto missing;
		} else if (is_opt(a, "--end")) {
			if (!(end = opt_value(argc, argv, &i, "--end")))
				goto missing;
		} else if (is_opt(a, "--nvtx")) {
			if (!(o.nvtx = opt_value(argc, argv, &i, "--nvtx")))
				goto missing;
		} else if (is_opt(a, "--step")) {
			if (!(o.step = opt_value(argc, argv, &i, "--step")))
				goto missing;
		} else if (is_opt(a, "--set")) {
			if (!(v = opt_value(argc, argv, &i, "--set")))
				goto missing;
			set[nset++] = v;
		} else if (is_opt(a, "--data-range")) {
			if (!(v = opt_value(argc, argv, &i, "--data-range")))
				goto missing;
			ranges[nranges++] = v;
		} else if (is_opt(a, "--rank")) {
			/* one rank of a distributed run alone (docs/distributed.md) */
			char *e;
			if (!(v = opt_value(argc, argv, &i, "--rank")))
				goto missing;
			rank = (int)strtol(v, &e, 10);
			if (*e || rank < 0) {
				free(set);
				free(ranges);
				return usage_error(analyze_usage, "bad rank '%s'", v);
			}
		} else if (!strcmp(a, "--critical-path")) {
			/* HTA's critical path of one window (docs/critical-path.md) */
			cp_on = 1;
		} else if (is_opt(a, "--cp-annotation")) {
			if (!(cpo.annotation = opt_value(argc, argv, &i, "--cp-annotation")))
				goto missing;
		} else if (is_opt(a, "--cp-instance")) {
			if (!(v = opt_value(argc, argv, &i, "--cp-instance")))
				goto missing;
			cpo.instance = (unsigned)strtoul(v, NULL, 10);
		} else if (!strcmp(a, "--rules")) {
			free(set);
			free(ranges);
			return analyze_print_rules(stdout) < 0 ? EXIT_FAIL : EXIT_OK;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: %s\n", analyze_usage);
			free(set);
			free(ranges);
			return EXIT_OK;
		} else if (a[0] == '-' && a[1]) {
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "unknown option '%s'", a);
		} else if (path) {
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "more than one input ('%s' and '%s')", path, a);
		} else {
			path = a;
		}
	}
	if (!path) {
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "no input given");
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		free(set);
		free(ranges);
		return usage_error(analyze_usage, "unknown format '%s' (text or json)", format);
	}
	o.set = nset ? set : NULL;
	o.data_ranges = nranges ? ranges : NULL;

	model_init(&m);
	if (load_input(&m, path) < 0 || (rank >= 0 && model_keep_rank(&m, rank) < 0)) {
		model_release(&m);
		free(set);
		free(ranges);
		return EXIT_USAGE;
	}
	if (cp_on) {
		struct critpath cp;
		ret = critpath_run(&m, &cpo, &cp);
		if (!ret)
			critpath_print_summary(stdout, &m, &cp);
		critpath_release(&cp);
		model_release(&m);
		free(set);
		free(ranges);
		return ret ? EXIT_USAGE : EXIT_OK;
	}
	if (start || end) {
		uint64_t s = 0, e = 0;
		if ((start && parse_duration_ns(start, &s, "s") < 0) ||
		    (end && parse_duration_ns(end, &e, "s") < 0)) {
			model_release(&m);
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "bad time '%s'", start && parse_duration_ns(start, &s, "s") < 0
					   ? start : end);
		}
		if (end && e <= s) {
			model_release(&m);
			free(set);
			free(ranges);
			return usage_error(analyze_usage, "--end must be after --start");
		}
		o.start = m.t_min + s;
		o.end = end ? m.t_min + e : 0;
		if (!o.end && !o.start)
			o.start = m.t_min ? m.t_min : 1; /* "--start 0": the whole report from its start */
	}
	if (analyze_run(&m, &o, &r) < 0) {
		model_release(&m);
		free(set);
		free(ranges);
		return EXIT_USAGE;
	}
	if (!strcmp(format, "json"))
		ret = analyze_print_json(stdout, &m, &r);
	else
		ret = analyze_print_text(stdout, &m, &r);
	analyze_result_release(&r);
	model_release(&m);
	free(set);
	free(ranges);
	/* main() flushes and checks stdout (finish_stdout) after every command */
	if (ret < 0 || fflush(stdout) != 0)
		return EXIT_FAIL;
	return EXIT_OK;
missing:
	free(set);
	free(ranges);
	return usage_error(analyze_usage, "option '%s' needs a value", argv[argc - 1]);
}
