/*
 * model_mem.c - where a whole load's memory goes (issue 19, item 7).
 *
 *   model_mem REPORT
 *
 * Loads REPORT whole (model_load_report) and prints, per table of the
 * model, its rows, the row size, the bytes its array holds (alloc × row)
 * and those bytes per event of the report; then the string table, the
 * process's peak RSS (VmHWM) and its RSS after the load (VmRSS), each per
 * event.  What `analyze` needs on top of the model is its peak RSS (time -v)
 * less this program's.  bench/longrun/run.sh builds and runs it.
 */
#include "model/model.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long status_kb(const char *key)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = strlen(key);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kb = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

#define ROW(name, t)                                                                   \
	do {                                                                           \
		double b_ = (double)m.t.alloc * sizeof(m.t.v[0]);                      \
		total += b_;                                                           \
		if (m.t.n)                                                             \
			printf("%-10s %12zu rows × %3zu B: %10.1f MiB, %6.1f B/event\n", name, \
			       m.t.n, sizeof(m.t.v[0]), b_ / 1048576, b_ / ev);          \
	} while (0)

int main(int argc, char **argv)
{
	struct model m;
	double total = 0, ev, strb = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: model_mem REPORT\n");
		return 2;
	}
	model_init(&m);
	if (model_load_report(&m, argv[1]) < 0)
		return 1;
	ev = m.events ? (double)m.events : 1;
	printf("%llu events\n", (unsigned long long)m.events);
	ROW("nvtx", nvtx);
	ROW("marks", marks);
	ROW("osrt", osrt);
	ROW("cpu", cpu);
	ROW("api", api);
	ROW("kernels", kernels);
	ROW("memcpys", memcpys);
	ROW("memsets", memsets);
	ROW("syncs", syncs);
	ROW("memory", memory);
	ROW("metrics", metrics);
	ROW("kmetrics", kmetrics);
	ROW("torch_mem", torch_mem);
	ROW("threads", threads);
	for (uint32_t i = 0; i < m.str.nr; i++)
		strb += m.str.len[i] + 1 + sizeof(char *) + sizeof(uint32_t);
	printf("strings    %12u: %10.1f MiB\n", m.str.nr, strb / 1048576);
	printf("tables     %10.1f MiB, %6.1f B/event\n", total / 1048576, total / ev);
	printf("peak RSS   %10.1f MiB, %6.1f B/event (VmHWM)\n", status_kb("VmHWM") / 1024.0,
	       status_kb("VmHWM") * 1024.0 / ev);
	printf("RSS loaded %10.1f MiB, %6.1f B/event (VmRSS)\n", status_kb("VmRSS") / 1024.0,
	       status_kb("VmRSS") * 1024.0 / ev);
	model_release(&m);
	return 0;
}
