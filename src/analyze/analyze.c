/*
 * analyze.c - analyze_run(): thresholds, the analysed window, steps, the
 * summary, and the findings list the rules fill.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- rules table access and thresholds ---- */

const struct az_rule *az_rule_find(const char *id)
{
	for (size_t i = 0; i < az_nrules; i++)
		if (!strcmp(az_rules[i].id, id))
			return &az_rules[i];
	return NULL;
}

const char *const *analyze_rule_ids(void)
{
	static const char *ids[64];

	if (!ids[0])
		for (size_t i = 0; i < az_nrules && i + 1 < ARRAY_SIZE(ids); i++)
			ids[i] = az_rules[i].id;
	return ids;
}

double az_param(const struct az_ctx *c, const struct az_rule *rule, const char *key)
{
	size_t ri, k;

	if (!rule)
		BUG("no rule for threshold '%s'", key);
	ri = (size_t)(rule - az_rules);
	for (k = 0; rule->params[k].key; k++)
		if (!strcmp(rule->params[k].key, key))
			return c->params[ri * AZ_MAX_PARAMS + k];
	BUG("rule '%s' has no threshold '%s'", rule->id, key);
}

static int resolve_params(struct az_ctx *c)
{
	c->params = xcalloc(az_nrules * AZ_MAX_PARAMS, sizeof(double));
	for (size_t ri = 0; ri < az_nrules; ri++)
		for (size_t k = 0; az_rules[ri].params[k].key; k++) {
			if (k >= AZ_MAX_PARAMS)
				BUG("rule '%s' has too many thresholds", az_rules[ri].id);
			c->params[ri * AZ_MAX_PARAMS + k] = az_rules[ri].params[k].def;
		}
	for (const char *const *s = c->o ? c->o->set : NULL; s && *s; s++) {
		const char *dot = strchr(*s, '.'), *eq = strchr(*s, '=');
		char rule[64], key[64], *end;
		const struct az_rule *r;
		double v;
		size_t k;

		if (!dot || !eq || eq < dot || (size_t)(dot - *s) >= sizeof(rule) ||
		    (size_t)(eq - dot - 1) >= sizeof(key))
			return error("bad threshold '%s': expected rule.key=value", *s);
		memcpy(rule, *s, (size_t)(dot - *s));
		rule[dot - *s] = 0;
		memcpy(key, dot + 1, (size_t)(eq - dot - 1));
		key[eq - dot - 1] = 0;
		if (!(r = az_rule_find(rule)))
			return error("unknown rule '%s' in '%s' (see docs/rules.md)", rule, *s);
		for (k = 0; r->params[k].key; k++)
			if (!strcmp(r->params[k].key, key))
				break;
		if (!r->params[k].key)
			return error("rule '%s' has no threshold '%s' (see docs/rules.md)", rule, key);
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !isfinite(v) || v < 0)
			return error("bad value in '%s': expected a number >= 0", *s);
		c->params[(size_t)(r - az_rules) * AZ_MAX_PARAMS + k] = v;
	}
	return 0;
}

double az_engine_param(const struct az_ctx *c, const char *key)
{
	if (strcmp(az_rules[0].id, "engine"))
		BUG("the engine row must be the first of az_rules");
	return az_param(c, &az_rules[0], key);
}

/* ---- the window ---- */

