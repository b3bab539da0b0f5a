/*
 * critpath.c - HTA's critical-path analysis on gpuscope's model.
 *
 * The steps follow HTA's CPGraph (hta/analyzers/critical_path_analysis.py):
 * events of the window -> nodes sorted by time -> edges from each host
 * thread's call stack -> edges from the GPU rows in time order -> longest
 * path.  Where HTA's result depends on an order (ties in time, the order in
 * which networkx visits nodes and predecessors), this file reproduces that
 * order and says so; the golden values of HTA's tests depend on it.
 *
 * HTA's dataframe index (the event's position in the trace file) breaks
 * ties in several sorts.  Here an event's index is its position in
 * cp->events: host ranges, then runtime calls, then kernels, copies, sets
 * and syncs, each table in the model's order (by start, then end).
 */
#include "critpath.h"

#include "../model/model.h"
#include "../util/util.h"

#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/*
 * HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a gap between two kernels of one
 * stream of 1500 us or more is not a kernel-kernel delay (the second kernel
 * waited for something else).
 */
#define CP_KERNEL_KERNEL_MAX_GAP_US 1500

/* Runtime calls that queue work on a stream (HTA's runtime launch events). */
static const char *const launch_names[] = {
	"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
	"cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel",
	"runFunction - job_prep_and_submit_for_execution",
};

/* Calls that block the host until the GPU catches up: their own time weighs 0. */
static const char *const blocking_names[] = {
	"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
	"cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync",
};

static const char *const edge_names[CP_EDGE__COUNT] = {
	[CP_EDGE_OPERATOR] = "critical_path_operator",
	[CP_EDGE_DEPENDENCY] = "critical_path_dependency",
	[CP_EDGE_LAUNCH] = "critical_path_kernel_launch_delay",
	[CP_EDGE_KERNEL_KERNEL] = "critical_path_kernel_kernel_delay",
	[CP_EDGE_SYNC] = "critical_path_sync_dependency",
};

static const char *const bound_names[CP_BOUND__COUNT] = {
	[CP_BOUND_NONE] = "",
	[CP_BOUND_CPU] = "cpu_bound",
	[CP_BOUND_DATA_LOADING] = "data_loading",
	[CP_BOUND_GPU_COMPUTE] = "gpu_compute_bound",
	[CP_BOUND_GPU_COMM] = "gpu_communication_bound",
	[CP_BOUND_KERNEL_KERNEL] = "gpu_kernel_kernel_overhead",
	[CP_BOUND_LAUNCH] = "gpu_kernel_launch_overhead",
};

const char *critpath_edge_type_name(unsigned type)
{
	return type < CP_EDGE__COUNT ? edge_names[type] : "?";
}

const char *critpath_bound_name(unsigned bound)
{
	return bound < CP_BOUND__COUNT ? bound_names[bound] : "?";
}

static const char *const copy_words[] = {
	[COPY_HTOD] = "HtoD", [COPY_DTOH] = "DtoH", [COPY_HTOA] = "HtoA", [COPY_ATOH] = "AtoH",
	[COPY_ATOA] = "AtoA", [COPY_ATOD] = "AtoD", [COPY_DTOA] = "DtoA", [COPY_DTOD] = "DtoD",
	[COPY_HTOH] = "HtoH", [COPY_PTOP] = "PtoP",
};
static const char *const mem_words[] = {
	[MEM_PAGEABLE] = "Pageable", [MEM_PINNED] = "Pinned", [MEM_DEVICE] = "Device",
	[MEM_ARRAY] = "Array", [MEM_MANAGED] = "Managed", [MEM_DEVICE_STATIC] = "Static",
	[MEM_MANAGED_STATIC] = "ManagedStatic",
};
static const char *const sync_words[] = {
	[SYNC_EVENT] = "Event Sync", [SYNC_STREAM_WAIT_EVENT] = "Stream Wait Event",
	[SYNC_STREAM] = "Stream Sync", [SYNC_CONTEXT] = "Context Sync",
};

static const char *word(const char *const *v, size_t n, unsigned i)
{
	return i < n && v[i] ? v[i] : "Unknown";
}
#define WORD(v, i) word(v, ARRAY_SIZE(v), i)

const char *critpath_event_name(const struct model *m, const struct critpath *cp, size_t ev,
				struct strbuf *sb)
{
	const struct cp_event *e;

	strbuf_reset(sb);
	if (ev >= cp->nr_events)
		return "";
	e = &cp->events[ev];
	switch (e->table) {
	case CP_ROW_MEMCPY: {
		const struct trace_memcpy *c = &m->memcpys.v[e->row];
		/* Kineto's own wording, which the importer parsed into codes */
		strbuf_addf(sb, "Memcpy %s (%s -> %s)", WORD(copy_words, c->kind),
			    WORD(mem_words, c->src_kind), WORD(mem_words, c->dst_kind));
		return sb->buf;
	}
	case CP_ROW_MEMSET:
		strbuf_addf(sb, "Memset (%s)", WORD(mem_words, m->memsets.v[e->row].mem_kind));
		return sb->buf;
	case CP_ROW_SYNC:
		return WORD(sync_words, m->syncs.v[e->row].type);
	}
	return model_str(m, e->name_id);
}

