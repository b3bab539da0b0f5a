/*
 * rule_memory.c - memory-pressure: device memory near capacity, or live
 * memory growing step over step.
 *
 * Live device memory is replayed from the allocation records (allocations
 * add their bytes, frees subtract the bytes of the matching allocation by
 * address); a used-memory metric (NVML) is used when there are no records.
 * No gain is estimated (0): pressure costs time only once the allocator
 * retries or the program fails, and the finding says so.
 *
 * Growth compares like with like: live bytes at the same point of each step,
 * the end of each NVTX step instance in the window when there are at least
 * GROWTH_MIN_POINTS of them, else the ends of GROWTH_POINTS equal parts of
 * the window (a loop without NVTX steps has no phase to align on; ten parts
 * are enough to see a trend and few enough that each part spans several
 * steps of a typical loop).  Memory grows when
 *  - there are at least GROWTH_MIN_POINTS points (two step-over-step changes:
 *    one rise is not a trend);
 *  - live bytes rise from one point to the next in at least GROWTH_RISING of
 *    the changes (80%: a caching allocator that is still growing does not
 *    call cudaMalloc in every step, and with equally spaced points a
 *    short-lived buffer can fall on one point and not the next);
 *  - the last point exceeds the first by at least growth_share of the peak;
 *  - and frees are counted: when live bytes at the window's end are back to
 *    at most BACK_TO_START (10%) above their level at its start, every
 *    allocation made in the window was as good as freed, and that is no
 *    growth whatever the points in between show (10% leaves room for a
 *    buffer or two kept at the end, such as a final result); nor is it when
 *    the window's end exceeds its start by less than growth_share of the
 *    peak (a window that ends inside a step, with that step's scratch
 *    buffers still live, after everything older was freed).
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GROWTH_POINTS 10       /* equally spaced points without NVTX steps */
#define GROWTH_MIN_POINTS 3
#define GROWTH_RISING 0.8      /* share of point-to-point changes that rise */
#define BACK_TO_START 1.10     /* end <= 110% of start: freed, no growth */

struct live {
	uint64_t *addr, *bytes;    /* open-addressing map address -> bytes */
	size_t mask, n;
};

static size_t lhash(uint64_t a) { return (size_t)((a >> 8) * 0x9E3779B97F4A7C15ull >> 16); }

static void live_put(struct live *l, uint64_t a, uint64_t b)
{
	size_t s;

	if ((l->n + 1) * 2 > l->mask + 1) {
		struct live o = *l;
		size_t n = (l->mask + 1) * 2;
		l->addr = xcalloc(n, sizeof(uint64_t));
		l->bytes = xcalloc(n, sizeof(uint64_t));
		l->mask = n - 1;
		l->n = 0;
		for (size_t i = 0; o.addr && i <= o.mask; i++)
			if (o.addr[i])
				live_put(l, o.addr[i], o.bytes[i]);
		free(o.addr);
		free(o.bytes);
	}
	for (s = lhash(a) & l->mask; l->addr[s] && l->addr[s] != a; s = (s + 1) & l->mask)
		;
	if (!l->addr[s])
		l->n++;
	l->addr[s] = a;
	l->bytes[s] = b;
}

