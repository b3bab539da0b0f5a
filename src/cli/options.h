/*
 * options.h - one option table per command: it parses the command line,
 * prints --help, and generates the man page and the shell completion.
 *
 * A command declares a `struct cli_cmd` with a table of `struct cli_opt`
 * rows (ended by a row whose name is NULL) and walks its arguments with
 * opt_next(), which is getopt_long() built from the table:
 *
 *	struct opt_iter it;
 *	int c;
 *	opt_iter_init(&it, &cli_info, argc, argv);
 *	while ((c = opt_next(&it)) != OPT_END) {
 *		switch (c) {
 *		case 'f': format = it.arg; break;
 *		case OPT_HELP: return EXIT_OK;     (help was printed)
 *		default: return EXIT_USAGE;        (OPT_BAD: the error was printed)
 *		}
 *	}
 *	(it.ind is the first argument that is not an option)
 *
 * Every table gets -h/--help without a row.  Unique prefixes of long names
 * are accepted (--form json), as getopt_long() does; an unknown option gets
 * the nearest name as a hint ("did you mean '--format'?").
 */
#ifndef GS_CLI_OPTIONS_H
#define GS_CLI_OPTIONS_H

#include <stdio.h>

enum opt_arg {
	ARG_NONE,      /* --name */
	ARG_REQUIRED,  /* --name V, --name=V, -x V, -xV */
	ARG_OPTIONAL,  /* --name or --name=V (never a separate word) */
	/*
	 * A switch that also takes nsys's explicit value: --name, --name=V,
	 * --name V and -x V where V is true/false (yes/no, 1/0, on/off); a
	 * following word that is none of those is left alone.  it.arg is
	 * "true" or "false".
	 */
	ARG_BOOL,
};

enum opt_flags {
	OPT_HIDDEN = 1u << 0,  /* accepted (another tool's spelling), not listed in --help */
	OPT_REPEAT = 1u << 1,  /* may be given more than once (said in the man page) */
	/*
	 * The value must be one of the row's values words (ARG_REQUIRED):
	 * opt_next() refuses another with "unknown NAME 'V' (A, B or C)" and
	 * returns OPT_BAD, so commands do not check it again.
	 */
	OPT_CHOICE = 1u << 2,
};

/* Values opt_next() returns besides a row's id (ids are letters or >= 256). */
enum { OPT_END = -1, OPT_HELP = -2, OPT_BAD = -3 };

struct cli_opt {
	const char *name;     /* long name without "--"; NULL ends the table */
	int short_name;       /* letter, or 0 */
	int id;               /* what opt_next() returns */
	enum opt_arg arg;
	const char *argname;  /* "FILE", "FMT": shown in help; NULL for no value */
	const char *help;     /* one line (a second after "\n" is indented) */
	/*
	 * Completion of the value: words separated by spaces, or "<file>" for
	 * a file name, or NULL (no completion).
	 */
	const char *values;
	unsigned flags;
};

struct cli_cmd {
	const char *name;
	/* usage lines; the first starts "gpuscope NAME"; usage_error() prints the first */
	const char *synopsis;
	const char *summary;      /* one line, as `gpuscope help` lists it */
	const char *description;  /* a paragraph for --help and the man page, or NULL */
	const struct cli_opt *opts;
	const char *example;      /* one or more command lines, "\n" between them */
	/* when set, called after the options in --help (a list of report names...) */
	void (*help_extra)(FILE *f);
	int stop_at_arg;          /* options end at the first argument (a program to run) */
	/* Positional arguments, for completion: "<file>" or NULL (nothing to complete). */
	const char *args;
};

struct opt_iter {
	const struct cli_cmd *cmd;
	int argc;
	char **argv;
	char *arg;        /* the value of the option just returned (in argv), or NULL */
	int ind;          /* after OPT_END: the index of the first argument that is not an option */
	int last;         /* the index of the row just returned, -1 for none */
};

void opt_iter_init(struct opt_iter *it, const struct cli_cmd *cmd, int argc, char **argv);
/*
 * opt_next - the next option's id, OPT_END when the options end, OPT_HELP
 * after printing the help on stdout, OPT_BAD after printing a usage error.
 */
int opt_next(struct opt_iter *it);
/* The long name of the option just returned ("--format"), for messages. */
const char *opt_name(const struct opt_iter *it);
/* 1, 0, or -1 (after a usage error) for an ARG_BOOL option's value. */
int opt_bool(const struct opt_iter *it);

/* The help of @cmd: usage, description, a line per option, the example. */
void opt_print_help(FILE *f, const struct cli_cmd *cmd);
/* The man page of @cmd in troff (man(7)), gpuscope-NAME(1). */
void opt_print_man(FILE *f, const struct cli_cmd *cmd);
/* The man page gpuscope(1), listing @cmds (@n of them). */
void opt_print_man_index(FILE *f, const struct cli_cmd *const *cmds, size_t n);
/* Completion scripts for @shell ("bash" or "zsh"); 0, or -1 for an unknown shell. */
int opt_print_completion(FILE *f, const char *shell, const struct cli_cmd *const *cmds, size_t n);

/*
 * The word of @cands (NULL-ended) nearest to @word by edit distance, when
 * it is near enough to be a typo, else NULL.
 */
const char *opt_nearest(const char *word, const char *const *cands);

#endif
