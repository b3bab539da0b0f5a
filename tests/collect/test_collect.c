/*
 * test_collect.c - the collector's buffers, writer, strings, drops, capture
 * and signal flush, driven through collect.h in this process (the
 * constructor is compiled out: each test sets its environment, calls
 * cl_init() and ends with cl_final() or a signal), then read back through
 * the real model loader.
 */
#include "gstest.h"
#include "collect/internal.h"
#include "model/model.h"
#include "util/util.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Point the collector at a fresh directory, with extra settings "K=V" ... NULL. */
static const char *setup(const char *first, ...)
{
	static char dir[512];
	va_list ap;

	snprintf(dir, sizeof(dir), "%s/parts", gstest_tmpdir());
	mkdir(dir, 0755);
	setenv("GPUSCOPE_DIR", dir, 1);
	setenv("GPUSCOPE_TRACE", "nvtx,osrt", 1);
	setenv("GPUSCOPE_CPU_SAMPLE_HZ", "0", 1);
	va_start(ap, first);
	for (const char *kv = first; kv; kv = va_arg(ap, const char *)) {
		char *copy = xstrdup(kv), *eq = strchr(copy, '=');
		*eq = 0;
		setenv(copy, eq + 1, 1);
		free(copy);
	}
	va_end(ap);
	return dir;
}

/* Load the one part file in @dir. */
static void load_part(const char *dir, struct model *m)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *path = NULL;
	int n = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".gpuscope")) {
			free(path);
			path = xstrfmt("%s/%s", dir, de->d_name);
			n++;
		}
	if (d)
		closedir(d);
	CHECK_EQ_U64(n, 1);
	model_init(m);
	CHECK(path && model_load_report(m, path) == 0);
	free(path);
}

/* One mark; the name is interned before the reservation (collect.h's rule). */
static int mark(const char *name)
{
	uint32_t id = cl_intern(name, strlen(name));
	struct trace_nvtx_mark *r = cl_reserve(TRACE_EV_NVTX_MARK, sizeof(*r));

	if (!r)
		return 0;
	r->time = cl_now();
	r->pid = cl_pid();
	r->tid = cl_tid();
	r->name_id = id;
	cl_commit();
	return 1;
}

static size_t count_named(const struct model *m, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < m->marks.n; i++)
		n += !strcmp(model_str(m, m->marks.v[i].name_id), name);
	return n;
}

static void *mark_thread(void *arg)
{
	for (int i = 0; i < 5000; i++)
		mark((const char *)arg);
	return NULL;
}

/* Four threads, small blocks: every record and every name arrives. */
static void test_threads_and_blocks(void)
{
	const char *dir = setup("GPUSCOPE_BUFFER_KB=64", NULL);
	static const char *names[4] = { "alpha", "beta", "gamma", "delta" };
	pthread_t th[4];
	struct model m;

	CHECK(cl_init() == 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, mark_thread, (void *)names[i]);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	cl_final();
	load_part(dir, &m);
	CHECK_EQ_U64(m.marks.n, 20000);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U64(count_named(&m, names[i]), 5000);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_EQ_U64(m.procs.v[0].pid, getpid());
	CHECK(m.procs.v[0].ended);
	CHECK(m.procs.v[0].cmdline_id != 0);
	for (unsigned s = 0; s < TRACE_DROP__COUNT; s++)
		CHECK_EQ_U64(m.drops[s], 0);
	/* four threads of ours plus the main thread */
	CHECK(m.threads.n >= 5);
	model_release(&m);
}

/* The string table: ids by content, a reused buffer, the empty string. */
static void test_intern(void)
{
	char buf[32];
	uint32_t a, b, c;

	setup(NULL);
	CHECK(cl_init() == 0);
	snprintf(buf, sizeof(buf), "first");
	a = cl_intern(buf, strlen(buf));
	CHECK(a != 0);
	CHECK_EQ_U64(cl_intern("first", 5), a);
	CHECK_EQ_U64(cl_intern(buf, strlen(buf)), a); /* cached */
	snprintf(buf, sizeof(buf), "other");
	b = cl_intern(buf, strlen(buf));              /* same pointer, new content */
	CHECK(b != a);
	c = cl_intern("firstXX", 5);                 /* a prefix by length */
	CHECK_EQ_U64(c, a);
	CHECK_EQ_U64(cl_intern("", 0), 0);
	cl_final();
	CHECK_EQ_U64(cl_intern("first", 5), 0);       /* not recording any more */
}

