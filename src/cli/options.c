/*
 * options.c - the option tables' parser (getopt_long() built from a
 * table), --help, the man pages and the shell completion (options.h).
 */
#include "options.h"
#include "commands.h"
#include "../util/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUSCOPE_VERSION
#define GPUSCOPE_VERSION "0.1.0"
#endif

/* Enough for the largest table (profile's); a table that outgrows it is a BUG(). */
#define OPT_MAX 64
/* getopt_long() returns these for long names: row index + VAL_ROW; help is VAL_HELP. */
#define VAL_HELP 999
#define VAL_ROW 1000

static const struct cli_opt help_row = {
	"help", 'h', OPT_HELP, ARG_NONE, NULL, "show this help and exit", NULL, 0,
};

static size_t nr_rows(const struct cli_cmd *cmd)
{
	size_t n = 0;

	while (cmd->opts && cmd->opts[n].name)
		n++;
	if (n > OPT_MAX)
		BUG("command '%s' has more than %d options", cmd->name, OPT_MAX);
	return n;
}

static int has_short(const struct cli_cmd *cmd, int c)
{
	for (size_t i = 0; i < nr_rows(cmd); i++)
		if (cmd->opts[i].short_name == c)
			return 1;
	return 0;
}

static int has_long(const struct cli_cmd *cmd, const char *name)
{
	for (size_t i = 0; i < nr_rows(cmd); i++)
		if (!strcmp(cmd->opts[i].name, name))
			return 1;
	return 0;
}

void opt_iter_init(struct opt_iter *it, const struct cli_cmd *cmd, int argc, char **argv)
{
	memset(it, 0, sizeof(*it));
	it->cmd = cmd;
	it->argc = argc;
	it->argv = argv;
	it->last = -1;
	/* a full reset: profile --stats runs stats after its own parse */
	optind = 0;
	opterr = 0;
}

/* "true" or "false" for a word nsys and people use for a switch's value, else NULL */
static char *bool_word(const char *s)
{
	static const char *const yes[] = { "true", "yes", "1", "on" };
	static const char *const no[] = { "false", "no", "0", "off" };
	/* it.arg points into argv, which is writable; these are too */
	static char t[] = "true", f[] = "false";

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (!strcmp(s, yes[i]))
			return t;
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (!strcmp(s, no[i]))
			return f;
	return NULL;
}

/* Optimal string alignment distance (Levenshtein with swaps of neighbours as one edit). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *d, r;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	d = xcalloc((la + 1) * (lb + 1), sizeof(*d));
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], v = D(i - 1, j - 1) + cost;
			if (D(i - 1, j) + 1 < v)
				v = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *opt_nearest(const char *word, const char *const *cands)
{
	/*
	 * A typo is near: at most a third of the word's letters edited (one
	 * edit for words of up to 5 letters, two up to 8, ...), so "fromat"
	 * finds "format" and "stat" finds "stats", while "out" is not taken
	 * for "cut".  The first of equally near words wins.
	 */
	size_t len = strlen(word), max = len / 3 ? len / 3 : 1, best = SIZE_MAX;
	const char *hit = NULL;

	for (size_t i = 0; cands[i]; i++) {
		size_t dist = edit_distance(word, cands[i]);
		if (dist <= max && dist < best) {
			best = dist;
			hit = cands[i];
		}
	}
	return hit;
}

/* "unknown option '--fomat' (did you mean '--format'?)" and the like; returns OPT_BAD. */
static int bad_long(const struct opt_iter *it, const char *arg)
{
	const struct cli_cmd *cmd = it->cmd;
	size_t n = nr_rows(cmd), len = strcspn(arg + 2, "=");
	const char *names[OPT_MAX + 2];
	struct strbuf sb = STRBUF_INIT;
	char *word = xstrndup(arg + 2, len);
	const char *near;
	size_t nmatch = 0;

	for (size_t i = 0; i < n; i++)
		names[i] = cmd->opts[i].name;
	names[n] = "help";
	names[n + 1] = NULL;
	/* a prefix of several names (getopt_long() takes a unique one) */
	for (size_t i = 0; names[i]; i++)
		if (!strncmp(names[i], word, len)) {
			strbuf_addf(&sb, "%s--%s", nmatch ? ", " : "", names[i]);
			nmatch++;
		}
	if (nmatch > 1) {
		usage_error(cmd->synopsis, "option '--%s' is ambiguous (%s)", word, sb.buf);
	} else if (nmatch == 1 && arg[2 + len] == '=') {
		usage_error(cmd->synopsis, "option '--%s' takes no value", word);
	} else if ((near = opt_nearest(word, names))) {
		usage_error(cmd->synopsis, "unknown option '%.*s' (did you mean '--%s'?)",
			    (int)(len + 2), arg, near);
	} else {
		usage_error(cmd->synopsis, "unknown option '%.*s'", (int)(len + 2), arg);
	}
	strbuf_release(&sb);
	free(word);
	return OPT_BAD;
}

