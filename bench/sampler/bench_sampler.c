/*
 * bench_sampler.c - cost of the profile's GPU metric sampler.
 *
 *   bench_sampler [SECONDS]
 *
 * 1. Time one nvml_sample() of the FAST tier and of FAST+SLOW (wall and CPU
 *    microseconds, mean of repeated calls).
 *    Then print the measured CPU cost of each NVML read group.
 * 2. Run nvml_sampler_start() for SECONDS each, at 10 Hz with its default CPU
 *    budget, at 10 Hz without a budget (GPUSCOPE_GPU_METRICS_BUDGET=0) and at
 *    100 Hz with the budget, while this thread sleeps, and report the process
 *    CPU time spent as a percentage of one core (the sampler thread is the
 *    only one working).
 * Needs an NVIDIA GPU and driver.
 */
#include "nvml/nvml.h"
#include "nvml/sampler.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	return (double)now_mono_ns() / 1e9;
}

static void time_sample(struct nvml *n, unsigned tiers, const char *label, int reps)
{
	struct nvml_sample s;
	double w0, c0, w, c;

	nvml_sample(n, 0, tiers, &s); /* warm up (GPM priming) */
	w0 = wall_s();
	c0 = cpu_s();
	for (int i = 0; i < reps; i++) {
		nvml_sample(n, 0, tiers, &s);
		usleep(20000);
	}
	w = wall_s() - w0 - reps * 0.020;
	c = cpu_s() - c0;
	printf("sample %-10s %3d reps: %8.1f us wall, %8.1f us CPU per GPU sample\n", label, reps,
	       w / reps * 1e6, c / reps * 1e6);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	static const unsigned rates[] = { 10, 10, 100 };
	static const char *const budgets[] = { NULL, "0", NULL };
	char why[256];
	struct nvml *n = nvml_open(NULL, why, sizeof(why));

	if (!n) {
		fprintf(stderr, "bench_sampler: %s\n", why);
		return 2;
	}
	printf("GPUs: %u (%s), driver %s\n", n->sys.ngpus, n->gpu[0].name, n->sys.driver_version);
	time_sample(n, NVML_TIER_FAST, "fast", 50);
	time_sample(n, NVML_TIER_SLOW, "slow", 20);
	time_sample(n, NVML_TIER_FAST | NVML_TIER_SLOW, "fast+slow", 20);
	{
		struct strbuf sb = STRBUF_INIT;
		nvml_costs(n, &sb);
		printf("CPU cost per call (mean of measured calls):\n%s", sb.buf ? sb.buf : "");
		strbuf_release(&sb);
	}
	nvml_close(n);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		char path[64];
		struct nvml_sampler *s;
		struct stat st;
		double c0, w0, c, w;
		struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

		snprintf(path, sizeof(path), "/tmp/bench_sampler_%u.gpuscope", rates[i]);
		unlink(path);
		if (budgets[i])
			setenv("GPUSCOPE_GPU_METRICS_BUDGET", budgets[i], 1);
		else
			unsetenv("GPUSCOPE_GPU_METRICS_BUDGET");
		s = nvml_sampler_start(path, rates[i], why, sizeof(why));
		if (!s) {
			fprintf(stderr, "bench_sampler: %s\n", why);
			return 1;
		}
		c0 = cpu_s();
		w0 = wall_s();
		nanosleep(&ts, NULL);
		c = cpu_s() - c0;
		w = wall_s() - w0;
		if (nvml_sampler_stop(s))
			return 1;
		stat(path, &st);
		printf("sampler %3u Hz, budget %-7s: %.2f s wall, %.4f s CPU = %.3f%% of one core; report %lld bytes\n",
		       rates[i], budgets[i] ? "none" : "default", w, c, 100.0 * c / w,
		       (long long)st.st_size);
		unlink(path);
	}
	return 0;
}