static int name_in(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

/* ---- events ---- */

static int64_t us_ceil(uint64_t ns)
{
	return (int64_t)((ns / 1000) + (ns % 1000 != 0));
}

static struct cp_event *push_event(struct critpath *cp, size_t *alloc, unsigned table,
				   size_t row, unsigned kind, uint64_t start, uint64_t end)
{
	struct cp_event *e;

	ALLOC_GROW(cp->events, cp->nr_events + 1, *alloc);
	e = &cp->events[cp->nr_events++];
	memset(e, 0, sizeof(*e));
	e->table = table;
	e->row = row;
	e->kind = kind;
	e->ts = us_ceil(start);
	e->end = (int64_t)(end / 1000);
	e->stream = -1;
	e->link = e->start_node = e->end_node = CP_NONE;
	return e;
}

static void collect_events(const struct model *m, struct critpath *cp)
{
	uint32_t d_user = strtab_find(&m->str, "kineto:user_annotation");
	uint32_t d_python = strtab_find(&m->str, "kineto:python");
	uint32_t d_gpu = strtab_find(&m->str, "kineto:gpu_user_annotation");
	uint32_t d_coll = strtab_find(&m->str, "kineto:collective");
	size_t alloc = 0;

	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		struct cp_event *e;
		unsigned kind = CP_EV_OP;
		/*
		 * GPU-side ranges (gpu_user_annotation, the importer's
		 * collective ranges) are not host events; ranges never closed
		 * have no duration.
		 */
		if (!r->tid || !r->end || r->end < r->start)
			continue;
		if (r->domain_id && (r->domain_id == d_gpu || r->domain_id == d_coll))
			continue;
		if (r->domain_id && (r->domain_id == d_user || r->domain_id == d_python))
			kind = CP_EV_ANNOTATION;
		e = push_event(cp, &alloc, CP_ROW_NVTX, i, kind, r->start, r->end);
		e->name_id = r->name_id;
		e->pid = r->pid;
		e->tid = r->tid;
	}
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		struct cp_event *e = push_event(cp, &alloc, CP_ROW_API, i, CP_EV_RUNTIME, a->start, a->end);
		e->name_id = a->name_id;
		e->pid = a->pid;
		e->tid = a->tid;
		e->correlation = a->correlation;
	}
#define PUSH_GPU(tab, TABLE)                                                              \
	for (size_t i = 0; i < m->tab.n; i++) {                                           \
		struct cp_event *e = push_event(cp, &alloc, TABLE, i, CP_EV_GPU,           \
						m->tab.v[i].start, m->tab.v[i].end);       \
		e->pid = m->tab.v[i].pid;                                                 \
		e->stream = m->tab.v[i].stream;                                           \
		e->correlation = m->tab.v[i].correlation;                                 \
	}
	PUSH_GPU(kernels, CP_ROW_KERNEL)
	PUSH_GPU(memcpys, CP_ROW_MEMCPY)
	PUSH_GPU(memsets, CP_ROW_MEMSET)
#undef PUSH_GPU
	for (size_t i = 0; i < m->kernels.n; i++)
		cp->events[cp->nr_events - m->memsets.n - m->memcpys.n - m->kernels.n + i].name_id =
			m->kernels.v[i].name_id;
	for (size_t i = 0; i < m->syncs.n; i++) {
		const struct trace_sync *s = &m->syncs.v[i];
		struct cp_event *e = push_event(cp, &alloc, CP_ROW_SYNC, i, CP_EV_SYNC, s->start, s->end);
		e->pid = s->pid;
		e->correlation = s->correlation;
		/*
		 * Kineto writes -1 as the stream of an event sync (HTA: a host
		 * event) and 4294967295 for a context sync (HTA: a GPU event);
		 * the importer stores both as UINT32_MAX.
		 */
		e->stream = s->type == SYNC_EVENT ? -1 : (int64_t)s->stream;
		cp->has_sync_rows = 1;
	}
}

/* ---- correlation (HTA's transform_correlation_to_index) ---- */

struct corr_ref {
	uint32_t corr;
	size_t ev;
};

static int cmp_corr_ref(const void *a, const void *b)
{
	const struct corr_ref *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int is_gpu_side(const struct cp_event *e)
{
	return e->kind == CP_EV_GPU || e->kind == CP_EV_SYNC;
}

/*
 * A host event links to the last GPU event (in index order) with its
 * correlation, each GPU event to the last host event with it: HTA assigns
 * the inner join's rows in order, so the last assignment stays.
 */
static void link_correlations(struct critpath *cp)
{
	struct corr_ref *cpu = xmalloc((cp->nr_events + 1) * sizeof(*cpu));
	struct corr_ref *gpu = xmalloc((cp->nr_events + 1) * sizeof(*gpu));
	size_t nc = 0, ng = 0, i = 0, j = 0;

	for (size_t k = 0; k < cp->nr_events; k++) {
		const struct cp_event *e = &cp->events[k];
		if (!e->correlation)
			continue;
		if (is_gpu_side(e))
			gpu[ng++] = (struct corr_ref){ e->correlation, k };
		else if (e->kind == CP_EV_RUNTIME)
			cpu[nc++] = (struct corr_ref){ e->correlation, k };
	}
	qsort(cpu, nc, sizeof(*cpu), cmp_corr_ref);
	qsort(gpu, ng, sizeof(*gpu), cmp_corr_ref);
	while (i < nc && j < ng) {
		if (cpu[i].corr < gpu[j].corr) {
			i++;
		} else if (cpu[i].corr > gpu[j].corr) {
			j++;
		} else {
			uint32_t c = cpu[i].corr;
			size_t i2 = i, j2 = j;
			while (i2 < nc && cpu[i2].corr == c)
				i2++;
			while (j2 < ng && gpu[j2].corr == c)
				j2++;
			for (size_t a = i; a < i2; a++)
				cp->events[cpu[a].ev].link = gpu[j2 - 1].ev;
			for (size_t b = j; b < j2; b++)
				cp->events[gpu[b].ev].link = cpu[i2 - 1].ev;
			i = i2;
			j = j2;
		}
	}
	free(cpu);
	free(gpu);
}

/* ---- the window (HTA's critical_path_analysis clipping) ---- */

struct gpu_ref {
	int64_t key;
	size_t ev;
};

static int cmp_gpu_ref(const void *a, const void *b)
{
	const struct gpu_ref *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}


static int find_window(const struct model *m, const struct critpath_opts *o, struct critpath *cp,
		       int64_t *lo, int64_t *hi)
{
	const char *ann = o->annotation ? o->annotation : "";
	struct strbuf sb = STRBUF_INIT;
	uint32_t d_gpu = strtab_find(&m->str, "kineto:gpu_user_annotation");
	struct gpu_ref *hits = NULL;
	size_t nhits = 0, ahits = 0;

	if (!cp->nr_events)
		return error("critical path: the input holds no host or GPU event");
	if (!*ann) {
		*lo = INT64_MAX;
		*hi = INT64_MIN;
		for (size_t i = 0; i < cp->nr_events; i++) {
			if (cp->events[i].ts < *lo)
				*lo = cp->events[i].ts;
			if (cp->events[i].end > *hi)
				*hi = cp->events[i].end;
		}
		return 0;
	}
	/*
	 * HTA matches every name that contains the annotation, any event kind
	 * (gpu_user_annotation rows too), and counts instances in time order.
	 */
	for (size_t i = 0; i < cp->nr_events; i++) {
		if (!strstr(critpath_event_name(m, cp, i, &sb), ann))
			continue;
		ALLOC_GROW(hits, nhits + 1, ahits);
		hits[nhits++] = (struct gpu_ref){ cp->events[i].ts, i };
	}
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		if (d_gpu == UINT32_MAX || r->domain_id != d_gpu || !r->end ||
		    !strstr(model_str(m, r->name_id), ann))
			continue;
		ALLOC_GROW(hits, nhits + 1, ahits);
		/* after every graph event: an index of its own */
		hits[nhits++] = (struct gpu_ref){ us_ceil(r->start), cp->nr_events + i };
	}
	strbuf_release(&sb);
	if (nhits)
		qsort(hits, nhits, sizeof(*hits), cmp_gpu_ref);
	if (o->instance < nhits) {
		size_t i = hits[o->instance].ev;
		if (i < cp->nr_events) {
			*lo = cp->events[i].ts;
			*hi = cp->events[i].end;
		} else {
			*lo = us_ceil(m->nvtx.v[i - cp->nr_events].start);
			*hi = (int64_t)(m->nvtx.v[i - cp->nr_events].end / 1000);
		}
		free(hits);
		return 0;
	}
	free(hits);
	if (!nhits)
		return error("critical path: no event named like '%s'", ann);
	return error("critical path: '%s' has %zu instances, not %u", ann, nhits, o->instance + 1);
}

