/*
 * helpers.c - what every rule may call: findings and notes, gains and
 * severities, times and percentages, and the evidence lines that several
 * rules print (a cause's breakdown, the largest gaps, the idle summary,
 * the steps a cause hit, the CPU samples).  Rules call only this file,
 * classify.c and the engine (engine.h); never another rule's file.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


double az_div(double a, double b)
{
	double r;

	if (b == 0)
		return 0;
	r = a / b;
	return isfinite(r) ? r : 0;
}



double az_rel_s(const struct az_ctx *c, uint64_t t)
{
	return t >= c->t0 ? (double)(t - c->t0) / 1e9 : -(double)(c->t0 - t) / 1e9;
}

void az_fmt_window(const struct az_ctx *c, struct strbuf *sb, const struct interval *iv)
{
	strbuf_addf(sb, "%.6f-%.6f s", az_rel_s(c, iv->start), az_rel_s(c, iv->end));
}

const char *az_pct(char *buf, size_t n, double frac)
{
	if (!isfinite(frac))
		frac = 0;
	snprintf(buf, n, "%.1f%%", frac * 100);
	return buf;
}

int az_severity(double gain)
{
	return gain >= 0.20 ? SEV_CRITICAL : gain >= 0.05 ? SEV_WARNING : SEV_INFO;
}

static double clamp01(double g)
{
	if (!isfinite(g) || g < 0)
		return 0;
	return g > 1 ? 1 : g;
}

struct finding *az_add(struct az_ctx *c, const char *id, int severity, double gain,
		       const char *title, const char *formula, const char *evidence,
		       const char *recommendation, const struct interval *where, size_t nwhere)
{
	struct analyze_result *r = c->r;
	struct finding *f;

	ALLOC_GROW(r->findings, r->n + 1, r->alloc);
	f = &r->findings[r->n++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->title = xstrdup(title ? title : id);
	f->severity = severity;
	f->gain = clamp01(gain);
	f->gain_formula = xstrdup(formula ? formula : "");
	f->evidence = xstrdup(evidence ? evidence : "");
	f->recommendation = xstrdup(recommendation ? recommendation : "");
	f->actual_s = f->replayed_s = -1;
	if (where && nwhere) {
		f->where = xmalloc(nwhere * sizeof(*where));
		memcpy(f->where, where, nwhere * sizeof(*where));
		f->nwhere = nwhere;
	}
	return f;
}

void az_set_replay(struct finding *f, const char *transform, uint64_t actual_ns, uint64_t replayed_ns)
{
	free(f->transform);
	f->transform = xstrdup(transform);
	f->actual_s = (double)actual_ns / 1e9;
	f->replayed_s = (double)replayed_ns / 1e9;
	f->whatif = FINDING_WHATIF_REPLAY;
}

void az_model_finding(struct az_ctx *c, struct finding *f, const char *transform)
{
	/* the analysed GPU time; a report without GPU work (an allocator-only profile): the window's wall time */
	uint64_t actual = c->unit_wall_ns ? c->unit_wall_ns : c->wall_ns;

	if (!f || f->whatif == FINDING_WHATIF_REPLAY || !actual)
		return;
	free(f->transform);
	f->transform = xstrdup(transform);
	f->actual_s = (double)actual / 1e9;
	f->replayed_s = f->actual_s * (1 - f->gain);
	f->whatif = FINDING_WHATIF_MODEL;
}

/* Replay hook of az_replay_kernel_cut(): kernel row r runs cut[r] shorter. */
static uint64_t kernel_cut_op(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t op, int kind,
			      uint32_t row, uint64_t dur)
{
	const uint32_t *cut = ctx;

	(void)c;
	(void)rp;
	(void)op;
	if (kind != 0 || !cut[row])
		return dur;
	return cut[row] < dur ? dur - cut[row] : 0;
}

