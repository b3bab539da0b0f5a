/*
 * stats_nvtx.c - NVTX reports: nvtx_sum, nvtx_gpu_proj_sum, nvtx_kern_sum.
 *
 * A range's name is "DOMAIN:NAME" when it has a domain, else "NAME".  Ranges
 * never ended are not counted (the table's note says how many).  GPU work
 * belongs to a range when the API call that launched it (joined by process
 * and correlation id) started inside the range on the range's thread (the
 * thread that pushed or started it).
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static const char *style_name(unsigned kind)
{
	return kind == TRACE_NVTX_STARTEND ? "StartEnd" : "PushPop";
}

static void range_name_str(struct strbuf *sb, const struct model *m, const char *n, uint32_t domain)
{
	const char *d = model_str(m, domain);

	strbuf_reset(sb);
	if (*d) {
		strbuf_addstr(sb, d);
		strbuf_addch(sb, ':');
	}
	strbuf_addstr(sb, *n ? n : "[unnamed]");
}

static void open_note(struct stats_table *t, const struct model *m)
{
	if (m->nvtx_open && t->nrows)
		st_note(t, "%llu NVTX ranges were never ended and are not counted",
			(unsigned long long)m->nvtx_open);
}

/* ---- nvtx_sum ---- */

/*
 * The name a range is grouped under: its name without a trailing instance
 * number "#N" (torch.profiler's "ProfilerStep#551" and "#552" are two
 * instances of one range "ProfilerStep", as model_is_step_name() reads
 * step names).  Only "#" and digits are cut: "layer_1" and "layer_2" stay
 * two ranges.  @cache (per model string, local id + 1) and @local hold the
 * grouped names.
 */
static uint32_t group_name(const struct model *m, uint32_t name_id, uint32_t *cache, struct strtab *local)
{
	const char *n = model_str(m, name_id);
	size_t len = strlen(n), k = len;

	if (cache[name_id])
		return cache[name_id] - 1;
	while (k && n[k - 1] >= '0' && n[k - 1] <= '9')
		k--;
	if (k && k < len && n[k - 1] == '#' && k > 1)
		len = k - 1;
	cache[name_id] = strtab_intern_n(local, n, len) + 1;
	return cache[name_id] - 1;
}

static int nvtx_sum_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct grpmap g = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct strtab local;
	uint32_t *cache = xcalloc(m->str.nr + 1, sizeof(*cache));
	size_t c0, cs, cn;
	uint64_t grand = 0;

	strtab_init(&local);
	c0 = st_summary_cols(t, "Instances");
	cs = st_col(t, "Style", STATS_STR);
	cn = st_col(t, "Range", STATS_STR);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		uint32_t key[GRP_KEY_WORDS] = { 0, r->domain_id, r->kind };
		struct grp *gr;

		if (!r->end || !stats_filter_pass(f, r->start, r->end))
			continue;
		key[0] = group_name(m, r->name_id, cache, &local);
		gr = grpmap_get(&g, key);
		u64vec_push(&gr->d, dur(r->start, r->end));
		gr->total += dur(r->start, r->end);
	}
	grpmap_sort_by_total(&g);
	for (size_t i = 0; i < g.n; i++)
		grand += g.v[i].total;
	for (size_t i = 0; i < g.n; i++) {
		struct summ s;
		size_t r = st_row(t);

		summ_compute(g.v[i].d.v, g.v[i].d.n, &s);
		st_summary_row(t, r, c0, &s, grand);
		st_str(t, r, cs, style_name(g.v[i].key[2]));
		range_name_str(&sb, m, strtab_get(&local, g.v[i].key[0]), g.v[i].key[1]);
		st_str(t, r, cn, sb.buf);
	}
	grpmap_release(&g);
	strbuf_release(&sb);
	strtab_release(&local);
	free(cache);
	if (!t->nrows) {
		if (m->nvtx_open && m->nvtx.n)
			st_empty(t, "%s: no ended NVTX ranges (%llu never ended)", t->report,
				 (unsigned long long)m->nvtx_open);
		else
			st_no_data(t, m, MODEL_HAS_NVTX, "NVTX ranges", f->active);
	}
	open_note(t, m);
	return 0;
}

