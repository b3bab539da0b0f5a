/*
 * captures.c - a report's captures (captures.h): pairing the capture edges
 * of each process and merging the windows that overlap across processes.
 */
#include "captures.h"
#include "../model/model.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

const char *capture_trigger_name(unsigned trigger)
{
	static const char *const names[TRACE_TRIGGER__COUNT] = {
		[TRACE_TRIGGER_UNKNOWN] = "-", [TRACE_TRIGGER_COMMAND] = "command",
		[TRACE_TRIGGER_NVTX] = "nvtx", [TRACE_TRIGGER_PROFILER] = "cudaProfilerApi",
		[TRACE_TRIGGER_TIMED] = "timed", [TRACE_TRIGGER_STEP_TIME] = "step_time", [TRACE_TRIGGER_GPU] = "gpu",
	};

	return trigger < TRACE_TRIGGER__COUNT && names[trigger] ? names[trigger] : "-";
}

static int cmp_start(const void *a, const void *b)
{
	const struct capture *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

size_t captures_of(const struct model *m, struct capture **out)
{
	struct capture *w = NULL, *g = NULL;
	size_t nw = 0, aw = 0, ng = 0, ag = 0;

	/* each process's windows: a start and its process's next stop (edges are sorted by time) */
	for (size_t i = 0; i < m->captures.n; i++) {
		const struct trace_capture *c = &m->captures.v[i];
		if (c->what != TRACE_CAPTURE_START)
			continue;
		ALLOC_GROW(w, nw + 1, aw);
		memset(&w[nw], 0, sizeof(w[nw]));
		w[nw].start = c->time;
		w[nw].ring_from = c->ring_from;
		w[nw].trigger = c->trigger;
		w[nw].nprocs = 1;
		for (size_t j = i + 1; j < m->captures.n; j++) {
			const struct trace_capture *e = &m->captures.v[j];
			if (e->pid != c->pid)
				continue;
			if (e->what == TRACE_CAPTURE_STOP)
				w[nw].stop = e->time;
			break;   /* a stop, or another start of an unclosed window */
		}
		nw++;
	}
	if (nw)
		qsort(w, nw, sizeof(*w), cmp_start);
	/* windows that overlap in time are one capture */
	for (size_t i = 0; i < nw; i++) {
		struct capture *last = ng ? &g[ng - 1] : NULL;
		uint64_t last_end = last ? (last->stop ? last->stop : UINT64_MAX) : 0;
		if (last && w[i].start <= last_end) {
			if (!w[i].stop || (last->stop && w[i].stop > last->stop))
				last->stop = w[i].stop;
			if (w[i].ring_from && (!last->ring_from || w[i].ring_from < last->ring_from))
				last->ring_from = w[i].ring_from;
			last->nprocs++;
			continue;
		}
		ALLOC_GROW(g, ng + 1, ag);
		g[ng++] = w[i];
	}
	free(w);
	*out = g;
	return ng;
}

static int capture_clip(struct model *m, unsigned k, int with_ring)
{
	struct capture *c;
	size_t n = captures_of(m, &c);
	uint64_t lo, hi;

	if (!k || k > n) {
		free(c);
		if (!n)
			return error("report '%s' has no captures", m->path ? m->path : "-");
		return error("report '%s' has %zu capture%s, not %u", m->path ? m->path : "-", n,
			     n == 1 ? "" : "s", k);
	}
	lo = with_ring && c[k - 1].ring_from && c[k - 1].ring_from < c[k - 1].start ? c[k - 1].ring_from
										    : c[k - 1].start;
	hi = c[k - 1].stop ? c[k - 1].stop : m->t_max;
	free(c);
	model_clip(m, lo, hi);
	if (!with_ring) {
		/* the run's span is the capture's: a comparison counts its time only */
		if (m->t_min < lo)
			m->t_min = lo;
		if (m->t_max > hi)
			m->t_max = hi;
	}
	return 0;
}

int capture_keep(struct model *m, unsigned k)
{
	return capture_clip(m, k, 1);
}

int capture_only(struct model *m, unsigned k)
{
	return capture_clip(m, k, 0);
}
