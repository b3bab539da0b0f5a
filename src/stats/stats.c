/*
 * stats.c - the report table, building tables, summary numbers, grouping,
 * filters and running reports over a model.
 */
#include "stats_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reports ---- */

static const struct stats_report_def *const defs[] = {
	&stats_def_cuda_api_sum,
	&stats_def_cuda_api_trace,
	&stats_def_cuda_gpu_kern_sum,
	&stats_def_cuda_gpu_kern_gb_sum,
	&stats_def_cuda_gpu_mem_time_sum,
	&stats_def_cuda_gpu_mem_size_sum,
	&stats_def_cuda_gpu_trace,
	&stats_def_cuda_kern_exec_sum,
	&stats_def_nvtx_sum,
	&stats_def_nvtx_gpu_proj_sum,
	&stats_def_nvtx_kern_sum,
	&stats_def_osrt_sum,
	&stats_def_gpu_metrics_sum,
	&stats_def_gpu_util,
	&stats_def_cuda_kern_metrics,
	&stats_def_cuda_kern_eff,
	&stats_def_cuda_kern_class_sum,
	&stats_def_rank_sum,
	&stats_def_nccl_sum,
	&stats_def_torch_op_sum,
	&stats_def_torch_mem_sum,
};

static const char *names[ARRAY_SIZE(defs) + 1];

/* The default set: nsys stats' own default reports that gpuscope has, in its order. */
static const char *const default_set[] = {
	"nvtx_sum", "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
	"cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", NULL,
};

const char *const *stats_report_names(void)
{
	if (!names[0])
		for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
			names[i] = defs[i]->name;
	return names;
}

const char *const *stats_default_reports(void)
{
	return default_set;
}

const struct stats_report_def *stats_report_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
		if (!strcmp(defs[i]->name, name))
			return defs[i];
	return NULL;
}

/* nsys's kernel-name options, by STATS_NAMES_* */
static const char *const names_opt[] = { [STATS_NAMES_BASE] = "base", [STATS_NAMES_MANGLED] = "mangled" };

/* The report named by the part of @report before its ':', or NULL. */
static const struct stats_report_def *report_prefix(const char *report)
{
	size_t len = strcspn(report, ":");

	for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
		if (strlen(defs[i]->name) == len && !strncmp(defs[i]->name, report, len))
			return defs[i];
	return NULL;
}

const struct stats_report_def *stats_report_parse(const char *report, int *names)
{
	const struct stats_report_def *d = report_prefix(report);
	const char *opt = strchr(report, ':');

	*names = STATS_NAMES_FULL;
	if (!d || !opt)
		return d;
	if (!d->kernel_names)
		return NULL;
	for (int i = STATS_NAMES_BASE; i <= STATS_NAMES_MANGLED; i++)
		if (!strcmp(opt + 1, names_opt[i])) {
			*names = i;
			return d;
		}
	return NULL;
}

const char *stats_report_title(const char *report)
{
	int names;
	const struct stats_report_def *d = stats_report_parse(report, &names);
	return d ? d->title : NULL;
}

int stats_report_streams(const char *report)
{
	const struct stats_report_def *d = stats_report_find(report);
	return d && d->add;
}

int stats_timeunit_valid(const char *unit)
{
	return unit && (!strcmp(unit, "ns") || !strcmp(unit, "us") || !strcmp(unit, "ms") ||
			!strcmp(unit, "s"));
}

static int unknown_report(const char *report)
{
	struct strbuf sb = STRBUF_INIT;
	const char *const *n = stats_report_names();
	const struct stats_report_def *d = report_prefix(report);
	int ret;

	if (d && strchr(report, ':')) {
		/* a known report with an option it does not take (nsys's :nvtx-name, say) */
		for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
			if (defs[i]->kernel_names)
				strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", defs[i]->name);
		if (d->kernel_names)
			ret = error("report '%s': unknown option '%s' (':base' or ':mangled')", report,
				    strchr(report, ':'));
		else
			ret = error("report '%s': '%s' takes no option (':base' and ':mangled' are for "
				    "the reports of kernel names: %s)", report, d->name, sb.buf);
		strbuf_release(&sb);
		return ret;
	}
	for (size_t i = 0; n[i]; i++) {
		if (i)
			strbuf_addstr(&sb, ", ");
		strbuf_addstr(&sb, n[i]);
	}
	ret = error("unknown report '%s'; known reports: %s", report, sb.buf);
	strbuf_release(&sb);
	return ret;
}