/* Remove @a; returns its bytes or 0.  Backward-shift deletion keeps probes whole. */
static uint64_t live_take(struct live *l, uint64_t a)
{
	size_t s, j;
	uint64_t b;

	if (!l->addr)
		return 0;
	for (s = lhash(a) & l->mask; l->addr[s] && l->addr[s] != a; s = (s + 1) & l->mask)
		;
	if (!l->addr[s])
		return 0;
	b = l->bytes[s];
	l->addr[s] = 0;
	l->n--;
	for (j = (s + 1) & l->mask; l->addr[j]; j = (j + 1) & l->mask) {
		uint64_t ka = l->addr[j], kb = l->bytes[j];
		l->addr[j] = 0;
		l->n--;
		live_put(l, ka, kb);
	}
	return b;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct tm_growth {
	size_t npt, rising;
	uint64_t first, last, t_first, t_last;
	uint64_t peak;             /* largest allocated of the series in scope */
	uint64_t end;              /* allocated at the series' last sample */
	uint64_t base;             /* smallest allocated at a step point (weights, optimizer state) */
	int by_nvtx;               /* points are NVTX step ends, not the hook's step samples */
	/*
	 * Step numbers of the first and last points (the hook's step count,
	 * or the NVTX step's index), -1 when a point's step is not known: the
	 * points need not be consecutive steps (step samples are rate-limited,
	 * an NVTX step without a sample inside has no point).
	 */
	int64_t step_first, step_last;
	int counts;                /* live tensor counts known at the first and last points */
	int64_t live_first, live_last;
};

static int tm_growth_of(const struct az_ctx *c, uint32_t pid, uint32_t dev, double share,
			struct tm_growth *g);

void rule_memory(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double near = az_param(c, self, "near_full"), growth = az_param(c, self, "growth_share");
	struct live l = { NULL, NULL, 0, 0 };
	uint64_t cur = 0, peak = 0, peak_t = 0, cap = 0, start_live = 0, end_live = 0, *pt_t, *pt_v;
	uint32_t peak_dev = 0, peak_pid = 0;
	int from_metric = 0, have_records = 0, start_done = 0, end_done = 0, by_steps;
	size_t npt = 0, k = 0;
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64];

	if (!c->wall_ns)
		return;
	/* the points where live bytes are compared: NVTX step ends, else equal parts of the window */
	pt_t = xcalloc(c->nsteps_nvtx > GROWTH_POINTS ? c->nsteps_nvtx : GROWTH_POINTS, sizeof(*pt_t));
	pt_v = xcalloc(c->nsteps_nvtx > GROWTH_POINTS ? c->nsteps_nvtx : GROWTH_POINTS, sizeof(*pt_v));
	for (size_t i = 0; c->steps && i < c->nsteps_nvtx; i++)
		if (c->steps[i].end > c->lo && c->steps[i].end <= c->hi)
			pt_t[npt++] = c->steps[i].end;
	by_steps = npt >= GROWTH_MIN_POINTS;
	if (by_steps) {
		if (npt)
			qsort(pt_t, npt, sizeof(*pt_t), cmp_u64);
	} else {
		for (npt = 0; npt < GROWTH_POINTS; npt++)
			pt_t[npt] = c->lo + (uint64_t)((double)(c->hi - c->lo) * (double)(npt + 1) / GROWTH_POINTS);
	}
	/* allocation records of the first process/device that has them */
	for (size_t i = 0; i < m->memory.n; i++) {
		const struct trace_memory *x = &m->memory.v[i];
		if (x->mem_kind != MEM_DEVICE && x->mem_kind != MEM_UNKNOWN && x->mem_kind != MEM_MANAGED)
			continue;
		if (!peak_pid) {
			peak_pid = x->pid;
			peak_dev = x->device;
		}
		if (x->pid != peak_pid || x->device != peak_dev)
			continue;
		have_records = 1;
		/* live bytes at a point: after every record up to and including its time */
		while (k < npt && pt_t[k] < x->time)
			pt_v[k++] = cur;
		/* live at the window's start: before its first record; at its end: after its last */
		if (!start_done && x->time >= c->lo) {
			start_live = cur;
			start_done = 1;
		}
		if (!end_done && x->time > c->hi) {
			end_live = cur;
			end_done = 1;
		}
		if (x->op == TRACE_MEM_ALLOC) {
			cur += x->bytes;
			if (x->address)
				live_put(&l, x->address, x->bytes);
		} else if (x->op == TRACE_MEM_FREE) {
			uint64_t b = x->address ? live_take(&l, x->address) : 0;
			if (!b)
				b = x->bytes;
			cur = cur > b ? cur - b : 0;
		}
		if (cur > peak) {
			peak = cur;
			peak_t = x->time;
		}
	}
	while (k < npt)
		pt_v[k++] = cur;
	if (!start_done)
		start_live = cur;
	if (!end_done)
		end_live = cur;
	free(l.addr);
	free(l.bytes);
	if (!peak) { /* an NVML used-memory metric, in bytes or MiB by its name */
		for (size_t i = 0; i < m->metrics.n; i++) {
			const struct trace_metric *x = &m->metrics.v[i];
			const char *n = model_str(m, x->name_id);
			double v = x->value;
			if (!(strstr(n, "mem") || strstr(n, "fb")) || !strstr(n, "used") || !az_in_win(c, x->time))
				continue;
			if (strstr(n, "pct") || strstr(n, "percent") || strstr(n, "util"))
				continue;
			if (strstr(n, "mib") || strstr(n, "mb"))
				v *= 1048576.0;
			if (v > (double)peak && v < 1e18) {
				peak = (uint64_t)v;
				peak_t = x->time;
				peak_dev = x->device;
				peak_pid = 0;
				from_metric = 1;
			}
		}
	}
	if (!peak) {
		free(pt_t);
		free(pt_v);
		return;
	}
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == peak_dev && m->devices.v[i].global_mem)
			cap = m->devices.v[i].global_mem;
	for (size_t i = 0; !cap && i < m->metrics.n; i++) /* NVML's mem_total_bytes */
		if (m->metrics.v[i].device == peak_dev && strstr(model_str(m, m->metrics.v[i].name_id), "mem_total") &&
		    m->metrics.v[i].value > 0 && m->metrics.v[i].value < 1e18)
			cap = (uint64_t)m->metrics.v[i].value;
	if (cap && (double)peak >= near * (double)cap) {
		double share = az_div((double)peak, (double)cap);
		struct interval w = { peak_t, peak_t + 1 };
		strbuf_addf(&ev, "peak %s of %s device memory (%.1f%%) on device %u at %.6f s (%s)\n",
			    fmt_bytes(b1, sizeof(b1), (double)peak), fmt_bytes(b2, sizeof(b2), (double)cap), share * 100,
			    peak_dev, az_rel_s(c, peak_t), from_metric ? "NVML used-memory metric" : "allocation records");
		az_add(c, "memory-pressure", share >= 0.97 ? SEV_CRITICAL : SEV_WARNING, 0,
		       "Device memory is nearly full",
		       "not estimated: memory pressure costs time only when allocations fail and the allocator frees its "
		       "cache and retries, or the program runs out of memory",
		       ev.buf,
		       c->pytorch
		       ? "Leave headroom: smaller batch with gradient accumulation, activation checkpointing "
			 "(torch.utils.checkpoint), mixed precision, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against "
			 "fragmentation; torch.cuda.memory_summary() shows where memory goes"
		       : "Leave headroom: free buffers no longer needed, reuse buffers, process in smaller chunks",
		       &w, 1);
		strbuf_reset(&ev);
	}
	/*
	 * PyTorch's caching allocator keeps what it cudaMalloc'ed: the records
	 * show reserved memory, which grows while the cache warms up and never
	 * shrinks.  Where the allocator's own samples give enough points to
	 * compare (GROWTH_MIN_POINTS step samples, or samples inside as many
	 * NVTX steps), memory-leak compares allocated memory step by step
	 * instead.  Samples too sparse for that (a short run whose steps fall
	 * between the periodic samples) leave the records to judge: reserved
	 * memory that still grows at the end of every step of a warmed-up loop
	 * is allocated memory growing past each earlier peak.
	 */
	if (have_records) {
		struct tm_growth g;
		for (size_t i = 0; i < m->torch_mem.n; i++)
			if (m->torch_mem.v[i].pid == peak_pid) {
				tm_growth_of(c, peak_pid, peak_dev, growth, &g);
				have_records = g.npt < GROWTH_MIN_POINTS;
				break;
			}
	}
	if (!from_metric && have_records && npt >= GROWTH_MIN_POINTS) {
		size_t rising = 0;
		for (size_t i = 1; i < npt; i++)
			rising += pt_v[i] > pt_v[i - 1];
		if ((double)rising >= GROWTH_RISING * (double)(npt - 1) && pt_v[npt - 1] > pt_v[0] &&
		    (double)(pt_v[npt - 1] - pt_v[0]) >= growth * (double)peak &&
		    (double)end_live > BACK_TO_START * (double)start_live &&
		    (double)(end_live - start_live) >= growth * (double)peak) {
			struct interval w = { c->lo, c->hi };
			strbuf_addf(&ev, "live device memory grew from %s to %s, rising in %zu of %zu %s\n",
				    fmt_bytes(b1, sizeof(b1), (double)pt_v[0]),
				    fmt_bytes(b2, sizeof(b2), (double)pt_v[npt - 1]), rising, npt - 1,
				    by_steps ? "steps (live bytes at the end of each NVTX step)" :
				    "equal parts of the window (live bytes at the end of each)");
			strbuf_addf(&ev, "live at the window's start %s, at its end %s: not freed\n",
				    fmt_bytes(b1, sizeof(b1), (double)start_live),
				    fmt_bytes(b2, sizeof(b2), (double)end_live));
			az_add(c, "memory-pressure", SEV_WARNING, 0, "Device memory grows step after step",
			       "not estimated: growth costs time only once memory runs out",
			       ev.buf,
			       c->pytorch
			       ? "Look for tensors kept across steps: losses accumulated with their graph (use loss.item() or "
				 ".detach() every N steps), lists of outputs, caches keyed by shape; torch.cuda.memory._record_memory_history() "
				 "shows who allocates"
			       : "Look for allocations without a matching free in the loop",
			       &w, 1);
		}
	}
	free(pt_t);
	free(pt_v);
	strbuf_release(&ev);
}