/* Is @word one of the space-separated @values? */
static int is_choice(const char *values, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = values; p && *p; p += strcspn(p, " "), p += *p == ' ')
		if (strcspn(p, " ") == len && !strncmp(p, word, len))
			return 1;
	return 0;
}

/* "a, b or c" from the space-separated @values */
static void choice_list(struct strbuf *sb, const char *values)
{
	size_t n = 0, i = 0;

	for (const char *p = values; *p; p += strcspn(p, " "), p += *p == ' ')
		n++;
	for (const char *p = values; *p; p += strcspn(p, " "), p += *p == ' ', i++)
		strbuf_addf(sb, "%s%.*s", !i ? "" : i + 1 == n ? " or " : ", ", (int)strcspn(p, " "), p);
}

int opt_next(struct opt_iter *it)
{
	const struct cli_cmd *cmd = it->cmd;
	size_t n = nr_rows(cmd), k = 0, s = 0;
	struct option lo[OPT_MAX + 2];
	char so[OPT_MAX * 3 + 8];
	const struct cli_opt *row = NULL;
	int c;

	/*
	 * The arrays are built at each call: cheap for tables this size, and
	 * the iterator owns nothing that needs freeing.
	 */
	if (cmd->stop_at_arg)
		so[s++] = '+';
	so[s++] = ':';
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		lo[k].name = o->name;
		lo[k].has_arg = o->arg == ARG_REQUIRED ? required_argument
				: o->arg == ARG_NONE ? no_argument : optional_argument;
		lo[k].flag = NULL;
		lo[k].val = VAL_ROW + (int)i;
		k++;
		if (o->short_name) {
			so[s++] = (char)o->short_name;
			if (o->arg == ARG_REQUIRED)
				so[s++] = ':';
			else if (o->arg == ARG_OPTIONAL)
				so[s++] = ':', so[s++] = ':';
		}
	}
	if (!has_long(cmd, "help")) {
		lo[k++] = (struct option){ "help", no_argument, NULL, VAL_HELP };
		if (!has_short(cmd, 'h'))
			so[s++] = 'h';
	}
	lo[k] = (struct option){ NULL, 0, NULL, 0 };
	so[s] = '\0';

	it->arg = NULL;
	it->last = -1;
	c = getopt_long(it->argc, it->argv, so, lo, NULL);
	if (c == -1) {
		it->ind = optind;
		return OPT_END;
	}
	if (c == VAL_HELP || (c == 'h' && !has_short(cmd, 'h'))) {
		opt_print_help(stdout, cmd);
		return OPT_HELP;
	}
	if (c == ':') {
		usage_error(cmd->synopsis, "option '%s' needs a value", it->argv[optind - 1]);
		return OPT_BAD;
	}
	if (c == '?') {
		const char *arg = it->argv[optind - 1];
		if (!optopt && !strncmp(arg, "--", 2))
			return bad_long(it, arg);
		if (optopt >= VAL_ROW && optopt < VAL_ROW + (int)n) {
			usage_error(cmd->synopsis, "option '--%s' takes no value",
				    cmd->opts[optopt - VAL_ROW].name);
			return OPT_BAD;
		}
		if (optopt == VAL_HELP) {
			usage_error(cmd->synopsis, "option '--help' takes no value");
			return OPT_BAD;
		}
		if (optopt)
			usage_error(cmd->synopsis, "unknown option '-%c'", optopt);
		else
			usage_error(cmd->synopsis, "unknown option '%s'", arg);
		return OPT_BAD;
	}
	if (c >= VAL_ROW) {
		it->last = c - VAL_ROW;
	} else {
		for (size_t i = 0; i < n; i++)
			if (cmd->opts[i].short_name == c)
				it->last = (int)i;
	}
	if (it->last < 0)
		BUG("getopt_long returned %d for '%s'", c, cmd->name);
	row = &cmd->opts[it->last];
	it->arg = optarg;
	if ((row->flags & OPT_CHOICE) && it->arg && !is_choice(row->values, it->arg)) {
		struct strbuf sb = STRBUF_INIT;
		choice_list(&sb, row->values);
		usage_error(cmd->synopsis, "unknown %s '%s' (%s)", row->name, it->arg, sb.buf);
		strbuf_release(&sb);
		return OPT_BAD;
	}
	if (row->arg == ARG_BOOL) {
		if (it->arg) {
			char *w = bool_word(it->arg);
			if (!w) {
				usage_error(cmd->synopsis, "bad value '%s' for --%s (true or false)",
					    it->arg, row->name);
				return OPT_BAD;
			}
			it->arg = w;
		} else if (optind < it->argc && bool_word(it->argv[optind])) {
			/* nsys's "--stats true", "-f true" */
			it->arg = bool_word(it->argv[optind++]);
		} else {
			it->arg = "true";
		}
	}
	return row->id;
}

