/*
 * kmetrics.c - per-kernel hardware counters through CUPTI's Range Profiler
 * (`gpuscope profile --kernel-metrics[=SET]`, docs/cuda.md "Kernel metrics").
 *
 * How: CUPTI's launch callbacks (runtime and driver launch functions) tell
 * us every kernel launch with its name.  The first GPUSCOPE_KERNEL_COUNT
 * instances of each kernel whose name matches GPUSCOPE_KERNEL_FILTER are
 * profiled: at the entry of the outermost launch call we enable the Range
 * Profiler on the launch's context and start a session in auto-range,
 * kernel-replay mode (CUPTI_AutoRange,
 * CUPTI_KernelReplay: the profiler runs the kernel once per pass, saving
 * and restoring the memory it touches, inside the launch call), and at the
 * exit of that call we stop, decode the counter data, evaluate the metrics
 * of the set and disable the profiler again, so that the program's other
 * kernels run on a context without it.  One TRACE_EV_KMETRIC record per metric is written on
 * the launching thread, valid or not.
 *
 * Metric names differ between GPUs: each metric has a list of CUPTI names
 * tried in order on the context's chip (cuptiProfilerHostGetMetricProperties,
 * then cuptiProfilerHostConfigAddMetrics with the counter availability
 * image); a metric with no usable name is recorded as unavailable, never as
 * 0.  All of this happens lazily at the first selected launch of each CUDA
 * context, so a run where no kernel matches never touches the profiler.
 *
 * Concurrency: one profiled launch at a time in the process (km_prof_lock,
 * held from the launch's entry to its exit).  A callback never waits for it:
 * a selected launch that finds it taken is simply not profiled (a later
 * instance will be), because the thread holding it may need locks that a
 * waiting launch holds.  A kernel that another thread launches on the same
 * context while a profiled launch is between its entry and exit can be
 * captured in its place (auto-range profiles the first kernel after the
 * start); with one launching thread per context that cannot happen.
 *
 * Failures (no privileges, a VM without counter access, an old CUPTI) are one
 * cl_warning("kernel metrics off: ...") per process; tracing goes on.
 */
#include "collect.h"

#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"
#include "cupti_convert.h"
#include "kmetrics.h"
#include "env.h"

#include <cupti_profiler_host.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KM_TLS __attribute__((tls_model("initial-exec")))
#define KM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum km_set {
	KM_BASIC = 1u << 0,
	KM_TENSOR = 1u << 1,
	KM_MEMORY = 1u << 2,
	KM_STALLS = 1u << 3,
	KM_ALL = KM_BASIC | KM_TENSOR | KM_MEMORY | KM_STALLS,
};

/*
 * The metrics, by gpuscope key (the report's key_id; stats_kmetrics.c has
 * the column labels), with the CUPTI names tried in order.  The names are
 * those Nsight Compute shows for the same quantities (its SpeedOfLight,
 * Occupancy, MemoryWorkloadAnalysis and WarpStateStats sections), so that
 * values compare with `ncu --metrics NAME`.  Later names cover other chips.
 */
struct km_metric {
	const char *key;
	unsigned sets;
	const char *names[3];
};

