/*
 * bench_export.c - export throughput on one report.
 *
 *   bench_export REPORT OUTDIR [FORMAT...]
 *
 * Loads REPORT (timed), then writes each format (default perfetto, chrome,
 * sqlite) to OUTDIR and prints, per format, the wall seconds, the CPU
 * seconds of the process and of the main thread (sqlite analyses on a
 * second thread), the output size and the rate in model events per second
 * (for sqlite every event is one row).  On a machine shared with other work
 * the main thread's CPU time is what the export would take alone.
 */
#include "export/export.h"
#include "import/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

static double cpu_s(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	static const char *const def[] = { "perfetto", "chrome", "sqlite" };
	const char *const *fmts = def;
	size_t nf = 3;
	struct model m;
	uint64_t t0, t1;
	struct export_opts o = { .force = 1 };

	if (argc < 3) {
		fprintf(stderr, "usage: bench_export REPORT OUTDIR [FORMAT...]\n");
		return 2;
	}
	if (argc > 3) {
		fmts = (const char *const *)argv + 3;
		nf = (size_t)argc - 3;
	}
	model_init(&m);
	t0 = now_mono_ns();
	if (load_input(&m, argv[1]))
		return 1;
	t1 = now_mono_ns();
	printf("load: %llu events in %.3f s (%.2f M events/s)\n", (unsigned long long)m.events,
	       (double)(t1 - t0) / 1e9, (double)m.events / ((double)(t1 - t0) / 1e9) / 1e6);
	for (size_t i = 0; i < nf; i++) {
		int f = export_format_by_name(fmts[i]);
		char *out = xstrfmt("%s/bench%s", argv[2], export_format_ext(f));
		struct stat st;
		double s, c0 = cpu_s(RUSAGE_SELF), c, tc0 = cpu_s(RUSAGE_THREAD), tc;
		if (f < 0)
			return 2;
		t0 = now_mono_ns();
		/* the writers alone: the analysis is the caller's (cmd_export.c), not timed here */
		struct export_input in = { .m = &m, .o = o };
		if (export_write(&in, f, out))
			return 1;
		t1 = now_mono_ns();
		s = (double)(t1 - t0) / 1e9;
		c = cpu_s(RUSAGE_SELF) - c0;
		tc = cpu_s(RUSAGE_THREAD) - tc0;
		stat(out, &st);
		printf("%s: %.3f s wall, %.3f s cpu (%.3f s main thread), %.1f MB: %.2f M events/s wall, "
		       "%.2f M events/s main-thread cpu\n",
		       fmts[i], s, c, tc, (double)st.st_size / 1e6, (double)m.events / s / 1e6,
		       (double)m.events / tc / 1e6);
		free(out);
	}
	model_release(&m);
	return 0;
}