const char *opt_name(const struct opt_iter *it)
{
	static char buf[80];

	if (it->last < 0)
		return "";
	snprintf(buf, sizeof(buf), "--%s", it->cmd->opts[it->last].name);
	return buf;
}

int opt_bool(const struct opt_iter *it)
{
	return it->arg && !strcmp(it->arg, "true");
}

/* ---- help ---- */

static void opt_label(struct strbuf *sb, const struct cli_opt *o)
{
	if (o->short_name)
		strbuf_addf(sb, "-%c, ", o->short_name);
	else
		strbuf_addstr(sb, "    ");
	strbuf_addf(sb, "--%s", o->name);
	if (o->argname) {
		if (o->arg == ARG_OPTIONAL || o->arg == ARG_BOOL)
			strbuf_addf(sb, "[=%s]", o->argname);
		else
			strbuf_addf(sb, " %s", o->argname);
	}
}

static void print_opt_line(FILE *f, const struct cli_opt *o)
{
	struct strbuf sb = STRBUF_INIT;
	const char *h = o->help ? o->help : "";

	opt_label(&sb, o);
	/* the help starts in column 28; a longer label puts it on the next line */
	if (sb.len <= 24)
		fprintf(f, "  %-25s ", sb.buf);
	else
		fprintf(f, "  %s\n%28s", sb.buf, "");
	for (const char *p = h; *p; p++) {
		fputc(*p, f);
		if (*p == '\n' && p[1])
			fprintf(f, "%28s", "");
	}
	fputc('\n', f);
	strbuf_release(&sb);
}

void opt_print_help(FILE *f, const struct cli_cmd *cmd)
{
	size_t n = nr_rows(cmd);

	fprintf(f, "usage: %s\n\n", cmd->synopsis);
	if (cmd->description)
		fprintf(f, "%s\n\n", cmd->description);
	else if (cmd->summary)
		fprintf(f, "%s.\n\n", cmd->summary);
	fprintf(f, "Options:\n");
	for (size_t i = 0; i < n; i++)
		if (!(cmd->opts[i].flags & OPT_HIDDEN))
			print_opt_line(f, &cmd->opts[i]);
	if (!has_long(cmd, "help"))
		print_opt_line(f, &help_row);
	if (cmd->help_extra) {
		fputc('\n', f);
		cmd->help_extra(f);
	}
	if (cmd->example) {
		const char *p = cmd->example;
		fprintf(f, "\nExample%s:\n", strchr(p, '\n') ? "s" : "");
		while (*p) {
			size_t len = strcspn(p, "\n");
			fprintf(f, "  %.*s\n", (int)len, p);
			p += len;
			if (*p)
				p++;
		}
	}
	fprintf(f, "\n'man gpuscope-%s' has the same text; docs/cli.md lists every command.\n",
		cmd->name);
}

/* ---- man pages ---- */

/* @s escaped for troff text: backslashes, a leading '.' or '\'', hyphens in words */
static void man_text(FILE *f, const char *s)
{
	int bol = 1;

	for (const char *p = s; *p; p++) {
		if (bol && (*p == '.' || *p == '\''))
			fputs("\\&", f);
		bol = *p == '\n';
		if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '-')
			fputs("\\-", f);
		else
			fputc(*p, f);
	}
}

