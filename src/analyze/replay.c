/*
 * replay.c - the dependency graph of the run and its what-if replay.
 *
 * The graph (built once per analysis, az_replay_build()):
 *  - the tasks of each CPU thread that launches GPU work, in program
 *    order: its CUDA API calls (a call nested in another, such as a driver
 *    call inside a runtime call, is part of it) and the host time between
 *    them (Python, framework, I/O: a "segment"), with the part of each
 *    segment that is OS-runtime waits and I/O or data-loading frames;
 *  - the GPU operations (kernels, copies, sets) of each stream, in stream
 *    order;
 *  - launch edges (correlation): an operation starts no earlier than its
 *    launch call's start plus a latency;
 *  - stream edges: an operation starts no earlier than the previous one on
 *    its stream ends, plus a spacing (operations recorded overlapping on a
 *    stream, a graph's branches, follow the previous start instead);
 *  - wait edges: a blocking call (synchronise, synchronous copy, cudaFree)
 *    returns no earlier than the GPU operation it waited for ends, plus the
 *    time it took to wake.  Which operation that was is read from the run
 *    itself: the one of its process that ended last before the call
 *    returned (within engine.sync_tolerance_us), launched before the call;
 *  - trigger and join edges: a helper thread's burst of calls after an idle
 *    stretch (engine.max_gap_us) starts after the primary thread's latest
 *    call that ended in it, and the primary thread, after such a stretch,
 *    continues after the helper's latest call (loss.backward() waits for
 *    the autograd engine).
 *
 * Every edge's delay is set from the recorded times so that replaying the
 * graph unchanged gives back every recorded start and end (test_replay):
 * an operation that waited for its launch keeps its launch latency and gets
 * engine.gpu_spacing_us behind its predecessor; one that was queued keeps
 * its gap behind the predecessor (events, other streams) and may start
 * engine.launch_latency_us after its launch at the earliest.  A blocking
 * call that waited returns `wake` after the operation ends (negative where
 * the CPU and GPU clocks disagree by a few us); one that did
 * not wait keeps its duration.
 *
 * A transformation (struct az_xform, the fix a finding recommends) changes
 * durations and drops edges; az_replay_run() then recomputes every start in
 * a discrete-event pass: each thread and stream is a queue of tasks in
 * their recorded order, taken in order of recorded start; a task whose
 * dependency is not done yet parks its queue until it is.  One-off gaps
 * (timeline.c) are never transformed.  The gain of the fix is the time by
 * which each GPU's work, from the window's start, ends earlier, summed over
 * GPUs, over the analysed GPU time.
 *
 * Cost: linear in API calls and GPU operations, plus a heap of queues.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct rp_op {                 /* a GPU operation (8-byte fields first: no padding) */
	uint64_t start, end;       /* recorded */
	uint64_t lat, kk;          /* launch latency, spacing behind prev */
	uint32_t launch;           /* node index of its launch call, or NONE */
	uint32_t prev;             /* previous op on its stream, or NONE */
	uint32_t unit;             /* index into c->units */
	uint32_t row;              /* row in its model table */
	uint8_t kind;              /* 0 kernel, 1 copy, 2 set */
	uint8_t late;              /* it waited for its launch (the stream had drained) */
	uint8_t ovl;               /* it began before the previous op on its stream ended (graph branches) */
};

struct rp_node {               /* a CUDA call on a launching thread (8-byte fields first: no padding) */
	uint64_t start, end;       /* recorded */
	uint64_t seg;              /* host time before it since the previous node ended */
	uint64_t other;            /* of seg: time in I/O, waits, locks, sleeps (osrt) and data-loading frames */
	uint64_t own;              /* blocking calls: least duration */
	int64_t wake;              /* return after the op's end (negative: clock skew, the call returned first) */
	uint64_t trig_delay, join_delay;
	uint32_t api;              /* row in m->api */
	uint32_t wait;             /* op it waited for, or NONE */
	uint32_t thread;           /* queue index */
	uint32_t trig;             /* node of the process's primary thread that set it off, or NONE */
	uint32_t join;             /* primary thread: the helper's node it waited for, or NONE */
};

/* Work arrays of az_replay_run(), sized by the graph; reused by every run. */
struct rp_scratch {
	uint64_t *ns, *ne, *os, *oe; /* replayed node start/end, op start/end */
	uint64_t *cut;             /* per node: host time cut from its segment */
	uint8_t *done;             /* per op: computed */
	uint8_t *keep;             /* per node: inside a one-off, not transformed */
	uint8_t *started;          /* per node: its start is replayed */
};