static const struct km_metric km_metrics[] = {
	/* the kernel's duration under profiling: the cost ratio's denominator when no kernel record joins */
	{ "duration_ns", KM_ALL, { "gpu__time_duration.sum" } },
	{ "sm_throughput_pct", KM_BASIC, { "sm__throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ "dram_throughput_pct", KM_BASIC,
	  { "dram__throughput.avg.pct_of_peak_sustained_elapsed",
	    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ "achieved_occupancy_pct", KM_BASIC, { "sm__warps_active.avg.pct_of_peak_sustained_active" } },
	/* Hopper has two tensor pipes: HMMA (mma.sync, WMMA) and GMMA (wgmma) */
	{ "tensor_hmma_pct", KM_TENSOR,
	  { "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active" } },
	{ "tensor_gmma_pct", KM_TENSOR,
	  { "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active" } },
	{ "tensor_pipe_pct", KM_TENSOR,
	  { "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
	    "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active" } },
	{ "tensor_inst", KM_TENSOR,
	  { "sm__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum" } },
	{ "fma_pipe_pct", KM_TENSOR, { "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active" } },
	{ "l1_hit_pct", KM_MEMORY, { "l1tex__t_sector_hit_rate.pct" } },
	{ "l2_hit_pct", KM_MEMORY, { "lts__t_sector_hit_rate.pct" } },
	{ "dram_read_bytes", KM_MEMORY, { "dram__bytes_read.sum", "dram__bytes_op_read.sum" } },
	{ "dram_write_bytes", KM_MEMORY, { "dram__bytes_write.sum", "dram__bytes_op_write.sum" } },
	/* warp stalls: average cycles a warp waited per issued instruction, by reason */
	{ "stall_long_scoreboard", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct" } },
	{ "stall_barrier", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_barrier_per_warp_active.pct" } },
	{ "stall_math_pipe_throttle", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct" } },
	{ "stall_mio_throttle", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct" } },
	{ "stall_lg_throttle", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct" } },
	{ "stall_short_scoreboard", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct" } },
	{ "stall_wait", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_wait_per_warp_active.pct" } },
	{ "stall_not_selected", KM_STALLS,
	  { "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
	    "smsp__warp_issue_stalled_not_selected_per_warp_active.pct" } },
};
#define KM_NMETRICS KM_ARRAY_SIZE(km_metrics)

/* ---- settings (read once in cl_kmetrics_start, then read-only) ---- */

static const struct cupti_api *km_cu;
static struct cupti_prof_api kp;
static unsigned km_sets;            /* enum km_set bits; 0 = off */
static regex_t km_re;
static int km_has_re;
static unsigned km_count = 1;       /* GPUSCOPE_KERNEL_COUNT */
static unsigned km_max = 1000;      /* GPUSCOPE_KERNEL_MAX */
static atomic_int km_on;

/* ---- kernels seen at launches ---- */

#define KM_KSLOTS 8192              /* distinct kernels remembered (a power of two) */
/* Failed starts in a row after which a context is given up (each costs an enable and a warning check). */
#define KM_MAX_FAILS 3

struct km_kernel {
	const char *key;            /* CUPTI's symbolName pointer */
	char *raw;                  /* copy of the name it pointed to */
	char *shown;                /* demangled name, as kernel records show it */
	int selected;               /* matches the filter */
	unsigned profiled;          /* instances profiled (or tried) so far */
};

static struct km_kernel km_kernels[KM_KSLOTS];
static size_t km_kused;
static pthread_mutex_t km_lock = PTHREAD_MUTEX_INITIALIZER;   /* kernels, contexts, totals */

/* ---- per context ---- */

struct km_ctx {
	CUcontext ctx;
	int state;                  /* 0 not set up, 1 ready, -1 failed */
	uint32_t device;
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *avail;             /* counter availability image */
	uint8_t *config;
	size_t config_size;
	uint8_t *cdata;
	size_t cdata_size;
	unsigned passes;
	unsigned fails;             /* profiled launches in a row that failed to start */
	size_t nused;               /* metrics evaluated on this chip */
	const char *used[KM_NMETRICS];    /* their CUPTI names */
	int resolved[KM_NMETRICS];  /* index into used[] + 1; 0 = unavailable */
	struct km_ctx *next;
};

static struct km_ctx *km_ctxs;

/* ---- the profiled launch in progress ---- */

static pthread_mutex_t km_prof_lock = PTHREAD_MUTEX_INITIALIZER;
static int km_prof_inited;          /* cuptiProfilerInitialize done (under km_prof_lock) */
static atomic_int km_warned;
static uint64_t km_instances, km_cost_ns;    /* under km_prof_lock */
static unsigned km_kernels_n, km_passes_max; /* under km_prof_lock */
static atomic_int km_final_done;

struct km_launch {
	int on;                     /* this thread profiles a launch */
	int waiting;                /* this thread is inside a launch it does not profile */
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;      /* the call whose exit ends it */
	struct km_ctx *c;
	struct km_kernel *k;
	unsigned instance;
	uint32_t correlation;
	uint64_t t0;
	int started;                /* cuptiRangeProfilerStart succeeded */
};

static __thread struct km_launch km_cur KM_TLS;
/* correlation id of the runtime launch this thread is inside (0: none) */
static __thread uint32_t km_rt_corr KM_TLS;

static const char *rname(CUptiResult r)
{
	return cupti_result_name(km_cu, r);
}

/* ---- launch functions ---- */

static const CUpti_CallbackId km_rt_launch[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

static const CUpti_CallbackId km_drv_launch[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

int cl_kmetrics_wants(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!atomic_load_explicit(&km_on, memory_order_relaxed))
		return 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		for (size_t i = 0; i < KM_ARRAY_SIZE(km_rt_launch); i++)
			if (km_rt_launch[i] == cbid)
				return 1;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		for (size_t i = 0; i < KM_ARRAY_SIZE(km_drv_launch); i++)
			if (km_drv_launch[i] == cbid)
				return 1;
	}
	return 0;
}

/* ---- settings ---- */

static unsigned parse_sets(const char *s)
{
	static const struct { const char *name; unsigned bits; } names[] = {
		{ "basic", KM_BASIC }, { "tensor", KM_TENSOR }, { "memory", KM_MEMORY },
		{ "stalls", KM_STALLS }, { "full", KM_ALL },
	};
	unsigned bits = 0;

	while (s && *s) {
		size_t n = strcspn(s, ",");
		for (size_t i = 0; i < KM_ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == n && !strncmp(s, names[i].name, n))
				bits |= names[i].bits;
		s += n;
		if (*s == ',')
			s++;
	}
	return bits;
}

static unsigned env_count(const char *name, unsigned def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 1000000)
		return def;
	return (unsigned)v;
}

int cl_kmetrics_start(const struct cupti_api *cu, CUpti_SubscriberHandle sub, char *why, size_t n)
{
	const char *set = getenv(GS_ENV_KERNEL_METRICS);
	const char *filter = getenv(GS_ENV_KERNEL_FILTER);
	int e;

	if (!set || !*set)
		return 0;
	km_cu = cu;
	km_sets = parse_sets(set);
	if (!km_sets) {
		snprintf(why, n, "unknown metric set '%s' (basic, tensor, memory, full)", set);
		return -1;
	}
	km_count = env_count(GS_ENV_KERNEL_COUNT, 1);
	km_max = env_count(GS_ENV_KERNEL_MAX, 1000);
	if (filter && *filter) {
		e = regcomp(&km_re, filter, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];
			regerror(e, &km_re, msg, sizeof(msg));
			snprintf(why, n, "bad kernel filter '%s': %s", filter, msg);
			return -1;
		}
		km_has_re = 1;
	}
	if (cupti_load_profiler(cu, &kp, why, n) < 0)
		return -1;
	if (!sub) {
		snprintf(why, n, "they need CUPTI callbacks (GPUSCOPE_CUPTI_SUBSCRIBE=0)");
		return -1;
	}
	for (size_t i = 0; i < KM_ARRAY_SIZE(km_rt_launch); i++)
		cu->EnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, km_rt_launch[i]);
	for (size_t i = 0; i < KM_ARRAY_SIZE(km_drv_launch); i++)
		cu->EnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, km_drv_launch[i]);
	atomic_store(&km_on, 1);
	return 1;
}

/* ---- kernels ---- */

/* The kernel named @raw (CUPTI's pointer), remembered once; NULL when the table is full. */
static struct km_kernel *kernel_get(const char *raw)
{
	size_t h = ((uintptr_t)raw >> 3) * 0x9e3779b97f4a7c15ull;
	struct km_kernel *slot = NULL;

	for (size_t i = 0; i < KM_KSLOTS; i++) {
		struct km_kernel *s = &km_kernels[(h + i) & (KM_KSLOTS - 1)];
		if (!s->key) {
			slot = s;
			break;
		}
		if (s->key == raw && !strcmp(s->raw, raw))
			return s;
	}
	/* keep a quarter free so that probes stay short */
	if (!slot || km_kused >= KM_KSLOTS / 4 * 3)
		return NULL;
	{
		char *dem = cupti_demangle(raw);
		const char *name, *mangled;
		cupti_kernel_names(raw, dem, &name, &mangled);
		slot->raw = strdup(raw);
		slot->shown = strdup(name);
		free(dem);
		if (!slot->raw || !slot->shown) {
			free(slot->raw);
			free(slot->shown);
			slot->raw = slot->shown = NULL;
			return NULL;
		}
		slot->selected = !km_has_re || !regexec(&km_re, slot->shown, 0, NULL, 0) ||
				 !regexec(&km_re, slot->raw, 0, NULL, 0);
		slot->key = raw;
		km_kused++;
	}
	return slot;
}

/* ---- profiler set-up per context ---- */

static void host_free(CUpti_Profiler_Host_Object *h)
{
	CUpti_Profiler_Host_Deinitialize_Params p = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };

	if (!h)
		return;
	p.pHostObject = h;
	kp.HostDeinitialize(&p);
}

static CUpti_Profiler_Host_Object *host_new(const char *chip, const uint8_t *avail, CUptiResult *r)
{
	CUpti_Profiler_Host_Initialize_Params p = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };

	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail;
	*r = kp.HostInitialize(&p);
	return *r == CUPTI_SUCCESS ? p.pHostObject : NULL;
}

static CUptiResult add_metrics(CUpti_Profiler_Host_Object *h, const char **names, size_t n)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params p = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };

	if (!n)
		return CUPTI_SUCCESS;
	p.pHostObject = h;
	p.ppMetricNames = names;
	p.numMetrics = n;
	return kp.HostConfigAddMetrics(&p);
}

static int known_metric(CUpti_Profiler_Host_Object *h, const char *name)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p = { .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE };

	p.pHostObject = h;
	p.pMetricName = name;
	return kp.HostGetMetricProperties(&p) == CUPTI_SUCCESS;
}

