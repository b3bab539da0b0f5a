/*
 * commands.h - the gpuscope subcommands, one file each (cmd_<name>.c).
 *
 * To add a command:
 *  1. write src/cli/cmd_<name>.c with its option table `const struct
 *     cli_cmd cli_<name>` (options.h), which parses, prints --help and makes
 *     the man page and the completion, and either `int cmd_<name>(int argc,
 *     char **argv)` (argv[0] is the command name; it returns the exit
 *     status) or, for the setup below, a parse and a run function;
 *  2. declare them below and add a row to commands[] in gpuscope.c, with
 *     the setup flags the command wants;
 *  3. document it in docs/cli.md (every .c file in src/cli is built).
 */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#include "options.h"
#include "../import/import.h"
#include "../util/util.h"

struct model;
struct nvml;

/*
 * A command's setup, done once by the dispatcher (main() in gpuscope.c)
 * from the flags of its row, as git's run_builtin() does for RUN_SETUP:
 * the command's parse() reads its options into a struct cmd_setup, then the
 * dispatcher does what the flags say, in this order, calls run(), and
 * undoes it all after.  An error of the setup is bad usage or bad input:
 * the command is not run and gpuscope exits EXIT_USAGE.
 *
 * There is no CMD_USE_PAGER: gpuscope has no pager.  Colour needs no flag:
 * color.c asks isatty() and NO_COLOR when a command first prints in colour,
 * and --color is one shared option (CMD_OPT_COLOR below).
 */
enum cmd_flags {
	CMD_HIDDEN = 1u << 0,       /* not listed by `gpuscope help` */
	/*
	 * s->output (-o FILE; NULL or "-" is standard output) is checked with
	 * s->force (output_check) before the input is read, opened as s->out
	 * before run(), and moved into place when run() returns EXIT_OK
	 * (else removed: never a half-written file).
	 */
	CMD_OPENS_OUTPUT = 1u << 1,
	/*
	 * s->input is loaded into s->m with s->load (load_input_opts: a sink, a
	 * window), then narrowed to rank s->rank when it is >= 0.
	 */
	CMD_NEED_INPUT = 1u << 2,
	/* with CMD_NEED_INPUT: "gpuscope NAME: reading" on a terminal while it loads, unless !s->progress */
	CMD_PROGRESS = 1u << 3,
	/* s->nvml opened: the GPUs through NVML, or s->replay (a recorded replay) */
	CMD_NEED_NVML = 1u << 4,
};

struct cmd_setup {
	const struct command *cmd;
	/* set by parse() for the setup (the dispatcher sets rank -1, progress 1 first) */
	const char *input;
	struct load_opts load;
	int rank;                   /* -1: every process */
	int progress;               /* 1 unless --no-progress */
	const char *output;         /* NULL or "-": standard output */
	int force;
	const char *replay;         /* NULL: the GPUs */
	void *priv;                 /* the command's own arguments, freed by priv_free() after all */
	void (*priv_free)(void *priv);
	/* made by the dispatcher for run() */
	struct model m;             /* CMD_NEED_INPUT */
	struct output_file out;     /* CMD_OPENS_OUTPUT: out.f, standard output or the temporary */
	struct nvml *nvml;          /* CMD_NEED_NVML */
};

/* What parse() returns to go on to the setup and run(); any other value is the exit status. */
enum { CMD_RUN = -1 };

struct command {
	const char *name;
	/* a command that does its own setup, or NULL for parse() and run() */
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const struct cli_cmd *spec;   /* options, help, summary */
	/* argv[0] is the command name; CMD_RUN, or the exit status (after --help: EXIT_OK) */
	int (*parse)(struct cmd_setup *s, int argc, char **argv);
	/* after the setup; the exit status */
	int (*run)(struct cmd_setup *s);
};

/*
 * Options that several commands share, handled in one place: a table row
 * CMD_OPT_X, and cmd_common_opt() in the command's option loop for every
 * id it does not know itself.  cmd_common_opt() returns CMD_RUN when it
 * took the option, else the exit status to end with (after the help, or
 * after a usage error opt_next() or it printed).  --replay FILE (into
 * s->replay, for CMD_NEED_NVML) has no shared row: each command words its
 * own, with the id CMD_O_REPLAY.
 */
enum { CMD_O_COLOR = 0x1000, CMD_O_RANK, CMD_O_NO_PROGRESS, CMD_O_REPLAY };
#define CMD_OPT_COLOR { "color", 0, CMD_O_COLOR, ARG_OPTIONAL, "WHEN", \
	"colour the verdicts: auto (default), always or never", "auto always never", 0 }
#define CMD_OPT_RANK { "rank", 0, CMD_O_RANK, ARG_REQUIRED, "N", \
	"only the processes of rank N (a merged distributed run)", NULL, 0 }
#define CMD_OPT_NO_PROGRESS { "no-progress", 0, CMD_O_NO_PROGRESS, ARG_NONE, NULL, \
	"no progress line on a terminal", NULL, 0 }
int cmd_common_opt(struct cmd_setup *s, const struct opt_iter *it, int c);

/*
 * run_command - run the command @name with @argc/@argv (argv[0] its name)
 * as main() does, the setup included, without the final check of
 * standard output; the exit status.
 */
int run_command(const char *name, int argc, char **argv);

int cmd_profile(int argc, char **argv);
int cmd_dump(int argc, char **argv);
/* `gpuscope stats ARGS` run from another command (profile --stats): run_command("stats") */
int cmd_stats(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_info_run(struct cmd_setup *s);
int cmd_stats_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_stats_run(struct cmd_setup *s);
int cmd_health_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_health_run(struct cmd_setup *s);
int cmd_topo_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_topo_run(struct cmd_setup *s);
int cmd_monitor_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_monitor_run(struct cmd_setup *s);
int cmd_baseline_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_baseline_run(struct cmd_setup *s);
int cmd_merge_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_merge_run(struct cmd_setup *s);
int cmd_check_parse(struct cmd_setup *s, int argc, char **argv);
int cmd_check_run(struct cmd_setup *s);
int cmd_capture(int argc, char **argv);
/*
 * capture_metrics_render - the on-demand processes' step time, steps and
 * captures in Prometheus' text format (what `capture --metrics` prints),
 * appended to @sb; monitor's /metrics serves them beside the GPUs'.
 */
struct strbuf;
void capture_metrics_render(struct strbuf *sb);
/*
 * capture_request - start a capture of @duration_ns (0: the command's
 * default) in every process of the on-demand run @name, opened by
 * @trigger (enum trace_capture_trigger), saying @why on stderr; 0 or -1.
 */
int capture_request(const char *name, uint64_t duration_ns, unsigned trigger, const char *why);

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