const struct stats_report_def stats_def_nvtx_sum = {
	.name = "nvtx_sum",
	.title = "NVTX Range Summary",
	.types = 1u << TRACE_EV_NVTX_RANGE,
	.run = nvtx_sum_run,
};

/* ---- the join: ranges -> API calls on their thread -> GPU work ---- */

int stats_cmp_tix(const void *pa, const void *pb)
{
	const struct stats_tix *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* One GPU operation by (pid, correlation); kind 0 kernel, 1 copy, 2 set. */
struct gpu_op {
	uint64_t key;
	uint64_t start, end;
	size_t idx;
	int kind;
};

static int cmp_gpu_op(const void *pa, const void *pb)
{
	const struct gpu_op *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

struct nvtx_join {
	struct stats_tix *api;
	size_t napi;
	struct gpu_op *ops;
	size_t nops;
};

static void join_init(struct nvtx_join *j, const struct model *m, int kernels_only)
{
	size_t k = 0, n = m->kernels.n + (kernels_only ? 0 : m->memcpys.n + m->memsets.n);

	j->api = xmalloc((m->api.n ? m->api.n : 1) * sizeof(*j->api));
	for (size_t i = 0; i < m->api.n; i++) {
		j->api[i].pid = m->api.v[i].pid;
		j->api[i].tid = m->api.v[i].tid;
		j->api[i].start = m->api.v[i].start;
		j->api[i].idx = i;
	}
	j->napi = m->api.n;
	qsort(j->api, j->napi, sizeof(*j->api), stats_cmp_tix);
	j->ops = xmalloc((n ? n : 1) * sizeof(*j->ops));
#define ADD_OPS(table, kd)                                                          \
	for (size_t i = 0; i < m->table.n; i++) {                                   \
		if (!m->table.v[i].correlation)                                     \
			continue;                                                   \
		j->ops[k].key = (uint64_t)m->table.v[i].pid << 32 | m->table.v[i].correlation; \
		j->ops[k].start = m->table.v[i].start;                              \
		j->ops[k].end = m->table.v[i].end;                                  \
		j->ops[k].idx = i;                                                  \
		j->ops[k].kind = kd;                                                \
		k++;                                                                \
	}
	ADD_OPS(kernels, 0);
	if (!kernels_only) {
		ADD_OPS(memcpys, 1);
		ADD_OPS(memsets, 2);
	}
#undef ADD_OPS
	j->nops = k;
	qsort(j->ops, j->nops, sizeof(*j->ops), cmp_gpu_op);
}

static void join_release(struct nvtx_join *j)
{
	free(j->api);
	free(j->ops);
}

/* Index of the first API call of (pid, tid) starting at or after @start. */
static size_t api_first(const struct nvtx_join *j, uint32_t pid, uint32_t tid, uint64_t start)
{
	struct stats_tix probe = { pid, tid, start, 0 };
	size_t lo = 0, hi = j->napi;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (stats_cmp_tix(&j->api[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t ops_first(const struct nvtx_join *j, uint64_t key)
{
	size_t lo = 0, hi = j->nops;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->ops[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Call @fn for every GPU operation launched from inside @r: API calls of
 * the range's thread that start in [r->start, r->end].
 */
static void for_range_ops(const struct nvtx_join *j, const struct model *m,
			  const struct trace_nvtx_range *r,
			  void (*fn)(void *ctx, const struct gpu_op *op), void *ctx)
{
	for (size_t a = api_first(j, r->pid, r->tid, r->start);
	     a < j->napi && j->api[a].pid == r->pid && j->api[a].tid == r->tid &&
	     j->api[a].start <= r->end; a++) {
		const struct trace_api *api = &m->api.v[j->api[a].idx];
		uint64_t key;

		if (!api->correlation)
			continue;
		key = (uint64_t)api->pid << 32 | api->correlation;
		for (size_t o = ops_first(j, key); o < j->nops && j->ops[o].key == key; o++)
			fn(ctx, &j->ops[o]);
	}
}

/* ---- nvtx_gpu_proj_sum ---- */

struct proj {
	uint64_t start, end, nops;
};

static void proj_op(void *ctx, const struct gpu_op *op)
{
	struct proj *p = ctx;

	if (!p->nops || op->start < p->start)
		p->start = op->start;
	if (op->end > p->end)
		p->end = op->end;
	p->nops++;
}

/* Direct children of each push/pop range (same thread, one level deeper, inside it). */
static uint32_t *child_counts(const struct model *m)
{
	uint32_t *children = xcalloc(m->nvtx.n ? m->nvtx.n : 1, sizeof(*children));
	struct stats_tix *ix = xmalloc((m->nvtx.n ? m->nvtx.n : 1) * sizeof(*ix));
	size_t n = 0, *last = NULL, nlast = 0;

	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		if (r->kind != TRACE_NVTX_PUSHPOP || !r->end)
			continue;
		ix[n].pid = r->pid;
		ix[n].tid = r->tid;
		/* order by start, then outer before inner */
		ix[n].start = r->start;
		ix[n].idx = i;
		n++;
	}
	qsort(ix, n, sizeof(*ix), stats_cmp_tix);
	for (size_t i = 0; i < n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[ix[i].idx];
		if (i == 0 || ix[i].pid != ix[i - 1].pid || ix[i].tid != ix[i - 1].tid)
			for (size_t l = 0; l < nlast; l++)
				last[l] = SIZE_MAX;
		if (r->level >= nlast) {
			size_t nn = (size_t)r->level + 8;
			last = xrealloc(last, nn * sizeof(*last));
			for (size_t l = nlast; l < nn; l++)
				last[l] = SIZE_MAX;
			nlast = nn;
		}
		if (r->level > 0 && last[r->level - 1] != SIZE_MAX) {
			const struct trace_nvtx_range *p = &m->nvtx.v[last[r->level - 1]];
			if (p->start <= r->start && r->end <= p->end)
				children[last[r->level - 1]]++;
		}
		last[r->level] = ix[i].idx;
	}
	free(last);
	free(ix);
	return children;
}

static int proj_run(const struct model *m, const struct stats_opts *o,
		    const struct stats_filter *f, struct stats_table *t)
{
	struct nvtx_join j;
	struct grpmap g = { 0 };
	struct strbuf sb = STRBUF_INIT;
	uint32_t *children;
	/* per group: range time, ops, level sum, children sum (aux holds the side index) */
	struct side { uint64_t range_time, ops, levels, children; } *side = NULL;
	size_t nside = 0, aside = 0;
	size_t cn, cs, ctp, ctr, ci, c5, cto, cao, cal, cac;
	struct strtab local;
	uint32_t *cache = xcalloc(m->str.nr + 1, sizeof(*cache));

	strtab_init(&local);

	cn = st_col(t, "Range", STATS_STR);
	cs = st_col(t, "Style", STATS_STR);
	ctp = st_col(t, "Total Proj Time (ns)", STATS_DUR);
	ctr = st_col(t, "Total Range Time (ns)", STATS_DUR);
	ci = st_col(t, "Range Instances", STATS_INT);
	c5 = st_col(t, "Proj Avg (ns)", STATS_DURF);
	st_col(t, "Proj Med (ns)", STATS_DURF);
	st_col(t, "Proj Min (ns)", STATS_DUR);
	st_col(t, "Proj Max (ns)", STATS_DUR);
	st_col(t, "Proj StdDev (ns)", STATS_DURF);
	cto = st_col(t, "Total GPU Ops", STATS_INT);
	cao = st_col(t, "Avg GPU Ops", STATS_FLOAT);
	cal = st_col(t, "Avg Range Lvl", STATS_FLOAT);
	cac = st_col(t, "Avg Num Child", STATS_FLOAT);

	join_init(&j, m, 0);
	children = child_counts(m);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		uint32_t key[GRP_KEY_WORDS] = { group_name(m, r->name_id, cache, &local), r->domain_id, r->kind };
		struct proj p = { 0 };
		struct grp *gr;
		struct side *sd;

		if (!r->end || !stats_filter_pass(f, r->start, r->end))
			continue;
		for_range_ops(&j, m, r, proj_op, &p);
		if (!p.nops)
			continue;
		gr = grpmap_get(&g, key);
		if (!gr->aux) {
			ALLOC_GROW(side, nside + 1, aside);
			memset(&side[nside], 0, sizeof(side[0]));
			gr->aux = ++nside;
		}
		sd = &side[gr->aux - 1];
		u64vec_push(&gr->d, dur(p.start, p.end));
		gr->total += dur(p.start, p.end);
		sd->range_time += dur(r->start, r->end);
		sd->ops += p.nops;
		sd->levels += r->kind == TRACE_NVTX_PUSHPOP ? r->level : 0;
		sd->children += children[i];
	}
	grpmap_sort_by_total(&g);
	for (size_t i = 0; i < g.n; i++) {
		struct grp *gr = &g.v[i];
		struct side *sd = &side[gr->aux - 1];
		struct summ s;
		size_t r = st_row(t);
		double n;

		summ_compute(gr->d.v, gr->d.n, &s);
		n = (double)s.count;
		range_name_str(&sb, m, strtab_get(&local, gr->key[0]), gr->key[1]);
		st_str(t, r, cn, sb.buf);
		st_str(t, r, cs, style_name(gr->key[2]));
		st_int(t, r, ctp, (int64_t)s.total);
		st_int(t, r, ctr, (int64_t)sd->range_time);
		st_int(t, r, ci, (int64_t)s.count);
		st_f(t, r, c5, s.avg);
		st_f(t, r, c5 + 1, s.med);
		st_int(t, r, c5 + 2, (int64_t)s.min);
		st_int(t, r, c5 + 3, (int64_t)s.max);
		st_f(t, r, c5 + 4, s.stddev);
		st_int(t, r, cto, (int64_t)sd->ops);
		st_f(t, r, cao, (double)sd->ops / n);
		st_f(t, r, cal, (double)sd->levels / n);
		st_f(t, r, cac, (double)sd->children / n);
	}
	if (!t->nrows) {
		if (!(m->has & MODEL_HAS_NVTX) || !m->nvtx.n)
			st_no_data(t, m, MODEL_HAS_NVTX, "NVTX ranges", f->active);
		else if (!(m->has & MODEL_HAS_API))
			st_empty(t, "%s: CUDA API calls were not recorded, so GPU work cannot be "
				 "traced to NVTX ranges", t->report);
		else
			st_empty(t, "%s: no NVTX range launched GPU work%s", t->report,
				 f->active ? " in the selected time range" : "");
	}
	open_note(t, m);
	free(side);
	free(children);
	grpmap_release(&g);
	strtab_release(&local);
	free(cache);
	strbuf_release(&sb);
	join_release(&j);
	return 0;
}

const struct stats_report_def stats_def_nvtx_gpu_proj_sum = {
	.name = "nvtx_gpu_proj_sum",
	.title = "NVTX GPU Projection Summary",
	.types = 1u << TRACE_EV_NVTX_RANGE | 1u << TRACE_EV_API | 1u << TRACE_EV_KERNEL |
		 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET,
	.run = proj_run,
};

/* ---- nvtx_kern_sum ---- */

struct kern_ctx {
	const struct model *m;
	const struct trace_nvtx_range *r;
	size_t range_idx;
	struct grpmap *g;
	uint32_t *cache;           /* group_name()'s */
	struct strtab *local;
};

static void kern_op(void *ctx, const struct gpu_op *op)
{
	struct kern_ctx *c = ctx;
	const struct trace_kernel *k = &c->m->kernels.v[op->idx];
	uint32_t key[GRP_KEY_WORDS] = { group_name(c->m, c->r->name_id, c->cache, c->local), c->r->domain_id,
					c->r->kind, c->r->pid, c->r->tid, k->name_id };
	struct grp *gr = grpmap_get(c->g, key);

	u64vec_push(&gr->d, dur(k->start, k->end));
	gr->total += dur(k->start, k->end);
	if (gr->aux2 != c->range_idx + 1) {  /* a range instance not yet counted */
		gr->aux2 = c->range_idx + 1;
		gr->aux++;
	}
}

static int kern_sum_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct nvtx_join j;
	struct grpmap g = { 0 };
	struct strbuf sb = STRBUF_INIT;
	size_t cn, cs, cp, ct, cni, cki, c0, ck;
	struct strtab local;
	uint32_t *cache = xcalloc(m->str.nr + 1, sizeof(*cache));

	strtab_init(&local);
	cn = st_col(t, "NVTX Range", STATS_STR);
	cs = st_col(t, "Style", STATS_STR);
	cp = st_col(t, "PID", STATS_INT);
	ct = st_col(t, "TID", STATS_INT);
	cni = st_col(t, "NVTX Inst", STATS_INT);
	cki = st_col(t, "Kern Inst", STATS_INT);
	c0 = st_col(t, "Total Time (ns)", STATS_DUR);
	st_col(t, "Avg (ns)", STATS_DURF);
	st_col(t, "Med (ns)", STATS_DURF);
	st_col(t, "Min (ns)", STATS_DUR);
	st_col(t, "Max (ns)", STATS_DUR);
	st_col(t, "StdDev (ns)", STATS_DURF);
	ck = st_col(t, "Kernel Name", STATS_STR);

	join_init(&j, m, 1);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		struct kern_ctx c = { m, &m->nvtx.v[i], i, &g, cache, &local };
		if (!c.r->end || !stats_filter_pass(f, c.r->start, c.r->end))
			continue;
		for_range_ops(&j, m, c.r, kern_op, &c);
	}
	grpmap_sort_by_total(&g);
	for (size_t i = 0; i < g.n; i++) {
		struct grp *gr = &g.v[i];
		const char *kn = model_str(m, gr->key[5]);
		struct summ s;
		size_t r = st_row(t);

		summ_compute(gr->d.v, gr->d.n, &s);
		range_name_str(&sb, m, strtab_get(&local, gr->key[0]), gr->key[1]);
		st_str(t, r, cn, sb.buf);
		st_str(t, r, cs, style_name(gr->key[2]));
		st_int(t, r, cp, gr->key[3]);
		st_int(t, r, ct, gr->key[4]);
		st_int(t, r, cni, (int64_t)gr->aux);
		st_int(t, r, cki, (int64_t)s.count);
		st_int(t, r, c0, (int64_t)s.total);
		st_f(t, r, c0 + 1, s.avg);
		st_f(t, r, c0 + 2, s.med);
		st_int(t, r, c0 + 3, (int64_t)s.min);
		st_int(t, r, c0 + 4, (int64_t)s.max);
		st_f(t, r, c0 + 5, s.stddev);
		st_str(t, r, ck, *kn ? kn : "[unknown kernel]");
	}
	if (!t->nrows) {
		if (!(m->has & MODEL_HAS_NVTX) || !m->nvtx.n)
			st_no_data(t, m, MODEL_HAS_NVTX, "NVTX ranges", f->active);
		else if (!(m->has & MODEL_HAS_API))
			st_empty(t, "%s: CUDA API calls were not recorded, so kernels cannot be "
				 "traced to NVTX ranges", t->report);
		else
			st_empty(t, "%s: no NVTX range launched a kernel%s", t->report,
				 f->active ? " in the selected time range" : "");
	}
	open_note(t, m);
	grpmap_release(&g);
	strtab_release(&local);
	free(cache);
	strbuf_release(&sb);
	join_release(&j);
	return 0;
}

const struct stats_report_def stats_def_nvtx_kern_sum = {
	.name = "nvtx_kern_sum",
	.title = "NVTX Range Kernel Summary",
	.types = 1u << TRACE_EV_NVTX_RANGE | 1u << TRACE_EV_API | 1u << TRACE_EV_KERNEL,
	.run = kern_sum_run,
	.kernel_names = 1,
};
