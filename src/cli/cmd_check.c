/*
 * cmd_check.c - `gpuscope check --baseline BASE REPORT...`: a regression gate.
 * Exit 0 within bounds, 1 on a regression, 2 on bad input.
 */
#include "commands.h"
#include "../diff/diff.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char check_usage[] =
	"gpuscope check --baseline BASE [--max-regress PCT] [--metric M[,M...]] [--step RANGE] "
	"[--dir DIR] [--format text|json] REPORT...";

static const struct cli_opt check_opts[] = {
	{ "baseline", 'b', 'b', ARG_REQUIRED, "BASE", "the baseline to compare with (see baseline save)",
	  NULL, 0 },
	{ "max-regress", 'm', 'm', ARG_REQUIRED, "PCT", "the largest regression that passes (default 5%)",
	  NULL, 0 },
	{ "metric", 'M', 'M', ARG_REQUIRED, "M[,M...]",
	  "what is judged (default step_time; wall, busy, idle, launches,\nsyncs, kernels, exposed_comm)",
	  "step_time wall busy idle launches syncs kernels exposed_comm", 0 },
	{ "step", 's', 's', ARG_REQUIRED, "RANGE", "the NVTX range that marks a step", NULL, 0 },
	{ "dir", 'd', 'd', ARG_REQUIRED, "DIR", "where baselines are kept", "<file>", 0 },
	{ "format", 'f', 'f', ARG_REQUIRED, "FMT", "text (default) or json", "text json", OPT_CHOICE },
	CMD_OPT_COLOR,
	{ 0 },
};

const struct cli_cmd cli_check = {
	.name = "check",
	.synopsis = check_usage,
	.summary = "fail when a run regresses against a baseline",
	.description = "A regression gate for CI: compares runs with a saved baseline and exits 1 "
		       "when a metric regressed by more than --max-regress or the run has a fatal finding "
		       "(an out-of-memory, a fast leak) that the baseline had not, 0 within bounds, 2 on "
		       "bad input.",
	.opts = check_opts,
	.example = "gpuscope check --baseline main --max-regress 3% run.gpuscope",
	.args = "<file>",
};

/*
 * By default a run is judged by its time per step (its wall time when no
 * steps are known).  GPU busy is no default: a faster kernel lowers it.
 */
static const char *const default_metrics[] = { "step_time_s", NULL };

