/*
 * rule_launch.c - the host path between launches: launch-bound and
 * host-bound, one finding for one cause.
 *
 * The GPU idles with an empty queue while the thread that launches its
 * work is on the CPU between launches: inside launch calls and short
 * dispatch pauses (launch-bound: tiny kernels, eager frameworks), or in
 * longer stretches of framework or Python code (host-bound: eager
 * inference, small batches, compiled code without graphs).  A CUDA graph
 * removes the whole CPU path between launches, not only the launch calls,
 * so both are one finding; its id says which part dominates.
 *
 * The gain is the replay's (replay.c): the launching thread's CPU work and
 * dispatch in every idle gap removed (timeline.c: CAUSE_CPU, CAUSE_LAUNCH)
 * and each kernel started launch-bound.graph_gap_us after the previous
 * one, as a graph replay does.  Without a graph (no API records): the
 * attributed idle time less graph_gap_us per gap.
 */
#include "internal.h"

#include <stdlib.h>

struct graph_ctx {
	uint64_t gap;              /* launch-bound.graph_gap_us */
	uint64_t dispatch;         /* engine.max_gap_us */
};

/*
 * In a graph replay kernels follow each other graph_gap_us apart, with no
 * launch call to wait for: the cap of their launch latency, and of the
 * spacing of those that waited for their launch.
 */
static uint64_t graph_latency(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op,
			      uint64_t lat)
{
	uint64_t g = ((const struct graph_ctx *)ctx)->gap;

	(void)c;
	(void)rp;
	(void)op;
	return lat < g ? lat : g;
}

/*
 * A graph replays the captured launches: their CPU cost goes, and so does
 * every other non-blocking call of the launch path (stream and device
 * queries, event records, the launchers' property lookups).  Blocking
 * calls, allocations and start-up stay: a graph does not remove them.
 */
static uint64_t graph_call(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			   uint32_t api_row, uint64_t dur, int *nodep)
{
	int cls = (int)c->api_class[c->m->api.v[api_row].name_id];

	(void)ctx;
	(void)rp;
	(void)node;
	(void)nodep;
	return cls == API_LAUNCH || cls == API_COPY_ASYNC || cls == API_OTHER ? 0 : dur;
}

/*
 * ... and so does the host code between them (Python, the framework's
 * dispatch, autograd): what stays is the segment's I/O, waits, locks,
 * sleeps and data-loading frames, which a graph does not capture.
 */
