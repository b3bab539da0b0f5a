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
