/*
 * tables.c - CSV and JSON exports of every stats report and of the findings.
 *
 * CSV: one file per report, PREFIX_<report>.csv (as `nsys stats -o PREFIX`
 * names them), and PREFIX_findings.csv; with "-" all of them go to stdout,
 * each after a "# <report>" line.  JSON: one document holding every report
 * (the objects of `gpuscope stats --format json`) and the analysis (the
 * document of `gpuscope analyze --format json`).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#ifdef HAVE_GS_STATS
#include "../stats/stats.h"
#endif
#ifdef HAVE_GS_ANALYZE
#include "../analyze/analyze.h"
#endif

#if defined(HAVE_GS_STATS) && defined(HAVE_GS_ANALYZE)

/* Run @fn into a memory stream and append what it printed to @o; 0 or -1. */
static int capture_table(struct xout *o, const struct stats_table *t, const char *format)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return error("out of memory");
	ret = stats_format(f, t, format, "ns");
	if (fclose(f))
		ret = -1;
	if (!ret)
		xout_write(o, buf, len);
	free(buf);
	return ret;
}

static int capture_analysis(struct xout *o, const struct model *m, const struct analyze_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return error("out of memory");
	ret = analyze_print_json(f, m, r);
	if (fclose(f))
		ret = -1;
	while (!ret && len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (!ret)
		xout_write(o, buf, len);
	free(buf);
	return ret;
}

static void csv_field(struct xout *o, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		xout_str(o, s);
		return;
	}
	xout_ch(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			xout_ch(o, '"');
		xout_ch(o, *s);
	}
	xout_ch(o, '"');
}

static const char *severity_name(int s)
{
	return s == SEV_CRITICAL ? "critical" : s == SEV_WARNING ? "warning" : "info";
}

static void findings_csv(struct xout *o, const struct analyze_result *r)
{
	xout_str(o, "Rank,Rule,Severity,Gain (%),Title,Gain Formula,Evidence,Recommendation,Where (ns)\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = &r->findings[i];
		struct strbuf where = STRBUF_INIT;
		xout_u64(o, i + 1);
		xout_ch(o, ',');
		csv_field(o, f->id);
		xout_ch(o, ',');
		xout_str(o, severity_name(f->severity));
		xout_printf(o, ",%.1f,", f->gain * 100);
		csv_field(o, f->title ? f->title : "");
		xout_ch(o, ',');
		csv_field(o, f->gain_formula ? f->gain_formula : "");
		xout_ch(o, ',');
		csv_field(o, f->evidence ? f->evidence : "");
		xout_ch(o, ',');
		csv_field(o, f->recommendation ? f->recommendation : "");
		xout_ch(o, ',');
		for (size_t k = 0; k < f->nwhere; k++)
			strbuf_addf(&where, "%s%llu-%llu", k ? " " : "", (unsigned long long)f->where[k].start,
				    (unsigned long long)f->where[k].end);
		csv_field(o, where.buf ? where.buf : "");
		xout_ch(o, '\n');
		strbuf_release(&where);
	}
}

int export_csv(const struct export_input *in, const char *path)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	const char *const *names = stats_report_names();
	struct stats_opts so = { 0 };
	const struct analyze_result *r = in->findings;
	struct xout o;
	int to_stdout = !strcmp(path, "-"), ret = 0;
	size_t nfiles = 0;

	if (to_stdout && xout_open(&o, "-", 0))
		return -1;
	for (size_t i = 0; names[i] && !ret; i++) {
		struct stats_table t;
		if (stats_run(m, names[i], &so, &t)) {
			ret = -1;
			break;
		}
		if (to_stdout) {
			xout_printf(&o, "%s# %s: %s\n", i ? "\n" : "", names[i], t.title ? t.title : "");
			ret = capture_table(&o, &t, "csv");
		} else {
			char *file = xstrfmt("%s_%s.csv", path, names[i]);
			if (xout_open(&o, file, opt->force)) {
				ret = -1;
			} else {
				ret = capture_table(&o, &t, "csv");
				ret = xout_close(&o, !ret) || ret;
				nfiles++;
			}
			free(file);
		}
		stats_table_release(&t);
	}
	if (!ret && r) {
		if (to_stdout) {
			xout_str(&o, "\n# findings\n");
			findings_csv(&o, r);
		} else {
			char *file = xstrfmt("%s_findings.csv", path);
			if (xout_open(&o, file, opt->force)) {
				ret = -1;
			} else {
				findings_csv(&o, r);
				ret = xout_close(&o, 1);
			}
			free(file);
		}
	}
	if (to_stdout)
		ret = xout_close(&o, !ret) || ret ? -1 : 0;
	else if (!ret && opt->progress)
		fprintf(stderr, "gpuscope: wrote %zu stats reports and the findings as '%s_*.csv'\n", nfiles,
			path);
	return ret ? -1 : 0;
}

int export_json(const struct export_input *in, struct xout *o)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	const char *const *names = stats_report_names();
	struct stats_opts so = { 0 };
	int ret = 0;

	xout_str(o, "{\"schema\":\"gpuscope-export/1\",\"source\":");
	xout_json_str(o, opt->title ? opt->title : (m->path ? m->path : ""));
	xout_str(o, ",\n\"reports\":[\n");
	for (size_t i = 0; names[i] && !ret; i++) {
		struct stats_table t;
		if (stats_run(m, names[i], &so, &t))
			return -1;
		if (i)
			xout_str(o, ",\n");
		ret = capture_table(o, &t, "json");
		stats_table_release(&t);
	}
	if (ret)
		return -1;
	xout_str(o, "],\n\"analysis\":");
	if (in->findings)
		ret = capture_analysis(o, m, in->findings);
	else
		xout_str(o, "null");
	xout_str(o, "}\n");
	return ret || o->failed ? -1 : 0;
}

#else

int export_csv(const struct export_input *in, const char *path)
{
	(void)in;
	return error("'%s': csv export needs the stats and analyze parts in this build", path);
}

int export_json(const struct export_input *in, struct xout *o)
{
	(void)in;
	(void)o;
	return error("json export needs the stats and analyze parts in this build");
}

#endif
