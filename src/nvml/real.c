/*
 * real.c - the "nvml" backend: dlopen libnvidia-ml.so.1 and read it.
 *
 * We declare the few NVML types we use ourselves (no nvml.h at build time),
 * resolve the newest versioned symbol first and fall back to older names
 * (docs/monitor.md lists them).  Every call made becomes one raw reading with
 * NVML's return code, so a missing function or an unsupported query reads as
 * "unknown" downstream, never as 0.
 */
#include "nvml.h"
#include "../util/util.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct gs_nvml_device *nvmlDevice_t;     /* one pointer, as NVML's handle */
typedef struct gs_nvml_gpm_sample *nvmlGpmSample_t;

enum {
	NVML_OK = 0,
	NVML_ERR_NOT_SUPPORTED = 3,
	NVML_ERR_INSUFFICIENT_SIZE = 7,
	NVML_ERR_FUNCTION_NOT_FOUND = 13,
};

struct gs_utilization { unsigned gpu, memory; };
struct gs_memory_v1 { unsigned long long total, free, used; };
struct gs_memory_v2 { unsigned version; unsigned long long total, reserved, free, used; };
#define GS_MEMORY_V2_VERSION ((unsigned)sizeof(struct gs_memory_v2) | (2u << 24))
struct gs_pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};
struct gs_temperature { unsigned version; int sensor; int temperature; };
#define GS_TEMPERATURE_VERSION ((unsigned)sizeof(struct gs_temperature) | (1u << 24))
struct gs_process_info { /* v2/v3 of current driver headers: 24 bytes */
	unsigned pid;
	unsigned long long used_gpu_memory;
	unsigned gpu_instance_id, compute_instance_id;
};
struct gs_field_value {
	unsigned field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type;
	nvmlReturn_t ret;
	union { double d; unsigned ui; unsigned long ul; unsigned long long ull;
		long long sll; int si; unsigned short us; } value;
};
struct gs_gpm_metric {
	unsigned metric_id;
	nvmlReturn_t ret;
	double value;
	char *short_name, *long_name, *unit;
};
/*
 * NVML_GPM_METRIC_MAX grew from 98 to 333 while the struct version stayed 1:
 * our array is bigger than any of them and numMetrics stays small.
 */
struct gs_gpm_metrics_get {
	unsigned version;
	unsigned num_metrics;
	nvmlGpmSample_t sample1, sample2;
	struct gs_gpm_metric metrics[400];
};
struct gs_gpm_support { unsigned version; unsigned is_supported; };

struct nvml_api {
	void *dl;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*nvml_version)(char *, unsigned);
	nvmlReturn_t (*cuda_version)(int *);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*pci_info)(nvmlDevice_t, struct gs_pci_info *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*max_pcie_gen)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*max_pcie_width)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*cuda_cc)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*bus_width)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*utilization)(nvmlDevice_t, struct gs_utilization *);
	nvmlReturn_t (*memory_v2)(nvmlDevice_t, struct gs_memory_v2 *);
	nvmlReturn_t (*memory_v1)(nvmlDevice_t, struct gs_memory_v1 *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*temperature_v)(nvmlDevice_t, struct gs_temperature *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*field_values)(nvmlDevice_t, int, struct gs_field_value *);
	nvmlReturn_t (*fan)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pstate)(nvmlDevice_t, int *);
	nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*enc_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*dec_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_tput)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*pcie_replay)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
	nvmlReturn_t (*persistence)(nvmlDevice_t, int *);
	nvmlReturn_t (*processes)(nvmlDevice_t, unsigned *, struct gs_process_info *);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int *);
	nvmlReturn_t (*gpm_support)(nvmlDevice_t, struct gs_gpm_support *);
	nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t *);
	nvmlReturn_t (*gpm_free)(nvmlGpmSample_t);
	nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t);
	nvmlReturn_t (*gpm_metrics)(struct gs_gpm_metrics_get *);
	/* topology (read_topo) */
	nvmlReturn_t (*topo_ancestor)(nvmlDevice_t, nvmlDevice_t, int *);
	nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int *);
	nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, struct gs_pci_info *);
	nvmlReturn_t (*nvlink_version)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*cpu_affinity)(nvmlDevice_t, unsigned, unsigned long *);
	nvmlReturn_t (*numa_node)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*memory_affinity)(nvmlDevice_t, unsigned, unsigned long *, int);
	nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, int *);
};

struct group_state {
	double cost_ns;               /* CPU per call, exponential average */
	unsigned long calls, samples; /* calls made, of which measured */
	uint64_t last_ns;             /* mono time of the last call */
	double base_hz, rate_hz;      /* wanted and allowed rates under a budget */
};

struct real_gpu {
	nvmlDevice_t dev;
	struct group_state grp[23];   /* enum read_group (G__COUNT, checked below) */
	unsigned nvlinks;             /* links answering nvmlDeviceGetNvLinkState */
	int gpm;                      /* GPM usable */
	nvmlGpmSample_t gpm_prev, gpm_cur;
	uint64_t gpm_prev_ns;         /* mono time of gpm_prev; 0 = none */
	struct gs_gpm_metrics_get *mg;
};

