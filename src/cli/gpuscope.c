/*
 * gpuscope.c - main(): command dispatch, help and version.
 */
#include "commands.h"
#include "../util/util.h"
#include "../trace/trace.h"
#include "../model/model.h"
#include "../nvml/nvml.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GPUSCOPE_VERSION
#define GPUSCOPE_VERSION "0.1.0"
#endif

static const struct command commands[] = {
	{ "profile", cmd_profile, 0, &cli_profile, NULL, NULL },
	{ "capture", cmd_capture, 0, &cli_capture, NULL, NULL },
	{ "info", NULL, CMD_NEED_INPUT | CMD_PROGRESS, &cli_info, cmd_info_parse, cmd_info_run },
	{ "dump", cmd_dump, 0, &cli_dump, NULL, NULL },
	{ "stats", NULL, CMD_OPENS_OUTPUT | CMD_NEED_INPUT | CMD_PROGRESS, &cli_stats, cmd_stats_parse,
	  cmd_stats_run },
	{ "analyze", cmd_analyze, 0, &cli_analyze, NULL, NULL },
	{ "diff", cmd_diff, 0, &cli_diff, NULL, NULL },
	{ "check", NULL, 0, &cli_check, cmd_check_parse, cmd_check_run },
	{ "baseline", NULL, 0, &cli_baseline, cmd_baseline_parse, cmd_baseline_run },
	{ "export", cmd_export, 0, &cli_export, NULL, NULL },
	{ "monitor", NULL, CMD_NEED_NVML, &cli_monitor, cmd_monitor_parse, cmd_monitor_run },
	{ "health", NULL, CMD_NEED_NVML, &cli_health, cmd_health_parse, cmd_health_run },
	{ "merge", NULL, 0, &cli_merge, cmd_merge_parse, cmd_merge_run },
	{ "topo", NULL, CMD_NEED_NVML, &cli_topo, cmd_topo_parse, cmd_topo_run },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* The listed commands' option tables, for the man pages and the completion. */
static size_t listed_specs(const struct cli_cmd **out)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			out[n++] = commands[i].spec;
	return n;
}

