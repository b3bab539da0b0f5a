/*
 * rule_copies.c - copies between host and device: pageable-copy,
 * serial-copy and small-copies.
 *
 *  - pageable-copy: copies from/to pageable host memory are staged through a
 *    driver buffer, run at a fraction of the pinned bandwidth and block the
 *    CPU.  Gain: the idle time while the launching thread was inside such a
 *    copy call, plus each copy's GPU time not hidden by compute times
 *    (1 - its time at the pinned bandwidth / its time).
 *  - serial-copy: pinned copies of at least copies.min_copy_bytes that no
 *    kernel of the same GPU overlaps (copy and compute serialised, often on
 *    one stream).  Gain: min(exposed copy time, compute time) per GPU: a
 *    copy stream can hide a copy behind at most the compute it runs beside.
 *  - small-copies: many copies under copies.small_bytes.  Gain: their
 *    exposed time minus the time their bytes take at the large-copy
 *    bandwidth (what one batched copy would cost).
 *  - copy-bound: a GPU whose busy time is mostly host<->device copies
 *    with no kernel beside them (copies.copy_bound_share), most bytes
 *    pinned (pageable ones are pageable-copy's: pinning is the first fix).  Gain: the replay's, with the copies' data
 *    kept resident on the device (the copies gone); the replays with the
 *    copies at the pinned bandwidth and overlapped with compute are given
 *    beside it.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct dir_bw {
	uint64_t bytes, ns;
};

static double gbps(const struct dir_bw *b)
{
	return az_div((double)b->bytes, (double)b->ns); /* bytes per ns = GB/s */
}

/*
 * Pinned host<->device bandwidth when the report has no pinned copy to
 * measure: what PCIe achieves for the GPU generation (Hopper and later sit
 * on PCIe 5 x16: ~50 GB/s in practice; earlier ones on PCIe 4 x16 or older:
 * ~25 GB/s).
 */
static double assumed_gbps(const struct az_ctx *c)
{
	uint32_t cc = 0;

	for (size_t i = 0; i < c->m->devices.n; i++)
		if (c->m->devices.v[i].cc_major > cc)
			cc = c->m->devices.v[i].cc_major;
	return cc >= 9 ? 50.0 : 25.0;
}

static int host_dir(unsigned kind)
{
	return kind == COPY_HTOD ? 0 : kind == COPY_DTOH ? 1 : -1;
}

static uint64_t exposed_of(struct az_ctx *c, const struct trace_memcpy *k, struct az_unit **cache)
{
	uint64_t d = k->end > k->start ? k->end - k->start : 0, hid;
	struct az_unit *u = *cache;

	if (!u || u->pid != k->pid || u->device != k->device)
		u = *cache = az_unit_find(c, k->pid, k->device);
	if (!u || !d)
		return d;
	hid = ivset_overlap(&u->compute, k->start, k->end) + ivset_overlap(&u->comm, k->start, k->end);
	return hid >= d ? 0 : d - hid;
}

/* @out = @a ∩ @b (both normalised). */
static void intersect(struct interval_set *out, const struct interval_set *a, const struct interval_set *b)
{
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		uint64_t st = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
		uint64_t en = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;
		if (en > st)
			ivset_add(out, st, en);
		if (a->v[i].end < b->v[j].end)
			i++;
		else
			j++;
	}
	out->normal = 1;
}

static void top3(struct interval w[3], size_t *n, uint64_t a, uint64_t b)
{
	size_t min = 0;

	if (*n < 3) {
		w[(*n)++] = (struct interval){ a, b };
		return;
	}
	for (size_t q = 1; q < 3; q++)
		if (w[q].end - w[q].start < w[min].end - w[min].start)
			min = q;
	if (b - a > w[min].end - w[min].start)
		w[min] = (struct interval){ a, b };
}

/* Replay hooks: host<->device copies removed (data resident), or at the pinned bandwidth. */
struct copy_xf {
	const struct model *m;
	double pinned_gbps;        /* 0: remove them */
};

