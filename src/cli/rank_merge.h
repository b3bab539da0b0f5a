/*
 * rank_merge.h - `gpuscope merge` of the reports and traces of several ranks
 * (several hosts), with their clocks aligned (docs/distributed.md).
 *
 * Each input is loaded into the model (load_input(): a gpuscope report, a
 * Kineto trace, an nsys export), its times are moved onto the clock of the
 * first input, and it is written as a report of its own through the real
 * writer (trace_builder); the merger (trace_merge) then joins those, one
 * stream per input.
 *
 * The clock of input i is moved by off_i:
 *  1. the wall-clock offset: a gpuscope report's processes record
 *     CLOCK_REALTIME and CLOCK_MONOTONIC at their start, so wall - mono is
 *     known; a Kineto trace's times already are wall-clock times (epoch
 *     microseconds); off_i = wall_i - wall_0.  Where neither is known, the
 *     first events are aligned;
 *  2. refined by the collectives: the n-th communication kernel of a given
 *     name on each rank is one instance of the same collective, and a
 *     collective ends on every rank at the same instant, up to the last
 *     transfer (HTA and the nsys multi-report recipes align on this).  The
 *     refinement is the median, over the matched instances, of the end on
 *     input 0 minus the end on input i; it is applied when at least
 *     RM_MIN_PAIRS instances match.  What remains, the largest |difference|
 *     after the refinement, is the alignment's residual error; it is written
 *     in each process's TRACE_EV_PROC_ATTR and in a warning `info` shows.
 */
#ifndef GS_CLI_RANK_MERGE_H
#define GS_CLI_RANK_MERGE_H

#include <stddef.h>

/* Fewer matched collectives than this leave the wall-clock offset alone: a
 * median of one or two instances says nothing about outliers. */
#define RM_MIN_PAIRS 3

struct rank_merge_opts {
	int excl;          /* fail when the output exists */
	int as_ranks;      /* rank = input index, world size = inputs (synthetic benches) */
};

/*
 * rank_merge - merge @n inputs into the report @out as above.
 * Returns 0, or -1 after error() (no output left behind).
 */
int rank_merge(const char *out, const char *const *inputs, size_t n, const struct rank_merge_opts *o);

/*
 * rank_merge_wanted - should `merge` of these inputs take the aligning path?
 * Yes when an input is not a gpuscope report, or when the reports come from
 * more than one host (their CLOCK_MONOTONIC clocks are unrelated).  1 or 0.
 */
int rank_merge_wanted(const char *const *inputs, size_t n);

#endif
