/*
 * sampler.h - NVML sampling inside `gpuscope profile`.
 *
 * The sampler runs in the profiling process (not in the target), on a thread
 * of its own, and writes its samples (TRACE_EV_METRIC, TRACE_EV_DEVICE) into
 * a part report of its own that the profile merges with the target's parts.
 */
#ifndef GS_NVML_SAMPLER_H
#define GS_NVML_SAMPLER_H

#include <stddef.h>

struct nvml_sampler;

/*
 * nvml_sampler_start - sample every GPU at @hz into the new report @path.
 * Returns NULL when no sampling is possible, with the reason in @why
 * ("no NVIDIA driver: libnvidia-ml.so.1 not found").
 */
struct nvml_sampler *nvml_sampler_start(const char *path, unsigned hz, char *why, size_t whylen);
/*
 * nvml_sampler_start_watch - the same, and @watch(@ctx, gpu, sample) is
 * called on the sampler's thread after each GPU's sample (profile's
 * --trigger temp>... / mem_used>...); @watch may be NULL.
 */
struct nvml_sample;
struct nvml_sampler *nvml_sampler_start_watch(const char *path, unsigned hz,
					      void (*watch)(void *ctx, unsigned gpu, const struct nvml_sample *s),
					      void *ctx, char *why, size_t whylen);
/* Stop, write the last samples and close the part; 0 or -1. */
int nvml_sampler_stop(struct nvml_sampler *s);

#endif