static uint64_t copy_op(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op, int kind,
			uint32_t row, uint64_t dur)
{
	const struct copy_xf *x = ctx;
	const struct trace_memcpy *k;

	(void)c;
	(void)rp;
	(void)op;
	if (kind != 1)
		return dur;
	k = &x->m->memcpys.v[row];
	if (host_dir(k->kind) < 0)
		return dur;
	if (!x->pinned_gbps)
		return 0;
	{
		uint64_t at = (uint64_t)((double)k->bytes / x->pinned_gbps);
		return at < dur ? at : dur;
	}
}

/* Replay hooks for pageable-copy: pageable copies at the pinned bandwidth of their direction, no staging. */
struct pin_xf {
	const struct model *m;
	double gbps[2];
	uint64_t lat;              /* engine.launch_latency_us */
};

static int pageable_row(const struct model *m, uint32_t row)
{
	const struct trace_memcpy *k = &m->memcpys.v[row];

	return host_dir(k->kind) >= 0 && (k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE);
}

static uint64_t pin_op(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op, int kind,
		       uint32_t row, uint64_t dur)
{
	const struct pin_xf *x = ctx;
	const struct trace_memcpy *k;
	uint64_t at;

	(void)c;
	(void)rp;
	(void)op;
	if (kind != 1 || !pageable_row(x->m, row))
		return dur;
	k = &x->m->memcpys.v[row];
	at = (uint64_t)((double)k->bytes / x->gbps[host_dir(k->kind)]);
	return at < dur ? at : dur;
}

static uint64_t pin_latency(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op,
			    uint64_t lat)
{
	const struct pin_xf *x = ctx;
	int kind;
	uint32_t row;

	(void)c;
	if (az_replay_op_row(rp, op, &kind, &row) < 0 || kind != 1 || !pageable_row(x->m, row))
		return lat;
	return lat < x->lat ? lat : x->lat; /* staging through the driver's buffer is gone */
}

