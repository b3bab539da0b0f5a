/*
 * timeline.c - the GPU units, their busy sets and idle gaps, and what the
 * CPU was doing during each gap (the attribution every rule reads).
 *
 * One pass over kernels, copies and sets in start order (the three tables
 * are each sorted; a three-way merge keeps the pass linear).  For every
 * gap of a unit (a process's device) the next GPU operation names, through
 * its correlation id, the API call that launched it and so the thread that
 * fed the GPU.  Then (docs/rules.md, "Attribution of idle gaps"):
 *
 *  - the launch call ended before the gap began: the work was queued and
 *    the GPU waited on something else (an event, another stream): "GPU side",
 *    not the CPU's fault (HTA's idle-time breakdown calls this kernel_wait
 *    or other), and no cause gets it;
 *  - what the thread did between the start of the gap and the launch call
 *    is split by cause (enum az_cause): its CUDA API calls (nested driver
 *    calls counted once, start-up work inside them apart), OS-runtime calls
 *    outside API calls (I/O, waits, locks, sleeps), NVTX ranges named like
 *    data work, and the rest, CPU time, which counts as launch overhead
 *    when the gap is shorter than launch-bound.max_gap_us;
 *  - from the launch call to the GPU start: launch latency, or staging
 *    time when the operation is a copy from/to pageable memory;
 *  - a blocking call (synchronise, synchronous copy) that started while the
 *    GPU was busy and returned as the gap began makes the CPU and launch
 *    time that follows the synchronisation's cost, up to the time it blocked
 *    (the rest carries over to later gaps); after a cudaFree that time is
 *    the allocation's cost;
 *  - CPU, lock and sleep time before a host-to-device copy prepared that
 *    copy's data: data loading.
 *
 * Per-thread row indexes (bucketed by thread, running maximum of ends; NVTX
 * by nesting depth too) keep each gap's lookups logarithmic.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>


static int cmp_unit_key(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa >> 20, b = *(const uint64_t *)pb >> 20;
	return (a > b) - (a < b);
}

/*
 * The unit of (pid, device): a scan for a few units, else a binary search
 * of a sorted index, so that rules that look a unit up per kernel stay
 * linear in the kernels on merged reports of many ranks (1,024 units in
 * bench/ranks).  Device ids fit 12 bits and unit indices 20 in the key;
 * beyond that, the scan.
 */
struct az_unit *az_unit_find(struct az_ctx *c, uint32_t pid, uint32_t device)
{
	uint64_t want = (uint64_t)pid << 12 | device;
	size_t lo = 0, hi;

	if (c->nunit_keys != c->nunits && c->nunits > 8 && c->nunits < (1u << 20)) {
		int fits = 1;
		free(c->unit_keys);
		c->unit_keys = xmalloc(c->nunits * sizeof(*c->unit_keys));
		for (size_t i = 0; i < c->nunits && fits; i++) {
			fits = c->units[i].device < (1u << 12);
			c->unit_keys[i] = (((uint64_t)c->units[i].pid << 12 | c->units[i].device) << 20) | i;
		}
		if (fits) {
			qsort(c->unit_keys, c->nunits, sizeof(*c->unit_keys), cmp_unit_key);
		} else {
			free(c->unit_keys);
			c->unit_keys = NULL;
		}
		c->nunit_keys = c->nunits;
	}
	if (!c->unit_keys || c->nunit_keys != c->nunits || device >= (1u << 12)) {
		for (size_t i = 0; i < c->nunits; i++)
			if (c->units[i].pid == pid && c->units[i].device == device)
				return &c->units[i];
		return NULL;
	}
	hi = c->nunits;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((c->unit_keys[mid] >> 20) < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nunits && (c->unit_keys[lo] >> 20) == want)
		return &c->units[c->unit_keys[lo] & ((1u << 20) - 1)];
	return NULL;
}

uint32_t az_unit_sms(const struct az_ctx *c, uint32_t pid, uint32_t device)
{
	const struct model *m = c->m;

	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == device && m->devices.v[i].pid == pid && m->devices.v[i].sm_count)
			return m->devices.v[i].sm_count;
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == device && m->devices.v[i].sm_count)
			return m->devices.v[i].sm_count;
	return 0;
}

const struct trace_device *az_unit_device(const struct az_ctx *c, uint32_t pid, uint32_t device)
{
	const struct model *m = c->m;
	const struct trace_device *any = NULL;

	for (size_t i = 0; i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		if (d->id != device || !d->cc_major)
			continue;
		if (d->pid == pid)
			return d;
		any = d;
	}
	return any;
}

/* ---- the window ---- */

