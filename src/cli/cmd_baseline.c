/*
 * cmd_baseline.c - `gpuscope baseline save NAME REPORT...`, `list`, `show NAME`.
 */
#include "commands.h"
#include "../diff/diff.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char baseline_usage[] =
	"gpuscope baseline [--dir DIR] save [--step RANGE] [--force] NAME REPORT... | list | show NAME";

static const struct cli_opt baseline_opts[] = {
	{ "dir", 'd', 'd', ARG_REQUIRED, "DIR", "where baselines are kept (default: $GPUSCOPE_BASELINE_DIR,\nelse .gpuscope-baselines)",
	  "<file>", 0 },
	{ "step", 's', 's', ARG_REQUIRED, "RANGE", "save: the NVTX range that marks a step", NULL, 0 },
	{ "force", 'f', 'f', ARG_NONE, NULL, "save: replace a baseline of that name", NULL, 0 },
	{ 0 },
};

const struct cli_cmd cli_baseline = {
	.name = "baseline",
	.synopsis = baseline_usage,
	.summary = "save, list and show baselines for check",
	.description = "Saves the summary of one or more runs under a name, for `gpuscope check` to "
		       "compare later runs with; lists and shows saved baselines.",
	.opts = baseline_opts,
	.example = "gpuscope baseline save --step train_step main run1.gpuscope run2.gpuscope\n"
		   "gpuscope baseline list",
	.args = "save list show",
};

static int do_save(const char *dir, int argc, char **argv, const char *step, int force)
{
	struct diff_opts o;
	struct run_summary all;
	char *path;
	int ret = EXIT_OK;

	if (argc < 2)
		return usage_error(baseline_usage, "save needs a NAME and at least one report");
	if (!baseline_name_ok(argv[0]))
		return usage_error(baseline_usage, "bad baseline name '%s' (letters, digits, '-', '_', '.')",
				   argv[0]);
	path = baseline_path(dir, argv[0]);
	if (!force && access(path, F_OK) == 0) {
		error("baseline '%s' already exists in '%s' (use --force to replace it)", argv[0], dir);
		free(path);
		return EXIT_USAGE;
	}
	diff_opts_init(&o);
	o.step = step;
	if (run_summarize_paths(argv + 1, (size_t)argc - 1, &o, &all) < 0) {
		ret = EXIT_USAGE;
	} else {
		free(all.source);
		all.source = xstrdup(argv[0]);
		if (baseline_mkdir(dir) < 0 || run_summary_save(&all, path) < 0)
			ret = EXIT_USAGE;
		else
			fprintf(stderr, "gpuscope: saved baseline '%s' from %d run%s in '%s'\n", argv[0],
				argc - 1, argc == 2 ? "" : "s", path);
		run_summary_release(&all);
	}
	free(path);
	return ret;
}

static int do_list(const char *dir)
{
	char **names;
	size_t n;

	if (baseline_list(dir, &names, &n) < 0)
		return EXIT_USAGE;
	if (!n)
		printf("no baselines in '%s'\n", dir);
	for (size_t i = 0; i < n; i++) {
		struct run_summary s;
		char *path = baseline_path(dir, names[i]);
		if (run_summary_load(&s, path) == 0) {
			const struct run_metric *m = run_metric_find(&s, "step_time_s");
			char v[48];
			printf("%-30s %2d run%s  %s\n", names[i], s.runs, s.runs == 1 ? " " : "s",
			       m ? metric_fmt(v, sizeof(v), m, m->value) : "-");
			run_summary_release(&s);
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return EXIT_OK;
}

static int do_show(const char *dir, const char *name)
{
	struct run_summary s;
	char *path = baseline_path(dir, name);
	char v[64];

	if (run_summary_load(&s, path) < 0) {
		free(path);
		return EXIT_USAGE;
	}
	printf("baseline %s: %d run%s, steps from %s\n", name, s.runs, s.runs == 1 ? "" : "s",
	       s.step_source ? s.step_source : "-");
	for (size_t i = 0; i < s.n; i++)
		printf("  %-44.44s %s\n", s.m[i].label, metric_fmt(v, sizeof(v), &s.m[i], s.m[i].value));
	for (size_t i = 0; i < s.nf; i++)
		printf("  finding %s: %.0f%% %s\n", s.f[i].id, s.f[i].gain * 100, s.f[i].title);
	run_summary_release(&s);
	free(path);
	return EXIT_OK;
}

struct baseline_args {
	const char *dir, *step;
	int force;
	char **args;    /* the action and its arguments */
	int nargs;
};

int cmd_baseline_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct baseline_args *a = xcalloc(1, sizeof(*a));
	struct opt_iter it;
	int c;

	s->priv = a;
	s->priv_free = free;
	opt_iter_init(&it, &cli_baseline, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'd': a->dir = it.arg; break;
		case 's': a->step = it.arg; break;
		case 'f': a->force = 1; break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (it.ind >= argc)
		return usage_error(baseline_usage, "no action given");
	a->args = argv + it.ind;
	a->nargs = argc - it.ind;
	a->dir = baseline_dir(a->dir);
	return CMD_RUN;
}

int cmd_baseline_run(struct cmd_setup *s)
{
	const struct baseline_args *a = s->priv;
	const char *verb = a->args[0];

	if (!strcmp(verb, "save"))
		return do_save(a->dir, a->nargs - 1, a->args + 1, a->step, a->force);
	if (!strcmp(verb, "list")) {
		if (a->nargs != 1)
			return usage_error(baseline_usage, "list takes no arguments");
		return do_list(a->dir);
	}
	if (!strcmp(verb, "show")) {
		if (a->nargs != 2)
			return usage_error(baseline_usage, "show takes one NAME");
		return do_show(a->dir, a->args[1]);
	}
	return usage_error(baseline_usage, "unknown action '%s'", verb);
}