/* ---- PyTorch's caching allocator (docs/memory.md) ---- */

/*
 * The allocator's own view: samples of torch.cuda.memory_stats() per
 * process and device (TRACE_EV_TORCH_MEM: the profile hook, or Kineto's
 * [memory] events) and its out-of-memory events (TRACE_EV_OOM).  These
 * rules use the whole run unless a window was asked for (--start/--end,
 * --nvtx): an OOM or a leak that happens after the last kernel still
 * matters.  None of them has a time gain: fragmentation, a leak or an OOM
 * cost memory and, in the end, the run; they say so and rank by severity
 * and evidence.
 */

static int tm_in_scope(const struct az_ctx *c, uint64_t t)
{
	if (!c->o || (!c->o->start && !c->o->end && !c->o->nvtx) || !c->wall_ns)
		return 1;
	return az_in_win(c, t);
}

/* Device capacity in bytes: an OOM's device_total, the device row, NVML's mem_total; 0 unknown. */
static uint64_t tm_capacity(const struct model *m, uint32_t pid, uint32_t dev)
{
	for (size_t i = 0; i < m->ooms.n; i++)
		if (m->ooms.v[i].pid == pid && m->ooms.v[i].device == dev &&
		    (m->ooms.v[i].flags & TRACE_OOM_HAS_DEVICE_FREE) && m->ooms.v[i].device_total)
			return m->ooms.v[i].device_total;
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == dev && m->devices.v[i].global_mem)
			return m->devices.v[i].global_mem;
	for (size_t i = 0; i < m->metrics.n; i++)
		if (m->metrics.v[i].device == dev && strstr(model_str(m, m->metrics.v[i].name_id), "mem_total") &&
		    m->metrics.v[i].value > 0 && m->metrics.v[i].value < 1e18)
			return (uint64_t)m->metrics.v[i].value;
	return 0;
}

