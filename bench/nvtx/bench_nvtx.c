/*
 * bench_nvtx.c - cost of the calls the collector hooks, timed from inside.
 *
 *   bench_nvtx CASE N     prints "CASE thread_cpu_ns_per_op process_cpu_ns_per_op wall_ns_per_op"
 *
 * pushpop   N nvtxRangePushA/nvtxRangePop pairs (one name)
 * read0     N read(fd, buf, 0) on /dev/zero: the cheapest traced blocking call
 * nsleep0   N nanosleep of 0 ns
 * mutex     N pthread_mutex_lock/unlock pairs, never contended (the OS-runtime
 *           hooks see every one; the CUDA driver and CUPTI take several per
 *           kernel launch)
 * rwlock    N pthread_rwlock_rdlock/unlock pairs, never contended
 *
 * The lock cases start an idle second thread first, in both runs: glibc
 * takes an uncontended lock without an atomic instruction while a process
 * has one thread (7 ns against 20 ns a pair here), and a CUDA program, like
 * a profiled one, always has several.
 *
 * Run plain and under `gpuscope profile` by run.sh; the difference of the
 * medians is the collector's overhead per operation.  Thread CPU time is
 * the cost to the calling thread whatever else runs on the machine; process
 * CPU time adds the collector's writer thread (compression), up to the
 * program's end; wall time is what a loaded machine makes of it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static double clk(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double th0, pr0, wa0;

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void second_thread(void)
{
	pthread_t t;

	if (!pthread_create(&t, NULL, idle, NULL))
		pthread_detach(t);
}

static void start(void)
{
	wa0 = clk(CLOCK_MONOTONIC);
	th0 = clk(CLOCK_THREAD_CPUTIME_ID);
	pr0 = clk(CLOCK_PROCESS_CPUTIME_ID);
}

static void stop(const char *c, long n)
{
	double th = clk(CLOCK_THREAD_CPUTIME_ID) - th0;
	double pr = clk(CLOCK_PROCESS_CPUTIME_ID) - pr0;
	double wa = clk(CLOCK_MONOTONIC) - wa0;

	printf("%s %.1f %.1f %.1f\n", c, th / (double)n, pr / (double)n, wa / (double)n);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "pushpop";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	char buf[1];

	nvtxInitialize(NULL);  /* the injection loads here, outside the timing */
	{
		/* steady state: the collector's clock is fitted after its first 20-50 ms */
		struct timespec ts = { 0, 120000000 };
		nanosleep(&ts, NULL);
	}
	if (!strcmp(c, "pushpop")) {
		start();
		for (long i = 0; i < n; i++) {
			nvtxRangePushA("bench");
			nvtxRangePop();
		}
		stop(c, n);
	} else if (!strcmp(c, "read0")) {
		int fd = open("/dev/zero", O_RDONLY);
		start();
		for (long i = 0; i < n; i++)
			if (read(fd, buf, 0) < 0)
				return 1;
		stop(c, n);
		close(fd);
	} else if (!strcmp(c, "nsleep0")) {
		struct timespec z = { 0, 0 };
		start();
		for (long i = 0; i < n; i++)
			nanosleep(&z, NULL);
		stop(c, n);
	} else if (!strcmp(c, "mutex")) {
		static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		second_thread();
		start();
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		stop(c, n);
	} else if (!strcmp(c, "rwlock")) {
		static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
		second_thread();
		start();
		for (long i = 0; i < n; i++) {
			pthread_rwlock_rdlock(&l);
			pthread_rwlock_unlock(&l);
		}
		stop(c, n);
	} else {
		fprintf(stderr, "bench_nvtx: unknown case '%s'\n", c);
		return 2;
	}
	return 0;
}
