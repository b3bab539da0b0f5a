/*
 * floor.c - the overhead floor: a bare CUPTI tracer that records kernels
 * only (CONCURRENT_KERNEL activity, no API records, no callbacks) and
 * just counts them.  Loaded with CUDA_INJECTION64_PATH=floor.so.
 *
 * FLOOR_CB adds CUPTI API callbacks that do nothing, to measure what CUPTI's
 * callback dispatch costs by itself (the mechanism gpuscope's API records
 * ride on):
 *   launch         the runtime launch functions (cudaLaunchKernel and Ex, per-
 *                  thread-stream and CUDA 13 variants)
 *   launch-driver  those and the driver launch functions (cuLaunchKernel, Ex,
 *                  _ptsz), which the runtime calls inside its own
 *   domain         every runtime and driver API function
 * Build: see build.sh.  Prints "floor: N kernels, D dropped" at exit.
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long kernels, dropped;
static CUpti_SubscriberHandle sub;

static void CUPTIAPI nothing(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)u, (void)d, (void)id, (void)data;
}

/* FLOOR_CB: empty callbacks (see the top); 0 or -1 */
static int callbacks(const char *what)
{
	static const CUpti_CallbackId rt[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
		CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
		CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	};
	static const CUpti_CallbackId drv[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	};
	int domain = !strcmp(what, "domain"), driver = !strcmp(what, "launch-driver");

	if (!domain && !driver && strcmp(what, "launch"))
		return -1;
	if (cuptiSubscribe(&sub, nothing, NULL) != CUPTI_SUCCESS)
		return -1;
	if (domain)
		return cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
		       cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS ? 0 : -1;
	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]);
	for (size_t i = 0; driver && i < sizeof(drv) / sizeof(drv[0]); i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]);
	return 0;
}

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
	if (getenv("FLOOR_CB") && *getenv("FLOOR_CB") && callbacks(getenv("FLOOR_CB")) < 0)
		fprintf(stderr, "floor: FLOOR_CB=%s: no callbacks\n", getenv("FLOOR_CB"));
	atexit(at_exit);
	return 1;
}
