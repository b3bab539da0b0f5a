/*
 * cupti_load.c - find libcupti.so.13 and resolve its functions (cupti_api.h).
 */
#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"
#include "env.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CUPTI_SONAME "libcupti.so.13"

/* Directory part of the file behind an already loaded library, or "" */
static void loaded_dir(const char *soname, char *dir, size_t n)
{
	void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
	struct link_map *lm = NULL;
	const char *slash;

	dir[0] = '\0';
	if (!h)
		return;
	if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name &&
	    (slash = strrchr(lm->l_name, '/')) && (size_t)(slash - lm->l_name) < n) {
		memcpy(dir, lm->l_name, (size_t)(slash - lm->l_name));
		dir[slash - lm->l_name] = '\0';
	}
	dlclose(h);
}

static void *try_open(const char *path, struct cupti_api *api)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (h)
		snprintf(api->path, sizeof(api->path), "%s", path);
	return h;
}

static void *try_dir(const char *dir, struct cupti_api *api)
{
	char path[600];

	if (!dir || !dir[0])
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, CUPTI_SONAME);
	if (access(path, R_OK))
		return NULL;
	return try_open(path, api);
}

static void *find_cupti(struct cupti_api *api)
{
	static const char *const fixed[] = {
		"/usr/local/cuda/targets/x86_64-linux/lib",
		"/usr/local/cuda/extras/CUPTI/lib64",
		"/usr/local/cuda/lib64",
	};
	static const char *const runtimes[] = { "libcudart.so.13", "libcuda.so.1" };
	/*
	 * The one setting read outside config.c: this loader also serves
	 * tests/cupti, which link it without the collector's core.
	 */
	const char *env = getenv(GS_ENV_CUPTI_PATH);
	char dir[512];
	void *h;

	h = dlopen(CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		struct link_map *lm = NULL;
		if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
			snprintf(api->path, sizeof(api->path), "%s", lm->l_name);
		return h;
	}
	if (env && env[0]) {
		struct stat st;
		if (!stat(env, &st) && S_ISDIR(st.st_mode))
			h = try_dir(env, api);
		else
			h = try_open(env, api);
		if (h)
			return h;
	}
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		loaded_dir(runtimes[i], dir, sizeof(dir));
		if ((h = try_dir(dir, api)))
			return h;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((h = try_dir(fixed[i], api)))
			return h;
	return try_open(CUPTI_SONAME, api);
}

int cupti_load(struct cupti_api *api, char *why, size_t why_len)
{
	void *h;

	memset(api, 0, sizeof(*api));
	h = find_cupti(api);
	if (!h) {
		snprintf(why, why_len, "cannot load " CUPTI_SONAME " (set GPUSCOPE_CUPTI_PATH)");
		return -1;
	}
	api->handle = h;
#define SYM(field, name) \
	do { \
		*(void **)&api->field = dlsym(h, name); \
		if (!api->field) { \
			snprintf(why, why_len, "'%s' lacks %s", api->path, name); \
			return -1; \
		} \
	} while (0)
	SYM(GetResultString, "cuptiGetResultString");
	SYM(GetVersion, "cuptiGetVersion");
	SYM(Subscribe, "cuptiSubscribe");
	SYM(Unsubscribe, "cuptiUnsubscribe");
	SYM(EnableCallback, "cuptiEnableCallback");
	SYM(EnableDomain, "cuptiEnableDomain");
	SYM(GetCallbackName, "cuptiGetCallbackName");
	SYM(ActivityEnable, "cuptiActivityEnable");
	SYM(ActivityDisable, "cuptiActivityDisable");
	SYM(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
	SYM(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
	SYM(ActivityFlushAll, "cuptiActivityFlushAll");
	SYM(ActivityFlushPeriod, "cuptiActivityFlushPeriod");
	SYM(SetThreadIdType, "cuptiSetThreadIdType");
	SYM(GetTimestamp, "cuptiGetTimestamp");
	SYM(Finalize, "cuptiFinalize");
#undef SYM
	/* optional: CUPTI 13 has it, and it names the other subscriber */
	*(void **)&api->Subscribe_v2 = dlsym(h, "cuptiSubscribe_v2");
	/* optional: stream and device of a synchronisation seen in a callback */
	*(void **)&api->GetStreamIdEx = dlsym(h, "cuptiGetStreamIdEx");
	*(void **)&api->GetDeviceId = dlsym(h, "cuptiGetDeviceId");
	/* optional: buffers handed over already zeroed */
	*(void **)&api->ActivitySetAttribute = dlsym(h, "cuptiActivitySetAttribute");
	return 0;
}

int cupti_load_profiler(const struct cupti_api *api, struct cupti_prof_api *p, char *why,
			size_t why_len)
{
	memset(p, 0, sizeof(*p));
	if (!api->handle) {
		snprintf(why, why_len, "CUPTI is not loaded");
		return -1;
	}
#define PSYM(field, name) \
	do { \
		*(void **)&p->field = dlsym(api->handle, name); \
		if (!p->field) { \
			snprintf(why, why_len, "'%s' lacks %s (CUDA 12.6 or later has it)", api->path, name); \
			return -1; \
		} \
	} while (0)
	PSYM(Initialize, "cuptiProfilerInitialize");
	PSYM(GetCounterAvailability, "cuptiProfilerGetCounterAvailability");
	PSYM(DeviceSupported, "cuptiProfilerDeviceSupported");
	PSYM(DeviceGetChipName, "cuptiDeviceGetChipName");
	PSYM(HostInitialize, "cuptiProfilerHostInitialize");
	PSYM(HostDeinitialize, "cuptiProfilerHostDeinitialize");
	PSYM(HostGetMetricProperties, "cuptiProfilerHostGetMetricProperties");
	PSYM(HostConfigAddMetrics, "cuptiProfilerHostConfigAddMetrics");
	PSYM(HostGetConfigImageSize, "cuptiProfilerHostGetConfigImageSize");
	PSYM(HostGetConfigImage, "cuptiProfilerHostGetConfigImage");
	PSYM(HostGetNumOfPasses, "cuptiProfilerHostGetNumOfPasses");
	PSYM(HostEvaluateToGpuValues, "cuptiProfilerHostEvaluateToGpuValues");
	PSYM(RangeEnable, "cuptiRangeProfilerEnable");
	PSYM(RangeDisable, "cuptiRangeProfilerDisable");
	PSYM(RangeGetCounterDataSize, "cuptiRangeProfilerGetCounterDataSize");
	PSYM(RangeCounterDataImageInitialize, "cuptiRangeProfilerCounterDataImageInitialize");
	PSYM(RangeSetConfig, "cuptiRangeProfilerSetConfig");
	PSYM(RangeStart, "cuptiRangeProfilerStart");
	PSYM(RangeStop, "cuptiRangeProfilerStop");
	PSYM(RangeDecodeData, "cuptiRangeProfilerDecodeData");
	PSYM(RangeGetCounterDataInfo, "cuptiRangeProfilerGetCounterDataInfo");
#undef PSYM
	return 0;
}

const char *cupti_result_name(const struct cupti_api *api, CUptiResult r)
{
	const char *s = NULL;

	if (api && api->GetResultString && api->GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

#endif /* GS_HAVE_CUPTI */
