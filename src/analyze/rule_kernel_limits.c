/*
 * rule_kernel_limits.c - what limits the hot kernels themselves: where
 * each sits against the GPU's compute and memory peaks (a speed-of-light
 * placement, as Nsight Compute's GPU Speed Of Light section makes it), and
 * its theoretical occupancy with the resource that limits it.
 *
 * A hot kernel is a kernel name with at least kernel-limits.min_share of
 * the analysed GPU busy time.  With hardware counters (profile
 * --kernel-metrics) each hot kernel that has them is placed:
 *  - memory-bound: DRAM throughput >= sol_pct of peak and above the SM's;
 *  - compute-bound: SM throughput >= sol_pct and above DRAM's;
 *  - latency-bound: both under sol_pct: neither unit is busy, the warps
 *    wait (on memory latency, barriers, dependent instructions).
 * Findings:
 *  - latency-bound-kernel: the latency-bound hot kernels.  Gain = sum over
 *    them of their time x (1 - busiest unit / sol_pct) / analysed GPU time:
 *    the time saved if each reached the threshold where one of its units
 *    becomes the limit; an upper bound of what tuning the kernel gives.
 *  - kernel-bound (info, no gain): the placement of every hot kernel with
 *    counters, achieved DRAM bandwidth against the datasheet's, the
 *    theoretical occupancy and its limiter; memory-bound kernels gain only
 *    by moving fewer bytes (fusion, lower precision), compute-bound ones by
 *    faster units (tensor cores: tensor-cores-unused says when).
 *  - occupancy-limited (info, no gain): without counters, hot kernels whose
 *    theoretical occupancy is under occ_low_pct because of registers or
 *    shared memory; GEMM, convolution and attention kernels are left out
 *    (their libraries choose few large blocks on purpose).  The counters
 *    decide whether it matters, so the finding asks for them.
 */
#include "internal.h"
#include "model/kernel_class.h"
#include "model/occupancy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOT_MAX 8

enum { PL_NONE, PL_MEMORY, PL_COMPUTE, PL_LATENCY };

struct hot {
	uint32_t name_id;
	uint64_t ns, n;
	/* the launch configuration of the first launch in the window */
	uint32_t threads, regs, smem, cc_major, cc_minor;
	struct occ_result occ;
	int has_occ;
	/* counter means over the profiled instances; NAN when absent */
	double sm, dram, achieved, dram_bytes, dur_ns, stall_val;
	uint32_t stall_key;
	int place;
};

/* Names of the keys this rule reads (profile --kernel-metrics, collect/kmetrics.c). */
enum { K_SM, K_DRAM, K_ACH, K_RD, K_WR, K_DUR, K__N };
static const char *const key_names[K__N] = {
	"sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct",
	"dram_read_bytes", "dram_write_bytes", "duration_ns",
};

static int cmp_ns(const void *pa, const void *pb)
{
	const struct hot *a = pa, *b = pb;
	return (a->ns < b->ns) - (a->ns > b->ns);
}

/* The hot kernels of the window, largest first; returns how many (<= HOT_MAX). */
static size_t find_hot(struct az_ctx *c, double min_share, struct hot *out)
{
	const struct model *m = c->m;
	uint64_t *ns = xcalloc(m->str.nr + 1, sizeof(*ns));
	size_t n = 0;

	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		if (!az_in_win(c, k->start) || k->name_id >= m->str.nr || az_is_comm(c, k))
			continue;
		ns[k->name_id] += k->end > k->start ? k->end - k->start : 0;
	}
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		struct hot *h = NULL;
		if (!az_in_win(c, k->start) || k->name_id >= m->str.nr || !ns[k->name_id] ||
		    az_div((double)ns[k->name_id], (double)c->busy_ns) < min_share)
			continue;
		for (size_t j = 0; j < n && !h; j++)
			if (out[j].name_id == k->name_id)
				h = &out[j];
		if (!h) {
			const struct trace_device *d = az_unit_device(c, k->pid, k->device);
			if (n == HOT_MAX * 4)
				continue;
			h = &out[n++];
			*h = (struct hot){ .name_id = k->name_id, .ns = ns[k->name_id] };
			h->threads = k->block[0] * (k->block[1] ? k->block[1] : 1) * (k->block[2] ? k->block[2] : 1);
			h->regs = k->registers;
			h->smem = k->static_smem + k->dynamic_smem;
			if (d) {
				h->cc_major = d->cc_major;
				h->cc_minor = d->cc_minor;
				h->has_occ = !occupancy_compute(d->cc_major, d->cc_minor, h->threads, h->regs, h->smem,
								&h->occ);
			}
		}
		h->n++;
	}
	free(ns);
	qsort(out, n, sizeof(*out), cmp_ns);
	return n < HOT_MAX ? n : HOT_MAX;
}

