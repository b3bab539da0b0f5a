/*
 * compare.c - verdicts, output formats and baseline files (see diff.h).
 */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *verdict_name(int verdict)
{
	switch (verdict) {
	case V_SAME: return "within noise";
	case V_BETTER: return "better";
	case V_WORSE: return "worse";
	case V_CHANGED: return "changed";
	case V_ONLY_BEFORE: return "gone";
	case V_ONLY_AFTER: return "new";
	}
	return "?";
}

/*
 * The noise rule.  A metric has moved only when (1) the change is larger
 * than the threshold for its kind (relative for times/counts/bytes, absolute
 * points for fractions), and (2) when a side has several runs, the other
 * side's median lies outside that side's whole range (min..max): overlapping
 * runs are noise however far the medians are apart.
 */
static int verdict_of(const struct run_metric *b, const struct run_metric *a,
		      const struct diff_opts *o, double *delta, double *rel)
{
	double d = a->value - b->value, thr;
	int moved;

	*delta = d;
	*rel = fabs(b->value) > 0 ? d / fabs(b->value) : 0;
	if (a->kind == MK_FRACTION)
		moved = fabs(d) > o->noise_points;
	else if (b->value == 0)
		moved = fabs(a->value) > 0 && (a->kind != MK_TIME || a->value > 1e-6);
	else {
		thr = o->noise * fabs(b->value);
		moved = fabs(d) > thr;
	}
	if (moved && b->n > 1 && a->value >= b->lo && a->value <= b->hi)
		moved = 0;
	if (moved && a->n > 1 && b->value >= a->lo && b->value <= a->hi)
		moved = 0;
	/* one run a side: each run's own uncertainty over its steps */
	if (moved && b->n == 1 && a->n == 1 && b->ci_n && a->ci_n &&
	    a->ci_lo <= b->ci_hi && b->ci_lo <= a->ci_hi &&
	    a->value >= b->ci_lo && a->value <= b->ci_hi && b->value >= a->ci_lo && b->value <= a->ci_hi)
		moved = 0;
	if (!moved)
		return V_SAME;
	if (b->dir == DIR_NEUTRAL)
		return V_CHANGED;
	return (d < 0) == (b->dir == DIR_LOWER) ? V_BETTER : V_WORSE;
}

static const struct run_finding *finding_of(const struct run_summary *s, const char *id, double min)
{
	const struct run_finding *best = NULL;

	for (size_t i = 0; i < s->nf; i++)
		if (!strcmp(s->f[i].id, id) && run_finding_counts(&s->f[i], min) && (!best || s->f[i].gain > best->gain))
			best = &s->f[i];
	return best;
}

void diff_compare(const struct run_summary *before, const struct run_summary *after,
		  const struct diff_opts *o, struct diff_result *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < before->n; i++) {
		struct diff_row *row;
		ALLOC_GROW(r->rows, r->n + 1, r->alloc);
		row = &r->rows[r->n++];
		memset(row, 0, sizeof(*row));
		row->before = &before->m[i];
		row->after = run_metric_find(after, before->m[i].key);
		row->verdict = row->after ? verdict_of(row->before, row->after, o, &row->delta, &row->rel)
					  : V_ONLY_BEFORE;
	}
	for (size_t i = 0; i < after->n; i++) {
		struct diff_row *row;
		if (run_metric_find(before, after->m[i].key))
			continue;
		ALLOC_GROW(r->rows, r->n + 1, r->alloc);
		row = &r->rows[r->n++];
		memset(row, 0, sizeof(*row));
		row->after = &after->m[i];
		row->verdict = V_ONLY_AFTER;
	}
	r->resolved = xcalloc(before->nf + 1, sizeof(*r->resolved));
	r->remaining_before = xcalloc(before->nf + 1, sizeof(*r->remaining_before));
	r->remaining_after = xcalloc(before->nf + 1, sizeof(*r->remaining_after));
	r->added = xcalloc(after->nf + 1, sizeof(*r->added));
	for (size_t i = 0; i < before->nf; i++) {
		const struct run_finding *b = &before->f[i], *a;
		if (!run_finding_counts(b, o->finding_min_gain) || finding_of(before, b->id, o->finding_min_gain) != b)
			continue;
		a = finding_of(after, b->id, o->finding_min_gain);
		if (a) {
			r->remaining_before[r->nremaining] = b;
			r->remaining_after[r->nremaining++] = a;
		} else {
			r->resolved[r->nresolved++] = b;
		}
	}
	for (size_t i = 0; i < after->nf; i++) {
		const struct run_finding *a = &after->f[i];
		if (!run_finding_counts(a, o->finding_min_gain) || finding_of(after, a->id, o->finding_min_gain) != a)
			continue;
		if (!finding_of(before, a->id, o->finding_min_gain))
			r->added[r->nadded++] = a;
	}
}