/* Why profiling is not supported on @device, from cuptiProfilerDeviceSupported, or "". */
static void unsupported_reason(uint32_t device, char *buf, size_t n)
{
	CUpti_Profiler_DeviceSupported_Params p;
	static const char *const level[] = { "unknown", "unsupported", "disabled", "supported" };
	size_t len = 0;

	buf[0] = '\0';
	memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
	p.cuDevice = (CUdevice)device;
	p.api = CUPTI_PROFILER_RANGE_PROFILING;
	if (kp.DeviceSupported(&p) != CUPTI_SUCCESS || p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return;
#define LEVEL(field, what) \
	do { \
		if (p.field != CUPTI_PROFILER_CONFIGURATION_SUPPORTED && (unsigned)p.field < 4 && len < n) \
			len += (size_t)snprintf(buf + len, n - len, "%s%s %s", len ? ", " : "", what, \
						level[p.field]); \
	} while (0)
	LEVEL(architecture, "architecture");
	LEVEL(sli, "SLI");
	LEVEL(vGpu, "vGPU profiling");
	LEVEL(confidentialCompute, "confidential computing");
	LEVEL(cmp, "CMP");
	LEVEL(wsl, "WSL");
#undef LEVEL
}

/* One line saying why a profiler call failed, with the privilege case spelt out. */
static void fail_reason(const char *call, CUptiResult r, uint32_t device, char *why, size_t n)
{
	char extra[256];

	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
	    r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
		snprintf(why, n,
			 "%s: %s: the driver lets only administrators read GPU performance counters "
			 "(NVreg_RestrictProfilingToAdminUsers=1, or a VM without counter access); run as "
			 "root or load nvidia with NVreg_RestrictProfilingToAdminUsers=0",
			 call, rname(r));
		return;
	}
	unsupported_reason(device, extra, sizeof(extra));
	if (extra[0])
		snprintf(why, n, "%s failed (%s; profiling on this GPU: %s)", call, rname(r), extra);
	else
		snprintf(why, n, "%s failed (%s)", call, rname(r));
}

