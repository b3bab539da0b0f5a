/*
 * stats_rank.c - ranks side by side (stats_rank.h) and the rank_sum report.
 */
#include "stats_int.h"
#include "stats_rank.h"
#include "../model/kernel_class.h"

#include <stdlib.h>
#include <string.h>

static int is_data_name(const char *s)
{
	/* PyTorch's DataLoader and DataPipe iteration frames (analyze's data frames without --data-range) */
	return !strncmp(s, "enumerate(DataLoader)", 21) || !strncmp(s, "enumerate(DataPipe)", 19);
}

struct coll {
	uint32_t name, row;
	uint64_t occ;
	uint64_t start, end, prev_end;
};

static int cmp_coll(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->occ != y->occ)
		return x->occ < y->occ ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_row(const void *a, const void *b)
{
	const struct rank_row *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void rank_stats_release(struct rank_stats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

struct pidrow {
	uint32_t pid, dev;
	uint64_t n;
};

static int cmp_pidrow(const void *a, const void *b)
{
	const struct pidrow *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/*
 * (pid, device) -> kernel count, sorted by pid then device.  Counted in an
 * open-addressing table of the distinct pairs (a few per process), then
 * only those are sorted: sorting every kernel took 18% of analyze's time on
 * the 10 M-event bench (bench/RESULTS-analyze.md).
 */
static struct pidrow *kernel_counts(const struct model *m, size_t *n)
{
	size_t cap = 64, k = 0, last = SIZE_MAX;
	struct pidrow *tab = xcalloc(cap, sizeof(*tab)), *v;
	uint8_t *used = xcalloc(cap, 1);

	for (size_t i = 0; i < m->kernels.n; i++) {
		uint32_t pid = m->kernels.v[i].pid, dev = m->kernels.v[i].device;
		size_t h;
		if (last != SIZE_MAX && tab[last].pid == pid && tab[last].dev == dev) {
			tab[last].n++; /* kernels come in runs of one process */
			continue;
		}
		if ((k + 1) * 2 > cap) { /* keep the table at most half full */
			struct pidrow *ot = tab;
			uint8_t *ou = used;
			size_t oc = cap;
			cap *= 2;
			tab = xcalloc(cap, sizeof(*tab));
			used = xcalloc(cap, 1);
			for (size_t j = 0; j < oc; j++) {
				if (!ou[j])
					continue;
				h = ((uint64_t)ot[j].pid * 0x9E3779B97F4A7C15ull ^ ot[j].dev) & (cap - 1);
				while (used[h])
					h = (h + 1) & (cap - 1);
				tab[h] = ot[j];
				used[h] = 1;
			}
			free(ot);
			free(ou);
		}
		h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull ^ dev) & (cap - 1);
		while (used[h] && (tab[h].pid != pid || tab[h].dev != dev))
			h = (h + 1) & (cap - 1);
		if (!used[h]) {
			used[h] = 1;
			tab[h].pid = pid;
			tab[h].dev = dev;
			tab[h].n = 0;
			k++;
		}
		tab[h].n++;
		last = h;
	}
	v = xmalloc((k ? k : 1) * sizeof(*v));
	k = 0;
	for (size_t j = 0; j < cap; j++)
		if (used[j])
			v[k++] = tab[j];
	free(tab);
	free(used);
	if (k)
		qsort(v, k, sizeof(*v), cmp_pidrow);
	*n = k;
	return v;
}

/* The rank rows: one per known rank, its process the one with the most kernels. */
static void find_ranks(const struct model *m, struct rank_stats *s, uint64_t *nk)
{
	size_t alloc = 0, ncnt;
	struct pidrow *cnt = kernel_counts(m, &ncnt);

	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		struct pidrow key = { p->pid, 0, 0 }, *hit, best = { p->pid, 0, 0 };
		size_t j, lo = 0, hi = ncnt;
		if (!p->has_attr || p->attr.rank < 0)
			continue;
		if (p->attr.world_size > s->world_size)
			s->world_size = p->attr.world_size;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cmp_pidrow(&cnt[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (hit = cnt + lo; hit < cnt + ncnt && hit->pid == p->pid; hit++)
			if (hit->n > best.n)
				best = *hit;
		for (j = 0; j < s->n; j++)
			if (s->v[j].rank == p->attr.rank)
				break;
		if (j < s->n) {
			if (best.n > nk[j]) {
				s->v[j].pid = p->pid;
				s->v[j].device = best.dev;
				nk[j] = best.n;
			}
			continue;
		}
		ALLOC_GROW(s->v, s->n + 1, alloc);
		memset(&s->v[s->n], 0, sizeof(s->v[0]));
		s->v[s->n].rank = p->attr.rank;
		s->v[s->n].pid = p->pid;
		s->v[s->n].device = best.dev;
		nk[s->n] = best.n;
		s->n++;
	}
	free(cnt);
	if (s->n)
		if (s->n)
			qsort(s->v, s->n, sizeof(*s->v), cmp_row);
}

/* Per rank while the tables pass once. */
struct rstate {
	struct interval_set busy, compute, comm, data, dataidle;
	struct u64vec steps;
	uint32_t occ_id[64];
	uint64_t occ_n[64];
	size_t nocc;
	uint64_t prev_end;
};

struct pidmap {
	uint32_t pid, row;
};

static int cmp_pidmap(const void *a, const void *b)
{
	const struct pidmap *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static long row_of(const struct pidmap *pm, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pm[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pm[lo].pid == pid ? (long)pm[lo].row : -1;
}

size_t rank_stats_build(const struct model *m, struct rank_stats *s)
{
	uint8_t *cache;
	struct coll *cv = NULL;
	size_t nc = 0, calloc_ = 0;
	struct rstate *st;
	struct pidmap *pm;
	uint64_t *nk;
	long r;

	memset(s, 0, sizeof(*s));
	s->world_size = -1;
	nk = xcalloc(m->procs.n + 1, sizeof(*nk));
	find_ranks(m, s, nk);
	free(nk);
	if (!s->n)
		return 0;
	cache = xcalloc(m->str.nr + 1, 1);
	st = xcalloc(s->n, sizeof(*st));
	pm = xmalloc(s->n * sizeof(*pm));
	for (size_t i = 0; i < s->n; i++) {
		pm[i].pid = s->v[i].pid;
		pm[i].row = (uint32_t)i;
		s->v[i].first = UINT64_MAX;
	}
	if (s->n)
		qsort(pm, s->n, sizeof(*pm), cmp_pidmap);
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		struct rank_row *w;
		struct rstate *x;
		size_t q;
		if (k->end <= k->start || (r = row_of(pm, s->n, k->pid)) < 0)
			continue;
		w = &s->v[r];
		x = &st[r];
		if (k->device != w->device)
			continue;
		if (k->start < w->first)
			w->first = k->start;
		if (k->end > w->last)
			w->last = k->end;
		ivset_add(&x->busy, k->start, k->end);
		if (!kernel_is_comm(m, k, cache)) {
			ivset_add(&x->compute, k->start, k->end);
			continue;
		}
		ivset_add(&x->comm, k->start, k->end);
		/* the n-th kernel of this name on this rank (kernels are in start order) */
		for (q = 0; q < x->nocc; q++)
			if (x->occ_id[q] == k->name_id)
				break;
		if (q == x->nocc) {
			if (x->nocc == 64)
				continue; /* more than 64 collective names on one rank: the rest unmatched */
			x->occ_id[x->nocc] = k->name_id;
			x->occ_n[x->nocc++] = 0;
		}
		ALLOC_GROW(cv, nc + 1, calloc_);
		cv[nc].name = k->name_id;
		cv[nc].occ = x->occ_n[q]++;
		cv[nc].row = (uint32_t)r;
		cv[nc].start = k->start;
		cv[nc].end = k->end;
		cv[nc].prev_end = x->prev_end;
		x->prev_end = k->end;
		nc++;
	}
	for (size_t i = 0; i < m->memcpys.n; i++)
		if ((r = row_of(pm, s->n, m->memcpys.v[i].pid)) >= 0 && m->memcpys.v[i].device == s->v[r].device)
			ivset_add(&st[r].busy, m->memcpys.v[i].start, m->memcpys.v[i].end);
	for (size_t i = 0; i < m->memsets.n; i++)
		if ((r = row_of(pm, s->n, m->memsets.v[i].pid)) >= 0 && m->memsets.v[i].device == s->v[r].device)
			ivset_add(&st[r].busy, m->memsets.v[i].start, m->memsets.v[i].end);
	{
		/* name classes of NVTX ranges, once per name: 1 other, 2 data frame, 3 step */
		uint8_t *ncls = xcalloc(m->str.nr + 1, 1);
		for (size_t i = 0; i < m->nvtx.n; i++) {
			const struct trace_nvtx_range *n = &m->nvtx.v[i];
			if (n->end <= n->start || n->name_id >= m->str.nr || (r = row_of(pm, s->n, n->pid)) < 0)
				continue;
			if (!ncls[n->name_id]) {
				const char *nm = model_str(m, n->name_id);
				ncls[n->name_id] = is_data_name(nm) ? 2 : model_is_step_name(nm) ? 3 : 1;
			}
			if (ncls[n->name_id] == 2)
				ivset_add(&st[r].data, n->start, n->end);
			else if (ncls[n->name_id] == 3)
				u64vec_push(&st[r].steps, n->end - n->start);
		}
		free(ncls);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct rank_row *w = &s->v[i];
		struct rstate *x = &st[i];
		struct interval_set gaps = { 0 };
		if (w->first == UINT64_MAX) {
			w->first = 0;
			continue;
		}
		ivset_normalize(&x->busy);
		ivset_normalize(&x->compute);
		ivset_normalize(&x->comm);
		ivset_normalize(&x->data);
		w->compute_ns = ivset_total(&x->compute);
		w->comm_ns = ivset_total(&x->comm);
		w->exposed_ns = w->comm_ns - ivset_intersect_total(&x->comm, &x->compute);
		w->idle_ns = (w->last - w->first) - ivset_overlap(&x->busy, w->first, w->last);
		for (size_t k = 0; k < x->data.n; k++) {
			uint64_t lo = x->data.v[k].start > w->first ? x->data.v[k].start : w->first;
			uint64_t hi = x->data.v[k].end < w->last ? x->data.v[k].end : w->last;
			if (lo < hi)
				ivset_gaps(&x->busy, lo, hi, &gaps);
		}
		for (size_t k = 0; k < gaps.n; k++)
			ivset_add(&x->dataidle, gaps.v[k].start, gaps.v[k].end);
		ivset_normalize(&x->dataidle);
		ivset_release(&gaps);
		w->data_ns = ivset_total(&x->dataidle);
		w->host_ns = w->idle_ns > w->data_ns ? w->idle_ns - w->data_ns : 0;
		if (x->steps.n) {
			struct u64vec *v = &x->steps;
			if (v->n)
				qsort(v->v, v->n, sizeof(*v->v), cmp_u64);
			w->steps = v->n;
			w->step_med_ns = v->n % 2 ? v->v[v->n / 2] : (v->v[v->n / 2 - 1] + v->v[v->n / 2]) / 2;
		}
	}
	/* the instances: groups of the same (name, occurrence) on two ranks or more */
	if (nc)
		if (nc)
			qsort(cv, nc, sizeof(*cv), cmp_coll);
	for (size_t i = 0; i < nc;) {
		size_t j = i, last = i;
		while (j < nc && cv[j].name == cv[i].name && cv[j].occ == cv[i].occ)
			j++;
		if (j - i >= 2) {
			struct rank_row *L;
			s->instances++;
			for (size_t k = i; k < j; k++)
				if (cv[k].start > cv[last].start)
					last = k;
			L = &s->v[cv[last].row];
			L->late++;
			for (size_t k = i; k < j; k++) {
				struct rank_row *w = &s->v[cv[k].row];
				uint64_t wait, dur = cv[k].end - cv[k].start;
				w->colls++;
				if (k == last)
					continue;
				wait = cv[last].start - cv[k].start;
				if (wait > dur)
					wait = dur;
				w->wait_ns += wait;
				L->blame_ns += wait;
				s->wait_ns += wait;
			}
			{
				/*
				 * The stretches before the instance, from each rank's previous
				 * collective's end to its start: GPU busy, idle in data loading,
				 * idle otherwise (host).  The last arriver's excess over the
				 * others' mean, per part, says what made it late.
				 */
				double oth[3] = { 0, 0, 0 }, mine[3] = { 0, 0, 0 };
				size_t no = 0;
				for (size_t k = i; k < j; k++) {
					struct rank_row *w = &s->v[cv[k].row];
					struct rstate *x = &st[cv[k].row];
					uint64_t a = cv[k].prev_end ? cv[k].prev_end : w->first, b = cv[k].start;
					double part[3] = { 0, 0, 0 };
					if (a < b) {
						part[0] = (double)ivset_overlap(&x->busy, a, b);
						part[1] = (double)ivset_overlap(&x->dataidle, a, b);
						part[2] = (double)(b - a) - part[0] - part[1];
						if (k == last) {
							L->pre_ns += b - a;
							L->pre_busy_ns += (uint64_t)part[0];
							L->pre_data_ns += (uint64_t)part[1];
						}
					}
					for (int q = 0; q < 3; q++) {
						if (k == last)
							mine[q] = part[q];
						else
							oth[q] += part[q];
					}
					no += k != last;
				}
				for (int q = 0; q < 3; q++) {
					double ex = mine[q] - oth[q] / (double)no;
					if (ex > 0)
						L->excess_ns[q] += (uint64_t)ex;
				}
			}
		}
		i = j;
	}
	for (size_t i = 0; i < s->n; i++) {
		ivset_release(&st[i].busy);
		ivset_release(&st[i].compute);
		ivset_release(&st[i].comm);
		ivset_release(&st[i].data);
		ivset_release(&st[i].dataidle);
		free(st[i].steps.v);
	}
	free(st);
	free(pm);
	free(cv);
	free(cache);
	return s->n;
}

/* ---- rank_sum ---- */

static int rank_sum_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct rank_stats s;
	size_t cr, cp, cd, cw, cs, cm, cc, ce, cwt, ci, cdl, ch, cl, cb;

	(void)o;
	cr = st_col(t, "Rank", STATS_INT);
	cp = st_col(t, "PID", STATS_INT);
	cd = st_col(t, "Device", STATS_INT);
	cw = st_col(t, "Window (ns)", STATS_INT);
	cs = st_col(t, "Steps", STATS_INT);
	cm = st_col(t, "Step Med (ns)", STATS_INT);
	cc = st_col(t, "Compute (ns)", STATS_INT);
	ce = st_col(t, "Comm (ns)", STATS_INT);
	cwt = st_col(t, "Exposed Comm (ns)", STATS_INT);
	cl = st_col(t, "Wait (ns)", STATS_INT);
	ci = st_col(t, "Idle (ns)", STATS_INT);
	cdl = st_col(t, "Data Loading (ns)", STATS_INT);
	ch = st_col(t, "Host (ns)", STATS_INT);
	cb = st_col(t, "Others Waited (ns)", STATS_INT);
	if (f->active)
		st_note(t, "rank_sum covers each rank's whole run: --start/--end/--nvtx do not apply");
	if (!rank_stats_build(m, &s)) {
		st_empty(t, "%s: no ranks were recorded in this report (a distributed run records them; merge the ranks' traces with `gpuscope merge`)",
			 t->report);
		rank_stats_release(&s);
		return 0;
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct rank_row *w = &s.v[i];
		size_t r = st_row(t);
		st_int(t, r, cr, w->rank);
		st_int(t, r, cp, w->pid);
		if (w->last) {
			st_int(t, r, cd, w->device);
			st_int(t, r, cw, (int64_t)(w->last - w->first));
			st_int(t, r, cc, (int64_t)w->compute_ns);
			st_int(t, r, ce, (int64_t)w->comm_ns);
			st_int(t, r, cwt, (int64_t)w->exposed_ns);
			if (s.instances)
				st_int(t, r, cl, (int64_t)w->wait_ns);
			st_int(t, r, ci, (int64_t)w->idle_ns);
			st_int(t, r, cdl, (int64_t)w->data_ns);
			st_int(t, r, ch, (int64_t)w->host_ns);
			if (s.instances)
				st_int(t, r, cb, (int64_t)w->blame_ns);
		}
		st_int(t, r, cs, (int64_t)w->steps);
		if (w->steps)
			st_int(t, r, cm, (int64_t)w->step_med_ns);
	}
	if (s.world_size > 0 && (size_t)s.world_size > s.n)
		st_note(t, "%zu of %d ranks recorded; %llu collective instances matched across ranks",
			s.n, s.world_size, (unsigned long long)s.instances);
	else
		st_note(t, "%llu collective instances matched across ranks",
			(unsigned long long)s.instances);
	rank_stats_release(&s);
	return 0;
}

const struct stats_report_def stats_def_rank_sum = {
	.name = "rank_sum",
	.title = "Ranks Summary",
	.run = rank_sum_run,
};
