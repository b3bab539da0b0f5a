/*
 * pmsample.c - a continuous time series of GPU hardware counters through
 * CUPTI's PM sampling (`gpuscope profile --pm-sampling[=US]`, docs/cuda.md
 * "PM sampling").
 *
 * The GPU's performance monitors sample a handful of counters at a fixed
 * GPU-time interval into a hardware buffer, with no kernel replay and no
 * serialisation: the program runs as it would.  A collector thread
 * ("gpuscope-pm") decodes that buffer every few ms into a counter-data
 * image, evaluates each completed sample and writes one TRACE_EV_METRIC
 * record per counter and sample (names "pm_*", docs/report-format.md), the
 * same records as the NVML samples, so stats, analyze and the exporters
 * read them as any GPU metric.
 *
 * Start: PM sampling needs an initialised device, so nothing happens until
 * the program creates its first CUDA context (the resource callback,
 * cl_pmsample_context), which then enables sampling on that context's
 * device before the program goes on (about 0.5 s once on an H200).  The
 * counters are chosen per chip in priority order, each kept while the set
 * still fits one pass (PM sampling cannot replay).  A sample's
 * timestamps are GPU nanoseconds of the CUPTI clock; they are moved to the
 * report clock by the offset between cuptiGetTimestamp() and cl_now() read
 * together at start.
 *
 * Settings (environment, read once by cl_pmsample_start):
 *   GPUSCOPE_PM_SAMPLING   sampling interval in microseconds (unset/0: off)
 *
 * Failures (no privileges, a GPU without PM sampling, an old CUPTI) are one
 * cl_warning("PM sampling off: ...") per process; tracing goes on.
 */
#include "collect.h"

#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"
#include "env.h"
#include "internal.h"
#include "pmsample.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace/trace.h>


/*
 * Decoding: every POLL_SAMPLES intervals, at least every POLL_MIN_MS and at
 * most every POLL_MAX_MS.  On an H200 (CUDA 13.0) the hardware buffer
 * overflowed when decoded every 100 ms at 200 us or 50 us intervals, and
 * held at 200 us decoded every 10 ms and at 500 us and 1 ms every 100 ms.
 */
#define POLL_SAMPLES 50
#define POLL_MIN_MS 5
#define POLL_MAX_MS 100
#define MAX_SAMPLES 4096          /* samples one counter-data image holds (> POLL_SAMPLES) */
#define HW_BUFFER (64u << 20)     /* hardware buffer */
#define PM_MIN_US 200             /* the shortest interval: at 100 us the buffer overflowed in 1 of 2 runs */

/* The counters, by gpuscope metric name, with the CUPTI names tried in order. */
struct pm_metric {
	const char *key;
	const char *names[2];
};

