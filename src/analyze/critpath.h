/*
 * critpath.h - critical-path analysis of one window of one rank, after
 * Holistic Trace Analysis (HTA, hta/analyzers/critical_path_analysis.py).
 *
 * The graph (docs/critical-path.md has the full description):
 *  - every host op (a Kineto cpu_op, an NVTX range of another source),
 *    every runtime/driver call and every GPU row (kernel, copy, set, sync)
 *    of the window has a start node and an end node, at its time in whole
 *    microseconds (start rounded up, end rounded down, as HTA does);
 *  - OPERATOR edges carry an event's own time, split at its nested children;
 *    DEPENDENCY edges (weight 0) chain each thread's top-level ops;
 *    KERNEL_LAUNCH edges go from a runtime call's start to its kernel's start
 *    when the stream had nothing queued; KERNEL_KERNEL edges from the previous
 *    kernel's end on the stream; SYNC edges (weight 0) from the kernel a
 *    device, stream or event sync waits for to the blocking call's end, and
 *    from the kernel a stream waits on (cudaStreamWaitEvent) to the next
 *    kernel launched on the waiting stream;
 *  - the critical path is the longest path, ties broken as networkx's
 *    dag_longest_path breaks them, so the path equals HTA's.
 *
 * Ownership: critpath_run() fills a struct critpath the caller provides;
 * critpath_release() frees what it holds.  Row indices refer to the model
 * passed to critpath_run(), which must outlive the result.
 */
#ifndef GS_CRITPATH_H
#define GS_CRITPATH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct model;

enum cp_edge_type {
	CP_EDGE_OPERATOR = 0,      /* HTA OPERATOR_KERNEL */
	CP_EDGE_DEPENDENCY,        /* HTA DEPENDENCY, weight 0 */
	CP_EDGE_LAUNCH,            /* HTA KERNEL_LAUNCH_DELAY */
	CP_EDGE_KERNEL_KERNEL,     /* HTA KERNEL_KERNEL_DELAY */
	CP_EDGE_SYNC,              /* HTA SYNC_DEPENDENCY, weight 0 */
	CP_EDGE__COUNT
};

/* What an edge of the critical path is bound by (HTA's bound_by column). */
enum cp_bound {
	CP_BOUND_NONE = 0,         /* dependency and sync edges: "" in HTA */
	CP_BOUND_CPU,              /* cpu_bound */
	CP_BOUND_DATA_LOADING,     /* data_loading: a host event named by opts.data_load_events */
	CP_BOUND_GPU_COMPUTE,      /* gpu_compute_bound */
	CP_BOUND_GPU_COMM,         /* gpu_communication_bound */
	CP_BOUND_KERNEL_KERNEL,    /* gpu_kernel_kernel_overhead */
	CP_BOUND_LAUNCH,           /* gpu_kernel_launch_overhead */
	CP_BOUND__COUNT
};

/* The model table a graph event comes from. */
enum cp_table {
	CP_ROW_NVTX = 0, CP_ROW_API, CP_ROW_KERNEL, CP_ROW_MEMCPY, CP_ROW_MEMSET, CP_ROW_SYNC,
};

/* What HTA makes of the event. */
enum cp_kind {
	CP_EV_OP = 0,              /* host op with nodes (Kineto cpu_op, NVTX range) */
	CP_EV_ANNOTATION,          /* host range without nodes (user_annotation, python) */
	CP_EV_RUNTIME,             /* runtime or driver call */
	CP_EV_GPU,                 /* kernel, memcpy, memset */
	CP_EV_SYNC,                /* cuda_sync row */
};

#define CP_NONE SIZE_MAX

