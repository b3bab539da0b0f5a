/*
 * stats_gpu.c - per-GPU reports: gpu_metrics_sum and gpu_util.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- gpu_metrics_sum ---- */

struct msum {
	uint32_t device, name_id;
	uint64_t count;
	double min, max, sum;
};

static int cmp_msum(const void *pa, const void *pb, void *arg)
{
	const struct msum *a = pa, *b = pb;
	const struct model *m = arg;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return strcmp(model_str(m, a->name_id), model_str(m, b->name_id));
}

static int metrics_run(const struct model *m, const struct stats_opts *o,
		       const struct stats_filter *f, struct stats_table *t)
{
	struct grpmap g = { 0 };
	struct msum *v = NULL;
	size_t n = 0, alloc = 0;
	size_t cg = st_col(t, "GPU", STATS_STR);
	size_t cm = st_col(t, "Metric", STATS_STR);
	size_t cc = st_col(t, "Samples", STATS_INT);
	size_t cmin = st_col(t, "Min", STATS_FLOAT);
	size_t cavg = st_col(t, "Avg", STATS_FLOAT);
	size_t cmax = st_col(t, "Max", STATS_FLOAT);

	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *s = &m->metrics.v[i];
		uint32_t key[GRP_KEY_WORDS] = { s->device, s->name_id };
		struct grp *gr;
		struct msum *x;

		if (!stats_filter_pass(f, s->time, s->time))
			continue;
		gr = grpmap_get(&g, key);
		if (!gr->aux) {
			ALLOC_GROW(v, n + 1, alloc);
			memset(&v[n], 0, sizeof(v[0]));
			v[n].device = s->device;
			v[n].name_id = s->name_id;
			v[n].min = v[n].max = s->value;
			gr->aux = ++n;
		}
		x = &v[gr->aux - 1];
		x->count++;
		x->sum += s->value;
		if (s->value < x->min)
			x->min = s->value;
		if (s->value > x->max)
			x->max = s->value;
	}
	if (n > 1)
		qsort_r(v, n, sizeof(*v), cmp_msum, (void *)m);
	for (size_t i = 0; i < n; i++) {
		size_t r = st_row(t);
		char buf[32];

		if (v[i].device == UINT32_MAX)
			snprintf(buf, sizeof(buf), "host");
		else
			snprintf(buf, sizeof(buf), "%u", v[i].device);
		st_str(t, r, cg, buf);
		st_str(t, r, cm, model_str(m, v[i].name_id));
		st_int(t, r, cc, (int64_t)v[i].count);
		st_f(t, r, cmin, v[i].min);
		st_f(t, r, cavg, v[i].sum / (double)v[i].count);
		st_f(t, r, cmax, v[i].max);
	}
	free(v);
	grpmap_release(&g);
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_METRICS, "GPU metric samples", f->active);
	return 0;
}

const struct stats_report_def stats_def_gpu_metrics_sum = {
	.name = "gpu_metrics_sum",
	.title = "GPU Metrics Summary",
	.types = 1u << TRACE_EV_METRIC,
	.run = metrics_run,
};

/* ---- gpu_util ---- */

/* Busy intervals of one device (stream = UINT32_MAX) or one stream. */
struct busy {
	uint32_t device, stream;
	struct interval_set all, kern, copy, set;
	uint64_t nk, nc, ns;
	uint64_t first, last;
};

struct busy_list {
	struct busy *v;
	size_t n, alloc;
	struct grpmap index;
};

static struct busy *busy_get(struct busy_list *l, uint32_t device, uint32_t stream)
{
	uint32_t key[GRP_KEY_WORDS] = { device, stream };
	struct grp *g = grpmap_get(&l->index, key);

	if (!g->aux) {
		ALLOC_GROW(l->v, l->n + 1, l->alloc);
		memset(&l->v[l->n], 0, sizeof(l->v[0]));
		l->v[l->n].device = device;
		l->v[l->n].stream = stream;
		g->aux = ++l->n;
	}
	return &l->v[g->aux - 1];
}

static void busy_add(struct busy_list *l, uint32_t device, uint32_t stream, int kind,
		     uint64_t start, uint64_t end)
{
	struct busy *b[2] = { busy_get(l, device, UINT32_MAX), NULL };

	b[1] = busy_get(l, device, stream);
	if (end < start)
		end = start;
	for (int i = 0; i < 2; i++) {
		struct busy *x = b[i];
		ivset_add(&x->all, start, end);
		if (kind == 0) {
			ivset_add(&x->kern, start, end);
			x->nk++;
		} else if (kind == 1) {
			ivset_add(&x->copy, start, end);
			x->nc++;
		} else {
			ivset_add(&x->set, start, end);
			x->ns++;
		}
		if (!x->first || start < x->first)
			x->first = start;
		if (end > x->last)
			x->last = end;
	}
}

static int cmp_busy(const void *pa, const void *pb)
{
	const struct busy *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	/* the device row (stream UINT32_MAX) first, then streams in order */
	if (a->stream != b->stream) {
		if (a->stream == UINT32_MAX)
			return -1;
		if (b->stream == UINT32_MAX)
			return 1;
		return a->stream < b->stream ? -1 : 1;
	}
	return 0;
}

