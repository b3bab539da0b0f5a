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

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#ifdef HAVE_GS_STATS
#include "../stats/stats.h"
#include "../stats/stats_rank.h"
#endif
#ifdef HAVE_GS_ANALYZE
#include "../analyze/analyze.h"
#endif

#define CHART_BINS 600    /* columns of the time charts */
#define CHART_W 900       /* SVG width, px */
#define LABEL_W 170       /* left margin for lane labels */
#define TABLE_ROWS 25     /* rows shown per stats table */
#define NAME_COLUMN 70    /* characters of a name shown in a table (the full name on hover) */

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
	"body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:20px auto;max-width:1200px;padding:0 16px;"
	"color:#1d232b;background:#fff;line-height:1.4}\n"
	"h1{font-size:22px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #d8dde3;padding-bottom:4px}h3{font-size:14px;margin:14px 0 4px}\n"
	".sub{color:#5b6673;font-size:13px;overflow-wrap:anywhere}nav{margin:8px 0;font-size:13px}nav a{margin-right:10px}\n"
	".cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}\n"
	".card{border:1px solid #d8dde3;border-radius:6px;padding:8px 12px;min-width:120px}\n"
	".card b{display:block;font-size:19px}.card span{font-size:12px;color:#5b6673}\n"
	".tw{overflow-x:auto}table{border-collapse:collapse;font-size:12.5px;margin:6px 0}\n"
	"th,td{border-bottom:1px solid #e6e9ed;padding:3px 8px;text-align:right;vertical-align:top;white-space:nowrap}\n"
	"th{background:#f3f5f7}td.s,th.s{text-align:left;max-width:420px;overflow:hidden;text-overflow:ellipsis}\n"
	"tr.straggler td{background:#fdecea;font-weight:600}\n"
	".finding{border:1px solid #d8dde3;border-left:6px solid #8a96a3;border-radius:6px;padding:8px 12px;"
	"margin:10px 0}\n"
	".finding.critical{border-left-color:#c62828}.finding.warning{border-left-color:#ef8f00}\n"
	".finding h3{font-size:15px;margin:0 0 4px}.gain{float:right;font-weight:bold}\n"
	".finding ul{margin:4px 0 4px 18px;padding:0;font-size:13px;overflow-wrap:anywhere}\n"
	".k{color:#5b6673;font-size:12.5px;overflow-wrap:anywhere}.note{color:#5b6673;font-size:12.5px;font-style:italic}\n"
	".tl{position:relative;width:100%;border:1px solid #d8dde3;cursor:grab;user-select:none}\n"
	".tl canvas{display:block}.tools{margin:4px 0}.tools button{font-size:12px}\n"
	".tip{position:fixed;display:none;z-index:9;max-width:520px;background:#1d232b;color:#fff;font-size:12px;"
	"padding:5px 8px;border-radius:4px;pointer-events:none;overflow-wrap:anywhere}.tip b{display:block}\n"
	".legend{font-size:12px;color:#3b4550;margin:4px 0}.legend span{margin-right:12px;white-space:nowrap}\n"
	".legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}\n"
	".steps .step{display:flex;align-items:center;margin:2px 0;cursor:pointer}\n"
	".steps .sl{width:150px;flex:none;font-size:12px;white-space:nowrap}\n"
	".steps .bar{flex:1;display:flex;height:14px;background:#e6e9ed}.steps .bar i{display:block;height:100%}\n"
	".chart{margin:8px 0}svg{display:block}svg text{font-size:11px;font-family:sans-serif;fill:#3b4550}\n"
	"</style>\n";

#if defined(HAVE_GS_STATS) && defined(HAVE_GS_ANALYZE)

/* ---- the data the page's script draws: timeline, memory and metric series ---- */

/*
 * TL_MAX_EVENTS: the timeline holds at most this many slices of the
 * analysed window (about 1.5 MB of data); beyond it the shortest are left
 * out (they are under a pixel until zoomed far in) and the page says how
 * many.  SERIES_POINTS: a memory or metric series is binned to at most this
 * many points, about one per pixel of a chart.  NVTX_DEPTH: NVTX rows per
 * thread (push/pop levels 0..3; deeper ranges go on the last row).
 */
#define TL_MAX_EVENTS 30000
#define SERIES_POINTS 600
#define NVTX_DEPTH 4
#define NAME_MAX_BYTES 300 /* names in the data are cut here (tooltips) */

enum tl_kind { TK_KERNEL, TK_COMM, TK_MEMCPY, TK_MEMSET, TK_NVTX };

struct tl_ev {
	uint64_t s, e;
	uint32_t lane, name;
	uint8_t kind;
};

struct tl_lane {
	uint64_t key;              /* sort key: GPU lanes first */
	char label[64];
};

struct tl {
	struct tl_ev *ev;
	size_t n, alloc;
	struct tl_lane *lanes;
	size_t nlanes, alloc_lanes;
	struct u64map lane_of;     /* lane key -> index + 1 */
	struct strtab names;
	uint64_t dropped;
};

/* A string for the page's script: JSON, with '<', '>' and '&' escaped so no "</script>" can end it. */
static void js_str(struct xout *o, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	xout_ch(o, '"');
	for (; *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == 0x7f) {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			xout_write(o, u, 6);
		} else {
			xout_ch(o, (char)c);
		}
	}
	/* do not end inside a UTF-8 sequence */
	xout_ch(o, '"');
}

static uint32_t tl_lane(struct tl *t, uint64_t key, const char *label)
{
	uint64_t *v = u64map_get(&t->lane_of, key == UINT64_MAX ? 0 : key, 1);

	if (!*v) {
		ALLOC_GROW(t->lanes, t->nlanes + 1, t->alloc_lanes);
		t->lanes[t->nlanes].key = key;
		snprintf(t->lanes[t->nlanes].label, sizeof(t->lanes[0].label), "%s", label);
		*v = ++t->nlanes;
	}
	return (uint32_t)(*v - 1);
}

static void tl_add(struct tl *t, const struct model *m, uint32_t lane, uint64_t s, uint64_t e, uint32_t name_id,
		   const char *fixed, int kind)
{
	struct tl_ev *x;
	char cut[NAME_MAX_BYTES + 1];
	const char *name = fixed ? fixed : model_str(m, name_id);

	snprintf(cut, sizeof(cut), "%s", name);
	ALLOC_GROW(t->ev, t->n + 1, t->alloc);
	x = &t->ev[t->n++];
	x->s = s;
	x->e = e;
	x->lane = lane;
	x->kind = (uint8_t)kind;
	x->name = strtab_intern(&t->names, cut);
}

static int cmp_ev_dur_desc(const void *pa, const void *pb)
{
	const struct tl_ev *a = pa, *b = pb;
	uint64_t da = a->e - a->s, db = b->e - b->s;
	return (da < db) - (da > db);
}

