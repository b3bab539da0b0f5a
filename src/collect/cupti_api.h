/*
 * cupti_api.h - libcupti.so.13, opened at run time.
 *
 * The collector must load where CUDA is absent, so it never links CUPTI:
 * cupti_load() finds libcupti.so.13 with dlopen() and fills a table of
 * function pointers with dlsym().  Types come from the CUDA 13 headers.
 *
 * Search order (first hit wins):
 *   1. a libcupti.so.13 already loaded in the process (PyTorch wheels bring
 *      their own copy; the first one loaded is the one CUDA talks to);
 *   2. GPUSCOPE_CUPTI_PATH (a file, or a directory holding libcupti.so.13);
 *   3. the directory of the loaded libcudart / libcuda;
 *   4. /usr/local/cuda/targets/x86_64-linux/lib, /usr/local/cuda/extras/CUPTI/lib64;
 *   5. the dynamic loader's own search ("libcupti.so.13").
 */
#ifndef GS_CUPTI_API_H
#define GS_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

struct cupti_api {
	void *handle;
	char path[1024];          /* where it was found */
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				    CUpti_SubscriberParams *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
	CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityFlushPeriod)(uint32_t);
	CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
	CUptiResult (*GetTimestamp)(uint64_t *);
	CUptiResult (*Finalize)(void);
	/* optional (NULL when missing) */
	CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *);
	CUptiResult (*GetDeviceId)(CUcontext, uint32_t *);
	CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t *, void *);
};

/*
 * cupti_load - find and open libcupti.so.13 and resolve every function of
 * @api.  Returns 0, or -1 with a one-line reason in @why (no error() call:
 * the caller turns it into the report's "CUDA tracing off" warning).
 */
int cupti_load(struct cupti_api *api, char *why, size_t why_len);

/* Text of a CUPTI result code ("CUPTI_ERROR_UNKNOWN"), never NULL. */
const char *cupti_result_name(const struct cupti_api *api, CUptiResult r);

#endif