static uint64_t graph_seg(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			  uint32_t api_row, uint64_t seg)
{
	uint64_t host = az_replay_host_code(rp, node);

	(void)ctx;
	(void)c;
	(void)api_row;
	return seg > host ? seg - host : 0;
}

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
	uint64_t host_ns, gaps, saved = 0;
	struct finding *f;
	const char *id;
	int launch;
	uint64_t sample[4096], median = 0, lsample[4096], lmedian = 0;
	size_t ns = 0, nls = 0;
	struct strbuf ev = STRBUF_INIT, formula = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain, short_share;
	char b1[64], b2[64], b3[64];

	size_t stride = 1, lstride = 1, wk = 0, wl = 0;

	if (!c->has_gpu)
		return;
	/*
	 * The samples' strides from the rows in the window, not the model's
	 * counts: a window's medians do not depend on what else was loaded
	 * (a windowed load, issue 19, keeps only the rows near the window).
	 */
	for (size_t i = 0; i < m->kernels.n; i++)
		wk += az_in_win(c, m->kernels.v[i].start);
	for (size_t i = 0; i < m->api.n; i++)
		wl += c->api_class[m->api.v[i].name_id] == API_LAUNCH && az_in_win(c, m->api.v[i].start) &&
		      az_api_counted(c, &m->api.v[i]);
	stride = wk / ARRAY_SIZE(sample) + 1;
	lstride = wl / ARRAY_SIZE(lsample) + 1;
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
		if ((nk - 1) % stride == 0 && ns < ARRAY_SIZE(sample)) /* systematic sample for the median */
			sample[ns++] = d;
	}
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		if (c->api_class[a->name_id] != API_LAUNCH || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		nlaunch++;
		launch_ns += a->end > a->start ? a->end - a->start : 0;
		if (nls < ARRAY_SIZE(lsample) && (nlaunch - 1) % lstride == 0)
			lsample[nls++] = a->end > a->start ? a->end - a->start : 0;
	}
	if (!nk)
		return;
	qsort(sample, ns, sizeof(sample[0]), cmp_u64);
	median = ns ? sample[ns / 2] : 0;
	qsort(lsample, nls, sizeof(lsample[0]), cmp_u64);
	lmedian = nls ? lsample[nls / 2] : 0;
	short_share = az_div((double)nshort, (double)nk);
	host_ns = c->cause[CAUSE_CPU].ns + c->cause[CAUSE_LAUNCH].ns;
	gaps = c->cause[CAUSE_LAUNCH].gaps > c->cause[CAUSE_CPU].gaps ? c->cause[CAUSE_LAUNCH].gaps
								     : c->cause[CAUSE_CPU].gaps;
	gain_ns = host_ns > graph_gap * gaps ? host_ns - graph_gap * gaps : 0;
	gain = az_div((double)gain_ns, (double)c->unit_wall_ns);
	{
		struct az_xform x = { 0 };
		x.what = "the launching thread's CPU time between launches cut to a CUDA graph replay's";
		struct graph_ctx gc = { graph_gap, (uint64_t)(az_engine_param(c, "max_gap_us") * 1e3) };
		double g;
		x.causes = 1u << CAUSE_CPU | 1u << CAUSE_LAUNCH;
		x.ctx = &gc;
		x.latency = graph_latency;
		x.spacing = graph_latency;
		x.call = graph_call;
		x.seg = graph_seg;
		if (gain >= az_param(c, self, "min_gain") && (g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
	}
	if (gain < az_param(c, self, "min_gain"))
		return;
	/* launch calls and dispatch pauses dominate, with short kernels: launch-bound; else host-bound */
	launch = c->cause[CAUSE_LAUNCH].ns >= c->cause[CAUSE_CPU].ns &&
		 (short_share >= az_param(c, self, "min_short_share") || (nls && lmedian >= median));
	id = launch ? "launch-bound" : "host-bound";

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
	strbuf_addstr(&ev, "GPU idle with an empty queue while the launching thread was on the CPU between launches:\n");
	if (c->cause[CAUSE_LAUNCH].ns) {
		strbuf_addstr(&ev, "  in launch calls and dispatch pauses under engine.max_gap_us: ");
		az_describe_cause(c, CAUSE_LAUNCH, &ev);
		strbuf_addch(&ev, '\n');
	}
	if (c->cause[CAUSE_CPU].ns) {
		strbuf_addstr(&ev, "  in host code between launches (framework, Python): ");
		az_describe_cause(c, CAUSE_CPU, &ev);
		strbuf_addch(&ev, '\n');
	}
	az_cpu_line(c, &ev);
	{
		static const int cs[] = { CAUSE_LAUNCH, CAUSE_CPU };
		az_steps_line(c, cs, 2, &ev);
		nw = az_where_of(c, cs, 2, where);
	}
	strbuf_addf(&formula, "the replay's saving when the launching thread's CPU time between launches inside idle gaps "
		    "(launch calls, dispatch, host code) is cut to a graph replay's and kernels follow %s apart, "
		    "divided by the analysed GPU time",
		    fmt_duration(b1, sizeof(b1), (double)graph_gap));
	f = az_add(c, id, az_severity(gain), gain,
		   launch ? "Launch-bound: the GPU waits for the CPU to launch short kernels"
			  : "Host-bound: the GPU waits while the launching thread runs framework or Python code between launches",
		   formula.buf, ev.buf,
		   ngraph * 2 >= nk
		   ? "Most kernels already come from CUDA graphs: capture larger graphs (a whole step, or several) so that one "
		     "launch covers more work, fuse the tiny kernels inside them, and launch graphs ahead instead of waiting "
		     "between them"
		   : c->pytorch
		   ? "Cut the CPU path between kernels: capture the step in a CUDA graph (torch.compile(mode=\"reduce-overhead\") or "
		     "torch.cuda.CUDAGraph / torch.cuda.make_graphed_callables), fuse small element-wise ops with torch.compile, "
		     "use fused/foreach optimizers (fused=True), remove host syncs from the step (.item(), .cpu(), printing tensors), "
		     "and raise the batch size so each kernel does more work"
		   : "Cut the CPU path between kernels: capture the launch sequence once in a CUDA graph (cudaStreamBeginCapture ... "
		     "cudaGraphInstantiate, then cudaGraphLaunch per step), fuse small kernels, and give each kernel more work",
		   where, nw);
	az_replay_finding(c, f, "the launching thread's CPU time between launches cut to a CUDA graph replay's", saved);
	strbuf_release(&ev);
	strbuf_release(&formula);
}