struct tm_key {
	uint32_t pid, dev;
};

/* The (pid, device) series of m->torch_mem, in order of first sample; caller frees. */
static size_t tm_series(const struct model *m, struct tm_key **out)
{
	struct tm_key *v = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < m->torch_mem.n; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		size_t k;
		for (k = 0; k < n && (v[k].pid != x->pid || v[k].dev != x->device); k++)
			;
		if (k < n)
			continue;
		ALLOC_GROW(v, n + 1, alloc);
		v[n].pid = x->pid;
		v[n].dev = x->device;
		n++;
	}
	*out = v;
	return n;
}

/* Allocated bytes of one series compared at the same point of each step. */
static int64_t tm_live(const struct trace_torch_mem *x)
{
	return (int64_t)(x->alloc_count - x->free_count);
}

static void tm_point(struct tm_growth *g, const struct trace_torch_mem *x, uint64_t t, int64_t step)
{
	if (!g->npt) {
		g->step_first = step;
		g->first = x->allocated;
		g->t_first = t;
		g->base = x->allocated;
		g->counts = !!(x->flags & TRACE_TM_HAS_COUNTS);
		g->live_first = tm_live(x);
	} else {
		g->rising += x->allocated > g->last;
	}
	if (x->allocated < g->base)
		g->base = x->allocated;
	g->last = x->allocated;
	g->t_last = t;
	g->step_last = step;
	g->live_last = tm_live(x);
	g->counts &= !!(x->flags & TRACE_TM_HAS_COUNTS);
	g->npt++;
}

/*
 * tm_growth_of - fill @g for series (@pid, @dev): points are the hook's
 * step-boundary samples when there are GROWTH_MIN_POINTS of them, else the
 * last sample at or before each NVTX step's end (Kineto's [memory]
 * events).  Returns 1 when allocated memory grows step after step by the
 * memory-pressure growth test (rising in GROWTH_RISING of the changes, by
 * @share of the series' peak, and not back to BACK_TO_START of the first
 * point one step after the last point: every allocation freed by the loop's
 * end is no leak).
 */
static int tm_growth_of(const struct az_ctx *c, uint32_t pid, uint32_t dev, double share,
			struct tm_growth *g)
{
	const struct model *m = c->m;
	const struct trace_torch_mem *prev = NULL;
	size_t k = 0, nstep = 0;

	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < m->torch_mem.n; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		if (x->pid != pid || x->device != dev || !tm_in_scope(c, x->time))
			continue;
		nstep += x->kind == TRACE_TM_STEP;
		if (x->allocated > g->peak)
			g->peak = x->allocated;
	}
	if (nstep >= GROWTH_MIN_POINTS) {
		/*
		 * The first step boundary is warm-up: the first step allocates the
		 * gradients and the optimizer's state, which then stay.  It is left
		 * out when the other points are enough.
		 */
		int skip = nstep > GROWTH_MIN_POINTS;
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			if (x->pid != pid || x->device != dev || x->kind != TRACE_TM_STEP || !tm_in_scope(c, x->time))
				continue;
			if (skip) {
				skip = 0;
				continue;
			}
			tm_point(g, x, x->time, (x->flags & TRACE_TM_HAS_STEP) ? (int64_t)x->step : -1);
		}
	} else if (c->steps && c->nsteps_nvtx >= GROWTH_MIN_POINTS) {
		g->by_nvtx = 1;
		for (size_t s = 0; s < c->nsteps_nvtx; s++) {
			uint64_t e = c->steps[s].end;
			for (; k < m->torch_mem.n && m->torch_mem.v[k].time <= e; k++)
				if (m->torch_mem.v[k].pid == pid && m->torch_mem.v[k].device == dev)
					prev = &m->torch_mem.v[k];
			/* a sample inside this step: the state at its end */
			if (prev && prev->time >= c->steps[s].start)
				tm_point(g, prev, e, (int64_t)s);
		}
	}
	if (g->npt < GROWTH_MIN_POINTS)
		return 0;
	/*
	 * Frees counted at the loop's end: allocated at the last sample up to
	 * one step after the last point.  The sample at exit (kind peak) is
	 * left out: a program that ends frees everything then, leak or not.
	 */
	{
		uint64_t until = g->t_last + (g->t_last - g->t_first) / (g->npt - 1);
		g->end = g->last;
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			if (x->pid == pid && x->device == dev && x->kind != TRACE_TM_PEAK &&
			    x->time >= g->t_last && x->time <= until && tm_in_scope(c, x->time))
				g->end = x->allocated;
		}
	}
	return (double)g->rising >= GROWTH_RISING * (double)(g->npt - 1) && g->last > g->first &&
	       (double)(g->last - g->first) >= share * (double)g->peak &&
	       (double)g->end > BACK_TO_START * (double)g->first;
}

/* The first OOM of (pid, dev), or NULL. */
static const struct trace_oom *tm_oom_of(const struct az_ctx *c, uint32_t pid, uint32_t dev)
{
	for (size_t i = 0; i < c->m->ooms.n; i++)
		if (c->m->ooms.v[i].pid == pid && c->m->ooms.v[i].device == dev &&
		    !(c->m->ooms.v[i].flags & TRACE_OOM_PEAK) && tm_in_scope(c, c->m->ooms.v[i].time))
			return &c->m->ooms.v[i];
	return NULL;
}

