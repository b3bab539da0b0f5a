/*
 * rule_memory.c - memory-pressure: device memory near capacity, or live
 * memory growing step over step.
 *
 * Live device memory is replayed from the allocation records (allocations
 * add their bytes, frees subtract the bytes of the matching allocation by
 * address); a used-memory metric (NVML) is used when there are no records.
 * No gain is estimated (0): pressure costs time only once the allocator
 * retries or the program fails, and the finding says so.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

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

void rule_memory(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double near = az_param(c, self, "near_full"), growth = az_param(c, self, "growth_share");
	struct live l = { NULL, NULL, 0, 0 };
	uint64_t cur = 0, peak = 0, peak_t = 0, cap = 0, samples[11] = { 0 };
	uint32_t peak_dev = 0, peak_pid = 0;
	int from_metric = 0, nsamp = 0;
	struct strbuf ev = STRBUF_INIT;
	char b1[64], b2[64];

	if (!c->wall_ns)
		return;
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
		/* live bytes at the end of each tenth of the window */
		while (nsamp < 10 && x->time >= c->lo + (uint64_t)((double)c->wall_ns * (nsamp + 1) / 10.0))
			samples[nsamp++] = cur;
	}
	while (l.addr && nsamp < 10)
		samples[nsamp++] = cur;
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
	if (!peak)
		return;
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
	if (!from_metric && nsamp >= 5) {
		int rising = 0;
		for (int i = 2; i < nsamp; i++)
			if (samples[i] > samples[i - 1])
				rising++;
		if (rising * 10 >= (nsamp - 2) * 8 && samples[nsamp - 1] > samples[1] &&
		    (double)(samples[nsamp - 1] - samples[1]) >= growth * (double)peak) {
			struct interval w = { c->lo, c->hi };
			strbuf_addf(&ev, "live device memory grew from %s to %s over the window (rising in %d of %d tenths)\n",
				    fmt_bytes(b1, sizeof(b1), (double)samples[1]),
				    fmt_bytes(b2, sizeof(b2), (double)samples[nsamp - 1]), rising, nsamp - 2);
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
	strbuf_release(&ev);
}
