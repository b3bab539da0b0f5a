/*
 * test_metric_ring.c - the GPU metrics' flight recorder of `profile
 * --on-demand` (struct nvml_ring, src/nvml/sampler.h): which samples reach
 * the report (the ring before each capture, the capture, the end's ring),
 * that its memory stays bounded over a run much longer than the ring, what
 * its byte bound costs, and the capture edges' line format.
 *
 * Time is simulated: one metric sample every 100 ms, the ring deciding
 * after each as the sampler's thread does.
 */
#include "gstest.h"
#include "nvml/sampler.h"
#include "trace/trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define S (1000 * MS)
#define TICK (100 * MS)

/* What the ring kept, in order. */
static struct kept {
	uint64_t t[20000];
	size_t n;
} kept;

static void on_emit(void *ctx, const struct trace_metric *m)
{
	(void)ctx;
	if (kept.n < sizeof(kept.t) / sizeof(kept.t[0]))
		kept.t[kept.n++] = m->time;
}

static size_t kept_in(uint64_t lo, uint64_t hi)
{
	size_t c = 0;

	for (size_t i = 0; i < kept.n; i++)
		if (kept.t[i] >= lo && kept.t[i] <= hi)
			c++;
	return c;
}

static void push_at(struct nvml_ring *r, uint64_t t)
{
	struct trace_metric m;

	memset(&m, 0, sizeof(m));
	m.time = t;
	m.value = 1;
	nvml_ring_push(r, &m);
}

/*
 * A run of 1000 s, ring 5 s, slack 2 s; capture 1 of process 7 from 500 s to
 * 503 s, each edge learnt 100 ms late.  Kept: [495 s, 503 s] and the last
 * 5 s, exactly; the ring never held more than 7 s of samples plus two.
 */
static void test_long_run(void)
{
	struct nvml_ring r;

	kept.n = 0;
	nvml_ring_init(&r, 5 * S, 2 * S, 1000000, on_emit, NULL);
	for (uint64_t t = 0; t <= 1000 * S; t += TICK) {
		push_at(&r, t);
		if (t == 500 * S + TICK)
			nvml_ring_edge(&r, 1, 7, 1, 500 * S);
		if (t == 503 * S + TICK)
			nvml_ring_edge(&r, 0, 7, 1, 503 * S);
		nvml_ring_advance(&r, t);
	}
	nvml_ring_finish(&r, 1000 * S);
	CHECK_EQ_U64(r.pushed, 10001);
	CHECK_EQ_U64(kept_in(0, 495 * S - 1), 0);             /* the run's beginning: gone */
	CHECK_EQ_U64(kept_in(495 * S, 503 * S), 81);          /* 5 s before, 3 s inside, both ends */
	CHECK_EQ_U64(kept_in(503 * S + 1, 995 * S - 1), 0);   /* the long idle stretch */
	CHECK_EQ_U64(kept_in(995 * S, 1000 * S), 51);         /* the end's 5 s */
	CHECK_EQ_U64(kept.n, 81 + 51);
	CHECK_EQ_U64(r.kept, kept.n);
	CHECK_EQ_U64(r.evicted, 0);
	/*
	 * memory: the (ring + slack) / tick + 1 samples that the last advance
	 * left and the one just pushed, not the run's 10001; the buffer never
	 * grew past its first 256
	 */
	CHECK_EQ_U64(r.peak, 72);
	CHECK_EQ_U64(r.alloc, 256);
	CHECK_EQ_U64(r.captures, 1);
	nvml_ring_release(&r);
}

/*
 * A start learnt 3 s late, beyond the 2 s slack: the samples decided before
 * it was known (older than now - 7 s) are gone; the rest of the ring before
 * the capture is kept.
 */
static void test_late_edge(void)
{
	struct nvml_ring r;

	kept.n = 0;
	nvml_ring_init(&r, 5 * S, 2 * S, 1000000, on_emit, NULL);
	for (uint64_t t = 0; t <= 600 * S; t += TICK) {
		push_at(&r, t);
		if (t == 503 * S)
			nvml_ring_edge(&r, 1, 7, 1, 500 * S);
		if (t == 504 * S)
			nvml_ring_edge(&r, 0, 7, 1, 504 * S);
		nvml_ring_advance(&r, t);
	}
	nvml_ring_finish(&r, 600 * S);
	/* at 502.9 s the samples before 495.9 s were decided, with no capture known */
	CHECK_EQ_U64(kept_in(0, 495 * S + 9 * TICK - 1), 0);
	CHECK_EQ_U64(kept_in(495 * S + 9 * TICK, 504 * S), 82);
	CHECK_EQ_U64(kept_in(504 * S + 1, 595 * S - 1), 0);
	nvml_ring_release(&r);
}