/*
 * The highest peak snapshot of (pid, dev) in scope (TRACE_OOM_PEAK,
 * --torch-memory-history: the hook takes one at each new high of allocated
 * memory at least 10% above the last), or NULL.
 */
static const struct trace_oom *tm_peak_of(const struct az_ctx *c, uint32_t pid, uint32_t dev)
{
	const struct trace_oom *best = NULL;

	for (size_t i = 0; i < c->m->ooms.n; i++) {
		const struct trace_oom *x = &c->m->ooms.v[i];
		if (x->pid == pid && x->device == dev && (x->flags & TRACE_OOM_PEAK) &&
		    (x->flags & TRACE_OOM_HAS_STATS) && tm_in_scope(c, x->time) &&
		    (!best || x->allocated > best->allocated))
			best = x;
	}
	return best;
}

/*
 * Up to @max lines of @x's detail that name an allocation with its stack
 * ("BYTES allocated FILE:LINE:FUNC<..."), as evidence lines "  SIZE ...".
 * Returns how many were added.
 */
static int tm_add_stacks(struct strbuf *ev, const struct model *m, const struct trace_oom *x, int max)
{
	const char *d;
	int lines = 0;
	char b1[64];

	if (!x->detail_id || !(x->flags & TRACE_OOM_HAS_HISTORY))
		return 0;
	d = model_str(m, x->detail_id);
	for (const char *p = d; *p && lines < max;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > 8 && memchr(p, ':', len)) {
			char *end;
			double bytes = strtod(p, &end);
			size_t rest = len - (size_t)(end - p);
			strbuf_addf(ev, "  %s", fmt_bytes(b1, sizeof(b1), bytes));
			strbuf_add(ev, end, rest > 200 ? 200 : rest);
			strbuf_addch(ev, '\n');
			lines++;
		}
		p += len + (e ? 1 : 0);
	}
	return lines;
}

/* Evidence: what the highest peak snapshot of (pid, dev) holds, with stacks; nothing without one. */
static void tm_add_peak(struct strbuf *ev, const struct az_ctx *c, uint32_t pid, uint32_t dev)
{
	const struct trace_oom *p = tm_peak_of(c, pid, dev);
	struct strbuf sub = STRBUF_INIT;
	char b1[64];

	if (!p || !tm_add_stacks(&sub, c->m, p, 4)) {
		strbuf_release(&sub);
		return;
	}
	strbuf_addf(ev, "at the highest snapshot (%s allocated at %.6f s, --torch-memory-history) the largest live "
		    "allocations were:\n%s", fmt_bytes(b1, sizeof(b1), (double)p->allocated), az_rel_s(c, p->time),
		    sub.buf);
	strbuf_release(&sub);
}

/*
 * rule_oom - out-of-memory: the state at each device's first OOM and the
 * fix that fits it.  Fragmentation contributed when the cache held at
 * least the request in free bytes (reserved - allocated >= requested) and
 * yet no free block was as large (largest_free < requested, when the
 * snapshot said); a leak when allocated memory grew step after step
 * before it (the memory-leak test); one request of at least
 * big_request_share of the device is a batch-sized tensor; else the
 * memory is many moderate allocations alive at once, activations.
 */