/* HTA's node query: host ops and runtime calls, GPU rows with a correlation. */
static int has_nodes(const struct cp_event *e)
{
	if (e->kind == CP_EV_OP || e->kind == CP_EV_RUNTIME)
		return 1;
	return is_gpu_side(e) && e->stream != -1 && e->correlation;
}

/*
 * HTA keeps the host events (stream -1) that start in the window and last
 * more than 0 us, the GPU events whose runtime call is such an event, and
 * every "Stream Wait Event" row.
 */
static unsigned char *clip(const struct model *m, struct critpath *cp, int64_t lo, int64_t hi)
{
	unsigned char *in = xcalloc(cp->nr_events ? cp->nr_events : 1, 1);

	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		if (e->stream == -1 && e->ts >= lo && e->ts <= hi && e->end - e->ts > 0)
			in[i] = 1;
	}
	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		if (e->stream == -1)
			continue;
		if (e->table == CP_ROW_SYNC && m->syncs.v[e->row].type == SYNC_STREAM_WAIT_EVENT)
			in[i] = 1;
		/* the runtime of GPU event i is the host event whose link is i */
		if (e->link != CP_NONE && cp->events[e->link].link == i && cp->events[e->link].stream == -1 &&
		    in[e->link])
			in[i] = 1;
	}
	return in;
}

/* ---- nodes ---- */

static int cmp_node(const void *a, const void *b)
{
	const struct cp_node *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* HTA concatenates the start nodes before the end nodes, in index order */
	if (x->is_start != y->is_start)
		return x->is_start ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static void make_nodes(struct critpath *cp, const unsigned char *in)
{
	size_t n = 0;

	for (size_t i = 0; i < cp->nr_events; i++)
		n += in[i] && has_nodes(&cp->events[i]);
	cp->nodes = xmalloc((2 * n + 1) * sizeof(*cp->nodes));
	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		if (!in[i] || !has_nodes(e))
			continue;
		cp->nodes[cp->nr_nodes++] = (struct cp_node){ i, e->ts, 1 };
		cp->nodes[cp->nr_nodes++] = (struct cp_node){ i, e->end, 0 };
	}
	qsort(cp->nodes, cp->nr_nodes, sizeof(*cp->nodes), cmp_node);
	for (size_t k = 0; k < cp->nr_nodes; k++) {
		struct cp_event *e = &cp->events[cp->nodes[k].event];
		if (cp->nodes[k].is_start)
			e->start_node = k;
		else
			e->end_node = k;
	}
}

/* ---- edges ---- */

/*
 * Add an edge as networkx's add_edge does: a second edge between the same
 * nodes replaces the first's data and keeps its place in the adjacency
 * order.  The attribution of the replaced edge stays when the new edge has
 * none (HTA keeps its edge -> event map entry).
 */
static struct cp_edge *add_edge(struct critpath *cp, size_t from, size_t to, unsigned type,
				int zero_weight)
{
	const struct cp_node *s = &cp->nodes[from], *d = &cp->nodes[to];
	int64_t w = 0;
	struct cp_edge *e = NULL;

	if (from == to)
		BUG("critical path: an edge from node %zu to itself", from);
	if (type != CP_EDGE_DEPENDENCY && type != CP_EDGE_SYNC && !zero_weight)
		w = d->ts - s->ts;
	/* duplicates are rare and out-degrees small: look back over this node's recent edges */
	for (size_t i = cp->nr_edges; i-- > 0;) {
		if (cp->edges[i].from == from && cp->edges[i].to == to) {
			e = &cp->edges[i];
			break;
		}
		if (cp->nr_edges - i > 64)
			break;
	}
	if (!e) {
		ALLOC_GROW(cp->edges, cp->nr_edges + 1, cp->alloc_edges);
		e = &cp->edges[cp->nr_edges++];
		e->from = from;
		e->to = to;
		e->event = CP_NONE;
	}
	e->type = type;
	e->weight_ns = w * 1000;
	/* HTA's _validate_graph: a negative weight (ns rounding) counts as 0 */
	e->graph_ns = w < 0 ? 0 : w * 1000;
	e->critical = 0;
	e->bound = CP_BOUND_NONE;
	return e;
}

