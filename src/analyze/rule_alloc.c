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
 *
 * PyTorch's own view joins it (torch_view()): the caching allocator's
 * samples in the steady state say why a PyTorch program calls cudaMalloc
 * and cudaFree at all, and the fix follows that cause.
 */
#include "internal.h"

#include <string.h>

enum torch_cause { TC_NONE, TC_RETRIES, TC_EMPTIED, TC_NO_CACHE };

/*
 * torch_view - the allocator's samples of the first process and device in
 * the steady state, as evidence and a cause:
 *  - retries: num_alloc_retries rose: cudaMalloc failed, the allocator
 *    freed its cache and allocated again (memory near full);
 *  - no cache: reserved equal to allocated in every sample with anything
 *    allocated: the cache is off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), every
 *    tensor is its own cudaMalloc (and reserved falls with every free);
 *  - emptied: otherwise reserved memory fell between samples at least
 *    twice: only releasing the cache does that (torch.cuda.empty_cache();
 *    once can be a phase change).
 */
static enum torch_cause torch_view(const struct az_ctx *c, uint64_t steady, struct strbuf *ev)
{
	const struct model *m = c->m;
	const struct trace_torch_mem *first = NULL, *prev = NULL;
	size_t n = 0, falls = 0, equal = 0, with = 0;
	uint32_t pid = 0, dev = 0;
	char b1[64];

	for (size_t i = 0; i < m->torch_mem.n; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		if (x->time < steady || !az_in_win(c, x->time) || !(x->flags & TRACE_TM_HAS_RESERVED) ||
		    x->kind == TRACE_TM_PEAK)
			continue; /* the exit sample: everything freed then, cache or not */
		if (!first) {
			first = x;
			pid = x->pid;
			dev = x->device;
		}
		if (x->pid != pid || x->device != dev)
			continue;
		n++;
		if (prev && x->reserved < prev->reserved)
			falls++;
		if (x->allocated) {
			with++;
			equal += x->reserved == x->allocated;
		}
		prev = x;
	}
	if (n < 2)
		return TC_NONE;
	strbuf_addf(ev, "PyTorch's allocator (device %u, pid %u, %zu samples in the steady state): reserved %s at the "
		    "last", dev, pid, n, fmt_bytes(b1, sizeof(b1), (double)prev->reserved));
	if ((first->flags & prev->flags & TRACE_TM_HAS_COUNTS) && prev->retries > first->retries) {
		strbuf_addf(ev, "; %u allocation retries (cudaMalloc failed, the cache was freed and the allocation "
			    "retried)\n", prev->retries - first->retries);
		return TC_RETRIES;
	}
	/* before the falls: without a cache reserved falls with every free */
	if (with >= 2 && equal == with) {
		strbuf_addstr(ev, "; reserved equal to allocated in every sample: the cache is off "
			      "(PYTORCH_NO_CUDA_MEMORY_CACHING=1), every tensor is a cudaMalloc\n");
		return TC_NO_CACHE;
	}
	if (falls >= 2) {
		strbuf_addf(ev, "; reserved memory fell %zu times between samples: the cache was emptied and refilled "
			    "(torch.cuda.empty_cache())\n", falls);
		return TC_EMPTIED;
	}
	strbuf_addstr(ev, "; no retries, no emptied cache: the allocations are the program's own (cudaMalloc "
		      "outside PyTorch, or ever-changing tensor shapes)\n");
	return TC_NONE;
}

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
	enum torch_cause tc;
	const char *fix;

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
	tc = torch_view(c, steady, &ev);
	switch (tc) {
	case TC_RETRIES:
		fix = "The allocator runs out of cached memory and retries (freeing its cache, a synchronising "
		      "cudaFree, then cudaMalloc again): leave headroom (smaller micro-batch with gradient accumulation, "
		      "activation checkpointing) or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation";
		break;
	case TC_EMPTIED:
		fix = "Remove torch.cuda.empty_cache() from the loop: it hands the cache back to CUDA, so the next step "
		      "allocates it again with cudaMalloc (call it, if at all, once between phases)";
		break;
	case TC_NO_CACHE:
		fix = "Unset PYTORCH_NO_CUDA_MEMORY_CACHING: with the caching allocator off every tensor is a cudaMalloc "
		      "and a synchronising cudaFree";
		break;
	default:
		fix = c->pytorch
		      ? "PyTorch's caching allocator normally hides cudaMalloc/cudaFree: remove torch.cuda.empty_cache() "
			"from the loop, unset PYTORCH_NO_CUDA_MEMORY_CACHING, avoid ever-changing tensor shapes (pad or bucket "
			"them), and try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation"
		      : "Allocate buffers once before the loop and reuse them, or use stream-ordered allocation "
			"(cudaMallocAsync/cudaFreeAsync with a memory pool whose release threshold keeps memory cached)";
		break;
	}
	for (int k = 0; k < 3; k++)
		if (c->cause[CAUSE_ALLOC].big[k].end > c->cause[CAUSE_ALLOC].big[k].start)
			where[nw++] = c->cause[CAUSE_ALLOC].big[k];
	f = az_add(c, "allocation-churn", az_severity(gain), gain,
	       "Device memory allocated and freed inside the loop",
	       "the replay's saving with the allocations served from a cache (allocation and free calls free of cost, "
	       "no free waiting for the GPU), divided by the analysed GPU time; without a graph, the GPU idle time while "
	       "the launching thread was inside allocation/free calls or right after a free that drained the GPU",
	       ev.buf, fix, where, nw);
	az_replay_finding(c, f, "the allocations served from a cache", saved);
	strbuf_release(&ev);
}
