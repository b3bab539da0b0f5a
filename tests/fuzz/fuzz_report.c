/*
 * fuzz_report.c - libFuzzer target: any bytes through the report reader and
 * model loader must load or fail cleanly, never crash or leak: a whole
 * load, the span, and a windowed load (which reads the chunk index and
 * skips chunks by it).
 */
#include "import/import.h"
#include "util/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct model m;

	if (fd < 0) {
		fd = memfd_create("fuzz_report", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		set_error_quiet(1);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	model_init(&m);
	if (model_load_report(&m, path) == 0) {
		uint64_t lo = m.t_min, hi = m.t_max, s0, s1;
		struct model_sink sink;
		/* touch what consumers touch */
		for (size_t i = 0; i < m.kernels.n; i++)
			(void)model_str(&m, m.kernels.v[i].name_id);
		model_release(&m);
		(void)model_report_span(path, &s0, &s1);
		/* the middle half of the span, through the index when there is one */
		memset(&sink, 0, sizeof(sink));
		sink.window_lo = lo + (hi - lo) / 4;
		sink.window_hi = hi - (hi - lo) / 4 ? hi - (hi - lo) / 4 : 1;
		model_init(&m);
		if (model_load_report_sink(&m, path, &sink) == 0)
			for (size_t i = 0; i < m.kernels.n; i++)
				(void)model_str(&m, m.kernels.v[i].name_id);
	}
	model_release(&m);
	return 0;
}
