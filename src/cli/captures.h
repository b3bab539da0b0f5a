/*
 * captures.h - the captures of a report, as `info` lists them and
 * `analyze --capture K` loads one (docs/always-on.md).
 *
 * A capture is a capture window: a start edge and the next stop edge of the
 * same process (TRACE_EV_CAPTURE), with the trigger that opened it and, for
 * an on-demand run, the flight recorder's ring written before it.  The
 * windows of several processes that overlap in time are one capture (a
 * `gpuscope capture NAME` reaches every process of the run within
 * milliseconds), numbered from 1 in the order of their starts.
 */
#ifndef GS_CLI_CAPTURES_H
#define GS_CLI_CAPTURES_H

#include <stddef.h>
#include <stdint.h>

struct model;

struct capture {
	uint64_t start, stop;     /* report clock; stop 0 = never closed (the report's end) */
	uint64_t ring_from;       /* earliest record of the ring before it; 0 = none */
	unsigned trigger;         /* enum trace_capture_trigger of its first window */
	size_t nprocs;            /* processes that took part */
};

/* The captures of @m, in start order, into *@out (caller frees); how many. */
size_t captures_of(const struct model *m, struct capture **out);
/* "command", "nvtx", "cudaProfilerApi", "timed", "step_time" or "-" (unknown). */
const char *capture_trigger_name(unsigned trigger);
/*
 * capture_keep - keep only capture @k (from 1) of @m, with its ring: the
 * model clipped to [ring_from or start, stop].  0, or -1 after error()
 * when the report has no capture @k.
 */
int capture_keep(struct model *m, unsigned k);
/*
 * capture_only - the same without the ring, the model's span set to the
 * capture's: what `diff --capture K` compares (the ring has no GPU work).
 */
int capture_only(struct model *m, unsigned k);

#endif
