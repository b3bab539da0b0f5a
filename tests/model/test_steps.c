/*
 * test_steps.c - what a step is (model_is_step_name, model_name_matches) and
 * the instances of one thread's loop (model_find_steps) on models built in
 * memory.
 */
#include "gstest.h"
#include "model/model.h"

static void test_step_names(void)
{
	static const char *const yes[] = {
		"ProfilerStep#0", "ProfilerStep#12", "profilerstep", "step", "Step", "STEP 3",
		"step_7", "step-2", "train_step", "Train_Step#2", "training_step", "train step 4",
		"training step", "train", "iteration", "iteration-5", "Iteration 10", "iter",
		"iter_10", "train_iter",
	};
	static const char *const no[] = {
		"", "#12", "12", "ProfilerStepper", "ProfilerStep.forward", "stepper", "optimizer.step",
		"step_forward", "train_step_fwd", "forward", "backward", "aten::add", "training",
		"iterate", "my_step",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!model_is_step_name(yes[i]))
			gstest_fail(__FILE__, __LINE__, "'%s' is a step name", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (model_is_step_name(no[i]))
			gstest_fail(__FILE__, __LINE__, "'%s' is not a step name", no[i]);
}

static void test_name_matches(void)
{
	CHECK_EQ_I64(model_name_matches("ProfilerStep#12", "ProfilerStep#12"), 1);
	CHECK_EQ_I64(model_name_matches("ProfilerStep#12", "ProfilerStep"), 1);
	CHECK_EQ_I64(model_name_matches("ProfilerStep#12", "ProfilerStep#3"), 1);
	CHECK_EQ_I64(model_name_matches("profilerstep#1", "ProfilerStep"), 1);
	CHECK_EQ_I64(model_name_matches("forward_1", "forward"), 1);
	CHECK_EQ_I64(model_name_matches("forward", "forward"), 1);
	CHECK_EQ_I64(model_name_matches("ProfilerStep#1", "Profiler"), 0);
	CHECK_EQ_I64(model_name_matches("stepA", "step"), 0);
	CHECK_EQ_I64(model_name_matches("step", "steps"), 0);
	/* a name that strips to nothing matches only itself */
	CHECK_EQ_I64(model_name_matches("#1", "#1"), 1);
	CHECK_EQ_I64(model_name_matches("#1", "#2"), 0);
	CHECK_EQ_I64(model_name_matches("12", ""), 0);
}

static void range(struct model *m, uint32_t tid, const char *name, uint64_t start, uint64_t end)
{
	struct trace_nvtx_range *r = MODEL_PUSH(m->nvtx);

	r->pid = 7;
	r->tid = tid;
	r->end_tid = tid;
	r->name_id = model_intern(m, name);
	r->kind = TRACE_NVTX_PUSHPOP;
	r->start = start;
	r->end = end;
}

#define CHECK_STEP(s, i, a, b) \
	do { CHECK_EQ_U64((s).v[i].start, a); CHECK_EQ_U64((s).v[i].end, b); } while (0)

/*
 * Two threads step in lockstep; the other thread's first step comes first,
 * but the loop is the thread with more steps.  Ranges are pushed out of
 * order: model_finish() sorts them.
 */
static void test_two_threads(void)
{
	struct model m;
	struct model_steps s;

	model_init(&m);
	range(&m, 10, "step", 400, 500);
	range(&m, 10, "step", 100, 200);
	range(&m, 10, "step", 200, 300);
	range(&m, 10, "step", 300, 400);
	range(&m, 10, "forward", 110, 150);   /* not a step */
	range(&m, 20, "step", 90, 190);
	range(&m, 20, "step", 190, 290);
	range(&m, 20, "step", 290, 390);
	model_finish(&m);

	CHECK_EQ_U64(model_find_steps(&m, NULL, NULL, &s), 4);
	CHECK_EQ_U64(s.n, 4);
	CHECK_EQ_U64(s.pid, 7);
	CHECK_EQ_U64(s.tid, 10);
	CHECK_STR(model_str(&m, s.name_id), "step");
	CHECK_STEP(s, 0, 100, 200);
	CHECK_STEP(s, 1, 200, 300);
	CHECK_STEP(s, 2, 300, 400);
	CHECK_STEP(s, 3, 400, 500);
	model_steps_release(&s);
	CHECK_EQ_U64(s.n, 0);
	CHECK(s.v == NULL);
	model_release(&m);
}

/*
 * A numbered loop (ProfilerStep#N) with a step pushed twice, an instance
 * that starts inside the previous one, a range never closed and a later
 * loop under another step name: one loop, nested instances skipped.
 */
static void test_nested(void)
{
	struct model m;
	struct model_steps s;

	model_init(&m);
	range(&m, 1, "ProfilerStep#0", 100, 200);
	range(&m, 1, "ProfilerStep#0", 110, 150);   /* pushed twice */
	range(&m, 1, "ProfilerStep#1", 200, 300);
	range(&m, 1, "ProfilerStep#1", 250, 350);   /* starts inside #1 */
	range(&m, 1, "ProfilerStep#2", 350, 450);
	range(&m, 1, "ProfilerStep#3", 450, 0);     /* never closed */
	range(&m, 1, "step", 500, 600);             /* another loop's name */
	range(&m, 1, "step", 600, 700);
	model_finish(&m);

	CHECK_EQ_U64(model_find_steps(&m, NULL, NULL, &s), 3);
	CHECK_STR(model_str(&m, s.name_id), "ProfilerStep#0");
	CHECK_STEP(s, 0, 100, 200);
	CHECK_STEP(s, 1, 200, 300);
	CHECK_STEP(s, 2, 350, 450);
	model_steps_release(&s);

	/* asked for by name: the other loop */
	CHECK_EQ_U64(model_find_steps(&m, "step", NULL, &s), 2);
	CHECK_STEP(s, 0, 500, 600);
	CHECK_STEP(s, 1, 600, 700);
	model_steps_release(&s);
	model_release(&m);
}

/* @want: any range name, matched exactly or without its number. */
static void test_want(void)
{
	struct model m;
	struct model_steps s;

	model_init(&m);
	range(&m, 3, "fwd", 10, 20);
	range(&m, 3, "batch_1", 0, 100);
	range(&m, 3, "fwd", 110, 120);
	range(&m, 3, "batch_2", 100, 200);
	range(&m, 3, "batch_3", 200, 300);
	model_finish(&m);

	/* no step name at all: no steps found by habit */
	CHECK_EQ_U64(model_find_steps(&m, NULL, NULL, &s), 0);
	CHECK(s.v == NULL);
	model_steps_release(&s);

	CHECK_EQ_U64(model_find_steps(&m, "batch", NULL, &s), 3);
	CHECK_STR(model_str(&m, s.name_id), "batch_1");
	CHECK_STEP(s, 0, 0, 100);
	CHECK_STEP(s, 2, 200, 300);
	model_steps_release(&s);

	/* "batch_2" names the loop too: the same name without its number */
	CHECK_EQ_U64(model_find_steps(&m, "batch_2", NULL, &s), 3);
	model_steps_release(&s);

	CHECK_EQ_U64(model_find_steps(&m, "fwd", NULL, &s), 2);
	CHECK_STEP(s, 0, 10, 20);
	CHECK_STEP(s, 1, 110, 120);
	model_steps_release(&s);

	CHECK_EQ_U64(model_find_steps(&m, "bwd", NULL, &s), 0);
	model_steps_release(&s);
	model_release(&m);
}

/* A window: steps that overlap it count, those in a gap of it do not. */
static void test_window(void)
{
	struct model m;
	struct model_steps s;
	struct interval_set w = { 0 };

	model_init(&m);
	for (uint64_t t = 0; t < 1000; t += 100)
		range(&m, 5, "iteration", t, t + 100);
	model_finish(&m);

	/* [250, 420): the steps at 200, 300 and 400 */
	ivset_add(&w, 250, 420);
	ivset_normalize(&w);
	CHECK_EQ_U64(model_find_steps(&m, NULL, &w, &s), 3);
	CHECK_STEP(s, 0, 200, 300);
	CHECK_STEP(s, 2, 400, 500);
	model_steps_release(&s);
	ivset_release(&w);

	/* two pieces with a gap that holds the steps at 300 and 400 */
	ivset_add(&w, 150, 300);
	ivset_add(&w, 500, 510);
	ivset_normalize(&w);
	CHECK_EQ_U64(model_find_steps(&m, NULL, &w, &s), 3);
	CHECK_STEP(s, 0, 100, 200);
	CHECK_STEP(s, 1, 200, 300);
	CHECK_STEP(s, 2, 500, 600);
	model_steps_release(&s);
	ivset_release(&w);

	/* an empty window holds nothing */
	ivset_normalize(&w);
	CHECK_EQ_U64(model_find_steps(&m, NULL, &w, &s), 0);
	model_steps_release(&s);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_step_names),
	GSTEST(test_name_matches),
	GSTEST(test_two_threads),
	GSTEST(test_nested),
	GSTEST(test_want),
	GSTEST(test_window),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