/* ---- tables ---- */

void st_init(struct stats_table *t, const char *report, const char *title)
{
	memset(t, 0, sizeof(*t));
	strtab_init(&t->strings);
	t->report = report;
	t->title = title;
}

size_t st_col(struct stats_table *t, const char *name, int type)
{
	if (t->ncols >= STATS_MAX_COLS)
		BUG("report '%s' has more than %d columns", t->report, STATS_MAX_COLS);
	if (t->nrows)
		BUG("column added to report '%s' after rows", t->report);
	t->cols[t->ncols].name = name;
	t->cols[t->ncols].type = type;
	return t->ncols++;
}

size_t st_row(struct stats_table *t)
{
	size_t r = t->nrows;

	if (r + 1 > t->alloc) {
		/* t->alloc counts rows; cells and flags hold ncols per row */
		size_t rows = alloc_nr(t->alloc);
		size_t ncols = t->ncols ? t->ncols : 1;
		t->cells = xrealloc(t->cells, rows * ncols * sizeof(*t->cells));
		t->invalid = xrealloc(t->invalid, rows * ncols);
		t->alloc = rows;
	}
	memset(&t->cells[r * t->ncols], 0, t->ncols * sizeof(*t->cells));
	memset(&t->invalid[r * t->ncols], 1, t->ncols);
	t->nrows++;
	return r;
}

static union stats_cell *cell(struct stats_table *t, size_t r, size_t c)
{
	if (r >= t->nrows || c >= t->ncols)
		BUG("cell %zu,%zu out of report '%s'", r, c, t->report);
	t->invalid[r * t->ncols + c] = 0;
	return &t->cells[r * t->ncols + c];
}

void st_str(struct stats_table *t, size_t r, size_t c, const char *s)
{
	uint32_t id = strtab_intern(&t->strings, s ? s : "");
	cell(t, r, c)->s = strtab_get(&t->strings, id);
}

void st_int(struct stats_table *t, size_t r, size_t c, int64_t v)
{
	cell(t, r, c)->i = v;
}

void st_f(struct stats_table *t, size_t r, size_t c, double v)
{
	cell(t, r, c)->f = v;
}

void st_empty(struct stats_table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(t->empty_reason);
	t->empty_reason = sb.buf;
}

void st_note(struct stats_table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(t->note);
	t->note = sb.buf;
}

void stats_table_release(struct stats_table *t)
{
	free(t->note);
	free(t->cells);
	free(t->invalid);
	strtab_release(&t->strings);
	free(t->empty_reason);
	memset(t, 0, sizeof(*t));
}

int stats_col_index(const struct stats_table *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].name, name))
			return (int)c;
	return -1;
}

void st_no_data(struct stats_table *t, const struct model *m, unsigned has_bit,
		const char *what, int filtered)
{
	int gpuscope = !m->format || !strcmp(m->format, "gpuscope");

	if (!(m->has & has_bit) && !gpuscope)
		/* importers set m->has to what the input can hold */
		st_empty(t, "%s: %s are not recorded in this %s input", t->report, what, m->format);
	else if (!(m->has & has_bit))
		/* a gpuscope report does not say what was traced: only that none is there */
		st_empty(t, "%s: no %s were recorded in this report", t->report, what);
	else if (filtered)
		st_empty(t, "%s: no %s in the selected time range", t->report, what);
	else
		st_empty(t, "%s: no %s in this report", t->report, what);
}

/* ---- summary numbers ---- */

static void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

