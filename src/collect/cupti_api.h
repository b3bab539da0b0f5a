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
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

/*
 * The profiler host API's parameter structs (cupti_profiler_host.h, which
 * includes a C++ header): only pointers to them here; kmetrics.c includes
 * the header itself.
 */
struct CUpti_Profiler_Host_Initialize_Params;
struct CUpti_Profiler_Host_Deinitialize_Params;
struct CUpti_Profiler_Host_GetMetricProperties_Params;
struct CUpti_Profiler_Host_ConfigAddMetrics_Params;
struct CUpti_Profiler_Host_GetConfigImageSize_Params;
struct CUpti_Profiler_Host_GetConfigImage_Params;
struct CUpti_Profiler_Host_GetNumOfPasses_Params;
struct CUpti_Profiler_Host_EvaluateToGpuValues_Params;

/*
 * The Range Profiler and profiler host functions (`--kernel-metrics`,
 * kmetrics.c), resolved by cupti_load_profiler() only when asked for.
 */
struct cupti_prof_api {
	CUptiResult (*Initialize)(CUpti_Profiler_Initialize_Params *);
	CUptiResult (*GetCounterAvailability)(CUpti_Profiler_GetCounterAvailability_Params *);
	CUptiResult (*DeviceSupported)(CUpti_Profiler_DeviceSupported_Params *);
	CUptiResult (*DeviceGetChipName)(CUpti_Device_GetChipName_Params *);
	CUptiResult (*HostInitialize)(struct CUpti_Profiler_Host_Initialize_Params *);
	CUptiResult (*HostDeinitialize)(struct CUpti_Profiler_Host_Deinitialize_Params *);
	CUptiResult (*HostGetMetricProperties)(struct CUpti_Profiler_Host_GetMetricProperties_Params *);
	CUptiResult (*HostConfigAddMetrics)(struct CUpti_Profiler_Host_ConfigAddMetrics_Params *);
	CUptiResult (*HostGetConfigImageSize)(struct CUpti_Profiler_Host_GetConfigImageSize_Params *);
	CUptiResult (*HostGetConfigImage)(struct CUpti_Profiler_Host_GetConfigImage_Params *);
	CUptiResult (*HostGetNumOfPasses)(struct CUpti_Profiler_Host_GetNumOfPasses_Params *);
	CUptiResult (*HostEvaluateToGpuValues)(struct CUpti_Profiler_Host_EvaluateToGpuValues_Params *);
	CUptiResult (*RangeEnable)(CUpti_RangeProfiler_Enable_Params *);
	CUptiResult (*RangeDisable)(CUpti_RangeProfiler_Disable_Params *);
	CUptiResult (*RangeGetCounterDataSize)(CUpti_RangeProfiler_GetCounterDataSize_Params *);
	CUptiResult (*RangeCounterDataImageInitialize)(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *);
	CUptiResult (*RangeSetConfig)(CUpti_RangeProfiler_SetConfig_Params *);
	CUptiResult (*RangeStart)(CUpti_RangeProfiler_Start_Params *);
	CUptiResult (*RangeStop)(CUpti_RangeProfiler_Stop_Params *);
	CUptiResult (*RangeDecodeData)(CUpti_RangeProfiler_DecodeData_Params *);
	CUptiResult (*RangeGetCounterDataInfo)(CUpti_RangeProfiler_GetCounterDataInfo_Params *);
};

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

/*
 * cupti_load_profiler - resolve the Range Profiler functions of the
 * libcupti that cupti_load() opened into @p.  Returns 0, or -1 with the
 * missing function named in @why.
 */
int cupti_load_profiler(const struct cupti_api *api, struct cupti_prof_api *p, char *why,
			size_t why_len);

/* Text of a CUPTI result code ("CUPTI_ERROR_UNKNOWN"), never NULL. */
const char *cupti_result_name(const struct cupti_api *api, CUptiResult r);

#endif