void diff_result_release(struct diff_result *r)
{
	free(r->rows);
	free(r->resolved);
	free(r->remaining_before);
	free(r->remaining_after);
	free(r->added);
	memset(r, 0, sizeof(*r));
}

const char *metric_fmt(char *buf, size_t n, const struct run_metric *m, double v)
{
	switch (m->kind) {
	case MK_TIME: return fmt_duration(buf, n, v * 1e9);
	case MK_FRACTION: snprintf(buf, n, "%.1f%%", v * 100); return buf;
	case MK_BYTES: return fmt_bytes(buf, n, v);
	default:
		if (fabs(v - round(v)) < 1e-9)
			snprintf(buf, n, "%.0f", v);
		else
			snprintf(buf, n, "%.2f", v);
		return buf;
	}
}

static const char *change_str(char *buf, size_t n, const struct diff_row *row)
{
	const struct run_metric *m = row->before ? row->before : row->after;

	if (!row->before || !row->after) {
		snprintf(buf, n, "-");
	} else if (m->kind == MK_FRACTION) {
		snprintf(buf, n, "%+.1f pt", row->delta * 100);
	} else if (row->before->value != 0) {
		snprintf(buf, n, "%+.1f%%", row->rel * 100);
	} else {
		char v[48];
		snprintf(buf, n, "+%s", metric_fmt(v, sizeof(v), m, row->delta));
	}
	return buf;
}

static const char *value_str(char *buf, size_t n, const struct run_metric *m)
{
	char v[48], lo[48], hi[48];

	if (!m)
		return "-";
	metric_fmt(v, sizeof(v), m, m->value);
	if (m->n > 1 && m->hi > m->lo)
		snprintf(buf, n, "%s [%s..%s]", v, metric_fmt(lo, sizeof(lo), m, m->lo),
			 metric_fmt(hi, sizeof(hi), m, m->hi));
	else
		snprintf(buf, n, "%s", v);
	return buf;
}

