/*
 * html.c - one self-contained HTML file that explains a run: summary,
 * findings with their evidence, GPU utilisation over time, a per-stream
 * timeline overview, top kernels, copies by kind, NVTX ranges, CUDA API
 * calls and GPU metric plots.
 *
 * Charts are inline SVG written here (no chart library, no script but one
 * line that marks the page ready, no external URL: it reads offline and
 * prints).  Time series are binned to at most CHART_BINS columns, so the file
 * stays small whatever the size of the run; every number shown comes from
 * the stats reports and the analysis, as `gpuscope stats` and `analyze`
 * print them.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

#ifdef HAVE_GS_STATS
#include "../stats/stats.h"
#endif
#ifdef HAVE_GS_ANALYZE
#include "../analyze/analyze.h"
#endif

#define CHART_BINS 600    /* columns of the time charts */
#define CHART_W 900       /* SVG width, px */
#define LABEL_W 170       /* left margin for lane labels */
#define TABLE_ROWS 25     /* rows shown per stats table */

static void esc(struct xout *o, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *rep;
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: continue;
		}
		xout_write(o, run, (size_t)(s - run));
		xout_str(o, rep);
		run = s + 1;
	}
	xout_write(o, run, (size_t)(s - run));
}

/* Text shortened to @max bytes (on a UTF-8 boundary) with an ellipsis. */
static void esc_short(struct xout *o, const char *s, size_t max)
{
	size_t n = strlen(s);
	char *t;

	if (n <= max) {
		esc(o, s);
		return;
	}
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	t = xstrndup(s, max);
	esc(o, t);
	xout_str(o, "\xe2\x80\xa6");
	free(t);
}

static const char style[] =
	"<style>\n"
	"body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:24px auto;max-width:1100px;"
	"color:#1d232b;background:#fff;line-height:1.4}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde3;"
	"padding-bottom:4px}\n"
	".sub{color:#5b6673;font-size:13px}\n"
	".cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}\n"
	".card{border:1px solid #d8dde3;border-radius:6px;padding:8px 12px;min-width:120px}\n"
	".card b{display:block;font-size:19px}.card span{font-size:12px;color:#5b6673}\n"
	"table{border-collapse:collapse;font-size:12.5px;margin:6px 0}\n"
	"th,td{border-bottom:1px solid #e6e9ed;padding:3px 8px;text-align:right;vertical-align:top}\n"
	"th{background:#f3f5f7}td.s,th.s{text-align:left;max-width:520px;word-break:break-all}\n"
	".finding{border:1px solid #d8dde3;border-left:6px solid #8a96a3;border-radius:6px;padding:8px 12px;"
	"margin:10px 0}\n"
	".finding.critical{border-left-color:#c62828}.finding.warning{border-left-color:#ef8f00}\n"
	".finding h3{font-size:15px;margin:0 0 4px}.gain{float:right;font-weight:bold}\n"
	".finding ul{margin:4px 0 4px 18px;padding:0;font-size:13px}\n"
	".k{color:#5b6673;font-size:12.5px}.note{color:#5b6673;font-size:12.5px;font-style:italic}\n"
	"svg{display:block;margin:6px 0}svg text{font-size:11px;fill:#3b4550}\n"
	"</style>\n";

