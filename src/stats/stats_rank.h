/*
 * stats_rank.h - the ranks of a distributed run side by side (`stats
 * --report rank_sum`, the per-rank table of `analyze`, the straggler rule).
 *
 * A rank is a process whose rank is known (TRACE_EV_PROC_ATTR, Kineto's
 * distributedInfo); its GPU is the device on which that process ran the
 * most kernels.  Per rank, over its window (first to last GPU operation):
 *  - steps: complete NVTX ranges with a step name (model_is_step_name) on
 *    the rank's threads, their count and median;
 *  - compute: the union of its non-communication kernels;
 *  - comm: the union of its communication kernels; exposed: the part no
 *    compute kernel overlaps;
 *  - wait: the part of its collectives spent waiting for a later rank
 *    (below);
 *  - idle: the window minus the union of all its GPU work (kernels, copies,
 *    sets); data: the idle time inside data-loading ranges
 *    ("enumerate(DataLoader)...", "enumerate(DataPipe)...") of its threads;
 *    host: the rest of the idle time (the CPU between launches).
 *
 * Collectives: the n-th communication kernel of a given name on each rank's
 * GPU is one instance of one collective (ranks issue collectives in the same
 * order: NCCL requires it within a communicator).  An instance ends on every
 * rank at about the same time, so a rank that started it earlier than the
 * last rank to arrive waited start_last - start_r (at most its own duration)
 * for that rank: the wait is attributed to the last arriver ("blame").
 */
#ifndef GS_STATS_RANK_H
#define GS_STATS_RANK_H

#include "../model/model.h"

struct rank_row {
	int rank;
	uint32_t pid, device;
	uint64_t first, last;      /* the window: first start, last end of its GPU work */
	uint64_t steps;            /* step ranges; 0 = none */
	uint64_t step_med_ns;
	uint64_t compute_ns, comm_ns, exposed_ns, wait_ns, idle_ns, data_ns, host_ns;
	uint64_t colls;            /* collective instances it took part in with another rank */
	uint64_t late;             /* instances where it arrived last */
	uint64_t blame_ns;         /* the waiting of the others at the instances it arrived last */
	/* the stretches before its last arrivals: from its previous collective's end to the late one's start */
	uint64_t pre_ns, pre_busy_ns, pre_data_ns;
	/*
	 * In those stretches, its excess over the other ranks' mean stretch of
	 * the same instance: [0] GPU busy (compute), [1] idle in data loading
	 * (input), [2] other idle (host).  The largest says why it was late.
	 */
	uint64_t excess_ns[3];
};

struct rank_stats {
	struct rank_row *v;        /* by rank */
	size_t n;
	int world_size;            /* the largest recorded, -1 unknown */
	uint64_t instances;        /* collective instances seen on two ranks or more */
	uint64_t wait_ns;          /* all waiting */
};

/*
 * rank_stats_build - the table above over the whole model.  Fills @s
 * (released by rank_stats_release(), also when n is 0) and returns s->n:
 * 0 when no process has a known rank or none ran GPU work.
 */
size_t rank_stats_build(const struct model *m, struct rank_stats *s);
void rank_stats_release(struct rank_stats *s);

#endif