static int build_window(struct az_ctx *c)
{
	const struct model *m = c->m;
	const struct analyze_opts *o = c->o;

	c->t0 = m->t_min;
	if (o && o->nvtx) {
		for (size_t i = 0; i < m->nvtx.n; i++) {
			const struct trace_nvtx_range *r = &m->nvtx.v[i];
			if (r->end > r->start && model_name_matches(model_str(m, r->name_id), o->nvtx))
				ivset_add(&c->win, r->start, r->end);
		}
		if (!c->win.n)
			return error("no NVTX range named '%s' in '%s'", o->nvtx,
				     m->path ? m->path : "the input");
		if (o->start || o->end) {
			struct interval_set cut = { 0 }, w2 = { 0 };
			ivset_add(&cut, o->start, o->end ? o->end : UINT64_MAX);
			ivset_normalize(&c->win);
			for (size_t i = 0; i < c->win.n; i++) {
				uint64_t s = c->win.v[i].start > cut.v[0].start ? c->win.v[i].start : cut.v[0].start;
				uint64_t e = c->win.v[i].end < cut.v[0].end ? c->win.v[i].end : cut.v[0].end;
				ivset_add(&w2, s, e);
			}
			ivset_release(&cut);
			ivset_release(&c->win);
			c->win = w2;
		}
	} else {
		uint64_t lo = UINT64_MAX, hi = 0;
		if (m->kernels.n && m->kernels.v[0].start < lo)
			lo = m->kernels.v[0].start;
		if (m->memcpys.n && m->memcpys.v[0].start < lo)
			lo = m->memcpys.v[0].start;
		if (m->memsets.n && m->memsets.v[0].start < lo)
			lo = m->memsets.v[0].start;
		for (size_t i = 0; i < m->kernels.n; i++)
			if (m->kernels.v[i].end > hi)
				hi = m->kernels.v[i].end;
		for (size_t i = 0; i < m->memcpys.n; i++)
			if (m->memcpys.v[i].end > hi)
				hi = m->memcpys.v[i].end;
		for (size_t i = 0; i < m->memsets.n; i++)
			if (m->memsets.v[i].end > hi)
				hi = m->memsets.v[i].end;
		if (lo == UINT64_MAX || hi <= lo) { /* no GPU work: the report's span */
			lo = m->t_min;
			hi = m->t_max;
		}
		if (o && (o->start || o->end)) {
			lo = o->start;
			hi = o->end ? o->end : (m->t_max > lo ? m->t_max : lo);
		}
		if (hi > lo)
			ivset_add(&c->win, lo, hi);
	}
	ivset_normalize(&c->win);
	if (c->win.n) {
		c->lo = c->win.v[0].start;
		c->hi = c->win.v[c->win.n - 1].end;
		c->wall_ns = ivset_total(&c->win);
	}
	return 0;
}

/* ---- steps ---- */

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t median_u64(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64p);
	return v[n / 2];
}

/* NVTX step ranges in the window (--step RANGE, or a step name: model_find_steps()). */
static void find_nvtx_steps(struct az_ctx *c)
{
	const struct model *m = c->m;
	const char *want = c->o ? c->o->step : NULL;
	struct model_steps found;
	struct interval *st;
	size_t n;

	free(c->steps);
	free(c->step_source);
	c->steps = NULL;
	c->step_source = NULL;
	c->nsteps = c->nsteps_nvtx = 0;
	c->step_period_s = 0;
	n = model_find_steps(m, want, &c->win, &found);
	st = found.v;
	if (want && !n)
		az_note(c, "no NVTX range named '%s' in the window: steps not known", want);
	if (n >= 2) {
		uint64_t *d = xmalloc((n - 1) * sizeof(*d));
		for (size_t i = 1; i < n; i++)
			d[i - 1] = st[i].start - st[i - 1].start;
		c->step_period_s = (double)median_u64(d, n - 1) / 1e9;
		free(d);
		c->steps = st;
		c->nsteps_nvtx = n;
		c->nsteps = n;
		c->step_source = xstrfmt("NVTX range '%s' (%zu instances)", model_str(m, found.name_id), n);
		return;
	}
	free(st);
}

/*
 * The steady state: with three or more NVTX steps and no window asked for,
 * the first step (lazy initialisation, allocator growth, autotuning) is left
 * out of the analysis, as profilers' warm-up steps are.
 */
/*
 * Where the first step's GPU work ends: the latest end of the GPU operations
 * launched before the second step began (correlation ids grow with time in
 * each process, so "launched before" is "correlation id at most the largest
 * one seen before").  0 when the report cannot tell (no API records).
 */
