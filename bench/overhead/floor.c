/*
 * floor.c - the overhead floor: a bare CUPTI tracer that records kernels
 * only (CONCURRENT_KERNEL activity, no API records, no callbacks) and
 * just counts them.  Loaded with CUDA_INJECTION64_PATH=floor.so.
 * Build: see build.sh.  Prints "floor: N kernels, D dropped" at exit.
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long kernels, dropped;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	void *p = NULL;

	*size = 4u << 20;
	if (posix_memalign(&p, 8, *size))
		p = NULL;
	*buf = p;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			       size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t d = 0;

	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_add_fetch(&kernels, 1, __ATOMIC_RELAXED);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
		__atomic_add_fetch(&dropped, d, __ATOMIC_RELAXED);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "floor: %llu kernels, %llu dropped\n", kernels, dropped);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "floor: CUPTI did not start\n");
		return 1;
	}
	atexit(at_exit);
	return 1;
}
