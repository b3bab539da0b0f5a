/*
 * zoo.h - what every CUDA C case of the bottleneck zoo shares: argument
 * parsing, error checks, NVTX "step" ranges and the steady-state step time.
 *
 * Usage of a case:   zoo-<case> broken|fixed [STEPS]
 *   STEPS (or the ZOO_STEPS environment variable) is how many steps are
 *   measured; ZOO_WARMUP steps (default 3) run before them and are not timed.
 *
 * Time per step: an event is recorded on the case's main stream at the end of
 * every step, and a step's time is the GPU-side interval between the ends of
 * two consecutive steps.  That is the loop's throughput whether the host
 * waits for the GPU (broken variants) or runs ahead of it (fixed variants),
 * which a host-side stopwatch around each step would not show.
 */
#ifndef ZOO_H
#define ZOO_H

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zoo_line.h"

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t err_ = (call);                                    \
		if (err_ != cudaSuccess) {                                    \
			fprintf(stderr, "zoo: %s:%d: %s: %s\n", __FILE__,     \
				__LINE__, #call, cudaGetErrorString(err_));   \
			exit(1);                                              \
		}                                                             \
	} while (0)

struct zoo {
	const char *case_id;
	int fixed;          /* 0: broken variant, 1: fixed variant */
	int warmup, steps;  /* untimed steps, then measured steps */
	int total;          /* warmup + steps */
	cudaEvent_t *ends;  /* one event per step, recorded at its end */
};

static int zoo_parse_count(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < 1 || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

/*
 * Parse "broken|fixed [STEPS]", check there is a GPU and create the step
 * events.  Exits 2 on bad usage and 1 when there is no usable GPU.
 */
static void zoo_init(struct zoo *z, const char *case_id, int argc, char **argv,
		     int default_steps)
{
	const char *env;
	int ndev = 0;

	memset(z, 0, sizeof(*z));
	z->case_id = case_id;
	z->warmup = 3;
	z->steps = default_steps;
	if (argc < 2 || argc > 3 ||
	    (strcmp(argv[1], "broken") && strcmp(argv[1], "fixed"))) {
		fprintf(stderr, "usage: %s broken|fixed [STEPS]\n", argv[0]);
		exit(2);
	}
	z->fixed = !strcmp(argv[1], "fixed");
	if ((env = getenv("ZOO_STEPS")) && *env && zoo_parse_count(env, &z->steps)) {
		fprintf(stderr, "zoo: %s: bad ZOO_STEPS '%s'\n", case_id, env);
		exit(2);
	}
	if ((env = getenv("ZOO_WARMUP")) && *env && zoo_parse_count(env, &z->warmup)) {
		fprintf(stderr, "zoo: %s: bad ZOO_WARMUP '%s'\n", case_id, env);
		exit(2);
	}
	if (argc == 3 && zoo_parse_count(argv[2], &z->steps)) {
		fprintf(stderr, "zoo: %s: bad step count '%s'\n", case_id, argv[2]);
		exit(2);
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		fprintf(stderr, "zoo: %s: no CUDA device\n", case_id);
		exit(1);
	}
	z->total = z->warmup + z->steps;
	z->ends = (cudaEvent_t *)calloc((size_t)z->total, sizeof(*z->ends));
	if (!z->ends) {
		fprintf(stderr, "zoo: %s: out of memory\n", case_id);
		exit(1);
	}
	for (int i = 0; i < z->total; i++)
		CK(cudaEventCreate(&z->ends[i]));
}

/* Open step @i: an NVTX range named "step" that tools use to find steps. */
static inline void zoo_step_begin(struct zoo *z, int i)
{
	(void)z;
	(void)i;
	nvtxRangePushA("step");
}

/* Close step @i: mark its end on @stream (all of the step's work must be
 * ordered before this point on @stream) and close the NVTX range. */
static inline void zoo_step_end(struct zoo *z, int i, cudaStream_t stream)
{
	CK(cudaEventRecord(z->ends[i], stream));
	nvtxRangePop();
}

/* Wait for the GPU, print the result line and free the events. */
static void zoo_finish(struct zoo *z)
{
	char line[256];
	int n = 0;
	double *ms = (double *)calloc((size_t)z->steps, sizeof(*ms));

	CK(cudaDeviceSynchronize());
	if (!ms) {
		fprintf(stderr, "zoo: %s: out of memory\n", z->case_id);
		exit(1);
	}
	for (int i = z->warmup; i < z->total; i++) {
		float t = 0.0f;
		CK(cudaEventElapsedTime(&t, z->ends[i - 1], z->ends[i]));
		ms[n++] = t;
	}
	zoo_format_line(line, sizeof(line), z->case_id,
			z->fixed ? "fixed" : "broken", zoo_median(ms, n), n);
	printf("%s\n", line);
	fflush(stdout);
	free(ms);
	for (int i = 0; i < z->total; i++)
		CK(cudaEventDestroy(z->ends[i]));
	free(z->ends);
}

/* Host-side stopwatch in milliseconds (CLOCK_MONOTONIC). */
static inline double zoo_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
