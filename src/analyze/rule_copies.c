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
	uint64_t *unit_exposed;
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
	unit_exposed = xcalloc(2 * c->nunits + 2, sizeof(uint64_t));
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
				unit_exposed[2 * (size_t)(cache - c->units) + (size_t)d] += ex;
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
		double gain = az_div((double)c->cause[CAUSE_PAGEABLE].ns + pg_save, (double)c->unit_wall_ns);
		if (gain >= min_gain) {
			struct strbuf ev = STRBUF_INIT;
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
			az_add(c, "pageable-copy", az_severity(gain), gain,
			       "Copies from/to pageable host memory", 
			       "(idle time while the launching thread was inside pageable copy calls + sum over pageable copies "
			       "of their time not hidden by compute x (1 - bytes / pinned bandwidth / copy time)) / analysed GPU time",
			       ev.buf,
			       c->pytorch
			       ? "Pin the host side: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, "
				 "non_blocking=True); keep reusable pinned staging buffers for outputs copied back"
			       : "Allocate the host buffers pinned (cudaMallocHost/cudaHostAlloc, or cudaHostRegister existing ones) "
				 "and copy with cudaMemcpyAsync",
			       wpg, nwpg);
			strbuf_release(&ev);
		}
	}

	/* serial-copy */
	if (nser) {
		uint64_t hide = 0;
		double gain;
		for (size_t ui = 0; ui < c->nunits; ui++) {
			/*
			 * Pipelined, the step costs the slowest of compute and the copies;
			 * copies in opposite directions use separate engines and overlap each
			 * other by copies.duplex.
			 */
			double eh = (double)unit_exposed[2 * ui], ed = (double)unit_exposed[2 * ui + 1];
			double comp = (double)ivset_total(&c->units[ui].compute);
			double copy = (eh > ed ? eh : ed) + (1 - duplex) * (eh < ed ? eh : ed);
			double piped = copy > comp ? copy : comp, serial = eh + ed + comp;
			if (serial > piped)
				hide += (uint64_t)(serial - piped);
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
			       "sum over GPUs of (exposed upload + exposed download + compute - max(compute, max(up, down) + "
			       "(1 - copies.duplex) x min(up, down))) / analysed GPU time: pipelined in chunks on two streams a "
			       "step costs its slowest engine, copies in opposite directions overlapping each other by copies.duplex",
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
	free(unit_exposed);
	free(kstream);
}