void rule_oom(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double big = az_param(c, self, "big_request_share");
	double share = 0.1;
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64], b3[64], b4[64], b5[64];

	for (size_t r = 0; r < az_nrules; r++) /* the leak test's own threshold */
		if (!strcmp(az_rules[r].id, "memory-leak"))
			share = az_param(c, &az_rules[r], "growth_share");
	for (size_t i = 0; i < m->ooms.n; i++) {
		const struct trace_oom *x = &m->ooms.v[i];
		uint64_t cap, freec, count = 0;
		struct tm_growth g;
		struct interval w = { x->time, x->time + 1 };
		const char *fix, *title;
		int frag = 0, leak;

		if ((x->flags & TRACE_OOM_PEAK) || !tm_in_scope(c, x->time) || tm_oom_of(c, x->pid, x->device) != x)
			continue;
		for (size_t j = 0; j < m->ooms.n; j++)
			count += m->ooms.v[j].pid == x->pid && m->ooms.v[j].device == x->device &&
				 !(m->ooms.v[j].flags & TRACE_OOM_PEAK);
		cap = tm_capacity(m, x->pid, x->device);
		strbuf_reset(&ev);
		strbuf_addf(&ev, "device %u, pid %u: a request of %s failed at %.6f s", x->device, x->pid,
			    fmt_bytes(b1, sizeof(b1), (double)x->requested), az_rel_s(c, x->time));
		if (x->flags & TRACE_OOM_HAS_DEVICE_FREE)
			strbuf_addf(&ev, " with %s free of %s", fmt_bytes(b2, sizeof(b2), (double)x->device_free),
				    fmt_bytes(b3, sizeof(b3), (double)x->device_total));
		else if (cap)
			strbuf_addf(&ev, " (device capacity %s)", fmt_bytes(b3, sizeof(b3), (double)cap));
		if (count > 1)
			strbuf_addf(&ev, "; %" PRIu64 " out-of-memory events in all", count);
		strbuf_addch(&ev, '\n');
		if (x->flags & TRACE_OOM_HAS_STATS) {
			freec = x->reserved > x->allocated ? x->reserved - x->allocated : 0;
			strbuf_addf(&ev, "allocated %s, reserved %s%s%s: %s cached but not allocated (%.1f%% of reserved), "
				    "%s of it in split blocks\n",
				    fmt_bytes(b1, sizeof(b1), (double)x->allocated),
				    fmt_bytes(b2, sizeof(b2), (double)x->reserved),
				    cap ? " of " : "", cap ? fmt_bytes(b4, sizeof(b4), (double)cap) : "",
				    fmt_bytes(b3, sizeof(b3), (double)freec),
				    100.0 * az_div((double)freec, (double)x->reserved),
				    fmt_bytes(b5, sizeof(b5), (double)x->inactive_split));
			frag = freec >= x->requested &&
			       (!(x->flags & TRACE_OOM_HAS_BLOCKS) || x->largest_free < x->requested);
			if (frag)
				strbuf_addf(&ev, "fragmentation contributed: the cache held %s free, more than the request, "
					    "but its largest free block was %s\n",
					    fmt_bytes(b1, sizeof(b1), (double)freec),
					    (x->flags & TRACE_OOM_HAS_BLOCKS) ?
					    fmt_bytes(b2, sizeof(b2), (double)x->largest_free) : "not recorded");
		}
		if (x->nblocks) {
			strbuf_addstr(&ev, "largest allocations:");
			for (uint32_t k = 0; k < x->nblocks && k < TRACE_OOM_BLOCKS; k++)
				strbuf_addf(&ev, "%s %s", k ? "," : "", fmt_bytes(b1, sizeof(b1), (double)x->blocks[k]));
			strbuf_addch(&ev, '\n');
		}
		/* the allocations with their stacks (--torch-memory-history), first lines */
		tm_add_stacks(&ev, m, x, 4);
		leak = tm_growth_of(c, x->pid, x->device, share, &g);
		if (leak)
			strbuf_addf(&ev, "before it, allocated memory grew from %s to %s over %zu steps: a leak\n",
				    fmt_bytes(b1, sizeof(b1), (double)g.first), fmt_bytes(b2, sizeof(b2), (double)g.last),
				    g.npt);
		if (frag) {
			title = "Out of memory, with the cache fragmented";
			fix = "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch >= 2.1): segments then grow in "
			      "place, so freed pieces merge instead of staying split holes; or max_split_size_mb:N to stop "
			      "large blocks from being split";
		} else if (leak) {
			title = "Out of memory after memory grew step after step";
			fix = "Free references kept across steps: accumulate loss.item() or loss.detach(), not the loss with "
			      "its graph; clear lists of outputs; --torch-memory-history names who allocates";
		} else if (cap && (double)x->requested >= big * (double)cap) {
			title = "Out of memory on a batch-sized allocation";
			fix = "Use a smaller micro-batch with gradient accumulation (the same effective batch in several "
			      "passes); or mixed precision to halve activations";
		} else {
			title = "Out of memory: too much alive at once";
			fix = "Keep fewer activations alive: activation checkpointing (torch.utils.checkpoint) recomputes "
			      "them in the backward pass for about a third more compute; or a smaller micro-batch with "
			      "gradient accumulation";
		}
		az_add(c, "out-of-memory", SEV_CRITICAL, 0, title,
		       "no time gain: the run failed (or survived only by catching the error); severity and evidence "
		       "instead",
		       ev.buf, fix, &w, 1)->fatal = 1;
	}
	strbuf_release(&ev);
}

/*
 * rule_fragmentation - inactive-split bytes / reserved at or above
 * frag_share for at least sustained_share of the sampled time of a
 * series (each sample stands for the time to the next one).
 */
