/*
 * rule_comm.c - exposed-communication: NCCL (communication) kernel time
 * that no compute kernel of the same GPU overlaps.
 *
 * Exposed communication is what HTA's comm/comp overlap leaves over:
 * |comm| - |comm ∩ compute| per GPU.  The gain is that time: overlapping
 * the collectives with independent compute, or removing the imbalance that
 * makes one rank wait in a collective for the others, removes at most it.
 */
#include "internal.h"

void rule_comm(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint64_t comm = 0, exposed = 0, ncomm = 0, umax = 0, umin = UINT64_MAX;
	struct az_tally names = { 0 };
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0, nunits = 0;
	char b1[64], b2[64], b3[64];
	double gain;
	int t;

	if (!c->has_gpu)
		return;
	for (size_t ui = 0; ui < c->nunits; ui++) {
		struct az_unit *u = &c->units[ui];
		uint64_t cm, ov, ex;
		if (!u->comm.n)
			continue;
		cm = ivset_total(&u->comm);
		ov = ivset_intersect_total(&u->comm, &u->compute);
		ex = cm > ov ? cm - ov : 0;
		comm += cm;
		exposed += ex;
		nunits++;
		if (cm > umax)
			umax = cm;
		if (cm < umin)
			umin = cm;
		/* the longest exposed collectives: windows to look at */
		for (size_t i = 0; i < u->comm.n; i++) {
			const struct interval *iv = &u->comm.v[i];
			size_t min = 0;
			if (nw < 3) {
				where[nw++] = *iv;
				continue;
			}
			for (size_t q = 1; q < 3; q++)
				if (where[q].end - where[q].start < where[min].end - where[min].start)
					min = q;
			if (iv->end - iv->start > where[min].end - where[min].start)
				where[min] = *iv;
		}
	}
	if (!nunits)
		return;
	gain = az_div((double)exposed, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		if (az_in_win(c, k->start) && az_is_comm(c, k)) {
			ncomm++;
			az_tally_add(&names, k->name_id, k->end > k->start ? k->end - k->start : 0);
		}
	}
	strbuf_addf(&ev, "%llu communication kernels on %zu GPU%s: %s, of which %s (%.0f%%) overlapped by compute "
		    "and %s exposed\n",
		    (unsigned long long)ncomm, nunits, nunits == 1 ? "" : "s",
		    fmt_duration(b1, sizeof(b1), (double)comm),
		    fmt_duration(b2, sizeof(b2), (double)(comm - exposed)),
		    az_div((double)(comm - exposed), (double)comm) * 100,
		    fmt_duration(b3, sizeof(b3), (double)exposed));
	if ((t = az_tally_top(&names)) >= 0)
		strbuf_addf(&ev, "most time in %s (%s)\n", model_str(m, (uint32_t)names.key[t]),
			    fmt_duration(b1, sizeof(b1), (double)names.ns[t]));
	if (nunits > 1 && umax > umin && (umax - umin) * 5 > umax)
		strbuf_addf(&ev, "communication time differs across GPUs (%s to %s): the GPUs with more wait in "
			    "collectives for slower ranks\n",
			    fmt_duration(b1, sizeof(b1), (double)umin), fmt_duration(b2, sizeof(b2), (double)umax));
	az_add(c, "exposed-communication", az_severity(gain), gain,
	       "Communication not overlapped with compute",
	       "sum over GPUs of (communication kernel time - its overlap with compute kernels) / analysed GPU time: "
	       "the time the GPUs only communicated or waited for peers",
	       ev.buf,
	       c->pytorch
	       ? "Overlap gradient communication with backward: DistributedDataParallel does it with buckets (tune "
		 "bucket_cap_mb, avoid find_unused_parameters=True, no host syncs between backward and optimizer); with FSDP "
		 "enable backward_prefetch/forward_prefetch; if one rank is slower (data, shapes, host work), balance it: "
		 "the others wait inside NCCL"
	       : "Run collectives on their own stream and overlap them with independent compute (chunk the buffers, "
		 "launch the all-reduce of chunk i while computing chunk i+1); balance work across ranks so none waits in NCCL",
	       where, nw);
	strbuf_release(&ev);
}