/* Reorder v[0..n) so that v[k] is the value of rank k (Hoare's selection). */
static int cmp_u64_asc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void select_k(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, rounds = 0, limit = 16;

	for (size_t m = n; m; m >>= 1)
		limit += 2;
	while (hi > lo) {
		if (++rounds > limit) {
			/* an input that defeats the pivot choice: sort what is left */
			qsort(v + lo, hi - lo + 1, sizeof(*v), cmp_u64_asc);
			return;
		}
		size_t mid = lo + (hi - lo) / 2, i, j;
		uint64_t pivot;

		/* median of three as pivot, kept at v[mid] */
		if (v[mid] < v[lo])
			swap_u64(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap_u64(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap_u64(&v[hi], &v[mid]);
		pivot = v[mid];
		i = lo;
		j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap_u64(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		/* now v[lo..j] <= pivot <= v[i..hi], and j < i */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

void summ_compute(uint64_t *v, size_t n, struct summ *s)
{
	double sum = 0, mean, ss = 0;
	uint64_t total = 0, mn = UINT64_MAX, mx = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		total += v[i];
		if (v[i] < mn)
			mn = v[i];
		if (v[i] > mx)
			mx = v[i];
	}
	sum = (double)total;
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] - mean;
		ss += d * d;
	}
	s->total = total;
	s->count = n;
	s->min = mn;
	s->max = mx;
	s->avg = mean;
	s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	select_k(v, n, n / 2);
	if (n % 2) {
		s->med = (double)v[n / 2];
	} else {
		/* the largest value below rank n/2 is the lower middle one */
		uint64_t lower = v[0];
		for (size_t i = 1; i < n / 2; i++)
			if (v[i] > lower)
				lower = v[i];
		s->med = ((double)lower + (double)v[n / 2]) / 2;
	}
}

size_t st_summary_cols(struct stats_table *t, const char *count_name)
{
	size_t c0 = st_col(t, "Time (%)", STATS_PCT);

	st_col(t, "Total Time (ns)", STATS_DUR);
	st_col(t, count_name, STATS_INT);
	st_col(t, "Avg (ns)", STATS_DURF);
	st_col(t, "Med (ns)", STATS_DURF);
	st_col(t, "Min (ns)", STATS_DUR);
	st_col(t, "Max (ns)", STATS_DUR);
	st_col(t, "StdDev (ns)", STATS_DURF);
	return c0;
}

void st_summary_row(struct stats_table *t, size_t r, size_t c0, const struct summ *s,
		    uint64_t grand)
{
	st_f(t, r, c0, grand ? 100.0 * (double)s->total / (double)grand : 0);
	st_int(t, r, c0 + 1, (int64_t)s->total);
	st_int(t, r, c0 + 2, (int64_t)s->count);
	st_f(t, r, c0 + 3, s->avg);
	st_f(t, r, c0 + 4, s->med);
	st_int(t, r, c0 + 5, (int64_t)s->min);
	st_int(t, r, c0 + 6, (int64_t)s->max);
	st_f(t, r, c0 + 7, s->stddev);
}

/* ---- groups ---- */

static inline uint64_t key_word(const uint32_t *key, int i)
{
	return (uint64_t)key[2 * i] | (uint64_t)key[2 * i + 1] << 32;
}

static inline uint64_t key_hash(const uint32_t *key)
{
	uint64_t h = key_word(key, 0) * 0x9e3779b97f4a7c15ull;

	h ^= key_word(key, 1) * 0xc2b2ae3d27d4eb4full;
	h ^= key_word(key, 2) * 0x165667b19e3779f9ull;
	h ^= key_word(key, 3) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 31);
}

static inline int key_eq(const uint32_t *a, const uint32_t *b)
{
	return key_word(a, 0) == key_word(b, 0) && key_word(a, 1) == key_word(b, 1) &&
	       key_word(a, 2) == key_word(b, 2) && key_word(a, 3) == key_word(b, 3);
}

/* Rebuild the slots, at least twice as many as groups (and a power of two). */
static void grpmap_rehash(struct grpmap *g)
{
	size_t n = g->nslots ? g->nslots * 2 : 64;

	while (n < 2 * (g->n + 1))
		n *= 2;

	free(g->slots);
	g->slots = xcalloc(n, sizeof(*g->slots));
	g->nslots = n;
	for (size_t i = 0; i < g->n; i++) {
		size_t s = key_hash(g->v[i].key) & (n - 1);
		while (g->slots[s])
			s = (s + 1) & (n - 1);
		g->slots[s] = (uint32_t)i + 1;
	}
}

struct grp *grpmap_get(struct grpmap *g, const uint32_t *key)
{
	size_t s;

	if ((g->n + 1) * 2 > g->nslots)
		grpmap_rehash(g);
	s = key_hash(key) & (g->nslots - 1);
	while (g->slots[s]) {
		struct grp *x = &g->v[g->slots[s] - 1];
		if (key_eq(x->key, key))
			return x;
		s = (s + 1) & (g->nslots - 1);
	}
	ALLOC_GROW(g->v, g->n + 1, g->alloc);
	memset(&g->v[g->n], 0, sizeof(g->v[0]));
	memcpy(g->v[g->n].key, key, sizeof(g->v[0].key));
	g->slots[s] = (uint32_t)g->n + 1;
	return &g->v[g->n++];
}

void grpmap_release(struct grpmap *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].d.v);
	free(g->v);
	free(g->slots);
	memset(g, 0, sizeof(*g));
}