/* Mean counter values of each hot kernel's profiled instances. */
static void read_counters(const struct az_ctx *c, struct hot *hot, size_t n)
{
	const struct model *m = c->m;
	uint32_t keys[K__N];
	int found = 0;

	for (int k = 0; k < K__N; k++)
		keys[k] = UINT32_MAX;
	for (size_t i = 0; i < m->kmetrics.n; i++) {
		uint32_t id = m->kmetrics.v[i].key_id;
		for (int k = 0; k < K__N; k++)
			if (keys[k] == UINT32_MAX && !strcmp(model_str(m, id), key_names[k])) {
				keys[k] = id;
				found = 1;
			}
	}
	for (size_t h = 0; h < n; h++) {
		double sum[K__N] = { 0 }, cnt[K__N] = { 0 };
		double stall[64] = { 0 };
		uint32_t stall_id[64];
		size_t nstall = 0;
		for (size_t i = 0; found && i < m->kmetrics.n; i++) {
			const struct trace_kmetric *x = &m->kmetrics.v[i];
			if (x->kernel_id != hot[h].name_id || !(x->flags & TRACE_KM_VALID) || !isfinite(x->value))
				continue;
			for (int k = 0; k < K__N; k++)
				if (x->key_id == keys[k]) {
					sum[k] += x->value;
					cnt[k]++;
				}
			if (!strncmp(model_str(m, x->key_id), "stall_", 6)) {
				size_t j = 0;
				while (j < nstall && stall_id[j] != x->key_id)
					j++;
				if (j == nstall && nstall < 64)
					stall_id[nstall++] = x->key_id;
				if (j < nstall)
					stall[j] += x->value;
			}
		}
		hot[h].sm = cnt[K_SM] ? sum[K_SM] / cnt[K_SM] : NAN;
		hot[h].dram = cnt[K_DRAM] ? sum[K_DRAM] / cnt[K_DRAM] : NAN;
		hot[h].achieved = cnt[K_ACH] ? sum[K_ACH] / cnt[K_ACH] : NAN;
		hot[h].dram_bytes = cnt[K_RD] && cnt[K_WR] ? sum[K_RD] / cnt[K_RD] + sum[K_WR] / cnt[K_WR] : NAN;
		hot[h].dur_ns = cnt[K_DUR] ? sum[K_DUR] / cnt[K_DUR] : NAN;
		hot[h].stall_key = UINT32_MAX;
		for (size_t j = 0; j < nstall; j++)
			if (hot[h].stall_key == UINT32_MAX || stall[j] > hot[h].stall_val) {
				hot[h].stall_key = stall_id[j];
				hot[h].stall_val = stall[j];
			}
	}
}

static int place(const struct hot *h, double sol)
{
	if (!isfinite(h->sm) || !isfinite(h->dram))
		return PL_NONE;
	if (h->sm < sol && h->dram < sol)
		return PL_LATENCY;
	return h->dram >= h->sm ? PL_MEMORY : PL_COMPUTE;
}

static const char *place_name(int p)
{
	return p == PL_MEMORY ? "memory-bound" : p == PL_COMPUTE ? "compute-bound" : p == PL_LATENCY ? "latency-bound" : "-";
}

static void occ_text(struct strbuf *sb, const struct hot *h)
{
	if (!h->has_occ) {
		strbuf_addstr(sb, "theoretical occupancy unknown (compute capability not in the table or no launch configuration)");
		return;
	}
	strbuf_addf(sb, "theoretical occupancy %.0f%% (%u blocks of %u threads per SM, %u registers/thread, %u B shared",
		    h->occ.pct, h->occ.blocks_per_sm, h->threads, h->regs, h->smem);
	if (h->occ.limit != OCC_LIMIT_NONE)
		strbuf_addf(sb, "; limited by %s", occupancy_limit_name(h->occ.limit));
	strbuf_addch(sb, ')');
}