void rule_fragmentation(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double fs = az_param(c, self, "frag_share"), sus = az_param(c, self, "sustained_share");
	struct tm_key *keys;
	size_t nk = tm_series(m, &keys);
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64], b3[64];

	for (size_t s = 0; s < nk; s++) {
		const struct trace_torch_mem *prev = NULL, *first = NULL, *worst = NULL;
		uint64_t total = 0, high = 0, t_hi0 = 0, t_hi1 = 0;
		double worst_f = 0;
		size_t n = 0;
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			if (x->pid != keys[s].pid || x->device != keys[s].dev || !(x->flags & TRACE_TM_HAS_ACTIVE) ||
			    !tm_in_scope(c, x->time))
				continue;
			if (prev && x->time > prev->time) {
				double f = az_div((double)prev->inactive_split, (double)prev->reserved);
				total += x->time - prev->time;
				if (f >= fs) {
					high += x->time - prev->time;
					if (!t_hi0)
						t_hi0 = prev->time;
					t_hi1 = x->time;
				}
			}
			if (!first)
				first = x;
			if (az_div((double)x->inactive_split, (double)x->reserved) > worst_f) {
				worst_f = az_div((double)x->inactive_split, (double)x->reserved);
				worst = x;
			}
			prev = x;
			n++;
		}
		if (n < GROWTH_MIN_POINTS || !total || (double)high < sus * (double)total || !worst)
			continue;
		strbuf_reset(&ev);
		strbuf_addf(&ev, "device %u, pid %u: inactive split blocks were at least %.0f%% of reserved memory for "
			    "%.1f of %.1f s sampled (%.0f%%)\n",
			    keys[s].dev, keys[s].pid, fs * 100, (double)high / 1e9, (double)total / 1e9,
			    100.0 * (double)high / (double)total);
		strbuf_addf(&ev, "worst: %s of %s reserved in split free pieces (%.1f%%) at %.6f s, %s allocated\n",
			    fmt_bytes(b1, sizeof(b1), (double)worst->inactive_split),
			    fmt_bytes(b2, sizeof(b2), (double)worst->reserved), worst_f * 100, az_rel_s(c, worst->time),
			    fmt_bytes(b3, sizeof(b3), (double)worst->allocated));
		if ((first->flags & prev->flags & TRACE_TM_HAS_COUNTS))
			strbuf_addf(&ev, "allocation retries %u, OOMs %u, segments %u -> %u\n",
				    prev->retries - (first->retries <= prev->retries ? first->retries : prev->retries),
				    prev->ooms, first->segments, prev->segments);
		{
			struct interval w = { t_hi0, t_hi1 };
			int sev = (first->flags & prev->flags & TRACE_TM_HAS_COUNTS) &&
				  (prev->retries > first->retries || prev->ooms) ? SEV_CRITICAL : SEV_WARNING;
			az_add(c, "memory-fragmentation", sev, 0, "The caching allocator's memory is fragmented",
			       "no time gain: fragmentation costs memory (a larger request needs a new segment although "
			       "enough is free), then cudaMalloc retries that free the cache and synchronise, then an OOM",
			       ev.buf,
			       "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch >= 2.1): a segment grows in place "
			       "by mapping more pages, so freed pieces merge with new space instead of staying holes between "
			       "live blocks. Cost: growing maps pages (cuMemCreate/cuMemMap) instead of one cudaMalloc, a little "
			       "slower while the cache warms up, the same once it is steady. Also: allocate fixed-size buffers "
			       "once, or max_split_size_mb:N so large blocks are not split",
			       &w, 1);
		}
	}
	free(keys);
	strbuf_release(&ev);
}

/* rule_leak - allocated memory at the same point of each step growing step after step. */
void rule_leak(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double share = az_param(c, self, "growth_share"), horizon = az_param(c, self, "fatal_horizon_s");
	struct tm_key *keys;
	size_t nk = tm_series(m, &keys);
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64], b3[64];

	for (size_t s = 0; s < nk; s++) {
		struct tm_growth g;
		uint64_t cap = tm_capacity(m, keys[s].pid, keys[s].dev);
		double secs, rate, per_step, to_full = -1;
		const struct trace_oom *oom;
		struct finding *f;
		struct interval w;
		if (!tm_growth_of(c, keys[s].pid, keys[s].dev, share, &g))
			continue;
		secs = (double)(g.t_last - g.t_first) / 1e9;
		rate = az_div((double)(g.last - g.first), secs);
		/* per step, not per point: the points may lie several steps apart */
		per_step = (double)(g.last - g.first) /
			   (g.step_first >= 0 && g.step_last > g.step_first ? (double)(g.step_last - g.step_first) :
			    (double)(g.npt - 1));
		strbuf_reset(&ev);
		strbuf_addf(&ev, "device %u, pid %u: allocated memory %s of %zu steps", keys[s].dev, keys[s].pid,
			    g.by_nvtx ? "at the end of each" : "at the boundary of each", g.npt);
		if (g.step_first >= 0 && g.step_last > g.step_first)
			strbuf_addf(&ev, " (steps %" PRId64 " to %" PRId64 ")", g.step_first + g.by_nvtx,
				    g.step_last + g.by_nvtx);
		strbuf_addf(&ev, " grew from %s to %s, rising in %zu of %zu\n",
			    fmt_bytes(b1, sizeof(b1), (double)g.first), fmt_bytes(b2, sizeof(b2), (double)g.last),
			    g.rising, g.npt - 1);
		strbuf_addf(&ev, "rate %s per step, %s/s; at the last sample %s still allocated\n",
			    fmt_bytes(b1, sizeof(b1), per_step), fmt_bytes(b2, sizeof(b2), rate),
			    fmt_bytes(b3, sizeof(b3), (double)g.end));
		if (g.counts && g.live_last > g.live_first)
			strbuf_addf(&ev, "%" PRId64 " more tensors alive at the last step than at the first (allocations "
				    "minus frees)\n", g.live_last - g.live_first);
		if (cap && rate > 0 && cap > g.last) {
			to_full = (double)(cap - g.last) / rate;
			strbuf_addf(&ev, "at this rate the %s device is full in about %.0f s (%.0f more steps)\n",
				    fmt_bytes(b1, sizeof(b1), (double)cap), to_full, (double)(cap - g.last) / per_step);
		}
		/* who holds the growing memory: the highest snapshot's largest allocations */
		tm_add_peak(&ev, c, keys[s].pid, keys[s].dev);
		w.start = g.t_first;
		w.end = g.t_last;
		oom = tm_oom_of(c, keys[s].pid, keys[s].dev);
		f = az_add(c, "memory-leak", oom ? SEV_CRITICAL : SEV_WARNING, 0,
		       "Allocated memory grows step after step",
		       "no time gain: a leak costs memory until the run fails with an out-of-memory; the rate and the "
		       "projected time to it instead",
		       ev.buf,
		       "Look for tensors kept across steps: a loss accumulated with its graph (total += loss: use "
		       "loss.item() or loss.detach()), lists of outputs or of hidden states, caches keyed by shape; "
		       "gpuscope profile --torch-memory-history names the largest live allocations and their stacks "
		       "at the peak and at an OOM",
		       &w, 1);
		f->fatal = oom || (to_full >= 0 && to_full <= horizon);
	}
	free(keys);
	strbuf_release(&ev);
}