/* No writer pass (long flush period) and a tiny pool: drops are counted exactly. */
static void test_drops_counted(void)
{
	const char *dir = setup("GPUSCOPE_BUFFER_KB=64", "GPUSCOPE_MAX_BUFFER_MB=0",
				"GPUSCOPE_FLUSH_MS=100000", NULL);
	struct model m;
	int kept = 0, tries = 20000;

	CHECK(cl_init() == 0);
	for (int i = 0; i < tries; i++)
		kept += mark("m");
	cl_final();
	load_part(dir, &m);
	CHECK(kept < tries);
	CHECK_EQ_U64(m.marks.n, kept);
	/* every refused mark, and the main thread's exit record at cl_final() */
	CHECK_EQ_U64(m.drops[TRACE_DROP_BUFFER], tries - kept + 1);
	model_release(&m);
}

/* Capture by the profiler API: only the window is kept, with its edges. */
static void test_capture_window(void)
{
	const char *dir = setup("GPUSCOPE_CAPTURE=cudaProfilerApi", "GPUSCOPE_CAPTURE_END=stop", NULL);
	struct model m;

	CHECK(cl_init() == 0);
	CHECK(!cl_recording());
	mark("before");
	cl_capture_begin();
	CHECK(cl_recording());
	mark("inside");
	cl_capture_end();
	mark("after");
	cl_capture_begin();   /* stop: a second window does not open */
	mark("again");
	cl_final();
	load_part(dir, &m);
	CHECK_EQ_U64(m.marks.n, 1);
	CHECK_EQ_U64(count_named(&m, "inside"), 1);
	CHECK_EQ_U64(m.captures.n, 2);
	CHECK_EQ_U64(m.captures.v[0].what, TRACE_CAPTURE_START);
	CHECK_EQ_U64(m.captures.v[1].what, TRACE_CAPTURE_STOP);
	model_release(&m);
}

/* A mark stamped @time, written now (as CUPTI hands over GPU records late). */
static int mark_at(const char *name, uint64_t time)
{
	uint32_t id = cl_intern(name, strlen(name));
	struct trace_nvtx_mark *r = cl_reserve_at(TRACE_EV_NVTX_MARK, sizeof(*r), time);

	if (!r)
		return 0;
	r->time = time;
	r->pid = cl_pid();
	r->tid = cl_tid();
	r->name_id = id;
	cl_commit();
	return 1;
}

/* Records that arrive late are judged by their own time against every window. */
static void test_capture_late_records(void)
{
	const char *dir = setup("GPUSCOPE_CAPTURE=cudaProfilerApi", "GPUSCOPE_CAPTURE_END=repeat", NULL);
	uint64_t before, in1, between, in2, after;
	struct model m;

	CHECK(cl_init() == 0);
	before = cl_now();
	cl_capture_begin();
	in1 = cl_now();
	cl_capture_end();
	between = cl_now();
	cl_capture_begin();
	in2 = cl_now();
	cl_capture_end();
	after = cl_now();
	/* all written after both windows closed */
	CHECK(!mark_at("late-before", before));
	CHECK(mark_at("late-in1", in1));
	CHECK(!mark_at("late-between", between));
	CHECK(mark_at("late-in2", in2));
	CHECK(!mark_at("late-after", after));
	CHECK(!mark("now"));    /* judged by now: outside */
	cl_final();
	load_part(dir, &m);
	CHECK_EQ_U64(m.marks.n, 2);
	CHECK_EQ_U64(count_named(&m, "late-in1"), 1);
	CHECK_EQ_U64(count_named(&m, "late-in2"), 1);
	model_release(&m);
}

/* --delay/--duration: a late record is judged by its time too. */
static void test_timed_late_records(void)
{
	const char *dir;
	uint64_t t0 = cl_now();
	struct model m;
	char start[32];

	snprintf(start, sizeof(start), "%llu", (unsigned long long)t0);
	dir = setup("GPUSCOPE_DELAY_NS=1000000000", "GPUSCOPE_DURATION_NS=1000000000", NULL);
	setenv("GPUSCOPE_START_NS", start, 1);
	CHECK(cl_init() == 0);
	CHECK(!mark_at("early", t0 + 500000000ull));
	CHECK(mark_at("inside", t0 + 1500000000ull));
	CHECK(!mark_at("late", t0 + 2500000000ull));
	cl_final();
	unsetenv("GPUSCOPE_START_NS");
	unsetenv("GPUSCOPE_DELAY_NS");
	unsetenv("GPUSCOPE_DURATION_NS");
	load_part(dir, &m);
	CHECK_EQ_U64(count_named(&m, "inside"), 1);
	CHECK_EQ_U64(count_named(&m, "early") + count_named(&m, "late"), 0);
	model_release(&m);
}