static int cmp_ev_lane_start(const void *pa, const void *pb)
{
	const struct tl_ev *a = pa, *b = pb;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

/* Lane keys: GPU lanes sort before thread lanes, each by device/pid, stream/tid. */
#define GPU_LANE(dev, pid, stream) (((uint64_t)(dev) << 52) ^ ((uint64_t)(pid) << 24) ^ (stream))
#define NVTX_LANE(pid, tid, lvl) ((1ull << 63) | (((uint64_t)(pid) << 36) ^ ((uint64_t)(tid) << 4) ^ (lvl)))

static void tl_build(struct tl *t, const struct model *m, uint64_t ws, uint64_t we)
{
	char label[64];

	memset(t, 0, sizeof(*t));
	strtab_init(&t->names);
#define GPU_ROWS(table, kind_expr, fixed_expr)                                                   \
	for (size_t i = 0; i < m->table.n; i++) {                                                \
		const __typeof__(m->table.v[0]) *r = &m->table.v[i];                             \
		uint32_t lane;                                                                   \
		if (r->end <= ws || r->start >= we)                                              \
			continue;                                                                \
		if (m->procs.n > 1)                                                              \
			snprintf(label, sizeof(label), "GPU %u pid %u stream %u", r->device, r->pid, \
				 r->stream);                                                     \
		else                                                                             \
			snprintf(label, sizeof(label), "GPU %u stream %u", r->device, r->stream);  \
		lane = tl_lane(t, GPU_LANE(r->device, r->pid, r->stream), label);                \
		tl_add(t, m, lane, r->start, r->end, 0, fixed_expr, kind_expr);                  \
	}
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *r = &m->kernels.v[i];
		uint32_t lane;
		if (r->end <= ws || r->start >= we)
			continue;
		if (m->procs.n > 1)
			snprintf(label, sizeof(label), "GPU %u pid %u stream %u", r->device, r->pid, r->stream);
		else
			snprintf(label, sizeof(label), "GPU %u stream %u", r->device, r->stream);
		lane = tl_lane(t, GPU_LANE(r->device, r->pid, r->stream), label);
		tl_add(t, m, lane, r->start, r->end, r->name_id, NULL,
		       (r->flags & TRACE_GPU_COMM) ? TK_COMM : TK_KERNEL);
	}
	GPU_ROWS(memcpys, TK_MEMCPY, export_copy_name(r->kind))
	GPU_ROWS(memsets, TK_MEMSET, "Memset")
#undef GPU_ROWS
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		unsigned lvl = r->kind == TRACE_NVTX_PUSHPOP ? (r->level < NVTX_DEPTH ? r->level : NVTX_DEPTH - 1) : 0;
		uint32_t lane;
		if (r->end <= r->start || r->end <= ws || r->start >= we)
			continue;
		if (m->procs.n > 1)
			snprintf(label, sizeof(label), "pid %u tid %u NVTX%s", r->pid, r->tid, lvl ? " +" : "");
		else
			snprintf(label, sizeof(label), "thread %u NVTX%s", r->tid, lvl ? " +" : "");
		if (lvl)
			snprintf(label + strlen(label), sizeof(label) - strlen(label), "%u", lvl);
		lane = tl_lane(t, NVTX_LANE(r->pid, r->tid, lvl), label);
		tl_add(t, m, lane, r->start, r->end, r->name_id, NULL, TK_NVTX);
	}
	if (t->n > TL_MAX_EVENTS) {
		qsort(t->ev, t->n, sizeof(*t->ev), cmp_ev_dur_desc);
		t->dropped = t->n - TL_MAX_EVENTS;
		t->n = TL_MAX_EVENTS;
	}
	/* lanes in key order, then events by lane and start (the script searches them) */
	{
		size_t *order = xcalloc(t->nlanes + 1, sizeof(*order));
		uint32_t *rank = xcalloc(t->nlanes + 1, sizeof(*rank));
		struct tl_lane *sorted = xcalloc(t->nlanes + 1, sizeof(*sorted));
		for (size_t i = 0; i < t->nlanes; i++)
			order[i] = i;
		for (size_t i = 1; i < t->nlanes; i++) {
			size_t x = order[i], j = i;
			while (j && t->lanes[order[j - 1]].key > t->lanes[x].key) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = x;
		}
		for (size_t i = 0; i < t->nlanes; i++) {
			rank[order[i]] = (uint32_t)i;
			sorted[i] = t->lanes[order[i]];
		}
		for (size_t i = 0; i < t->n; i++)
			t->ev[i].lane = rank[t->ev[i].lane];
		free(t->lanes);
		t->lanes = sorted;
		free(order);
		free(rank);
	}
	if (t->n)
		qsort(t->ev, t->n, sizeof(*t->ev), cmp_ev_lane_start);
}

static void tl_release(struct tl *t)
{
	free(t->ev);
	free(t->lanes);
	u64map_release(&t->lane_of);
	strtab_release(&t->names);
}

static void tl_json(struct xout *o, const struct tl *t, uint64_t t0)
{
	xout_str(o, "\"lanes\":[");
	for (size_t i = 0; i < t->nlanes; i++) {
		if (i)
			xout_ch(o, ',');
		js_str(o, t->lanes[i].label, 64);
	}
	xout_str(o, "],\"names\":[");
	for (uint32_t i = 0; i < t->names.nr; i++) {
		if (i)
			xout_ch(o, ',');
		js_str(o, strtab_get(&t->names, i), NAME_MAX_BYTES);
	}
	xout_str(o, "],\"ev\":[");
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_ev *x = &t->ev[i];
		xout_printf(o, "%s[%u,%" PRIu64 ",%" PRIu64 ",%u,%u]", i ? "," : "", x->lane, x->s - t0, x->e - x->s,
			    x->kind, x->name);
	}
	xout_printf(o, "],\"dropped\":%" PRIu64, t->dropped);
}

/*
 * A metric's unit from its name ("power_w", "sm_clock_mhz", "mem_used_bytes",
 * "gpu_util"): the unit the chart prints with an SI prefix, the factor to
 * that unit, and whether a prefix makes sense (not for % or degrees).
 */
static const char *metric_unit(const char *name, double *scale, int *prefix)
{
	static const struct {
		const char *suffix, *unit;
		double scale;
		int prefix;
	} units[] = {
		{ "_bytes", "B", 1, 1 },   { "_mib", "B", 1048576, 1 }, { "_w", "W", 1, 1 },
		{ "_mw", "W", 1e-3, 1 },   { "_mhz", "Hz", 1e6, 1 },    { "_c", "\xc2\xb0" "C", 1, 0 },
		{ "_pct", "%", 1, 0 },     { "_percent", "%", 1, 0 },   { "_util", "%", 1, 0 },
		{ "util", "%", 1, 0 },     { "_bps", "B/s", 1, 1 },   { "_bytes_s", "B/s", 1, 1 },     { "_j", "J", 1, 1 },
		{ "_mj", "J", 1e-3, 1 },   { "_ns", "s", 1e-9, 1 },
	};
	size_t n = strlen(name);

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		size_t k = strlen(units[i].suffix);
		if (n >= k && !strcmp(name + n - k, units[i].suffix)) {
			*scale = units[i].scale;
			*prefix = units[i].prefix;
			return units[i].unit;
		}
	}
	*scale = 1;
	*prefix = 1;
	return "";
}

/* @v with an SI prefix and @unit ("1.98 GHz", "645 MB", "89 °C"), never in exponent notation, as the charts' ticks. */
static const char *si_fmt(char *buf, size_t n, double v, const char *unit, int prefix)
{
	static const struct {
		double f;
		const char *p;
	} pre[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" }, { 1, "" },
		    { 1e-3, "m" }, { 1e-6, "\xc2\xb5" }, { 1e-9, "n" } };
	size_t i = 4;
	double a = fabs(v), x;

	if (!isfinite(v))
		return snprintf(buf, n, "-"), buf;
	if (prefix && v != 0)
		for (i = 0; i + 1 < ARRAY_SIZE(pre) && a < pre[i].f * 0.9995; i++)
			;
	x = v / pre[i].f;
	a = fabs(x);
	snprintf(buf, n, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", x);
	/* no trailing zeros after the point */
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf);
		while (e[-1] == '0')
			*--e = 0;
		if (e[-1] == '.')
			e[-1] = 0;
	}
	if (!strcmp(unit, "%"))
		strncat(buf, "%", n - strlen(buf) - 1);
	else if (*pre[i].p || *unit)
		snprintf(buf + strlen(buf), n - strlen(buf), " %s%s", pre[i].p, unit);
	return buf;
}

/* Samples (t, v) of one series binned to SERIES_POINTS over [ws, we); @use_max: bin by max, else mean. */
struct series {
	double *sum, *max;
	uint32_t *cnt;
	double lo, hi;
	double before;             /* the last value before the window, NAN when none */
	uint64_t before_t;
	uint64_t n;
};

static void series_init(struct series *s)
{
	s->sum = xcalloc(SERIES_POINTS, sizeof(double));
	s->max = xcalloc(SERIES_POINTS, sizeof(double));
	s->cnt = xcalloc(SERIES_POINTS, sizeof(uint32_t));
	s->lo = INFINITY;
	s->hi = -INFINITY;
	s->before = NAN;
	s->before_t = 0;
	s->n = 0;
}

static void series_release(struct series *s)
{
	free(s->sum);
	free(s->max);
	free(s->cnt);
}

static void series_add(struct series *s, uint64_t ws, uint64_t we, uint64_t t, double v)
{
	size_t b;

	if (!isfinite(v))
		return;
	if (t < ws) {
		if (t >= s->before_t) {
			s->before = v;
			s->before_t = t;
		}
		return;
	}
	if (t >= we)
		return;
	b = (size_t)((double)(t - ws) / (double)(we - ws) * SERIES_POINTS);
	if (b >= SERIES_POINTS)
		b = SERIES_POINTS - 1;
	if (!s->cnt[b] || v > s->max[b])
		s->max[b] = v;
	s->sum[b] += v;
	s->cnt[b]++;
	s->n++;
	if (v < s->lo)
		s->lo = v;
	if (v > s->hi)
		s->hi = v;
}