/* HTA's _attribute_edge for operator and kernel-kernel edges. */
static void attribute(struct critpath *cp, struct cp_edge *e, size_t src_parent)
{
	const struct cp_node *s = &cp->nodes[e->from], *d = &cp->nodes[e->to];

	if (e->type == CP_EDGE_KERNEL_KERNEL)
		e->event = s->event;           /* the gap goes to the previous kernel */
	else if (e->type != CP_EDGE_OPERATOR)
		return;
	else if (s->is_start)
		e->event = s->event;           /* start -> start or start -> end: the source */
	else if (!d->is_start)
		e->event = d->event;           /* end -> end: unwinding into the destination */
	else
		e->event = src_parent;         /* end -> start: the gap inside the parent */
}

/* ---- host call stacks (HTA's CallStackGraph and its DFS) ---- */

struct stack_ev {
	size_t idx;                /* event index */
	int64_t time, dur;
	int type;                  /* 1 start, -1 end */
};

/* HTA's compare_events, kept as it is (call_stack.py). */
static int cmp_stack_ev(const void *a, const void *b)
{
	const struct stack_ev *x = a, *y = b;

	if (x->idx == y->idx)
		return x->type == 1 ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->type == y->type) {
		if (x->type == 1) {
			if (x->dur == y->dur)
				return x->idx < y->idx ? -1 : 1;
			return x->dur < y->dur ? 1 : -1;
		}
		if (x->dur == y->dur)
			return x->idx < y->idx ? 1 : -1;
		return x->dur < y->dur ? -1 : 1;
	}
	if (x->dur > 0 && y->dur > 0)
		return x->type == 1 ? 1 : -1;
	if (x->dur == 0 && y->dur == 0)
		return x->idx < y->idx ? -1 : 1;
	return x->type == 1 ? -1 : 1;
}

struct host_ref {
	uint32_t pid, tid;
	size_t ev;
};

static int cmp_host_ref(const void *a, const void *b)
{
	const struct host_ref *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

struct dfs_state {
	size_t last_node, last_highlevel, last_parent;
	int depth;
};

static int blocking(const struct model *m, const struct cp_event *e)
{
	return e->kind == CP_EV_RUNTIME &&
	       name_in(model_str(m, e->name_id), blocking_names, ARRAY_SIZE(blocking_names));
}

static void dfs_enter(struct critpath *cp, struct dfs_state *st, size_t ev, size_t parent)
{
	const struct cp_event *e = &cp->events[ev];

	if (e->start_node == CP_NONE)
		return;
	if (st->depth == 0 && st->last_highlevel != CP_NONE)
		add_edge(cp, st->last_highlevel, e->start_node, CP_EDGE_DEPENDENCY, 0);
	st->depth++;
	if (st->last_node != CP_NONE)
		attribute(cp, add_edge(cp, st->last_node, e->start_node, CP_EDGE_OPERATOR, 0),
			  st->last_parent);
	st->last_node = e->start_node;
	st->last_parent = parent;
}

static void dfs_exit(const struct model *m, struct critpath *cp, struct dfs_state *st, size_t ev,
		     size_t parent)
{
	const struct cp_event *e = &cp->events[ev];

	if (e->start_node == CP_NONE)
		return;
	st->depth--;
	if (st->last_node != CP_NONE)
		attribute(cp, add_edge(cp, st->last_node, e->end_node, CP_EDGE_OPERATOR, blocking(m, e)),
			  st->last_parent);
	if (st->depth == 0) {
		st->last_node = CP_NONE;
		st->last_highlevel = e->end_node;
	} else {
		st->last_node = e->end_node;
		st->last_parent = parent;
	}
}

/* One thread: events @refs[0..n) (index order). */
static void host_thread(const struct model *m, struct critpath *cp, const struct host_ref *refs,
			size_t n)
{
	struct stack_ev *sev = xmalloc(2 * n * sizeof(*sev));
	size_t *parent = xmalloc(n * sizeof(*parent));      /* position in refs, CP_NONE = root */
	size_t *first_child = xmalloc(n * sizeof(*first_child));
	size_t *next_sib = xmalloc(n * sizeof(*next_sib));
	size_t *last_child = xmalloc(n * sizeof(*last_child));
	size_t *stack = xmalloc((n + 1) * sizeof(*stack)), sp = 0;
	size_t root_first = CP_NONE, root_last = CP_NONE;
	size_t *pos = xmalloc((n + 1) * sizeof(*pos)), *dstack = xmalloc((n + 1) * sizeof(*dstack));
	struct dfs_state st = { CP_NONE, CP_NONE, CP_NONE, 0 };
	size_t dsp = 0;

	for (size_t i = 0; i < n; i++) {
		const struct cp_event *e = &cp->events[refs[i].ev];
		int64_t dur = e->end - e->ts > 0 ? e->end - e->ts : 0;
		/* idx is the position in refs: same order as the event index */
		sev[2 * i] = (struct stack_ev){ i, e->ts, dur, 1 };
		sev[2 * i + 1] = (struct stack_ev){ i, e->ts + dur, dur, -1 };
		first_child[i] = next_sib[i] = last_child[i] = CP_NONE;
	}
	qsort(sev, 2 * n, sizeof(*sev), cmp_stack_ev);
	for (size_t k = 0; k < 2 * n; k++) {
		size_t i = sev[k].idx;
		if (sev[k].type == 1) {
			size_t p = sp ? stack[sp - 1] : CP_NONE;
			parent[i] = p;
			if (p == CP_NONE) {
				if (root_last == CP_NONE)
					root_first = i;
				else
					next_sib[root_last] = i;
				root_last = i;
			} else {
				if (last_child[p] == CP_NONE)
					first_child[p] = i;
				else
					next_sib[last_child[p]] = i;
				last_child[p] = i;
			}
			stack[sp++] = i;
		} else if (sp) {
			sp--; /* HTA pops the top, whichever event ends */
		}
	}
	/* depth-first, children in start order: enter, children, exit */
	for (size_t r = root_first; r != CP_NONE; r = next_sib[r]) {
		dstack[dsp] = r;
		pos[dsp++] = CP_NONE;
		while (dsp) {
			size_t i = dstack[dsp - 1], c;
			size_t par = parent[i] == CP_NONE ? CP_NONE : refs[parent[i]].ev;
			if (pos[dsp - 1] == CP_NONE) {
				dfs_enter(cp, &st, refs[i].ev, par);
				c = first_child[i];
			} else {
				c = next_sib[pos[dsp - 1]];
			}
			if (c != CP_NONE) {
				pos[dsp - 1] = c;
				dstack[dsp] = c;
				pos[dsp++] = CP_NONE;
			} else {
				dfs_exit(m, cp, &st, refs[i].ev, par);
				dsp--;
			}
		}
	}
	free(sev);
	free(parent);
	free(first_child);
	free(next_sib);
	free(last_child);
	free(stack);
	free(pos);
	free(dstack);
}

static void host_edges(const struct model *m, struct critpath *cp, const unsigned char *in)
{
	struct host_ref *refs = xmalloc((cp->nr_events + 1) * sizeof(*refs));
	size_t n = 0;

	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		if (in[i] && !is_gpu_side(e))
			refs[n++] = (struct host_ref){ e->pid, e->tid, i };
	}
	qsort(refs, n, sizeof(*refs), cmp_host_ref);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && refs[j].pid == refs[i].pid && refs[j].tid == refs[i].tid)
			j++;
		host_thread(m, cp, refs + i, j - i);
		i = j;
	}
	free(refs);
}