/* in priority order: a counter is kept only while the set still fits one pass */
static const struct pm_metric pm_metrics[] = {
	{ "pm_sm_throughput_pct", { "sm__throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ "pm_dram_throughput_pct",
	  { "dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ "pm_tensor_pipe_pct",
	  { "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
	    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed" } },
	{ "pm_gr_active_pct", { "gr__cycles_active.avg.pct_of_peak_sustained_elapsed" } },
	{ "pm_sm_active_pct", { "sm__cycles_active.avg.pct_of_peak_sustained_elapsed" } },
	{ "pm_pcie_rx_bytes", { "pcie__read_bytes.sum" } },
	{ "pm_pcie_tx_bytes", { "pcie__write_bytes.sum" } },
};
#define PM_N (sizeof(pm_metrics) / sizeof(pm_metrics[0]))

/* The PM sampling entry points (loaded from the CUPTI library the tracer uses). */
static struct {
	CUptiResult (*Enable)(CUpti_PmSampling_Enable_Params *);
	CUptiResult (*Disable)(CUpti_PmSampling_Disable_Params *);
	CUptiResult (*SetConfig)(CUpti_PmSampling_SetConfig_Params *);
	CUptiResult (*Start)(CUpti_PmSampling_Start_Params *);
	CUptiResult (*Stop)(CUpti_PmSampling_Stop_Params *);
	CUptiResult (*DecodeData)(CUpti_PmSampling_DecodeData_Params *);
	CUptiResult (*GetCounterAvailability)(CUpti_PmSampling_GetCounterAvailability_Params *);
	CUptiResult (*GetCounterDataSize)(CUpti_PmSampling_GetCounterDataSize_Params *);
	CUptiResult (*CounterDataImageInitialize)(CUpti_PmSampling_CounterDataImage_Initialize_Params *);
	CUptiResult (*GetCounterDataInfo)(CUpti_PmSampling_GetCounterDataInfo_Params *);
	CUptiResult (*GetSampleInfo)(CUpti_PmSampling_CounterData_GetSampleInfo_Params *);
} pm;

/* ---- settings and state (set once by cl_pmsample_start) ---- */

static const struct cupti_api *pm_cu;
static struct cupti_prof_api pk;
static uint64_t pm_interval_ns;   /* 0 = off */
static unsigned pm_poll_ms;       /* decoding period */
static int64_t pm_offset;         /* cl_now() - cuptiGetTimestamp() */

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_cond = PTHREAD_COND_INITIALIZER;
static int pm_device = -1;        /* the device to sample, set by the first context */
static atomic_int pm_stop;
static int pm_thread_started;
static void pm_atexit(void);
static pthread_t pm_thread;

/* Per sampled device (one: the first device the program used). */
static struct {
	CUpti_PmSampling_Object *obj;
	CUpti_Profiler_Host_Object *host;
	uint8_t *avail, *config, *data;
	size_t config_size, data_size;
	const char *used[PM_N];        /* the CUPTI names kept, in order */
	uint32_t key_id[PM_N];         /* their gpuscope names' string ids */
	size_t nused;
	uint64_t samples, overflows;
	int started;
} pd;

static const char *rname(CUptiResult r)
{
	return cupti_result_name(pm_cu, r);
}

static int load_pm(char *why, size_t n)
{
	void *h = pm_cu->handle;
#define PSYM(field, name) \
	do { \
		*(void **)&pm.field = dlsym(h, name); \
		if (!pm.field) { \
			snprintf(why, n, "'%s' lacks %s (CUPTI of CUDA 12.6 or later has PM sampling)", \
				 pm_cu->path, name); \
			return -1; \
		} \
	} while (0)
	PSYM(Enable, "cuptiPmSamplingEnable");
	PSYM(Disable, "cuptiPmSamplingDisable");
	PSYM(SetConfig, "cuptiPmSamplingSetConfig");
	PSYM(Start, "cuptiPmSamplingStart");
	PSYM(Stop, "cuptiPmSamplingStop");
	PSYM(DecodeData, "cuptiPmSamplingDecodeData");
	PSYM(GetCounterAvailability, "cuptiPmSamplingGetCounterAvailability");
	PSYM(GetCounterDataSize, "cuptiPmSamplingGetCounterDataSize");
	PSYM(CounterDataImageInitialize, "cuptiPmSamplingCounterDataImageInitialize");
	PSYM(GetCounterDataInfo, "cuptiPmSamplingGetCounterDataInfo");
	PSYM(GetSampleInfo, "cuptiPmSamplingCounterDataGetSampleInfo");
#undef PSYM
	return 0;
}

static CUpti_Profiler_Host_Object *host_new(const char *chip, CUptiResult *r)
{
	CUpti_Profiler_Host_Initialize_Params p = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };

	p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = pd.avail;
	*r = pk.HostInitialize(&p);
	return *r == CUPTI_SUCCESS ? p.pHostObject : NULL;
}

static void host_free(CUpti_Profiler_Host_Object *h)
{
	CUpti_Profiler_Host_Deinitialize_Params p = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };

	if (h) {
		p.pHostObject = h;
		pk.HostDeinitialize(&p);
	}
}

/*
 * A host object configured with the names chosen so far plus @extra (NULL:
 * none); *passes gets the passes the set needs.  NULL on failure.
 */
static CUpti_Profiler_Host_Object *host_with(const char *chip, const char *extra, size_t *passes)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImageSize_Params isz = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImage_Params img = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	const char *names[PM_N + 1];
	size_t n = 0;
	CUptiResult r;
	CUpti_Profiler_Host_Object *h = host_new(chip, &r);
	uint8_t *config;

	if (!h)
		return NULL;
	for (size_t i = 0; i < pd.nused; i++)
		names[n++] = pd.used[i];
	if (extra)
		names[n++] = extra;
	am.pHostObject = h;
	am.ppMetricNames = names;
	am.numMetrics = n;
	if (pk.HostConfigAddMetrics(&am) != CUPTI_SUCCESS)
		goto fail;
	isz.pHostObject = h;
	if (pk.HostGetConfigImageSize(&isz) != CUPTI_SUCCESS || !isz.configImageSize)
		goto fail;
	config = malloc(isz.configImageSize);
	if (!config)
		goto fail;
	img.pHostObject = h;
	img.configImageSize = isz.configImageSize;
	img.pConfigImage = config;
	if (pk.HostGetConfigImage(&img) != CUPTI_SUCCESS) {
		free(config);
		goto fail;
	}
	np.pConfigImage = config;
	np.configImageSize = isz.configImageSize;
	*passes = pk.HostGetNumOfPasses(&np) == CUPTI_SUCCESS ? np.numOfPasses : 99;
	free(pd.config);
	pd.config = config;
	pd.config_size = isz.configImageSize;
	return h;
fail:
	host_free(h);
	return NULL;
}

static int counter_image_init(void)
{
	CUpti_PmSampling_CounterDataImage_Initialize_Params ci = { .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE };

	ci.pPmSamplingObject = pd.obj;
	ci.counterDataSize = pd.data_size;
	ci.pCounterData = pd.data;
	return pm.CounterDataImageInitialize(&ci) == CUPTI_SUCCESS ? 0 : -1;
}

/*
 * The host side, for the chip of device @dev: the counters this chip can
 * sample together in one pass, and their config image (about 0.3 s on an
 * H200).  Not before the program's first context: the profiler's
 * initialisation racing the program's cuInit crashed the program.  0, or
 * -1 with a reason in @why.
 */
static char pd_chip[64];

static int prep(int dev, char *why, size_t n)
{
	CUpti_Profiler_Initialize_Params ip = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
	CUpti_Device_GetChipName_Params chip = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	CUpti_PmSampling_GetCounterAvailability_Params av = { .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE };
	CUptiResult r;


	r = pk.Initialize(&ip);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiProfilerInitialize: %s", rname(r));
		return -1;
	}
	chip.deviceIndex = (size_t)dev;
	r = pk.DeviceGetChipName(&chip);
	if (r != CUPTI_SUCCESS || !chip.pChipName) {
		snprintf(why, n, "cuptiDeviceGetChipName(%d): %s", dev, rname(r));
		return -1;
	}
	if (pd.host && !strcmp(pd_chip, chip.pChipName))
		return 0; /* prepared for this chip already */
	host_free(pd.host);
	pd.host = NULL;
	pd.nused = 0;
	free(pd.avail);
	pd.avail = NULL;
	snprintf(pd_chip, sizeof(pd_chip), "%s", chip.pChipName);
	av.deviceIndex = (size_t)dev;
	r = pm.GetCounterAvailability(&av);
	if (r == CUPTI_SUCCESS && av.counterAvailabilityImageSize) {
		pd.avail = malloc(av.counterAvailabilityImageSize);
		av.pCounterAvailabilityImage = pd.avail;
		r = pd.avail ? pm.GetCounterAvailability(&av) : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
			snprintf(why, n, "cuptiPmSamplingGetCounterAvailability: %s: the driver lets only administrators "
				 "read GPU performance counters (NVreg_RestrictProfilingToAdminUsers=1, or a VM without "
				 "counter access)", rname(r));
		else
			snprintf(why, n, "cuptiPmSamplingGetCounterAvailability: %s", rname(r));
		return -1;
	}
	/* greedy, in priority order: a counter stays when the set with it still needs one pass */
	for (size_t i = 0; i < PM_N; i++)
		for (size_t j = 0; j < 2 && pm_metrics[i].names[j]; j++) {
			size_t passes = 99;
			CUpti_Profiler_Host_Object *h = host_with(chip.pChipName, pm_metrics[i].names[j], &passes);
			if (!h)
				continue; /* not a name this chip knows */
			if (passes != 1) {
				host_free(h);
				break; /* known, but does not fit with the others */
			}
			host_free(pd.host);
			pd.host = h;
			pd.key_id[pd.nused] = cl_intern(pm_metrics[i].key, strlen(pm_metrics[i].key));
			pd.used[pd.nused++] = pm_metrics[i].names[j];
			break;
		}
	if (pd.nused) {
		/* the config image of the set kept (a rejected try may have replaced it) */
		size_t passes;
		CUpti_Profiler_Host_Object *h = host_with(chip.pChipName, NULL, &passes);
		host_free(pd.host);
		pd.host = h;
	}
	if (!pd.nused || !pd.host) {
		snprintf(why, n, "no counter of the PM sampling set is available in one pass on chip '%s'",
			 chip.pChipName);
		return -1;
	}
	return 0;
}