static int unknown_command(const char *name)
{
	const char *names[ARRAY_SIZE(commands) + 3];
	const char *near;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			names[n++] = commands[i].name;
	names[n++] = "help";
	names[n++] = "version";
	names[n] = NULL;
	near = opt_nearest(name, names);
	if (near)
		error("unknown command '%s' (did you mean '%s'?)", name, near);
	else
		error("unknown command '%s' (see 'gpuscope help')", name);
	return EXIT_USAGE;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return error("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

/* One generated file: @what(f, @spec or the lists) written to @path. */
static int gen_file(const char *path, const struct cli_cmd *spec, const char *shell,
		    const struct cli_cmd *const *specs, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return error("cannot create '%s': %s", path, strerror(errno));
	if (shell)
		opt_print_completion(f, shell, specs, n);
	else if (spec)
		opt_print_man(f, spec);
	else
		opt_print_man_index(f, specs, n);
	return close_checked(f, path);
}

/* `gpuscope __gen DIR`: DIR/man1/gpuscope*.1 and DIR/completion/{gpuscope,_gpuscope} */
static int generate_all(const char *dir, const struct cli_cmd *const *specs, size_t n)
{
	char *man = xstrfmt("%s/man1", dir), *comp = xstrfmt("%s/completion", dir), *p;
	int ret = 0;

	if (make_dir(dir) < 0 || make_dir(man) < 0 || make_dir(comp) < 0)
		ret = -1;
	for (size_t i = 0; !ret && i <= n; i++) {
		p = i < n ? xstrfmt("%s/gpuscope-%s.1", man, specs[i]->name)
			  : xstrfmt("%s/gpuscope.1", man);
		ret = gen_file(p, i < n ? specs[i] : NULL, NULL, specs, n);
		free(p);
	}
	if (!ret) {
		p = xstrfmt("%s/gpuscope", comp);
		ret = gen_file(p, NULL, "bash", specs, n);
		free(p);
	}
	if (!ret) {
		p = xstrfmt("%s/_gpuscope", comp);
		ret = gen_file(p, NULL, "zsh", specs, n);
		free(p);
	}
	free(man);
	free(comp);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

/*
 * The hidden commands that make the man pages and the completion from the
 * option tables: `gpuscope __man [CMD]` (gpuscope(1) without CMD),
 * `gpuscope __complete bash|zsh`, and `gpuscope __gen DIR` (all of them,
 * run by the build: cmake/install.cmake).
 */
static int generate(int argc, char **argv)
{
	const struct cli_cmd *specs[ARRAY_SIZE(commands)];
	size_t n = listed_specs(specs);

	if (!strcmp(argv[1], "__gen")) {
		if (argc != 3) {
			error("usage: gpuscope __gen DIR");
			return EXIT_USAGE;
		}
		return generate_all(argv[2], specs, n);
	}

	if (!strcmp(argv[1], "__man")) {
		const struct command *c;
		if (argc < 3 || !strcmp(argv[2], "gpuscope")) {
			opt_print_man_index(stdout, specs, n);
			return EXIT_OK;
		}
		if (!(c = find_command(argv[2])))
			return unknown_command(argv[2]);
		opt_print_man(stdout, c->spec);
		return EXIT_OK;
	}
	if (argc < 3) {
		error("usage: gpuscope __complete bash|zsh");
		return EXIT_USAGE;
	}
	return opt_print_completion(stdout, argv[2], specs, n) < 0 ? EXIT_USAGE : EXIT_OK;
}

int usage_error(const char *usage, const char *fmt, ...)
{
	const char *nl = strchr(usage, '\n');
	va_list ap;

	if (fmt) {
		char msg[1024];
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		error("%s", msg);
	}
	/*
	 * One usage line after the error: a usage of several lines is cut at
	 * its first and points at --help, which prints it whole.
	 */
	if (nl) {
		const char *sp = strchr(usage, ' ');
		int cmd_len = sp ? (int)strcspn(sp + 1, " \n") + (int)(sp + 1 - usage) : (int)(nl - usage);
		fprintf(stderr, "usage: %.*s ... (see '%.*s --help')\n", (int)(nl - usage), usage,
			cmd_len, usage);
	} else {
		fprintf(stderr, "usage: %s\n", usage);
	}
	return EXIT_USAGE;
}

void report_damage(const struct model *m)
{
	/*
	 * model_load_report() words its warnings about the file itself
	 * (damaged, malformed entries, unknown chunk types) "report '<path>'...";
	 * the importers' notes about what a trace lacks are left to info,
	 * stats and analyze, which show every warning.
	 */
	for (size_t i = 0; i < m->nr_warnings; i++)
		if (!strncmp(m->warnings[i], "report '", 8))
			warning("%s", m->warnings[i]);
}

int output_creatable(const char *path)
{
	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return error("cannot create '%s': %s", path, strerror(EISDIR));
	return output_dir_writable(path);
}

int cmd_common_opt(struct cmd_setup *s, const struct opt_iter *it, int c)
{
	const char *usage = it->cmd->synopsis;

	switch (c) {
	case CMD_O_COLOR:
		return color_set_mode(it->arg) < 0 ? usage_error(usage, NULL) : CMD_RUN;
	case CMD_O_RANK: {
		/* one rank of a distributed run alone (docs/distributed.md) */
		char *e;
		long r = strtol(it->arg, &e, 10);
		if (*e || !*it->arg || r < 0 || r > INT32_MAX)
			return usage_error(usage, "bad rank '%s'", it->arg);
		s->rank = (int)r;
		return CMD_RUN;
	}
	case CMD_O_NO_PROGRESS:
		s->progress = 0;
		return CMD_RUN;
	case CMD_O_REPLAY:
		s->replay = it->arg;
		return CMD_RUN;
	case OPT_HELP:
		return EXIT_OK;
	default:
		return EXIT_USAGE;  /* OPT_BAD: opt_next() said why */
	}
}

/* The setup of @s->cmd's flags (commands.h), in their order; 0 or -1 (said why). */
static int setup(struct cmd_setup *s)
{
	unsigned flags = s->cmd->flags;

	if ((flags & CMD_OPENS_OUTPUT) && output_check(s->output, s->force) < 0)
		return -1;
	if (flags & CMD_NEED_INPUT) {
		struct progress p;
		char *what = NULL;
		int ret;

		/* a progress line while a big input loads, on a terminal */
		if (flags & CMD_PROGRESS) {
			what = xstrfmt("gpuscope %s: reading", s->cmd->name);
			progress_init(&p, s->progress, what, 0);
			p.unit = NULL;
			s->load.progress = progress_cb;
			s->load.progress_ctx = &p;
		}
		ret = load_input_opts(&s->m, s->input, &s->load);
		if (flags & CMD_PROGRESS) {
			progress_end(&p);
			s->load.progress = NULL;
			s->load.progress_ctx = NULL;
		}
		free(what);
		if (ret == 0 && s->rank >= 0)
			ret = model_keep_rank(&s->m, s->rank);
		if (ret < 0)
			return -1;
	}
	if (flags & CMD_NEED_NVML) {
		char why[256];
		s->nvml = nvml_open(s->replay, why, sizeof(why));
		if (!s->nvml)
			return error("%s", why);
	}
	if ((flags & CMD_OPENS_OUTPUT) && output_open(&s->out, s->output, s->force) < 0)
		return -1;
	return 0;
}

/* After run(): the output moved into place when @status is EXIT_OK (else removed); the rest freed. */
static int teardown(struct cmd_setup *s, int status)
{
	if (s->out.f && s->out.f != stdout) {
		if (status == EXIT_OK && output_commit(&s->out) < 0)
			status = EXIT_FAIL;
		else if (status != EXIT_OK)
			output_abort(&s->out);
	}
	if (s->nvml)
		nvml_close(s->nvml);
	model_release(&s->m);
	if (s->priv_free)
		s->priv_free(s->priv);
	return status;
}

static int run_setup(const struct command *c, int argc, char **argv)
{
	struct cmd_setup s = { .cmd = c, .rank = -1, .progress = 1 };
	int status;

	model_init(&s.m);
	status = c->parse(&s, argc, argv);
	if (status == CMD_RUN)
		status = setup(&s) < 0 ? EXIT_USAGE : c->run(&s);
	return teardown(&s, status);
}

int run_command(const char *name, int argc, char **argv)
{
	const struct command *c = find_command(name);

	if (!c)
		return unknown_command(name);
	return c->fn ? c->fn(argc, argv) : run_setup(c, argc, argv);
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: gpuscope <command> [options] [args]\n\n"
		   "gpuscope records what a program does on its CPU threads and GPUs and tells\n"
		   "you what holds it back.  Commands:\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].spec->summary);
	fprintf(f, "\n'gpuscope help <command>' (or 'gpuscope <command> --help', or\n"
		   "'man gpuscope-<command>') explains a command's options, with an example.\n");
}

int main(int argc, char **argv)
{
	const char *name;

	set_error_prefix("gpuscope");
	/*
	 * A file-size limit must be a write error the command reports (and
	 * cleans up after), as a full disk is, not a silent death that leaves a
	 * short file.  Programs gpuscope starts get the default back.
	 */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "help") && argc > 2) {
		const struct command *c = find_command(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		opt_print_help(stdout, c->spec);
		return finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		print_help(stdout);
		return finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("gpuscope %s (report format %d)\n", GPUSCOPE_VERSION, TRACE_VERSION);
		return finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (!strcmp(name, "__man") || !strcmp(name, "__complete") || !strcmp(name, "__gen")) {
		int status = generate(argc, argv);
		return finish_stdout() && status == EXIT_OK ? EXIT_FAIL : status;
	}
	if (find_command(name)) {
		int status = run_command(name, argc - 1, argv + 1);
		if (finish_stdout() && status == EXIT_OK)
			status = EXIT_FAIL;
		return status;
	}
	return unknown_command(name);
}