static const char *metric_alias(const char *m)
{
	static const struct { const char *alias, *key; } aliases[] = {
		{ "step_time", "step_time_s" }, { "step", "step_time_s" }, { "wall", "wall_s" },
		{ "wall_time", "wall_s" }, { "busy", "gpu_busy" }, { "idle", "gpu_idle" },
		{ "launches", "launches_per_step" }, { "syncs", "syncs_per_step" },
		{ "kernels", "kernels_per_step" }, { "exposed_comm", "exposed_comm_per_step_s" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(m, aliases[i].alias))
			return aliases[i].key;
	return m;
}

/* Does @path hold a saved baseline (its first line)? */
static int is_baseline_file(const char *path)
{
	char head[20] = { 0 };
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	return n >= 17 && !strncmp(head, "gpuscope-baseline", 17);
}

static int load_base(const char *base, const char *dir, const struct diff_opts *o,
		     struct run_summary *s)
{
	char *path;
	int ret;

	if (access(base, F_OK) == 0) {
		if (is_baseline_file(base))
			return run_summary_load(s, base);
		return run_summarize_path(base, o, s);
	}
	if (!baseline_name_ok(base))
		return error("baseline '%s' not found", base);
	path = baseline_path(dir, base);
	if (access(path, F_OK) != 0) {
		error("baseline '%s' not found (no file of that name, nor '%s')", base, path);
		free(path);
		return -1;
	}
	ret = run_summary_load(s, path);
	free(path);
	return ret;
}

/* Regressed when the median moved the wrong way by more than @max (see docs/diff.md). */
static int regressed(const struct run_metric *b, const struct run_metric *a, double max, double *by)
{
	if (b->kind == MK_FRACTION) {
		*by = (a->value - b->value) * b->dir; /* points; negative = worse */
		return -*by > max;
	}
	if (b->value == 0) {
		*by = 0;
		return 0;
	}
	*by = (a->value - b->value) / fabs(b->value) * b->dir;
	return -*by > max;
}

struct check_args {
	const char *base, *dir, *format;
	const char *keys[64];
	size_t nkeys;
	int explicit_metrics;
	double max;
	struct diff_opts o;
	char **reports;
	size_t nreports;
};

int cmd_check_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct check_args *a = xcalloc(1, sizeof(*a));
	char *metrics_arg = NULL;
	struct opt_iter it;
	int c;

	s->priv = a;
	s->priv_free = free;
	a->format = "text";
	a->max = 0.05;
	diff_opts_init(&a->o);
	opt_iter_init(&it, &cli_check, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'b': a->base = it.arg; break;
		case 'm':
			if (parse_fraction(it.arg, &a->max) < 0)
				return usage_error(check_usage, "bad --max-regress '%s' (say 5%%)", it.arg);
			break;
		case 'M': metrics_arg = it.arg; break;
		case 's': a->o.step = it.arg; break;
		case 'd': a->dir = it.arg; break;
		case 'f': a->format = it.arg; break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (!a->base)
		return usage_error(check_usage, "no --baseline given");
	if (it.ind >= argc)
		return usage_error(check_usage, "no report given");
	a->reports = argv + it.ind;
	a->nreports = (size_t)(argc - it.ind);
	a->dir = baseline_dir(a->dir);
	if (metrics_arg) {
		char *p = metrics_arg;
		a->explicit_metrics = 1;
		while (p && *p && a->nkeys < ARRAY_SIZE(a->keys)) {
			char *comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			a->keys[a->nkeys++] = metric_alias(p);
			p = comma ? comma + 1 : NULL;
		}
	} else {
		for (size_t i = 0; default_metrics[i]; i++)
			a->keys[a->nkeys++] = default_metrics[i];
	}
	return CMD_RUN;
}

int cmd_check_run(struct cmd_setup *s)
{
	struct check_args *args = s->priv;
	const char *base = args->base, *dir = args->dir, *format = args->format;
	const char **keys = args->keys;
	size_t nkeys = args->nkeys;
	int explicit_metrics = args->explicit_metrics, status = EXIT_OK, fatal_new = 0;
	double max = args->max;
	struct diff_opts o = args->o;
	struct run_summary before, after;

	if (load_base(base, baseline_dir(dir), &o, &before) < 0)
		return EXIT_USAGE;
	if (run_summarize_paths(args->reports, args->nreports, &o, &after) < 0) {
		run_summary_release(&before);
		return EXIT_USAGE;
	}

	if (!strcmp(format, "json"))
		printf("{\"max_regress\":%.6f,\"metrics\":[", max);
	else
		printf("%-34s %14s %14s %10s  %s\n", "metric", "baseline", "now", "change", "result");
	for (size_t i = 0, shown = 0; i < nkeys; i++) {
		const struct run_metric *b, *a;

		if (!explicit_metrics && !strcmp(keys[i], "step_time_s") &&
		    (!run_metric_find(&before, keys[i]) || !run_metric_find(&after, keys[i])))
			keys[i] = "wall_s"; /* no steps on one side: judge the whole run */
		b = run_metric_find(&before, keys[i]);
		a = run_metric_find(&after, keys[i]);
		char v1[48], v2[48], ch[32];
		double by = 0;
		int bad;

		if (!b || !a) {
			if (explicit_metrics) {
				error("metric '%s' is missing in the %s", keys[i], !b ? "baseline" : "report");
				status = EXIT_USAGE;
			}
			continue;
		}
		bad = b->dir != DIR_NEUTRAL && regressed(b, a, max, &by);
		if (bad && status == EXIT_OK)
			status = EXIT_FAIL;
		if (b->kind == MK_FRACTION)
			snprintf(ch, sizeof(ch), "%+.1f pt", (a->value - b->value) * 100);
		else
			snprintf(ch, sizeof(ch), "%+.1f%%",
				 b->value ? (a->value - b->value) / fabs(b->value) * 100 : 0.0);
		if (!strcmp(format, "json"))
			printf("%s{\"key\":\"%s\",\"baseline\":%.9g,\"now\":%.9g,\"regressed\":%s}",
			       shown ? "," : "", keys[i], b->value, a->value, bad ? "true" : "false");
		else
			printf("%-34.34s %14s %14s %10s  %s%s%s\n", b->label,
			       metric_fmt(v1, sizeof(v1), b, b->value), metric_fmt(v2, sizeof(v2), a, a->value),
			       ch, color_for_word(stdout, bad ? "REGRESSED" : "ok"), bad ? "REGRESSED" : "ok",
			       color(stdout, COLOR_RESET));
		shown++;
	}
	/*
	 * A fatal finding (the run failed or is on course to: an out-of-memory,
	 * a leak that fills the device within a day) that the baseline did not
	 * have fails the gate whatever the metrics say: a run that now dies of
	 * memory is a regression even when its steps are as fast.
	 */
	if (!strcmp(format, "json"))
		printf("],\"new_fatal\":[");
	for (size_t i = 0, nf = 0; i < after.nf; i++) {
		const struct run_finding *a = &after.f[i];
		int had = 0;
		if (!(a->flags & FINDING_FATAL))
			continue;
		for (size_t j = 0; j < before.nf; j++)
			had |= !strcmp(before.f[j].id, a->id) && (before.f[j].flags & FINDING_FATAL);
		if (had)
			continue;
		if (!strcmp(format, "json")) {
			printf("%s\"%s\"", nf ? "," : "", a->id);
		} else {
			if (!nf)
				putchar('\n');
			printf("new fatal finding: %s [%s]  %sREGRESSED%s\n", a->title, a->id,
			       color_for_word(stdout, "REGRESSED"), color(stdout, COLOR_RESET));
		}
		nf++;
		fatal_new++;
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
	if (!strcmp(format, "json"))
		printf("],\"regressed\":%s}\n", status == EXIT_FAIL ? "true" : "false");
	else if (status == EXIT_FAIL && fatal_new)
		printf("check failed: %d new fatal finding%s against '%s'\n", fatal_new, fatal_new == 1 ? "" : "s",
		       base);
	else if (status == EXIT_FAIL)
		printf("check failed: a metric regressed by more than %.1f%% against '%s'\n", max * 100,
		       base);
	else if (status == EXIT_OK)
		printf("check passed: within %.1f%% of '%s'\n", max * 100, base);
	run_summary_release(&before);
	run_summary_release(&after);
	return status;
}