/* A finding of @id already made (the rules run in table order: memory-pressure before headroom). */
static int has_finding(const struct az_ctx *c, const char *id)
{
	for (size_t i = 0; i < c->r->n; i++)
		if (!strcmp(c->r->findings[i].id, id))
			return 1;
	return 0;
}

/*
 * rule_headroom - peak reserved memory under headroom_share of the device,
 * with no OOM, no leak and no memory-pressure finding: room to raise the batch.  The batch can grow
 * until reserved reaches target_share of the device; with step samples the
 * part that scales with the batch is the peak allocated minus the smallest
 * allocated at a step boundary (weights, gradients and optimizer state stay
 * when a step's activations are freed), else all of it (an upper bound).
 */
void rule_headroom(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double hs = az_param(c, self, "headroom_share"), target = az_param(c, self, "target_share");
	struct tm_key *keys;
	size_t nk = tm_series(m, &keys);
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64], b3[64];

	for (size_t s = 0; s < nk; s++) {
		uint64_t cap = tm_capacity(m, keys[s].pid, keys[s].dev), peak_res = 0, peak_alloc = 0;
		uint64_t t0 = 0, t1 = 0;
		struct tm_growth g;
		double k, scaled;
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			uint64_t r, a;
			if (x->pid != keys[s].pid || x->device != keys[s].dev || !tm_in_scope(c, x->time))
				continue;
			r = (x->flags & TRACE_TM_HAS_PEAKS) ? x->reserved_peak : x->reserved;
			a = (x->flags & TRACE_TM_HAS_PEAKS) ? x->allocated_peak : x->allocated;
			if (!(x->flags & TRACE_TM_HAS_RESERVED))
				r = a;
			if (r > peak_res)
				peak_res = r;
			if (a > peak_alloc)
				peak_alloc = a;
			if (!t0)
				t0 = x->time;
			t1 = x->time;
		}
		if (!cap || !peak_res || (double)peak_res >= hs * (double)cap || tm_oom_of(c, keys[s].pid, keys[s].dev))
			continue;
		if (tm_growth_of(c, keys[s].pid, keys[s].dev, 0.1, &g) || has_finding(c, "memory-pressure"))
			continue;          /* growing (or nearly full) memory is not headroom */
		scaled = g.npt >= GROWTH_MIN_POINTS && !g.by_nvtx && peak_alloc > g.base ?
			 (double)(peak_alloc - g.base) : (double)peak_alloc;
		k = 1.0 + az_div(target * (double)cap - (double)peak_res, scaled);
		strbuf_reset(&ev);
		strbuf_addf(&ev, "device %u, pid %u: peak reserved %s of %s (%.1f%%), peak allocated %s\n",
			    keys[s].dev, keys[s].pid, fmt_bytes(b1, sizeof(b1), (double)peak_res),
			    fmt_bytes(b2, sizeof(b2), (double)cap), 100.0 * (double)peak_res / (double)cap,
			    fmt_bytes(b3, sizeof(b3), (double)peak_alloc));
		if (scaled < (double)peak_alloc)
			strbuf_addf(&ev, "%s stays allocated between steps (weights, gradients, optimizer state); "
				    "%s comes and goes with each step\n", fmt_bytes(b1, sizeof(b1), (double)g.base),
				    fmt_bytes(b2, sizeof(b2), scaled));
		strbuf_addf(&ev, "room for a batch about %.1fx as large before reserved reaches %.0f%% of the device%s\n",
			    k, target * 100, scaled < (double)peak_alloc ? "" :
			    " (an upper bound: without step samples all allocated memory is taken to scale with the batch)");
		tm_add_peak(&ev, c, keys[s].pid, keys[s].dev);
		{
			struct interval w = { t0, t1 > t0 ? t1 : t0 + 1 };
			az_add(c, "memory-headroom", SEV_INFO, 0, "Device memory has room for a larger batch",
			       "no time gain by itself: a larger batch can use the GPU better (fewer, larger kernels and "
			       "steps); measure the step time after raising it",
			       ev.buf,
			       "Raise the batch size (scale the learning rate with it), or drop gradient accumulation or "
			       "activation checkpointing that this memory no longer needs",
			       &w, 1);
		}
	}
	free(keys);
	strbuf_release(&ev);
}