/* What to change for a latency-bound kernel, from its limiter and its top stall reason. */
static void latency_fix(struct strbuf *sb, const struct az_ctx *c, const struct hot *h)
{
	const char *stall = h->stall_key != UINT32_MAX ? model_str(c->m, h->stall_key) : "";

	if (h->has_occ && h->occ.limit == OCC_LIMIT_REGISTERS)
		strbuf_addf(sb, "registers limit it to %.0f%% occupancy: cap them (__launch_bounds__(%u, %u) or "
			    "-maxrregcount) so more blocks fit; ", h->occ.pct, h->threads, h->occ.blocks_per_sm + 1);
	else if (h->has_occ && h->occ.limit == OCC_LIMIT_SMEM)
		strbuf_addf(sb, "shared memory limits it to %.0f%% occupancy: smaller tiles or fewer pipeline stages "
			    "let more blocks fit; ", h->occ.pct);
	else if (h->has_occ && (h->occ.limit == OCC_LIMIT_BLOCKS || h->occ.limit == OCC_LIMIT_THREADS) &&
		 h->occ.pct < 50)
		strbuf_addf(sb, "blocks of %u threads fill only %.0f%% of the warp slots: use larger blocks; ",
			    h->threads, h->occ.pct);
	if (!strcmp(stall, "stall_long_scoreboard"))
		strbuf_addstr(sb, "warps wait mostly on global memory loads: more independent loads in flight per "
			      "thread (unrolling, vector loads, cp.async prefetch into shared memory)");
	else if (!strcmp(stall, "stall_barrier"))
		strbuf_addstr(sb, "warps wait mostly at barriers: fewer __syncthreads(), balanced work per warp");
	else if (!strcmp(stall, "stall_short_scoreboard") || !strcmp(stall, "stall_mio_throttle"))
		strbuf_addstr(sb, "warps wait mostly on shared memory: avoid bank conflicts, fewer shared-memory round trips");
	else if (!strcmp(stall, "stall_wait") || !strcmp(stall, "stall_math_pipe_throttle"))
		strbuf_addstr(sb, "warps wait on dependent instructions: more independent work per thread (ILP)");
	else
		strbuf_addstr(sb, "profile with --kernel-metrics=full for the warp stall reasons");
}