/* Enable PM sampling on @dev with the prepared set and start it.  0, or -1 with a reason in @why. */
static int go(int dev, char *why, size_t n)
{
	CUpti_PmSampling_Enable_Params en = { .structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE };
	CUpti_PmSampling_SetConfig_Params sc = { .structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE };
	CUpti_PmSampling_GetCounterDataSize_Params ds = { .structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE };
	CUpti_PmSampling_Start_Params st = { .structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE };
	CUptiResult r;
	uint64_t t;

	if (prep(dev, why, n) < 0)
		return -1;
	if (atomic_load(&pm_stop))
		return 0; /* the program is leaving: never start on a device being torn down */
	en.deviceIndex = (size_t)dev;
	r = pm.Enable(&en);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiPmSamplingEnable(device %d): %s", dev, rname(r));
		return -1;
	}
	pd.obj = en.pPmSamplingObject;
	if (atomic_load(&pm_stop))
		return 0;
	sc.pPmSamplingObject = pd.obj;
	sc.configSize = pd.config_size;
	sc.pConfig = pd.config;
	sc.hardwareBufferSize = HW_BUFFER;
	sc.samplingInterval = pm_interval_ns;
	sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	r = pm.SetConfig(&sc);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiPmSamplingSetConfig (interval %llu ns): %s "
			 "(Turing and A100 have no GPU-time trigger)", (unsigned long long)pm_interval_ns, rname(r));
		return -1;
	}
	ds.pPmSamplingObject = pd.obj;
	ds.pMetricNames = pd.used;
	ds.numMetrics = pd.nused;
	ds.maxSamples = MAX_SAMPLES;
	r = pm.GetCounterDataSize(&ds);
	if (r != CUPTI_SUCCESS || !ds.counterDataSize) {
		snprintf(why, n, "cuptiPmSamplingGetCounterDataSize: %s", rname(r));
		return -1;
	}
	pd.data_size = ds.counterDataSize;
	pd.data = malloc(pd.data_size);
	if (!pd.data || counter_image_init() < 0) {
		snprintf(why, n, "cannot initialise the PM sampling counter data (%zu bytes)", pd.data_size);
		return -1;
	}
	if (pm_cu->GetTimestamp && pm_cu->GetTimestamp(&t) == CUPTI_SUCCESS)
		pm_offset = (int64_t)cl_now() - (int64_t)t;
	st.pPmSamplingObject = pd.obj;
	if (atomic_load(&pm_stop))
		return 0;
	r = pm.Start(&st);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiPmSamplingStart: %s", rname(r));
		return -1;
	}
	pd.started = 1;
	return 0;
}

