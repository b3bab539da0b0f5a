/*
 * cmd_stats.c - `gpuscope stats`: the summary reports of nsys stats over a
 * report, a Kineto trace or an nsys SQLite export (docs/stats.md).
 */
#include "commands.h"
#include "../import/import.h"
#include "../stats/stats.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char stats_usage[] =
	"gpuscope stats [--report NAME]... [--format table|csv|json] [-o FILE]\n"
	"                      [--timeunit ns|us|ms|s] [--start T] [--end T]\n"
	"                      [--nvtx RANGE[@DOMAIN]] [--rank N] REPORT";

static void print_help(void)
{
	const char *const *n = stats_report_names();
	const char *const *d = stats_default_reports();

	printf("usage: %s\n\n", stats_usage);
	printf("Summary reports with the names and columns of `nsys stats`.\n\n"
	       "  -r, --report NAME   a report to print (repeatable, or NAME,NAME...)\n"
	       "  -f, --format FMT    table (default), csv or json\n"
	       "  -o, --output FILE   write to FILE instead of standard output\n"
	       "      --timeunit U    ns (default), us, ms or s\n"
	       "      --start T       only rows that end at or after T (from the report's start;\n"
	       "                      a number with s, ms, us or ns; seconds when bare)\n"
	       "      --end T         only rows that start at or before T\n"
	       "      --nvtx R[@D]    only rows that overlap an instance of NVTX range R\n"
	       "                      (in domain D)\n"
	       "      --rank N        only the processes of rank N (a merged distributed run)\n\n"
	       "Reports:\n");
	for (size_t i = 0; n[i]; i++)
		printf("  %-22s %s\n", n[i], stats_report_title(n[i]));
	printf("\nDefault set:");
	for (size_t i = 0; d[i]; i++)
		printf(" %s", d[i]);
	printf("\n");
}

/* ---- progress on a terminal ---- */

struct progress {
	int tty;
	uint64_t t0, last;
	int shown;
};

static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	uint64_t now;

	if (!p->tty || !total)
		return;
	now = now_mono_ns();
	if (now - p->t0 < 1000000000ull || now - p->last < 100000000ull)
		return;
	p->last = now;
	p->shown = 1;
	fprintf(stderr, "\rgpuscope stats: reading %3.0f%%", 100.0 * (double)done / (double)total);
}

static void progress_done(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

/* ---- options ---- */

struct stats_args {
	const char **reports;
	size_t nreports, alloc;
	char **owned;              /* copies made when splitting NAME,NAME */
	size_t nowned, aowned;
	const char *format, *output, *input;
	struct stats_opts o;
	char *nvtx;
	int rank;                  /* --rank N, -1 for all */
};

/* The value of option @name in argv[*i] ("--name V", "--name=V", "-x V"), or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *lng, const char *shrt,
			     int *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);

	if (!strncmp(a, lng, n) && a[n] == '=')
		return a + n + 1;
	if (!strcmp(a, lng) || (shrt && !strcmp(a, shrt))) {
		if (*i + 1 >= argc) {
			error("option '%s' needs a value", a);
			*bad = 1;
			return NULL;
		}
		return argv[++*i];
	}
	return NULL;
}

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

static void args_release(struct stats_args *a)
{
	for (size_t i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->reports);
	free(a->nvtx);
}

/* 0, 1 for --help, or EXIT_USAGE after an error */
static int parse_args(int argc, char **argv, struct stats_args *a)
{
	int bad = 0;

	a->format = "table";
	a->rank = -1;
	a->o.timeunit = "ns";
	a->o.relative = 1;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
		if ((v = opt_value(argc, argv, &i, "--report", "-r", &bad))) {
			add_reports(a, v);
		} else if ((v = opt_value(argc, argv, &i, "--format", "-f", &bad))) {
			a->format = v;
		} else if ((v = opt_value(argc, argv, &i, "--output", "-o", &bad))) {
			a->output = v;
		} else if ((v = opt_value(argc, argv, &i, "--timeunit", NULL, &bad))) {
			a->o.timeunit = v;
		} else if ((v = opt_value(argc, argv, &i, "--start", NULL, &bad))) {
			if (parse_duration_ns(v, &a->o.start, "s") < 0)
				return usage_error(stats_usage, "bad time '%s' for --start", v);
		} else if ((v = opt_value(argc, argv, &i, "--end", NULL, &bad))) {
			if (parse_duration_ns(v, &a->o.end, "s") < 0)
				return usage_error(stats_usage, "bad time '%s' for --end", v);
		} else if ((v = opt_value(argc, argv, &i, "--nvtx", NULL, &bad))) {
			const char *at = strrchr(v, '@');
			free(a->nvtx);
			a->nvtx = xstrdup(v);
			if (at) {
				a->nvtx[at - v] = '\0';
				a->o.nvtx_domain = a->nvtx + (at - v) + 1;
			}
			a->o.nvtx = a->nvtx;
		} else if ((v = opt_value(argc, argv, &i, "--rank", NULL, &bad))) {
			char *e;
			a->rank = (int)strtol(v, &e, 10);
			if (*e || a->rank < 0)
				return usage_error(stats_usage, "bad rank '%s'", v);
		} else if (bad) {
			return usage_error(stats_usage, NULL);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error(stats_usage, "unknown option '%s'", argv[i]);
		} else if (a->input) {
			return usage_error(stats_usage, "more than one input ('%s' and '%s')",
					   a->input, argv[i]);
		} else {
			a->input = argv[i];
		}
		if (bad)
			return usage_error(stats_usage, NULL);
	}
	if (!a->input)
		return usage_error(stats_usage, "no report given");
	if (strcmp(a->format, "table") && strcmp(a->format, "csv") && strcmp(a->format, "json"))
		return usage_error(stats_usage, "unknown format '%s' (table, csv or json)",
				   a->format);
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
	return 0;
}

