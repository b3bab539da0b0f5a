/*
 * gpuscope.c - main(): command dispatch, help and version.
 */
#include "commands.h"
#include "../util/util.h"
#include "../trace/trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef GPUSCOPE_VERSION
#define GPUSCOPE_VERSION "0.1.0"
#endif

static const struct command commands[] = {
	{ "profile", cmd_profile, 0, "run a program and record its CPU threads and GPUs" },
	{ "info", cmd_info, 0, "what a report holds: processes, threads, counts, drops, warnings" },
	{ "dump", cmd_dump, 0, "print a report's events, one per line" },
	{ "stats", cmd_stats, 0, "summary reports as nsys stats prints them" },
	{ "analyze", cmd_analyze, 0, "diagnose what holds the GPU back, with estimated gains" },
	{ "diff", cmd_diff, 0, "compare runs before and after a change" },
	{ "check", cmd_check, 0, "fail when a run regresses against a baseline" },
	{ "baseline", cmd_baseline, 0, "save, list and show baselines for check" },
	{ "export", cmd_export, 0, "write Perfetto, Chrome, SQLite, CSV/JSON or HTML" },
	{ "monitor", cmd_monitor, 0, "live GPU metrics, Prometheus endpoint and alerts" },
	{ "health", cmd_health, 0, "check GPUs for throttling, PCIe, ECC and driver problems" },
	{ "merge", cmd_merge, 0, "put several reports (processes, ranks) into one" },
};

int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		char msg[1024];
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		error("%s", msg);
	}
	fprintf(stderr, "usage: %s\n", usage);
	return EXIT_USAGE;
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: gpuscope <command> [options] [args]\n\n"
		   "gpuscope records what a program does on its CPU threads and GPUs and tells\n"
		   "you what holds it back.  Commands:\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!(commands[i].flags & CMD_HIDDEN))
			fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'gpuscope <command> --help' shows a command's options.\n");
}

int main(int argc, char **argv)
{
	const char *name;

	set_error_prefix("gpuscope");
	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		print_help(stdout);
		return finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("gpuscope %s (report format %d)\n", GPUSCOPE_VERSION, TRACE_VERSION);
		return finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(commands[i].name, name)) {
			int status = commands[i].fn(argc - 1, argv + 1);
			if (finish_stdout() && status == EXIT_OK)
				status = EXIT_FAIL;
			return status;
		}
	}
	error("unknown command '%s' (see 'gpuscope help')", name);
	return EXIT_USAGE;
}
