/*
 * sampler.c - NVML sampling for profiles.  Not yet written (issue 4).
 */
#include "sampler.h"

#include <stdio.h>

struct nvml_sampler *nvml_sampler_start(const char *path, unsigned hz, char *why, size_t whylen)
{
	(void)path;
	(void)hz;
	snprintf(why, whylen, "GPU metrics are not implemented in this build");
	return NULL;
}

int nvml_sampler_stop(struct nvml_sampler *s)
{
	(void)s;
	return 0;
}
