/*
 * cmd_stats.c - `gpuscope stats`: the summary reports of nsys stats over a
 * report, a Kineto trace or an nsys SQLite export (docs/stats.md).
 */
#include "commands.h"
#include "../import/import.h"
#include "../stats/stats.h"
#include "options.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char stats_usage[] =
	"gpuscope stats [--report NAME]... [--format table|csv|tsv|json] [-o FILE]\n"
	"                      [--timeunit ns|us|ms|s] [--start T] [--end T]\n"
	"                      [--nvtx RANGE[@DOMAIN]] [--rank N] REPORT";

enum { O_REPORT = 'r', O_FORMAT = 'f', O_OUTPUT = 'o', O_TIMEUNIT = 256, O_START, O_END, O_NVTX,
       O_FORCE, O_HELP_REPORTS };

static const struct cli_opt stats_opts[] = {
	{ "report", 'r', O_REPORT, ARG_REQUIRED, "NAME",
	  "a report to print (repeatable, or NAME,NAME...); NAME:base or\n"
	  "NAME:mangled for kernels by base or mangled name", NULL, OPT_REPEAT },
	{ "format", 'f', O_FORMAT, ARG_REQUIRED, "FMT",
	  "table (default; nsys's column), csv, tsv or json", "table column csv tsv json", OPT_CHOICE },
	{ "output", 'o', O_OUTPUT, ARG_REQUIRED, "FILE", "write to FILE instead of standard output",
	  "<file>", 0 },
	{ "force", 0, O_FORCE, ARG_BOOL, NULL, "overwrite an existing -o FILE", NULL, 0 },
	{ "force-overwrite", 0, O_FORCE, ARG_BOOL, NULL, "nsys's name for --force", NULL, OPT_HIDDEN },
	{ "timeunit", 0, O_TIMEUNIT, ARG_REQUIRED, "U",
	  "ns (default), us, ms or s (nsys's nsec, usec, msec, sec too)", "ns us ms s", 0 },
	{ "start", 0, O_START, ARG_REQUIRED, "T",
	  "only rows that end at or after T (from the report's start;\n"
	  "a number with s, ms, us or ns; seconds when bare)", NULL, 0 },
	{ "end", 0, O_END, ARG_REQUIRED, "T", "only rows that start at or before T", NULL, 0 },
	{ "nvtx", 0, O_NVTX, ARG_REQUIRED, "R[@D]",
	  "only rows that overlap an instance of NVTX range R\n(in domain D)", NULL, 0 },
	CMD_OPT_RANK,
	{ "help-reports", 0, O_HELP_REPORTS, ARG_NONE, NULL, "list the reports and exit", NULL, 0 },
	CMD_OPT_NO_PROGRESS,
	{ 0 },
};

static void print_reports(FILE *f)
{
	const char *const *n = stats_report_names();
	const char *const *d = stats_default_reports();

	fprintf(f, "Reports:\n");
	for (size_t i = 0; n[i]; i++)
		fprintf(f, "  %-22s %s\n", n[i], stats_report_title(n[i]));
	fprintf(f, "\nDefault set:");
	for (size_t i = 0; d[i]; i++)
		fprintf(f, " %s", d[i]);
	fprintf(f, "\n");
}

const struct cli_cmd cli_stats = {
	.name = "stats",
	.synopsis = stats_usage,
	.summary = "summary reports as nsys stats prints them",
	.description = "Summary reports with the names and columns of `nsys stats`.",
	.opts = stats_opts,
	.example = "gpuscope stats -r cuda_gpu_kern_sum,cuda_api_sum run.gpuscope\n"
		   "gpuscope stats --format csv -o sums run.gpuscope   (sums_REPORT.csv, one per report)",
	.help_extra = print_reports,
	.args = "<file>",
};

/* ---- options ---- */

struct stats_args {
	const char **reports;
	size_t nreports, alloc;
	char **owned;              /* copies made when splitting NAME,NAME */
	size_t nowned, aowned;
	const char *format, *output, *input;
	struct stats_opts o;
	char *nvtx;
	int force;
	/* the streaming summaries (stats_lean_new), and the tables made */
	struct stats_lean *lean;
	struct model_sink sink;
	struct stats_table *tables;
	size_t done;
};

static void add_reports(struct stats_args *a, const char *v)
{
	const char *p = v;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len) {
			char *s = xstrndup(p, len);
			ALLOC_GROW(a->owned, a->nowned + 1, a->aowned);
			a->owned[a->nowned++] = s;
			ALLOC_GROW(a->reports, a->nreports + 1, a->alloc);
			a->reports[a->nreports++] = s;
		}
		p += len;
		if (*p == ',')
			p++;
	}
}

static void args_free(void *priv)
{
	struct stats_args *a = priv;

	for (size_t i = 0; i < a->done; i++)
		stats_table_release(&a->tables[i]);
	free(a->tables);
	if (a->lean)
		stats_lean_free(a->lean);
	for (size_t i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->reports);
	free(a->nvtx);
	free(a);
}

