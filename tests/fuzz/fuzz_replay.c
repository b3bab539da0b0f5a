/*
 * fuzz_replay.c - libFuzzer target: any bytes as an NVML replay file
 * (`monitor --replay`, `health --replay`, docs/monitor.md) must open, replay
 * its ticks, or fail with a one-line reason; never crash, recurse without
 * bound (issue 19: 500,000 nested brackets overflowed the stack), hang or
 * leak.  Seeds: the H200 recordings in tests/data/nvml.
 */
#include "nvml/nvml.h"
#include "util/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	char why[256];
	struct nvml *n;

	if (fd < 0) {
		fd = memfd_create("fuzz_replay", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		set_error_quiet(1);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	n = nvml_open(path, why, sizeof(why));
	if (n) {
		/* a few ticks of every GPU, through the decoder */
		struct nvml_sample *s = xmalloc(sizeof(*s));
		unsigned tiers = NVML_TIER_STATIC | NVML_TIER_FAST | NVML_TIER_SLOW;
		/* at most 64 GPUs and 4 ticks each: gpu_of() accepts indices up to 4095 */
		for (unsigned g = 0; g < n->sys.ngpus && g < 64; g++)
			for (int k = 0; k < 4; k++)
				if (nvml_sample(n, g, tiers, s) < 0)
					break;
		free(s);
		nvml_close(n);
	}
	return 0;
}