static void man_head(FILE *f, const char *title, const char *name, const char *summary)
{
	fprintf(f, ".\\\" generated by 'gpuscope __man' from the option tables in src/cli\n");
	fprintf(f, ".TH %s 1 \"\" \"gpuscope %s\" \"gpuscope manual\"\n", title, GPUSCOPE_VERSION);
	fprintf(f, ".SH NAME\n");
	man_text(f, name);
	fputs(" \\- ", f);
	man_text(f, summary);
	fputc('\n', f);
}

static void man_block(FILE *f, const char *s)
{
	fputs(".nf\n", f);
	man_text(f, s);
	if (*s && s[strlen(s) - 1] != '\n')
		fputc('\n', f);
	fputs(".fi\n", f);
}

static void man_opt(FILE *f, const struct cli_opt *o)
{
	fputs(".TP\n", f);
	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", f);
	man_text(f, o->name);
	fputs("\\fR", f);
	if (o->argname) {
		int opt = o->arg == ARG_OPTIONAL || o->arg == ARG_BOOL;
		fputs(opt ? "[=\\fI" : " \\fI", f);
		man_text(f, o->argname);
		fputs(opt ? "\\fR]" : "\\fR", f);
	}
	fputc('\n', f);
	man_text(f, o->help ? o->help : "");
	if (o->flags & OPT_REPEAT)
		fputs(" (may be repeated)", f);
	fputc('\n', f);
}

void opt_print_man(FILE *f, const struct cli_cmd *cmd)
{
	char *title = xstrfmt("GPUSCOPE-%s", cmd->name), *name = xstrfmt("gpuscope-%s", cmd->name);
	size_t n = nr_rows(cmd);

	for (char *p = title; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	man_head(f, title, name, cmd->summary);
	fputs(".SH SYNOPSIS\n", f);
	man_block(f, cmd->synopsis);
	fputs(".SH DESCRIPTION\n", f);
	man_text(f, cmd->description ? cmd->description : cmd->summary);
	fputs("\n.SH OPTIONS\n", f);
	for (size_t i = 0; i < n; i++)
		if (!(cmd->opts[i].flags & OPT_HIDDEN))
			man_opt(f, &cmd->opts[i]);
	if (!has_long(cmd, "help"))
		man_opt(f, &help_row);
	if (cmd->help_extra) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (m) {
			cmd->help_extra(m);
			fclose(m);
			fputs(".SH NOTES\n", f);
			man_block(f, buf);
		}
		free(buf);
	}
	if (cmd->example) {
		fputs(".SH EXAMPLE\n", f);
		man_block(f, cmd->example);
	}
	fputs(".SH SEE ALSO\n\\fBgpuscope\\fR(1)\n", f);
	free(title);
	free(name);
}

void opt_print_man_index(FILE *f, const struct cli_cmd *const *cmds, size_t n)
{
	man_head(f, "GPUSCOPE", "gpuscope", "record and diagnose what holds a GPU program back");
	fputs(".SH SYNOPSIS\n\\fBgpuscope\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n", f);
	fputs(".SH DESCRIPTION\n", f);
	man_text(f, "gpuscope records what a program does on its CPU threads and GPUs and tells you "
		    "what holds it back.  Each command has its own page, gpuscope-COMMAND(1), "
		    "and 'gpuscope COMMAND --help' prints the same options.");
	fputs("\n.SH COMMANDS\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, ".TP\n\\fBgpuscope\\-%s\\fR(1)\n", cmds[i]->name);
		man_text(f, cmds[i]->summary);
		fputc('\n', f);
	}
	fputs(".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\nwhen set, no colour in terminal output\n", f);
}

/* ---- completion ---- */

static void bash_words(FILE *f, const char *values)
{
	if (!strcmp(values, "<file>"))
		fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f);
	else
		fprintf(f, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))", values);
}

