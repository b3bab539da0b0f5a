/*
 * stats_trace.c - reports that list or join single rows: cuda_gpu_trace,
 * cuda_api_trace, cuda_kern_exec_sum.
 *
 * Start times in trace reports count from the report's first event (t_min),
 * as nsys counts from the start of its session.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static inline int64_t rel(const struct model *m, uint64_t t)
{
	return (int64_t)(t - m->t_min);
}

/* ---- cuda_gpu_trace ---- */

enum {
	GT_START, GT_DUR, GT_CORR, GT_GX, GT_GY, GT_GZ, GT_BX, GT_BY, GT_BZ, GT_REG, GT_SSMEM,
	GT_DSMEM, GT_BYTES, GT_TPUT, GT_SRC, GT_DST, GT_DEV, GT_CTX, GT_GREEN, GT_STRM, GT_NAME,
};

static void gpu_common(struct stats_table *t, size_t r, const struct model *m, uint64_t start,
		       uint64_t end, uint32_t corr, uint32_t dev, uint32_t ctx, uint32_t strm)
{
	st_int(t, r, GT_START, rel(m, start));
	st_int(t, r, GT_DUR, (int64_t)dur(start, end));
	st_int(t, r, GT_CORR, corr);
	st_int(t, r, GT_DEV, dev);
	st_int(t, r, GT_CTX, ctx);
	st_int(t, r, GT_STRM, strm);
}

static void gpu_copy_cells(struct stats_table *t, size_t r, uint64_t bytes, uint64_t d)
{
	st_f(t, r, GT_BYTES, (double)bytes);
	if (d)
		st_f(t, r, GT_TPUT, (double)bytes * 1e3 / (double)d); /* MB/s */
}

static int gpu_trace_run(const struct model *m, const struct stats_opts *o,
			 const struct stats_filter *f, struct stats_table *t)
{
	size_t ik = 0, ic = 0, is = 0;
	static const char *const cols[] = {
		"Start (ns)", "Duration (ns)", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY",
		"BlkZ", "Reg/Trd", "StcSMem (MB)", "DymSMem (MB)", "Bytes (MB)",
		"Throughput (MBps)", "SrcMemKd", "DstMemKd", "Device", "Ctx", "GreenCtx", "Strm",
		"Name",
	};
	static const int types[] = {
		STATS_DUR, STATS_DUR, STATS_INT, STATS_INT, STATS_INT, STATS_INT, STATS_INT,
		STATS_INT, STATS_INT, STATS_INT, STATS_BYTES, STATS_BYTES, STATS_BYTES,
		STATS_FLOAT, STATS_STR, STATS_STR, STATS_INT, STATS_INT, STATS_INT, STATS_INT,
		STATS_STR,
	};

	for (size_t c = 0; c < ARRAY_SIZE(cols); c++)
		st_col(t, cols[c], types[c]);
	/* three sorted tables, merged by start */
	for (;;) {
		uint64_t sk = ik < m->kernels.n ? m->kernels.v[ik].start : UINT64_MAX;
		uint64_t sc = ic < m->memcpys.n ? m->memcpys.v[ic].start : UINT64_MAX;
		uint64_t ss = is < m->memsets.n ? m->memsets.v[is].start : UINT64_MAX;
		size_t r;

		if (ik >= m->kernels.n && ic >= m->memcpys.n && is >= m->memsets.n)
			break;
		if (ik < m->kernels.n && sk <= sc && sk <= ss) {
			const struct trace_kernel *k = &m->kernels.v[ik++];
			const char *name = model_str(m, k->name_id);
			if (!stats_filter_pass(f, k->start, k->end))
				continue;
			r = st_row(t);
			gpu_common(t, r, m, k->start, k->end, k->correlation, k->device, k->context,
				   k->stream);
			for (int i = 0; i < 3; i++) {
				st_int(t, r, GT_GX + i, k->grid[i]);
				st_int(t, r, GT_BX + i, k->block[i]);
			}
			st_int(t, r, GT_REG, k->registers);
			st_f(t, r, GT_SSMEM, k->static_smem);
			st_f(t, r, GT_DSMEM, k->dynamic_smem);
			st_str(t, r, GT_NAME, *name ? name : "[unknown kernel]");
		} else if (ic < m->memcpys.n && sc <= ss) {
			const struct trace_memcpy *c = &m->memcpys.v[ic++];
			if (!stats_filter_pass(f, c->start, c->end))
				continue;
			r = st_row(t);
			gpu_common(t, r, m, c->start, c->end, c->correlation, c->device, c->context,
				   c->stream);
			gpu_copy_cells(t, r, c->bytes, dur(c->start, c->end));
			st_str(t, r, GT_SRC, trace_mem_kind_name(c->src_kind));
			st_str(t, r, GT_DST, trace_mem_kind_name(c->dst_kind));
			st_str(t, r, GT_NAME, stats_copy_op_name(c->kind));
		} else {
			const struct trace_memset *s = &m->memsets.v[is++];
			if (!stats_filter_pass(f, s->start, s->end))
				continue;
			r = st_row(t);
			gpu_common(t, r, m, s->start, s->end, s->correlation, s->device, s->context,
				   s->stream);
			gpu_copy_cells(t, r, s->bytes, dur(s->start, s->end));
			st_str(t, r, GT_DST, trace_mem_kind_name(s->mem_kind));
			st_str(t, r, GT_NAME, stats_copy_op_name(STATS_OP_MEMSET));
		}
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels or memory operations", f->active);
	return 0;
}

const struct stats_report_def stats_def_cuda_gpu_trace = {
	.name = "cuda_gpu_trace",
	.title = "CUDA GPU Trace",
	.types = 1u << TRACE_EV_KERNEL | 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET,
	.run = gpu_trace_run,
	.kernel_names = 1,
};

/* ---- cuda_api_trace ---- */

static int api_trace_run(const struct model *m, const struct stats_opts *o,
			 const struct stats_filter *f, struct stats_table *t)
{
	size_t cs = st_col(t, "Start (ns)", STATS_DUR);
	size_t cd = st_col(t, "Duration (ns)", STATS_DUR);
	size_t cn = st_col(t, "Name", STATS_STR);
	size_t cr = st_col(t, "Result", STATS_INT);
	size_t cc = st_col(t, "CorrID", STATS_INT);
	size_t cp = st_col(t, "Pid", STATS_INT);
	size_t ct = st_col(t, "Tid", STATS_INT);
	size_t cpri = st_col(t, "T-Pri", STATS_INT);
	size_t ctn = st_col(t, "Thread Name", STATS_STR);

	GS_UNUSED(cpri); /* thread priorities are not recorded: always "-" */
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		const char *name = model_str(m, a->name_id);
		size_t r;

		if (!stats_filter_pass(f, a->start, a->end))
			continue;
		r = st_row(t);
		st_int(t, r, cs, rel(m, a->start));
		st_int(t, r, cd, (int64_t)dur(a->start, a->end));
		st_str(t, r, cn, *name ? name : "[unknown]");
		st_int(t, r, cr, a->status);
		st_int(t, r, cc, a->correlation);
		st_int(t, r, cp, a->pid);
		st_int(t, r, ct, a->tid);
		st_str(t, r, ctn, model_thread_name(m, a->pid, a->tid));
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_API, "CUDA API calls", f->active);
	return 0;
}