static CUptiResult counter_data_init(struct km_ctx *c)
{
	CUpti_RangeProfiler_GetCounterDataSize_Params sz = { .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	CUptiResult r;

	sz.pRangeProfilerObject = c->obj;
	sz.pMetricNames = c->used;
	sz.numMetrics = c->nused;
	sz.maxNumOfRanges = 1;          /* one kernel per session */
	sz.maxNumRangeTreeNodes = 1;
	r = kp.RangeGetCounterDataSize(&sz);
	if (r != CUPTI_SUCCESS)
		return r;
	if (sz.counterDataSize > c->cdata_size) {
		uint8_t *p = realloc(c->cdata, sz.counterDataSize);
		if (!p)
			return CUPTI_ERROR_OUT_OF_MEMORY;
		c->cdata = p;
	}
	c->cdata_size = sz.counterDataSize;
	return CUPTI_SUCCESS;
}

static CUptiResult range_enable(struct km_ctx *c)
{
	CUpti_RangeProfiler_Enable_Params p = { .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	CUptiResult r;

	p.ctx = c->ctx;
	r = kp.RangeEnable(&p);
	if (r != CUPTI_SUCCESS)
		return r;
	c->obj = p.pRangeProfilerObject;
	return counter_data_init(c);
}

static void range_disable(struct km_ctx *c)
{
	CUpti_RangeProfiler_Disable_Params p = { .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };

	if (!c->obj)
		return;
	p.pRangeProfilerObject = c->obj;
	kp.RangeDisable(&p);
	c->obj = NULL;
}

/*
 * Set up profiling on context @c (under km_prof_lock): chip, counter
 * availability, metric names, config image, the Range Profiler.  0, or -1
 * with a reason in @why.
 */
static int ctx_setup(struct km_ctx *c, char *why, size_t n)
{
	CUpti_Profiler_GetCounterAvailability_Params av = { .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	CUpti_Device_GetChipName_Params chip = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImageSize_Params isz = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImage_Params img = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	CUptiResult r;
	uint32_t dev = 0;

	if (!km_prof_inited) {
		CUpti_Profiler_Initialize_Params ip = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		r = kp.Initialize(&ip);
		if (r != CUPTI_SUCCESS) {
			fail_reason("cuptiProfilerInitialize", r, 0, why, n);
			return -1;
		}
		km_prof_inited = 1;
	}
	if (km_cu->GetDeviceId && km_cu->GetDeviceId(c->ctx, &dev) != CUPTI_SUCCESS)
		dev = 0;
	c->device = dev;
	chip.deviceIndex = dev;
	r = kp.DeviceGetChipName(&chip);
	if (r != CUPTI_SUCCESS || !chip.pChipName) {
		fail_reason("cuptiDeviceGetChipName", r, dev, why, n);
		return -1;
	}
	av.ctx = c->ctx;
	r = kp.GetCounterAvailability(&av);
	if (r == CUPTI_SUCCESS && av.counterAvailabilityImageSize) {
		c->avail = malloc(av.counterAvailabilityImageSize);
		if (!c->avail) {
			snprintf(why, n, "out of memory");
			return -1;
		}
		av.pCounterAvailabilityImage = c->avail;
		r = kp.GetCounterAvailability(&av);
	}
	if (r != CUPTI_SUCCESS) {
		fail_reason("cuptiProfilerGetCounterAvailability", r, dev, why, n);
		return -1;
	}
	c->host = host_new(chip.pChipName, c->avail, &r);
	if (!c->host) {
		snprintf(why, n, "cuptiProfilerHostInitialize failed for chip '%s' (%s)", chip.pChipName,
			 rname(r));
		return -1;
	}
	/*
	 * Resolve each metric of the set: the first name the chip knows and
	 * can schedule.  A failed ConfigAddMetrics may leave the host object
	 * half-configured, so it is rebuilt with the names chosen so far.
	 */
	for (size_t i = 0; i < KM_NMETRICS; i++) {
		if (!(km_metrics[i].sets & km_sets))
			continue;
		for (size_t j = 0; j < KM_ARRAY_SIZE(km_metrics[i].names) && km_metrics[i].names[j]; j++) {
			const char *name = km_metrics[i].names[j];
			if (!known_metric(c->host, name))
				continue;
			if (add_metrics(c->host, &name, 1) == CUPTI_SUCCESS) {
				c->used[c->nused++] = name;
				c->resolved[i] = (int)c->nused;
				break;
			}
			host_free(c->host);
			c->host = host_new(chip.pChipName, c->avail, &r);
			if (!c->host || add_metrics(c->host, c->used, c->nused) != CUPTI_SUCCESS) {
				snprintf(why, n, "cuptiProfilerHostConfigAddMetrics failed (%s)", rname(r));
				return -1;
			}
		}
	}
	if (!c->nused) {
		snprintf(why, n, "none of the metrics of the set is available on chip '%s'", chip.pChipName);
		return -1;
	}
	isz.pHostObject = c->host;
	r = kp.HostGetConfigImageSize(&isz);
	if (r == CUPTI_SUCCESS) {
		c->config = malloc(isz.configImageSize ? isz.configImageSize : 1);
		c->config_size = isz.configImageSize;
		img.pHostObject = c->host;
		img.configImageSize = c->config_size;
		img.pConfigImage = c->config;
		r = c->config ? kp.HostGetConfigImage(&img) : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cannot build the counter configuration (%s)", rname(r));
		return -1;
	}
	np.configImageSize = c->config_size;
	np.pConfigImage = c->config;
	c->passes = kp.HostGetNumOfPasses(&np) == CUPTI_SUCCESS ? (unsigned)np.numOfPasses : 0;
	return 0;
}

static struct km_ctx *ctx_get(CUcontext ctx)
{
	struct km_ctx *c;

	for (c = km_ctxs; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = ctx;
	c->next = km_ctxs;
	km_ctxs = c;
	return c;
}

/* ---- one profiled launch ---- */

/*
 * The Range Profiler is enabled on the context only for the profiled launch
 * (enabled here, disabled by session_end): the program's other kernels run
 * on a context without it.  On failure it is left disabled; *step names the
 * call that failed.
 */
static CUptiResult session_begin(struct km_ctx *c, const char **step)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_SetConfig_Params sc = { .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	CUptiResult r;

	*step = "cuptiRangeProfilerEnable";
	r = range_enable(c);
	if (r != CUPTI_SUCCESS) {
		range_disable(c);
		return r;
	}
	*step = "cuptiRangeProfilerCounterDataImageInitialize";
	ci.pRangeProfilerObject = c->obj;
	ci.counterDataSize = c->cdata_size;
	ci.pCounterData = c->cdata;
	r = kp.RangeCounterDataImageInitialize(&ci);
	if (r != CUPTI_SUCCESS)
		goto fail;
	*step = "cuptiRangeProfilerSetConfig";
	sc.pRangeProfilerObject = c->obj;
	sc.configSize = c->config_size;
	sc.pConfig = c->config;
	sc.counterDataImageSize = c->cdata_size;
	sc.pCounterDataImage = c->cdata;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = 1;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	r = kp.RangeSetConfig(&sc);
	if (r != CUPTI_SUCCESS)
		goto fail;
	*step = "cuptiRangeProfilerStart";
	st.pRangeProfilerObject = c->obj;
	r = kp.RangeStart(&st);
	if (r == CUPTI_SUCCESS)
		return r;
fail:
	range_disable(c);
	return r;
}

static CUptiResult session_read(struct km_ctx *c, double *values)
{
	CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_DecodeData_Params dd = { .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = { .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
	CUptiResult r;

	sp.pRangeProfilerObject = c->obj;
	r = kp.RangeStop(&sp);
	if (r != CUPTI_SUCCESS)
		return r;
	dd.pRangeProfilerObject = c->obj;
	r = kp.RangeDecodeData(&dd);
	if (r != CUPTI_SUCCESS)
		return r;
	gi.pCounterDataImage = c->cdata;
	gi.counterDataImageSize = c->cdata_size;
	r = kp.RangeGetCounterDataInfo(&gi);
	if (r != CUPTI_SUCCESS)
		return r;
	if (gi.numTotalRanges < 1)
		return CUPTI_ERROR_NOT_READY;   /* the kernel was not captured */
	ev.pHostObject = c->host;
	ev.pCounterDataImage = c->cdata;
	ev.counterDataImageSize = c->cdata_size;
	ev.rangeIndex = 0;
	ev.ppMetricNames = c->used;
	ev.numMetrics = c->nused;
	ev.pMetricValues = values;
	return kp.HostEvaluateToGpuValues(&ev);
}

/* Stop the session, evaluate its one range into @values (c->nused doubles), disable. */
static CUptiResult session_end(struct km_ctx *c, double *values)
{
	CUptiResult r = session_read(c, values);

	range_disable(c);
	return r;
}

static void warn_once(const char *why)
{
	if (!atomic_exchange(&km_warned, 1))
		cl_warning("kernel metrics off: %s", why);
}

/* Emit one record per metric of the set for the launch of @l; @values NULL: the instance failed. */
static void emit(const struct km_launch *l, const double *values, uint64_t cost)
{
	uint32_t kid = cl_intern(l->k->shown, strlen(l->k->shown));

	for (size_t i = 0; i < KM_NMETRICS; i++) {
		const struct km_metric *d = &km_metrics[i];
		struct trace_kmetric rec, *p;
		char tried[512];
		size_t len = 0;
		uint32_t key, metric;

		if (!(d->sets & km_sets))
			continue;
		memset(&rec, 0, sizeof(rec));
		if (l->c->resolved[i]) {
			const char *name = l->c->used[l->c->resolved[i] - 1];
			metric = cl_intern(name, strlen(name));
			if (values) {
				rec.value = values[l->c->resolved[i] - 1];
				rec.flags = TRACE_KM_VALID;
			} else {
				rec.flags = TRACE_KM_FAILED;
			}
		} else {
			for (size_t j = 0; j < KM_ARRAY_SIZE(d->names) && d->names[j] && len < sizeof(tried); j++)
				len += (size_t)snprintf(tried + len, sizeof(tried) - len, "%s%s", j ? "|" : "",
							d->names[j]);
			if (len >= sizeof(tried))
				len = sizeof(tried) - 1;
			metric = cl_intern(tried, len);
			rec.flags = TRACE_KM_UNAVAILABLE;
		}
		key = cl_intern(d->key, strlen(d->key));
		rec.time = l->t0;
		rec.cost_ns = cost;
		rec.pid = cl_pid();
		rec.tid = cl_tid();
		rec.correlation = l->correlation;
		rec.device = l->c->device;
		rec.kernel_id = kid;
		rec.key_id = key;
		rec.metric_id = metric;
		rec.instance = l->instance;
		rec.passes = (uint16_t)(l->c->passes > UINT16_MAX ? UINT16_MAX : l->c->passes);
		p = cl_reserve_at(TRACE_EV_KMETRIC, sizeof(rec), rec.time);
		if (!p)
			continue;
		memcpy(p, &rec, sizeof(rec));
		cl_commit();
	}
}

/* This thread's launch (@domain, @cbid) is not profiled, nor are the launches inside it. */
static void skip_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	memset(&km_cur, 0, sizeof(km_cur));
	km_cur.waiting = 1;
	km_cur.domain = domain;
	km_cur.cbid = cbid;
}

/* At the entry of the outermost launch: profile it when selected. */
static void launch_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct km_kernel *k;
	struct km_ctx *c;
	unsigned instance;
	char why[768];
	const char *step = "";
	CUptiResult r;

	if (!cb->symbolName || !cb->context) {
		/* a runtime launch that creates its context: the driver launch inside decides */
		return;
	}
	pthread_mutex_lock(&km_lock);
	k = kernel_get(cb->symbolName);
	if (!k || !k->selected || k->profiled >= km_count || km_instances >= km_max) {
		pthread_mutex_unlock(&km_lock);
		skip_launch(domain, cbid);
		return;
	}
	c = ctx_get(cb->context);
	pthread_mutex_unlock(&km_lock);
	if (!c || c->state < 0) {
		skip_launch(domain, cbid);
		return;
	}
	if (pthread_mutex_trylock(&km_prof_lock)) {
		skip_launch(domain, cbid);   /* another thread's profiled launch runs: a later instance */
		return;
	}
	pthread_mutex_lock(&km_lock);
	/* recheck under both locks: another thread may have taken the last instance */
	if (k->profiled >= km_count || km_instances >= km_max) {
		pthread_mutex_unlock(&km_lock);
		goto out;
	}
	instance = k->profiled++;
	km_instances++;
	if (instance == 0)
		km_kernels_n++;
	pthread_mutex_unlock(&km_lock);
	if (c->state == 0) {
		why[0] = '\0';
		if (ctx_setup(c, why, sizeof(why)) < 0) {
			c->state = -1;
			warn_once(why);
			goto out;
		}
		c->state = 1;
	}
	memset(&km_cur, 0, sizeof(km_cur));
	km_cur.domain = domain;
	km_cur.cbid = cbid;
	km_cur.c = c;
	km_cur.k = k;
	km_cur.instance = instance;
	km_cur.correlation = domain == CUPTI_CB_DOMAIN_DRIVER_API && km_rt_corr ? km_rt_corr
										  : cb->correlationId;
	km_cur.t0 = cl_now();
	r = session_begin(c, &step);
	if (r != CUPTI_SUCCESS) {
		fail_reason(step, r, c->device, why, sizeof(why));
		warn_once(why);
		emit(&km_cur, NULL, 0);
		/*
		 * Refused counters stay refused; other failures may be of one
		 * launch, but after KM_MAX_FAILS in a row on a context it is
		 * given up, so that a broken profiler costs a bounded time.
		 */
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
		    r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES || ++c->fails >= KM_MAX_FAILS)
			c->state = -1;
		goto out;
	}
	c->fails = 0;
	km_cur.on = 1;
	km_cur.started = 1;
	return;   /* km_prof_lock stays held until the launch's exit */
out:
	skip_launch(domain, cbid);
	pthread_mutex_unlock(&km_prof_lock);
}

static void launch_exit(void)
{
	double values[KM_NMETRICS];
	uint64_t cost;
	CUptiResult r;
	struct km_ctx *c = km_cur.c;

	r = session_end(c, values);
	cost = cl_now() - km_cur.t0;
	if (r != CUPTI_SUCCESS) {
		char why[768];
		fail_reason("reading the kernel's counters", r, c->device, why, sizeof(why));
		warn_once(why);
		emit(&km_cur, NULL, cost);
	} else {
		emit(&km_cur, values, cost);
	}
	km_cost_ns += cost;
	if (c->passes > km_passes_max)
		km_passes_max = c->passes;
	memset(&km_cur, 0, sizeof(km_cur));
	pthread_mutex_unlock(&km_prof_lock);
}

static int is_runtime_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API)
		return 0;
	for (size_t i = 0; i < KM_ARRAY_SIZE(km_rt_launch); i++)
		if (km_rt_launch[i] == cbid)
			return 1;
	return 0;
}

void cl_kmetrics_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			  const CUpti_CallbackData *cb)
{
	if (!atomic_load_explicit(&km_on, memory_order_relaxed) || !cl_kmetrics_wants(domain, cbid))
		return;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (is_runtime_launch(domain, cbid) && !km_rt_corr)
			km_rt_corr = cb->correlationId;
		if (km_cur.on || km_cur.waiting)
			return;   /* a launch inside the one being handled */
		launch_enter(domain, cbid, cb);
		return;
	}
	if (km_cur.domain == domain && km_cur.cbid == cbid) {
		if (km_cur.on)
			launch_exit();
		else
			memset(&km_cur, 0, sizeof(km_cur));
	}
	if (is_runtime_launch(domain, cbid) && km_rt_corr == cb->correlationId)
		km_rt_corr = 0;
}

void cl_kmetrics_final(void)
{
	char line[256];

	if (!atomic_load(&km_on) || atomic_exchange(&km_final_done, 1))
		return;
	/* a launch still being profiled at exit: say nothing rather than wait */
	if (pthread_mutex_trylock(&km_prof_lock))
		return;
	if (km_instances && km_cost_ns) {
		snprintf(line, sizeof(line),
			 "kernel metrics: %llu instance%s of %u kernel%s profiled with kernel replay "
			 "(%u pass%s each), %.3f ms of host time",
			 (unsigned long long)km_instances, km_instances == 1 ? "" : "s", km_kernels_n,
			 km_kernels_n == 1 ? "" : "s", km_passes_max, km_passes_max == 1 ? "" : "es",
			 (double)km_cost_ns / 1e6);
		cl_warning("%s", line);
	} else if (!atomic_load(&km_warned)) {
		cl_warning("kernel metrics: no kernel launch matched%s", km_has_re ? " the filter" : "");
	}
	pthread_mutex_unlock(&km_prof_lock);
}

#endif /* GS_HAVE_CUPTI */