static void json_str(FILE *f, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_json_str(&sb, s ? s : "");
	fprintf(f, "\"%s\"", sb.buf ? sb.buf : "");
	strbuf_release(&sb);
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void html_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/*
 * Row labels for the text table.  A kernel row ("kernel_s:NAME", labelled
 * "kernel NAME[ per step]" by summary.c with the name as kernel_label()
 * gives it) is named by the kernel's base name (kernel_base_name(): no
 * scopes, template arguments or parameters), the part that tells kernels
 * apart; where two rows would read the same (instantiations of one
 * template), both get the base name with its template arguments, and rows
 * still alike a " (2)", " (3)" ... so that every row reads differently.
 * Other rows keep their label.  Returns @n malloc'ed strings.
 */
#define KERNEL_KEY "kernel_s:"
#define LABEL_MAX 64 /* widest label column: beyond it a label is cut with "..." */

static int is_kernel_row(const struct run_metric *m)
{
	return !strncmp(m->key, KERNEL_KEY, strlen(KERNEL_KEY)) && !strncmp(m->label, "kernel ", 7);
}

static char *kernel_row_label(const struct run_metric *m, int with_args)
{
	const char *per = strstr(m->label, " per step") ? " per step" : "";
	char *name = xstrndup(m->label + 7, strlen(m->label) - 7 - strlen(per)), *ret;
	const char *base;
	size_t len;

	base = kernel_base_name(name, &len);
	if (with_args && base[len] == '<') {
		/* the template argument list that follows the base name, when it closes */
		size_t k = len;
		int depth = 0;
		do {
			depth += base[k] == '<' ? 1 : base[k] == '>' ? -1 : 0;
			k++;
		} while (base[k] && depth);
		if (!depth)
			len = k;
	}
	ret = xstrfmt("kernel %.*s%s", (int)len, base, per);
	free(name);
	return ret;
}

/* Is label @i the same as another row's? */
static int label_dup(char **lab, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (k != i && !strcmp(lab[k], lab[i]))
			return 1;
	return 0;
}

static char **row_labels(const struct diff_result *r)
{
	char **lab = xcalloc(r->n + 1, sizeof(*lab));
	unsigned char *dup = xcalloc(r->n + 1, 1);

	for (size_t i = 0; i < r->n; i++) {
		const struct run_metric *m = r->rows[i].before ? r->rows[i].before : r->rows[i].after;
		lab[i] = is_kernel_row(m) ? kernel_row_label(m, 0) : xstrdup(m->label);
	}
	/* alike base names: the longer form, for every row of the group at once */
	for (size_t i = 0; i < r->n; i++)
		dup[i] = (unsigned char)label_dup(lab, r->n, i);
	for (size_t i = 0; i < r->n; i++) {
		const struct run_metric *m = r->rows[i].before ? r->rows[i].before : r->rows[i].after;
		if (dup[i] && is_kernel_row(m)) {
			free(lab[i]);
			lab[i] = kernel_row_label(m, 1);
		}
	}
	/* still alike: the second and later of a group are numbered */
	for (size_t i = 0; i < r->n; i++) {
		size_t nth = 1;
		for (size_t k = 0; k < i; k++)
			nth += !strcmp(lab[k], lab[i]);
		dup[i] = nth > 255 ? 255 : (unsigned char)nth;
	}
	for (size_t i = r->n; i-- > 0;) {
		if (dup[i] > 1) {
			char *old = lab[i];
			lab[i] = xstrfmt("%s (%u)", old, (unsigned)dup[i]);
			free(old);
		}
	}
	free(dup);
	return lab;
}

static void print_text(FILE *f, const struct run_summary *b, const struct run_summary *a,
		       const struct diff_result *r)
{
	char v1[128], v2[128], c[64];
	char **lab = row_labels(r);
	int wl = (int)strlen("metric"), wv = 22;

	/* column widths from the widest cell: several runs a side print "v [lo..hi]" */
	for (size_t i = 0; i < r->n; i++) {
		int l = (int)strlen(lab[i]);
		if (l > wl)
			wl = l > LABEL_MAX ? LABEL_MAX : l;
		l = (int)strlen(value_str(v1, sizeof(v1), r->rows[i].before));
		wv = l > wv ? l : wv;
		l = (int)strlen(value_str(v1, sizeof(v1), r->rows[i].after));
		wv = l > wv ? l : wv;
	}

	fprintf(f, "before: %s (%d run%s)\nafter:  %s (%d run%s)\n", b->source, b->runs,
		b->runs == 1 ? "" : "s", a->source, a->runs, a->runs == 1 ? "" : "s");
	fprintf(f, "steps:  %s | %s\n\n", b->step_source ? b->step_source : "not found",
		a->step_source ? a->step_source : "not found");
	fprintf(f, "%-*s %*s %*s %10s  %s\n", wl, "metric", wv, "before", wv, "after", "change", "verdict");
	for (size_t i = 0; i < r->n; i++) {
		const struct diff_row *row = &r->rows[i];
		if ((int)strlen(lab[i]) > wl)
			memcpy(lab[i] + wl - 3, "...", 4);
		fprintf(f, "%-*s %*s %*s %10s  %s\n", wl, lab[i], wv, value_str(v1, sizeof(v1), row->before), wv,
			value_str(v2, sizeof(v2), row->after), change_str(c, sizeof(c), row),
			verdict_name(row->verdict));
		free(lab[i]);
	}
	free(lab);
	fprintf(f, "\nfindings resolved: %zu\n", r->nresolved);
	for (size_t i = 0; i < r->nresolved; i++)
		fprintf(f, "  - %s: %s (est. gain was %.0f%%)\n", r->resolved[i]->id, r->resolved[i]->title,
			r->resolved[i]->gain * 100);
	fprintf(f, "findings remaining: %zu\n", r->nremaining);
	for (size_t i = 0; i < r->nremaining; i++)
		fprintf(f, "  - %s: %s (est. gain %.0f%% -> %.0f%%)\n", r->remaining_after[i]->id,
			r->remaining_after[i]->title, r->remaining_before[i]->gain * 100,
			r->remaining_after[i]->gain * 100);
	fprintf(f, "findings new: %zu\n", r->nadded);
	for (size_t i = 0; i < r->nadded; i++)
		fprintf(f, "  - %s: %s (est. gain %.0f%%)\n", r->added[i]->id, r->added[i]->title,
			r->added[i]->gain * 100);
}

static void json_metric(FILE *f, const struct run_metric *m)
{
	if (!m) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"value\":%.9g,\"min\":%.9g,\"max\":%.9g,\"runs\":%d}", m->value, m->lo, m->hi, m->n);
}