/* Evaluate and write the completed samples of the counter-data image, then reset it. */
static void emit_samples(uint32_t dev)
{
	CUpti_PmSampling_GetCounterDataInfo_Params gi = { .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE };
	double values[PM_N];


	gi.pCounterDataImage = pd.data;
	gi.counterDataImageSize = pd.data_size;
	if (pm.GetCounterDataInfo(&gi) != CUPTI_SUCCESS)
		return;
	for (size_t s = 0; s < gi.numCompletedSamples; s++) {
		CUpti_PmSampling_CounterData_GetSampleInfo_Params si = { .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE };
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		uint64_t t;
		si.pPmSamplingObject = pd.obj;
		si.pCounterDataImage = pd.data;
		si.counterDataImageSize = pd.data_size;
		si.sampleIndex = s;
		if (pm.GetSampleInfo(&si) != CUPTI_SUCCESS)
			continue;
		ev.pHostObject = pd.host;
		ev.pCounterDataImage = pd.data;
		ev.counterDataImageSize = pd.data_size;
		ev.rangeIndex = s;
		ev.ppMetricNames = pd.used;
		ev.numMetrics = pd.nused;
		ev.pMetricValues = values;
		if (pk.HostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS)
			continue;
		/* the sample covers [start, end): it is stamped at its end, as NVML's samples are */
		t = (uint64_t)((int64_t)si.endTimestamp + pm_offset);
		for (size_t i = 0; i < pd.nused; i++) {
			struct trace_metric *x;
			if (!cl_recording_at(t))
				break;
			x = cl_reserve_at(TRACE_EV_METRIC, sizeof(*x), t);
			if (!x)
				break;
			x->time = t;
			x->value = values[i];
			x->device = dev;
			x->name_id = pd.key_id[i];
			x->pid = cl_pid();
			x->flags = 0;
			cl_commit();
		}
		pd.samples++;
	}
	counter_image_init();
}

