/*
 * rule_comm.c - exposed-communication: communication kernel time (every class
 * model/kernel_class.c knows: NCCL/RCCL, NVSHMEM, DeepEP, custom and
 * multimem all-reduce; the importers flag them TRACE_GPU_COMM)
 * that no compute kernel of the same GPU overlaps.
 *
 * Exposed communication is what HTA's comm/comp overlap leaves over:
 * |comm| - |comm ∩ compute| per GPU.  Two fixes remove it, and each saves
 * less than the exposed time:
 *  - waiting: a GPU whose collectives take longer than the fastest GPU's
 *    waits there for slower ranks.  That excess is the wait; balancing the
 *    ranks brings every rank to the mean compute, so the step gains the mean
 *    wait over the GPUs (sum of waits / GPUs).
 *  - transfer: the rest (the fastest GPU's communication time) is moving
 *    data, which overlapping hides behind compute.  But a communication
 *    kernel running beside compute keeps its blocks resident on some SMs
 *    (NCCL's blocks stay for the whole collective), and compute that runs
 *    at rate r beside it gets r x T of its work done while T of transfer
 *    is hidden: hiding T saves T x r.  The rate is the compute kernels'
 *    own (compute_rates()): their blocks fit in the SMs the collective
 *    leaves, in more waves or not.
 * Gain = (sum of waits + sum of exposed transfer x r) / analysed GPU time
 * (the sum over GPUs of their wall time).
 */
#include "internal.h"
#include "../model/kernel_class.h"
#include "../model/occupancy.h"
#include "../stats/stats_nccl.h"

#include <stdlib.h>
#include <string.h>

/* Collectives by kind (kernel_collective()), for the evidence and the fix. */
enum { CO_AR, CO_AG, CO_RS, CO_A2A, CO_SR, CO_BC, CO_RED, CO_OTHER, CO__N };
static const char *const co_names[CO__N] = {
	"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send/recv", "broadcast", "reduce", "other",
};

static int co_kind(const char *name)
{
	const char *k = kernel_collective(name);

	for (int i = 0; k && i < CO_OTHER; i++)
		if (!strcmp(co_names[i], k))
			return i;
	return CO_OTHER;
}

/*
 * Which wrapper the run used, from its CPU op and NVTX names (PyTorch's
 * DistributedDataParallel.forward, FullyShardedDataParallel.forward, FSDP::
 * ranges): 1 DDP, 2 FSDP (bits); and how many DDP forwards there were.
 */
static unsigned wrappers(const struct model *m, uint64_t *ddp_forwards)
{
	uint8_t *seen = xcalloc(m->str.nr + 1, 1);
	unsigned w = 0;

	*ddp_forwards = 0;
	for (size_t i = 0; i < m->nvtx.n; i++) {
		uint32_t id = m->nvtx.v[i].name_id;
		if (id >= m->str.nr)
			continue;
		if (!seen[id]) {
			const char *n = model_str(m, id);
			seen[id] = 1;
			if (strstr(n, "DistributedDataParallel"))
				seen[id] = strstr(n, "forward") ? 4 : 2;
			else if (strstr(n, "FullyShardedDataParallel") || !strncmp(n, "FSDP::", 6))
				seen[id] = 3;
		}
		if (seen[id] == 2 || seen[id] == 4)
			w |= 1;
		if (seen[id] == 4)
			(*ddp_forwards)++;
		if (seen[id] == 3)
			w |= 2;
	}
	free(seen);
	return w;
}

/*
 * compute_rates - the rate at which each unit's compute kernels of the
 * window run beside its collectives, which hold `held` of the GPU's SMs
 * (their time-weighted share x the SM count), time-weighted over those
 * kernels.  A launch of G blocks, B of which fit on one SM
 * (occupancy_compute()), runs in ceil(G / (B x SMs)) waves alone and in
 * ceil(G / (B x (SMs - held))) beside the collective; its rate there is the
 * ratio.  A persistent GEMM (one block per SM, as many blocks as SMs) thus
 * runs at half rate beside any collective, as the comm-wait zoo case
 * measured on the H200 (its fixed twin's GEMMs took 13% longer on average
 * with 85% of the all-reduce time overlapped), while a kernel small enough
 * for the SMs left is not slowed at all.  Where the occupancy is unknown
 * (no compute capability, no launch configuration) the rate is the share
 * of SMs left, 1 - held / SMs.  One pass over the kernels for every unit
 * (@share: each unit's time-weighted SM share of its collectives; @rate out).
 */