static void print_bash(FILE *f, const struct cli_cmd *const *cmds, size_t n)
{
	fputs("# bash completion for gpuscope, generated by 'gpuscope __complete bash'\n"
	      "_gpuscope() {\n"
	      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts=\n"
	      "  COMPREPLY=()\n"
	      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "    COMPREPLY=($(compgen -W \"help version", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %s", cmds[i]->name);
	fputs("\" -- \"$cur\"))\n    return\n  fi\n  case ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct cli_cmd *c = cmds[i];
		fprintf(f, "  %s)\n    case $prev in\n", c->name);
		for (size_t j = 0; c->opts && c->opts[j].name; j++) {
			const struct cli_opt *o = &c->opts[j];
			if (o->arg != ARG_REQUIRED)
				continue;
			fputs("    ", f);
			if (o->short_name)
				fprintf(f, "-%c|", o->short_name);
			fprintf(f, "--%s) ", o->name);
			if (o->values) {
				bash_words(f, o->values);
				fputs("; ", f);
			}
			fputs("return;;\n", f);
		}
		fputs("    esac\n    opts=\"--help", f);
		for (size_t j = 0; c->opts && c->opts[j].name; j++)
			if (!(c->opts[j].flags & OPT_HIDDEN))
				fprintf(f, " --%s", c->opts[j].name);
		fputs("\";;\n", f);
	}
	fputs("  esac\n"
	      "  if [[ $cur == -* ]]; then\n"
	      "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "  else\n"
	      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "  fi\n"
	      "}\n"
	      "complete -o filenames -F _gpuscope gpuscope\n", f);
}

/* @s for a zsh single-quoted _arguments description: no quotes, brackets or colons */
static void zsh_text(FILE *f, const char *s)
{
	for (const char *p = s; *p && *p != '\n'; p++) {
		if (*p == '\'' || *p == '"' || *p == '`' || *p == '$' || *p == '\\')
			continue;
		fputc(*p == '[' ? '(' : *p == ']' ? ')' : *p == ':' ? ' ' : *p, f);
	}
}

static void zsh_value(FILE *f, const struct cli_opt *o)
{
	if (o->arg == ARG_NONE)
		return;
	fputs(":", f);
	zsh_text(f, o->argname ? o->argname : "value");
	fputs(":", f);
	if (o->arg == ARG_BOOL)
		fputs("(true false)", f);
	else if (o->values && !strcmp(o->values, "<file>"))
		fputs("_files", f);
	else if (o->values)
		fprintf(f, "(%s)", o->values);
	else
		fputs(" ", f);
}

static void print_zsh(FILE *f, const struct cli_cmd *const *cmds, size_t n)
{
	fputs("#compdef gpuscope\n"
	      "# zsh completion for gpuscope, generated by 'gpuscope __complete zsh'\n"
	      "_gpuscope() {\n"
	      "  local -a cmds\n"
	      "  cmds=(\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "    '%s:", cmds[i]->name);
		zsh_text(f, cmds[i]->summary);
		fputs("'\n", f);
	}
	fputs("  )\n"
	      "  if (( CURRENT == 2 )); then\n"
	      "    _describe 'command' cmds\n"
	      "    return\n"
	      "  fi\n"
	      "  local cmd=$words[2]\n"
	      "  shift words\n"
	      "  (( CURRENT-- ))\n"
	      "  case $cmd in\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct cli_cmd *c = cmds[i];
		fprintf(f, "  %s)\n    _arguments -s \\\n      '--help[show this help]' \\\n", c->name);
		for (size_t j = 0; c->opts && c->opts[j].name; j++) {
			const struct cli_opt *o = &c->opts[j];
			const char *rep = o->flags & OPT_REPEAT ? "*" : "";
			if (o->flags & OPT_HIDDEN)
				continue;
			fprintf(f, "      '%s--%s%s[", rep, o->name,
				o->arg == ARG_REQUIRED ? "=" : o->arg == ARG_NONE ? "" : "=-");
			zsh_text(f, o->help ? o->help : "");
			fputs("]", f);
			zsh_value(f, o);
			fputs("' \\\n", f);
			if (o->short_name) {
				fprintf(f, "      '%s-%c%s[", rep, o->short_name,
					o->arg == ARG_REQUIRED ? "+" : "");
				zsh_text(f, o->help ? o->help : "");
				fputs("]", f);
				if (o->arg == ARG_REQUIRED)
					zsh_value(f, o);
				fputs("' \\\n", f);
			}
		}
		if (c->stop_at_arg)
			fputs("      '*::program:_normal'\n", f);
		else
			fputs("      '*:file:_files'\n", f);
		fputs("    ;;\n", f);
	}
	fputs("  esac\n}\n_gpuscope \"$@\"\n", f);
}

int opt_print_completion(FILE *f, const char *shell, const struct cli_cmd *const *cmds, size_t n)
{
	if (!strcmp(shell, "bash"))
		print_bash(f, cmds, n);
	else if (!strcmp(shell, "zsh"))
		print_zsh(f, cmds, n);
	else
		return error("no completion for shell '%s' (bash or zsh)", shell);
	return 0;
}
