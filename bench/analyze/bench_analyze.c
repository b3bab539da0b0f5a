/*
 * bench_analyze.c - time loading a report and analysing it, separately.
 *
 *   gs_bench_analyze REPORT [ROUNDS]
 *
 * Prints one line per round: events, load seconds, analyze seconds, and
 * events per second of the two together (what `gpuscope analyze` does),
 * measured with CLOCK_MONOTONIC.
 */
#include "analyze/analyze.h"
#include "import/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 3;

	if (argc < 2) {
		fprintf(stderr, "usage: gs_bench_analyze REPORT [ROUNDS]\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		struct model m;
		struct analyze_result r;
		struct analyze_opts o = { 0 };
		uint64_t t0, t1, t2, c0, c1, c2;
		FILE *null = fopen("/dev/null", "w");

		model_init(&m);
		c0 = cpu_ns();
		t0 = now_mono_ns();
		if (load_input(&m, argv[1]) < 0)
			return 1;
		t1 = now_mono_ns();
		c1 = cpu_ns();
		if (analyze_run(&m, &o, &r) < 0)
			return 1;
		analyze_print_text(null, &m, &r);
		t2 = now_mono_ns();
		c2 = cpu_ns();
		printf("events %llu wall: load %.3f s analyze %.3f s total %.3f s = %.2f M events/s; "
		       "cpu: load %.3f s analyze %.3f s total %.3f s = %.2f M events/s\n",
		       (unsigned long long)m.events, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t2 - t0) / 1e9,
		       m.events / ((t2 - t0) / 1e9) / 1e6, (c1 - c0) / 1e9, (c2 - c1) / 1e9, (c2 - c0) / 1e9,
		       m.events / ((c2 - c0) / 1e9) / 1e6);
		fclose(null);
		analyze_result_release(&r);
		model_release(&m);
	}
	return 0;
}