static uint64_t first_step_gpu_end(const struct az_ctx *c, uint64_t t1)
{
	const struct model *m = c->m;
	struct { uint32_t pid, max; } ids[64];
	size_t n = 0;
	uint64_t end = 0;

	for (size_t i = 0; i < m->api.n && m->api.v[i].start < t1; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = (int)c->api_class[a->name_id];
		size_t k;
		if (!a->correlation || (cls != API_LAUNCH && cls != API_COPY_SYNC && cls != API_COPY_ASYNC))
			continue;
		for (k = 0; k < n && ids[k].pid != a->pid; k++)
			;
		if (k == n) {
			if (n == ARRAY_SIZE(ids))
				continue;
			ids[n].pid = a->pid;
			ids[n++].max = 0;
		}
		if (a->correlation > ids[k].max)
			ids[k].max = a->correlation;
	}
#define STEP0_END(tab)                                                              \
	for (size_t i = 0; i < (tab).n; i++)                                         \
		for (size_t k = 0; k < n; k++)                                       \
			if ((tab).v[i].pid == ids[k].pid && (tab).v[i].correlation &&  \
			    (tab).v[i].correlation <= ids[k].max && (tab).v[i].end > end) \
				end = (tab).v[i].end;
	STEP0_END(m->kernels)
	STEP0_END(m->memcpys)
	STEP0_END(m->memsets)
#undef STEP0_END
	return end;
}

/*
 * The steady state: with three or more NVTX steps and no window asked for,
 * the first step (lazy initialisation, allocator growth, autotuning) is left
 * out of the analysis, as profilers' warm-up steps are.  The window starts
 * with the second step, or where the first step's GPU work ends if that is
 * later: when the CPU runs ahead, the GPU finishes the first step long after
 * the second step's range began on the CPU.
 */
static void skip_warmup(struct az_ctx *c)
{
	const struct analyze_opts *o = c->o;
	uint64_t from, gpu_end;

	if (o && o->in_windows) {
		/*
		 * The first window of a report analysed in windows starts at the
		 * run's second step (found over the run): on to where the first
		 * step's GPU work ends, when that is later.
		 */
		if (!o->warmup_from || o->warmup_from > c->lo)
			return;
		gpu_end = first_step_gpu_end(c, o->warmup_from);
		from = gpu_end > c->lo && gpu_end < c->hi ? gpu_end : c->lo;
		c->warmup_skipped = from > o->warmup_lo ? from - o->warmup_lo : 0;
		if (from == c->lo)
			return;
	} else {
		if ((o && (o->start || o->end || o->nvtx)) || c->nsteps_nvtx < 3)
			return;
		/* torch.profiler records only its schedule's "active" steps: warm-up is already out */
		if (c->m->format && !strcmp(c->m->format, "kineto"))
			return;
		from = c->steps[1].start;
		gpu_end = first_step_gpu_end(c, from);
		if (gpu_end > from)
			from = gpu_end;
	}
	if (from <= c->lo || from >= c->hi)
		return;
	if (!(o && o->in_windows))
		c->warmup_skipped = from - c->lo;
	ivset_release(&c->win);
	ivset_add(&c->win, from, c->hi);
	ivset_normalize(&c->win);
	c->lo = c->win.v[0].start;
	c->wall_ns = ivset_total(&c->win);
	find_nvtx_steps(c);
}

/* Without NVTX steps: periodic idle gaps, the sawtooth of a training loop. */
static void find_periodic(struct az_ctx *c)
{
	if (c->nsteps_nvtx >= 2 || c->ngaps < 5)
		return;
	{
		uint64_t min_len = (uint64_t)(az_engine_param(c, "period_min_gap_us") * 1e3), maxlen = 0;
		uint64_t *d, prev = 0, best_busy = 0;
		size_t nd = 0, near = 0, unit = 0;
		uint64_t p;
		for (size_t i = 0; i < c->nunits; i++)
			if (c->units[i].busy_ns > best_busy) {
				best_busy = c->units[i].busy_ns;
				unit = i;
			}
		for (size_t i = 0; i < c->ngaps; i++)
			if (c->gaps[i].len > maxlen)
				maxlen = c->gaps[i].len;
		if (maxlen / 4 > min_len)
			min_len = maxlen / 4;
		d = xmalloc(c->ngaps * sizeof(*d));
		for (size_t i = 0; i < c->ngaps; i++) {
			if (c->gaps[i].len < min_len || c->gaps[i].unit != unit)
				continue;
			if (prev)
				d[nd++] = c->gaps[i].start - prev;
			prev = c->gaps[i].start;
		}
		if (nd >= 4) {
			uint64_t *cp = xmalloc(nd * sizeof(*cp));
			memcpy(cp, d, nd * sizeof(*cp));
			p = median_u64(cp, nd);
			free(cp);
			for (size_t i = 0; i < nd; i++)
				if (d[i] * 100 >= p * 85 && d[i] * 100 <= p * 115)
					near++;
			if (p && near * 10 >= nd * 7) {
				c->step_period_s = (double)p / 1e9;
				c->nsteps = (uint64_t)((double)c->wall_ns / (double)p + 0.5);
				c->step_source = xstrfmt("periodic idle gaps (%zu of %zu intervals within 15%% of the median)",
							 near, nd);
			}
		}
		free(d);
	}
}