/*
 * With a window (--start/--end, --nvtx) the busy time is counted inside the
 * window and the span is the window (its pieces, within the run): busy % is
 * then the share of the window, as analyze and diff define GPU busy for the
 * window they analyse (docs/rules.md, "GPU busy").  Without one, the span is
 * each device's first to last operation, as nsys's gpu_gaps/gpu_time_util.
 */
static void busy_add_clipped(struct busy_list *l, const struct stats_filter *f, uint32_t device,
			     uint32_t stream, int kind, uint64_t start, uint64_t end)
{
	if (!f || !f->active) {
		busy_add(l, device, stream, kind, start, end);
		return;
	}
	for (size_t i = 0; i < f->n; i++) {
		uint64_t s = start > f->w[i].start ? start : f->w[i].start;
		uint64_t e = end < f->w[i].end ? end : f->w[i].end;
		if (s < e || (s == e && start == end && s >= f->w[i].start && s <= f->w[i].end))
			busy_add(l, device, stream, kind, s, e);
	}
}

static uint64_t window_span(const struct model *m, const struct stats_filter *f)
{
	uint64_t span = 0;

	for (size_t i = 0; i < f->n; i++) {
		uint64_t s = f->w[i].start > m->t_min ? f->w[i].start : m->t_min;
		uint64_t e = f->w[i].end < m->t_max ? f->w[i].end : m->t_max;
		if (e > s)
			span += e - s;
	}
	return span;
}

static int util_run(const struct model *m, const struct stats_opts *o,
		    const struct stats_filter *f, struct stats_table *t)
{
	struct busy_list l = { 0 };
	size_t cd, cst, csp, cb, cbp, cip, ck, cc, cs, cnk, cnc, cns, cname;
	uint64_t span = 0;

	cd = st_col(t, "Device", STATS_INT);
	cst = st_col(t, "Stream", STATS_STR);
	csp = st_col(t, "Span (ns)", STATS_DUR);
	cb = st_col(t, "Busy (ns)", STATS_DUR);
	cbp = st_col(t, "Busy (%)", STATS_PCT);
	cip = st_col(t, "Idle (%)", STATS_PCT);
	ck = st_col(t, "Kernel Time (ns)", STATS_DUR);
	cc = st_col(t, "Copy Time (ns)", STATS_DUR);
	cs = st_col(t, "Set Time (ns)", STATS_DUR);
	cnk = st_col(t, "Kernels", STATS_INT);
	cnc = st_col(t, "Copies", STATS_INT);
	cns = st_col(t, "Sets", STATS_INT);
	cname = st_col(t, "Name", STATS_STR);

	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		if (stats_filter_pass(f, k->start, k->end))
			busy_add_clipped(&l, f, k->device, k->stream, 0, k->start, k->end);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *c = &m->memcpys.v[i];
		if (stats_filter_pass(f, c->start, c->end))
			busy_add_clipped(&l, f, c->device, c->stream, 1, c->start, c->end);
	}
	for (size_t i = 0; i < m->memsets.n; i++) {
		const struct trace_memset *s = &m->memsets.v[i];
		if (stats_filter_pass(f, s->start, s->end))
			busy_add_clipped(&l, f, s->device, s->stream, 2, s->start, s->end);
	}
	grpmap_release(&l.index);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), cmp_busy);
	for (size_t i = 0; i < l.n; i++) {
		struct busy *b = &l.v[i];
		uint64_t busy = ivset_total(&b->all);
		size_t r = st_row(t);
		char buf[32];

		if (b->stream == UINT32_MAX) {
			/* the span is the window's, else the device's: its first to its last operation */
			span = f && f->active ? window_span(m, f) : b->last - b->first;
			snprintf(buf, sizeof(buf), "all");
		} else {
			snprintf(buf, sizeof(buf), "%u", b->stream);
		}
		st_int(t, r, cd, b->device);
		st_str(t, r, cst, buf);
		st_int(t, r, csp, (int64_t)span);
		st_int(t, r, cb, (int64_t)busy);
		if (span) {
			st_f(t, r, cbp, 100.0 * (double)busy / (double)span);
			st_f(t, r, cip, 100.0 - 100.0 * (double)busy / (double)span);
		}
		st_int(t, r, ck, (int64_t)ivset_total(&b->kern));
		st_int(t, r, cc, (int64_t)ivset_total(&b->copy));
		st_int(t, r, cs, (int64_t)ivset_total(&b->set));
		st_int(t, r, cnk, (int64_t)b->nk);
		st_int(t, r, cnc, (int64_t)b->nc);
		st_int(t, r, cns, (int64_t)b->ns);
		if (b->stream == UINT32_MAX) {
			const struct trace_device *d = model_device(m, b->device);
			if (d && d->name_id)
				st_str(t, r, cname, model_str(m, d->name_id));
		}
		ivset_release(&b->all);
		ivset_release(&b->kern);
		ivset_release(&b->copy);
		ivset_release(&b->set);
	}
	free(l.v);
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels or memory operations", f->active);
	return 0;
}

const struct stats_report_def stats_def_gpu_util = {
	.name = "gpu_util",
	.title = "GPU Utilization Summary",
	.types = 1u << TRACE_EV_KERNEL | 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET |
		 1u << TRACE_EV_DEVICE,
	.run = util_run,
};