/* {"name":..,"unit":..,"prefix":..,"step":..,"pts":[[t,v]...]}: times relative to t0, values * scale. */
static void series_json(struct xout *o, const struct series *s, const char *name, const char *unit, double scale,
			int prefix, int use_max, int step, uint64_t t0, uint64_t ws, uint64_t we)
{
	int first = 1;

	xout_str(o, "{\"name\":");
	js_str(o, name, 200);
	xout_str(o, ",\"unit\":");
	js_str(o, unit, 16);
	xout_printf(o, ",\"prefix\":%d,\"step\":%d,\"pts\":[", prefix, step);
	if (isfinite(s->before)) {
		xout_printf(o, "[%" PRIu64 ",", ws - t0);
		xout_double(o, s->before * scale);
		xout_ch(o, ']');
		first = 0;
	}
	for (int b = 0; b < SERIES_POINTS; b++) {
		double v;
		if (!s->cnt[b])
			continue;
		v = use_max ? s->max[b] : s->sum[b] / s->cnt[b];
		xout_printf(o, "%s[%" PRIu64 ",", first ? "" : ",",
			    ws - t0 + (uint64_t)((double)(we - ws) * (b + (step ? 0.0 : 0.5)) / SERIES_POINTS));
		xout_double(o, v * scale);
		xout_ch(o, ']');
		first = 0;
	}
	xout_str(o, "]}");
}

/* CUDA allocations in use per device (the timeline formats' counter, layout.c) and NVML's used memory. */
static void memory_json(struct xout *o, const struct model *m, uint64_t t0, uint64_t ws, uint64_t we)
{
	struct lay l;
	int first = 1;

	xout_str(o, "\"mem\":[");
	if (m->memory.n && !lay_build(&l, m)) {
		for (size_t t = 0; t < l.ntracks; t++) {
			struct series s;
			int any = 0;
			if (l.tracks[t].kind != LT_COUNTER || !l.tracks[t].unit || strcmp(l.tracks[t].unit, "bytes"))
				continue;
			series_init(&s);
			for (size_t i = 0; i < m->memory.n; i++)
				if (l.mem_track[i] == t) {
					series_add(&s, ws, we, m->memory.v[i].time, l.mem_value[i]);
					any = 1;
				}
			if (any && (s.n || isfinite(s.before))) {
				char name[96];
				snprintf(name, sizeof(name), "%s (CUDA allocations)", l.tracks[t].name);
				if (!first)
					xout_ch(o, ',');
				series_json(o, &s, name, "B", 1, 1, 1, 1, t0, ws, we);
				first = 0;
			}
			series_release(&s);
		}
		lay_release(&l);
	}
	/*
	 * PyTorch's caching allocator (docs/memory.md): allocated and, where
	 * measured, reserved bytes per (process, GPU), as steps (a sample
	 * holds until the next one); the process is named when several share
	 * a GPU.
	 */
	{
		struct { uint32_t pid, dev; int res; } *keys = NULL;
		size_t nk = 0, ak = 0;
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			size_t k;
			for (k = 0; k < nk && (keys[k].pid != x->pid || keys[k].dev != x->device); k++)
				;
			if (k == nk) {
				ALLOC_GROW(keys, nk + 1, ak);
				keys[nk].pid = x->pid;
				keys[nk].dev = x->device;
				keys[nk++].res = 0;
			}
			if (x->flags & TRACE_TM_HAS_RESERVED)
				keys[k].res = 1;
		}
		for (size_t k = 0; k < nk; k++)
			for (int res = 0; res <= keys[k].res; res++) {
				struct series s;
				int shared = 0;
				char name[96];
				for (size_t q = 0; q < nk; q++)
					shared |= q != k && keys[q].dev == keys[k].dev;
				series_init(&s);
				for (size_t i = 0; i < m->torch_mem.n; i++) {
					const struct trace_torch_mem *x = &m->torch_mem.v[i];
					if (x->pid != keys[k].pid || x->device != keys[k].dev ||
					    (res && !(x->flags & TRACE_TM_HAS_RESERVED)))
						continue;
					series_add(&s, ws, we, x->time, (double)(res ? x->reserved : x->allocated));
				}
				if (s.n || isfinite(s.before)) {
					if (shared)
						snprintf(name, sizeof(name), "GPU %u %s (PyTorch allocator, pid %u)", keys[k].dev,
							 res ? "reserved" : "allocated", keys[k].pid);
					else
						snprintf(name, sizeof(name), "GPU %u %s (PyTorch allocator)", keys[k].dev,
							 res ? "reserved" : "allocated");
					if (!first)
						xout_ch(o, ',');
					series_json(o, &s, name, "B", 1, 1, 1, 1, t0, ws, we);
					first = 0;
				}
				series_release(&s);
			}
		free(keys);
	}
	/* NVML's used memory, one series per GPU that has it */
	{
		struct u64map devs = { 0 };
		uint32_t *list = NULL, name_id = UINT32_MAX;
		size_t nd = 0, ad = 0;
		for (size_t i = 0; i < m->metrics.n; i++) {
			const struct trace_metric *x = &m->metrics.v[i];
			uint64_t *v;
			if (x->device == UINT32_MAX)
				continue;
			if (x->name_id != name_id) {
				if (strcmp(model_str(m, x->name_id), "mem_used_bytes"))
					continue;
				name_id = x->name_id;
			}
			v = u64map_get(&devs, x->device, 1);
			if (!*v) {
				ALLOC_GROW(list, nd + 1, ad);
				list[nd++] = x->device;
				*v = 1;
			}
		}
		for (size_t k = 0; k < nd; k++) {
			struct series s;
			series_init(&s);
			for (size_t i = 0; i < m->metrics.n; i++)
				if (m->metrics.v[i].device == list[k] && m->metrics.v[i].name_id == name_id)
					series_add(&s, ws, we, m->metrics.v[i].time, m->metrics.v[i].value);
			if (s.n || isfinite(s.before)) {
				char name[64];
				snprintf(name, sizeof(name), "GPU %u used memory (NVML)", list[k]);
				if (!first)
					xout_ch(o, ',');
				series_json(o, &s, name, "B", 1, 1, 0, 0, t0, ws, we);
				first = 0;
			}
			series_release(&s);
		}
		free(list);
		u64map_release(&devs);
	}
	xout_str(o, "]");
}

struct metric_key {
	uint32_t device, name_id;
};

/*
 * The GPU metrics in the window: those that vary as series for charts (in
 * the data), those that hold one value as rows of one small table (@consts,
 * HTML written after).  Memory used is in the memory chart, not here.
 */
static void metrics_json(struct xout *o, const struct model *m, uint64_t t0, uint64_t ws, uint64_t we,
			 struct strbuf *consts)
{
	struct u64map seen = { 0 };
	struct metric_key *keys = NULL;
	size_t n = 0, alloc = 0;
	int first = 1;

	for (size_t i = 0; i < m->metrics.n; i++) {
		uint64_t key = ((uint64_t)m->metrics.v[i].device << 32) | m->metrics.v[i].name_id;
		uint64_t *v = u64map_get(&seen, key == UINT64_MAX ? 0 : key, 1);
		if (!*v) {
			ALLOC_GROW(keys, n + 1, alloc);
			keys[n].device = m->metrics.v[i].device;
			keys[n].name_id = m->metrics.v[i].name_id;
			*v = ++n;
		}
	}
	xout_str(o, "\"metrics\":[");
	for (size_t k = 0; k < n; k++) {
		const char *name = model_str(m, keys[k].name_id), *unit;
		char label[128];
		double scale;
		int prefix;
		struct series s;
		if (!strcmp(name, "mem_used_bytes"))
			continue;
		unit = metric_unit(name, &scale, &prefix);
		series_init(&s);
		for (size_t i = 0; i < m->metrics.n; i++)
			if (m->metrics.v[i].device == keys[k].device && m->metrics.v[i].name_id == keys[k].name_id)
				series_add(&s, ws, we, m->metrics.v[i].time, m->metrics.v[i].value);
		if (keys[k].device == UINT32_MAX)
			snprintf(label, sizeof(label), "host %s", name);
		else
			snprintf(label, sizeof(label), "GPU %u %s", keys[k].device, name);
		if (s.n && s.hi > s.lo) {
			if (!first)
				xout_ch(o, ',');
			series_json(o, &s, label, unit, scale, prefix, 0, 0, t0, ws, we);
			first = 0;
		} else if (s.n || isfinite(s.before)) {
			double v = s.n ? s.lo : s.before;
			char vb[64];
			strbuf_addstr(consts, "<tr><td class='s'>");
			for (const char *c = label; *c; c++)
				if (*c == '<' || *c == '>' || *c == '&' || *c == '\'' || *c == '"')
					strbuf_addf(consts, "&#%d;", *c);
				else
					strbuf_addch(consts, *c);
			strbuf_addf(consts, "</td><td>%s</td></tr>\n", si_fmt(vb, sizeof(vb), v * scale, unit, prefix));
		}
		series_release(&s);
	}
	xout_str(o, "]");
	free(keys);
	u64map_release(&seen);
}