/* ---- what the input is ---- */

static int detect_pytorch(const struct model *m)
{
	if (m->format && !strcmp(m->format, "kineto"))
		return 1;
	for (size_t i = 0; i < m->procs.n; i++) {
		if (strstr(model_str(m, m->procs.v[i].cmdline_id), "python") ||
		    strstr(model_str(m, m->procs.v[i].exe_id), "python"))
			return 1;
	}
	for (uint32_t i = 0; i < m->str.nr; i++) {
		const char *s = m->str.str[i];
		if (strstr(s, "at::native") || strstr(s, "aten::") || strstr(s, "at::cuda") ||
		    strstr(s, "ProfilerStep#") || strstr(s, "c10::"))
			return 1;
	}
	return 0;
}

/* Did the loader or importer already say this (a warning containing @what)? */
static int warned(const struct model *m, const char *what)
{
	for (size_t i = 0; i < m->nr_warnings; i++)
		if (strstr(m->warnings[i], what))
			return 1;
	return 0;
}

/*
 * gpuscope's own CUDA tracing adds about launch-bound.tracing_cost_us to
 * every launch (CUPTI's kernel records and API callbacks).  Where the
 * launching thread is the bottleneck that much of the recorded time is the
 * tracer's: say so when it reaches min_gain, so that a launch-bound run
 * measured 1.5x slower than without gpuscope is not a surprise.  Only for
 * reports gpuscope recorded: other tools' traces cost what they cost.
 */
static void tracing_note(struct az_ctx *c)
{
	const struct model *m = c->m;
	const struct az_rule *launch = az_rule_find("launch-bound");
	uint64_t n = 0;
	double cost_us, share;

	if (!launch || !m->format || strcmp(m->format, "gpuscope") || !c->unit_wall_ns)
		return;
	cost_us = az_param(c, launch, "tracing_cost_us");
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		if (c->api_class[a->name_id] == API_LAUNCH && az_in_win(c, a->start) && az_api_counted(c, a))
			n++;
	}
	share = (double)n * cost_us * 1e3 / (double)c->unit_wall_ns;
	if (share >= az_param(c, launch, "min_gain"))
		az_note(c, "gpuscope's CUDA tracing adds about %.1f us to each launch: where the launching "
			"thread is the bottleneck, up to %.0f%% of this run's time (%llu launches in the "
			"window) is the tracer's own (launch-bound.tracing_cost_us)",
			cost_us, share > 1 ? 100.0 : share * 100,
			(unsigned long long)n);
}

static int cmp_oneoff(const void *pa, const void *pb)
{
	const struct az_oneoff *a = pa, *b = pb;

	return (a->len < b->len) - (a->len > b->len);
}

/*
 * One-offs (timeline.c) are reported apart, with their sizes, never as a
 * gain: the largest 16 in result->oneoffs, and one note.
 */
