/*
 * rule_sync.c - synchronization: blocking device/stream/event syncs and
 * synchronous copies that leave the GPU idle afterwards.
 *
 * A blocking call that returns as the GPU drains empties the queue: the CPU
 * could not run ahead, so the GPU waits for everything the CPU does next.
 * timeline.c charges such a gap to the synchronisation, up to the time the
 * thread spent blocked (that much host work could have been done ahead had
 * it not waited), carrying what is left of the blocked time over to the
 * dispatch gaps that follow.  The gain is that idle time.
 */
#include "internal.h"

#include <string.h>

void rule_sync(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint64_t item_bytes = (uint64_t)az_param(c, self, "item_bytes");
	struct az_tally calls = { 0 }, counts = { 0 };
	uint64_t nsync = 0, sync_ns = 0, ncopy_sync = 0, nitem = 0, nsyncrec = 0;
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain;
	char b1[64], b2[64];
	int t;

	if (!c->has_gpu)
		return;
	gain = az_div((double)c->cause[CAUSE_SYNC].ns, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = c->api_class[a->name_id];
		uint64_t d;
		if ((cls != API_SYNC && cls != API_COPY_SYNC) || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		d = a->end > a->start ? a->end - a->start : 0;
		nsync++;
		sync_ns += d;
		if (cls == API_COPY_SYNC)
			ncopy_sync++;
		az_tally_add(&calls, a->name_id, d);
		az_tally_add(&counts, a->name_id, 1);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		if (k->kind == COPY_DTOH && k->bytes <= item_bytes && az_in_win(c, k->start))
			nitem++;
	}
	for (size_t i = 0; i < m->syncs.n; i++)
		if (az_in_win(c, m->syncs.v[i].start))
			nsyncrec++;

	strbuf_addstr(&ev, "GPU idle after blocking calls: ");
	az_describe_cause(c, CAUSE_SYNC, &ev);
	strbuf_addch(&ev, '\n');
	if (nsync) {
		strbuf_addf(&ev, "%llu blocking calls in the window (%llu synchronous copies/sets), %s blocked in total",
			    (unsigned long long)nsync, (unsigned long long)ncopy_sync,
			    fmt_duration(b1, sizeof(b1), (double)sync_ns));
		if (c->nsteps)
			strbuf_addf(&ev, ", %.1f per step", (double)nsync / (double)c->nsteps);
		strbuf_addch(&ev, '\n');
	}
	if ((t = az_tally_top(&calls)) >= 0) {
		uint64_t n = 0;
		for (size_t i = 0; i < counts.n; i++)
			if (counts.key[i] == calls.key[t])
				n = counts.ns[i];
		strbuf_addf(&ev, "most time in %s: %llu calls, %s\n", model_str(m, (uint32_t)calls.key[t]),
			    (unsigned long long)n, fmt_duration(b2, sizeof(b2), (double)calls.ns[t]));
	}
	if (nitem)
		strbuf_addf(&ev, "%llu device-to-host copies of <= %llu bytes (scalar reads such as .item())\n",
			    (unsigned long long)nitem, (unsigned long long)item_bytes);
	if (nsyncrec)
		strbuf_addf(&ev, "%llu CUDA synchronisation records in the window\n", (unsigned long long)nsyncrec);
	for (int k = 0; k < 3; k++)
		if (c->cause[CAUSE_SYNC].big[k].end > c->cause[CAUSE_SYNC].big[k].start)
			where[nw++] = c->cause[CAUSE_SYNC].big[k];
	az_add(c, "synchronization", az_severity(gain), gain,
	       nitem ? "Host waits for the GPU (scalar reads / synchronisation) and the GPU then idles"
		     : "Blocking synchronisation empties the GPU queue",
	       "sum over idle gaps that begin as a blocking call (synchronise, synchronous copy) returns of min(gap, time the "
	       "thread was blocked in that call, carried over to the dispatch gaps that follow), divided by the analysed GPU "
	       "time: without the wait the CPU could have queued that much work ahead",
	       ev.buf,
	       c->pytorch
	       ? "Remove per-step host synchronisation: do not read GPU values every step (.item(), .cpu(), .tolist(), print, "
		 "Python if on a CUDA tensor; accumulate on the GPU and read every N steps), drop torch.cuda.synchronize() from "
		 "the loop, copy with non_blocking=True from pinned memory; torch.cuda.set_sync_debug_mode(\"warn\") finds hidden syncs"
	       : "Wait only where the host needs the result: replace cudaDeviceSynchronize/cudaStreamSynchronize in the loop by "
		 "events (cudaEventRecord + cudaStreamWaitEvent between streams, cudaEventSynchronize only before host use), and "
		 "use cudaMemcpyAsync from pinned memory instead of cudaMemcpy",
	       where, nw);
	strbuf_release(&ev);
}