/* ---- step-time breakdown ---- */

/*
 * Every instant of a step goes to the first of these it belongs to, as
 * TensorBoard's overview splits a step: a computing kernel on any GPU,
 * else a communication kernel (so communication counts only where no
 * compute hides it), a copy, a set, data loading (an NVTX range named by
 * --data-range, or by default one whose name holds "DataLoader", as
 * PyTorch's dataloader iterator ranges do), host work (a CUDA API call or
 * an NVTX range other than the steps themselves), and otherwise idle.
 */
enum { BK_KERNEL, BK_COMM, BK_MEMCPY, BK_MEMSET, BK_DATA, BK_HOST, BK_IDLE, BK__N };
static const char *const bk_name[BK__N] = { "kernel", "communication", "memcpy", "memset", "data loading",
					    "host", "idle" };
static const char *const bk_colour[BK__N] = { "#3f7fbf", "#8e44ad", "#e08a1e", "#4caf50", "#c0392b",
					      "#95a5a6", "#e6e9ed" };
#define STEP_ROWS 50 /* steps shown as bars; the rest are summed in the note */

static int is_data_range(const char *name, const struct analyze_opts *ao)
{
	if (ao && ao->data_ranges && ao->data_ranges[0]) {
		for (size_t i = 0; ao->data_ranges[i]; i++)
			if (!fnmatch(ao->data_ranges[i], name, 0))
				return 1;
		return 0;
	}
	return strstr(name, "DataLoader") != NULL;
}

static void step_breakdown(struct xout *o, const struct model *m, const struct analyze_opts *ao, uint64_t ws,
			   uint64_t we)
{
	struct interval_set cat[BK__N - 1], uni[BK__N - 1], win = { 0 };
	struct model_steps st;
	uint64_t sum[BK__N] = { 0 };
	size_t nsteps;

	memset(cat, 0, sizeof(cat));
	memset(uni, 0, sizeof(uni));
	ivset_add(&win, ws, we);
	ivset_normalize(&win);
	nsteps = model_find_steps(m, ao ? ao->step : NULL, &win, &st);
	for (size_t i = 0; i < m->kernels.n; i++)
		ivset_add(&cat[(m->kernels.v[i].flags & TRACE_GPU_COMM) ? BK_COMM : BK_KERNEL], m->kernels.v[i].start,
			  m->kernels.v[i].end);
	for (size_t i = 0; i < m->memcpys.n; i++)
		ivset_add(&cat[BK_MEMCPY], m->memcpys.v[i].start, m->memcpys.v[i].end);
	for (size_t i = 0; i < m->memsets.n; i++)
		ivset_add(&cat[BK_MEMSET], m->memsets.v[i].start, m->memsets.v[i].end);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		const char *name = model_str(m, r->name_id);
		if (r->end <= r->start)
			continue;
		if (is_data_range(name, ao))
			ivset_add(&cat[BK_DATA], r->start, r->end);
		else if (!(nsteps && r->name_id == st.name_id) && !model_is_step_name(name))
			ivset_add(&cat[BK_HOST], r->start, r->end);
	}
	for (size_t i = 0; i < m->api.n; i++)
		ivset_add(&cat[BK_HOST], m->api.v[i].start, m->api.v[i].end);
	for (int c = 0; c < BK__N - 1; c++) {
		ivset_normalize(&cat[c]);
		if (c)
			for (size_t i = 0; i < uni[c - 1].n; i++)
				ivset_add(&uni[c], uni[c - 1].v[i].start, uni[c - 1].v[i].end);
		for (size_t i = 0; i < cat[c].n; i++)
			ivset_add(&uni[c], cat[c].v[i].start, cat[c].v[i].end);
		ivset_normalize(&uni[c]);
	}
	xout_str(o, "<div class='legend'>");
	for (int c = 0; c < BK__N; c++)
		xout_printf(o, "<span><i style='background:%s'></i>%s</span>", bk_colour[c], bk_name[c]);
	xout_str(o, "</div>\n<div class='steps'>\n");
	for (size_t k = 0; k < (nsteps ? nsteps : 1); k++) {
		uint64_t s = nsteps ? st.v[k].start : ws, e = nsteps ? st.v[k].end : we, prev = 0, len = e - s;
		uint64_t part[BK__N];
		char b[32];
		if (e <= s)
			continue;
		for (int c = 0; c < BK__N - 1; c++) {
			uint64_t u = ivset_overlap(&uni[c], s, e);
			part[c] = u - prev;
			prev = u;
		}
		part[BK_IDLE] = len - prev;
		for (int c = 0; c < BK__N; c++)
			sum[c] += part[c];
		if (k >= STEP_ROWS)
			continue;
		xout_printf(o, "<div class='step' data-start='%" PRIu64 "' data-end='%" PRIu64 "'><span class='sl'>",
			    s - export_t0(m), e - export_t0(m));
		if (nsteps)
			xout_printf(o, "step %zu", k + 1);
		else
			xout_str(o, "window");
		xout_printf(o, " <b>%s</b></span><span class='bar'>", fmt_duration(b, sizeof(b), (double)len));
		for (int c = 0; c < BK__N; c++) {
			char pb[32];
			if (!part[c])
				continue;
			xout_printf(o, "<i class='bk-%d' style='width:%.3f%%;background:%s' title='%s %s (%.1f%%)'></i>", c,
				    100.0 * (double)part[c] / (double)len, bk_colour[c], bk_name[c],
				    fmt_duration(pb, sizeof(pb), (double)part[c]), 100.0 * (double)part[c] / (double)len);
		}
		xout_str(o, "</span></div>\n");
	}
	xout_str(o, "</div>\n");
	{
		uint64_t all = 0;
		for (int c = 0; c < BK__N; c++)
			all += sum[c];
		xout_printf(o, "<p class='k'>%s%s: ", nsteps ? "steps: " : "no step ranges in the window: the analysed window as one bar",
			    nsteps ? model_str(m, st.name_id) : "");
		for (int c = 0; c < BK__N && all; c++)
			xout_printf(o, "%s%s %.1f%%", c ? ", " : "", bk_name[c], 100.0 * (double)sum[c] / (double)all);
		if (nsteps > STEP_ROWS)
			xout_printf(o, " (%zu steps, the first %d shown)", nsteps, STEP_ROWS);
		xout_str(o, "</p>\n");
	}
	for (int c = 0; c < BK__N - 1; c++) {
		ivset_release(&cat[c]);
		ivset_release(&uni[c]);
	}
	ivset_release(&win);
	model_steps_release(&st);
}