static void oneoff_notes(struct az_ctx *c)
{
	struct analyze_result *r = c->r;
	struct az_oneoff *v;
	size_t n = c->noneoffs;
	uint64_t init = 0;
	char b[64];

	if (!n)
		return;
	v = xmalloc(n * sizeof(*v));
	memcpy(v, c->oneoffs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_oneoff);
	r->oneoff_s = (double)c->oneoff_ns / 1e9;
	r->noneoffs = n < 16 ? n : 16;
	r->oneoffs = xcalloc(r->noneoffs, sizeof(*r->oneoffs));
	for (size_t i = 0; i < n; i++)
		if (v[i].cause == CAUSE_INIT)
			init += v[i].len;
	for (size_t i = 0; i < r->noneoffs; i++) {
		struct strbuf sb = STRBUF_INIT;
		const struct az_oneoff *o = &v[i];
		char kb[AZ_NAME_MAX + 8];
		strbuf_addf(&sb, "%s", o->cause == CAUSE_INIT ? "one-time CUDA start-up (context creation, module loading)"
				       : az_cause_name(o->cause));
		if (o->name_tag) {
			strbuf_addstr(&sb, " in ");
			az_describe_key(c, (uint64_t)o->name_tag << 40 | o->name, &sb);
		}
		if (o->next_kind == 0)
			strbuf_addf(&sb, ", before the first run of %s",
				    kernel_label(kb, sizeof(kb), model_str(c->m, o->next_name), AZ_NAME_MAX));
		else
			strbuf_addf(&sb, ", before the first %s", o->next_kind == 1 ? "copy of its kind" : "memset");
		r->oneoffs[i].what = sb.buf ? sb.buf : xstrdup("");
		r->oneoffs[i].start_s = az_rel_s(c, o->start);
		r->oneoffs[i].duration_s = (double)o->len / 1e9;
	}
	az_note(c, "%zu one-off%s (start-up, first launches, JIT compilation, cold starts: a long GPU idle gap "
		"before the first run of a kernel) took %s of GPU time%s; no gain counts them; --start 0 "
		"analyses everything as steady state", n, n == 1 ? "" : "s",
		fmt_duration(b, sizeof(b), (double)c->oneoff_ns), init ? ", including one-time CUDA start-up" : "");
	free(v);
}

static void input_notes(struct az_ctx *c)
{
	const struct model *m = c->m;
	uint64_t drops = 0;

	if (!(m->has & MODEL_HAS_CUDA))
		az_note(c, "the input has no CUDA data (no kernels, copies or API calls): "
			"only CPU-side facts can be shown; record with --trace=cuda");
	else if (!c->has_gpu)
		az_note(c, "no GPU activity in the analysed window");
	if (c->has_gpu && !(m->has & MODEL_HAS_API))
		az_note(c, "no CUDA API records: idle gaps are attributed to each process's "
			"busiest thread, synchronisation and launch costs cannot be measured");
	if (c->has_gpu && !(m->has & MODEL_HAS_OSRT) && !warned(m, "OS-runtime"))
		az_note(c, "no OS-runtime records: I/O, locks and sleeps cannot be told apart from "
			"CPU work (record with --trace=osrt)");
	oneoff_notes(c);
	if (c->warmup_skipped)
		az_note(c, "the first step (%.3f s, warm-up) is left out; --start 0 analyses everything",
			(double)c->warmup_skipped / 1e9);
	for (size_t i = 0; i < TRACE_DROP__COUNT; i++)
		drops += m->drops[i];
	if (drops)
		az_note(c, "%llu records were dropped while recording: figures are lower bounds",
			(unsigned long long)drops);
	for (size_t i = 0; i < m->nr_warnings; i++)
		az_note(c, "%s", m->warnings[i]);
	if (c->has_gpu && (m->has & MODEL_HAS_API))
		tracing_note(c);
}

/*
 * The transformation each finding's fix amounts to, where the rule's gain is
 * its own model rather than the replay (docs/rules.md, "What-if"): the
 * graph cannot move a kernel to another stream or rank, change a clock, or
 * say what memory buys.  Every finding thus carries a transformation and
 * the analysed time before and after it, the replay's where it ran.
 */
static const struct { const char *id, *transform; } model_transforms[] = {
	{ "exposed-communication", "the ranks balanced to the mean compute and the transfers overlapped with compute" },
	{ "straggler", "the slow rank brought to the other ranks' pace" },
	{ "serial-copy", "the copies moved to their own stream beside independent compute" },
	{ "small-copies", "the small copies batched into one per direction and step" },
	{ "throttling", "the GPU kept at its full clock" },
	{ "numa-placement", "each rank's threads and memory on its GPU's NUMA node" },
	{ "no-p2p-path", "the GPUs' traffic over a peer-to-peer path instead of staged through host memory" },
	{ "latency-bound-kernel", "the hot kernel at the throughput its hardware counters show is left" },
	{ "kernel-bound", "the hot kernel at its unit's speed-of-light" },
	{ "occupancy-limited", "the hot kernel at the occupancy its limiting resource allows once relieved" },
	{ "memory-pressure", "the device memory freed below the pressure line (memory, not time)" },
	{ "memory-headroom", "the headroom used (memory, not time: a larger batch is a new run)" },
	{ "memory-leak", "the growing allocations released each step (memory, not time)" },
	{ "memory-fragmentation", "the allocator's segments expandable (memory, not time)" },
	{ "out-of-memory", "the failed allocation made to fit (memory, not time)" },
};