/*
 * The byte bound: 20 samples (2 s) for a 5 s ring.  The oldest is decided
 * as soon as the ring is full: before the capture, the ring reaches back
 * 2 s only (counted as evicted); during the capture the samples are kept
 * as they leave; at the end, the last 20.  Memory never passes the bound.
 */
static void test_byte_bound(void)
{
	struct nvml_ring r;

	kept.n = 0;
	nvml_ring_init(&r, 5 * S, 2 * S, 20, on_emit, NULL);
	for (uint64_t t = 0; t <= 1000 * S; t += TICK) {
		push_at(&r, t);
		if (t == 500 * S)
			nvml_ring_edge(&r, 1, 7, 1, 500 * S);
		if (t == 503 * S)
			nvml_ring_edge(&r, 0, 7, 1, 503 * S);
		nvml_ring_advance(&r, t);
	}
	nvml_ring_finish(&r, 1000 * S);
	CHECK_EQ_U64(r.peak, 20);
	CHECK_EQ_U64(r.alloc, 20);
	CHECK_EQ_U64(kept_in(0, 498 * S), 0);
	CHECK_EQ_U64(kept_in(498 * S + TICK, 503 * S), 50);
	CHECK_EQ_U64(kept_in(503 * S + 1, 998 * S), 0);
	CHECK_EQ_U64(kept_in(998 * S + TICK, 1000 * S), 20);
	CHECK_EQ_U64(kept.n, 70);
	CHECK_EQ_U64(r.evicted, 10001 - 70);
	nvml_ring_release(&r);
}

/*
 * Two processes of one run captured together (`gpuscope capture NAME`);
 * one stops, the other never does (killed): its capture reaches the end.
 */
static void test_two_processes(void)
{
	struct nvml_ring r;

	kept.n = 0;
	nvml_ring_init(&r, 1 * S, 2 * S, 1000000, on_emit, NULL);
	for (uint64_t t = 0; t <= 100 * S; t += TICK) {
		push_at(&r, t);
		if (t == 50 * S) {
			nvml_ring_edge(&r, 1, 7, 1, 50 * S);
			nvml_ring_edge(&r, 1, 8, 1, 50 * S);
		}
		if (t == 52 * S)
			nvml_ring_edge(&r, 0, 7, 1, 52 * S);
		nvml_ring_advance(&r, t);
	}
	nvml_ring_finish(&r, 100 * S);
	CHECK_EQ_U64(kept_in(0, 49 * S - 1), 0);
	CHECK_EQ_U64(kept_in(49 * S, 100 * S), 511);
	CHECK_EQ_U64(r.captures, 2);
	nvml_ring_release(&r);
}

/* The collector's lines (src/collect/capture.c): whole lines only, bad ones skipped. */
static void test_edge_lines(void)
{
	static const char text[] = "start 12 1 500\n"
				   "bogus line\n"
				   "start x 1 2\n"
				   "start 12 1 999\n"     /* a start seen again: the first stays */
				   "stop 13 1 650\n"      /* not known: ignored */
				   "start 12 2 700 extra\n"
				   "stop 12 1 600\n"
				   "stop 12 1";           /* not whole yet */
	struct nvml_ring r;
	size_t used;

	nvml_ring_init(&r, 1 * S, 0, 10, on_emit, NULL);
	used = nvml_ring_edges(&r, text, strlen(text));
	CHECK_EQ_U64(used, strlen(text) - strlen("stop 12 1"));
	CHECK_EQ_U64(r.ncap, 1);
	CHECK_EQ_U64(r.captures, 1);
	CHECK_EQ_U64(r.cap[0].pid, 12);
	CHECK_EQ_U64(r.cap[0].id, 1);
	CHECK_EQ_U64(r.cap[0].begin, 500);
	CHECK_EQ_U64(r.cap[0].end, 600);
	/* the rest, once whole */
	used = nvml_ring_edges(&r, "stop 12 1 610\nstart 12 2 700\n", 29);
	CHECK_EQ_U64(used, 29);
	CHECK_EQ_U64(r.cap[0].end, 600);   /* a stop seen again: the first stays */
	CHECK_EQ_U64(r.ncap, 2);
	CHECK_EQ_U64(r.cap[1].begin, 700);
	CHECK_EQ_U64(r.cap[1].end, 0);
	nvml_ring_release(&r);
}

int main(int argc, char **argv)
{
	static const struct gstest tests[] = {
		GSTEST(test_long_run), GSTEST(test_late_edge), GSTEST(test_byte_bound),
		GSTEST(test_two_processes), GSTEST(test_edge_lines), { 0 },
	};
	return gstest_main(argc, argv, tests);
}