static void json_findings(FILE *f, const struct run_finding *const *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{\"id\":" : "{\"id\":", f);
		json_str(f, v[i]->id);
		fputs(",\"title\":", f);
		json_str(f, v[i]->title);
		fprintf(f, ",\"gain\":%.6f}", v[i]->gain);
	}
	fputc(']', f);
}

static void print_json(FILE *f, const struct run_summary *b, const struct run_summary *a,
		       const struct diff_result *r)
{
	fputs("{\"before\":{\"source\":", f);
	json_str(f, b->source);
	fprintf(f, ",\"runs\":%d},\"after\":{\"source\":", b->runs);
	json_str(f, a->source);
	fprintf(f, ",\"runs\":%d},\"metrics\":[", a->runs);
	for (size_t i = 0; i < r->n; i++) {
		const struct diff_row *row = &r->rows[i];
		const struct run_metric *m = row->before ? row->before : row->after;
		fputs(i ? ",{\"key\":" : "{\"key\":", f);
		json_str(f, m->key);
		fputs(",\"label\":", f);
		json_str(f, m->label);
		fputs(",\"before\":", f);
		json_metric(f, row->before);
		fputs(",\"after\":", f);
		json_metric(f, row->after);
		fprintf(f, ",\"delta\":%.9g,\"rel\":%.6f,\"verdict\":\"%s\"}", row->delta, row->rel,
			verdict_name(row->verdict));
	}
	fputs("],\"findings\":{\"resolved\":", f);
	json_findings(f, r->resolved, r->nresolved);
	fputs(",\"remaining\":", f);
	json_findings(f, r->remaining_after, r->nremaining);
	fputs(",\"new\":", f);
	json_findings(f, r->added, r->nadded);
	fputs("}}\n", f);
}

static void print_csv(FILE *f, const struct diff_result *r)
{
	fputs("key,label,before,after,delta,rel,verdict\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct diff_row *row = &r->rows[i];
		const struct run_metric *m = row->before ? row->before : row->after;
		csv_str(f, m->key);
		fputc(',', f);
		csv_str(f, m->label);
		if (row->before)
			fprintf(f, ",%.9g", row->before->value);
		else
			fputs(",", f);
		if (row->after)
			fprintf(f, ",%.9g", row->after->value);
		else
			fputs(",", f);
		fprintf(f, ",%.9g,%.6f,%s\n", row->delta, row->rel, verdict_name(row->verdict));
	}
	for (size_t i = 0; i < r->nresolved; i++) {
		fputs("finding:", f);
		csv_str(f, r->resolved[i]->id);
		fprintf(f, ",resolved,%.6f,,,,\n", r->resolved[i]->gain);
	}
}