double az_replay_kernel_cut(struct az_ctx *c, const char *what, const uint32_t *cut, uint64_t *saved_ns)
{
	struct az_xform x = { 0 };

	x.what = what;
	x.ctx = (void *)cut;
	x.op = kernel_cut_op;
	return az_replay_gain(c, &x, saved_ns);
}

double az_replay_gain(struct az_ctx *c, const struct az_xform *x, uint64_t *saved_ns)
{
	uint64_t s;

	*saved_ns = 0;
	if (!az_replay_get(c) || !c->unit_wall_ns)
		return -1;
	if (x && x->causes) {
		/*
		 * The replay moves GPU work through launch edges: where most of
		 * the attributed time lies in gaps whose next operation has no
		 * launch record (unified-memory migrations, traces without
		 * correlation), it cannot show the fix; the attribution stands.
		 */
		uint64_t all = 0, linked = 0;
		for (size_t g = 0; g < c->ngaps; g++) {
			const struct az_gap *gp = &c->gaps[g];
			uint64_t ns = 0;
			if (gp->oneoff)
				continue;
			for (int k = 0; k < CAUSE__N; k++)
				if (x->causes & (1u << k))
					ns += gp->part[k];
			all += ns;
			if (gp->api != UINT32_MAX && az_replay_node_of_api(c->replay, gp->api) != UINT32_MAX)
				linked += ns;
		}
		if (linked * 2 < all)
			return -1;
	}
	s = az_replay_run(c, c->replay, x, NULL);
	*saved_ns = s;
	return az_div((double)s, (double)c->unit_wall_ns);
}

void az_replay_finding(struct az_ctx *c, struct finding *f, const char *transform, uint64_t saved_ns)
{
	if (!f || !c->replay)
		return;
	az_set_replay(f, transform, c->unit_wall_ns,
		      c->unit_wall_ns > saved_ns ? c->unit_wall_ns - saved_ns : 0);
}

void az_note(struct az_ctx *c, const char *fmt, ...)
{
	struct analyze_result *r = c->r;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->nnotes; i++) {
		if (!strcmp(r->notes[i], sb.buf)) {
			strbuf_release(&sb);
			return;
		}
	}
	ALLOC_GROW(r->notes, r->nnotes + 1, r->alloc_notes);
	r->notes[r->nnotes++] = sb.buf ? sb.buf : xstrdup("");
}


/* ---- evidence lines ---- */

void az_describe_key(const struct az_ctx *c, uint64_t key, struct strbuf *sb)
{
	uint64_t tag = key >> 40, id = key & (((uint64_t)1 << 40) - 1);

	if (tag == 1)
		strbuf_addf(sb, "%s", model_str(c->m, (uint32_t)id));
	else if (tag == 2)
		strbuf_addf(sb, "%s", trace_osrt_name((unsigned)id));
	else if (tag == 3)
		strbuf_addf(sb, "NVTX '%s'", model_str(c->m, (uint32_t)id));
	else if (tag == 4)
		strbuf_addf(sb, "the upload's call %s",
			    id ? model_str(c->m, (uint32_t)id) : "no API record");
}

/*
 * az_describe_cause - "I/O 3.10 s in 120 gaps (read, open); thread 'main' (pid 1 tid 1)".
 */
void az_describe_cause(const struct az_ctx *c, int k, struct strbuf *sb)
{
	const struct az_cause_stat *s = &c->cause[k];
	char b[64];
	int t;

	strbuf_addf(sb, "%s %s (%llu gaps", az_cause_name(k), fmt_duration(b, sizeof(b), (double)s->ns),
		    (unsigned long long)s->gaps);
	t = az_tally_top(&s->names);
	if (t >= 0) {
		strbuf_addstr(sb, "; mostly in ");
		az_describe_key(c, s->names.key[t], sb);
		strbuf_addf(sb, " %s", fmt_duration(b, sizeof(b), (double)s->names.ns[t]));
	}
	t = az_tally_top(&s->threads);
	if (t >= 0) {
		uint32_t pid = (uint32_t)(s->threads.key[t] >> 32), tid = (uint32_t)s->threads.key[t];
		strbuf_addf(sb, "; thread '%s' pid %u tid %u", model_thread_name(c->m, pid, tid), pid, tid);
	}
	strbuf_addch(sb, ')');
}

