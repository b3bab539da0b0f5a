/*
 * test_captures.c - a report's captures as `info` lists them and
 * `analyze --capture K` loads one (src/cli/captures.c): edges paired per
 * process, overlapping windows of several processes merged into one
 * capture, an unclosed window, older records without a trigger, and the
 * clip to one capture with its ring.
 */
#include "gstest.h"
#include "cli/captures.h"
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

static void edge(struct model *m, uint64_t t, uint32_t pid, unsigned what, unsigned trig, uint32_t id,
		 uint64_t ring_from)
{
	struct trace_capture *c = MODEL_PUSH(m->captures);

	c->time = t;
	c->pid = pid;
	c->what = what;
	c->trigger = trig;
	c->id = id;
	c->ring_from = ring_from;
}

static void mark(struct model *m, uint64_t t)
{
	struct trace_nvtx_mark *k = MODEL_PUSH(m->marks);

	k->time = t;
	k->pid = 1;
	k->tid = 1;
}

/* Two processes triggered together, then one alone, then one never closed. */
static void build(struct model *m)
{
	model_init(m);
	edge(m, 1000, 1, TRACE_CAPTURE_START, TRACE_TRIGGER_COMMAND, 1, 700);
	edge(m, 1010, 2, TRACE_CAPTURE_START, TRACE_TRIGGER_COMMAND, 1, 650);
	edge(m, 1500, 1, TRACE_CAPTURE_STOP, TRACE_TRIGGER_COMMAND, 1, 0);
	edge(m, 1520, 2, TRACE_CAPTURE_STOP, TRACE_TRIGGER_COMMAND, 1, 0);
	edge(m, 3000, 1, TRACE_CAPTURE_START, TRACE_TRIGGER_STEP_TIME, 2, 2800);
	edge(m, 3100, 1, TRACE_CAPTURE_STOP, TRACE_TRIGGER_STEP_TIME, 2, 0);
	edge(m, 5000, 2, TRACE_CAPTURE_START, TRACE_TRIGGER_UNKNOWN, 0, 0);
	for (uint64_t t = 100; t <= 6000; t += 100)
		mark(m, t);
	model_finish(m);
}

static void test_windows(void)
{
	struct model m;
	struct capture *c;
	size_t n;

	build(&m);
	n = captures_of(&m, &c);
	CHECK_EQ_U64(n, 3);
	if (n == 3) {
		/* one capture of two processes: the earliest start and ring, the latest stop */
		CHECK_EQ_U64(c[0].start, 1000);
		CHECK_EQ_U64(c[0].stop, 1520);
		CHECK_EQ_U64(c[0].ring_from, 650);
		CHECK_EQ_U64(c[0].nprocs, 2);
		CHECK_STR(capture_trigger_name(c[0].trigger), "command");
		CHECK_EQ_U64(c[1].start, 3000);
		CHECK_EQ_U64(c[1].stop, 3100);
		CHECK_EQ_U64(c[1].nprocs, 1);
		CHECK_STR(capture_trigger_name(c[1].trigger), "step_time");
		/* never closed; an older record: no trigger */
		CHECK_EQ_U64(c[2].start, 5000);
		CHECK_EQ_U64(c[2].stop, 0);
		CHECK_STR(capture_trigger_name(c[2].trigger), "-");
	}
	free(c);
	CHECK_STR(capture_trigger_name(99), "-");
	model_release(&m);
}

static void test_keep(void)
{
	struct model m;

	/* capture 2 with its ring: marks 2800..3100 */
	build(&m);
	CHECK_EQ_I64(capture_keep(&m, 2), 0);
	CHECK_EQ_U64(m.marks.n, 4);
	if (m.marks.n)
		CHECK_EQ_U64(m.marks.v[0].time, 2800);
	model_release(&m);
	/* capture 3 is open: to the report's end */
	build(&m);
	CHECK_EQ_I64(capture_keep(&m, 3), 0);
	CHECK_EQ_U64(m.marks.n, 11);
	model_release(&m);
	/* no capture 4, no capture 0 */
	build(&m);
	CHECK_EQ_I64(capture_keep(&m, 4), -1);
	CHECK_EQ_I64(capture_keep(&m, 0), -1);
	model_release(&m);
	/* a report without captures */
	model_init(&m);
	mark(&m, 5);
	model_finish(&m);
	CHECK_EQ_I64(capture_keep(&m, 1), -1);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_windows),
	GSTEST(test_keep),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