static void copy_bound(struct az_ctx *c, const struct az_rule *self, double pinned_gbps)
{
	const struct model *m = c->m;
	uint64_t copy_ns = 0, busy_ns = 0, kern_ns = 0, alone_ns = 0, bytes = 0, n = 0, npg = 0, pg_bytes = 0;
	uint64_t saved = 0, saved_pin = 0;
	struct strbuf ev = STRBUF_INIT;
	struct copy_xf xf = { m, 0 };
	struct az_xform x = { 0 };
	struct finding *f;
	double share, gain, g_pin = -1;
	char b1[64], b2[64], b3[64];

	for (size_t u = 0; u < c->nunits; u++) {
		struct az_unit *un = &c->units[u];
		struct interval_set k = { 0 }, none = { 0 };
		uint64_t cn, kn;
		if (!un->has_work)
			continue;
		cn = ivset_total(&un->copy);
		kn = ivset_total(&un->compute) + ivset_total(&un->comm);
		copy_ns += cn;
		kern_ns += kn;
		busy_ns += un->busy_ns;
		/* copy time with no kernel beside it: busy time less kernel time */
		az_merge3(&k, &un->compute, &un->comm, &none);
		alone_ns += un->busy_ns > ivset_total(&k) ? un->busy_ns - ivset_total(&k) : 0;
		ivset_release(&k);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		if (host_dir(k->kind) < 0 || !az_in_win(c, k->start))
			continue;
		n++;
		bytes += k->bytes;
		if (k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE) {
			npg++;
			pg_bytes += k->bytes;
		}
	}
	/* copies that already run beside compute are a pipeline at the copy engine's pace, not this finding */
	share = az_div((double)alone_ns, (double)busy_ns);
	if (!n || share < az_param(c, self, "copy_bound_share"))
		return;
	/* mostly pageable: pinned memory is the first fix, and pageable-copy's finding (one cause, one finding) */
	if (pg_bytes * 2 >= bytes)
		return;
	x.ctx = &xf;
	x.op = copy_op;
	gain = az_replay_gain(c, &x, &saved);
	if (gain < 0) /* no graph: the copies' time that no kernel overlaps */
		gain = az_div((double)(busy_ns > kern_ns ? busy_ns - kern_ns : 0), (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	xf.pinned_gbps = pinned_gbps;
	g_pin = az_replay_gain(c, &x, &saved_pin);
	strbuf_addf(&ev, "copies with no kernel beside them take %.0f%% of the GPU's busy time: %s of copies, %s of "
		    "kernels, over %s analysed\n", share * 100, fmt_duration(b1, sizeof(b1), (double)copy_ns), fmt_duration(b2, sizeof(b2), (double)kern_ns),
		    fmt_duration(b3, sizeof(b3), (double)c->unit_wall_ns));
	strbuf_addf(&ev, "%llu host<->device copies, %s (%.1f GB/s over their GPU time), %llu from/to pageable memory\n",
		    (unsigned long long)n, fmt_bytes(b1, sizeof(b1), (double)bytes),
		    az_div((double)bytes, (double)copy_ns), (unsigned long long)npg);
	if (g_pin >= 0)
		strbuf_addf(&ev, "replayed with every copy at %.1f GB/s (pinned, this run or copies.pinned_gbps): %.1f%% "
			    "shorter; with the data resident on the device: %.1f%% shorter\n",
			    pinned_gbps, g_pin * 100, gain * 100);
	f = az_add(c, "copy-bound", az_severity(gain), gain,
		   "Copy-bound: the GPU is busy mostly moving data between host and device",
		   "the replay's saving with the host<->device copies gone (their data kept resident on the GPU), "
		   "divided by the analysed GPU time; without API records, the copies' time that no kernel overlaps",
		   ev.buf,
		   c->pytorch
		   ? "Keep the data on the GPU: move the model and reused tensors to the device once (no CPU offload of "
		     "parameters or activations when memory allows: FSDP/DeepSpeed offload_params=False, no .cpu() round trips); "
		     "where it must stream, use pinned memory and prefetch the next chunk on a side stream so copies overlap compute"
		   : "Keep the data resident on the device between kernels instead of copying it back and forth; where it must "
		     "stream, use pinned host memory and cudaMemcpyAsync on a copy stream overlapped with compute",
		   NULL, 0);
	az_replay_finding(c, f, "the host<->device copies' data kept resident on the GPU", saved);
	strbuf_release(&ev);
}

void rule_copies(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double min_gain = az_param(c, self, "min_gain");
	double duplex = az_param(c, self, "duplex");
	double set_gbps = az_param(c, self, "pinned_gbps");
	uint64_t small = (uint64_t)az_param(c, self, "small_bytes");
	uint64_t big = (uint64_t)az_param(c, self, "min_copy_bytes");
	struct dir_bw pinned[2] = { { 0, 0 }, { 0, 0 } }, large[2] = { { 0, 0 }, { 0, 0 } };
	struct dir_bw pg[2] = { { 0, 0 }, { 0, 0 } };
	uint64_t npg[2] = { 0, 0 }, pg_exposed = 0, nsmall = 0, small_exposed = 0, small_bytes = 0;
	uint64_t nser = 0, ser_ns = 0, ser_exposed = 0, ser_bytes = 0, same_stream = 0;
	double pg_save = 0, small_bw_ns = 0, bw[2];
	struct interval wpg[3], wser[3], wsm[3];
	size_t nwpg = 0, nwser = 0, nwsm = 0;
	struct az_unit *cache = NULL;
	struct interval_set *big_sets;  /* per unit: big pinned uploads, downloads */
	uint32_t *kstream;
	char b1[64], b2[64], b3[64], b4[64];

	if (!c->has_gpu || !m->memcpys.n)
		return;
	if (duplex > 1)
		duplex = 1;
	/* bandwidths measured in this report */
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		int d = host_dir(k->kind);
		uint64_t ns = k->end > k->start ? k->end - k->start : 0;
		int pageable = k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE;
		if (d < 0 || !az_in_win(c, k->start) || !ns)
			continue;
		if (k->bytes >= small) {
			large[d].bytes += k->bytes;
			large[d].ns += ns;
			if (!pageable && (k->src_kind == MEM_PINNED || k->dst_kind == MEM_PINNED)) {
				pinned[d].bytes += k->bytes;
				pinned[d].ns += ns;
			}
		}
	}
	for (int d = 0; d < 2; d++) {
		bw[d] = set_gbps > 0 ? set_gbps : pinned[d].ns ? gbps(&pinned[d]) : assumed_gbps(c);
		if (bw[d] <= 0)
			bw[d] = 25.0;
	}
	big_sets = xcalloc(2 * c->nunits + 2, sizeof(*big_sets));
	kstream = xcalloc(c->nunits + 1, sizeof(uint32_t));
	{
		/* the stream with the most kernel time of each GPU */
		struct az_tally *t = xcalloc(c->nunits + 1, sizeof(*t));
		struct az_unit *u = NULL;
		for (size_t i = 0; i < m->kernels.n; i++) {
			const struct trace_kernel *k = &m->kernels.v[i];
			if (!u || u->pid != k->pid || u->device != k->device)
				u = az_unit_find(c, k->pid, k->device);
			if (u && az_in_win(c, k->start))
				az_tally_add(&t[u - c->units], k->stream, k->end > k->start ? k->end - k->start : 0);
		}
		for (size_t ui = 0; ui < c->nunits; ui++) {
			int top = az_tally_top(&t[ui]);
			kstream[ui] = top >= 0 ? (uint32_t)t[ui].key[top] : UINT32_MAX;
		}
		free(t);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		int d = host_dir(k->kind);
		uint64_t ns = k->end > k->start ? k->end - k->start : 0, ex;
		int pageable = k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE;
		if (d < 0 || !az_in_win(c, k->start))
			continue;
		ex = exposed_of(c, k, &cache);
		if (pageable) {
			double at_pinned = (double)k->bytes / bw[d];
			npg[d]++;
			pg[d].bytes += k->bytes;
			pg[d].ns += ns;
			pg_exposed += ex;
			if (ns && at_pinned < (double)ns)
				pg_save += (double)ex * (1 - at_pinned / (double)ns);
			top3(wpg, &nwpg, k->start, k->end > k->start ? k->end : k->start + 1);
		} else if (k->bytes >= big) {
			nser++;
			ser_ns += ns;
			ser_bytes += k->bytes;
			ser_exposed += ex;
			if (cache)
				ivset_add(&big_sets[2 * (size_t)(cache - c->units) + (size_t)d], k->start, k->end);
			if (ex)
				top3(wser, &nwser, k->start, k->end);
			if (cache && k->stream == kstream[cache - c->units])
				same_stream++;
		}
		if (k->bytes < small) {
			nsmall++;
			small_bytes += k->bytes;
			small_exposed += ex;
			small_bw_ns += (double)k->bytes / (large[d].ns ? gbps(&large[d]) : bw[d]);
			top3(wsm, &nwsm, k->start, k->end > k->start ? k->end : k->start + 1);
		}
	}

	/* pageable-copy */
	if (npg[0] + npg[1]) {
		double gain = az_div((double)c->cause[CAUSE_PAGEABLE].ns + pg_save, (double)c->unit_wall_ns), g;
		uint64_t saved = 0;
		struct pin_xf px = { m, { bw[0], bw[1] }, (uint64_t)(az_engine_param(c, "launch_latency_us") * 1e3) };
		struct az_xform x = { 0 };
		x.causes = 1u << CAUSE_PAGEABLE;
		x.ctx = &px;
		x.op = pin_op;
		x.latency = pin_latency;
		if (gain >= min_gain && (g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
		if (gain >= min_gain) {
			struct strbuf ev = STRBUF_INIT;
			struct finding *f;
			for (int d = 0; d < 2; d++)
				if (npg[d])
					strbuf_addf(&ev, "%llu %s copies from/to pageable memory: %s in %s, %.2f GB/s "
						    "(pinned: %.2f GB/s, %s)\n",
						    (unsigned long long)npg[d], d ? "DtoH" : "HtoD",
						    fmt_bytes(b1, sizeof(b1), (double)pg[d].bytes),
						    fmt_duration(b2, sizeof(b2), (double)pg[d].ns), gbps(&pg[d]), bw[d],
						    set_gbps > 0 ? "set by copies.pinned_gbps"
						    : pinned[d].ns ? "measured on this report's pinned copies" : "assumed");
			strbuf_addf(&ev, "not hidden by compute: %s; GPU idle while the CPU staged them: %s\n",
				    fmt_duration(b1, sizeof(b1), (double)pg_exposed),
				    fmt_duration(b2, sizeof(b2), (double)c->cause[CAUSE_PAGEABLE].ns));
			if (c->cause[CAUSE_PAGEABLE].ns) {
				az_describe_cause(c, CAUSE_PAGEABLE, &ev);
				strbuf_addch(&ev, '\n');
			}
			f = az_add(c, "pageable-copy", az_severity(gain), gain,
			       "Copies from/to pageable host memory",
			       "the replay's saving with every pageable copy at the pinned bandwidth and no staging before it, "
			       "divided by the analysed GPU time; without a graph, (idle time while the launching thread was inside "
			       "pageable copy calls + sum over pageable copies of their time not hidden by compute x (1 - bytes / "
			       "pinned bandwidth / copy time)) / analysed GPU time",
			       ev.buf,
			       c->pytorch
			       ? "Pin the host side: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, "
				 "non_blocking=True); keep reusable pinned staging buffers for outputs copied back"
			       : "Allocate the host buffers pinned (cudaMallocHost/cudaHostAlloc, or cudaHostRegister existing ones) "
				 "and copy with cudaMemcpyAsync",
			       wpg, nwpg);
			az_replay_finding(c, f, "the pageable copies at the pinned bandwidth, without staging", saved);
			strbuf_release(&ev);
		}
	}

	/* serial-copy */
	if (nser) {
		uint64_t hide = 0;
		double gain;
		for (size_t ui = 0; ui < c->nunits; ui++) {
			/*
			 * Pipelined in chunks on two streams, a step costs its slowest
			 * engine: compute, or the copies, an upload and a download
			 * overlapping each other by copies.duplex.  The saving is how far
			 * the GPU's busy time is above that bound, and at most the copy time
			 * that now runs alone (beside no kernel and no opposite copy).
			 */
			struct interval_set *H = &big_sets[2 * ui], *D = &big_sets[2 * ui + 1];
			struct interval_set *C = &c->units[ui].compute, hd = { 0 }, hnd = { 0 }, none = { 0 };
			double h, dd, comp, copy, bound, busy, alone, chd;
			ivset_normalize(H);
			ivset_normalize(D);
			h = (double)ivset_total(H);
			dd = (double)ivset_total(D);
			if (!h && !dd)
				continue;
			/* small sets only: the compute set is scanned, never copied */
			comp = (double)ivset_total(C);
			az_merge3(&hd, H, D, &none);
			intersect(&hnd, H, D);
			chd = (double)ivset_intersect_total(C, &hd);
			busy = comp + (double)ivset_total(&hd) - chd;
			alone = (double)ivset_total(&hd) - chd -
				((double)ivset_total(&hnd) - (double)ivset_intersect_total(C, &hnd));
			copy = (h > dd ? h : dd) + (1 - duplex) * (h < dd ? h : dd);
			bound = copy > comp ? copy : comp;
			if (busy > bound && alone > 0)
				hide += (uint64_t)(busy - bound < alone ? busy - bound : alone);
			ivset_release(&hd);
			ivset_release(&hnd);
		}
		gain = az_div((double)hide, (double)c->unit_wall_ns);
		if (gain >= min_gain) {
			struct strbuf ev = STRBUF_INIT;
			strbuf_addf(&ev, "%llu host<->device copies of >= %s (%s, %s of GPU time); %s of it (%.0f%%) with no kernel "
				    "running beside it\n",
				    (unsigned long long)nser, fmt_bytes(b1, sizeof(b1), (double)big),
				    fmt_bytes(b2, sizeof(b2), (double)ser_bytes), fmt_duration(b3, sizeof(b3), (double)ser_ns),
				    fmt_duration(b4, sizeof(b4), (double)ser_exposed), az_div((double)ser_exposed, (double)ser_ns) * 100);
			if (same_stream)
				strbuf_addf(&ev, "%llu of them on the stream that runs most kernels of their GPU: copy and "
					    "compute are serialised by stream order\n", (unsigned long long)same_stream);
			az_add(c, "serial-copy", az_severity(gain), gain, "Copies not overlapped with compute",
			       "sum over GPUs of min(busy time - max(compute, max(up, down) + (1 - copies.duplex) x min(up, down)), "
			       "copy time beside no kernel and no opposite copy) / analysed GPU time: pipelined in chunks on two "
			       "streams a step costs its slowest engine",
			       ev.buf,
			       c->pytorch
			       ? "Overlap copies with compute: copy the next batch on a side stream (with torch.cuda.stream(s): "
				 "x.to(device, non_blocking=True) from pinned memory, then torch.cuda.current_stream().wait_stream(s)), "
				 "or let a prefetching loader do it; record_stream() the tensors used across streams"
			       : "Pipeline: split the data in chunks, issue cudaMemcpyAsync of chunk i+1 on a copy stream while kernels "
				 "of chunk i run on a compute stream (pinned host memory, events between the streams)",
			       wser, nwser);
			strbuf_release(&ev);
		}
	}

	/* small-copies */
	if (nsmall >= (uint64_t)az_param(c, self, "min_small_count")) {
		double save = (double)small_exposed - small_bw_ns;
		double gain = az_div(save > 0 ? save : 0, (double)c->unit_wall_ns);
		if (gain >= min_gain) {
			struct strbuf ev = STRBUF_INIT;
			strbuf_addf(&ev, "%llu copies under %s (%s in total), %s not hidden by compute",
				    (unsigned long long)nsmall, fmt_bytes(b1, sizeof(b1), (double)small),
				    fmt_bytes(b2, sizeof(b2), (double)small_bytes),
				    fmt_duration(b3, sizeof(b3), (double)small_exposed));
			if (c->nsteps)
				strbuf_addf(&ev, ", %.1f per step", (double)nsmall / (double)c->nsteps);
			strbuf_addch(&ev, '\n');
			az_add(c, "small-copies", az_severity(gain), gain, "Many small copies",
			       "(time of the small copies not hidden by compute - their bytes at the large-copy bandwidth) / "
			       "analysed GPU time: one batched copy costs its bytes at full bandwidth",
			       ev.buf,
			       c->pytorch
			       ? "Batch small transfers: stack tensors (torch.cat/stack) or keep values on the GPU instead of copying "
				 "scalars back and forth; build index/parameter tensors once on the device"
			       : "Batch small transfers into one buffer and one cudaMemcpyAsync, or keep the data on the device",
			       wsm, nwsm);
			strbuf_release(&ev);
		}
	}
	copy_bound(c, self, bw[0] > 0 ? bw[0] : assumed_gbps(c));
	for (size_t i = 0; i < 2 * c->nunits + 2; i++)
		ivset_release(&big_sets[i]);
	free(big_sets);
	free(kstream);
}