const struct stats_report_def stats_def_cuda_api_trace = {
	.name = "cuda_api_trace",
	.title = "CUDA API Trace",
	.types = 1u << TRACE_EV_API,
	.run = api_trace_run,
};

/* ---- cuda_kern_exec_sum ---- */

struct corr_key {
	uint64_t key;              /* pid << 32 | correlation */
	size_t idx;
};

static int cmp_corr(const void *pa, const void *pb)
{
	const struct corr_key *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Sorted (pid, correlation) -> API row index; *n gets the count. */
static struct corr_key *api_by_corr(const struct model *m, size_t *n)
{
	struct corr_key *v = xmalloc((m->api.n ? m->api.n : 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < m->api.n; i++) {
		if (!m->api.v[i].correlation)
			continue;
		v[k].key = (uint64_t)m->api.v[i].pid << 32 | m->api.v[i].correlation;
		v[k].idx = i;
		k++;
	}
	qsort(v, k, sizeof(*v), cmp_corr);
	*n = k;
	return v;
}

/* First entry of @v with @key, or NULL. */
static const struct corr_key *corr_find(const struct corr_key *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].key == key ? &v[lo] : NULL;
}

struct kx {
	struct u64vec t, a, q, k;
	uint64_t qcount;
};

static int cmp_kx_total(const void *pa, const void *pb, void *arg)
{
	const struct grp *a = pa, *b = pb;
	GS_UNUSED(arg);
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return memcmp(a->key, b->key, sizeof(a->key));
}

static void put_summary5(struct stats_table *t, size_t r, size_t c, struct u64vec *v)
{
	struct summ s;

	summ_compute(v->v, v->n, &s);
	st_f(t, r, c, s.avg);
	st_f(t, r, c + 1, s.med);
	st_int(t, r, c + 2, (int64_t)s.min);
	st_int(t, r, c + 3, (int64_t)s.max);
	st_f(t, r, c + 4, s.stddev);
}

static int kern_exec_run(const struct model *m, const struct stats_opts *o,
			 const struct stats_filter *f, struct stats_table *t)
{
	static const char *const pre[] = { "T", "A", "Q", "K" };
	static const char *const what[] = { "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
					    "StdDev (ns)" };
	static char names[4][5][24];
	size_t napi, c0, cpid, ctid, cdev, ccount, cq, capi, ckern;
	struct corr_key *apis = api_by_corr(m, &napi);
	struct grpmap g = { 0 };
	struct kx *kx = NULL;
	size_t nkx = 0, akx = 0;
	uint64_t unmatched = 0;

	cpid = st_col(t, "PID", STATS_INT);
	ctid = st_col(t, "TID", STATS_INT);
	cdev = st_col(t, "DevId", STATS_INT);
	ccount = st_col(t, "Count", STATS_INT);
	cq = st_col(t, "QCount", STATS_INT);
	c0 = t->ncols;
	for (int p = 0; p < 4; p++)
		for (int w = 0; w < 5; w++) {
			int stype = (w == 2 || w == 3) ? STATS_DUR : STATS_DURF;
			snprintf(names[p][w], sizeof(names[p][w]), "%s%s", pre[p], what[w]);
			st_col(t, names[p][w], stype);
		}
	capi = st_col(t, "API Name", STATS_STR);
	ckern = st_col(t, "Kernel Name", STATS_STR);

	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		const struct corr_key *hit;
		const struct trace_api *a;
		uint32_t key[GRP_KEY_WORDS] = { 0 };
		struct grp *gr;
		struct kx *x;
		uint64_t q;

		if (!stats_filter_pass(f, k->start, k->end))
			continue;
		hit = k->correlation ? corr_find(apis, napi, (uint64_t)k->pid << 32 | k->correlation)
				     : NULL;
		if (!hit) {
			unmatched++;
			continue;
		}
		a = &m->api.v[hit->idx];
		key[0] = k->pid;
		key[1] = a->tid;
		key[2] = k->device;
		key[3] = a->name_id;
		key[4] = k->name_id;
		gr = grpmap_get(&g, key);
		if (!gr->aux) {
			ALLOC_GROW(kx, nkx + 1, akx);
			memset(&kx[nkx], 0, sizeof(kx[0]));
			gr->aux = ++nkx;
		}
		x = &kx[gr->aux - 1];
		q = k->start > a->end ? k->start - a->end : 0;
		u64vec_push(&x->a, dur(a->start, a->end));
		u64vec_push(&x->q, q);
		u64vec_push(&x->k, dur(k->start, k->end));
		u64vec_push(&x->t, dur(a->start, k->end > a->start ? k->end : a->start));
		x->qcount += q > 0;
		gr->total += dur(a->start, k->end > a->start ? k->end : a->start);
	}
	free(apis);
	if (g.n > 1)
		qsort_r(g.v, g.n, sizeof(g.v[0]), cmp_kx_total, NULL);
	for (size_t i = 0; i < g.n; i++) {
		struct grp *gr = &g.v[i];
		struct kx *x = &kx[gr->aux - 1];
		const char *an = model_str(m, gr->key[3]), *kn = model_str(m, gr->key[4]);
		size_t r = st_row(t);

		st_int(t, r, cpid, gr->key[0]);
		st_int(t, r, ctid, gr->key[1]);
		st_int(t, r, cdev, gr->key[2]);
		st_int(t, r, ccount, (int64_t)x->k.n);
		st_int(t, r, cq, (int64_t)x->qcount);
		put_summary5(t, r, c0, &x->t);
		put_summary5(t, r, c0 + 5, &x->a);
		put_summary5(t, r, c0 + 10, &x->q);
		put_summary5(t, r, c0 + 15, &x->k);
		st_str(t, r, capi, *an ? an : "[unknown]");
		st_str(t, r, ckern, *kn ? kn : "[unknown kernel]");
	}
	for (size_t i = 0; i < nkx; i++) {
		free(kx[i].t.v);
		free(kx[i].a.v);
		free(kx[i].q.v);
		free(kx[i].k.v);
	}
	free(kx);
	grpmap_release(&g);
	if (!t->nrows) {
		if (unmatched)
			st_empty(t, "%s: none of the %llu kernels has a matching API launch call",
				 t->report, (unsigned long long)unmatched);
		else
			st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels", f->active);
	} else if (unmatched) {
		st_note(t, "%llu kernels without a matching API launch call are not counted",
			(unsigned long long)unmatched);
	}
	return 0;
}

const struct stats_report_def stats_def_cuda_kern_exec_sum = {
	.name = "cuda_kern_exec_sum",
	.title = "CUDA Kernel Launch & Exec Time Summary",
	.types = 1u << TRACE_EV_KERNEL | 1u << TRACE_EV_API,
	.run = kern_exec_run,
	.kernel_names = 1,
};