int az_in_win_slow(const struct az_ctx *c, uint64_t t)
{
	size_t lo = 0, hi = c->win.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->win.v[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->win.n && c->win.v[lo].start <= t;
}

uint64_t az_win_overlap(const struct az_ctx *c, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	if (c->win.n <= 1) {
		uint64_t s = a > c->lo ? a : c->lo, e = b < c->hi ? b : c->hi;
		return e > s ? e - s : 0;
	}
	return ivset_overlap((struct interval_set *)&c->win, a, b);
}

/* ---- tallies ---- */

void az_tally_add(struct az_tally *t, uint64_t key, uint64_t ns)
{
	size_t i, min = 0;

	for (i = 0; i < t->n; i++) {
		if (t->key[i] == key) {
			t->ns[i] += ns;
			return;
		}
		if (t->ns[i] < t->ns[min])
			min = i;
	}
	if (t->n < AZ_TOP) {
		t->key[t->n] = key;
		t->ns[t->n++] = ns;
	} else if (ns > t->ns[min]) { /* space-saving: replace the smallest */
		t->key[min] = key;
		t->ns[min] = ns;
	}
}

int az_tally_top(const struct az_tally *t)
{
	int best = -1;

	for (size_t i = 0; i < t->n; i++)
		if (best < 0 || t->ns[i] > t->ns[best])
			best = (int)i;
	return best;
}

/* ---- per-thread indexes ---- */

/* Row indices of one table bucketed by thread, each bucket in start order. */
struct thread_index {
	size_t *off;               /* nthreads + 1 */
	uint32_t *row;
	uint64_t *pmax;            /* running max of end within the bucket */
};

static size_t thread_of(const struct model *m, uint32_t pid, uint32_t tid)
{
	const struct model_thread *t = model_thread(m, pid, tid);
	return t ? (size_t)(t - m->threads.v) : SIZE_MAX;
}

#define BUILD_INDEX(ix, m, tab, len)                                                \
	do {                                                                        \
		size_t nt_ = (m)->threads.n, *cur_;                                 \
		size_t *tix_ = xmalloc(((len) + 1) * sizeof(size_t));               \
		(ix)->off = xcalloc(nt_ + 2, sizeof(size_t));                       \
		for (size_t i_ = 0; i_ < (len); i_++) {                             \
			size_t last_ = i_ ? tix_[i_ - 1] : SIZE_MAX;                \
			if (i_ && (tab)[i_].pid == (tab)[i_ - 1].pid &&             \
			    (tab)[i_].tid == (tab)[i_ - 1].tid)                     \
				tix_[i_] = last_;                                   \
			else                                                        \
				tix_[i_] = thread_of(m, (tab)[i_].pid, (tab)[i_].tid); \
			if (tix_[i_] != SIZE_MAX)                                   \
				(ix)->off[tix_[i_] + 1]++;                          \
		}                                                                   \
		for (size_t t_ = 0; t_ < nt_; t_++)                                 \
			(ix)->off[t_ + 1] += (ix)->off[t_];                         \
		cur_ = xmalloc((nt_ + 1) * sizeof(size_t));                         \
		memcpy(cur_, (ix)->off, (nt_ + 1) * sizeof(size_t));                \
		(ix)->row = xmalloc(((ix)->off[nt_] + 1) * sizeof(uint32_t));       \
		(ix)->pmax = xmalloc(((ix)->off[nt_] + 1) * sizeof(uint64_t));      \
		for (size_t i_ = 0; i_ < (len); i_++) {                             \
			size_t t_ = tix_[i_], k_;                                   \
			if (t_ == SIZE_MAX)                                         \
				continue;                                           \
			k_ = cur_[t_]++;                                            \
			(ix)->row[k_] = (uint32_t)i_;                               \
			(ix)->pmax[k_] = (tab)[i_].end > (tab)[i_].start ? (tab)[i_].end \
									  : (tab)[i_].start; \
			if (k_ > (ix)->off[t_] && (ix)->pmax[k_ - 1] > (ix)->pmax[k_]) \
				(ix)->pmax[k_] = (ix)->pmax[k_ - 1];                \
		}                                                                   \
		free(cur_);                                                         \
		free(tix_);                                                         \
	} while (0)

static void index_release(struct thread_index *ix)
{
	free(ix->off);
	free(ix->row);
	free(ix->pmax);
}

/* First position in thread @t's bucket whose running max end is > @t0. */
static size_t index_first(const struct thread_index *ix, size_t t, uint64_t t0)
{
	size_t lo = ix->off[t], hi = ix->off[t + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->pmax[mid] <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the pass ---- */

struct gpu_op {
	uint64_t start, end;
	uint32_t pid, device, corr;
	int kind;                  /* 0 kernel, 1 copy, 2 set */
	int comm;
	int pageable;
	int htod;                  /* a host-to-device copy */
	uint64_t bytes;            /* copies: bytes */
	uint32_t name;             /* kernels: name id; copies: 1 + copy kind; sets: 0 */
};

struct tl {
	struct az_ctx *c;
	const struct model *m;
	struct thread_index api, osrt, nvtx;
	/*
	 * NVTX rows of each thread split by nesting depth: ranges of one depth
	 * do not overlap, so a query never walks the children of a range that
	 * spans the whole run (a "train" range, Kineto's step ranges).
	 */
	size_t *nd_first;          /* per thread: first bucket; nthreads + 1 */
	size_t *nd_off;            /* per bucket: offsets into nd_row; nbuckets + 1 */
	uint32_t *nd_row;
	uint64_t *nd_pmax;
	size_t *cpu_off;           /* per thread: its CPU samples, in time order */
	uint32_t *cpu_row;
	struct model_corr *corr;   /* c->corr */
	uint32_t *main_thread;     /* per unit: thread index + 1 of the main thread, 0 = none */
	uint8_t *pid_has_cpu;      /* per unit */
	uint64_t *cur_end;         /* per unit: running end of its GPU work */
	uint64_t *credit;          /* per unit: blocked sync time not yet spent */
	uint32_t *credit_name;     /* per unit: name of that sync call */
	uint64_t min_gap, launch_max_gap, sync_tol, oneoff_min, batch_bytes;
	int all;                   /* a window was asked for (--start/--end): no one-offs */
	uint8_t *seen;             /* per kernel name id: launched before in the window */
	uint64_t *first_range;     /* per name id: start and end of the first NVTX range of that name in the window */
	uint8_t seen_copy[32];     /* per copy kind (and sets): seen before in the window */
};

/* CPU samples bucketed by thread (no end times: a plain counting sort). */
static void cpu_index(struct tl *l)
{
	const struct model *m = l->m;
	size_t nt = m->threads.n, *cur, *tix;

	l->cpu_off = xcalloc(nt + 2, sizeof(size_t));
	if (!m->cpu.n)
		return;
	tix = xmalloc(m->cpu.n * sizeof(size_t));
	for (size_t i = 0; i < m->cpu.n; i++) {
		tix[i] = thread_of(m, m->cpu.v[i].pid, m->cpu.v[i].tid);
		if (tix[i] != SIZE_MAX)
			l->cpu_off[tix[i] + 1]++;
	}
	for (size_t t = 0; t < nt; t++)
		l->cpu_off[t + 1] += l->cpu_off[t];
	cur = xmalloc((nt + 1) * sizeof(size_t));
	memcpy(cur, l->cpu_off, (nt + 1) * sizeof(size_t));
	l->cpu_row = xmalloc((l->cpu_off[nt] + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < m->cpu.n; i++)
		if (tix[i] != SIZE_MAX)
			l->cpu_row[cur[tix[i]]++] = (uint32_t)i;
	free(cur);
	free(tix);
}

/*
 * Share of [a, b) thread @t spent on a CPU, from the samples bracketing it
 * (cumulative run time); -1 when the samples do not bracket the interval.
 */
static double cpu_share(const struct tl *l, size_t t, uint64_t a, uint64_t b)
{
	const struct model *m = l->m;
	size_t lo = l->cpu_off[t], hi = l->cpu_off[t + 1], n0, n1;
	const struct trace_cpu_sample *s0, *s1;

	if (lo == hi)
		return -1;
	n1 = hi;
	while (lo < n1) { /* first sample at or after b */
		size_t mid = lo + (n1 - lo) / 2;
		if (m->cpu.v[l->cpu_row[mid]].time < b)
			lo = mid + 1;
		else
			n1 = mid;
	}
	if (n1 == hi || n1 == l->cpu_off[t])
		return -1;
	n0 = n1 - 1;
	while (n0 > l->cpu_off[t] && m->cpu.v[l->cpu_row[n0]].time > a)
		n0--;
	s0 = &m->cpu.v[l->cpu_row[n0]];
	s1 = &m->cpu.v[l->cpu_row[n1]];
	if (s0->time > a || s1->time <= s0->time || s1->run_ns < s0->run_ns)
		return -1;
	return az_div((double)(s1->run_ns - s0->run_ns), (double)(s1->time - s0->time));
}

static void nvtx_depth_index(struct tl *l)
{
	const struct model *m = l->m;
	size_t nt = m->threads.n, nb = 0, *depth;
	uint64_t *stack = NULL;
	size_t sn = 0, salloc = 0, *cnt;

	l->nd_first = xcalloc(nt + 2, sizeof(size_t));
	depth = xmalloc((m->nvtx.n + 1) * sizeof(size_t));
	/* depth of every row, thread by thread, with a stack of open ends */
	for (size_t t = 0; t < nt; t++) {
		size_t maxd = 0;
		sn = 0;
		for (size_t k = l->nvtx.off[t]; k < l->nvtx.off[t + 1]; k++) {
			const struct trace_nvtx_range *r = &m->nvtx.v[l->nvtx.row[k]];
			uint64_t end = r->end > r->start ? r->end : r->start;
			while (sn && stack[sn - 1] <= r->start)
				sn--;
			depth[k] = sn;
			if (sn + 1 > maxd)
				maxd = sn + 1;
			ALLOC_GROW(stack, sn + 1, salloc);
			stack[sn++] = end;
		}
		l->nd_first[t] = nb;
		nb += l->nvtx.off[t + 1] > l->nvtx.off[t] ? maxd : 0;
	}
	l->nd_first[nt] = nb;
	cnt = xcalloc(nb + 2, sizeof(size_t));
	for (size_t t = 0; t < nt; t++)
		for (size_t k = l->nvtx.off[t]; k < l->nvtx.off[t + 1]; k++)
			cnt[l->nd_first[t] + depth[k] + 1]++;
	for (size_t b = 0; b < nb; b++)
		cnt[b + 1] += cnt[b];
	l->nd_off = xmalloc((nb + 1) * sizeof(size_t));
	memcpy(l->nd_off, cnt, (nb + 1) * sizeof(size_t));
	l->nd_row = xmalloc((m->nvtx.n + 1) * sizeof(uint32_t));
	l->nd_pmax = xmalloc((m->nvtx.n + 1) * sizeof(uint64_t));
	for (size_t t = 0; t < nt; t++)
		for (size_t k = l->nvtx.off[t]; k < l->nvtx.off[t + 1]; k++) {
			size_t b = l->nd_first[t] + depth[k], pos = cnt[b]++;
			const struct trace_nvtx_range *r = &m->nvtx.v[l->nvtx.row[k]];
			uint64_t end = r->end > r->start ? r->end : r->start;
			l->nd_row[pos] = l->nvtx.row[k];
			l->nd_pmax[pos] = pos > l->nd_off[b] && l->nd_pmax[pos - 1] > end ? l->nd_pmax[pos - 1] : end;
		}
	free(cnt);
	free(stack);
	free(depth);
}

static size_t unit_get(struct az_ctx *c, uint32_t pid, uint32_t device, size_t *last)
{
	if (*last < c->nunits && c->units[*last].pid == pid && c->units[*last].device == device)
		return *last;
	for (size_t i = 0; i < c->nunits; i++)
		if (c->units[i].pid == pid && c->units[i].device == device)
			return *last = i;
	c->units = xrealloc(c->units, (c->nunits + 1) * sizeof(*c->units));
	memset(&c->units[c->nunits], 0, sizeof(*c->units));
	c->units[c->nunits].pid = pid;
	c->units[c->nunits].device = device;
	return *last = c->nunits++;
}

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t ov(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = umax(a0, b0), e = umin(a1, b1);
	return e > s ? e - s : 0;
}


struct parts {
	uint64_t ns[CAUSE__N];
	uint64_t name[CAUSE__N];   /* a name key for the tally of each cause */
};

static void add_part(struct parts *p, int cause, uint64_t ns, uint64_t name)
{
	if (!ns)
		return;
	p->ns[cause] += ns;
	if (!p->name[cause])
		p->name[cause] = name;
}

/* What thread @t did in [a, e) outside its API calls. */
static void thread_activity(struct tl *l, size_t t, uint64_t a, uint64_t e, uint64_t gap_len,
			    struct parts *p, int *first_range)
{
	const struct model *m = l->m;
	uint64_t api_ns = 0, os_ns = 0, data_ns = 0, rest, any_name = 0;
	size_t i;

	if (e <= a)
		return;
	/*
	 * CUDA API calls.  Driver calls made inside a runtime call are recorded
	 * too: count only time no earlier call covered, except that one-time
	 * initialisation inside a call (context creation, module loading) is
	 * taken out of its parent and counted as such.
	 */
	{
		uint64_t covered = a;
		int top = CAUSE_API;
		for (i = index_first(&l->api, t, a); i < l->api.off[t + 1]; i++) {
			const struct trace_api *r = &m->api.v[l->api.row[i]];
			uint64_t o, s0, e0;
			int cls = l->c->api_class[r->name_id], cause;
			if (r->start >= e)
				break;
			switch (cls) {
			case API_SYNC: case API_COPY_SYNC: cause = CAUSE_SYNC; break;
			case API_ALLOC: case API_FREE: cause = CAUSE_ALLOC; break;
			case API_LAUNCH: case API_COPY_ASYNC: cause = CAUSE_LAUNCH; break;
			case API_INIT: cause = CAUSE_INIT; break;
			default: /* a framework's bookkeeping calls between launches are dispatch */
				cause = gap_len < l->launch_max_gap ? CAUSE_LAUNCH : CAUSE_API;
				break;
			}
			if (r->start < covered && cls == API_INIT && top != CAUSE_INIT) {
				/* nested start-up work: move it out of the enclosing call */
				uint64_t x = ov(a, umin(e, covered), r->start, r->end);
				x = umin(x, p->ns[top]);
				p->ns[top] -= x;
				add_part(p, CAUSE_INIT, x, (uint64_t)1 << 40 | r->name_id);
			}
			s0 = umax(umax(a, r->start), covered);
			e0 = umin(e, r->end);
			o = e0 > s0 ? e0 - s0 : 0;
			if (!o)
				continue;
			add_part(p, cause, o, (uint64_t)1 << 40 | r->name_id);
			api_ns += o;
			covered = e0;
			top = cause;
		}
	}
	/* OS-runtime calls not inside an API call (the driver's own ioctls are API time) */
	for (i = index_first(&l->osrt, t, a); i < l->osrt.off[t + 1]; i++) {
		const struct trace_osrt *r = &m->osrt.v[l->osrt.row[i]];
		uint64_t o, inside = 0;
		int cause;
		if (r->start >= e)
			break;
		o = ov(a, e, r->start, r->end);
		if (!o || (cause = az_osrt_cause(r->func)) < 0)
			continue;
		if (api_ns) {
			for (size_t j = index_first(&l->api, t, umax(a, r->start)); j < l->api.off[t + 1]; j++) {
				const struct trace_api *q = &m->api.v[l->api.row[j]];
				if (q->start >= umin(e, r->end))
					break;
				inside += ov(umax(a, r->start), umin(e, r->end), q->start, q->end);
			}
		}
		o = o > inside ? o - inside : 0;
		add_part(p, cause, o, (uint64_t)2 << 40 | r->func);
		os_ns += o;
	}
	rest = e - a;
	rest = rest > api_ns + os_ns ? rest - api_ns - os_ns : 0;
	if (!rest)
		return;
	/* NVTX ranges named like data work; the innermost range names the rest */
	if (l->nd_first && l->nd_first[t + 1] > l->nd_first[t]) {
		uint64_t best = 0, best_name = 0;
		for (size_t b = l->nd_first[t]; b < l->nd_first[t + 1]; b++) {
			size_t lo = l->nd_off[b], hi = l->nd_off[b + 1];
			while (lo < hi) { /* first row of this depth ending after a */
				size_t mid = lo + (hi - lo) / 2;
				if (l->nd_pmax[mid] <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (i = lo; i < l->nd_off[b + 1]; i++) {
				const struct trace_nvtx_range *r = &m->nvtx.v[l->nd_row[i]];
				uint64_t o;
				if (r->start >= e)
					break;
				o = ov(a, e, r->start, r->end);
				if (!o)
					continue;
				if (o * 2 > e - a || !any_name) { /* deeper buckets come later: innermost wins */
					any_name = (uint64_t)3 << 40 | r->name_id;
					/* the first instance of its name in the window: a first call (lazy set-up) */
					*first_range = o * 2 > e - a && r->name_id < m->str.nr &&
						       r->start >= l->first_range[2 * r->name_id] &&
						       r->start < l->first_range[2 * r->name_id + 1];
				}
				if (az_is_data_id(l->c, r->name_id)) {
					data_ns = umax(data_ns, o);
					if (o >= best) {
						best = o;
						best_name = (uint64_t)3 << 40 | r->name_id;
					}
				}
			}
		}
		data_ns = umin(data_ns, rest);
		add_part(p, CAUSE_DATA_CPU, data_ns, best_name);
		rest -= data_ns;
	}
	if (gap_len < l->launch_max_gap) /* dispatch: the launch calls name it, not the range */
		add_part(p, CAUSE_LAUNCH, rest, 0);
	else
		add_part(p, CAUSE_CPU, rest, any_name);
}

/* Keep the three gaps where the cause took the most time. */
static void big_add(struct az_cause_stat *cs, uint64_t a, uint64_t b, uint64_t ns)
{
	int k;

	for (k = 0; k < 3; k++)
		if (ns > cs->big_ns[k])
			break;
	if (k == 3)
		return;
	memmove(&cs->big[k + 1], &cs->big[k], (size_t)(2 - k) * sizeof(cs->big[0]));
	memmove(&cs->big_ns[k + 1], &cs->big_ns[k], (size_t)(2 - k) * sizeof(cs->big_ns[0]));
	cs->big[k].start = a;
	cs->big[k].end = b;
	cs->big_ns[k] = ns;
}

static void gap(struct tl *l, size_t ui, uint64_t a, uint64_t b, const struct gpu_op *next, int first)
{
	struct az_ctx *c = l->c;
	const struct model *m = l->m;
	const struct trace_api *la;
	struct parts p;
	uint64_t len = b - a, len_in, L, thr_key = 0;
	size_t t = SIZE_MAX, step = 0;
	int first_range = 0;

	len_in = c->win.n > 1 ? az_win_overlap(c, a, b) : len;
	if (len_in < l->min_gap)
		return;
	ALLOC_GROW(c->gaps, c->ngaps + 1, c->alloc_gaps);
	memset(&c->gaps[c->ngaps], 0, sizeof(c->gaps[0]));
	c->gaps[c->ngaps].start = a;
	c->gaps[c->ngaps].unit = ui;
	c->gaps[c->ngaps].api = UINT32_MAX;
	c->gaps[c->ngaps++].len = len_in;

	memset(&p, 0, sizeof(p));
	la = model_corr_find(l->corr, m, next->pid, next->corr);
	if (la && la->end <= a) {
		/* queued before the GPU went idle: it waited on the GPU side */
		c->gpu_side_ns += len_in;
		c->gpu_side_gaps++;
		return;
	}
	if (la) {
		t = thread_of(m, la->pid, la->tid);
		L = umin(umax(la->start, a), b);
		c->launch_gaps++;
	} else {
		if (l->main_thread[ui])
			t = l->main_thread[ui] - 1;
		L = b;
	}
	if (t == SIZE_MAX) {
		add_part(&p, CAUSE_UNKNOWN, len, 0);
	} else {
		const struct model_thread *th = &m->threads.v[t];
		const struct trace_api *blk = NULL;
		thr_key = (uint64_t)th->pid << 32 | th->tid;
		/* a blocking call that returned as the GPU went idle */
		for (size_t i = index_first(&l->api, t, a > l->sync_tol ? a - l->sync_tol : 0);
		     i < l->api.off[t + 1]; i++) {
			const struct trace_api *r = &m->api.v[l->api.row[i]];
			int cls;
			if (r->start >= L)
				break;
			cls = c->api_class[r->name_id];
			if (az_api_blocks(cls) &&
			    r->start < a && r->end + l->sync_tol >= a && r->end <= L)
				blk = r;
		}
		/* what the thread did; explicit work (I/O, waits, allocations) keeps its cause */
		thread_activity(l, t, a, L, len, &p, &first_range);
		if (L < b) {
			int cause = CAUSE_LAUNCH;
			if (la && next->kind == 1 && next->pageable)
				cause = CAUSE_PAGEABLE;
			else if (b - L >= l->launch_max_gap)
				cause = first && la && c->api_class[la->name_id] == API_LAUNCH
					? CAUSE_INIT /* the first launch of a kernel loads its module: once */
					: CAUSE_API; /* a launch that long waits: not launch overhead */
			add_part(&p, cause, b - L, la ? (uint64_t)1 << 40 | la->name_id : 0);
			if (cause == CAUSE_API) { /* lazy module loading inside the launch */
				for (size_t i = index_first(&l->api, t, L); i < l->api.off[t + 1]; i++) {
					const struct trace_api *r = &m->api.v[l->api.row[i]];
					uint64_t x;
					if (r->start >= b)
						break;
					if (c->api_class[r->name_id] != API_INIT)
						continue;
					x = umin(ov(L, b, r->start, r->end), p.ns[CAUSE_API]);
					p.ns[CAUSE_API] -= x;
					add_part(&p, CAUSE_INIT, x, (uint64_t)1 << 40 | r->name_id);
				}
			}
		}
		if (blk && c->api_class[blk->name_id] == API_FREE) {
			/* cudaFree drained the GPU: the dispatch after it is the free's cost */
			for (int k = CAUSE_CPU; k <= CAUSE_LAUNCH; k += CAUSE_LAUNCH - CAUSE_CPU) {
				p.ns[CAUSE_ALLOC] += p.ns[k];
				p.ns[k] = 0;
			}
			p.name[CAUSE_ALLOC] = (uint64_t)1 << 40 | blk->name_id;
		} else if (blk) {
			l->credit[ui] = a > blk->start ? a - blk->start : 0;
			l->credit_name[ui] = blk->name_id;
		}
		/*
		 * A sync emptied the queue: the dispatch that follows it (CPU and launch
		 * time, up to the time the thread was blocked) is the sync's cost; the
		 * rest of the blocked time carries over to the following gaps.
		 */
		if (l->credit[ui]) {
			for (int k = CAUSE_CPU; k <= CAUSE_LAUNCH; k += CAUSE_LAUNCH - CAUSE_CPU) {
				uint64_t x = umin(l->credit[ui], p.ns[k]);
				p.ns[k] -= x;
				p.ns[CAUSE_SYNC] += x;
				l->credit[ui] -= x;
				if (x && !p.name[CAUSE_SYNC])
					p.name[CAUSE_SYNC] = (uint64_t)1 << 40 | l->credit_name[ui];
			}
		}
		/*
		 * Host work that ends in a host-to-device copy prepared that copy's
		 * data: the input pipeline, whatever calls it made on the way.
		 */
		if (next->htod && next->bytes >= l->batch_bytes) {
			static const int prep[] = { CAUSE_CPU, CAUSE_LOCK, CAUSE_SLEEP };
			for (size_t k = 0; k < ARRAY_SIZE(prep); k++) {
				if (!p.ns[prep[k]])
					continue;
				p.ns[CAUSE_DATA_PREP] += p.ns[prep[k]];
				p.ns[prep[k]] = 0;
				p.name[CAUSE_DATA_PREP] = (uint64_t)4 << 40 | (la ? la->name_id : 0);
			}
		}
		/* were the CPU-work parts really on a CPU? (thread CPU samples) */
		if (p.ns[CAUSE_CPU] + p.ns[CAUSE_DATA_CPU] + p.ns[CAUSE_DATA_PREP] >= 100000 && l->cpu_off) {
			double sh = cpu_share(l, t, a, L);
			if (sh >= 0) {
				uint64_t part = p.ns[CAUSE_CPU] + p.ns[CAUSE_DATA_CPU] + p.ns[CAUSE_DATA_PREP];
				c->cpu_sampled_ns += part;
				c->cpu_on_ns += (uint64_t)((double)part * (sh > 1 ? 1 : sh));
			}
		}
		if (!l->pid_has_cpu[ui] && !la) {
			memset(&p, 0, sizeof(p));
			add_part(&p, CAUSE_UNKNOWN, len, 0);
		}
	}
	/* the NVTX step the gap begins in */
	if (c->step_cause) {
		size_t lo = 0, hi = c->nsteps_nvtx;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (c->steps[mid].start <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		step = lo ? lo - 1 : 0;
	}
	/* scale to the part inside the window */
	if (len_in != len)
		for (int k = 0; k < CAUSE__N; k++)
			p.ns[k] = (uint64_t)((double)p.ns[k] * ((double)len_in / (double)len));
	{
		struct az_gap *g = &c->gaps[c->ngaps - 1];
		uint64_t strong = p.ns[CAUSE_IO] + p.ns[CAUSE_WAIT] + p.ns[CAUSE_DATA_CPU];
		int dom = 0;
		if (la)
			g->api = (uint32_t)(la - m->api.v);
		for (int k = 0; k < CAUSE__N; k++) {
			g->part[k] = p.ns[k] > UINT32_MAX ? UINT32_MAX : (uint32_t)p.ns[k];
			if (p.ns[k] > p.ns[dom])
				dom = k;
		}
		/*
		 * A one-off: a long gap before the first GPU operation of its
		 * kind in the window, or spent mostly in the first instance of
		 * an operator or range (start-up, lazy module loading, first
		 * calls, JIT compilation or autotuning make new kernels or run
		 * once; a steady-state loop runs kernels and operators it ran
		 * before).  Identified input loading repeats with every batch,
		 * so it is never a one-off.
		 */
		if (!l->all && (((first || first_range) && len_in >= l->oneoff_min && strong * 2 < len_in) ||
				dom == CAUSE_INIT)) {
			struct az_oneoff *o;
			g->oneoff = 1;
			ALLOC_GROW(c->oneoffs, c->noneoffs + 1, c->alloc_oneoffs);
			o = &c->oneoffs[c->noneoffs++];
			o->start = a;
			o->len = len_in;
			o->cause = dom;
			o->name = (uint32_t)(p.name[dom] & 0xffffffffu);
			o->name_tag = (uint32_t)(p.name[dom] >> 40);
			o->next_kind = next->kind;
			o->next_name = next->kind == 0 ? next->name : 0;
			c->oneoff_ns += len_in;
			return;
		}
	}
	/* record */
	for (int k = 0; k < CAUSE__N; k++) {
		uint64_t ns = p.ns[k];
		if (!ns)
			continue;
		c->cause[k].ns += ns;
		if (c->step_cause)
			c->step_cause[step * CAUSE__N + (size_t)k] += ns;
		c->cause[k].gaps++;
		if (thr_key)
			az_tally_add(&c->cause[k].threads, thr_key, ns);
		if (p.name[k])
			az_tally_add(&c->cause[k].names, p.name[k], ns);
		big_add(&c->cause[k], a, b, ns);
	}
}

/*
 * A unit appeared in the pass: size its per-unit arrays and pick its
 * process's main thread (the one with the most API and OS-runtime rows),
 * the fallback for gaps whose launch is not recorded.
 */
static void unit_added(struct tl *l, size_t ui)
{
	struct az_ctx *c = l->c;
	const struct model *m = l->m;
	size_t nu = c->nunits + 1;

	l->main_thread = xrealloc(l->main_thread, nu * sizeof(*l->main_thread));
	l->pid_has_cpu = xrealloc(l->pid_has_cpu, nu * sizeof(*l->pid_has_cpu));
	l->cur_end = xrealloc(l->cur_end, nu * sizeof(*l->cur_end));
	l->credit = xrealloc(l->credit, nu * sizeof(*l->credit));
	l->credit_name = xrealloc(l->credit_name, nu * sizeof(*l->credit_name));
	l->pid_has_cpu[ui] = 0;
	l->cur_end[ui] = 0;
	l->credit[ui] = 0;
	l->credit_name[ui] = 0;
	{
		size_t best = SIZE_MAX, best_n = 0;
		for (size_t t = 0; t < m->threads.n; t++) {
			size_t n;
			if (m->threads.v[t].pid != c->units[ui].pid)
				continue;
			n = (l->api.off[t + 1] - l->api.off[t]) * 4 + (l->osrt.off[t + 1] - l->osrt.off[t]);
			if (n)
				l->pid_has_cpu[ui] = 1;
			if (best == SIZE_MAX || n > best_n ||
			    (n == best_n && m->threads.v[t].tid == c->units[ui].pid)) {
				best = t;
				best_n = n;
			}
		}
		l->main_thread[ui] = best == SIZE_MAX ? 0 : (uint32_t)best + 1;
	}
}

/* Is @op the first GPU operation of its name (kernels) or kind (copies, sets) in the window?  Marks it seen. */
static int first_seen(struct tl *l, const struct gpu_op *op)
{
	uint8_t *s;

	if (op->kind == 0) {
		if (op->name >= l->m->str.nr)
			return 0;
		s = &l->seen[op->name];
	} else {
		s = &l->seen_copy[(op->kind == 1 ? op->name : 0) & 31];
	}
	if (*s)
		return 0;
	*s = 1;
	return 1;
}

static void route(struct tl *l, const struct gpu_op *op, size_t *last)
{
	struct az_ctx *c = l->c;
	struct az_unit *u;
	uint64_t s, e;
	size_t ui;

	if (op->end <= c->lo) {
		(void)first_seen(l, op); /* run before the window (warm-up): not new in it */
		return;
	}
	if (op->start >= c->hi)
		return;
	if (c->win.n > 1 && !az_win_overlap(c, op->start, op->end > op->start ? op->end : op->start + 1))
		return;
	{
		size_t before = c->nunits;
		ui = unit_get(c, op->pid, op->device, last);
		if (c->nunits != before)
			unit_added(l, ui);
	}
	u = &c->units[ui];
	s = umax(op->start, c->lo);
	e = umin(op->end, c->hi);
	if (e < s)
		e = s;
	if (op->kind == 0) {
		ivset_add(op->comm ? &u->comm : &u->compute, s, e);
		u->kernels++;
	} else {
		ivset_add(&u->copy, s, e);
		u->copies++;
	}
	if (!u->has_work) {
		u->has_work = 1;
		u->first = s;
		u->last = e;
		l->cur_end[ui] = e;
		/* idle from the window's start (warm-up skipped, --start) is a gap too */
		if (s > c->lo)
			gap(l, ui, c->lo, s, op, first_seen(l, op));
		return;
	}
	if (s > l->cur_end[ui]) {
		gap(l, ui, l->cur_end[ui], s, op, first_seen(l, op));
	} else {
		(void)first_seen(l, op);
		/*
		 * Queued behind running work: the CPU is ahead again, so what
		 * is left of a synchronisation's blocked time no longer costs
		 * anything; later gaps are the host's own.
		 */
		if (s < l->cur_end[ui])
			l->credit[ui] = 0;
	}
	if (e > l->cur_end[ui])
		l->cur_end[ui] = e;
	if (e > u->last)
		u->last = e;
}

/* The union of three normalised sets, merged in order (no sort). */
void az_merge3(struct interval_set *out, const struct interval_set *a, const struct interval_set *b,
		   const struct interval_set *c)
{
	size_t i = 0, j = 0, k = 0;

	for (;;) {
		uint64_t sa = i < a->n ? a->v[i].start : UINT64_MAX;
		uint64_t sb = j < b->n ? b->v[j].start : UINT64_MAX;
		uint64_t sc = k < c->n ? c->v[k].start : UINT64_MAX;
		const struct interval *iv;
		if (sa == UINT64_MAX && sb == UINT64_MAX && sc == UINT64_MAX)
			break;
		if (sa <= sb && sa <= sc)
			iv = &a->v[i++];
		else if (sb <= sc)
			iv = &b->v[j++];
		else
			iv = &c->v[k++];
		if (out->n && iv->start <= out->v[out->n - 1].end) {
			if (iv->end > out->v[out->n - 1].end)
				out->v[out->n - 1].end = iv->end;
			continue;
		}
		ivset_add(out, iv->start, iv->end);
	}
	out->normal = 1;
}

void az_build_timeline(struct az_ctx *c)
{
	const struct model *m = c->m;
	struct tl l;
	size_t ik = 0, ic = 0, is = 0, last = 0;

	memset(&l, 0, sizeof(l));
	l.c = c;
	l.m = m;
	l.min_gap = (uint64_t)(az_engine_param(c, "min_gap_us") * 1e3);
	l.sync_tol = (uint64_t)(az_engine_param(c, "sync_tolerance_us") * 1e3);
	l.launch_max_gap = (uint64_t)(az_engine_param(c, "max_gap_us") * 1e3);
	l.oneoff_min = (uint64_t)(az_engine_param(c, "oneoff_min_ms") * 1e6);
	l.batch_bytes = (uint64_t)az_engine_param(c, "batch_bytes");
	l.seen = xcalloc(m->str.nr + 1, 1);
	l.first_range = xcalloc(2 * (size_t)m->str.nr + 2, sizeof(uint64_t));
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		if (r->name_id < m->str.nr && !l.first_range[2 * r->name_id]) { /* the first in the recording, before the window too */
			l.first_range[2 * r->name_id] = r->start;
			l.first_range[2 * r->name_id + 1] = r->end > r->start ? r->end : r->start + 1;
		}
	}
	l.all = c->o && (c->o->start || c->o->end) && !c->o->in_windows;
	if (!l.min_gap)
		l.min_gap = 1;

	if (c->nsteps_nvtx)
		c->step_cause = xcalloc(c->nsteps_nvtx * CAUSE__N, sizeof(uint64_t));
	BUILD_INDEX(&l.api, m, m->api.v, m->api.n);
	BUILD_INDEX(&l.osrt, m, m->osrt.v, m->osrt.n);
	BUILD_INDEX(&l.nvtx, m, m->nvtx.v, m->nvtx.n);
	nvtx_depth_index(&l);
	index_release(&l.nvtx);
	memset(&l.nvtx, 0, sizeof(l.nvtx));
	cpu_index(&l);
	model_corr_build(&c->corr, m);
	l.corr = &c->corr;

	/* three-way merge of kernels, copies and sets by start */
	for (;;) {
		uint64_t sk = ik < m->kernels.n ? m->kernels.v[ik].start : UINT64_MAX;
		uint64_t sc = ic < m->memcpys.n ? m->memcpys.v[ic].start : UINT64_MAX;
		uint64_t ss = is < m->memsets.n ? m->memsets.v[is].start : UINT64_MAX;
		struct gpu_op op;

		if (sk == UINT64_MAX && sc == UINT64_MAX && ss == UINT64_MAX)
			break;
		memset(&op, 0, sizeof(op));
		if (sk <= sc && sk <= ss) {
			const struct trace_kernel *k = &m->kernels.v[ik++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 0; op.comm = az_is_comm(c, k); op.name = k->name_id;
		} else if (sc <= ss) {
			const struct trace_memcpy *k = &m->memcpys.v[ic++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 1;
			op.pageable = k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE;
			op.htod = k->kind == COPY_HTOD;
			op.bytes = k->bytes;
			op.name = 1 + (uint32_t)k->kind;
		} else {
			const struct trace_memset *k = &m->memsets.v[is++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 2;
		}
		if (op.end < op.start)
			op.end = op.start;
		route(&l, &op, &last);
	}

	for (size_t ui = 0; ui < c->nunits; ui++) {
		struct az_unit *u = &c->units[ui];
		struct interval_set all = { 0 };
		if (!u->has_work)
			continue;
		ivset_normalize(&u->compute);
		ivset_normalize(&u->comm);
		ivset_normalize(&u->copy);
		az_merge3(&all, &u->compute, &u->comm, &u->copy);
		if (c->win.n > 1)
			u->busy_ns = ivset_intersect_total(&all, &c->win);
		else
			u->busy_ns = ivset_total(&all);
		ivset_release(&all);
		u->idle_ns = c->wall_ns > u->busy_ns ? c->wall_ns - u->busy_ns : 0;
		c->busy_ns += u->busy_ns;
		c->idle_ns += u->idle_ns;
		c->has_gpu = 1;
	}

	index_release(&l.api);
	index_release(&l.osrt);
	free(l.nd_first);
	free(l.nd_off);
	free(l.nd_row);
	free(l.nd_pmax);
	free(l.cpu_off);
	free(l.cpu_row);
	free(l.main_thread);
	free(l.pid_has_cpu);
	free(l.cur_end);
	free(l.credit);
	free(l.credit_name);
	free(l.seen);
	free(l.first_range);
}

void az_release_timeline(struct az_ctx *c)
{
	for (size_t i = 0; i < c->nunits; i++) {
		ivset_release(&c->units[i].compute);
		ivset_release(&c->units[i].comm);
		ivset_release(&c->units[i].copy);
	}
	free(c->units);
	c->units = NULL;
	c->nunits = 0;
	free(c->unit_keys);
	c->unit_keys = NULL;
	c->nunit_keys = 0;
	free(c->gaps);
	c->gaps = NULL;
	free(c->step_cause);
	c->step_cause = NULL;
	free(c->oneoffs);
	c->oneoffs = NULL;
	c->noneoffs = 0;
	model_corr_release(&c->corr);
	memset(&c->corr, 0, sizeof(c->corr));
}