static void print_html(FILE *f, const struct run_summary *b, const struct run_summary *a,
		       const struct diff_result *r)
{
	char v1[128], v2[128], c[64];

	fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>gpuscope diff</title>"
	      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
	      "td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}"
	      "td:first-child,th:first-child{text-align:left}.better{color:#080}.worse{color:#b00}"
	      "</style></head><body><h1>gpuscope diff</h1><p>before: ", f);
	html_str(f, b->source);
	fputs("<br>after: ", f);
	html_str(f, a->source);
	fputs("</p><table><tr><th>metric</th><th>before</th><th>after</th><th>change</th>"
	      "<th>verdict</th></tr>\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct diff_row *row = &r->rows[i];
		const struct run_metric *m = row->before ? row->before : row->after;
		fputs("<tr><td>", f);
		html_str(f, m->label);
		fputs("</td><td>", f);
		html_str(f, value_str(v1, sizeof(v1), row->before));
		fputs("</td><td>", f);
		html_str(f, value_str(v2, sizeof(v2), row->after));
		fprintf(f, "</td><td>%s</td><td class=\"%s\">%s</td></tr>\n", change_str(c, sizeof(c), row),
			row->verdict == V_BETTER ? "better" : row->verdict == V_WORSE ? "worse" : "",
			verdict_name(row->verdict));
	}
	fputs("</table><h2>Findings</h2><ul>", f);
	for (size_t i = 0; i < r->nresolved; i++) {
		fputs("<li class=\"better\">resolved: ", f);
		html_str(f, r->resolved[i]->title);
		fputs("</li>", f);
	}
	for (size_t i = 0; i < r->nremaining; i++) {
		fputs("<li>remaining: ", f);
		html_str(f, r->remaining_after[i]->title);
		fputs("</li>", f);
	}
	for (size_t i = 0; i < r->nadded; i++) {
		fputs("<li class=\"worse\">new: ", f);
		html_str(f, r->added[i]->title);
		fputs("</li>", f);
	}
	fputs("</ul></body></html>\n", f);
}

int diff_print(FILE *f, const char *format, const struct run_summary *before,
	       const struct run_summary *after, const struct diff_result *r)
{
	if (!strcmp(format, "json"))
		print_json(f, before, after, r);
	else if (!strcmp(format, "csv"))
		print_csv(f, r);
	else if (!strcmp(format, "html"))
		print_html(f, before, after, r);
	else
		print_text(f, before, after, r);
	return ferror(f) ? -1 : 0;
}

/* ---- baseline files ----
 * Text, one record per line, fields separated by tabs:
 *   gpuscope-baseline	1
 *   source	<text>
 *   runs	<n>
 *   steps	<text>
 *   metric	<key>	<dir>	<kind>	<value>	<min>	<max>	<n>	<label>
 *   finding	<id>	<gain>	<title>	<flags>   (flags: FINDING_FATAL, FINDING_NO_TIME; absent in older files: 0)
 */

static void tsv_clean(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
}

/*
 * Written under a temporary name and renamed over @path, so a write that
 * fails (a full disk) leaves the baseline that was there, not a short file.
 */
