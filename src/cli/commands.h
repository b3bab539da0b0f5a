/*
 * commands.h - the gpuscope subcommands, one file each (cmd_<name>.c).
 *
 * To add a command:
 *  1. write src/cli/cmd_<name>.c with `int cmd_<name>(int argc, char **argv)`
 *     (argv[0] is the command name; return the process exit status) and its
 *     option table `const struct cli_cmd cli_<name>` (options.h), which
 *     parses, prints --help and makes the man page and the completion;
 *  2. declare both below and add a row to commands[] in gpuscope.c;
 *  3. document it in docs/cli.md (every .c file in src/cli is built).
 */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#include "options.h"

struct model;

enum cmd_flags {
	CMD_HIDDEN = 1u << 0, /* not listed by `gpuscope help` */
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const struct cli_cmd *spec;   /* options, help, summary */
};

int cmd_profile(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_health(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_capture(int argc, char **argv);

extern const struct cli_cmd cli_profile;
extern const struct cli_cmd cli_info;
extern const struct cli_cmd cli_dump;
extern const struct cli_cmd cli_stats;
extern const struct cli_cmd cli_analyze;
extern const struct cli_cmd cli_diff;
extern const struct cli_cmd cli_check;
extern const struct cli_cmd cli_baseline;
extern const struct cli_cmd cli_export;
extern const struct cli_cmd cli_monitor;
extern const struct cli_cmd cli_health;
extern const struct cli_cmd cli_merge;
extern const struct cli_cmd cli_topo;
extern const struct cli_cmd cli_capture;

/*
 * Exit statuses shared by commands: 0 success, 1 a finding/regression/failed
 * check where the command defines one, 2 bad usage or bad input.
 */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Print "usage: ..." for @cmd on stderr and return EXIT_USAGE. */
int usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Print on stderr the warnings a loaded report carries about the file itself
 * (damaged, truncated, unknown chunks), for commands whose output does not
 * show the model's warnings.
 */
void report_damage(const struct model *m);

/*
 * Whether an output file @path can be created, checked before any work:
 * its directory exists and is writable.  0, or -1 after "cannot create
 * 'PATH': REASON" (commands then exit EXIT_USAGE, as for any bad argument;
 * a write that fails later, such as a full disk, is EXIT_FAIL).  "-" is
 * standard output: 0.
 */
int output_creatable(const char *path);


/*
 * Colour (color.c): print_colored() writes @buf to @f with the severities
 * and verdicts of analyze's and diff's text coloured (call it only when
 * color_on(f)); color_for_word() is the colour of one verdict word ("" for
 * none, or when colour is off).  0 or -1 on a write error.
 */
int print_colored(FILE *f, const char *buf, size_t len);
const char *color_for_word(FILE *f, const char *word);

#endif