/* ---- GPU side ---- */

#define Q_NONE INT64_MIN

struct q_item {
	int64_t stream, ts;
	size_t order;              /* launches first, then GPU rows, each in index order */
	int delta;
	size_t ev;
};

static int cmp_q_item(const void *a, const void *b)
{
	const struct q_item *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int is_launch(const struct model *m, const struct critpath *cp, const struct cp_event *e)
{
	return e->kind == CP_EV_RUNTIME && e->link != CP_NONE && cp->events[e->link].stream != -1 &&
	       name_in(model_str(m, e->name_id), launch_names, ARRAY_SIZE(launch_names));
}

/*
 * HTA's queue length (TraceCounters), over the whole trace: per stream, +1
 * at each launch call, -1 at each GPU row with a launch's correlation,
 * summed in time order.  @q gets the value after each such event.
 */
static int64_t *queue_lengths(const struct model *m, const struct critpath *cp)
{
	int64_t *q = xmalloc((cp->nr_events + 1) * sizeof(*q));
	struct q_item *it = xmalloc((2 * cp->nr_events + 1) * sizeof(*it));
	struct corr_ref *lc = xmalloc((cp->nr_events + 1) * sizeof(*lc));
	size_t n = 0, nl = 0, order = 0;

	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		q[i] = Q_NONE;
		if (!is_launch(m, cp, e))
			continue;
		it[n++] = (struct q_item){ cp->events[e->link].stream, e->ts, order++, 1, i };
		lc[nl++] = (struct corr_ref){ e->correlation, i };
	}
	qsort(lc, nl, sizeof(*lc), cmp_corr_ref);
	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		struct corr_ref key = { e->correlation, 0 };
		size_t lo = 0, hi = nl;
		if (!is_gpu_side(e) || e->stream == -1 || !e->correlation)
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (lc[mid].corr < key.corr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nl && lc[lo].corr == e->correlation)
			it[n++] = (struct q_item){ e->stream, e->ts, order++, -1, i };
	}
	qsort(it, n, sizeof(*it), cmp_q_item);
	for (size_t i = 0, j; i < n; i = j) {
		int64_t sum = 0;
		for (j = i; j < n && it[j].stream == it[i].stream; j++) {
			sum += it[j].delta;
			q[it[j].ev] = sum;
		}
	}
	free(it);
	free(lc);
	return q;
}

struct launch {
	int64_t ts;
	size_t ev;                 /* the launch call */
	uint32_t pid, tid, device;
	int64_t stream;            /* of its GPU row */
};