void rule_kernel_limits(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double sol = az_param(c, self, "sol_pct"), occ_low = az_param(c, self, "occ_low_pct");
	struct hot hot[HOT_MAX * 4];
	size_t n, ncounted = 0, nlat = 0, nocc = 0;
	double lat_ns = 0;
	struct strbuf ev = STRBUF_INIT, lat = STRBUF_INIT, occ = STRBUF_INIT, fix = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	char name[AZ_NAME_MAX + 1], b1[64];

	if (!c->has_gpu || !c->busy_ns)
		return;
	n = find_hot(c, az_param(c, self, "min_share"), hot);
	if (!n)
		return;
	if (m->kmetrics.n)
		read_counters(c, hot, n);
	for (size_t i = 0; i < n; i++) {
		struct hot *h = &hot[i];
		h->place = m->kmetrics.n ? place(h, sol) : PL_NONE;
		kernel_label(name, sizeof(name), model_str(m, h->name_id), AZ_NAME_MAX);
		if (h->place != PL_NONE) {
			ncounted++;
			strbuf_addf(&ev, "%s: %s (%.0f%% of GPU busy time): SM %.1f%%, DRAM %.1f%% of peak", name,
				    place_name(h->place), az_div((double)h->ns, (double)c->busy_ns) * 100, h->sm, h->dram);
			if (isfinite(h->achieved))
				strbuf_addf(&ev, ", achieved occupancy %.0f%%", h->achieved);
			if (isfinite(h->dram_bytes) && isfinite(h->dur_ns) && h->dur_ns > 0)
				strbuf_addf(&ev, ", DRAM %.0f GB/s", h->dram_bytes / h->dur_ns);
			strbuf_addstr(&ev, "; ");
			occ_text(&ev, h);
			strbuf_addch(&ev, '\n');
		}
		if (h->place == PL_LATENCY) {
			double busiest = h->sm > h->dram ? h->sm : h->dram;
			lat_ns += (double)h->ns * (1 - busiest / sol);
			nlat++;
			strbuf_addf(&lat, "%s: %s in %llu launches (%.0f%% of GPU busy time); SM %.1f%% and DRAM %.1f%% "
				    "of peak, both under %g%%", name, fmt_duration(b1, sizeof(b1), (double)h->ns),
				    (unsigned long long)h->n, az_div((double)h->ns, (double)c->busy_ns) * 100, h->sm,
				    h->dram, sol);
			if (isfinite(h->achieved))
				strbuf_addf(&lat, "; achieved occupancy %.0f%%", h->achieved);
			if (h->stall_key != UINT32_MAX)
				strbuf_addf(&lat, "; top stall %s (%.2f)", model_str(m, h->stall_key) + 6, h->stall_val);
			strbuf_addstr(&lat, "; ");
			occ_text(&lat, h);
			strbuf_addch(&lat, '\n');
			strbuf_addf(&fix, "%s: ", name);
			latency_fix(&fix, c, h);
			strbuf_addstr(&fix, ".\n");
		}
		if (h->place == PL_NONE && h->has_occ && h->occ.pct < occ_low &&
		    (h->occ.limit == OCC_LIMIT_REGISTERS || h->occ.limit == OCC_LIMIT_SMEM)) {
			struct kernel_info ki;
			kernel_classify(model_str(m, h->name_id), NULL, &ki);
			if (ki.op == KOP_GEMM || ki.op == KOP_CONV || ki.op == KOP_ATTENTION)
				continue;
			nocc++;
			strbuf_addf(&occ, "%s: %s (%.0f%% of GPU busy time); ", name,
				    fmt_duration(b1, sizeof(b1), (double)h->ns),
				    az_div((double)h->ns, (double)c->busy_ns) * 100);
			occ_text(&occ, h);
			strbuf_addch(&occ, '\n');
		}
	}
	/* where: the first launch of the top latency-bound kernel */
	for (size_t i = 0; i < m->kernels.n && nw < 3; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		for (size_t h = 0; h < n; h++)
			if (hot[h].place == PL_LATENCY && k->name_id == hot[h].name_id && az_in_win(c, k->start)) {
				where[nw++] = (struct interval){ k->start, k->end > k->start ? k->end : k->start + 1 };
				break;
			}
	}
	if (nlat) {
		double gain = az_div(lat_ns, (double)c->unit_wall_ns);
		if (gain >= az_param(c, self, "min_gain"))
			az_add(c, "latency-bound-kernel", az_severity(gain), gain,
			       "Hot kernels keep neither compute nor memory busy (latency-bound)",
			       "sum over hot kernels with SM and DRAM throughput both under kernel-limits.sol_pct of peak of "
			       "their time x (1 - busiest unit / sol_pct) / analysed GPU time: the time saved if each "
			       "reached the point where a unit becomes its limit (an upper bound)",
			       lat.buf, fix.buf, where, nw);
	}
	if (ncounted)
		az_add(c, "kernel-bound", 0, 0, "What limits the hot kernels (hardware counters)",
		       "speed-of-light placement: memory-bound when DRAM throughput >= kernel-limits.sol_pct of peak and "
		       "above the SM's, compute-bound when the SM's is, latency-bound when both are under it",
		       ev.buf,
		       "Memory-bound kernels get faster only by moving fewer bytes: fuse element-wise operations "
		       "(torch.compile), keep tensors in lower precision (bf16, fp8); compute-bound kernels by faster "
		       "units (tensor cores: see tensor-cores-unused) or less work.",
		       NULL, 0);
	if (nocc)
		az_add(c, "occupancy-limited", 0, 0, "Hot kernels limited to low occupancy by registers or shared memory",
		       "theoretical occupancy (the CUDA occupancy calculator's arithmetic on the recorded launch "
		       "configuration) under kernel-limits.occ_low_pct, limited by registers or shared memory; GEMM, "
		       "convolution and attention kernels left out",
		       occ.buf,
		       "Low occupancy hurts only a kernel that waits on latency: profile these kernels with "
		       "--kernel-metrics=basic --kernel-filter NAME to see whether they are latency-bound; if so, cap "
		       "registers (__launch_bounds__, -maxrregcount) or shrink shared-memory tiles.",
		       NULL, 0);
	strbuf_release(&ev);
	strbuf_release(&lat);
	strbuf_release(&occ);
	strbuf_release(&fix);
}