static void axis(struct xout *o, int x0, int y, int w, uint64_t span)
{
	char buf[32];

	for (int i = 0; i <= 4; i++) {
		int x = x0 + w * i / 4;
		fmt_duration(buf, sizeof(buf), (double)span * i / 4);
		xout_printf(o, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#b8c0c8'/>", x, y, x, y + 4);
		xout_printf(o, "<text x='%d' y='%d' text-anchor='%s'>", x, y + 15,
			    i == 0 ? "start" : i == 4 ? "end" : "middle");
		esc(o, buf);
		xout_str(o, "</text>");
	}
}

/* Add the part of [s, e) inside the chart to the bins. */
static void bin_add(double *bins, uint64_t t0, uint64_t span, uint64_t s, uint64_t e)
{
	double w = (double)span / CHART_BINS;
	double a, b;
	int i, j;

	if (e <= t0 || !span)
		return;
	if (s < t0)
		s = t0;
	a = (double)(s - t0) / w;
	b = (double)(e - t0) / w;
	if (b > CHART_BINS)
		b = CHART_BINS;
	i = (int)a;
	j = (int)b;
	if (i >= CHART_BINS)
		return;
	if (i == j) {
		bins[i] += (b - a) * w;
		return;
	}
	bins[i] += (i + 1 - a) * w;
	for (int k = i + 1; k < j && k < CHART_BINS; k++)
		bins[k] += w;
	if (j < CHART_BINS)
		bins[j] += (b - j) * w;
}

struct lane_key {
	uint32_t pid, device, stream;
};

static int cmp_lane(const void *pa, const void *pb)
{
	const struct lane_key *a = pa, *b = pb;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

static void util_chart(struct xout *o, const struct model *m, uint64_t t0, uint64_t span)
{
	struct interval_set busy = { 0 };
	double *bins = xcalloc(CHART_BINS, sizeof(double));
	const int h = 120, x0 = 40, w = CHART_W - x0 - 10;
	double wbin = (double)span / CHART_BINS;

	model_gpu_busy(m, UINT32_MAX, &busy);
	ivset_normalize(&busy);
	for (size_t i = 0; i < busy.n; i++)
		bin_add(bins, t0, span, busy.v[i].start, busy.v[i].end);
	xout_printf(o, "<svg width='%d' height='%d' role='img' aria-label='GPU utilisation over time'>", CHART_W,
		    h + 30);
	xout_printf(o, "<rect x='%d' y='5' width='%d' height='%d' fill='#f7f9fb' stroke='#d8dde3'/>", x0, w, h);
	xout_printf(o, "<text x='%d' y='14' text-anchor='end'>100%%</text><text x='%d' y='%d' text-anchor='end'>0%%</text>",
		    x0 - 4, x0 - 4, h + 5);
	xout_str(o, "<path fill='#3f7fbf' fill-opacity='0.55' stroke='#2b5f93' stroke-width='0.8' d='");
	xout_printf(o, "M%d %d", x0, h + 5);
	for (int i = 0; i < CHART_BINS; i++) {
		double f = wbin > 0 ? bins[i] / wbin : 0;
		double y = 5 + h * (1 - (f > 1 ? 1 : f));
		xout_printf(o, "L%.1f %.1fL%.1f %.1f", x0 + (double)w * i / CHART_BINS, y,
			    x0 + (double)w * (i + 1) / CHART_BINS, y);
	}
	xout_printf(o, "L%d %dZ'/>", x0 + w, h + 5);
	axis(o, x0, h + 5, w, span);
	xout_str(o, "</svg>\n");
	free(bins);
	ivset_release(&busy);
}

/*
 * The timeline overview: one row per (GPU, process, stream); a column shows
 * how busy the stream was in that slice of time (opacity) and with what
 * (colour of the kind with most time: kernels, copies, sets).
 */
static void stream_overview(struct xout *o, const struct model *m, uint64_t t0, uint64_t span)
{
	struct lane_key *keys = NULL;
	size_t n = 0, alloc = 0;
	struct u64map idx = { 0 };
	double *bins;
	static const char *const colour[3] = { "#3f7fbf", "#e08a1e", "#4caf50" };
	const int row_h = 16, x0 = LABEL_W, w = CHART_W - x0 - 10;
	double wbin = (double)span / CHART_BINS;

#define SEE(table)                                                                            \
	for (size_t i = 0; i < m->table.n; i++) {                                                 \
		uint64_t key = ((uint64_t)m->table.v[i].device << 48) ^                           \
			       ((uint64_t)m->table.v[i].pid << 24) ^ m->table.v[i].stream;         \
		uint64_t *v = u64map_get(&idx, key == UINT64_MAX ? 0 : key, 1);                   \
		if (!*v) {                                                                        \
			ALLOC_GROW(keys, n + 1, alloc);                                           \
			keys[n].pid = m->table.v[i].pid;                                          \
			keys[n].device = m->table.v[i].device;                                    \
			keys[n].stream = m->table.v[i].stream;                                    \
			*v = ++n;                                                                 \
		}                                                                                 \
	}
	SEE(kernels)
	SEE(memcpys)
	SEE(memsets)
	if (!n) {
		xout_str(o, "<p class='note'>no GPU work in this run</p>\n");
		u64map_release(&idx);
		return;
	}
	qsort(keys, n, sizeof(*keys), cmp_lane);
	u64map_release(&idx);
	memset(&idx, 0, sizeof(idx));
	for (size_t i = 0; i < n; i++) {
		uint64_t key = ((uint64_t)keys[i].device << 48) ^ ((uint64_t)keys[i].pid << 24) ^ keys[i].stream;
		*u64map_get(&idx, key == UINT64_MAX ? 0 : key, 1) = i + 1;
	}
	bins = xcalloc(n * 3 * CHART_BINS, sizeof(double));
#define FILL(table, kind)                                                                     \
	for (size_t i = 0; i < m->table.n; i++) {                                                 \
		uint64_t key = ((uint64_t)m->table.v[i].device << 48) ^                           \
			       ((uint64_t)m->table.v[i].pid << 24) ^ m->table.v[i].stream;         \
		size_t lane = *u64map_get(&idx, key == UINT64_MAX ? 0 : key, 0) - 1;              \
		bin_add(bins + (lane * 3 + kind) * CHART_BINS, t0, span, m->table.v[i].start,     \
			m->table.v[i].end);                                                       \
	}
	FILL(kernels, 0)
	FILL(memcpys, 1)
	FILL(memsets, 2)
#undef SEE
#undef FILL
	xout_printf(o, "<svg width='%d' height='%zu' role='img' aria-label='per-stream timeline overview'>", CHART_W,
		    n * (size_t)row_h + 30);
	for (size_t l = 0; l < n; l++) {
		int y = 4 + (int)l * row_h;
		xout_printf(o, "<text x='0' y='%d'>GPU %u stream %u", y + 11, keys[l].device, keys[l].stream);
		if (m->procs.n > 1)
			xout_printf(o, " pid %u", keys[l].pid);
		xout_str(o, "</text>");
		xout_printf(o, "<rect x='%d' y='%d' width='%d' height='%d' fill='#f7f9fb'/>", x0, y, w, row_h - 3);
		for (int b = 0; b < CHART_BINS; b++) {
			double *k = bins + (l * 3) * CHART_BINS + b;
			double tot = k[0] + k[CHART_BINS] + k[2 * CHART_BINS];
			int best = k[CHART_BINS] > k[0] ? 1 : 0;
			double f;
			if (k[2 * CHART_BINS] > k[best * CHART_BINS])
				best = 2;
			if (tot <= 0)
				continue;
			f = wbin > 0 ? tot / wbin : 1;
			if (f > 1)
				f = 1;
			xout_printf(o, "<rect x='%.1f' y='%d' width='%.2f' height='%d' fill='%s' fill-opacity='%.2f'/>",
				    x0 + (double)w * b / CHART_BINS, y, (double)w / CHART_BINS + 0.05, row_h - 3,
				    colour[best], 0.2 + 0.8 * f);
		}
	}
	axis(o, x0, 4 + (int)n * row_h, w, span);
	xout_str(o, "</svg>\n<p class='k'><span style='color:#3f7fbf'>&#9632;</span> kernels "
		    "<span style='color:#e08a1e'>&#9632;</span> copies <span style='color:#4caf50'>&#9632;</span> "
		    "sets; darker = busier</p>\n");
	free(bins);
	free(keys);
	u64map_release(&idx);
}

/* One small line chart per (device, metric): the mean of the samples in each column. */
static void metric_charts(struct xout *o, const struct model *m, uint64_t t0, uint64_t span)
{
	struct u64map seen = { 0 };
	uint64_t *keys = NULL;
	size_t n = 0, alloc = 0;
	const int h = 70, x0 = 60, w = CHART_W - x0 - 10;

	for (size_t i = 0; i < m->metrics.n; i++) {
		uint64_t key = ((uint64_t)m->metrics.v[i].device << 32) | m->metrics.v[i].name_id;
		uint64_t *v = u64map_get(&seen, key == UINT64_MAX ? 0 : key, 1);
		if (!*v) {
			ALLOC_GROW(keys, n + 1, alloc);
			keys[n] = key;
			*v = ++n;
		}
	}
	if (!n)
		xout_str(o, "<p class='note'>no GPU metrics were sampled in this run</p>\n");
	for (size_t k = 0; k < n; k++) {
		double *sum = xcalloc(CHART_BINS, sizeof(double)), lo = INFINITY, hi = -INFINITY;
		uint32_t *cnt = xcalloc(CHART_BINS, sizeof(uint32_t));
		uint32_t dev = (uint32_t)(keys[k] >> 32), name = (uint32_t)keys[k];
		int first = 1;
		char b1[32], b2[32];
		for (size_t i = 0; i < m->metrics.n; i++) {
			const struct trace_metric *x = &m->metrics.v[i];
			size_t b;
			if (x->device != dev || x->name_id != name || !isfinite(x->value) || x->time < t0)
				continue;
			b = span ? (size_t)((double)(x->time - t0) / (double)span * CHART_BINS) : 0;
			if (b >= CHART_BINS)
				b = CHART_BINS - 1;
			sum[b] += x->value;
			cnt[b]++;
			if (x->value < lo)
				lo = x->value;
			if (x->value > hi)
				hi = x->value;
		}
		if (!(hi >= lo)) {
			free(sum);
			free(cnt);
			continue;
		}
		if (hi == lo) {
			hi = lo + 1;
			lo -= 1;
		}
		xout_str(o, "<div class='k'>");
		if (dev == UINT32_MAX)
			xout_str(o, "host ");
		else
			xout_printf(o, "GPU %u ", dev);
		esc(o, model_str(m, name));
		xout_str(o, "</div>");
		xout_printf(o, "<svg width='%d' height='%d' role='img'>", CHART_W, h + 28);
		xout_printf(o, "<rect x='%d' y='5' width='%d' height='%d' fill='#f7f9fb' stroke='#d8dde3'/>", x0, w, h);
		snprintf(b1, sizeof(b1), "%.4g", hi);
		snprintf(b2, sizeof(b2), "%.4g", lo);
		xout_printf(o, "<text x='%d' y='14' text-anchor='end'>%s</text><text x='%d' y='%d' text-anchor='end'>%s</text>",
			    x0 - 4, b1, x0 - 4, h + 5, b2);
		xout_str(o, "<path fill='none' stroke='#7b3fbf' stroke-width='1.2' d='");
		for (int b = 0; b < CHART_BINS; b++) {
			double v, y;
			if (!cnt[b])
				continue;
			v = sum[b] / cnt[b];
			y = 5 + h * (1 - (v - lo) / (hi - lo));
			xout_printf(o, "%c%.1f %.1f", first ? 'M' : 'L', x0 + (double)w * (b + 0.5) / CHART_BINS, y);
			first = 0;
		}
		xout_str(o, "'/>");
		axis(o, x0, h + 5, w, span);
		xout_str(o, "</svg>\n");
		free(sum);
		free(cnt);
	}
	free(keys);
	u64map_release(&seen);
}

#if defined(HAVE_GS_STATS) && defined(HAVE_GS_ANALYZE)

/* How a column is shown: durations and sizes in readable units, so the unit leaves the header. */
enum { SHOW_PLAIN, SHOW_NS, SHOW_MB };

static int column_show(const struct stats_col *c)
{
	if (strstr(c->name, "(ns)") || c->type == STATS_DUR)
		return SHOW_NS;
	if (strstr(c->name, "(MB)"))
		return SHOW_MB;
	return SHOW_PLAIN;
}

static void header(struct xout *o, const struct stats_col *c)
{
	const char *u = strstr(c->name, " (ns)");

	if (!u)
		u = strstr(c->name, " (MB)");
	xout_str(o, c->type == STATS_STR ? "<th class='s'>" : "<th>");
	if (u) {
		char *n = xstrndup(c->name, (size_t)(u - c->name));
		esc(o, n);
		free(n);
	} else {
		esc(o, c->name);
	}
	xout_str(o, "</th>");
}

static void cell(struct xout *o, const struct stats_table *t, size_t r, size_t c)
{
	const union stats_cell *x = &t->cells[r * t->ncols + c];
	int type = t->cols[c].type, show = column_show(&t->cols[c]);
	double v = type == STATS_INT || type == STATS_DUR ? (double)x->i : x->f;
	char buf[64];

	if (t->invalid && t->invalid[r * t->ncols + c]) {
		xout_str(o, "<td>-</td>");
		return;
	}
	if (type == STATS_STR) {
		xout_str(o, "<td class='s'>");
		esc_short(o, x->s ? x->s : "", 300);
		xout_str(o, "</td>");
		return;
	}
	if (show == SHOW_NS)
		fmt_duration(buf, sizeof(buf), v);
	else if (show == SHOW_MB)
		fmt_bytes(buf, sizeof(buf), v * (type == STATS_BYTES ? 1 : 1e6));
	else if (type == STATS_BYTES)
		fmt_bytes(buf, sizeof(buf), v);
	else if (type == STATS_INT)
		snprintf(buf, sizeof(buf), "%lld", (long long)x->i);
	else if (type == STATS_PCT)
		snprintf(buf, sizeof(buf), "%.1f", v);
	else
		snprintf(buf, sizeof(buf), "%.4g", v);
	xout_str(o, "<td>");
	esc(o, buf);
	xout_str(o, "</td>");
}

/* A stats report as a table (first TABLE_ROWS rows), with bars of its first percent column. */
static void stats_html(struct xout *o, const struct model *m, const char *report)
{
	struct stats_opts so = { 0 };
	struct stats_table t;
	size_t rows;

	if (stats_run(m, report, &so, &t)) {
		xout_str(o, "<p class='note'>report unavailable</p>\n");
		return;
	}
	if (!t.nrows) {
		xout_str(o, "<p class='note'>");
		esc(o, t.empty_reason ? t.empty_reason : "no rows");
		xout_str(o, "</p>\n");
		stats_table_release(&t);
		return;
	}
	rows = t.nrows < TABLE_ROWS ? t.nrows : TABLE_ROWS;
	xout_str(o, "<table><tr>");
	for (size_t c = 0; c < t.ncols; c++) {
		header(o, &t.cols[c]);
		if (c == 0 && t.cols[0].type == STATS_PCT)
			xout_str(o, "<th></th>");
	}
	xout_str(o, "</tr>\n");
	for (size_t r = 0; r < rows; r++) {
		xout_str(o, "<tr>");
		for (size_t c = 0; c < t.ncols; c++) {
			cell(o, &t, r, c);
			if (c == 0 && t.cols[0].type == STATS_PCT) {
				double f = t.cells[r * t.ncols].f;
				if (!(f >= 0))
					f = 0;
				xout_printf(o, "<td><svg width='120' height='10' style='margin:2px 0'>"
					       "<rect width='%.1f' height='10' fill='#3f7fbf'/></svg></td>",
					    f > 100 ? 120.0 : f * 1.2);
			}
		}
		xout_str(o, "</tr>\n");
	}
	xout_str(o, "</table>\n");
	if (t.nrows > rows)
		xout_printf(o, "<p class='note'>%zu more rows: gpuscope stats --report %s</p>\n", t.nrows - rows,
			    report);
	stats_table_release(&t);
}

static void findings_html(struct xout *o, const struct analyze_result *r, uint64_t t0)
{
	char b1[32], b2[32];

	if (!r->n)
		xout_str(o, "<p>No finding: nothing the rules look for holds this run back.</p>\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = &r->findings[i];
		const char *sev = f->severity == SEV_CRITICAL ? "critical" : f->severity == SEV_WARNING ? "warning"
													: "info";
		const char *p, *q;
		/* data-rule and data-gain: the finding as `analyze --format json` gives it (tests compare them) */
		xout_printf(o, "<div class='finding %s' id='finding-%zu' data-rule='%s' data-gain='%.17g'>"
			       "<span class='gain'>est. gain %.1f%%</span><h3>%zu. ",
			    sev, i + 1, f->id, f->gain, f->gain * 100, i + 1);
		esc(o, f->title ? f->title : f->id);
		xout_printf(o, " <span class='k'>[%s, %s]</span></h3>\n<ul>", f->id, sev);
		for (p = f->evidence ? f->evidence : ""; *p; p = *q ? q + 1 : q) {
			char *line;
			q = strchrnul(p, '\n');
			if (q == p)
				continue;
			line = xstrndup(p, (size_t)(q - p));
			xout_str(o, "<li>");
			esc(o, line);
			xout_str(o, "</li>");
			free(line);
		}
		xout_str(o, "</ul>\n");
		if (f->nwhere) {
			xout_str(o, "<div class='k'>where: ");
			for (size_t k = 0; k < f->nwhere && k < 5; k++) {
				uint64_t s = f->where[k].start > t0 ? f->where[k].start - t0 : 0;
				fmt_duration(b1, sizeof(b1), (double)s);
				fmt_duration(b2, sizeof(b2), (double)(f->where[k].end - f->where[k].start));
				xout_printf(o, "%sat %s for %s", k ? ", " : "", b1, b2);
			}
			xout_str(o, "</div>\n");
		}
		xout_str(o, "<div class='k'>gain: ");
		esc(o, f->gain_formula ? f->gain_formula : "");
		xout_str(o, "</div>\n<div><b>Fix:</b> ");
		esc(o, f->recommendation ? f->recommendation : "");
		xout_str(o, "</div></div>\n");
	}
	for (size_t i = 0; i < r->nnotes; i++) {
		xout_str(o, "<p class='note'>");
		esc(o, r->notes[i]);
		xout_str(o, "</p>\n");
	}
}

static void card(struct xout *o, const char *value, const char *label)
{
	xout_str(o, "<div class='card'><b>");
	esc(o, value);
	xout_str(o, "</b><span>");
	esc(o, label);
	xout_str(o, "</span></div>");
}

int export_html(const struct export_input *in, struct xout *o)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	const struct analyze_result *rp = in->findings;
	struct analyze_result none;
	uint64_t t0 = export_t0(m), t1 = m->t_max, span;
	const char *title = opt->title ? opt->title : (m->path ? m->path : "run");
	char buf[64];
	uint64_t drops = 0;

	if (!rp) {
		memset(&none, 0, sizeof(none));
		none.summary.gpu_busy = none.summary.gpu_idle = -1;
		rp = &none;
	}
	for (size_t i = 0; i < m->metrics.n; i++)
		if (m->metrics.v[i].time > t1)
			t1 = m->metrics.v[i].time;
	span = t1 > t0 ? t1 - t0 : 0;

	xout_str(o, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n"
		    "<meta name='generator' content='gpuscope " GPUSCOPE_VERSION "'>\n<title>gpuscope report: ");
	esc(o, title);
	xout_str(o, "</title>\n");
	xout_str(o, style);
	xout_str(o, "</head><body>\n<h1>gpuscope report: ");
	esc(o, title);
	xout_str(o, "</h1>\n<div class='sub'>");
	for (size_t i = 0; i < m->procs.n; i++) {
		xout_printf(o, "%spid %u: ", i ? "<br>" : "", m->procs.v[i].pid);
		esc_short(o, model_str(m, m->procs.v[i].cmdline_id), 200);
	}
	for (size_t i = 0; i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		if (model_device(m, d->id) != d)
			continue;
		xout_printf(o, "<br>GPU %u: ", d->id);
		esc(o, model_str(m, d->name_id));
		xout_printf(o, ", %u SMs, compute capability %u.%u", d->sm_count, d->cc_major, d->cc_minor);
	}
	xout_str(o, "</div>\n");

	xout_str(o, "<h2 id='summary'>Summary</h2>\n<div class='cards'>");
	card(o, fmt_duration(buf, sizeof(buf), (double)span), "span of the run");
	if (rp->summary.gpu_busy >= 0) {
		snprintf(buf, sizeof(buf), "%.1f%%", rp->summary.gpu_busy * 100);
		card(o, buf, "GPU busy");
		snprintf(buf, sizeof(buf), "%.1f%%", rp->summary.gpu_idle * 100);
		card(o, buf, "GPU idle");
	}
	if (rp->summary.step_period_s > 0)
		card(o, fmt_duration(buf, sizeof(buf), rp->summary.step_period_s * 1e9), "step period");
	snprintf(buf, sizeof(buf), "%zu", m->kernels.n);
	card(o, buf, "kernels");
	snprintf(buf, sizeof(buf), "%zu", m->memcpys.n + m->memsets.n);
	card(o, buf, "copies and sets");
	snprintf(buf, sizeof(buf), "%zu", m->api.n);
	card(o, buf, "CUDA API calls");
	snprintf(buf, sizeof(buf), "%zu", rp->n);
	card(o, buf, "findings");
	xout_str(o, "</div>\n");
	if (rp->summary.step_source) {
		xout_str(o, "<div class='k'>steps: ");
		esc(o, rp->summary.step_source);
		xout_str(o, "</div>\n");
	}
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++)
		drops += m->drops[d];
	if (drops)
		xout_printf(o, "<p class='note'>%llu records were dropped while recording (gpuscope info shows "
			       "where)</p>\n", (unsigned long long)drops);
	for (size_t i = 0; i < m->nr_warnings; i++) {
		xout_str(o, "<p class='note'>warning: ");
		esc(o, m->warnings[i]);
		xout_str(o, "</p>\n");
	}

	xout_str(o, "<h2 id='findings'>Findings</h2>\n");
	findings_html(o, rp, t0);
	xout_str(o, "<h2 id='utilisation'>GPU utilisation over time</h2>\n");
	util_chart(o, m, t0, span);
	xout_str(o, "<h2 id='timeline'>Timeline overview per stream</h2>\n");
	stream_overview(o, m, t0, span);
	xout_str(o, "<h2 id='kernels'>Top kernels</h2>\n");
	stats_html(o, m, "cuda_gpu_kern_sum");
	xout_str(o, "<h2 id='copies'>Copies by kind</h2>\n");
	stats_html(o, m, "cuda_gpu_mem_time_sum");
	stats_html(o, m, "cuda_gpu_mem_size_sum");
	xout_str(o, "<h2 id='nvtx'>NVTX ranges</h2>\n");
	stats_html(o, m, "nvtx_sum");
	xout_str(o, "<h2 id='api'>CUDA API calls</h2>\n");
	stats_html(o, m, "cuda_api_sum");
	xout_str(o, "<h2 id='osrt'>OS runtime calls</h2>\n");
	stats_html(o, m, "osrt_sum");
	xout_str(o, "<h2 id='metrics'>GPU metrics</h2>\n");
	metric_charts(o, m, t0, span);
	xout_str(o, "<p class='sub'>Written by gpuscope " GPUSCOPE_VERSION
		    ". Times on the charts are from the start of the run.</p>\n"
		    "<script>window.__reportReady = true;</script>\n</body></html>\n");
	return o->failed ? -1 : 0;
}

#else

int export_html(const struct export_input *in, struct xout *o)
{
	(void)in;
	(void)o;
	return error("html export needs the stats and analyze parts in this build");
}

#endif
