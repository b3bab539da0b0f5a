/*
 * rule_launch.c - launch-bound: many short kernels, the GPU queue empty
 * between them, launch time as large as kernel time.
 *
 * The gain is the idle time of gaps whose next kernel was launched only
 * after the gap began and during which the launching thread was launching
 * or dispatching (timeline.c: CAUSE_LAUNCH), less the ~1 us per gap that a
 * CUDA graph replay still leaves.  The launch API time minus the kernel
 * time is printed next to it as a cross-check.
 */
#include "internal.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void rule_launch(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint64_t short_ns = (uint64_t)(az_param(c, self, "short_kernel_us") * 1e3);
	uint64_t graph_gap = (uint64_t)(az_param(c, self, "graph_gap_us") * 1e3);
	uint64_t nk = 0, nshort = 0, kern_ns = 0, nlaunch = 0, launch_ns = 0, ngraph = 0, gain_ns;
	uint64_t sample[4096], median = 0, lsample[4096], lmedian = 0;
	size_t ns = 0, nls = 0;
	struct strbuf ev = STRBUF_INIT, formula = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain, short_share;
	char b1[64], b2[64], b3[64];

	size_t stride = m->kernels.n / ARRAY_SIZE(sample) + 1, lstride = m->api.n / ARRAY_SIZE(lsample) + 1;

	if (!c->has_gpu)
		return;
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		uint64_t d = k->end > k->start ? k->end - k->start : 0;
		if (!az_in_win(c, k->start))
			continue;
		nk++;
		kern_ns += d;
		if (d < short_ns)
			nshort++;
		if (k->flags & TRACE_GPU_GRAPH)
			ngraph++;
		if (i % stride == 0 && ns < ARRAY_SIZE(sample)) /* systematic sample for the median */
			sample[ns++] = d;
	}
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		if (c->api_class[a->name_id] != API_LAUNCH || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		nlaunch++;
		launch_ns += a->end > a->start ? a->end - a->start : 0;
		if (nls < ARRAY_SIZE(lsample) && i % lstride == 0)
			lsample[nls++] = a->end > a->start ? a->end - a->start : 0;
	}
	if (!nk)
		return;
	qsort(sample, ns, sizeof(sample[0]), cmp_u64);
	median = ns ? sample[ns / 2] : 0;
	qsort(lsample, nls, sizeof(lsample[0]), cmp_u64);
	lmedian = nls ? lsample[nls / 2] : 0;
	short_share = az_div((double)nshort, (double)nk);
	gain_ns = c->cause[CAUSE_LAUNCH].ns;
	gain_ns = gain_ns > graph_gap * c->cause[CAUSE_LAUNCH].gaps
		? gain_ns - graph_gap * c->cause[CAUSE_LAUNCH].gaps : 0;
	gain = az_div((double)gain_ns, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	/* medians, so that a few first launches that load modules do not count */
	if (short_share < az_param(c, self, "min_short_share") && !(nls && lmedian >= median))
		return;

	strbuf_addf(&ev, "%llu kernels in the window, %llu (%.0f%%) shorter than %s, median %s; %llu from CUDA graphs\n",
		    (unsigned long long)nk, (unsigned long long)nshort, short_share * 100,
		    fmt_duration(b1, sizeof(b1), (double)short_ns), fmt_duration(b2, sizeof(b2), (double)median),
		    (unsigned long long)ngraph);
	if (nlaunch)
		strbuf_addf(&ev, "launch API: %llu calls, %s in total, vs %s of kernel time (%s)\n",
			    (unsigned long long)nlaunch, fmt_duration(b1, sizeof(b1), (double)launch_ns),
			    fmt_duration(b2, sizeof(b2), (double)kern_ns),
			    launch_ns >= kern_ns ? "launching costs more than the kernels run" : "kernels run longer than their launches");
	if (nls)
		strbuf_addf(&ev, "median launch call %s, median kernel %s\n", fmt_duration(b1, sizeof(b1), (double)lmedian),
			    fmt_duration(b2, sizeof(b2), (double)median));
	else
		strbuf_addf(&ev, "no launch API records: launch time unknown; kernel time %s\n",
			    fmt_duration(b2, sizeof(b2), (double)kern_ns));
	if (c->nsteps && nlaunch)
		strbuf_addf(&ev, "per step (%llu steps): launch API %s, kernels %s, (launch - kernel) x steps = %s\n",
			    (unsigned long long)c->nsteps,
			    fmt_duration(b1, sizeof(b1), (double)launch_ns / (double)c->nsteps),
			    fmt_duration(b2, sizeof(b2), (double)kern_ns / (double)c->nsteps),
			    fmt_duration(b3, sizeof(b3), launch_ns > kern_ns ? (double)(launch_ns - kern_ns) : 0));
	strbuf_addf(&ev, "GPU idle with an empty queue while the CPU was launching or dispatching: ");
	az_describe_cause(c, CAUSE_LAUNCH, &ev);
	strbuf_addch(&ev, '\n');
	for (int k = 0; k < 3; k++)
		if (c->cause[CAUSE_LAUNCH].big[k].end > c->cause[CAUSE_LAUNCH].big[k].start)
			where[nw++] = c->cause[CAUSE_LAUNCH].big[k];
	strbuf_addf(&formula, "(idle time of gaps whose next kernel was launched after the gap began, while the launching "
		    "thread was in launch calls or in CPU pauses under launch-bound.max_gap_us) - %s per such gap that a "
		    "CUDA graph replay keeps, divided by the analysed GPU time",
		    fmt_duration(b1, sizeof(b1), (double)graph_gap));
	az_add(c, "launch-bound", az_severity(gain), gain,
	       "Launch-bound: the GPU waits for the CPU to launch short kernels", formula.buf, ev.buf,
	       ngraph * 2 >= nk
	       ? "Most kernels already come from CUDA graphs: capture larger graphs (a whole step, or several) so that one "
		 "launch covers more work, fuse the tiny kernels inside them, and launch graphs ahead instead of waiting "
		 "between them"
	       : c->pytorch
	       ? "Cut the per-kernel CPU cost: capture the step in a CUDA graph (torch.compile(mode=\"reduce-overhead\") or "
		 "torch.cuda.CUDAGraph / torch.cuda.make_graphed_callables), fuse small element-wise ops with torch.compile, "
		 "use fused/foreach optimizers (fused=True), and raise the batch size so each kernel does more work"
	       : "Cut the per-kernel CPU cost: capture the launch sequence once in a CUDA graph (cudaStreamBeginCapture ... "
		 "cudaGraphInstantiate, then cudaGraphLaunch per step), fuse small kernels, and give each kernel more work",
	       where, nw);
	strbuf_release(&ev);
	strbuf_release(&formula);
}
