/*
 * gpuscope.c - main(): command dispatch, help and version.
 */
#include "commands.h"
#include "../util/util.h"
#include "../trace/trace.h"
#include "../model/model.h"

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
	{ "profile", cmd_profile, 0, &cli_profile },
	{ "capture", cmd_capture, 0, &cli_capture },
	{ "info", cmd_info, 0, &cli_info },
	{ "dump", cmd_dump, 0, &cli_dump },
	{ "stats", cmd_stats, 0, &cli_stats },
	{ "analyze", cmd_analyze, 0, &cli_analyze },
	{ "diff", cmd_diff, 0, &cli_diff },
	{ "check", cmd_check, 0, &cli_check },
	{ "baseline", cmd_baseline, 0, &cli_baseline },
	{ "export", cmd_export, 0, &cli_export },
	{ "monitor", cmd_monitor, 0, &cli_monitor },
	{ "health", cmd_health, 0, &cli_health },
	{ "merge", cmd_merge, 0, &cli_merge },
	{ "topo", cmd_topo, 0, &cli_topo },
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
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(commands[i].name, name)) {
			int status = commands[i].fn(argc - 1, argv + 1);
			if (finish_stdout() && status == EXIT_OK)
				status = EXIT_FAIL;
			return status;
		}
	}
	return unknown_command(name);
}