/* The page's script: the timeline, the charts, a finding's jump to the timeline (no library, no network). */
static const char page_script[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var D = JSON.parse(document.getElementById(\"gs-data\").textContent);\n"
	"var PRE = [[1e12, \"T\"], [1e9, \"G\"], [1e6, \"M\"], [1e3, \"k\"], [1, \"\"], [1e-3, \"m\"], [1e-6, \"\\u00b5\"], [1e-9, \"n\"]];\n"
	"var COL = [\"#3f7fbf\", \"#8e44ad\", \"#e08a1e\", \"#4caf50\", \"#7f8c8d\"];\n"
	"var KIND = [\"kernel\", \"communication kernel\", \"copy\", \"set\", \"NVTX range\"];\n"
	"function num(v, d) {\n"
	"  var s = v.toFixed(d);\n"
	"  return d > 0 ? s.replace(/\\.?0+$/, \"\") : s;\n"
	"}\n"
	"function auto(v) {\n"
	"  var a = Math.abs(v);\n"
	"  return num(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);\n"
	"}\n"
	"/* v with an SI prefix: \"65.5 k\", \"1.5 ms\"; never exponent notation */\n"
	"function si(v, unit, prefix) {\n"
	"  if (!isFinite(v)) return \"-\";\n"
	"  if (!prefix) return auto(v) + (unit === \"%\" ? \"%\" : unit ? \" \" + unit : \"\");\n"
	"  if (v === 0) return \"0\" + (unit ? \" \" + unit : \"\");\n"
	"  var a = Math.abs(v), i = 0;\n"
	"  while (i < PRE.length - 1 && a < PRE[i][0] * 0.9995) i++;\n"
	"  var u = PRE[i][1] + unit;\n"
	"  return auto(v / PRE[i][0]) + (u ? \" \" + u : \"\");\n"
	"}\n"
	"function nice(range, n) {\n"
	"  var raw = range / Math.max(n, 1), mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;\n"
	"  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;\n"
	"}\n"
	"/* a tick time (ns) with the digits its step needs: \"150.002 ms\", \"2 s\" */\n"
	"function tick(t, step) {\n"
	"  var s = step * 1e-9, i = 0;\n"
	"  while (i < PRE.length - 1 && s < PRE[i][0] * 0.9995) i++;\n"
	"  var u = PRE[i][0], d = Math.max(0, -Math.floor(Math.log10(s / u) + 1e-9));\n"
	"  return num(t * 1e-9 / u, Math.min(d, 6)) + \" \" + PRE[i][1] + \"s\";\n"
	"}\n"
	"function dur(ns) { return si(ns * 1e-9, \"s\", 1); }\n"
	"var mctx = document.createElement(\"canvas\").getContext(\"2d\");\n"
	"function tw(text, font) { mctx.font = font; return mctx.measureText(text).width; }\n"
	"var FONT = \"11px sans-serif\";\n"
	"/* ---- the timeline ---- */\n"
	"var tl = document.getElementById(\"tl\"), cv = document.getElementById(\"tlc\"), tip = document.getElementById(\"tip\");\n"
	"var ROW = 18, AX = 26, lanes = D.lanes, ev = D.ev;\n"
	"var first = [], maxd = [], LW = 40;\n"
	"for (var i = 0; i < lanes.length; i++) { first.push(ev.length); maxd.push(0); LW = Math.max(LW, tw(lanes[i], FONT) + 10); }\n"
	"LW = Math.min(LW, 190);\n"
	"for (var k = ev.length - 1; k >= 0; k--) { first[ev[k][0]] = k; if (ev[k][2] > maxd[ev[k][0]]) maxd[ev[k][0]] = ev[k][2]; }\n"
	"var end = lanes.map(function (_, l) { var j = l + 1; while (j < lanes.length && first[j] === ev.length) j++; return j < lanes.length ? first[j] : ev.length; });\n"
	"var v0 = D.ws, v1 = D.we, hl = [], MIN_SPAN = 1000;\n"
	"function clampView() {\n"
	"  var span = Math.max(MIN_SPAN, Math.min(v1 - v0, D.we - D.ws));\n"
	"  if (v0 < D.ws) v0 = D.ws;\n"
	"  v1 = v0 + span;\n"
	"  if (v1 > D.we) { v1 = D.we; v0 = v1 - span; }\n"
	"}\n"
	"function geom() { var w = tl.clientWidth; return { w: w, x0: LW, pw: Math.max(w - LW - 8, 50) }; }\n"
	"function firstIn(l, t) {\n"
	"  var lo = first[l], hi = end[l];\n"
	"  while (lo < hi) { var mid = (lo + hi) >> 1; if (ev[mid][1] < t) lo = mid + 1; else hi = mid; }\n"
	"  return lo;\n"
	"}\n"
	"function fit(g, s, w) {\n"
	"  if (g.measureText(s).width <= w) return s;\n"
	"  while (s.length > 1 && g.measureText(s + \"\\u2026\").width > w) s = s.slice(0, -1);\n"
	"  return s + \"\\u2026\";\n"
	"}\n"
	"function draw() {\n"
	"  var G = geom(), h = lanes.length * ROW + AX, dpr = window.devicePixelRatio || 1;\n"
	"  cv.style.width = G.w + \"px\"; cv.style.height = h + \"px\";\n"
	"  cv.width = Math.round(G.w * dpr); cv.height = Math.round(h * dpr);\n"
	"  var g = cv.getContext(\"2d\");\n"
	"  g.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
	"  g.clearRect(0, 0, G.w, h);\n"
	"  g.font = FONT; g.textBaseline = \"middle\";\n"
	"  var sc = G.pw / (v1 - v0);\n"
	"  for (var l = 0; l < lanes.length; l++) {\n"
	"    var y = l * ROW;\n"
	"    g.fillStyle = l % 2 ? \"#f7f9fb\" : \"#eef1f4\"; g.fillRect(G.x0, y, G.pw, ROW - 1);\n"
	"    g.fillStyle = \"#3b4550\"; g.fillText(fit(g, lanes[l], LW - 8), 2, y + ROW / 2);\n"
	"  }\n"
	"  g.fillStyle = \"rgba(255,193,7,0.35)\";\n"
	"  hl.forEach(function (iv) {\n"
	"    var a = Math.max(G.x0, G.x0 + (iv[0] - v0) * sc), b = Math.min(G.x0 + G.pw, G.x0 + (iv[1] - v0) * sc);\n"
	"    if (b > a - 1) g.fillRect(a, 0, Math.max(b - a, 2), lanes.length * ROW);\n"
	"  });\n"
	"  for (l = 0; l < lanes.length; l++) {\n"
	"    y = l * ROW;\n"
	"    for (var k = firstIn(l, v0 - maxd[l]); k < end[l] && ev[k][1] <= v1; k++) {\n"
	"      var e = ev[k];\n"
	"      if (e[1] + e[2] < v0) continue;\n"
	"      var a = G.x0 + (Math.max(e[1], v0) - v0) * sc, b = G.x0 + (Math.min(e[1] + e[2], v1) - v0) * sc;\n"
	"      g.fillStyle = COL[e[3]];\n"
	"      g.fillRect(a, y + 2, Math.max(b - a, 0.8), ROW - 5);\n"
	"    }\n"
	"  }\n"
	"  var step = nice(v1 - v0, G.pw / 110), yb = lanes.length * ROW;\n"
	"  g.strokeStyle = \"#b8c0c8\"; g.fillStyle = \"#3b4550\";\n"
	"  g.beginPath(); g.moveTo(G.x0, yb + 0.5); g.lineTo(G.x0 + G.pw, yb + 0.5); g.stroke();\n"
	"  for (var t = Math.ceil((v0 - D.ws) / step) * step + D.ws; t <= v1 + 1e-6; t += step) {\n"
	"    var x = G.x0 + (t - v0) * sc, lab = tick(t - D.ws, step), w = g.measureText(lab).width;\n"
	"    g.beginPath(); g.moveTo(x + 0.5, yb); g.lineTo(x + 0.5, yb + 4); g.stroke();\n"
	"    g.textAlign = \"left\";\n"
	"    g.fillText(lab, Math.min(Math.max(x - w / 2, G.x0), G.w - w - 1), yb + 14);\n"
	"  }\n"
	"  g.textAlign = \"left\";\n"
	"  tl.setAttribute(\"data-view-start\", String(Math.round(v0)));\n"
	"  tl.setAttribute(\"data-view-end\", String(Math.round(v1)));\n"
	"}\n"
	"function zoom(f, xc) {\n"
	"  var G = geom(), tc = v0 + (xc - G.x0) / G.pw * (v1 - v0);\n"
	"  v0 = tc - (tc - v0) * f; v1 = tc + (v1 - tc) * f;\n"
	"  clampView(); draw();\n"
	"}\n"
	"cv.addEventListener(\"wheel\", function (e) {\n"
	"  e.preventDefault();\n"
	"  var r = cv.getBoundingClientRect();\n"
	"  zoom(e.deltaY > 0 ? 1.25 : 0.8, e.clientX - r.left);\n"
	"}, { passive: false });\n"
	"var drag = null;\n"
	"cv.addEventListener(\"mousedown\", function (e) { drag = { x: e.clientX, a: v0, b: v1 }; });\n"
	"window.addEventListener(\"mouseup\", function () { drag = null; });\n"
	"cv.addEventListener(\"dblclick\", function () { v0 = D.ws; v1 = D.we; hl = []; draw(); });\n"
	"cv.addEventListener(\"mouseleave\", function () { tip.style.display = \"none\"; });\n"
	"cv.addEventListener(\"mousemove\", function (e) {\n"
	"  var G = geom(), r = cv.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;\n"
	"  if (drag) {\n"
	"    var dt = (e.clientX - drag.x) / G.pw * (drag.b - drag.a);\n"
	"    v0 = drag.a - dt; v1 = drag.b - dt; clampView(); draw(); tip.style.display = \"none\"; return;\n"
	"  }\n"
	"  var l = Math.floor(my / ROW), t = v0 + (mx - G.x0) / G.pw * (v1 - v0), tol = 3 / G.pw * (v1 - v0), best = -1;\n"
	"  if (l >= 0 && l < lanes.length && mx >= G.x0) {\n"
	"    for (var k = firstIn(l, t - tol - maxd[l]); k < end[l] && ev[k][1] <= t + tol; k++)\n"
	"      if (ev[k][1] + ev[k][2] >= t - tol) {\n"
	"        /* a slice under the mouse before one only near it; the innermost (shortest) of nested ones */\n"
	"        var hit = ev[k][1] <= t && t <= ev[k][1] + ev[k][2], bh = best >= 0 && ev[best][1] <= t && t <= ev[best][1] + ev[best][2];\n"
	"        if (best < 0 || (hit && !bh) || (hit === bh && ev[k][2] < ev[best][2])) best = k;\n"
	"      }\n"
	"  }\n"
	"  if (best < 0) { tip.style.display = \"none\"; return; }\n"
	"  var x = ev[best];\n"
	"  tip.textContent = \"\";\n"
	"  var b = document.createElement(\"b\"); b.textContent = D.names[x[4]]; tip.appendChild(b);\n"
	"  tip.appendChild(document.createTextNode(KIND[x[3]] + \" \\u00b7 \" + dur(x[2]) + \" \\u00b7 at \" +\n"
	"    dur(x[1] - D.ws) + \" in the window (\" + dur(x[1]) + \" in the run)\"));\n"
	"  tip.style.display = \"block\";\n"
	"  tip.style.left = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + \"px\";\n"
	"  tip.style.top = (e.clientY + 14) + \"px\";\n"
	"});\n"
	"document.getElementById(\"zin\").addEventListener(\"click\", function () { zoom(0.5, geom().x0 + geom().pw / 2); });\n"
	"document.getElementById(\"zout\").addEventListener(\"click\", function () { zoom(2, geom().x0 + geom().pw / 2); });\n"
	"document.getElementById(\"zreset\").addEventListener(\"click\", function () { v0 = D.ws; v1 = D.we; hl = []; draw(); });\n"
	"/* a finding or a step shows its interval on the timeline */\n"
	"function focus(el) {\n"
	"  var s = +el.getAttribute(\"data-start\"), e = +el.getAttribute(\"data-end\");\n"
	"  var pad = Math.max((e - s) * 0.1, MIN_SPAN);\n"
	"  v0 = s - pad; v1 = e + pad; clampView();\n"
	"  hl = (el.getAttribute(\"data-where\") || (s + \"-\" + e)).split(\" \").map(function (w) {\n"
	"    var p = w.split(\"-\"); return [+p[0], +p[1]];\n"
	"  });\n"
	"  draw();\n"
	"  tl.setAttribute(\"data-focus\", el.id || \"\");\n"
	"  document.getElementById(\"timeline\").scrollIntoView({ block: \"start\" });\n"
	"}\n"
	"Array.prototype.forEach.call(document.querySelectorAll(\"[data-start]\"), function (el) {\n"
	"  if (el === tl) return;\n"
	"  var a = el.querySelector(\".jump\") || el;\n"
	"  a.addEventListener(\"click\", function (e) { e.preventDefault(); focus(el); });\n"
	"});\n"
	"/* ---- charts: memory and the GPU metrics that vary ---- */\n"
	"function svg(tag, attrs, parent) {\n"
	"  var n = document.createElementNS(\"http://www.w3.org/2000/svg\", tag);\n"
	"  for (var k in attrs) n.setAttribute(k, attrs[k]);\n"
	"  if (parent) parent.appendChild(n);\n"
	"  return n;\n"
	"}\n"
	"function chart(box, list, title) {\n"
	"  var W = Math.max(box.clientWidth, 280), H = 150, lo = Infinity, hi = -Infinity;\n"
	"  list.forEach(function (s) { s.pts.forEach(function (p) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); }); });\n"
	"  if (!(hi >= lo)) return;\n"
	"  if (lo > 0 && lo < hi * 0.5) lo = 0;\n"
	"  if (hi === lo) { hi = lo === 0 ? 1 : lo * 1.1 + (lo < 0 ? 0 : 0); if (hi === lo) hi = lo + 1; }\n"
	"  var ystep = nice(hi - lo, 4), ylo = Math.floor(lo / ystep) * ystep, yhi = Math.ceil(hi / ystep) * ystep;\n"
	"  var u = list[0].unit, pre = list[0].prefix, labs = [];\n"
	"  for (var v = ylo; v <= yhi + ystep * 1e-6; v += ystep) labs.push([v, si(Math.abs(v) < ystep * 1e-9 ? 0 : v, u, pre)]);\n"
	"  var ml = 8 + Math.max.apply(null, labs.map(function (l) { return tw(l[1], FONT); })), mr = 12, mt = 8, mb = 22;\n"
	"  var d = document.createElement(\"div\"); d.className = \"chart\"; box.appendChild(d);\n"
	"  var cap = document.createElement(\"div\"); cap.className = \"k\"; cap.textContent = title; d.appendChild(cap);\n"
	"  var s = svg(\"svg\", { width: W, height: H, role: \"img\", \"aria-label\": title }, d);\n"
	"  var pw = W - ml - mr, ph = H - mt - mb;\n"
	"  function X(t) { return ml + (t - D.ws) / (D.we - D.ws) * pw; }\n"
	"  function Y(v) { return mt + ph - (v - ylo) / (yhi - ylo) * ph; }\n"
	"  svg(\"rect\", { x: ml, y: mt, width: pw, height: ph, fill: \"#f7f9fb\", stroke: \"#d8dde3\" }, s);\n"
	"  labs.forEach(function (l) {\n"
	"    svg(\"line\", { x1: ml, x2: ml + pw, y1: Y(l[0]), y2: Y(l[0]), stroke: \"#e6e9ed\" }, s);\n"
	"    var t = svg(\"text\", { x: ml - 4, y: Y(l[0]) + 4, \"text-anchor\": \"end\", \"class\": \"tick\" }, s); t.textContent = l[1];\n"
	"  });\n"
	"  var step = nice(D.we - D.ws, pw / 110);\n"
	"  for (var t = D.ws; t <= D.we + 1e-6; t += step) {\n"
	"    var lab = tick(t - D.ws, step), w = tw(lab, FONT), x = Math.min(Math.max(X(t) - w / 2, ml), W - w - 1);\n"
	"    svg(\"line\", { x1: X(t), x2: X(t), y1: mt + ph, y2: mt + ph + 4, stroke: \"#b8c0c8\" }, s);\n"
	"    var tx = svg(\"text\", { x: x, y: H - 6, \"class\": \"tick\" }, s); tx.textContent = lab;\n"
	"  }\n"
	"  var PAL = [\"#3f7fbf\", \"#c0392b\", \"#27ae60\", \"#8e44ad\"];\n"
	"  list.forEach(function (sr, i) {\n"
	"    var p = \"\", py = null;\n"
	"    sr.pts.forEach(function (q, j) {\n"
	"      var x = X(q[0]).toFixed(1), y = Y(q[1]).toFixed(1);\n"
	"      p += j === 0 ? \"M\" + x + \" \" + y : (sr.step ? \"H\" + x + \"V\" + y : \"L\" + x + \" \" + y);\n"
	"      py = y;\n"
	"    });\n"
	"    if (sr.step && py !== null) p += \"H\" + (ml + pw).toFixed(1);\n"
	"    svg(\"path\", { d: p, fill: \"none\", stroke: PAL[i % PAL.length], \"stroke-width\": 1.5 }, s);\n"
	"  });\n"
	"  if (list.length > 1) {\n"
	"    var lg = document.createElement(\"div\"); lg.className = \"legend\"; d.appendChild(lg);\n"
	"    list.forEach(function (sr, i) {\n"
	"      var sp = document.createElement(\"span\"), ic = document.createElement(\"i\");\n"
	"      ic.style.background = PAL[i % PAL.length]; sp.appendChild(ic); sp.appendChild(document.createTextNode(sr.name)); lg.appendChild(sp);\n"
	"    });\n"
	"  }\n"
	"}\n"
	"function charts() {\n"
	"  var mb = document.getElementById(\"memcharts\"), gb = document.getElementById(\"metcharts\");\n"
	"  mb.textContent = \"\"; gb.textContent = \"\";\n"
	"  if (D.mem.length) chart(mb, D.mem, \"memory in use (\" + D.mem.map(function (s) { return s.name; }).join(\", \") + \")\");\n"
	"  else mb.textContent = \"no memory data in the analysed window (CUDA allocations are recorded by gpuscope profile; NVML's used memory by its sampler)\";\n"
	"  D.metrics.forEach(function (sr) { chart(gb, [sr], sr.name); });\n"
	"  if (!D.metrics.length) gb.textContent = \"no GPU metric varies in the analysed window\";\n"
	"}\n"
	"draw();\n"
	"charts();\n"
	"var rt = null;\n"
	"window.addEventListener(\"resize\", function () { clearTimeout(rt); rt = setTimeout(function () { draw(); charts(); }, 100); });\n"
	"window.__reportReady = true;\n"
	"})();\n";


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
		/* one line, shortened; the full text on hover */
		const char *full = x->s ? x->s : "";
		const char *cn = t->cols[c].name;
		int kernel = (!strcmp(cn, "Name") || !strcmp(cn, "Kernel") || !strcmp(cn, "Kernel Name")) && t->report &&
			     (!strncmp(t->report, "cuda_gpu_kern", 13) || !strncmp(t->report, "cuda_kern", 9));
		char shortened[128];
		xout_str(o, "<td class='s' title='");
		esc_short(o, full, 2000);
		xout_str(o, "'>");
		if (kernel)
			esc(o, kernel_label(shortened, sizeof(shortened), full, NAME_COLUMN));
		else
			esc_short(o, full, NAME_COLUMN);
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

/*
 * The first kernel-counter row (cuda_kern_metrics) of each kernel name, to
 * join to the kernel table: its metric columns are those after "Cost (x)".
 */
struct kmjoin {
	struct stats_table t;
	int ok;
	size_t first_col;
	int name_col;
};

static void kmjoin_init(struct kmjoin *j, const struct model *m)
{
	struct stats_opts so = { 0 };
	int cost;

	memset(j, 0, sizeof(*j));
	if (!(m->has & MODEL_HAS_KMETRICS) || !m->kmetrics.n || stats_run(m, "cuda_kern_metrics", &so, &j->t))
		return;
	cost = stats_col_index(&j->t, "Cost (x)");
	j->name_col = stats_col_index(&j->t, "Kernel");
	if (cost < 0 || j->name_col < 0 || !j->t.nrows || (size_t)cost + 1 >= j->t.ncols) {
		stats_table_release(&j->t);
		return;
	}
	j->first_col = (size_t)cost + 1;
	j->ok = 1;
}

static long kmjoin_row(const struct kmjoin *j, const char *name)
{
	for (size_t r = 0; j->ok && r < j->t.nrows; r++) {
		const char *k = stats_cell_at(&j->t, r, (size_t)j->name_col)->s;
		if (k && !strcmp(k, name))
			return (long)r;
	}
	return -1;
}

/*
 * A stats report as a table (first TABLE_ROWS rows), with bars of its first
 * percent column; @km: counter columns to join by the "Name" column, or NULL.
 */
/*
 * The ranks side by side (stats_rank.h), for a report of two ranks or more:
 * rank, GPU, window, GPU busy (the window less its idle time), exposed
 * communication, its waiting for later ranks, the waiting of the others it
 * caused, and the straggler mark: the rank the straggler finding names (its
 * title starts "Rank N is the straggler", rule_straggler.c), so the mark
 * follows that rule's thresholds.  Unknown cells are "-".
 */
static void ranks_html(struct xout *o, const struct model *m, const struct analyze_result *rp)
{
	struct rank_stats s;
	int straggler = -1;
	char b[64];

	if (rank_stats_build(m, &s) < 2) {
		rank_stats_release(&s);
		return;
	}
	for (size_t i = 0; rp && i < rp->n; i++)
		if (!strcmp(rp->findings[i].id, "straggler") &&
		    sscanf(rp->findings[i].title, "Rank %d is the straggler", &straggler) != 1)
			straggler = -1;
	xout_str(o, "<h2 id='ranks'>Ranks</h2>\n");
	xout_printf(o, "<p class='k'>%zu ranks", s.n);
	if (s.world_size > 0)
		xout_printf(o, " of %d", s.world_size);
	xout_printf(o, " recorded; %llu collective instances matched across ranks (docs/distributed.md)</p>\n",
		    (unsigned long long)s.instances);
	xout_str(o, "<div class='tw'><table id='ranks-table'><tr><th>rank</th><th>GPU</th><th>window</th>"
		    "<th>GPU busy (%)</th><th>exposed comm</th><th>waiting</th><th>others waited</th>"
		    "<th class='s'>straggler</th></tr>\n");
	for (size_t i = 0; i < s.n; i++) {
		const struct rank_row *w = &s.v[i];
		int g = w->last > w->first;
		uint64_t win = g ? w->last - w->first : 0;
		xout_printf(o, "<tr data-rank='%d'%s><td>%d</td>", w->rank, w->rank == straggler ? " class='straggler'" : "",
			    w->rank);
		if (g)
			xout_printf(o, "<td>%u</td><td>%s</td>", w->device, fmt_duration(b, sizeof(b), (double)win));
		else
			xout_str(o, "<td>-</td><td>-</td>");
		if (g)
			xout_printf(o, "<td>%.1f</td>", (double)(win > w->idle_ns ? win - w->idle_ns : 0) * 100 / (double)win);
		else
			xout_str(o, "<td>-</td>");
		xout_printf(o, "<td>%s</td>", g ? fmt_duration(b, sizeof(b), (double)w->exposed_ns) : "-");
		xout_printf(o, "<td>%s</td>", g && s.instances ? fmt_duration(b, sizeof(b), (double)w->wait_ns) : "-");
		xout_printf(o, "<td>%s</td>", g && s.instances ? fmt_duration(b, sizeof(b), (double)w->blame_ns) : "-");
		xout_printf(o, "<td class='s'>%s</td></tr>\n", w->rank == straggler ? "straggler" : "");
	}
	xout_str(o, "</table></div>\n");
	rank_stats_release(&s);
}

static void stats_html(struct xout *o, const struct model *m, const char *report, const struct stats_opts *so,
		       const struct kmjoin *km)
{
	struct stats_table t;
	size_t rows;
	int name_col;

	if (stats_run(m, report, so, &t)) {
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
	name_col = stats_col_index(&t, "Name");
	if (km && (!km->ok || name_col < 0))
		km = NULL;
	rows = t.nrows < TABLE_ROWS ? t.nrows : TABLE_ROWS;
	xout_printf(o, "<div class='tw'><table data-report='%s'><tr>", report);
	for (size_t c = 0; c < t.ncols; c++) {
		header(o, &t.cols[c]);
		if (c == 0 && t.cols[0].type == STATS_PCT)
			xout_str(o, "<th></th>");
	}
	for (size_t c = km ? km->first_col : 0; km && c < km->t.ncols; c++)
		header(o, &km->t.cols[c]);
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
		if (km) {
			long kr = kmjoin_row(km, stats_cell_at(&t, r, (size_t)name_col)->s ? stats_cell_at(&t, r, (size_t)name_col)->s : "");
			for (size_t c = km->first_col; c < km->t.ncols; c++) {
				if (kr < 0)
					xout_str(o, "<td>-</td>");
				else
					cell(o, &km->t, (size_t)kr, c);
			}
		}
		xout_str(o, "</tr>\n");
	}
	xout_str(o, "</table></div>\n");
	if (km)
		xout_str(o, "<p class='k'>counter columns: the first profiled instance of each kernel "
			    "(gpuscope stats --report cuda_kern_metrics has every instance)</p>\n");
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
		xout_printf(o, "<div class='finding %s' id='finding-%zu' data-rule='%s' data-gain='%.17g'", sev, i + 1,
			    f->id, f->gain);
		if (f->nwhere) {
			/* the timeline's interval: the first place to look; every place is highlighted */
			xout_printf(o, " data-start='%" PRIu64 "' data-end='%" PRIu64 "' data-where='",
				    f->where[0].start > t0 ? f->where[0].start - t0 : 0,
				    f->where[0].end > t0 ? f->where[0].end - t0 : 0);
			for (size_t k = 0; k < f->nwhere && k < 50; k++)
				xout_printf(o, "%s%" PRIu64 "-%" PRIu64, k ? " " : "",
					    f->where[k].start > t0 ? f->where[k].start - t0 : 0,
					    f->where[k].end > t0 ? f->where[k].end - t0 : 0);
			xout_ch(o, '\'');
		}
		xout_printf(o, "><span class='gain'>est. gain %.1f%%</span><h3>%zu. ", f->gain * 100, i + 1);
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
			xout_str(o, "<div class='k'><a href='#timeline' class='jump'>show on the timeline</a>: ");
			for (size_t k = 0; k < f->nwhere && k < 5; k++) {
				uint64_t s = f->where[k].start > t0 ? f->where[k].start - t0 : 0;
				fmt_duration(b1, sizeof(b1), (double)s);
				fmt_duration(b2, sizeof(b2), (double)(f->where[k].end - f->where[k].start));
				xout_printf(o, "%sat %s for %s", k ? ", " : "", b1, b2);
			}
			if (f->nwhere > 5)
				xout_printf(o, " and %zu more", f->nwhere - 5);
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

/* The analysed window: the findings' (analyze's), else the span of the GPU work, else the run. */
static void html_window(const struct model *m, const struct analyze_result *r, uint64_t *ws, uint64_t *we)
{
	*ws = m->t_min;
	*we = m->t_max;
	if (r && r->summary.win_end > r->summary.win_start) {
		*ws = r->summary.win_start;
		*we = r->summary.win_end;
	}
	if (*we <= *ws)
		*we = *ws + 1;
}

int export_html(const struct export_input *in, struct xout *o)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	const struct analyze_result *rp = in->findings;
	struct analyze_result none;
	const char *title = opt->title ? opt->title : (m->path ? m->path : "run");
	uint64_t t0 = m->t_min, ws, we, drops = 0;
	struct stats_opts so = { 0 };
	struct strbuf consts = STRBUF_INIT;
	struct kmjoin km;
	struct tl tl;
	char buf[64], b2[32], b3[32];

	if (!rp) {
		memset(&none, 0, sizeof(none));
		none.summary.gpu_busy = none.summary.gpu_idle = -1;
		rp = &none;
	}
	html_window(m, in->findings, &ws, &we);
	/* the tables are the analysed window's too (stats' --start/--end) */
	so.start = ws;
	so.end = we;

	xout_str(o, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n"
		    "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
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
	xout_str(o, "</div>\n<nav><a href='#summary'>summary</a> <a href='#timeline'>timeline</a> "
		    "<a href='#steps'>steps</a> <a href='#findings'>findings</a> <a href='#kernels'>kernels</a> "
		    "<a href='#ops'>operators</a> <a href='#memory'>memory</a> <a href='#metrics'>GPU metrics</a></nav>\n");

	xout_str(o, "<h2 id='summary'>Summary</h2>\n<div class='cards'>");
	card(o, fmt_duration(buf, sizeof(buf), (double)(we - ws)), "analysed window");
	card(o, fmt_duration(buf, sizeof(buf), (double)(m->t_max > m->t_min ? m->t_max - m->t_min : 0)), "whole run");
	if (rp->summary.gpu_busy >= 0) {
		snprintf(buf, sizeof(buf), "%.1f%%", rp->summary.gpu_busy * 100);
		card(o, buf, "GPU busy in the window");
	}
	if (rp->summary.step_period_s > 0)
		card(o, fmt_duration(buf, sizeof(buf), rp->summary.step_period_s * 1e9), "step period");
	snprintf(buf, sizeof(buf), "%zu", rp->n);
	card(o, buf, "findings");
	snprintf(buf, sizeof(buf), "%zu", m->kernels.n);
	card(o, buf, "kernels in the run");
	xout_str(o, "</div>\n");
	xout_printf(o, "<div class='k'>The analysed window runs from %s to %s of the run%s%s; the timeline, the "
		       "step bars, the tables and the charts below show it.",
		    fmt_duration(b2, sizeof(b2), (double)(ws - t0)), fmt_duration(b3, sizeof(b3), (double)(we - t0)),
		    rp->summary.step_source ? ", steps: " : "", "");
	if (rp->summary.step_source)
		esc(o, rp->summary.step_source);
	xout_str(o, "</div>\n");
	if (!in->findings)
		xout_str(o, "<p class='note'>not analysed: no findings in this page</p>\n");
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

	xout_str(o, "<h2 id='timeline'>Timeline of the analysed window</h2>\n"
		    "<div class='tools'><button id='zin' type='button'>zoom in</button> <button id='zout' "
		    "type='button'>zoom out</button> <button id='zreset' type='button'>whole window</button> "
		    "<span class='k'>wheel: zoom, drag: pan, double-click: whole window; times from the start of "
		    "the window</span></div>\n");
	xout_printf(o, "<div id='tl' class='tl' data-window-start='%" PRIu64 "' data-window-end='%" PRIu64
		       "'><canvas id='tlc'></canvas></div>\n<div id='tip' class='tip'></div>\n",
		    ws - t0, we - t0);
	tl_build(&tl, m, ws, we);
	if (!tl.n)
		xout_str(o, "<p class='note'>nothing ran on the GPU or in NVTX ranges in the window</p>\n");
	if (tl.dropped)
		xout_printf(o, "<p class='note'>%" PRIu64 " shorter slices are not drawn (the timeline holds the %d "
			       "longest); gpuscope export --format perfetto has every one</p>\n",
			    tl.dropped, TL_MAX_EVENTS);
	xout_str(o, "<div class='legend'><span><i style='background:#3f7fbf'></i>kernel</span><span><i "
		    "style='background:#8e44ad'></i>communication</span><span><i style='background:#e08a1e'></i>copy"
		    "</span><span><i style='background:#4caf50'></i>set</span><span><i style='background:#7f8c8d'>"
		    "</i>NVTX range</span><span><i style='background:rgba(255,193,7,0.6)'></i>selected finding"
		    "</span></div>\n");

	xout_str(o, "<h2 id='steps'>Step time breakdown</h2>\n");
	step_breakdown(o, m, in->aopts, ws, we);

	xout_str(o, "<h2 id='findings'>Findings</h2>\n");
	findings_html(o, rp, t0);
	ranks_html(o, m, in->findings ? rp : NULL);

	xout_str(o, "<h2 id='kernels'>Top kernels</h2>\n");
	kmjoin_init(&km, m);
	stats_html(o, m, "cuda_gpu_kern_sum", &so, &km);
	if (km.ok)
		stats_table_release(&km.t);
	xout_str(o, "<h2 id='ops'>Top operators</h2>\n");
	stats_html(o, m, "torch_op_sum", &so, NULL);
	xout_str(o, "<h3>NVTX ranges</h3>\n<span id='nvtx'></span>");
	stats_html(o, m, "nvtx_sum", &so, NULL);
	xout_str(o, "<h2 id='copies'>Copies by kind</h2>\n");
	stats_html(o, m, "cuda_gpu_mem_time_sum", &so, NULL);
	stats_html(o, m, "cuda_gpu_mem_size_sum", &so, NULL);
	xout_str(o, "<h2 id='api'>CUDA API calls</h2>\n");
	stats_html(o, m, "cuda_api_sum", &so, NULL);
	xout_str(o, "<h2 id='osrt'>OS runtime calls</h2>\n");
	stats_html(o, m, "osrt_sum", &so, NULL);
	xout_str(o, "<h2 id='memory'>Memory</h2>\n<div id='memcharts'></div>\n");
	xout_str(o, "<h2 id='metrics'>GPU metrics</h2>\n<div id='metcharts'></div>\n");

	/* the data the script draws: times in ns from the run's start */
	xout_printf(o, "<script type='application/json' id='gs-data'>{\"ws\":%" PRIu64 ",\"we\":%" PRIu64 ",",
		    ws - t0, we - t0);
	tl_json(o, &tl, t0);
	tl_release(&tl);
	xout_ch(o, ',');
	memory_json(o, m, t0, ws, we);
	xout_ch(o, ',');
	metrics_json(o, m, t0, ws, we, &consts);
	xout_str(o, "}</script>\n");
	if (consts.len) {
		xout_str(o, "<h3>Constant in the window</h3>\n<div class='tw'><table id='constants'><tr><th class='s'>"
			    "metric</th><th>value</th></tr>\n");
		xout_write(o, consts.buf, consts.len);
		xout_str(o, "</table></div>\n");
	} else if (!m->metrics.n) {
		xout_str(o, "<p class='note'>no GPU metrics were sampled in this run</p>\n");
	}
	strbuf_release(&consts);
	xout_str(o, "<p class='sub'>Written by gpuscope " GPUSCOPE_VERSION ".</p>\n<script>\n");
	xout_str(o, page_script);
	xout_str(o, "</script>\n</body></html>\n");
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