static void model_whatifs(struct az_ctx *c)
{
	struct analyze_result *r = c->r;

	for (size_t i = 0; i < r->n; i++) {
		struct finding *f = &r->findings[i];
		const char *t = "the fix below, as the gain formula models it";
		if (f->whatif)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(model_transforms); k++)
			if (!strcmp(model_transforms[k].id, f->id))
				t = model_transforms[k].transform;
		az_model_finding(c, f, t);
	}
}

/*
 * The GPU busy share of the whole run: per unit, the union of its kernels
 * and of its copies and sets, |K| + |X| - |K n X|.  The tables are sorted
 * by start, so each unit's kernels arrive in order and normalise without a
 * sort; only the copies and sets (two sorted runs, usually far fewer) are
 * sorted together.  Adding all three to one set sorted every GPU operation
 * again (5% of analyze on the 10 M-event bench).  Unwindowed, over the
 * run's length.
 */
static double run_busy(const struct az_ctx *c)
{
	const struct model *m = c->m;
	uint64_t run = m->t_max > m->t_min ? m->t_max - m->t_min : 0, busy = 0;
	struct interval_set *ks, *xs;
	size_t last = 0;

	if (!run || !c->nunits)
		return -1;
	ks = xcalloc(c->nunits, sizeof(*ks));
	xs = xcalloc(c->nunits, sizeof(*xs));
#define RUN_ADD(arr, sets) \
	for (size_t i = 0; i < m->arr.n; i++) { \
		uint32_t pid = m->arr.v[i].pid, dev = m->arr.v[i].device; \
		if (c->units[last].pid != pid || c->units[last].device != dev) { \
			size_t u; \
			for (u = 0; u < c->nunits && (c->units[u].pid != pid || c->units[u].device != dev); u++) \
				; \
			if (u == c->nunits) \
				continue; \
			last = u; \
		} \
		ivset_add(&sets[last], m->arr.v[i].start, m->arr.v[i].end); \
	}
	RUN_ADD(kernels, ks)
	RUN_ADD(memcpys, xs)
	RUN_ADD(memsets, xs)
#undef RUN_ADD
	for (size_t u = 0; u < c->nunits; u++) {
		ivset_normalize(&ks[u]);
		ivset_normalize(&xs[u]);
		busy += ivset_total(&ks[u]) + ivset_total(&xs[u]) - ivset_intersect_total(&ks[u], &xs[u]);
		ivset_release(&ks[u]);
		ivset_release(&xs[u]);
	}
	free(ks);
	free(xs);
	return az_div((double)busy, (double)run * (double)c->nunits);
}

static void summary(struct az_ctx *c)
{
	struct analyze_summary *s = &c->r->summary;
	uint64_t *len;

	s->wall_s = (double)c->wall_ns / 1e9;
	s->win_start_s = az_rel_s(c, c->lo);
	s->win_end_s = az_rel_s(c, c->hi);
	s->run_s = c->m->t_max > c->m->t_min ? (double)(c->m->t_max - c->m->t_min) / 1e9 : 0;
	s->run_gpu_busy = c->has_gpu ? run_busy(c) : -1;
	if (s->run_gpu_busy > 1)
		s->run_gpu_busy = 1;
	s->win_start = c->lo;
	s->win_end = c->hi;
	if (c->has_gpu && c->unit_wall_ns) {
		s->gpu_busy = az_div((double)c->busy_ns, (double)c->unit_wall_ns);
		if (s->gpu_busy > 1)
			s->gpu_busy = 1;
		s->gpu_idle = 1 - s->gpu_busy;
	} else {
		s->gpu_busy = s->gpu_idle = -1;
	}
	s->step_period_s = c->step_period_s;
	s->step_source = c->step_source ? xstrdup(c->step_source) : NULL;
	s->gaps = c->ngaps;
	if (c->ngaps) {
		len = xmalloc(c->ngaps * sizeof(*len));
		for (size_t i = 0; i < c->ngaps; i++)
			len[i] = c->gaps[i].len;
		s->gap_median_s = (double)median_u64(len, c->ngaps) / 1e9;
		free(len);
	}
}