static int cmp_launch_ts(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* Launches grouped by (device, stream), by time. */
static int cmp_launch_dev(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return cmp_launch_ts(a, b);
}

/* Launches grouped by (pid, tid, stream), by time. */
static int cmp_launch_thr(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return cmp_launch_ts(a, b);
}

static uint32_t gpu_device(const struct model *m, const struct cp_event *e)
{
	switch (e->table) {
	case CP_ROW_KERNEL: return m->kernels.v[e->row].device;
	case CP_ROW_MEMCPY: return m->memcpys.v[e->row].device;
	case CP_ROW_MEMSET: return m->memsets.v[e->row].device;
	case CP_ROW_SYNC: return m->syncs.v[e->row].device;
	}
	return 0;
}

struct event_sync_ctx {
	struct launch *by_dev, *by_thr;
	size_t n;
	struct corr_ref *records;  /* cudaEventRecord calls by correlation */
	size_t nr_records;
};

/* The last launch on (@device, @stream) at or before @ts (HTA: the previous launch of a record). */
static size_t previous_launch(const struct event_sync_ctx *x, uint32_t device, int64_t stream,
			      int64_t ts)
{
	size_t lo = 0, hi = x->n;
	struct launch key = { ts, SIZE_MAX, 0, 0, device, stream };

	/* first element greater than key (device, stream, ts, SIZE_MAX) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_launch_dev(&x->by_dev[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || x->by_dev[lo - 1].device != device || x->by_dev[lo - 1].stream != stream)
		return CP_NONE;
	return x->by_dev[lo - 1].ev;
}

/* The first launch on (@pid, @tid, @stream) after @ts (HTA: the next launch after a wait). */
static size_t next_launch(const struct event_sync_ctx *x, uint32_t pid, uint32_t tid,
			  int64_t stream, int64_t ts)
{
	size_t lo = 0, hi = x->n;
	struct launch key = { ts, SIZE_MAX, pid, tid, 0, stream };

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_launch_thr(&x->by_thr[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= x->n || x->by_thr[lo].pid != pid || x->by_thr[lo].tid != tid ||
	    x->by_thr[lo].stream != stream)
		return CP_NONE;
	return x->by_thr[lo].ev;
}

static void event_sync_init(const struct model *m, const struct critpath *cp,
			    struct event_sync_ctx *x)
{
	uint32_t rec = strtab_find(&m->str, "cudaEventRecord");

	memset(x, 0, sizeof(*x));
	x->by_dev = xmalloc((cp->nr_events + 1) * sizeof(*x->by_dev));
	x->records = xmalloc((cp->nr_events + 1) * sizeof(*x->records));
	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		if (is_launch(m, cp, e)) {
			const struct cp_event *g = &cp->events[e->link];
			x->by_dev[x->n++] = (struct launch){ e->ts, i, e->pid, e->tid,
							     gpu_device(m, g), g->stream };
		}
		if (rec != UINT32_MAX && e->kind == CP_EV_RUNTIME && e->name_id == rec && e->correlation)
			x->records[x->nr_records++] = (struct corr_ref){ e->correlation, i };
	}
	x->by_thr = xmalloc((x->n + 1) * sizeof(*x->by_thr));
	memcpy(x->by_thr, x->by_dev, x->n * sizeof(*x->by_thr));
	qsort(x->by_dev, x->n, sizeof(*x->by_dev), cmp_launch_dev);
	qsort(x->by_thr, x->n, sizeof(*x->by_thr), cmp_launch_thr);
	qsort(x->records, x->nr_records, sizeof(*x->records), cmp_corr_ref);
}

static void event_sync_release(struct event_sync_ctx *x)
{
	free(x->by_dev);
	free(x->by_thr);
	free(x->records);
}

/*
 * The kernel a sync row waits for: its cudaEventRecord call (by the
 * record's correlation), then the last launch on the stream the event was
 * recorded on, then that launch's GPU row.  CP_NONE when unknown.
 */
static size_t awaited_kernel(const struct model *m, const struct critpath *cp,
			     const struct event_sync_ctx *x, const struct cp_event *e)
{
	const struct trace_sync *s = &m->syncs.v[e->row];
	size_t lo = 0, hi = x->nr_records, launch;

	if (!s->wait_correlation)
		return CP_NONE;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->records[mid].corr < s->wait_correlation)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= x->nr_records || x->records[lo].corr != s->wait_correlation)
		return CP_NONE;
	launch = previous_launch(x, s->device, s->wait_stream, cp->events[x->records[lo].ev].ts);
	return launch == CP_NONE ? CP_NONE : cp->events[launch].link;
}

struct last_node {
	int64_t stream;
	size_t node;
};

static size_t *last_on(struct last_node **v, size_t *n, size_t *alloc, int64_t stream, int create)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].stream == stream)
			return &(*v)[i].node;
	if (!create)
		return NULL;
	ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[*n] = (struct last_node){ stream, CP_NONE };
	return &(*v)[(*n)++].node;
}

static void sync_to_host(struct critpath *cp, size_t gpu_node, size_t runtime)
{
	if (runtime == CP_NONE || cp->events[runtime].end_node == CP_NONE || gpu_node == CP_NONE)
		return;
	add_edge(cp, gpu_node, cp->events[runtime].end_node, CP_EDGE_SYNC, 0);
}

static void gpu_edges(const struct model *m, const struct critpath_opts *o, struct critpath *cp,
		      const unsigned char *in)
{
	struct gpu_ref *g = xmalloc((cp->nr_events + 1) * sizeof(*g));
	size_t *kernel_sync = xmalloc((cp->nr_events + 1) * sizeof(*kernel_sync));
	int64_t *q = queue_lengths(m, cp);
	struct event_sync_ctx x;
	struct last_node *last = NULL;
	size_t ng = 0, nlast = 0, alast = 0;

	event_sync_init(m, cp, &x);
	for (size_t i = 0; i < cp->nr_events; i++) {
		const struct cp_event *e = &cp->events[i];
		unsigned t = e->table == CP_ROW_SYNC ? m->syncs.v[e->row].type : SYNC_UNKNOWN;
		kernel_sync[i] = CP_NONE;
		if (!in[i] || !is_gpu_side(e) || !e->correlation)
			continue;
		if (e->stream == -1 && t != SYNC_EVENT && t != SYNC_CONTEXT)
			continue;
		/* HTA sorts kernels by start and syncs by end (a sync can overlap a copy) */
		g[ng++] = (struct gpu_ref){ e->kind == CP_EV_SYNC ? e->end : e->ts, i };
	}
	qsort(g, ng, sizeof(*g), cmp_gpu_ref);

	for (size_t k = 0; k < ng; k++) {
		size_t ev = g[k].ev, runtime, sync_src = CP_NONE, sync_end = CP_NONE, *lastp;
		struct cp_event *e = &cp->events[ev];
		int edge = 0, launch_edge = 0;

		runtime = e->link;
		if (e->kind == CP_EV_SYNC) {
			unsigned t = m->syncs.v[e->row].type;
			if (t == SYNC_STREAM_WAIT_EVENT || t == SYNC_EVENT) {
				size_t src = awaited_kernel(m, cp, &x, e);
				if (src == CP_NONE || runtime == CP_NONE)
					continue;
				if (t == SYNC_STREAM_WAIT_EVENT) {
					const struct cp_event *r = &cp->events[runtime];
					size_t next = next_launch(&x, r->pid, r->tid, e->stream, r->ts);
					if (next != CP_NONE && cp->events[next].link != CP_NONE)
						kernel_sync[cp->events[next].link] = src;
				} else {
					sync_to_host(cp, cp->events[src].end_node, runtime);
				}
			} else if (t == SYNC_CONTEXT) {
				for (size_t i = 0; i < nlast; i++)
					sync_to_host(cp, last[i].node, runtime);
			} else if (t == SYNC_STREAM) {
				lastp = last_on(&last, &nlast, &alast, e->stream, 0);
				if (lastp)
					sync_to_host(cp, *lastp, runtime);
			}
			continue;
		}
		if (e->start_node == CP_NONE)
			continue;
		attribute(cp, add_edge(cp, e->start_node, e->end_node, CP_EDGE_OPERATOR, 0), CP_NONE);
		if (kernel_sync[ev] != CP_NONE) {
			sync_src = kernel_sync[ev];
			sync_end = cp->events[sync_src].end_node;
			if (sync_end == CP_NONE) {
				sync_src = CP_NONE;
			} else if (cp->events[sync_src].stream == e->stream) {
				/* HTA rejects the whole graph here; stream order already holds */
				cp->skipped_same_stream_syncs++;
				sync_src = CP_NONE;
			} else {
				add_edge(cp, sync_end, e->start_node, CP_EDGE_SYNC, 0);
				edge = 1;
			}
			kernel_sync[ev] = CP_NONE;
		}
		lastp = last_on(&last, &nlast, &alast, e->stream, 1);
		if (runtime != CP_NONE && q[runtime] == 1 && q[ev] == 0 &&
		    (*lastp == CP_NONE || cp->nodes[*lastp].ts < cp->events[runtime].ts) &&
		    (sync_src == CP_NONE || cp->nodes[sync_end].ts < cp->events[runtime].ts) &&
		    cp->events[runtime].start_node != CP_NONE) {
			add_edge(cp, cp->events[runtime].start_node, e->start_node, CP_EDGE_LAUNCH, 0);
			edge = launch_edge = 1;
		} else if (*lastp != CP_NONE &&
			   (sync_src == CP_NONE || cp->nodes[sync_end].ts < cp->nodes[*lastp].ts) &&
			   cp->nodes[e->start_node].ts - cp->nodes[*lastp].ts < CP_KERNEL_KERNEL_MAX_GAP_US) {
			attribute(cp, add_edge(cp, *lastp, e->start_node, CP_EDGE_KERNEL_KERNEL, 0), CP_NONE);
			edge = 1;
		}
		(void)edge;
		if (o->zero_weight_launch_edges && !launch_edge && runtime != CP_NONE &&
		    cp->events[runtime].start_node != CP_NONE)
			add_edge(cp, cp->events[runtime].start_node, e->start_node, CP_EDGE_LAUNCH, 1);
		*lastp = e->end_node;
	}
	event_sync_release(&x);
	free(last);
	free(q);
	free(kernel_sync);
	free(g);
}