/* Up to 3 largest gaps of the given causes, largest first. */
size_t az_where_of(const struct az_ctx *c, const int *causes, size_t n, struct interval out[3])
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 3; j++) {
			const struct interval *iv = &c->cause[causes[i]].big[j];
			int dup = 0;
			if (iv->end <= iv->start)
				continue;
			for (size_t q = 0; q < k; q++)
				dup |= out[q].start == iv->start && out[q].end == iv->end;
			if (dup)
				continue;
			if (k < 3) {
				out[k++] = *iv;
			} else {
				size_t min = 0;
				for (size_t q = 1; q < 3; q++)
					if (out[q].end - out[q].start < out[min].end - out[min].start)
						min = q;
				if (iv->end - iv->start > out[min].end - out[min].start)
					out[min] = *iv;
			}
		}
	return k;
}

void az_idle_line(const struct az_ctx *c, struct strbuf *ev)
{
	char b1[64], b2[64];

	strbuf_addf(ev, "GPU idle %s of %s analysed GPU time (%zu GPU%s over %s wall); %zu gaps >= min_gap_us",
		    fmt_duration(b1, sizeof(b1), (double)c->idle_ns),
		    fmt_duration(b2, sizeof(b2), (double)c->unit_wall_ns), c->nunits, c->nunits == 1 ? "" : "s",
		    fmt_duration(b2, sizeof(b2), (double)c->wall_ns), c->ngaps);
	if (c->step_period_s > 0)
		strbuf_addf(ev, "; repeats every %s (%s)",
			    fmt_duration(b1, sizeof(b1), c->step_period_s * 1e9), c->step_source);
	strbuf_addch(ev, '\n');
	if (c->gpu_side_ns)
		strbuf_addf(ev, "%s of the idle time (%llu gaps) had the next work already queued: it waited on "
			    "the GPU side (events, other streams), not on this CPU\n",
			    fmt_duration(b1, sizeof(b1), (double)c->gpu_side_ns), (unsigned long long)c->gpu_side_gaps);
}

void az_steps_line(const struct az_ctx *c, const int *causes, size_t n, struct strbuf *sb)
{
	size_t with = 0, best = 0;
	uint64_t best_ns = 0;
	char b[64];

	if (!c->step_cause || !c->nsteps_nvtx)
		return;
	for (size_t s = 0; s < c->nsteps_nvtx; s++) {
		uint64_t ns = 0;
		for (size_t i = 0; i < n; i++)
			ns += c->step_cause[s * CAUSE__N + (size_t)causes[i]];
		if (ns * 100 >= (c->steps[s].end - c->steps[s].start)) /* at least 1% of the step */
			with++;
		if (ns > best_ns) {
			best_ns = ns;
			best = s;
		}
	}
	if (!best_ns)
		return;
	strbuf_addf(sb, "in %zu of %zu steps (most: %s in the step at %.6f s)%s\n", with, c->nsteps_nvtx,
		    fmt_duration(b, sizeof(b), (double)best_ns), az_rel_s(c, c->steps[best].start),
		    with * 4 <= c->nsteps_nvtx ? ": an occasional stall, not every step" : "");
}

/* What the thread CPU samples say about the "CPU work" parts. */
void az_cpu_line(const struct az_ctx *c, struct strbuf *ev)
{
	double on;

	if (!c->cpu_sampled_ns)
		return;
	on = az_div((double)c->cpu_on_ns, (double)c->cpu_sampled_ns);
	strbuf_addf(ev, "thread CPU samples: the thread ran on a CPU %.0f%% of its CPU-work idle time%s\n", on * 100,
		    on < 0.5 ? " (mostly off-CPU: blocked in calls that are not traced, page faults, or waiting to run)"
			     : " (computing)");
}