int az_cmp_finding(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	if (a->fatal != b->fatal)
		return b->fatal - a->fatal;
	if (a->gain != b->gain)
		return a->gain > b->gain ? -1 : 1;
	if (a->severity != b->severity)
		return b->severity - a->severity;
	return strcmp(a->id, b->id);
}

int analyze_run(const struct model *m, const struct analyze_opts *o, struct analyze_result *r)
{
	struct az_ctx c;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.o = o;
	c.r = r;
	if (resolve_params(&c) < 0 || build_window(&c) < 0) {
		ret = -1;
		goto out;
	}
	c.api_class = xcalloc(m->str.nr + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < m->str.nr; i++)
		c.api_class[i] = API_OTHER;
	{
		uint32_t prev = UINT32_MAX;
		uint8_t *seen = xcalloc(m->str.nr + 1, 1);
		for (size_t i = 0; i < m->api.n; i++) {
			uint32_t id = m->api.v[i].name_id;
			if (id == prev || id >= m->str.nr || seen[id])
				continue;
			seen[id] = 1;
			prev = id;
			c.api_class[id] = (uint32_t)az_api_class(model_str(m, id));
		}
		free(seen);
	}
	c.pytorch = detect_pytorch(m);
	for (size_t i = 0; i < m->api.n && !c.has_runtime; i++)
		c.has_runtime = m->api.v[i].domain == TRACE_API_RUNTIME;
	find_nvtx_steps(&c);
	skip_warmup(&c);
	az_build_timeline(&c);
	c.unit_wall_ns = 0;
	for (size_t i = 0; i < c.nunits; i++)
		if (c.units[i].has_work)
			c.unit_wall_ns += c.wall_ns;
	find_periodic(&c);
	r->replay_check_ns = -1;
	if (o && o->check_replay && az_replay_get(&c)) {
		int64_t *d = xcalloc(c.nunits + 1, sizeof(*d));
		r->replay_check_ns = 0;
		az_replay_run(&c, c.replay, NULL, d);
		for (size_t u = 0; u < c.nunits; u++) {
			int64_t a = d[u] < 0 ? -d[u] : d[u];
			if (a > r->replay_check_ns)
				r->replay_check_ns = a;
		}
		free(d);
	}
	summary(&c);
	input_notes(&c);
	for (size_t i = 0; i < az_nrules; i++) {
		int scope = az_rules[i].scope;
		if (!az_rules[i].run || (o && o->rules == ANALYZE_RULES_WINDOW && scope == AZ_SCOPE_RUN) ||
		    (o && o->rules == ANALYZE_RULES_RUN && scope != AZ_SCOPE_RUN))
			continue;
		az_rules[i].run(&c, &az_rules[i]);
	}
	model_whatifs(&c);
	if (r->n > 1)
		qsort(r->findings, r->n, sizeof(*r->findings), az_cmp_finding);
out:
	az_replay_free(c.replay);
	az_release_timeline(&c);
	ivset_release(&c.win);
	free(c.params);
	free(c.api_class);
	free(c.kclass);
	free(c.data_frame);
	free(c.steps);
	free(c.step_source);
	if (ret < 0)
		analyze_result_release(r);
	return ret;
}

void az_finding_release(struct finding *f)
{
	free(f->title);
	free(f->gain_formula);
	free(f->evidence);
	free(f->recommendation);
	free(f->where);
	free(f->transform);
	memset(f, 0, sizeof(*f));
}

void analyze_result_release(struct analyze_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		az_finding_release(&r->findings[i]);
	free(r->findings);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	for (size_t i = 0; i < r->noneoffs; i++)
		free(r->oneoffs[i].what);
	free(r->oneoffs);
	free(r->summary.step_source);
	memset(r, 0, sizeof(*r));
}