/* ---- longest path (networkx dag_longest_path over topological_generations) ---- */

static int longest_path(struct critpath *cp)
{
	size_t nn = cp->nr_nodes, ne = cp->nr_edges;
	size_t *succ_off = xcalloc(nn + 1, sizeof(size_t)), *pred_off = xcalloc(nn + 1, sizeof(size_t));
	size_t *succ = xmalloc((ne + 1) * sizeof(size_t)), *pred = xmalloc((ne + 1) * sizeof(size_t));
	size_t *indeg = xmalloc((nn + 1) * sizeof(size_t)), *topo = xmalloc((nn + 1) * sizeof(size_t));
	int64_t *dist = xmalloc((nn + 1) * sizeof(int64_t));
	size_t *prev = xmalloc((nn + 1) * sizeof(size_t)), *prev_edge = xmalloc((nn + 1) * sizeof(size_t));
	size_t nt = 0, gen_start, best = CP_NONE;
	int ret = 0;

	for (size_t i = 0; i < ne; i++) {
		succ_off[cp->edges[i].from + 1]++;
		pred_off[cp->edges[i].to + 1]++;
	}
	for (size_t v = 0; v < nn; v++) {
		succ_off[v + 1] += succ_off[v];
		pred_off[v + 1] += pred_off[v];
	}
	for (size_t v = 0; v < nn; v++)
		indeg[v] = 0;
	/* adjacency in edge insertion order, as networkx's dicts keep it */
	for (size_t i = 0; i < ne; i++) {
		size_t u = cp->edges[i].from;
		succ[succ_off[u] + indeg[u]++] = i;
	}
	for (size_t v = 0; v < nn; v++)
		indeg[v] = 0;
	for (size_t i = 0; i < ne; i++) {
		size_t v = cp->edges[i].to;
		pred[pred_off[v] + indeg[v]++] = i;
	}
	/* Kahn's algorithm by generations: first every source in node order */
	for (size_t v = 0; v < nn; v++)
		if (!indeg[v])
			topo[nt++] = v;
	gen_start = 0;
	while (gen_start < nt) {
		size_t gen_end = nt;
		for (size_t k = gen_start; k < gen_end; k++) {
			size_t u = topo[k];
			for (size_t j = succ_off[u]; j < succ_off[u + 1]; j++) {
				size_t v = cp->edges[succ[j]].to;
				if (--indeg[v] == 0)
					topo[nt++] = v;
			}
		}
		gen_start = gen_end;
	}
	if (nt != nn) {
		ret = error("critical path: the graph has a cycle (%zu of %zu nodes ordered)", nt, nn);
		goto out;
	}
	for (size_t k = 0; k < nt; k++) {
		size_t v = topo[k];
		int64_t bd = 0;
		size_t bu = v, be = CP_NONE;
		int any = 0;
		for (size_t j = pred_off[v]; j < pred_off[v + 1]; j++) {
			const struct cp_edge *e = &cp->edges[pred[j]];
			int64_t d = dist[e->from] + e->graph_ns;
			if (!any || d > bd) { /* max() keeps the first maximum */
				bd = d;
				bu = e->from;
				be = pred[j];
				any = 1;
			}
		}
		if (!any || bd < 0) {
			bd = 0;
			bu = v;
			be = CP_NONE;
		}
		dist[v] = bd;
		prev[v] = bu;
		prev_edge[v] = be;
		if (best == CP_NONE || bd > dist[best])
			best = v;
	}
	if (best != CP_NONE) {
		size_t n = 0;
		for (size_t v = best;; v = prev[v]) {
			n++;
			if (prev[v] == v)
				break;
		}
		cp->path = xmalloc(n * sizeof(*cp->path));
		cp->nr_path = n;
		cp->length_ns = dist[best];
		for (size_t v = best, i = n; i-- > 0; v = prev[v]) {
			cp->path[i] = v;
			if (prev_edge[v] != CP_NONE)
				cp->edges[prev_edge[v]].critical = 1;
		}
	}
out:
	free(succ_off);
	free(pred_off);
	free(succ);
	free(pred);
	free(indeg);
	free(topo);
	free(dist);
	free(prev);
	free(prev_edge);
	return ret;
}