struct real {
	struct nvml_api api;
	uint64_t planned_ns;          /* last plan_rates() */
	unsigned ngpus;
	struct real_gpu *gpu;
};

/* Resolve the first of the NULL-terminated names that exists. */
static void *sym(void *dl, ...)
{
	va_list ap;
	const char *name;
	void *p = NULL;

	va_start(ap, dl);
	while (!p && (name = va_arg(ap, const char *)))
		p = dlsym(dl, name);
	va_end(ap);
	return p;
}

#define SYM(field, ...) (*(void **)&a->field = sym(a->dl, __VA_ARGS__, (const char *)NULL))

static void resolve(struct nvml_api *a)
{
	SYM(init, "nvmlInit_v2", "nvmlInit");
	SYM(shutdown, "nvmlShutdown");
	SYM(error_string, "nvmlErrorString");
	SYM(driver_version, "nvmlSystemGetDriverVersion");
	SYM(nvml_version, "nvmlSystemGetNVMLVersion");
	SYM(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
	SYM(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	SYM(name, "nvmlDeviceGetName");
	SYM(uuid, "nvmlDeviceGetUUID");
	SYM(pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
	SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
	SYM(max_pcie_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
	SYM(max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth");
	SYM(temp_threshold, "nvmlDeviceGetTemperatureThreshold");
	SYM(ecc_mode, "nvmlDeviceGetEccMode");
	SYM(cuda_cc, "nvmlDeviceGetCudaComputeCapability");
	SYM(bus_width, "nvmlDeviceGetMemoryBusWidth");
	SYM(mig_mode, "nvmlDeviceGetMigMode");
	SYM(utilization, "nvmlDeviceGetUtilizationRates");
	SYM(memory_v2, "nvmlDeviceGetMemoryInfo_v2");
	SYM(memory_v1, "nvmlDeviceGetMemoryInfo");
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(power, "nvmlDeviceGetPowerUsage");
	SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
	SYM(temperature_v, "nvmlDeviceGetTemperatureV");
	SYM(temperature, "nvmlDeviceGetTemperature");
	SYM(field_values, "nvmlDeviceGetFieldValues");
	SYM(fan, "nvmlDeviceGetFanSpeed");
	SYM(pstate, "nvmlDeviceGetPerformanceState");
	SYM(event_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
	    "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(enc_util, "nvmlDeviceGetEncoderUtilization");
	SYM(dec_util, "nvmlDeviceGetDecoderUtilization");
	SYM(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
	SYM(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
	SYM(pcie_tput, "nvmlDeviceGetPcieThroughput");
	SYM(pcie_replay, "nvmlDeviceGetPcieReplayCounter");
	SYM(ecc_errors, "nvmlDeviceGetTotalEccErrors");
	SYM(remapped_rows, "nvmlDeviceGetRemappedRows");
	SYM(persistence, "nvmlDeviceGetPersistenceMode");
	SYM(processes, "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2");
	SYM(nvlink_state, "nvmlDeviceGetNvLinkState");
	SYM(gpm_support, "nvmlGpmQueryDeviceSupport");
	SYM(gpm_alloc, "nvmlGpmSampleAlloc");
	SYM(gpm_free, "nvmlGpmSampleFree");
	SYM(gpm_get, "nvmlGpmSampleGet");
	SYM(gpm_metrics, "nvmlGpmMetricsGet");
	SYM(topo_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
	SYM(p2p_status, "nvmlDeviceGetP2PStatus");
	SYM(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo");
	SYM(nvlink_version, "nvmlDeviceGetNvLinkVersion");
	SYM(cpu_affinity, "nvmlDeviceGetCpuAffinity");
	SYM(numa_node, "nvmlDeviceGetNumaNodeId");
	SYM(memory_affinity, "nvmlDeviceGetMemoryAffinity");
	SYM(nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
}

static const char *errstr(struct nvml_api *a, nvmlReturn_t r)
{
	const char *s = a->error_string ? a->error_string(r) : NULL;
	return s ? s : "unknown error";
}

static int real_open(struct nvml *n, const char *arg, char *why, size_t whylen)
{
	struct real *rl = xcalloc(1, sizeof(*rl));
	struct nvml_api *a = &rl->api;
	nvmlReturn_t ret;

	GS_UNUSED(arg);
	a->dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!a->dl) {
		snprintf(why, whylen, "no NVIDIA driver: libnvidia-ml.so.1 not found");
		free(rl);
		return -1;
	}
	resolve(a);
	if (!a->init || !a->count || !a->handle) {
		snprintf(why, whylen, "libnvidia-ml.so.1 lacks nvmlInit/nvmlDeviceGetCount: driver too old");
		dlclose(a->dl);
		free(rl);
		return -1;
	}
	ret = a->init();
	if (ret != NVML_OK) {
		snprintf(why, whylen, "cannot initialise NVML: %s", errstr(a, ret));
		dlclose(a->dl);
		free(rl);
		return -1;
	}
	ret = a->count(&rl->ngpus);
	if (ret != NVML_OK || rl->ngpus == 0) {
		snprintf(why, whylen, "no NVIDIA GPU found%s%s", ret ? ": " : "",
			 ret ? errstr(a, ret) : "");
		if (a->shutdown)
			a->shutdown();
		dlclose(a->dl);
		free(rl);
		return -1;
	}
	rl->gpu = xcalloc(rl->ngpus, sizeof(*rl->gpu));
	for (unsigned i = 0; i < rl->ngpus; i++) {
		ret = a->handle(i, &rl->gpu[i].dev);
		if (ret != NVML_OK) {
			snprintf(why, whylen, "cannot open GPU %u: %s", i, errstr(a, ret));
			if (a->shutdown)
				a->shutdown();
			dlclose(a->dl);
			free(rl->gpu);
			free(rl);
			return -1;
		}
	}
	n->priv = rl;
	return 0;
}

static void real_close(struct nvml *n)
{
	struct real *rl = n->priv;

	if (!rl)
		return;
	for (unsigned i = 0; i < rl->ngpus; i++) {
		struct real_gpu *g = &rl->gpu[i];
		if (g->gpm_prev && rl->api.gpm_free)
			rl->api.gpm_free(g->gpm_prev);
		if (g->gpm_cur && rl->api.gpm_free)
			rl->api.gpm_free(g->gpm_cur);
		free(g->mg);
	}
	if (rl->api.shutdown)
		rl->api.shutdown();
	dlclose(rl->api.dl);
	free(rl->gpu);
	free(rl);
	n->priv = NULL;
}

#define MISSING NVML_ERR_FUNCTION_NOT_FOUND

/* Add a reading of one unsigned value from @fn(dev, &v). */
#define READ_U(out, call, argv, fn, ...)                                          \
	do {                                                                      \
		unsigned v_ = 0;                                                  \
		struct nvml_raw *r_;                                              \
		nvmlReturn_t ret_ = a->fn ? a->fn(__VA_ARGS__, &v_) : MISSING;    \
		r_ = nvml_raws_add(out, call, argv, ret_);                        \
		r_->nval = 1;                                                     \
		r_->val[0] = v_;                                                  \
	} while (0)

static int real_read_system(struct nvml *n, struct nvml_raws *out)
{
	struct real *rl = n->priv;
	struct nvml_api *a = &rl->api;
	struct nvml_raw *r;
	char buf[NVML_RAW_STR];
	int cuda = 0;
	nvmlReturn_t ret;

	buf[0] = '\0';
	ret = a->driver_version ? a->driver_version(buf, sizeof(buf)) : MISSING;
	r = nvml_raws_add(out, NVC_DRIVER_VERSION, 0, ret);
	snprintf(r->str, sizeof(r->str), "%s", ret ? "" : buf);
	buf[0] = '\0';
	ret = a->nvml_version ? a->nvml_version(buf, sizeof(buf)) : MISSING;
	r = nvml_raws_add(out, NVC_NVML_VERSION, 0, ret);
	snprintf(r->str, sizeof(r->str), "%s", ret ? "" : buf);
	ret = a->cuda_version ? a->cuda_version(&cuda) : MISSING;
	r = nvml_raws_add(out, NVC_CUDA_VERSION, 0, ret);
	r->nval = 1;
	r->val[0] = cuda;
	r = nvml_raws_add(out, NVC_DEVICE_COUNT, 0, 0);
	r->nval = 1;
	r->val[0] = rl->ngpus;
	r = nvml_raws_add(out, NVC_HOSTNAME, 0, 0);
	if (gethostname(r->str, sizeof(r->str) - 1))
		r->ret = 999;
	return 0;
}

static int real_read_static(struct nvml *n, unsigned gpu, struct nvml_raws *out)
{
	struct real *rl = n->priv;
	struct nvml_api *a = &rl->api;
	struct real_gpu *g = &rl->gpu[gpu];
	nvmlDevice_t d = g->dev;
	struct nvml_raw *r;
	nvmlReturn_t ret;

	r = nvml_raws_add(out, NVC_NAME, 0, 0);
	r->ret = a->name ? a->name(d, r->str, sizeof(r->str)) : MISSING;
	r = nvml_raws_add(out, NVC_UUID, 0, 0);
	r->ret = a->uuid ? a->uuid(d, r->str, sizeof(r->str)) : MISSING;
	{
		struct gs_pci_info pci;
		memset(&pci, 0, sizeof(pci));
		ret = a->pci_info ? a->pci_info(d, &pci) : MISSING;
		r = nvml_raws_add(out, NVC_PCI_INFO, 0, ret);
		r->nval = 3;
		r->val[0] = pci.domain;
		r->val[1] = pci.bus;
		r->val[2] = pci.device;
		pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
		snprintf(r->str, sizeof(r->str), "%s", pci.bus_id);
	}
	READ_U(out, NVC_MAX_CLOCK, 1, max_clock, d, 1);
	READ_U(out, NVC_MAX_CLOCK, 2, max_clock, d, 2);
	READ_U(out, NVC_MAX_PCIE_GEN, 0, max_pcie_gen, d);
	READ_U(out, NVC_MAX_PCIE_WIDTH, 0, max_pcie_width, d);
	READ_U(out, NVC_TEMP_THRESHOLD, 0, temp_threshold, d, 0);
	READ_U(out, NVC_TEMP_THRESHOLD, 1, temp_threshold, d, 1);
	{
		int cur = 0, pend = 0;
		ret = a->ecc_mode ? a->ecc_mode(d, &cur, &pend) : MISSING;
		r = nvml_raws_add(out, NVC_ECC_MODE, 0, ret);
		r->nval = 2;
		r->val[0] = cur;
		r->val[1] = pend;
	}
	{
		int maj = 0, min = 0;
		ret = a->cuda_cc ? a->cuda_cc(d, &maj, &min) : MISSING;
		r = nvml_raws_add(out, NVC_CUDA_CC, 0, ret);
		r->nval = 2;
		r->val[0] = maj;
		r->val[1] = min;
	}
	READ_U(out, NVC_BUS_WIDTH, 0, bus_width, d);
	{
		unsigned cur = 0, pend = 0;
		ret = a->mig_mode ? a->mig_mode(d, &cur, &pend) : MISSING;
		r = nvml_raws_add(out, NVC_MIG_MODE, 0, ret);
		r->nval = 2;
		r->val[0] = cur;
		r->val[1] = pend;
	}
	{
		struct gs_gpm_support sup = { 1, 0 }; /* plain version 1, not NVML_STRUCT_VERSION */
		ret = a->gpm_support ? a->gpm_support(d, &sup) : MISSING;
		if (ret == NVML_OK && (!a->gpm_alloc || !a->gpm_get || !a->gpm_metrics))
			ret = MISSING;
		r = nvml_raws_add(out, NVC_GPM_SUPPORT, 0, ret);
		r->nval = 1;
		r->val[0] = ret == NVML_OK && sup.is_supported;
		g->gpm = ret == NVML_OK && sup.is_supported;
	}
	{
		/* links that answer; the table is 36 links in recent headers */
		nvmlReturn_t first = MISSING;
		g->nvlinks = 0;
		for (unsigned l = 0; a->nvlink_state && l < 36; l++) {
			int st = 0;
			ret = a->nvlink_state(d, l, &st);
			if (l == 0)
				first = ret;
			if (ret != NVML_OK)
				break;
			g->nvlinks++;
		}
		r = nvml_raws_add(out, NVC_NVLINK_PRESENT, 0, g->nvlinks ? NVML_OK : first);
		r->nval = 1;
		r->val[0] = g->nvlinks;
	}
	return 0;
}

/* Append the CPUs set in @mask (of @nwords words) as a list "0-23,48-71" to @buf. */
static void cpu_list(const unsigned long *mask, unsigned nwords, char *buf, size_t len)
{
	size_t used = 0;
	unsigned bits = nwords * 8 * (unsigned)sizeof(unsigned long);
	int first = -1;

	buf[0] = '\0';
	for (unsigned c = 0; c <= bits; c++) {
		int on = c < bits && (mask[c / (8 * sizeof(unsigned long))] >> (c % (8 * sizeof(unsigned long)))) & 1;
		if (on && first < 0)
			first = (int)c;
		if (!on && first >= 0 && used < len) {
			int k = (int)c - 1 == first ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", first)
				: snprintf(buf + used, len - used, "%s%d-%u", used ? "," : "", first, c - 1);
			if (k > 0)
				used += (size_t)k < len - used ? (size_t)k : len - used - 1;
			first = -1;
		}
	}
}

/*
 * Topology of GPU @gpu (topo.c): the common ancestor and P2P status with
 * every other GPU, where each NVLink ends and its version, CPU affinity and
 * NUMA node.  Read once at open, with the static facts.
 */
static int real_read_topo(struct nvml *n, unsigned gpu, struct nvml_raws *out)
{
	struct real *rl = n->priv;
	struct nvml_api *a = &rl->api;
	nvmlDevice_t d = rl->gpu[gpu].dev;
	struct nvml_raw *r;
	nvmlReturn_t ret;

	for (unsigned j = 0; j < rl->ngpus && j < NVML_TOPO_MAX; j++) {
		int lv = 0;
		if (j == gpu)
			continue;
		ret = a->topo_ancestor ? a->topo_ancestor(d, rl->gpu[j].dev, &lv) : MISSING;
		r = nvml_raws_add(out, NVC_TOPO_ANCESTOR, j, ret);
		r->nval = 1;
		r->val[0] = lv;
		for (int cap = 0; cap < 3; cap++) {
			int st = 0;
			ret = a->p2p_status ? a->p2p_status(d, rl->gpu[j].dev, cap, &st) : MISSING;
			r = nvml_raws_add(out, NVC_P2P_STATUS, j * 16 + (unsigned)cap, ret);
			r->nval = 1;
			r->val[0] = st;
		}
	}
	for (unsigned l = 0; l < rl->gpu[gpu].nvlinks && l < NVML_TOPO_LINKS; l++) {
		struct gs_pci_info pci;
		unsigned v = 0;
		memset(&pci, 0, sizeof(pci));
		ret = a->nvlink_remote_pci ? a->nvlink_remote_pci(d, l, &pci) : MISSING;
		r = nvml_raws_add(out, NVC_NVLINK_REMOTE_PCI, l, ret);
		pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
		snprintf(r->str, sizeof(r->str), "%s", pci.bus_id);
		ret = a->nvlink_version ? a->nvlink_version(d, l, &v) : MISSING;
		r = nvml_raws_add(out, NVC_NVLINK_VERSION, l, ret);
		r->nval = 1;
		r->val[0] = v;
		{
			int type = 0;
			ret = a->nvlink_remote_type ? a->nvlink_remote_type(d, l, &type) : MISSING;
			r = nvml_raws_add(out, NVC_NVLINK_REMOTE_TYPE, l, ret);
			r->nval = 1;
			r->val[0] = type;
		}
	}
	{
		unsigned long mask[16];
		memset(mask, 0, sizeof(mask));
		ret = a->cpu_affinity ? a->cpu_affinity(d, 16, mask) : MISSING;
		r = nvml_raws_add(out, NVC_CPU_AFFINITY, 0, ret);
		if (ret == NVML_OK)
			cpu_list(mask, 16, r->str, sizeof(r->str));
	}
	{
		unsigned node = 0;
		ret = a->numa_node ? a->numa_node(d, &node) : MISSING;
		if (ret != NVML_OK && a->memory_affinity) {
			/* older drivers: the lowest node of the GPU's memory affinity (scope NODE = 0) */
			unsigned long nodes[4] = { 0, 0, 0, 0 };
			ret = a->memory_affinity(d, 4, nodes, 0);
			for (node = 0; ret == NVML_OK && node < 256; node++)
				if ((nodes[node / (8 * sizeof(unsigned long))] >> (node % (8 * sizeof(unsigned long)))) & 1)
					break;
			if (node == 256)
				ret = NVML_ERR_NOT_SUPPORTED;
		}
		r = nvml_raws_add(out, NVC_NUMA_NODE, 0, ret);
		r->nval = 1;
		r->val[0] = node;
	}
	return 0;
}

static const unsigned gpm_ids[] = { 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 20, 21, 60, 61 };

/* GPM metrics between the previous GPM sample and now (>= 100 ms apart). */
static int read_gpm(struct nvml_api *a, struct real_gpu *g, struct nvml_raws *out)
{
	uint64_t now = now_mono_ns();
	nvmlReturn_t ret;

	if (!g->gpm)
		return 0;
	if (!g->gpm_prev) {
		if (a->gpm_alloc(&g->gpm_prev) != NVML_OK || a->gpm_alloc(&g->gpm_cur) != NVML_OK) {
			g->gpm = 0;
			return 0;
		}
		g->mg = xcalloc(1, sizeof(*g->mg));
	}
	if (!g->gpm_prev_ns) {
		/* first use: two samples 100 ms apart, the shortest NVML allows */
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		if (a->gpm_get(g->dev, g->gpm_prev) != NVML_OK) {
			g->gpm = 0;
			return 0;
		}
		nanosleep(&ts, NULL);
		now = now_mono_ns();
	} else if (now - g->gpm_prev_ns < 100ull * 1000 * 1000) {
		return 0; /* too soon: the metrics would be noise */
	}
	ret = a->gpm_get(g->dev, g->gpm_cur);
	if (ret == NVML_OK) {
		memset(g->mg, 0, offsetof(struct gs_gpm_metrics_get, metrics) +
				 ARRAY_SIZE(gpm_ids) * sizeof(g->mg->metrics[0]));
		g->mg->version = 1;
		g->mg->num_metrics = ARRAY_SIZE(gpm_ids);
		g->mg->sample1 = g->gpm_prev;
		g->mg->sample2 = g->gpm_cur;
		for (size_t i = 0; i < ARRAY_SIZE(gpm_ids); i++)
			g->mg->metrics[i].metric_id = gpm_ids[i];
		ret = a->gpm_metrics(g->mg);
	}
	for (size_t i = 0; i < ARRAY_SIZE(gpm_ids); i++) {
		struct nvml_raw *r;
		r = nvml_raws_add(out, NVC_GPM, gpm_ids[i], ret ? ret : g->mg->metrics[i].ret);
		r->nval = 1;
		r->val[0] = ret ? 0 : g->mg->metrics[i].value;
	}
	if (ret == NVML_OK) {
		nvmlGpmSample_t t = g->gpm_prev;
		g->gpm_prev = g->gpm_cur;
		g->gpm_cur = t;
		g->gpm_prev_ns = now;
	} else {
		g->gpm_prev_ns = 0;
	}
	return 1;
}

static void read_field(struct nvml_api *a, nvmlDevice_t d, unsigned id, unsigned scope,
		       struct nvml_raws *out)
{
	struct gs_field_value fv;
	struct nvml_raw *r;
	nvmlReturn_t ret;
	double v = 0;

	memset(&fv, 0, sizeof(fv));
	fv.field_id = id;
	fv.scope_id = scope;
	ret = a->field_values ? a->field_values(d, 1, &fv) : MISSING;
	if (ret == NVML_OK)
		ret = fv.ret;
	if (ret == NVML_OK) {
		switch (fv.value_type) {
		case 0: v = fv.value.d; break;
		case 1: v = fv.value.ui; break;
		case 2: v = (double)fv.value.ul; break;
		case 3: v = (double)fv.value.ull; break;
		case 4: v = (double)fv.value.sll; break;
		case 5: v = fv.value.si; break;
		case 6: v = fv.value.us; break;
		default: ret = NVML_ERR_NOT_SUPPORTED; break;
		}
	}
	r = nvml_raws_add(out, NVC_FIELD, id, ret);
	r->nval = 1;
	r->val[0] = v;
}

/*
 * Reads are made in groups, one per NVML call (or pair of calls).  Each
 * group's CPU cost is measured (thread CPU time, an exponential average), so
 * that under a CPU budget (nvml_set_budget) expensive groups are read less
 * often than the caller's rate: see plan_rates().
 */
enum read_group {
	G_UTIL, G_MEMORY, G_SM_CLOCK, G_MEM_CLOCK, G_POWER, G_ENERGY, G_TEMP, G_MEM_TEMP, G_FAN,
	G_PSTATE, G_REASONS, G_ENC, G_DEC, G_GPM,
	G_PCIE_LINK, G_PCIE_TPUT, G_PCIE_REPLAY, G_ECC, G_REMAP, G_PERSIST, G_PLIMIT, G_PROCS,
	G_NVLINK,
	G__COUNT
};
#define G_FIRST_SLOW G_PCIE_LINK
_Static_assert(G__COUNT == 23, "struct real_gpu sizes grp[] for enum read_group");

static const char *const group_names[G__COUNT] = {
	"utilization", "memory", "sm_clock", "mem_clock", "power", "energy", "temperature",
	"mem_temperature", "fan", "pstate", "clock_events", "encoder", "decoder", "gpm",
	"pcie_link", "pcie_throughput", "pcie_replays", "ecc", "remapped_rows", "persistence",
	"power_limit", "processes", "nvlink",
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns 0 when the group made no NVML call worth measuring (GPM too soon). */
static int read_group(struct nvml_api *a, struct real_gpu *g, unsigned grp, struct nvml_raws *out)
{
	nvmlDevice_t d = g->dev;
	struct nvml_raw *r;
	nvmlReturn_t ret;
	unsigned long long ull = 0;
	unsigned v1 = 0, v2 = 0;
	int i = 0;

	switch (grp) {
	case G_UTIL: {
		struct gs_utilization u = { 0, 0 };
		ret = a->utilization ? a->utilization(d, &u) : MISSING;
		r = nvml_raws_add(out, NVC_UTILIZATION, 0, ret);
		r->nval = 2;
		r->val[0] = u.gpu;
		r->val[1] = u.memory;
		break;
	}
	case G_MEMORY:
		ret = MISSING;
		if (a->memory_v2) {
			struct gs_memory_v2 m;
			memset(&m, 0, sizeof(m));
			m.version = GS_MEMORY_V2_VERSION;
			ret = a->memory_v2(d, &m);
			if (ret == NVML_OK) {
				r = nvml_raws_add(out, NVC_MEMORY, 2, ret);
				r->nval = 4;
				r->val[0] = (double)m.total;
				r->val[1] = (double)m.reserved;
				r->val[2] = (double)m.free;
				r->val[3] = (double)m.used;
			}
		}
		if (ret != NVML_OK) {
			struct gs_memory_v1 m = { 0, 0, 0 };
			ret = a->memory_v1 ? a->memory_v1(d, &m) : MISSING;
			r = nvml_raws_add(out, NVC_MEMORY, 1, ret);
			r->nval = 3;
			r->val[0] = (double)m.total;
			r->val[1] = (double)m.free;
			r->val[2] = (double)m.used;
		}
		break;
	case G_SM_CLOCK:
		READ_U(out, NVC_CLOCK, 1, clock, d, 1);
		break;
	case G_MEM_CLOCK:
		READ_U(out, NVC_CLOCK, 2, clock, d, 2);
		break;
	case G_POWER:
		READ_U(out, NVC_POWER, 0, power, d);
		break;
	case G_ENERGY:
		ret = a->energy ? a->energy(d, &ull) : MISSING;
		r = nvml_raws_add(out, NVC_ENERGY, 0, ret);
		r->nval = 1;
		r->val[0] = (double)ull;
		break;
	case G_TEMP:
		ret = MISSING;
		if (a->temperature_v) {
			struct gs_temperature t = { GS_TEMPERATURE_VERSION, 0, 0 };
			ret = a->temperature_v(d, &t);
			v1 = (unsigned)t.temperature;
		}
		if (ret != NVML_OK && a->temperature)
			ret = a->temperature(d, 0, &v1);
		r = nvml_raws_add(out, NVC_TEMP, 0, ret);
		r->nval = 1;
		r->val[0] = (int)v1;
		break;
	case G_MEM_TEMP:
		read_field(a, d, 82, 0, out); /* NVML_FI_DEV_MEMORY_TEMP */
		break;
	case G_FAN:
		READ_U(out, NVC_FAN, 0, fan, d);
		break;
	case G_PSTATE:
		ret = a->pstate ? a->pstate(d, &i) : MISSING;
		r = nvml_raws_add(out, NVC_PSTATE, 0, ret);
		r->nval = 1;
		r->val[0] = i;
		break;
	case G_REASONS:
		ret = a->event_reasons ? a->event_reasons(d, &ull) : MISSING;
		r = nvml_raws_add(out, NVC_EVENT_REASONS, 0, ret);
		r->nval = 1;
		r->val[0] = (double)ull;
		break;
	case G_ENC:
		ret = a->enc_util ? a->enc_util(d, &v1, &v2) : MISSING;
		r = nvml_raws_add(out, NVC_ENC_UTIL, 0, ret);
		r->nval = 1;
		r->val[0] = v1;
		break;
	case G_DEC:
		ret = a->dec_util ? a->dec_util(d, &v1, &v2) : MISSING;
		r = nvml_raws_add(out, NVC_DEC_UTIL, 0, ret);
		r->nval = 1;
		r->val[0] = v1;
		break;
	case G_GPM:
		return read_gpm(a, g, out);
	case G_PCIE_LINK:
		READ_U(out, NVC_PCIE_GEN, 0, pcie_gen, d);
		READ_U(out, NVC_PCIE_WIDTH, 0, pcie_width, d);
		break;
	case G_PCIE_TPUT:
		READ_U(out, NVC_PCIE_TPUT, 0, pcie_tput, d, 0);
		READ_U(out, NVC_PCIE_TPUT, 1, pcie_tput, d, 1);
		break;
	case G_PCIE_REPLAY:
		READ_U(out, NVC_PCIE_REPLAY, 0, pcie_replay, d);
		break;
	case G_ECC:
		for (unsigned k = 0; k < 4; k++) {
			/* arg = error type (0 corrected, 1 uncorrected) * 2 + counter (0 volatile, 1 aggregate) */
			unsigned long long cnt = 0;
			ret = a->ecc_errors ? a->ecc_errors(d, (int)(k / 2), (int)(k % 2), &cnt) : MISSING;
			r = nvml_raws_add(out, NVC_ECC_ERRORS, k, ret);
			r->nval = 1;
			r->val[0] = (double)cnt;
		}
		break;
	case G_REMAP: {
		unsigned c = 0, u = 0, p = 0, f = 0;
		ret = a->remapped_rows ? a->remapped_rows(d, &c, &u, &p, &f) : MISSING;
		r = nvml_raws_add(out, NVC_REMAPPED_ROWS, 0, ret);
		r->nval = 4;
		r->val[0] = c;
		r->val[1] = u;
		r->val[2] = p;
		r->val[3] = f;
		break;
	}
	case G_PERSIST:
		ret = a->persistence ? a->persistence(d, &i) : MISSING;
		r = nvml_raws_add(out, NVC_PERSISTENCE, 0, ret);
		r->nval = 1;
		r->val[0] = i;
		break;
	case G_PLIMIT:
		READ_U(out, NVC_POWER_LIMIT, 0, power_limit, d);
		break;
	case G_PROCS: {
		struct gs_process_info p[NVML_MAX_PROCS + 8];
		unsigned cnt = ARRAY_SIZE(p);
		memset(p, 0, sizeof(p));
		ret = a->processes ? a->processes(d, &cnt, p) : MISSING;
		r = nvml_raws_add(out, NVC_PROCESSES, 0, ret);
		r->nval = 1;
		r->val[0] = ret ? 0 : cnt;
		for (unsigned k = 0; ret == NVML_OK && k < cnt && k < NVML_MAX_PROCS; k++) {
			r = nvml_raws_add(out, NVC_PROCESS, k, 0);
			r->nval = 2;
			r->val[0] = p[k].pid;
			/* NVML_VALUE_NOT_AVAILABLE (all ones) = unknown, kept as -1 */
			r->val[1] = p[k].used_gpu_memory == ~0ull ? -1 : (double)p[k].used_gpu_memory;
		}
		break;
	}
	case G_NVLINK:
		if (!g->nvlinks)
			return 0;
		for (unsigned l = 0; l < g->nvlinks; l++) {
			int st = 0;
			ret = a->nvlink_state(d, l, &st);
			r = nvml_raws_add(out, NVC_NVLINK_STATE, l, ret);
			r->nval = 1;
			r->val[0] = st;
		}
		read_field(a, d, 138, UINT_MAX, out);
		read_field(a, d, 139, UINT_MAX, out);
		break;
	default:
		break;
	}
	return 1;
}

/* Share the CPU budget among the read groups of all GPUs (nvml_fair_rates). */
static void plan_rates(struct real *rl, double budget, unsigned hz)
{
	size_t n = (size_t)rl->ngpus * G__COUNT, k = 0;
	struct group_state **items = xcalloc(n, sizeof(*items));
	double *cost = xcalloc(n, sizeof(*cost)), *base = xcalloc(n, sizeof(*base));
	double *rate = xcalloc(n, sizeof(*rate));

	for (unsigned i = 0; i < rl->ngpus; i++)
		for (unsigned grp = 0; grp < G__COUNT; grp++) {
			struct group_state *st = &rl->gpu[i].grp[grp];
			/* FAST groups at the caller's rate, SLOW ones once a second */
			st->base_hz = grp < G_FIRST_SLOW ? hz : 1;
			st->rate_hz = st->base_hz;
			if (st->calls && st->cost_ns > 0) {
				items[k] = st;
				cost[k] = st->cost_ns / 1e9;
				base[k] = st->base_hz;
				k++;
			}
		}
	nvml_fair_rates(cost, base, rate, k, budget);
	for (size_t i = 0; i < k; i++)
		items[i]->rate_hz = rate[i];
	free(items);
	free(cost);
	free(base);
	free(rate);
}

static int real_read_tick(struct nvml *n, unsigned gpu, unsigned tiers, struct nvml_raws *out,
			  uint64_t *time_ns, uint64_t *mono_ns)
{
	struct real *rl = n->priv;
	struct nvml_api *a = &rl->api;
	struct real_gpu *g = &rl->gpu[gpu];
	uint64_t now = now_mono_ns();

	*time_ns = now_realtime_ns();
	*mono_ns = now;
	for (unsigned grp = 0; grp < G__COUNT; grp++) {
		struct group_state *st = &g->grp[grp];
		unsigned tier = grp < G_FIRST_SLOW ? NVML_TIER_FAST : NVML_TIER_SLOW;
		int measure;
		uint64_t t0 = 0;

		if (!(tiers & tier))
			continue;
		if (n->cpu_budget > 0 && st->calls && st->rate_hz > 0 && st->rate_hz < st->base_hz) {
			/* due after 1/rate, less half a base period of scheduling jitter */
			double gap = 1e9 / st->rate_hz - 0.5e9 / st->base_hz;
			if ((double)(now - st->last_ns) < gap)
				continue;
		}
		/* measure the first calls, then one in eight: the clock read costs too */
		measure = n->cpu_budget > 0 || st->calls < 4 || st->calls % 8 == 0;
		if (measure)
			t0 = thread_cpu_ns();
		if (!read_group(a, g, grp, out))
			continue;
		if (measure) {
			double c = (double)(thread_cpu_ns() - t0);
			st->cost_ns = st->samples ? 0.8 * st->cost_ns + 0.2 * c : c;
			st->samples++;
		}
		st->calls++;
		st->last_ns = now;
	}
	if (n->cpu_budget > 0 && (!rl->planned_ns || now - rl->planned_ns >= 1000000000ull)) {
		plan_rates(rl, n->cpu_budget, n->budget_hz);
		rl->planned_ns = now;
	}
	return 0;
}

static void real_costs(struct nvml *n, struct strbuf *sb)
{
	struct real *rl = n->priv;

	strbuf_addf(sb, "%-4s %-16s %10s %8s %10s\n", "gpu", "group", "cpu_us", "calls", "rate_hz");
	for (unsigned i = 0; i < rl->ngpus; i++)
		for (unsigned grp = 0; grp < G__COUNT; grp++) {
			const struct group_state *st = &rl->gpu[i].grp[grp];
			if (!st->calls)
				continue;
			strbuf_addf(sb, "%-4u %-16s %10.1f %8lu ", i, group_names[grp],
				    st->cost_ns / 1000.0, st->calls);
			if (n->cpu_budget > 0)
				strbuf_addf(sb, "%10.2f\n", st->rate_hz);
			else
				strbuf_addf(sb, "%10s\n", "-");
		}
}

const struct nvml_backend nvml_backend_real = {
	.name = "nvml",
	.open = real_open,
	.close = real_close,
	.read_system = real_read_system,
	.read_static = real_read_static,
	.read_tick = real_read_tick,
	.read_topo = real_read_topo,
	.costs = real_costs,
};