static int cmp_grp_total(const void *pa, const void *pb)
{
	const struct grp *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return memcmp(a->key, b->key, sizeof(a->key));
}

void grpmap_sort_by_total(struct grpmap *g)
{
	if (g->n > 1)
		qsort(g->v, g->n, sizeof(g->v[0]), cmp_grp_total);
	/* the slots no longer match: drop them (a later get rebuilds) */
	free(g->slots);
	g->slots = NULL;
	g->nslots = 0;
	if (g->n)
		grpmap_rehash(g);
}

/* ---- filters ---- */

static int cmp_interval(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

int stats_filter_init(struct stats_filter *f, const struct model *m, const struct stats_opts *o)
{
	uint64_t lo = 0, hi = UINT64_MAX;

	memset(f, 0, sizeof(*f));
	if (!o)
		return 0;
	if (o->start || o->end) {
		uint64_t base = o->relative ? m->t_min : 0;
		lo = base + o->start;
		hi = o->end ? base + o->end : UINT64_MAX;
		if (hi < lo)
			return error("the window ends (%llu) before it starts (%llu)",
				     (unsigned long long)hi, (unsigned long long)lo);
		f->active = 1;
	}
	if (o->nvtx) {
		uint32_t name = strtab_find(&m->str, o->nvtx);
		uint32_t dom = o->nvtx_domain ? strtab_find(&m->str, o->nvtx_domain) : 0;
		size_t alloc = 0, out = 0;

		f->active = 1;
		for (size_t i = 0; name != UINT32_MAX && dom != UINT32_MAX && i < m->nvtx.n; i++) {
			const struct trace_nvtx_range *r = &m->nvtx.v[i];
			uint64_t s, e;
			if (r->name_id != name || !r->end || (o->nvtx_domain && r->domain_id != dom))
				continue;
			s = r->start > lo ? r->start : lo;
			e = r->end < hi ? r->end : hi;
			if (s > e)
				continue;
			ALLOC_GROW(f->w, f->n + 1, alloc);
			f->w[f->n].start = s;
			f->w[f->n].end = e;
			f->n++;
		}
		if (!f->n) {
			if (o->nvtx_domain)
				return error("no closed NVTX range '%s' in domain '%s'%s", o->nvtx,
					     o->nvtx_domain, lo || hi != UINT64_MAX ?
					     " in the selected time range" : "");
			return error("no closed NVTX range '%s'%s", o->nvtx,
				     lo || hi != UINT64_MAX ? " in the selected time range" : "");
		}
		qsort(f->w, f->n, sizeof(f->w[0]), cmp_interval);
		for (size_t i = 1; i < f->n; i++) {
			if (f->w[i].start <= f->w[out].end) {
				if (f->w[i].end > f->w[out].end)
					f->w[out].end = f->w[i].end;
			} else {
				f->w[++out] = f->w[i];
			}
		}
		f->n = out + 1;
	} else if (f->active) {
		f->w = xmalloc(sizeof(*f->w));
		f->w[0].start = lo;
		f->w[0].end = hi;
		f->n = 1;
	}
	return 0;
}

int stats_filter_pass(const struct stats_filter *f, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi;

	if (!f || !f->active)
		return 1;
	if (end < start)
		end = start;
	/* first window whose end >= start */
	hi = f->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->w[mid].end < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->w[lo].start <= end;
}

void stats_filter_release(struct stats_filter *f)
{
	free(f->w);
	memset(f, 0, sizeof(*f));
}

/* ---- running ---- */

static void direct_release(struct stats_acc *a)
{
	for (size_t i = 0; i < a->ndirect; i++)
		free(a->direct[i].v);
	free(a->direct);
	a->direct = NULL;
	a->ndirect = 0;
}

void stats_acc_release(struct stats_acc *a)
{
	grpmap_release(&a->g);
	direct_release(a);
}

struct grp *stats_acc_name_group(struct stats_acc *a, uint32_t stream, uint32_t name)
{
	uint32_t key[GRP_KEY_WORDS] = { name, stream };
	/* rows with model ids (STATS_MODEL_IDS) use slot 0, stream s slot s + 1 */
	size_t slot = stream == STATS_MODEL_IDS ? 0 : (size_t)stream + 1;
	struct stats_direct *d;
	struct grp *g;

	if (slot >= STATS_DIRECT_STREAMS || name >= (1u << 24))
		return grpmap_get(&a->g, key);
	if (slot < a->ndirect && name < a->direct[slot].n && a->direct[slot].v[name])
		return &a->g.v[a->direct[slot].v[name] - 1];
	g = grpmap_get(&a->g, key);
	if (slot >= a->ndirect) {
		size_t n = slot + 1;
		a->direct = xrealloc(a->direct, n * sizeof(*a->direct));
		memset(a->direct + a->ndirect, 0, (n - a->ndirect) * sizeof(*a->direct));
		a->ndirect = n;
	}
	d = &a->direct[slot];
	if (name >= d->n) {
		size_t n = d->n ? d->n : 256;
		while (n <= name)
			n *= 2;
		d->v = xrealloc(d->v, n * sizeof(*d->v));
		memset(d->v + d->n, 0, (n - d->n) * sizeof(*d->v));
		d->n = n;
	}
	d->v[name] = (uint32_t)(g - a->g.v) + 1;
	return g;
}

#define FEED(table, T, evtype)                                                  \
	do {                                                                    \
		if (a->def->types & (1u << (evtype)))                            \
			for (size_t i_ = 0; i_ < m->table.n; i_++) {             \
				const T *r_ = &m->table.v[i_];                   \
				if (stats_filter_pass(f, r_->start, r_->end))    \
					a->def->add(a, STATS_MODEL_IDS, evtype, r_); \
			}                                                        \
	} while (0)

void stats_acc_feed_model(struct stats_acc *a, const struct model *m, const struct stats_filter *f)
{
	FEED(api, struct trace_api, TRACE_EV_API);
	FEED(kernels, struct trace_kernel, TRACE_EV_KERNEL);
	FEED(memcpys, struct trace_memcpy, TRACE_EV_MEMCPY);
	FEED(memsets, struct trace_memset, TRACE_EV_MEMSET);
	FEED(osrt, struct trace_osrt, TRACE_EV_OSRT);
}

void stats_acc_resolve(struct stats_acc *a, const struct model_strmap *map)
{
	struct grpmap out = { 0 };

	if (!a->def->key0_string)
		return;
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *src = &a->g.v[i], *dst;
		uint32_t key[GRP_KEY_WORDS];

		memcpy(key, src->key, sizeof(key));
		if (key[1] != STATS_MODEL_IDS)
			key[0] = model_strmap_id(map, key[1], key[0]);
		key[1] = STATS_MODEL_IDS;
		dst = grpmap_get(&out, key);
		if (!dst->d.v) {
			dst->d = src->d;
			src->d.v = NULL;
		} else {
			ALLOC_GROW(dst->d.v, dst->d.n + src->d.n, dst->d.alloc);
			memcpy(dst->d.v + dst->d.n, src->d.v, src->d.n * sizeof(*src->d.v));
			dst->d.n += src->d.n;
			free(src->d.v);  /* as we go: the peak stays one copy of the values */
			src->d.v = NULL;
		}
		dst->total += src->total;
		dst->aux += src->aux;
	}
	grpmap_release(&a->g);
	a->g = out;
	direct_release(a);
}

int stats_run(const struct model *m, const char *report, const struct stats_opts *o,
	      struct stats_table *out)
{
	const struct stats_report_def *d = stats_report_find(report);
	struct stats_filter f;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return unknown_report(report);
	if (stats_filter_init(&f, m, o) < 0)
		return -1;
	if (d->run) {
		st_init(out, d->name, d->title);
		ret = d->run(m, o, &f, out);
	} else {
		struct stats_acc a = { 0 };
		a.def = d;
		a.filtered = f.active;
		stats_acc_feed_model(&a, m, &f);
		st_init(out, d->name, d->title);
		d->table(&a, m, out);
		if (!out->nrows && !out->empty_reason)
			BUG("report '%s' has no rows and no reason", d->name);
		stats_acc_release(&a);
	}
	if (ret == 0 && !out->nrows && !out->empty_reason)
		st_empty(out, "%s: no data in this report", d->name);
	stats_filter_release(&f);
	return ret;
}