/* ---- bound_by and the summary ---- */

static unsigned bound_of(const struct model *m, const struct critpath *cp, const struct cp_edge *e,
			 const regex_t *re, size_t nre)
{
	const struct cp_event *ev;

	switch (e->type) {
	case CP_EDGE_KERNEL_KERNEL: return CP_BOUND_KERNEL_KERNEL;
	case CP_EDGE_LAUNCH: return CP_BOUND_LAUNCH;
	case CP_EDGE_DEPENDENCY:
	case CP_EDGE_SYNC: return CP_BOUND_NONE;
	}
	if (e->event == CP_NONE)
		return CP_BOUND_CPU; /* an op's gap under the root: host time */
	ev = &cp->events[e->event];
	if (ev->stream < 0) {
		const char *name = model_str(m, ev->name_id);
		for (size_t i = 0; i < nre; i++)
			if (!regexec(&re[i], name, 0, NULL, 0))
				return CP_BOUND_DATA_LOADING;
		return CP_BOUND_CPU;
	}
	if (ev->table == CP_ROW_KERNEL && (m->kernels.v[ev->row].flags & TRACE_GPU_COMM))
		return CP_BOUND_GPU_COMM;
	return CP_BOUND_GPU_COMPUTE;
}

static int classify(const struct model *m, const struct critpath_opts *o, struct critpath *cp)
{
	regex_t *re = xcalloc(o->nr_data_load_events + 1, sizeof(*re));
	size_t nre = 0;
	int ret = 0;

	for (size_t i = 0; i < o->nr_data_load_events; i++) {
		if (regcomp(&re[nre], o->data_load_events[i], REG_EXTENDED | REG_NOSUB)) {
			ret = error("critical path: bad data-load pattern '%s'", o->data_load_events[i]);
			goto out;
		}
		nre++;
	}
	for (size_t i = 0; i < cp->nr_path; i++) {
		struct cp_event *ev = &cp->events[cp->nodes[cp->path[i]].event];
		if (!ev->critical)
			cp->nr_critical_events++;
		ev->critical = 1;
	}
	for (size_t i = 0; i < cp->nr_edges; i++) {
		struct cp_edge *e = &cp->edges[i];
		if (!e->critical)
			continue;
		e->bound = bound_of(m, cp, e, re, nre);
		cp->bound_ns[e->bound] += e->weight_ns;
		cp->bound_edges[e->bound]++;
		cp->type_edges[e->type]++;
		cp->total_ns += e->weight_ns;
	}
out:
	for (size_t i = 0; i < nre; i++)
		regfree(&re[i]);
	free(re);
	return ret;
}

int critpath_run(const struct model *m, const struct critpath_opts *o, struct critpath *cp)
{
	static const struct critpath_opts dflt;
	unsigned char *in;
	int64_t lo = 0, hi = 0;
	int ret;

	if (!o)
		o = &dflt;
	memset(cp, 0, sizeof(*cp));
	collect_events(m, cp);
	link_correlations(cp);
	if (find_window(m, o, cp, &lo, &hi)) {
		critpath_release(cp);
		return -1;
	}
	cp->window_start = (uint64_t)(lo > 0 ? lo : 0) * 1000;
	cp->window_end = (uint64_t)(hi > 0 ? hi : 0) * 1000;
	in = clip(m, cp, lo, hi);
	make_nodes(cp, in);
	if (!cp->nr_nodes) {
		free(in);
		critpath_release(cp);
		return error("critical path: the window holds no host op, runtime call or GPU row");
	}
	host_edges(m, cp, in);
	gpu_edges(m, o, cp, in);
	free(in);
	ret = longest_path(cp);
	if (!ret)
		ret = classify(m, o, cp);
	if (ret)
		critpath_release(cp);
	return ret;
}

void critpath_release(struct critpath *cp)
{
	free(cp->events);
	free(cp->nodes);
	free(cp->edges);
	free(cp->path);
	memset(cp, 0, sizeof(*cp));
}

void critpath_print_summary(FILE *f, const struct model *m, const struct critpath *cp)
{
	(void)m;
	fprintf(f, "critical path: %zu nodes, %zu edges, %zu events, %.3f ms\n", cp->nr_path,
		cp->nr_path ? cp->nr_path - 1 : 0, cp->nr_critical_events, (double)cp->length_ns / 1e6);
	fprintf(f, "  edges:");
	for (unsigned t = 0; t < CP_EDGE__COUNT; t++)
		fprintf(f, " %s %zu", edge_names[t] + strlen("critical_path_"), cp->type_edges[t]);
	fprintf(f, "\n  bound by (%% of critical-path time):\n");
	for (unsigned b = 0; b < CP_BOUND__COUNT; b++) {
		if (!cp->bound_edges[b])
			continue;
		if (cp->total_ns)
			fprintf(f, "    %-28s %6.2f%%  %zu edges\n", b ? bound_names[b] : "(dependency/sync)",
				100.0 * (double)cp->bound_ns[b] / (double)cp->total_ns, cp->bound_edges[b]);
		else
			fprintf(f, "    %-28s %7s  %zu edges\n", b ? bound_names[b] : "(dependency/sync)",
				"-", cp->bound_edges[b]);
	}
	if (cp->skipped_same_stream_syncs)
		fprintf(f, "  note: %zu stream waits within one stream were not added\n",
			cp->skipped_same_stream_syncs);
	if (!cp->has_sync_rows)
		fprintf(f, "  note: no cuda_sync rows in the input: synchronisation edges are missing\n");
}