/* --capture-range-end=repeat: every window is kept. */
static void test_capture_repeat(void)
{
	const char *dir = setup("GPUSCOPE_CAPTURE=cudaProfilerApi", "GPUSCOPE_CAPTURE_END=repeat", NULL);
	struct model m;

	CHECK(cl_init() == 0);
	for (int i = 0; i < 3; i++) {
		mark("out");
		cl_capture_begin();
		mark("in");
		cl_capture_end();
	}
	cl_final();
	load_part(dir, &m);
	CHECK_EQ_U64(count_named(&m, "in"), 3);
	CHECK_EQ_U64(count_named(&m, "out"), 0);
	CHECK_EQ_U64(m.captures.n, 6);
	model_release(&m);
}

/* A warning reaches the model's warnings. */
static void test_warning(void)
{
	const char *dir = setup(NULL);
	struct model m;

	CHECK(cl_init() == 0);
	cl_warning("CUDA tracing off: %s", "no driver");
	cl_final();
	load_part(dir, &m);
	CHECK_EQ_U64(m.nr_warnings, 1);
	CHECK_CONTAINS(m.warnings[0], "CUDA tracing off: no driver");
	model_release(&m);
}

/*
 * A process killed by SIGTERM (long flush period: nothing written by the
 * writer) still leaves every record, written by the signal handler.
 */
static void test_signal_flush(void)
{
	const char *dir = setup("GPUSCOPE_FLUSH_MS=100000", NULL);
	struct model m;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		if (cl_init() < 0)
			_exit(3);
		for (int i = 0; i < 1000; i++)
			mark("x");
		raise(SIGTERM);
		_exit(4);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	load_part(dir, &m);
	CHECK_EQ_U64(m.marks.n, 1000);
	CHECK(m.procs.n == 1 && m.procs.v[0].ended);  /* SIGTERM ends the stream cleanly */
	model_release(&m);
}

static volatile sig_atomic_t handler_tries;

static void on_alarm(int sig)
{
	(void)sig;
	handler_tries++;
	mark("from handler");
}

/*
 * Records made by a signal handler that interrupts a record of the same
 * thread are dropped and counted, never written over the interrupted one:
 * every chunk stays whole and every try is either kept or counted.
 */
static void test_signal_handler_records(void)
{
	const char *dir = setup(NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct model m;
	uint64_t kept = 0, tries = 0;

	CHECK(cl_init() == 0);
	mark("from handler");   /* define the name before the handler can */
	kept++, tries++;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 300000 && handler_tries < 2000; i++) {
		kept += mark("main");
		tries++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	tries += handler_tries;
	cl_final();
	load_part(dir, &m);
	CHECK(handler_tries > 0);
	CHECK_EQ_U64(m.chunks_bad, 0);
	CHECK_EQ_U64(m.marks.n + m.drops[TRACE_DROP_BUFFER], tries);
	CHECK(count_named(&m, "main") >= kept - 1);
	model_release(&m);
}

/* Without GPUSCOPE_DIR nothing is recorded and nothing breaks. */
static void test_disabled(void)
{
	unsetenv("GPUSCOPE_DIR");
	CHECK(cl_init() < 0);
	CHECK(cl_reserve(TRACE_EV_NVTX_MARK, sizeof(struct trace_nvtx_mark)) == NULL);
	CHECK_EQ_U64(cl_intern("x", 1), 0);
	CHECK(!cl_recording());
	cl_final();
}

static const struct gstest tests[] = {
	GSTEST(test_threads_and_blocks),
	GSTEST(test_intern),
	GSTEST(test_drops_counted),
	GSTEST(test_capture_window),
	GSTEST(test_capture_repeat),
	GSTEST(test_capture_late_records),
	GSTEST(test_timed_late_records),
	GSTEST(test_warning),
	GSTEST(test_signal_flush),
	GSTEST(test_signal_handler_records),
	GSTEST(test_disabled),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