struct cp_event {
	unsigned table;            /* enum cp_table */
	size_t row;                /* index in that model table */
	unsigned kind;             /* enum cp_kind */
	int64_t ts, end;           /* whole microseconds: ceil(start), floor(end) */
	uint32_t name_id, pid, tid;
	int64_t stream;            /* HTA's stream: -1 on the host and for event syncs */
	uint32_t correlation;      /* 0 = none */
	size_t link;               /* HTA's index_correlation: the event it correlates with, or CP_NONE */
	size_t start_node, end_node; /* CP_NONE when not in the graph */
	int critical;              /* one of its nodes is on the critical path */
};

struct cp_node {
	size_t event;
	int64_t ts;                /* microseconds */
	int is_start;
};

struct cp_edge {
	size_t from, to;           /* node indices */
	unsigned type;             /* enum cp_edge_type */
	int64_t weight_ns;         /* HTA's weight (integer us) in ns; may be negative, see graph_ns */
	int64_t graph_ns;          /* the weight the longest path uses: negative weights count 0 */
	size_t event;              /* the event the edge's time is attributed to, or CP_NONE */
	unsigned bound;            /* enum cp_bound, for critical edges */
	int critical;
};

struct critpath_opts {
	/*
	 * The window: instance @instance (0-based, in trace order) of the
	 * events whose name contains @annotation; NULL or "" = the whole trace.
	 */
	const char *annotation;
	unsigned instance;
	/* Extended regular expressions: host events matching one are data_loading. */
	const char *const *data_load_events;
	size_t nr_data_load_events;
	/*
	 * Add a zero-weight launch edge runtime -> kernel wherever no
	 * launch-delay edge was added (HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1,
	 * off by default there as here).  It keeps a kernel after its launch
	 * and can change which of two paths is the longest.
	 */
	int zero_weight_launch_edges;
};

struct critpath {
	struct cp_event *events;   /* every host, runtime and GPU row considered */
	size_t nr_events;
	struct cp_node *nodes;     /* sorted by time */
	size_t nr_nodes;
	struct cp_edge *edges;     /* in insertion order */
	size_t nr_edges, alloc_edges;
	size_t *path;              /* node indices of the critical path, in order */
	size_t nr_path;
	size_t nr_critical_events;
	uint64_t window_start, window_end; /* ns, as in the model */
	int64_t length_ns;         /* sum of graph_ns along the path */
	int64_t total_ns;          /* sum of weight_ns of the critical edges */
	int64_t bound_ns[CP_BOUND__COUNT];  /* per bound_by, sum of weight_ns */
	size_t bound_edges[CP_BOUND__COUNT]; /* critical edges per bound_by */
	size_t type_edges[CP_EDGE__COUNT];   /* critical edges per type */
	size_t skipped_same_stream_syncs;   /* GPU->GPU syncs within one stream (not added) */
	int has_sync_rows;         /* the input recorded cuda_sync rows at all */
};

/*
 * critpath_run - build the graph of the window @o selects in @m and find its
 * critical path.  @cp is overwritten; after a failure it holds nothing (a
 * critpath_release() is harmless).  Returns 0, or -1 after error() when
 * the annotation or instance does not exist, the window holds no event, or
 * the graph has a cycle.
 */
int critpath_run(const struct model *m, const struct critpath_opts *o, struct critpath *cp);
void critpath_release(struct critpath *cp);

/* Names: "critical_path_operator" ... as HTA writes them; "cpu_bound" ... ("" for none). */
const char *critpath_edge_type_name(unsigned type);
const char *critpath_bound_name(unsigned bound);

/*
 * The name of graph event @ev as Kineto writes it ("Memcpy HtoD (Pageable ->
 * Device)" for a copy, "Stream Sync" for a sync).  Returns a string owned by
 * the model or by @sb (overwritten).
 */
struct strbuf;
const char *critpath_event_name(const struct model *m, const struct critpath *cp, size_t ev,
				struct strbuf *sb);

/*
 * critpath_print_summary - the % of critical-path time per bound_by (HTA's
 * summary()), the path's length and its edge counts, to @f.
 */
void critpath_print_summary(FILE *f, const struct model *m, const struct critpath *cp);

#endif