struct az_replay {
	struct rp_op *op;
	size_t nop;
	struct rp_node *node;
	size_t nnode;
	uint32_t *stream_first;    /* per stream queue: first op; ops of a stream are linked by next */
	uint32_t *op_next;
	size_t nstreams;
	uint32_t *thread_first;    /* per thread queue: first node (nodes of a thread are consecutive) */
	uint32_t *thread_n;
	size_t nthreads;
	uint32_t *node_of_api;     /* m->api row -> node, or NONE */
	uint64_t *unit_last;       /* recorded last end per unit */
	uint64_t *unit_first;      /* recorded first start per unit */
	struct rp_scratch *scratch; /* the replay's work arrays, allocated once and reused by every run */
	size_t nunits;
};

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Stream identity -> last op seen on it: open addressing, grown at half full. */
struct stream_map {
	uint64_t *key;
	uint32_t *last;            /* op index + 1, 0 = empty slot */
	size_t mask, n;
};

static uint32_t *stream_slot(struct stream_map *h, uint64_t key)
{
	size_t i;

	if (2 * (h->n + 1) > h->mask + 1) {
		struct stream_map g = { 0 };
		g.mask = h->mask ? 2 * h->mask + 1 : 63;
		g.key = xcalloc(g.mask + 1, sizeof(*g.key));
		g.last = xcalloc(g.mask + 1, sizeof(*g.last));
		for (size_t k = 0; h->mask && k <= h->mask; k++)
			if (h->last[k]) {
				*stream_slot(&g, h->key[k]) = h->last[k];
				g.n++;
			}
		free(h->key);
		free(h->last);
		*h = g;
	}
	for (i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & h->mask; h->last[i] && h->key[i] != key;
	     i = (i + 1) & h->mask)
		;
	if (!h->last[i]) {
		h->key[i] = key;
		h->n++;
	}
	return &h->last[i];
}

/* model_thread() with a one-entry cache: consecutive rows are mostly one thread's. */
static const struct model_thread *thread_cached(const struct model *m, uint32_t pid, uint32_t tid,
						const struct model_thread **last)
{
	if (*last && (*last)->pid == pid && (*last)->tid == tid)
		return *last;
	return *last = model_thread(m, pid, tid);
}

struct az_replay *az_replay_build(struct az_ctx *c)
{
	const struct model *m = c->m;
	struct az_replay *rp;
	const struct model_thread *tcache = NULL;
	uint8_t *launcher;
	size_t n = 0;
	uint64_t spacing = (uint64_t)(az_engine_param(c, "gpu_spacing_us") * 1e3);
	uint64_t lat0 = (uint64_t)(az_engine_param(c, "launch_latency_us") * 1e3);
	uint64_t tol = (uint64_t)(az_engine_param(c, "sync_tolerance_us") * 1e3);