static void compute_rates(struct az_ctx *c, const double *share, double *rate)
{
	const struct model *m = c->m;
	double *w = xcalloc(c->nunits + 1, sizeof(*w)), *sum = xcalloc(c->nunits + 1, sizeof(*sum));
	uint32_t *sms = xcalloc(c->nunits + 1, sizeof(*sms)), *left = xcalloc(c->nunits + 1, sizeof(*left));
	const struct trace_device **dev = xcalloc(c->nunits + 1, sizeof(*dev));
	double *linear = xcalloc(c->nunits + 1, sizeof(*linear));

	for (size_t ui = 0; ui < c->nunits; ui++) {
		const struct az_unit *u = &c->units[ui];
		double held;
		sms[ui] = az_unit_sms(c, u->pid, u->device);
		dev[ui] = az_unit_device(c, u->pid, u->device);
		held = share[ui] * sms[ui];
		linear[ui] = sms[ui] && held < sms[ui] ? 1 - held / sms[ui] : sms[ui] ? 0 : 1;
		left[ui] = held >= sms[ui] ? 0 : sms[ui] - (uint32_t)(held + 0.5);
	}
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		struct occ_result o;
		const struct az_unit *u;
		size_t ui;
		uint64_t g, cap, alone, beside;
		double dur, r;
		if (k->end <= k->start || !az_in_win(c, k->start) || az_is_comm(c, k) ||
		    !(u = az_unit_find(c, k->pid, k->device)))
			continue;
		ui = (size_t)(u - c->units);
		if (!u->comm.n || !sms[ui] || !dev[ui])
			continue; /* no collective here, or the linear share stands */
		dur = (double)(k->end - k->start);
		r = linear[ui];
		g = az_kernel_blocks(k);
		if (g && !occupancy_compute(dev[ui]->cc_major, dev[ui]->cc_minor,
					    k->block[0] * (k->block[1] ? k->block[1] : 1) * (k->block[2] ? k->block[2] : 1),
					    k->registers, k->static_smem + k->dynamic_smem, &o) && o.blocks_per_sm) {
			cap = (uint64_t)o.blocks_per_sm;
			alone = (g + cap * sms[ui] - 1) / (cap * sms[ui]);
			beside = left[ui] ? (g + cap * left[ui] - 1) / (cap * left[ui]) : 0;
			r = beside ? (double)alone / (double)beside : 0;
		}
		sum[ui] += dur * r;
		w[ui] += dur;
	}
	for (size_t ui = 0; ui < c->nunits; ui++)
		rate[ui] = w[ui] > 0 ? sum[ui] / w[ui] : linear[ui];
	free(w);
	free(sum);
	free(sms);
	free(left);
	free(dev);
	free(linear);
}

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
	double *share_ns, *comm_ns, *rate, saved = 0;
	uint64_t co_ns[CO__N] = { 0 }, co_exp[CO__N] = { 0 }, co_n[CO__N] = { 0 }, waits = 0, ddp_fw = 0;
	unsigned wrap;
	int top_co = -1;
	/* message sizes where the trace has them (stats_nccl.h): bytes, bytes x busbw factor, their kernels' time */
	struct nccl_msgs msgs;
	size_t mi = 0;
	double co_bytes[CO__N] = { 0 }, co_bus[CO__N] = { 0 };
	uint64_t co_szns[CO__N] = { 0 }, co_sized[CO__N] = { 0 }, sized = 0;

	if (!c->has_gpu)
		return;
	/* per GPU: the SM share its communication kernels hold, time-weighted; the top names */
	share_ns = xcalloc(c->nunits ? c->nunits : 1, sizeof(*share_ns));
	comm_ns = xcalloc(c->nunits ? c->nunits : 1, sizeof(*comm_ns));
	nccl_msgs_build(m, &msgs);
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		struct az_unit *u;
		double dur, blocks, f = 0;
		uint32_t sms;
		if (!az_in_win(c, k->start) || !az_is_comm(c, k))
			continue;
		ncomm++;
		az_tally_add(&names, k->name_id, k->end > k->start ? k->end - k->start : 0);
		if (k->end <= k->start || !(u = az_unit_find(c, k->pid, k->device)))
			continue;
		{
			int co = co_kind(model_str(m, k->name_id));
			uint64_t d = k->end - k->start, ov = ivset_overlap(&u->compute, k->start, k->end);
			const struct nccl_msg *x = NULL;
			while (mi < msgs.n && msgs.v[mi].kernel < i)
				mi++;
			if (mi < msgs.n && msgs.v[mi].kernel == i)
				x = &msgs.v[mi];
			if (x && x->coll && co == CO_OTHER)
				for (int q = 0; q < CO_OTHER; q++) /* a generic kernel name ("ncclDevKernel_Generic"): the traced collective */
					if (!strcmp(co_names[q], x->coll))
						co = q;
			if (x && x->bytes) {
				double fct = nccl_bus_factor(x->coll, x->group);
				co_bytes[co] += (double)x->bytes;
				co_bus[co] += fct > 0 ? (double)x->bytes * fct : 0;
				co_szns[co] += d;
				co_sized[co]++;
				sized++;
			}
			co_ns[co] += d;
			co_exp[co] += d > ov ? d - ov : 0;
			co_n[co]++;
		}
		dur = (double)(k->end - k->start);
		blocks = (double)az_kernel_blocks(k);
		if ((sms = az_unit_sms(c, k->pid, k->device)))
			f = blocks / sms < 1 ? blocks / sms : 1;
		share_ns[u - c->units] += dur * f;
		comm_ns[u - c->units] += dur;
	}
	/* the rate compute keeps beside each unit's collectives */
	rate = xcalloc(c->nunits ? c->nunits : 1, sizeof(*rate));
	for (size_t ui = 0; ui < c->nunits; ui++)
		share_ns[ui] = comm_ns[ui] > 0 ? share_ns[ui] / comm_ns[ui] : 0; /* now the share itself */
	compute_rates(c, share_ns, rate);
	for (size_t ui = 0; ui < c->nunits; ui++) {
		struct az_unit *u = &c->units[ui];
		uint64_t cm;
		if (!u->comm.n)
			continue;
		cm = ivset_total(&u->comm);
		if (cm > umax)
			umax = cm;
		if (cm < umin)
			umin = cm;
	}
	for (size_t ui = 0; ui < c->nunits; ui++) {
		struct az_unit *u = &c->units[ui];
		uint64_t cm, ov, ex, wait;
		if (!u->comm.n)
			continue;
		cm = ivset_total(&u->comm);
		ov = ivset_intersect_total(&u->comm, &u->compute);
		ex = cm > ov ? cm - ov : 0;
		wait = cm - umin < ex ? cm - umin : ex;
		saved += (double)wait + (double)(ex - wait) * rate[ui];
		waits += wait;
		comm += cm;
		exposed += ex;
		nunits++;
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
	free(share_ns);
	free(comm_ns);
	free(rate);
	nccl_msgs_release(&msgs);
	if (!nunits)
		return;
	gain = az_div(saved, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
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
	{
		int first = 1;
		for (int co = 0; co < CO__N; co++) {
			int best = -1;
			for (int q = 0; q < CO__N; q++)
				if (co_n[q] && (best < 0 || co_exp[q] > co_exp[best]))
					best = q;
			if (best < 0)
				break;
			if (top_co < 0)
				top_co = best;
			strbuf_addf(&ev, "%s%s %s exposed of %s (%llu kernels", first ? "by collective: " : ", ",
				    co_names[best], fmt_duration(b1, sizeof(b1), (double)co_exp[best]),
				    fmt_duration(b2, sizeof(b2), (double)co_ns[best]), (unsigned long long)co_n[best]);
			/* bytes per ns are GB/s; busbw as nccl-tests defines it (stats_nccl.h) */
			if (co_sized[best] && co_szns[best]) {
				strbuf_addf(&ev, "; %s moved", fmt_bytes(b1, sizeof(b1), co_bytes[best]));
				if (co_sized[best] < co_n[best])
					strbuf_addf(&ev, " by the %llu with sizes", (unsigned long long)co_sized[best]);
				strbuf_addf(&ev, ", algbw %.2f GB/s", co_bytes[best] / (double)co_szns[best]);
				if (co_bus[best] > 0)
					strbuf_addf(&ev, ", busbw %.2f GB/s", co_bus[best] / (double)co_szns[best]);
			}
			strbuf_addch(&ev, ')');
			first = 0;
			co_n[best] = 0;
		}
		if (!first)
			strbuf_addstr(&ev, sized ? "\n" : " (message sizes are not recorded: no bus bandwidth)\n");
	}
	if (nunits > 1 && umax > umin && (umax - umin) * 5 > umax)
		strbuf_addf(&ev, "communication time differs across GPUs (%s to %s): the GPUs with more wait in "
			    "collectives for slower ranks\n",
			    fmt_duration(b1, sizeof(b1), (double)umin), fmt_duration(b2, sizeof(b2), (double)umax));
	wrap = c->pytorch ? wrappers(m, &ddp_fw) : 0;
	{
		/* the fix the evidence supports */
		struct strbuf rec = STRBUF_INIT;
		if (waits * 2 > exposed)
			strbuf_addstr(&rec, "Most of it is waiting for slower ranks (see the straggler finding and the per-rank "
				      "table): balance the ranks first; tuning the collectives does not shorten a wait. ");
		if ((wrap & 1) && top_co == CO_AR) {
			strbuf_addstr(&rec, "DistributedDataParallel: overlap the gradient all-reduces with backward: tune "
				      "bucket_cap_mb (fewer, larger buckets start as soon as they fill), "
				      "gradient_as_bucket_view=True (no copy into the buckets), static_graph=True (buckets "
				      "ready in a known order), avoid find_unused_parameters=True and host syncs between "
				      "backward and the optimizer");
			if (co_ns[CO_BC])
				strbuf_addstr(&rec, "; broadcast_buffers=False when the buffers need no sync (a broadcast "
					      "ran before forward)");
			if (c->nsteps_nvtx && ddp_fw > c->nsteps_nvtx)
				strbuf_addstr(&rec, "; several forwards per step (gradient accumulation): run all but the "
					      "last micro-step under model.no_sync()");
		} else if ((wrap & 2) && (top_co == CO_AG || top_co == CO_RS)) {
			strbuf_addstr(&rec, "FSDP: prefetch the next all-gather (forward_prefetch=True, "
				      "backward_prefetch=BackwardPrefetch.BACKWARD_PRE) so it overlaps compute; "
				      "limit_all_gathers=True keeps the prefetch from growing memory");
		} else if (c->pytorch) {
			strbuf_addstr(&rec, "Overlap communication with compute: DistributedDataParallel buckets its "
				      "all-reduces behind backward (bucket_cap_mb), FSDP prefetches its all-gathers "
				      "(backward_prefetch/forward_prefetch); run other collectives on their own stream "
				      "beside independent compute");
		} else {
			strbuf_addstr(&rec, "Run collectives on their own stream and overlap them with independent compute "
				      "(chunk the buffers, launch the all-reduce of chunk i while computing chunk i+1); "
				      "balance work across ranks so none waits in NCCL");
		}
		az_add(c, "exposed-communication", az_severity(gain), gain,
	       "Communication not overlapped with compute",
	       "sum over GPUs of (time waiting in collectives beyond the fastest GPU's communication time + the rest of "
	       "the exposed communication x the rate compute keeps beside it, from the waves its blocks need in the SMs "
	       "the collectives leave) / analysed GPU time: balancing ranks "
	       "removes the waits, overlapping hides the transfers but slows compute by the SMs they hold",
	       ev.buf, rec.buf, where, nw);
		strbuf_release(&rec);
	}
	strbuf_release(&ev);
}