/* nsys's names of the time units */
static const char *timeunit_alias(const char *u)
{
	static const char *const map[][2] = {
		{ "nsec", "ns" }, { "usec", "us" }, { "msec", "ms" }, { "sec", "s" },
		{ "nanoseconds", "ns" }, { "microseconds", "us" }, { "milliseconds", "ms" },
		{ "seconds", "s" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(u, map[i][0]))
			return map[i][1];
	return u;
}

/* CMD_RUN, or the exit status (EXIT_OK after --help, EXIT_USAGE after an error) */
static int parse_args(struct cmd_setup *s, int argc, char **argv, struct stats_args *a)
{
	struct opt_iter it;
	int c;

	a->format = "table";
	a->o.timeunit = "ns";
	a->o.relative = 1;
	opt_iter_init(&it, &cli_stats, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		const char *v = it.arg;
		switch (c) {
		case O_REPORT: add_reports(a, v); break;
		case O_FORMAT: a->format = !strcmp(v, "column") ? "table" : v; break;
		case O_OUTPUT: a->output = v; break;
		case O_FORCE: a->force = opt_bool(&it); break;
		case O_TIMEUNIT: a->o.timeunit = timeunit_alias(v); break;
		case O_START:
			if (parse_duration_ns(v, &a->o.start, "s") < 0)
				return usage_error(stats_usage, "bad time '%s' for --start", v);
			break;
		case O_END:
			if (parse_duration_ns(v, &a->o.end, "s") < 0)
				return usage_error(stats_usage, "bad time '%s' for --end", v);
			break;
		case O_NVTX: {
			const char *at = strrchr(v, '@');
			free(a->nvtx);
			a->nvtx = xstrdup(v);
			if (at) {
				a->nvtx[at - v] = '\0';
				a->o.nvtx_domain = a->nvtx + (at - v) + 1;
			}
			a->o.nvtx = a->nvtx;
			break;
		}
		case O_HELP_REPORTS:
			print_reports(stdout);
			return EXIT_OK;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (argc - it.ind > 1)
		return usage_error(stats_usage, "more than one input ('%s' and '%s')", argv[it.ind],
				   argv[it.ind + 1]);
	if (it.ind < argc)
		a->input = argv[it.ind];
	if (!a->input)
		return usage_error(stats_usage, "no report given");
	if (!stats_timeunit_valid(a->o.timeunit))
		return usage_error(stats_usage, "unknown time unit '%s' (ns, us, ms or s)",
				   a->o.timeunit);
	if (a->o.end && a->o.end < a->o.start)
		return usage_error(stats_usage, "--end comes before --start");
	if (a->o.nvtx && !*a->o.nvtx)
		return usage_error(stats_usage, "--nvtx needs a range name");
	if (!a->nreports)
		for (const char *const *d = stats_default_reports(); *d; d++) {
			ALLOC_GROW(a->reports, a->nreports + 1, a->alloc);
			a->reports[a->nreports++] = *d;
		}
	for (size_t i = 0; i < a->nreports; i++)
		if (!stats_report_title(a->reports[i])) {
			struct stats_table t;
			stats_run(NULL, a->reports[i], NULL, &t); /* says which reports exist */
			return EXIT_USAGE;
		}
	return CMD_RUN;
}

/* ---- output ---- */

/*
 * A CSV table as TSV (nsys's -f tsv): fields split at tabs, no quoting; a
 * tab or line break inside a field becomes a space.
 */
static void csv_to_tsv(FILE *f, const char *csv)
{
	int quoted = 0;

	for (const char *p = csv; *p; p++) {
		if (quoted) {
			if (*p == '"' && p[1] == '"')
				fputc('"', f), p++;
			else if (*p == '"')
				quoted = 0;
			else
				fputc(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p, f);
		} else if (*p == '"') {
			quoted = 1;
		} else {
			fputc(*p == ',' ? '\t' : *p, f);
		}
	}
}

static int format_table(FILE *f, const struct stats_table *t, const char *format,
			const char *timeunit)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int ret;

	if (strcmp(format, "tsv"))
		return stats_format(f, t, format, timeunit);
	m = open_memstream(&buf, &len);
	if (!m)
		return error("out of memory formatting '%s'", t->report);
	ret = stats_format(m, t, "csv", timeunit);
	fclose(m);
	if (!ret)
		csv_to_tsv(f, buf);
	free(buf);
	return ret;
}

static int write_tables(FILE *f, const char *path, struct stats_table *t, size_t n,
			const struct stats_args *a)
{
	int json = !strcmp(a->format, "json");
	int csv = !strcmp(a->format, "csv") || !strcmp(a->format, "tsv");

	if (json)
		fputs("[\n", f);
	for (size_t i = 0; i < n; i++) {
		if (json && i)
			fputs(",\n", f);
		if (csv && i)
			fputc('\n', f);
		if (format_table(f, &t[i], a->format, a->o.timeunit) < 0)
			return -1;
		if (csv && !t[i].nrows && t[i].empty_reason)
			fprintf(stderr, "note: %s\n", t[i].empty_reason);
	}
	if (json)
		fputs("]\n", f);
	if (fflush(f) || ferror(f))
		return error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
	return 0;
}

static int is_csv(const struct stats_args *a)
{
	return !strcmp(a->format, "csv") || !strcmp(a->format, "tsv");
}

/* The file of report @i when CSV of several reports goes to files: BASE_REPORT.csv (as nsys). */
static char *csv_path(const struct stats_args *a, const char *report)
{
	size_t len = strlen(a->output);
	const char *ext = !strcmp(a->format, "tsv") ? ".tsv" : ".csv";

	if (len > 4 && !strcmp(a->output + len - 4, ext))
		len -= 4;
	return xstrfmt("%.*s_%s%s", (int)len, a->output, report, ext);
}

static int several_files(const struct stats_args *a)
{
	return a->output && strcmp(a->output, "-") && is_csv(a) && a->nreports > 1;
}

/* Every output of several files checked before any work (exists without --force, a directory...). */
static int check_outputs(const struct stats_args *a)
{
	int ret = 0;

	for (size_t i = 0; i < a->nreports && !ret; i++) {
		char *path = csv_path(a, a->reports[i]);
		ret = output_check(path, a->force);
		free(path);
	}
	return ret;
}

/*
 * One file per report: all are written to temporaries first and moved into
 * place only when every one is whole, so a failure leaves none.
 */
static int write_csv_files(struct stats_table *t, size_t n, const struct stats_args *a)
{
	struct output_file *outs = xcalloc(n, sizeof(*outs));
	size_t opened = 0;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		char *path = csv_path(a, t[i].report);
		ret = output_open(&outs[i], path, a->force);
		free(path);
		if (ret < 0)
			break;
		opened++;
		ret = format_table(outs[i].f, &t[i], a->format, a->o.timeunit);
		if (!t[i].nrows && t[i].empty_reason)
			fprintf(stderr, "note: %s\n", t[i].empty_reason);
	}
	for (size_t i = 0; i < opened; i++) {
		if (!ret)
			ret = output_commit(&outs[i]);
		else if (outs[i].f)
			output_abort(&outs[i]);
	}
	free(outs);
	return ret;
}

/* The tables to @out (the dispatcher's -o FILE or standard output), or to one file each. */
static int output(struct output_file *out, struct stats_table *t, size_t n, const struct stats_args *a)
{
	int ret;

	if (several_files(a))
		return write_csv_files(t, n, a);
	if (out->f != stdout)
		return write_tables(out->f, a->output, t, n, a);
	/* a failed standard output is reported once, by main()'s finish_stdout() */
	set_error_quiet(1);
	ret = write_tables(stdout, "standard output", t, n, a);
	set_error_quiet(0);
	return ret;
}

int cmd_stats(int argc, char **argv)
{
	return run_command("stats", argc, argv);
}

int cmd_stats_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct stats_args *a = xcalloc(1, sizeof(*a));
	int ret;

	s->priv = a;
	s->priv_free = args_free;
	/*
	 * The summaries grow one array of values per group.  glibc raises its
	 * mmap threshold after big frees, after which grown arrays are copied
	 * within the heap and the old copies stay resident; a fixed threshold
	 * keeps big arrays in mmap, where realloc moves pages instead (about
	 * 12% less peak memory on the 10M-event benchmark, 1 and 8 streams).
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if ((ret = parse_args(s, argc, argv, a)) != CMD_RUN)
		return ret;
	/* one output for the dispatcher to check and open (commands.h), or one file per report */
	if (several_files(a) && check_outputs(a) < 0)
		return EXIT_USAGE;
	s->output = several_files(a) ? NULL : a->output;
	s->force = a->force;
	s->input = a->input;
	/*
	 * One loader for every input (load_input_opts); for a gpuscope report
	 * its streaming fast path hands the rows that only summaries need to
	 * them as they load, so they are never stored (stats_lean_new).  One
	 * rank of a merged run is loaded whole, then narrowed to that rank's
	 * processes (the dispatcher's --rank).
	 */
	a->lean = stats_lean_new(a->reports, a->nreports, &a->o, &a->sink);
	if (!a->lean)
		return EXIT_USAGE;
	if (s->rank < 0 && trace_is_report(a->input) == 1 &&
	    stats_lean_window(a->lean, &a->sink, a->input, &a->o) < 0)
		return EXIT_USAGE;
	s->load.sink = s->rank >= 0 ? NULL : &a->sink;
	return CMD_RUN;
}

int cmd_stats_run(struct cmd_setup *s)
{
	struct stats_args *a = s->priv;

	a->tables = xcalloc(a->nreports, sizeof(*a->tables));
	if (stats_lean_finish(a->lean, &s->m, s->load.sunk, a->reports, &a->o, a->tables) < 0)
		return EXIT_USAGE;
	a->done = a->nreports;
	return output(&s->out, a->tables, a->nreports, a) < 0 ? EXIT_FAIL : EXIT_OK;
}