	if (!c->has_gpu || c->win.n != 1 || !(m->has & MODEL_HAS_API) || m->api.n >= NONE ||
	    m->kernels.n + m->memcpys.n + m->memsets.n >= NONE)
		return NULL;
	rp = xcalloc(1, sizeof(*rp));
	rp->nunits = c->nunits;
	rp->unit_last = xcalloc(c->nunits + 1, sizeof(uint64_t));
	rp->unit_first = xmalloc((c->nunits + 1) * sizeof(uint64_t));
	for (size_t u = 0; u <= c->nunits; u++)
		rp->unit_first[u] = UINT64_MAX;
	rp->op = xmalloc((m->kernels.n + m->memcpys.n + m->memsets.n + 1) * sizeof(*rp->op));
	rp->node_of_api = xmalloc((m->api.n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < m->api.n; i++)
		rp->node_of_api[i] = NONE;
	launcher = xcalloc(m->threads.n + 1, 1);

	/*
	 * GPU operations in the window in start order (a three-way merge of the
	 * sorted tables), each linked to the previous one on its stream, with
	 * its launch row (turned into a node index below).
	 */
	{
		size_t ik = 0, ic = 0, is = 0;
		struct stream_map sm = { 0 };
		rp->op_next = xmalloc((m->kernels.n + m->memcpys.n + m->memsets.n + 1) * sizeof(uint32_t));
		rp->stream_first = xmalloc((m->kernels.n + m->memcpys.n + m->memsets.n + 1) * sizeof(uint32_t));
		for (;;) {
			uint64_t sk = ik < m->kernels.n ? m->kernels.v[ik].start : UINT64_MAX;
			uint64_t sc = ic < m->memcpys.n ? m->memcpys.v[ic].start : UINT64_MAX;
			uint64_t ss = is < m->memsets.n ? m->memsets.v[is].start : UINT64_MAX;
			uint64_t start, end;
			uint32_t pid, device, stream, corr, row, u, *slot;
			const struct trace_api *la;
			struct az_unit *un;
			struct rp_op *o;
			int kind;
			if (sk == UINT64_MAX && sc == UINT64_MAX && ss == UINT64_MAX)
				break;
#define TAKE(tab, idx, kd)                                                   \
	do {                                                                  \
		const __typeof__((tab).v[0]) *x = &(tab).v[(idx)];              \
		start = x->start;                                             \
		end = x->end;                                                 \
		pid = x->pid;                                                 \
		device = x->device;                                           \
		stream = x->stream;                                           \
		corr = x->correlation;                                        \
		row = (uint32_t)(idx)++;                                      \
		kind = (kd);                                                  \
	} while (0)
			if (sk <= sc && sk <= ss)
				TAKE(m->kernels, ik, 0);
			else if (sc <= ss)
				TAKE(m->memcpys, ic, 1);
			else
				TAKE(m->memsets, is, 2);
#undef TAKE
			if (start < c->lo || start >= c->hi || !(un = az_unit_find(c, pid, device)))
				continue;
			u = (uint32_t)(un - c->units);
			o = &rp->op[n];
			memset(o, 0, sizeof(*o));
			o->start = start;
			o->end = end > start ? end : start;
			o->unit = u;
			o->kind = (uint8_t)kind;
			o->row = row;
			o->prev = NONE;
			o->launch = NONE;
			la = model_corr_find(&c->corr, m, pid, corr);
			if (la && la->start <= start) {
				const struct model_thread *th = thread_cached(m, la->pid, la->tid, &tcache);
				o->launch = (uint32_t)(la - m->api.v); /* api row for now */
				if (th)
					launcher[th - m->threads.v] = 1;
			}
			rp->op_next[n] = NONE;
			slot = stream_slot(&sm, (uint64_t)pid << 40 ^ (uint64_t)device << 32 ^ stream);
			if (*slot) {
				o->prev = *slot - 1;
				rp->op_next[*slot - 1] = (uint32_t)n;
			} else {
				rp->stream_first[rp->nstreams++] = (uint32_t)n;
			}
			*slot = (uint32_t)n + 1;
			if (o->end > rp->unit_last[u])
				rp->unit_last[u] = o->end;
			if (o->start < rp->unit_first[u])
				rp->unit_first[u] = o->start;
			n++;
		}
		free(sm.key);
		free(sm.last);
	}
	rp->nop = n;

	/* the launching threads' counted API calls in the window, in program order */
	{
		uint64_t *prev_end = xcalloc(m->threads.n + 1, sizeof(uint64_t));
		uint32_t *qid = xmalloc((m->threads.n + 1) * sizeof(uint32_t));
		for (size_t t = 0; t < m->threads.n; t++)
			qid[t] = NONE;
		/* count per thread first so that a thread's nodes are consecutive */
		{
			size_t *cnt = xcalloc(m->threads.n + 1, sizeof(size_t)), tot = 0;
			size_t *pos;
			const struct model_thread *th;
			for (size_t i = 0; i < m->api.n; i++) {
				const struct trace_api *a = &m->api.v[i];
				if (a->end <= c->lo || a->start >= c->hi)
					continue;
				if (!(th = thread_cached(m, a->pid, a->tid, &tcache)) || !launcher[th - m->threads.v])
					continue;
				cnt[th - m->threads.v]++;
			}
			pos = xmalloc((m->threads.n + 1) * sizeof(size_t));
			rp->thread_first = xmalloc((m->threads.n + 1) * sizeof(uint32_t));
			rp->thread_n = xmalloc((m->threads.n + 1) * sizeof(uint32_t));
			for (size_t t = 0; t < m->threads.n; t++) {
				pos[t] = tot;
				if (cnt[t]) {
					qid[t] = (uint32_t)rp->nthreads;
					rp->thread_first[rp->nthreads] = (uint32_t)tot;
					rp->thread_n[rp->nthreads++] = (uint32_t)cnt[t];
				}
				tot += cnt[t];
			}
			rp->node = xcalloc(tot + 1, sizeof(*rp->node));
			rp->nnode = tot;
			for (size_t i = 0; i < m->api.n; i++) {
				const struct trace_api *a = &m->api.v[i];
				struct rp_node *d;
				size_t t;
				if (a->end <= c->lo || a->start >= c->hi)
					continue;
				if (!(th = thread_cached(m, a->pid, a->tid, &tcache)) || !launcher[th - m->threads.v])
					continue;
				t = (size_t)(th - m->threads.v);
				if (a->start < prev_end[t]) {
					/* nested in the previous call (a driver call inside a runtime call): its time is that call's */
					if (pos[t] > rp->thread_first[qid[t]])
						rp->node_of_api[i] = (uint32_t)(pos[t] - 1);
					continue;
				}
				d = &rp->node[pos[t]++];
				d->start = a->start;
				d->end = a->end > a->start ? a->end : a->start;
				/* the first call's host time runs from the window's start */
				d->seg = prev_end[t] ? d->start - prev_end[t] : d->start > c->lo ? d->start - c->lo : 0;
				d->api = (uint32_t)i;
				d->wait = NONE;
				d->thread = qid[t];
				rp->node_of_api[i] = (uint32_t)(d - rp->node);
				prev_end[t] = d->end;
			}
			/* nested calls skipped: shrink each thread's count to what was filled */
			for (size_t t = 0; t < m->threads.n; t++)
				if (qid[t] != NONE)
					rp->thread_n[qid[t]] = (uint32_t)(pos[t] - rp->thread_first[qid[t]]);
			free(cnt);
			free(pos);
		}
		free(prev_end);
		free(qid);
	}

	/* launch rows -> nodes; stream order; edge delays from the recorded times */
	for (size_t i = 0; i < n; i++)
		if (rp->op[i].launch != NONE)
			rp->op[i].launch = rp->node_of_api[rp->op[i].launch];
	for (size_t i = 0; i < n; i++) {
		struct rp_op *o = &rp->op[i];
		const struct rp_op *p = o->prev != NONE ? &rp->op[o->prev] : NULL;
		const struct rp_node *l = o->launch != NONE ? &rp->node[o->launch] : NULL;
		uint64_t since_prev = p && o->start > p->end ? o->start - p->end : 0;
		/*
		 * Operations of one stream run in order, except where the record
		 * shows them overlapping (kernels of a graph's parallel branches
		 * carry the launch's stream): those follow the previous start.
		 */
		if (p && o->start < p->end) {
			o->ovl = 1;
			o->kk = o->start - p->start;
			o->lat = l ? umin(o->start - l->start, lat0) : 0;
			continue;
		}
		/*
		 * Launch-late: the stream drained before the launch call was
		 * done (for a call that blocks until its copy ends, before the
		 * call could have queued it: start + engine.launch_latency_us).
		 */
		int late = l && (!p || (p->launch != o->launch &&
				       (az_api_blocks((int)c->api_class[m->api.v[l->api].name_id])
					? l->start + lat0 > p->end : l->end > p->end)));
		o->late = (uint8_t)late;
		if (late) {
			/* waited for its launch: the launch sets its start */
			o->lat = o->start - l->start;
			o->kk = umin(since_prev, spacing);
		} else {
			/* queued: the stream (or an event on another) set its start */
			o->kk = since_prev;
			o->lat = l ? umin(o->start - l->start, lat0) : 0;
		}
	}

	/*
	 * Blocking calls: the operation each waited for, the one of its process
	 * that ended last at or before the call's end + tolerance, launched
	 * before the call began.  Operations are in start order: look back from
	 * the last one that started by then, over at most 256 of them.
	 */
	for (size_t j = 0; j < rp->nnode; j++) {
		struct rp_node *d = &rp->node[j];
		const struct trace_api *a = &m->api.v[d->api];
		size_t lo = 0, hi = n, k;
		uint64_t best = 0, lim = d->end + tol;
		uint32_t w = NONE;
		if (!az_api_blocks((int)c->api_class[a->name_id]))
			continue;
		d->own = d->end - d->start;
		while (lo < hi) { /* first op starting after lim */
			size_t mid = (lo + hi) / 2;
			if (rp->op[mid].start <= lim)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k > 0 && lo - k < 256; k--) {
			const struct rp_op *o = &rp->op[k - 1];
			if (c->units[o->unit].pid != a->pid || o->end > lim || o->end <= best)
				continue;
			if (o->launch != NONE && rp->node[o->launch].start > d->start)
				continue; /* launched after the call began: not what it waited for */
			best = o->end;
			w = (uint32_t)(k - 1);
		}
		if (w != NONE && best > d->start) {
			d->wait = w;
			d->wake = (int64_t)d->end - (int64_t)best;
			d->own = d->wake > 0 ? (uint64_t)d->wake : 0;
		}
	}
	/* the part of each segment that is not host code: OS-runtime waits and I/O, data-loading frames */
	{
		uint32_t *first_node = xmalloc((m->threads.n + 1) * sizeof(uint32_t));
		uint32_t *count = xcalloc(m->threads.n + 1, sizeof(uint32_t));
		for (size_t t2 = 0; t2 < m->threads.n; t2++)
			first_node[t2] = NONE;
		for (size_t q = 0; q < rp->nthreads; q++) {
			const struct trace_api *a = &m->api.v[rp->node[rp->thread_first[q]].api];
			const struct model_thread *th = model_thread(m, a->pid, a->tid);
			if (th) {
				first_node[th - m->threads.v] = rp->thread_first[q];
				count[th - m->threads.v] = rp->thread_n[q];
			}
		}
#define ADD_OTHER(pid_, tid_, s_, e_)                                                       \
	do {                                                                                \
		const struct model_thread *th_ = thread_cached(m, (pid_), (tid_), &tcache); \
		size_t t_, lo_, hi_;                                                         \
		if (!th_ || first_node[t_ = (size_t)(th_ - m->threads.v)] == NONE)           \
			break;                                                               \
		lo_ = first_node[t_];                                                        \
		hi_ = lo_ + count[t_];                                                       \
		while (lo_ < hi_) { /* first node starting after the row starts */           \
			size_t mid_ = (lo_ + hi_) / 2;                                       \
			if (rp->node[mid_].start <= (s_))                                    \
				lo_ = mid_ + 1;                                              \
			else                                                                 \
				hi_ = mid_;                                                  \
		}                                                                            \
		if (lo_ < first_node[t_] + count[t_]) {                                      \
			struct rp_node *d_ = &rp->node[lo_];                                 \
			uint64_t a_ = umax((s_), d_->start - d_->seg), b_ = umin((e_), d_->start); \
			if (b_ > a_)                                                         \
				d_->other = umin(d_->seg, d_->other + (b_ - a_));            \
		}                                                                            \
	} while (0)
		for (size_t i = 0; i < m->osrt.n; i++) {
			const struct trace_osrt *r = &m->osrt.v[i];
			if (r->end <= c->lo || r->start >= c->hi || az_osrt_cause(r->func) < 0)
				continue;
			ADD_OTHER(r->pid, r->tid, r->start, r->end);
		}
		for (size_t i = 0; i < m->nvtx.n; i++) {
			const struct trace_nvtx_range *r = &m->nvtx.v[i];
			if (r->end <= c->lo || r->start >= c->hi || r->name_id >= m->str.nr)
				continue;
			if (az_is_data_id(c, r->name_id))
				ADD_OTHER(r->pid, r->tid, r->start, r->end);
		}
#undef ADD_OTHER
		free(first_node);
		free(count);
	}

	/*
	 * Trigger edges.  A helper thread that launches GPU work (PyTorch's
	 * autograd engine, a pin-memory or a communication thread) idles until
	 * the process's primary thread (the one that launched the window's
	 * first operation) hands it work: a burst of its calls after an idle
	 * stretch of at least engine.max_gap_us starts after the primary
	 * thread's latest call that ended within that stretch, as recorded.
	 */
	{
		uint64_t idle = (uint64_t)(az_engine_param(c, "max_gap_us") * 1e3);
		uint32_t first_op = NONE;
		for (size_t i = 0; i < n; i++)
			if (rp->op[i].launch != NONE && (first_op == NONE || rp->op[i].start < rp->op[first_op].start))
				first_op = (uint32_t)i;
		for (size_t j = 0; j < rp->nnode; j++)
			rp->node[j].trig = rp->node[j].join = NONE;
		if (first_op != NONE) {
			uint32_t prim = rp->node[rp->op[first_op].launch].thread;
			size_t f0 = rp->thread_first[prim], f1 = f0 + rp->thread_n[prim];
			uint32_t pid = m->api.v[rp->node[f0].api].pid;
			for (size_t j = 0; j < rp->nnode; j++) {
				struct rp_node *d = &rp->node[j];
				size_t lo = f0, hi = f1;
				int head = j == rp->thread_first[d->thread];
				if (d->thread == prim || (!head && d->seg < idle) || m->api.v[d->api].pid != pid)
					continue;
				while (lo < hi) { /* first primary node ending after d->start */
					size_t mid = (lo + hi) / 2;
					if (rp->node[mid].end <= d->start)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo > f0 && (head || rp->node[lo - 1].end > d->start - d->seg)) {
					d->trig = (uint32_t)(lo - 1);
					d->trig_delay = d->start - rp->node[lo - 1].end;
				}
			}
			/*
			 * Join edges, the other way: a call of the primary thread
			 * after an idle stretch in which a helper thread of its
			 * process worked (loss.backward() waits for the autograd
			 * engine) comes after the helper's latest call that ended
			 * in that stretch, as recorded.
			 */
			for (size_t j = f0; j < f1; j++) {
				struct rp_node *d = &rp->node[j];
				uint64_t best = 0;
				if (j == f0 || d->seg < idle)
					continue;
				for (size_t q = 0; q < rp->nthreads; q++) {
					size_t g0 = rp->thread_first[q], g1 = g0 + rp->thread_n[q], lo = g0, hi = g1;
					if (q == prim || m->api.v[rp->node[g0].api].pid != pid)
						continue;
					while (lo < hi) { /* first helper node ending after d->start */
						size_t mid = (lo + hi) / 2;
						if (rp->node[mid].end <= d->start)
							lo = mid + 1;
						else
							hi = mid;
					}
					if (lo > g0 && rp->node[lo - 1].end > d->start - d->seg &&
					    rp->node[lo - 1].end > best) {
						best = rp->node[lo - 1].end;
						d->join = (uint32_t)(lo - 1);
						d->join_delay = d->start - best;
					}
				}
			}
		}
	}
	free(launcher);
	return rp;
}

struct az_replay *az_replay_get(struct az_ctx *c)
{
	if (!c->replay_tried) {
		c->replay_tried = 1;
		c->replay = az_replay_build(c);
	}
	return c->replay;
}

void az_replay_free(struct az_replay *rp)
{
	if (!rp)
		return;
	free(rp->op);
	free(rp->node);
	free(rp->stream_first);
	free(rp->op_next);
	free(rp->thread_first);
	free(rp->thread_n);
	free(rp->node_of_api);
	free(rp->unit_last);
	free(rp->unit_first);
	if (rp->scratch) {
		free(rp->scratch->ns);
		free(rp->scratch->ne);
		free(rp->scratch->os);
		free(rp->scratch->oe);
		free(rp->scratch->cut);
		free(rp->scratch->done);
		free(rp->scratch->keep);
		free(rp->scratch->started);
		free(rp->scratch);
	}
	free(rp);
}

int az_replay_op_row(const struct az_replay *rp, uint32_t op, int *kind, uint32_t *row)
{
	if (!rp || op >= rp->nop)
		return -1;
	*kind = rp->op[op].kind;
	*row = rp->op[op].row;
	return 0;
}

uint64_t az_replay_host_code(const struct az_replay *rp, uint32_t node)
{
	const struct rp_node *d;

	if (!rp || node >= rp->nnode)
		return 0;
	d = &rp->node[node];
	return d->seg > d->other ? d->seg - d->other : 0;
}

uint32_t az_replay_node_of_api(const struct az_replay *rp, uint32_t api_row)
{
	return rp && api_row < NONE ? rp->node_of_api[api_row] : NONE;
}

/* ---- the pass ---- */

struct queue {
	uint64_t key;              /* recorded start of its next task */
	uint32_t q;                /* < nthreads: thread; else stream q - nthreads */
};

struct heap {
	struct queue *v;
	size_t n;
};

static void heap_push(struct heap *h, struct queue x)
{
	size_t i = h->n++;

	while (i) {
		size_t p = (i - 1) / 2;
		if (h->v[p].key <= x.key)
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = x;
}

static struct queue heap_pop(struct heap *h)
{
	struct queue top = h->v[0], x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		uint64_t sk = x.key;
		if (l < h->n && h->v[l].key < sk) {
			s = l;
			sk = h->v[l].key;
		}
		if (r < h->n && h->v[r].key < sk)
			s = r;
		if (s == i)
			break;
		h->v[i] = h->v[s];
		i = s;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* Streams parked on the launch call @j may go once it has started. */
static void wake_streams(const struct az_replay *rp, struct heap *h, const uint32_t *pos, uint32_t *park,
			 size_t *nparked, size_t nq, uint32_t j, const uint8_t *started)
{
	if (!*nparked || !started[j])
		return;
	for (size_t p = rp->nthreads; p < nq; p++)
		if (park[p] == j) {
			struct queue w = { rp->op[pos[p]].start, (uint32_t)p };
			park[p] = NONE;
			(*nparked)--;
			heap_push(h, w);
		}
}

/*
 * az_replay_run - replay the graph under @x (NULL: unchanged).  Returns the
 * time by which the GPUs' last operations end earlier, summed over units
 * (0 when nothing changed; negative values clamp to 0).  *unit_saved, when
 * given, gets the same per unit (c->nunits entries).
 */
uint64_t az_replay_run(struct az_ctx *c, struct az_replay *rp, const struct az_xform *x,
		       int64_t *unit_saved)
{
	uint64_t *ns, *ne, *os, *oe;         /* replayed node start/end, op start/end */
	uint8_t *done;                       /* ops: computed */
	uint32_t *pos;                       /* per queue: next task (thread: node index; stream: op index) */
	uint32_t *park;                      /* per queue: parked on (threads: an op; streams: a node), or NONE */
	uint8_t *force;                      /* per stream: replay the next op without its launch edge */
	uint32_t *parkn;                     /* per thread: parked on a call of the primary thread, or NONE */
	uint8_t *forcen;                     /* per thread: replay the next call without its trigger edge */
	uint64_t *cut;                       /* per node: host time cut from its segment */
	uint8_t *keep;                       /* per node: inside a one-off, not transformed */
	uint8_t *started;                    /* per node: its start is replayed (what it launches may run) */
	uint64_t *last, *first;
	size_t nq = rp->nthreads + rp->nstreams, nparked = 0;
	struct heap h;
	uint64_t saved = 0;

	if (!rp->scratch) {
		struct rp_scratch *s = xcalloc(1, sizeof(*s));
		s->ns = xmalloc((rp->nnode + 1) * sizeof(uint64_t));
		s->ne = xmalloc((rp->nnode + 1) * sizeof(uint64_t));
		s->os = xmalloc((rp->nop + 1) * sizeof(uint64_t));
		s->oe = xmalloc((rp->nop + 1) * sizeof(uint64_t));
		s->cut = xmalloc((rp->nnode + 1) * sizeof(uint64_t));
		s->done = xmalloc(rp->nop + 1);
		s->keep = xmalloc(rp->nnode + 1);
		s->started = xmalloc(rp->nnode + 1);
		rp->scratch = s; /* made on the first run: the graph itself stays as built */
	}
	ns = rp->scratch->ns;
	ne = rp->scratch->ne;
	os = rp->scratch->os;
	oe = rp->scratch->oe;
	done = rp->scratch->done;
	memset(done, 0, rp->nop + 1);
	pos = xmalloc((nq + 1) * sizeof(uint32_t));
	park = xmalloc((nq + 1) * sizeof(uint32_t));
	force = xcalloc(nq + 1, 1);
	parkn = xmalloc((nq + 1) * sizeof(uint32_t));
	forcen = xcalloc(nq + 1, 1);
	last = xcalloc(rp->nunits + 1, sizeof(uint64_t));
	first = xmalloc((rp->nunits + 1) * sizeof(uint64_t));
	for (size_t u = 0; u <= rp->nunits; u++)
		first[u] = UINT64_MAX;
	cut = rp->scratch->cut;
	memset(cut, 0, (rp->nnode + 1) * sizeof(uint64_t));
	h.v = xmalloc((nq + 1) * sizeof(*h.v));
	h.n = 0;

	/* one-offs stay as recorded: the calls and host time inside a one-off gap are not transformed */
	keep = rp->scratch->keep;
	started = rp->scratch->started;
	memset(keep, 0, rp->nnode + 1);
	memset(started, 0, rp->nnode + 1);
	for (size_t g = 0; x && g < c->ngaps; g++) {
		const struct az_gap *gp = &c->gaps[g];
		uint32_t j;
		if (!gp->oneoff || gp->api == NONE || (j = rp->node_of_api[gp->api]) == NONE)
			continue;
		for (uint32_t q = j;; q--) {
			keep[q] = 1;
			if (rp->node[q].start <= gp->start || q == rp->thread_first[rp->node[q].thread])
				break;
		}
	}
	/* host time the transformation removes, gap by gap (spilled backwards inside the gap) */
	if (x && x->causes) {
		for (size_t g = 0; g < c->ngaps; g++) {
			const struct az_gap *gp = &c->gaps[g];
			uint64_t want = 0;
			uint32_t j;
			if (gp->oneoff || gp->api == NONE || (j = rp->node_of_api[gp->api]) == NONE)
				continue;
			for (int k = 0; k < CAUSE__N; k++)
				if (x->causes & (1u << k))
					want += gp->part[k];
			/* from the launch back to the gap's start: segments, then non-blocking calls */
			for (uint32_t q = j; want; q--) {
				const struct rp_node *d = &rp->node[q];
				uint64_t seg_lo = d->start - d->seg, avail;
				if (d->start <= gp->start)
					break;
				avail = d->start - umax(seg_lo, gp->start);
				avail = avail > cut[q] ? avail - cut[q] : 0;
				avail = umin(avail, want);
				cut[q] += avail;
				want -= avail;
				if (q == rp->thread_first[d->thread] || seg_lo <= gp->start)
					break;
			}
		}
	}

	for (size_t q = 0; q < nq; q++) {
		struct queue e;
		park[q] = NONE;
		parkn[q] = NONE;
		if (q < rp->nthreads) {
			pos[q] = rp->thread_first[q];
			e.key = rp->node[pos[q]].start;
		} else {
			pos[q] = rp->stream_first[q - rp->nthreads];
			e.key = rp->op[pos[q]].start;
		}
		e.q = (uint32_t)q;
		heap_push(&h, e);
	}
	while (h.n || nparked) {
		struct queue e;
		uint32_t q;
		if (!h.n) {
			/* only parked queues left (a dependency the recorded order did not respect): release one */
			for (q = 0; q < nq && park[q] == NONE && (q >= rp->nthreads || parkn[q] == NONE); q++)
				;
			if (q == nq)
				break;
			if (q < rp->nthreads && parkn[q] != NONE) {
				forcen[q] = 1; /* replay this call without its trigger edge */
				parkn[q] = NONE;
			} else if (q < rp->nthreads) {
				if (!done[park[q]]) {
					os[park[q]] = rp->op[park[q]].start;
					oe[park[q]] = rp->op[park[q]].end;
					done[park[q]] = 1;
				}
			} else {
				force[q] = 1; /* replay this op without its launch edge */
			}
			if (park[q] != NONE) {
				park[q] = NONE;
			}
			nparked--;
			e.q = q;
			e.key = 0;
		} else {
			e = heap_pop(&h);
		}
		q = e.q;
		if (q < rp->nthreads) {
			uint32_t j = pos[q];
			const struct rp_node *d = &rp->node[j];
			uint64_t s, dur, seg;
			int nodep = 0;
			seg = d->seg > cut[j] ? d->seg - cut[j] : 0;
			if (x && x->seg && !keep[j])
				seg = x->seg(x->ctx, c, rp, j, d->api, seg);
			if (d->trig != NONE && !forcen[q]) {
				const struct rp_node *tr = &rp->node[d->trig];
				if (pos[tr->thread] <= d->trig) {
					parkn[q] = d->trig;
					nparked++;
					continue;
				}
				s = ne[d->trig] + d->trig_delay;
				if (j != rp->thread_first[q])
					s = umax(s, ne[j - 1]);
			} else if (d->join != NONE && !forcen[q]) {
				const struct rp_node *jn = &rp->node[d->join];
				if (pos[jn->thread] <= d->join) {
					parkn[q] = d->join;
					nparked++;
					continue;
				}
				/* it waited for the helper; what it did after that, at most its (cut) host time */
				s = umax(ne[j - 1], ne[d->join] + umin(d->join_delay, seg));
			} else {
				s = j == rp->thread_first[q] ? d->start - d->seg + seg : ne[j - 1] + seg;
			}
			forcen[q] = 0;
			dur = d->end - d->start;
			if (x && x->call && !keep[j])
				dur = x->call(x->ctx, c, rp, j, d->api, dur, &nodep);
			if (d->wait != NONE && !nodep) {
				if (!done[d->wait]) {
					/* started: what it launched may run; it returns when the op is done */
					ns[j] = s;
					started[j] = 1;
					park[q] = d->wait;
					nparked++;
					wake_streams(rp, &h, pos, park, &nparked, nq, j, started);
					continue;
				}
				ns[j] = s;
				ne[j] = umax(s + umin(d->own, dur), (uint64_t)((int64_t)oe[d->wait] + d->wake));
			} else {
				ns[j] = s;
				ne[j] = s + (d->wait != NONE ? umin(d->own, dur) : dur);
			}
			pos[q]++;
			/* wake the queues parked on this call */
			if (nparked)
				for (size_t p = 0; p < rp->nthreads; p++)
					if (parkn[p] == j) {
						struct queue w = { rp->node[pos[p]].start, (uint32_t)p };
						parkn[p] = NONE;
						nparked--;
						heap_push(&h, w);
					}
			started[j] = 1;
			wake_streams(rp, &h, pos, park, &nparked, nq, j, started);
			if (pos[q] < rp->thread_first[q] + rp->thread_n[q]) {
				e.key = rp->node[pos[q]].start;
				heap_push(&h, e);
			}
		} else {
			uint32_t i = pos[q];
			const struct rp_op *o = &rp->op[i];
			uint64_t s = 0, dur = o->end - o->start, lat = o->lat;
			int have = 0;
			if (o->launch != NONE && !force[q]) {
				/* its launch call must have been replayed: else park behind it */
				if (pos[rp->node[o->launch].thread] <= o->launch && !started[o->launch]) {
					park[q] = o->launch;
					nparked++;
					continue;
				}
				if (x && x->latency)
					lat = x->latency(x->ctx, c, rp, i, lat);
				s = ns[o->launch] + lat;
				have = 1;
			}
			if (o->prev != NONE) {
				uint64_t kk = o->kk;
				if (x && x->spacing && o->late && !o->ovl)
					kk = x->spacing(x->ctx, c, rp, i, kk);
				uint64_t base = o->ovl ? os[o->prev] : oe[o->prev];
				s = have ? umax(s, base + kk) : base + kk;
				have = 1;
			}
			if (!have)
				s = o->start;
			if (x && x->op)
				dur = x->op(x->ctx, c, rp, i, o->kind, o->row, dur);
			force[q] = 0;
			os[i] = s;
			oe[i] = s + dur;
			done[i] = 1;
			if (oe[i] > last[o->unit])
				last[o->unit] = oe[i];
			if (s < first[o->unit])
				first[o->unit] = s;
			/* wake the queues parked on this op */
			if (nparked)
				for (size_t p = 0; p < rp->nthreads; p++)
					if (park[p] == i) {
						struct queue w = { rp->node[pos[p]].start, (uint32_t)p };
						park[p] = NONE;
						nparked--;
						heap_push(&h, w);
					}
			if (rp->op_next[i] != NONE) {
				pos[q] = rp->op_next[i];
				e.key = rp->op[pos[q]].start;
				heap_push(&h, e);
			}
		}
	}
	for (size_t u = 0; u < rp->nunits; u++) {
		/*
		 * The span from the window's start to the last end, as recorded and
		 * as replayed; a replayed start before the window's (work that
		 * waited for something before it, all shifted) counts from itself,
		 * so that a shift of everything saves nothing.
		 */
		uint64_t from = first[u] < c->lo ? first[u] : c->lo;
		int64_t d = rp->unit_first[u] == UINT64_MAX ? 0
			: ((int64_t)rp->unit_last[u] - (int64_t)c->lo) - ((int64_t)last[u] - (int64_t)from);
		if (unit_saved)
			unit_saved[u] = d;
		if (d > 0)
			saved += (uint64_t)d;
	}
	free(pos);
	free(park);
	free(force);
	free(parkn);
	free(forcen);
	free(last);
	free(first);
	free(h.v);
	return saved;
}