/* ---- output ---- */

static int write_tables(FILE *f, const char *path, struct stats_table *t, size_t n,
			const struct stats_args *a)
{
	int json = !strcmp(a->format, "json"), csv = !strcmp(a->format, "csv");

	if (json)
		fputs("[\n", f);
	for (size_t i = 0; i < n; i++) {
		if (json && i)
			fputs(",\n", f);
		if (csv && i)
			fputc('\n', f);
		if (stats_format(f, &t[i], a->format, a->o.timeunit) < 0)
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

/* CSV of several reports to a file: one file per report, BASE_REPORT.csv (as nsys does). */
static int write_csv_files(struct stats_table *t, size_t n, const struct stats_args *a)
{
	size_t len = strlen(a->output);

	if (len > 4 && !strcmp(a->output + len - 4, ".csv"))
		len -= 4;
	for (size_t i = 0; i < n; i++) {
		char *path = xstrfmt("%.*s_%s.csv", (int)len, a->output, t[i].report);
		FILE *f = fopen(path, "w");
		int ret;

		if (!f) {
			error("cannot create '%s': %s", path, strerror(errno));
			free(path);
			return -1;
		}
		ret = stats_format(f, &t[i], "csv", a->o.timeunit);
		if (!t[i].nrows && t[i].empty_reason)
			fprintf(stderr, "note: %s\n", t[i].empty_reason);
		if (ret < 0)
			fclose(f);   /* stats_format() said why */
		else if (close_checked(f, path) < 0)
			ret = -1;
		if (ret < 0)
			remove_partial_output(path);
		free(path);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int output(struct stats_table *t, size_t n, const struct stats_args *a)
{
	FILE *f;

	if (!a->output || !strcmp(a->output, "-")) {
		/* a failed standard output is reported once, by main()'s finish_stdout() */
		int ret;
		set_error_quiet(1);
		ret = write_tables(stdout, "standard output", t, n, a);
		set_error_quiet(0);
		return ret;
	}
	if (!strcmp(a->format, "csv") && n > 1)
		return write_csv_files(t, n, a);
	f = fopen(a->output, "w");
	if (!f)
		return error("cannot create '%s': %s", a->output, strerror(errno));
	if (write_tables(f, a->output, t, n, a) < 0) {
		fclose(f);
		remove_partial_output(a->output);
		return -1;
	}
	if (close_checked(f, a->output) < 0) {
		remove_partial_output(a->output);
		return -1;
	}
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_args a = { 0 };
	struct stats_table *tables;
	struct progress p = { 0 };
	size_t done = 0;
	int ret, status = EXIT_OK;

	/*
	 * The summaries grow one array of values per group.  glibc raises its
	 * mmap threshold after big frees, after which grown arrays are copied
	 * within the heap and the old copies stay resident; a fixed threshold
	 * keeps big arrays in mmap, where realloc moves pages instead (about
	 * 12% less peak memory on the 10M-event benchmark, 1 and 8 streams).
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	ret = parse_args(argc, argv, &a);
	if (ret) {
		if (ret == 1) {
			print_help();
			ret = EXIT_OK;
		}
		args_release(&a);
		return ret;
	}
	if (output_creatable(a.output) < 0) {
		args_release(&a);
		return EXIT_USAGE;
	}
	tables = xcalloc(a.nreports, sizeof(*tables));
	p.tty = isatty(2);
	p.t0 = now_mono_ns();
	/*
	 * A gpuscope report is loaded as load_input() loads it
	 * (model_load_report), but lean: see stats_run_report().  Other
	 * inputs go through load_input() and the importers.
	 */
	if (trace_is_report(a.input) == 1 && a.rank < 0) {
		ret = stats_run_report(a.input, a.reports, a.nreports, &a.o, tables, progress_cb, &p);
		progress_done(&p);
		done = ret < 0 ? 0 : a.nreports;
	} else {
		struct model m;
		model_init(&m);
		ret = load_input(&m, a.input);
		if (ret == 0 && a.rank >= 0)
			ret = model_keep_rank(&m, a.rank);
		if (ret == 0) {
			stats_print_warnings(&m);
			for (done = 0; done < a.nreports; done++)
				if (stats_run(&m, a.reports[done], &a.o, &tables[done]) < 0) {
					ret = -1;
					break;
				}
		}
		model_release(&m);
	}
	if (ret < 0)
		status = EXIT_USAGE;
	else if (output(tables, a.nreports, &a) < 0)
		status = EXIT_FAIL;
	for (size_t i = 0; i < done; i++)
		stats_table_release(&tables[i]);
	free(tables);
	args_release(&a);
	return status;
}