int run_summary_save(const struct run_summary *s, const char *path)
{
	char *tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	int ret;

	if (!f) {
		error("cannot create '%s': %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	fprintf(f, "gpuscope-baseline\t1\n");
	{
		char *src = xstrdup(s->source ? s->source : "");
		tsv_clean(src);
		fprintf(f, "source\t%s\nruns\t%d\n", src, s->runs);
		free(src);
	}
	if (s->step_source) {
		char *st = xstrdup(s->step_source);
		tsv_clean(st);
		fprintf(f, "steps\t%s\n", st);
		free(st);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct run_metric m = s->m[i];
		tsv_clean(m.key);
		tsv_clean(m.label);
		fprintf(f, "metric\t%s\t%d\t%d\t%.17g\t%.17g\t%.17g\t%d\t%s\n", m.key, m.dir, m.kind,
			m.value, m.lo, m.hi, m.n, m.label);
	}
	for (size_t i = 0; i < s->nf; i++) {
		struct run_finding fd = s->f[i];
		tsv_clean(fd.title);
		/* the flags after the title: older readers take four fields and ignore the rest */
		fprintf(f, "finding\t%s\t%.9g\t%s\t%u\n", fd.id, fd.gain, fd.title, fd.flags);
	}
	ret = close_checked(f, path);
	if (!ret && rename(tmp, path) < 0)
		ret = error("cannot write '%s': %s", path, strerror(errno));
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

/* Split @line at tabs into at most @max fields; returns the count. */
static int split_tabs(char *line, char **fields, int max)
{
	int n = 0;

	fields[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == '\t') {
			*p = '\0';
			fields[n++] = p + 1;
		}
	}
	return n;
}

int run_summary_load(struct run_summary *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return error("cannot open baseline '%s': %s", path, strerror(errno));
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *fl[10];
		int n;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		n = split_tabs(line, fl, 10);
		if (lineno == 1) {
			if (n < 2 || strcmp(fl[0], "gpuscope-baseline")) {
				error("'%s' is not a gpuscope baseline", path);
				goto bad;
			}
			if (atoi(fl[1]) != 1) {
				error("baseline '%s': version %s is not supported", path, fl[1]);
				goto bad;
			}
		} else if (!strcmp(fl[0], "source") && n >= 2) {
			free(s->source);
			s->source = xstrdup(fl[1]);
		} else if (!strcmp(fl[0], "runs") && n >= 2) {
			s->runs = atoi(fl[1]);
		} else if (!strcmp(fl[0], "steps") && n >= 2) {
			free(s->step_source);
			s->step_source = xstrdup(fl[1]);
		} else if (!strcmp(fl[0], "metric") && n >= 9) {
			struct run_metric *m;
			ALLOC_GROW(s->m, s->n + 1, s->alloc);
			m = &s->m[s->n++];
			memset(m, 0, sizeof(*m));
			snprintf(m->key, sizeof(m->key), "%s", fl[1]);
			m->dir = atoi(fl[2]);
			m->kind = atoi(fl[3]);
			m->value = strtod(fl[4], NULL);
			m->lo = strtod(fl[5], NULL);
			m->hi = strtod(fl[6], NULL);
			m->n = atoi(fl[7]);
			snprintf(m->label, sizeof(m->label), "%s", fl[8]);
			if (!isfinite(m->value) || m->kind < MK_TIME || m->kind > MK_BYTES) {
				error("baseline '%s': line %d is corrupt", path, lineno);
				goto bad;
			}
		} else if (!strcmp(fl[0], "finding") && n >= 4) {
			struct run_finding *fd;
			ALLOC_GROW(s->f, s->nf + 1, s->allocf);
			fd = &s->f[s->nf++];
			memset(fd, 0, sizeof(*fd));
			snprintf(fd->id, sizeof(fd->id), "%s", fl[1]);
			fd->gain = strtod(fl[2], NULL);
			snprintf(fd->title, sizeof(fd->title), "%s", fl[3]);
			if (n >= 5)
				fd->flags = (unsigned)strtoul(fl[4], NULL, 10) & (FINDING_FATAL | FINDING_NO_TIME);
		} else {
			error("baseline '%s': line %d is not understood", path, lineno);
			goto bad;
		}
	}
	free(line);
	fclose(f);
	if (lineno == 0)
		return error("baseline '%s' is empty", path);
	if (!s->source)
		s->source = xstrdup(path);
	return 0;
bad:
	free(line);
	fclose(f);
	run_summary_release(s);
	return -1;
}