/* Decode what the hardware buffer holds; returns 0, or -1 when sampling must stop. */
static int decode(uint32_t dev)
{
	for (int round = 0; round < 64; round++) {
		CUpti_PmSampling_DecodeData_Params dd = { .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE };
		CUptiResult r;
		dd.pPmSamplingObject = pd.obj;
		dd.pCounterDataImage = pd.data;
		dd.counterDataImageSize = pd.data_size;
		r = pm.DecodeData(&dd);
		if (dd.overflow)
			pd.overflows++;
		if (r != CUPTI_SUCCESS) {
			cl_warning("PM sampling stopped: cuptiPmSamplingDecodeData: %s", rname(r));
			return -1;
		}
		emit_samples(dev);
		if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			break;
	}
	return 0;
}

static void device_stop(void)
{
	CUpti_PmSampling_Stop_Params sp = { .structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
	CUpti_PmSampling_Disable_Params dp = { .structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE };

	if (pd.started) {
		sp.pPmSamplingObject = pd.obj;
		pm.Stop(&sp);
		pd.started = 0;
	}
	if (pd.obj) {
		dp.pPmSamplingObject = pd.obj;
		pm.Disable(&dp);
		pd.obj = NULL;
	}
}

static void pm_atexit(void)
{
	cl_pmsample_final();
}

static void *pm_main(void *arg)
{
	int dev;

	(void)arg;
	cl_mark_internal_thread();
	cl_guard_enter(); /* nothing this thread does is the program's */
	pthread_mutex_lock(&pm_lock);
	while (pm_device < 0 && !atomic_load(&pm_stop))
		pthread_cond_wait(&pm_cond, &pm_lock);
	dev = pm_device;
	pthread_mutex_unlock(&pm_lock);
	if (dev < 0 || atomic_load(&pm_stop))
		return NULL;
	if (!pd.started)
		return NULL;
	while (!atomic_load(&pm_stop)) {
		struct timespec ts = { 0, (long)pm_poll_ms * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !atomic_load(&pm_stop))
			;
		if (decode((uint32_t)dev) < 0)
			break;
	}
	if (pd.started) {
		CUpti_PmSampling_Stop_Params sp = { .structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
		sp.pPmSamplingObject = pd.obj;
		pm.Stop(&sp);
		pd.started = 0;
		decode((uint32_t)dev); /* what the buffer still holds */
	}
	device_stop();
	return NULL;
}

int cl_pmsample_start(const struct cupti_api *cu, char *why, size_t n)
{
	const char *s = getenv(GS_ENV_PM_SAMPLING);
	char *end;
	unsigned long long us;

	if (!s || !*s)
		return 0;
	errno = 0;
	us = strtoull(s, &end, 10);
	if (errno || *end || !us)
		return 0;
	if (us < PM_MIN_US)
		us = PM_MIN_US;
	pm_cu = cu;
	pm_interval_ns = us * 1000;
	pm_poll_ms = (unsigned)(us * POLL_SAMPLES / 1000);
	if (pm_poll_ms < POLL_MIN_MS)
		pm_poll_ms = POLL_MIN_MS;
	if (pm_poll_ms > POLL_MAX_MS)
		pm_poll_ms = POLL_MAX_MS;
	if (cupti_load_profiler(cu, &pk, why, n) < 0 || load_pm(why, n) < 0) {
		pm_interval_ns = 0;
		return -1;
	}
	if (pthread_create(&pm_thread, NULL, pm_main, NULL)) {
		snprintf(why, n, "cannot start the sampling thread");
		pm_interval_ns = 0;
		return -1;
	}
	pthread_setname_np(pm_thread, "gpuscope-pm");
	pm_thread_started = 1;
	return 1;
}

void cl_pmsample_context(uint32_t device)
{
	if (!pm_interval_ns)
		return;
	pthread_mutex_lock(&pm_lock);
	if (pm_device < 0) {
		char why[512] = "";
		pm_device = (int)device;
		/*
		 * Started here, on the thread that made the context, before the
		 * program goes on (about 0.5 s, once): started from the sampling
		 * thread instead, it raced the program's exit and the runtime's
		 * teardown of the device, and crashed short programs.
		 */
		if (go((int)device, why, sizeof(why)) < 0 || !pd.started) {
			cl_warning("PM sampling off: %s", why[0] ? why : "not started");
			device_stop();
			atomic_store(&pm_stop, 1);
		} else {
			/* after the runtime's own exit handler: ours runs first, while the device is there */
			atexit(pm_atexit);
		}
		pthread_cond_signal(&pm_cond);
	}
	pthread_mutex_unlock(&pm_lock);
}

void cl_pmsample_final(void)
{
	if (!pm_thread_started)
		return;
	pthread_mutex_lock(&pm_lock);
	atomic_store(&pm_stop, 1);
	pthread_cond_signal(&pm_cond);
	pthread_mutex_unlock(&pm_lock);
	{
		/* bounded (10 s): at exit the driver may already be tearing the device down */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		if (pthread_timedjoin_np(pm_thread, NULL, &until))
			pthread_detach(pm_thread);
	}
	pm_thread_started = 0;
	if (pd.samples || pd.overflows)
		cl_warning("PM sampling: %llu samples of %zu counters every %llu us on device %d%s",
			   (unsigned long long)pd.samples, pd.nused, (unsigned long long)(pm_interval_ns / 1000),
			   pm_device, pd.overflows ? "; the hardware buffer overflowed: samples lost" : "");
}

#endif
