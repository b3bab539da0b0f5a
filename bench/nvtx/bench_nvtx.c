/*
 * bench_nvtx.c - cost of the calls the collector hooks, timed from inside.
 *
 *   bench_nvtx CASE N     prints "CASE ns_per_op"
 *
 * pushpop   N nvtxRangePushA/nvtxRangePop pairs (one name)
 * read0     N read(fd, buf, 0) on /dev/zero: the cheapest traced blocking call
 * nsleep0   N nanosleep of 0 ns
 *
 * Run plain and under `gpuscope profile` by run.sh; the difference of the
 * medians is the collector's overhead per operation.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "pushpop";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	double t0, t1;
	char buf[1];

	nvtxInitialize(NULL);  /* the injection loads here, outside the timing */
	if (!strcmp(c, "pushpop")) {
		t0 = now();
		for (long i = 0; i < n; i++) {
			nvtxRangePushA("bench");
			nvtxRangePop();
		}
		t1 = now();
	} else if (!strcmp(c, "read0")) {
		int fd = open("/dev/zero", O_RDONLY);
		t0 = now();
		for (long i = 0; i < n; i++)
			if (read(fd, buf, 0) < 0)
				return 1;
		t1 = now();
		close(fd);
	} else if (!strcmp(c, "nsleep0")) {
		struct timespec z = { 0, 0 };
		t0 = now();
		for (long i = 0; i < n; i++)
			nanosleep(&z, NULL);
		t1 = now();
	} else {
		fprintf(stderr, "bench_nvtx: unknown case '%s'\n", c);
		return 2;
	}
	printf("%s %.1f\n", c, (t1 - t0) / (double)n);
	return 0;
}
