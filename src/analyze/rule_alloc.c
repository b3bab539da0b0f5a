/*
 * rule_alloc.c - allocation-churn: device memory allocated and freed in the
 * steady state (after the first step, or after the first
 * allocation-churn.warmup_share of the window without NVTX steps).
 *
 * cudaMalloc is slow (tens of us to ms) and cudaFree synchronises the
 * device, so a loop that allocates leaves the GPU idle.  The idle time
 * timeline.c attributed to allocation calls (inside them, or after a free
 * that drained the GPU) selects the finding; its gain is the replay's with
 * the allocations served from a cache: allocation and free calls cost
 * nothing and a free no longer waits for the GPU.
 */
#include "internal.h"

/* Replay hook: allocations served from a cache. */
static uint64_t cached_call(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			    uint32_t api_row, uint64_t dur, int *nodep)
{
	int cls = (int)c->api_class[c->m->api.v[api_row].name_id];

	(void)ctx;
	(void)rp;
	(void)node;
	if (cls != API_ALLOC && cls != API_FREE)
		return dur;
	*nodep = 1;
	return 0;
}

void rule_alloc(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint64_t steady, nalloc = 0, nfree = 0, api_ns = 0, nrow_alloc = 0, nrow_free = 0, bytes = 0;
	struct az_tally names = { 0 };
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	char b1[64], b2[64];
	double gain;
	int t;
	uint64_t saved = 0;
	struct finding *f;

	if (!c->wall_ns)
		return;
	steady = c->nsteps_nvtx >= 2 ? c->steps[0].end
		: c->lo + (uint64_t)((double)c->wall_ns * az_param(c, self, "warmup_share"));
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = c->api_class[a->name_id];
		uint64_t d;
		if ((cls != API_ALLOC && cls != API_FREE) || a->start < steady || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		d = a->end > a->start ? a->end - a->start : 0;
		if (cls == API_ALLOC)
			nalloc++;
		else
			nfree++;
		api_ns += d;
		az_tally_add(&names, a->name_id, d);
	}
	for (size_t i = 0; i < m->memory.n; i++) {
		const struct trace_memory *x = &m->memory.v[i];
		if (x->time < steady || !az_in_win(c, x->time))
			continue;
		if (x->op == TRACE_MEM_ALLOC) {
			nrow_alloc++;
			bytes += x->bytes;
		} else if (x->op == TRACE_MEM_FREE) {
			nrow_free++;
		}
	}
	if (nalloc + nfree < (uint64_t)az_param(c, self, "min_count") &&
	    nrow_alloc + nrow_free < (uint64_t)az_param(c, self, "min_count"))
		return;
	gain = az_div((double)c->cause[CAUSE_ALLOC].ns, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	{
		struct az_xform x = { 0 };
		x.what = "the allocations served from a cache";
		double g;
		x.causes = 1u << CAUSE_ALLOC;
		x.call = cached_call;
		if ((g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
	}
	if (gain < az_param(c, self, "min_gain"))
		return;
	strbuf_addf(&ev, "in the steady state (from %.6f s): %llu allocation and %llu free calls, %s inside them",
		    az_rel_s(c, steady), (unsigned long long)nalloc, (unsigned long long)nfree,
		    fmt_duration(b1, sizeof(b1), (double)api_ns));
	if (c->nsteps)
		strbuf_addf(&ev, "; %.1f per step", (double)(nalloc + nfree) / (double)c->nsteps);
	strbuf_addch(&ev, '\n');
	if (nrow_alloc + nrow_free)
		strbuf_addf(&ev, "allocation records: %llu allocations (%s), %llu frees\n",
			    (unsigned long long)nrow_alloc, fmt_bytes(b2, sizeof(b2), (double)bytes),
			    (unsigned long long)nrow_free);
	if ((t = az_tally_top(&names)) >= 0)
		strbuf_addf(&ev, "most time in %s (%s)\n", model_str(m, (uint32_t)names.key[t]),
			    fmt_duration(b1, sizeof(b1), (double)names.ns[t]));
	strbuf_addstr(&ev, "GPU idle because of them: ");
	az_describe_cause(c, CAUSE_ALLOC, &ev);
	strbuf_addch(&ev, '\n');
	{
		static const int cs[] = { CAUSE_ALLOC };
		az_steps_line(c, cs, 1, &ev);
	}
	for (int k = 0; k < 3; k++)
		if (c->cause[CAUSE_ALLOC].big[k].end > c->cause[CAUSE_ALLOC].big[k].start)
			where[nw++] = c->cause[CAUSE_ALLOC].big[k];
	f = az_add(c, "allocation-churn", az_severity(gain), gain,
	       "Device memory allocated and freed inside the loop",
	       "the replay's saving with the allocations served from a cache (allocation and free calls free of cost, "
	       "no free waiting for the GPU), divided by the analysed GPU time; without a graph, the GPU idle time while "
	       "the launching thread was inside allocation/free calls or right after a free that drained the GPU",
	       ev.buf,
	       c->pytorch
	       ? "PyTorch's caching allocator normally hides cudaMalloc/cudaFree: remove torch.cuda.empty_cache() from the "
		 "loop, unset PYTORCH_NO_CUDA_MEMORY_CACHING, avoid ever-changing tensor shapes (pad or bucket them), and "
		 "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation"
	       : "Allocate buffers once before the loop and reuse them, or use stream-ordered allocation "
		 "(cudaMallocAsync/cudaFreeAsync with a memory pool whose release threshold keeps memory cached)",
	       where, nw);
	az_replay_finding(c, f, "the allocations served from a cache", saved);
	strbuf_release(&ev);
}
