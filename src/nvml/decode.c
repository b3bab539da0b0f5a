/*
 * decode.c - the metric table, raw-reading names and the decoder that turns
 * raw NVML readings into metrics with validity flags (see nvml.h).
 */
#include "nvml.h"
#include "../util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static const char *const call_names[NVC__COUNT] = {
	[NVC_NONE] = "none",
	[NVC_DRIVER_VERSION] = "SystemGetDriverVersion",
	[NVC_CUDA_VERSION] = "SystemGetCudaDriverVersion",
	[NVC_NVML_VERSION] = "SystemGetNVMLVersion",
	[NVC_DEVICE_COUNT] = "DeviceGetCount",
	[NVC_HOSTNAME] = "gethostname",
	[NVC_NAME] = "DeviceGetName",
	[NVC_UUID] = "DeviceGetUUID",
	[NVC_PCI_INFO] = "DeviceGetPciInfo",
	[NVC_MAX_CLOCK] = "DeviceGetMaxClockInfo",
	[NVC_MAX_PCIE_GEN] = "DeviceGetMaxPcieLinkGeneration",
	[NVC_MAX_PCIE_WIDTH] = "DeviceGetMaxPcieLinkWidth",
	[NVC_TEMP_THRESHOLD] = "DeviceGetTemperatureThreshold",
	[NVC_ECC_MODE] = "DeviceGetEccMode",
	[NVC_CUDA_CC] = "DeviceGetCudaComputeCapability",
	[NVC_BUS_WIDTH] = "DeviceGetMemoryBusWidth",
	[NVC_GPM_SUPPORT] = "GpmQueryDeviceSupport",
	[NVC_MIG_MODE] = "DeviceGetMigMode",
	[NVC_NVLINK_PRESENT] = "DeviceGetNvLinkState.static",
	[NVC_UTILIZATION] = "DeviceGetUtilizationRates",
	[NVC_MEMORY] = "DeviceGetMemoryInfo",
	[NVC_CLOCK] = "DeviceGetClockInfo",
	[NVC_POWER] = "DeviceGetPowerUsage",
	[NVC_TEMP] = "DeviceGetTemperature",
	[NVC_FIELD] = "DeviceGetFieldValues",
	[NVC_FAN] = "DeviceGetFanSpeed",
	[NVC_PSTATE] = "DeviceGetPerformanceState",
	[NVC_EVENT_REASONS] = "DeviceGetCurrentClocksEventReasons",
	[NVC_ENC_UTIL] = "DeviceGetEncoderUtilization",
	[NVC_DEC_UTIL] = "DeviceGetDecoderUtilization",
	[NVC_ENERGY] = "DeviceGetTotalEnergyConsumption",
	[NVC_GPM] = "GpmMetricsGet",
	[NVC_PCIE_GEN] = "DeviceGetCurrPcieLinkGeneration",
	[NVC_PCIE_WIDTH] = "DeviceGetCurrPcieLinkWidth",
	[NVC_PCIE_TPUT] = "DeviceGetPcieThroughput",
	[NVC_PCIE_REPLAY] = "DeviceGetPcieReplayCounter",
	[NVC_ECC_ERRORS] = "DeviceGetTotalEccErrors",
	[NVC_REMAPPED_ROWS] = "DeviceGetRemappedRows",
	[NVC_PERSISTENCE] = "DeviceGetPersistenceMode",
	[NVC_POWER_LIMIT] = "DeviceGetEnforcedPowerLimit",
	[NVC_PROCESSES] = "DeviceGetComputeRunningProcesses",
	[NVC_PROCESS] = "DeviceGetComputeRunningProcesses.entry",
	[NVC_NVLINK_STATE] = "DeviceGetNvLinkState",
	[NVC_TOPO_ANCESTOR] = "DeviceGetTopologyCommonAncestor",
	[NVC_P2P_STATUS] = "DeviceGetP2PStatus",
	[NVC_NVLINK_REMOTE_PCI] = "DeviceGetNvLinkRemotePciInfo",
	[NVC_NVLINK_VERSION] = "DeviceGetNvLinkVersion",
	[NVC_CPU_AFFINITY] = "DeviceGetCpuAffinity",
	[NVC_NUMA_NODE] = "DeviceGetNumaNodeId",
	[NVC_NVLINK_REMOTE_TYPE] = "DeviceGetNvLinkRemoteDeviceType",
};

const char *nvml_call_name(unsigned call)
{
	return call < NVC__COUNT && call_names[call] ? call_names[call] : "unknown";
}

int nvml_call_by_name(const char *name)
{
	for (unsigned i = 1; i < NVC__COUNT; i++)
		if (call_names[i] && !strcmp(call_names[i], name))
			return (int)i;
	return -1;
}

struct nvml_raw *nvml_raws_add(struct nvml_raws *l, unsigned call, unsigned arg, int ret)
{
	struct nvml_raw *r;

	ALLOC_GROW(l->r, l->nr + 1, l->alloc);
	r = &l->r[l->nr++];
	memset(r, 0, sizeof(*r));
	r->call = (uint16_t)call;
	r->arg = arg;
	r->ret = ret;
	return r;
}

void nvml_raws_release(struct nvml_raws *l)
{
	free(l->r);
	l->r = NULL;
	l->nr = l->alloc = 0;
}

#define S NVML_TIER_STATIC
#define F NVML_TIER_FAST
#define L NVML_TIER_SLOW

static const struct nvml_metric_info metrics[NVML_M__COUNT] = {
	[NVML_M_GPU_UTIL] = { "gpu_util", "%", F, "DCGM_FI_DEV_GPU_UTIL", 1, 0,
		"percent of time a kernel ran on the GPU (any kernel, any SM; nvmlDeviceGetUtilizationRates)" },
	[NVML_M_MEM_UTIL] = { "mem_util", "%", F, "DCGM_FI_DEV_MEM_COPY_UTIL", 1, 0,
		"percent of time device memory was read or written (nvmlDeviceGetUtilizationRates)" },
	[NVML_M_ENC_UTIL] = { "enc_util", "%", F, "DCGM_FI_DEV_ENC_UTIL", 1, 0,
		"video encoder utilisation (nvmlDeviceGetEncoderUtilization)" },
	[NVML_M_DEC_UTIL] = { "dec_util", "%", F, "DCGM_FI_DEV_DEC_UTIL", 1, 0,
		"video decoder utilisation (nvmlDeviceGetDecoderUtilization)" },
	[NVML_M_MEM_USED] = { "mem_used_bytes", "bytes", F, "DCGM_FI_DEV_FB_USED", 1 / MIB, 0,
		"device memory used, MiB, excluding reserved memory as nvidia-smi (nvmlDeviceGetMemoryInfo_v2)" },
	[NVML_M_MEM_FREE] = { "mem_free_bytes", "bytes", F, "DCGM_FI_DEV_FB_FREE", 1 / MIB, 0,
		"device memory free, MiB (nvmlDeviceGetMemoryInfo_v2)" },
	[NVML_M_MEM_RESERVED] = { "mem_reserved_bytes", "bytes", F, "DCGM_FI_DEV_FB_RESERVED", 1 / MIB, 0,
		"device memory reserved by the driver, MiB (nvmlDeviceGetMemoryInfo_v2)" },
	[NVML_M_MEM_TOTAL] = { "mem_total_bytes", "bytes", F, "DCGM_FI_DEV_FB_TOTAL", 1 / MIB, 0,
		"device memory total, MiB (nvmlDeviceGetMemoryInfo_v2)" },
	[NVML_M_SM_CLOCK] = { "sm_clock_mhz", "MHz", F, "DCGM_FI_DEV_SM_CLOCK", 1, 0,
		"SM clock, MHz (nvmlDeviceGetClockInfo SM)" },
	[NVML_M_MEM_CLOCK] = { "mem_clock_mhz", "MHz", F, "DCGM_FI_DEV_MEM_CLOCK", 1, 0,
		"memory clock, MHz (nvmlDeviceGetClockInfo MEM)" },
	[NVML_M_SM_CLOCK_MAX] = { "sm_clock_max_mhz", "MHz", S, "DCGM_FI_DEV_MAX_SM_CLOCK", 1, 0,
		"maximum SM clock, MHz (nvmlDeviceGetMaxClockInfo SM)" },
	[NVML_M_MEM_CLOCK_MAX] = { "mem_clock_max_mhz", "MHz", S, "DCGM_FI_DEV_MAX_MEM_CLOCK", 1, 0,
		"maximum memory clock, MHz (nvmlDeviceGetMaxClockInfo MEM)" },
	[NVML_M_POWER] = { "power_w", "W", F, "DCGM_FI_DEV_POWER_USAGE", 1, 0,
		"board power draw, W (nvmlDeviceGetPowerUsage)" },
	[NVML_M_POWER_LIMIT] = { "power_limit_w", "W", L, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 1, 0,
		"enforced power limit, W (nvmlDeviceGetEnforcedPowerLimit)" },
	[NVML_M_ENERGY] = { "energy_j", "J", F, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 1000, 1,
		"energy since the driver loaded, mJ (nvmlDeviceGetTotalEnergyConsumption)" },
	[NVML_M_TEMP] = { "temp_c", "C", F, "DCGM_FI_DEV_GPU_TEMP", 1, 0,
		"GPU temperature, C (nvmlDeviceGetTemperature GPU)" },
	[NVML_M_MEM_TEMP] = { "mem_temp_c", "C", F, "DCGM_FI_DEV_MEMORY_TEMP", 1, 0,
		"memory (HBM) temperature, C (nvmlDeviceGetFieldValues 82)" },
	[NVML_M_TEMP_SLOWDOWN] = { "temp_slowdown_c", "C", S, "DCGM_FI_DEV_SLOWDOWN_TEMP", 1, 0,
		"temperature at which the GPU slows down, C (nvmlDeviceGetTemperatureThreshold)" },
	[NVML_M_TEMP_SHUTDOWN] = { "temp_shutdown_c", "C", S, "DCGM_FI_DEV_SHUTDOWN_TEMP", 1, 0,
		"temperature at which the GPU shuts down, C (nvmlDeviceGetTemperatureThreshold)" },
	[NVML_M_FAN] = { "fan_pct", "%", F, "DCGM_FI_DEV_FAN_SPEED", 1, 0,
		"fan speed, percent of maximum (nvmlDeviceGetFanSpeed)" },
	[NVML_M_PSTATE] = { "pstate", "", F, "DCGM_FI_DEV_PSTATE", 1, 0,
		"performance state, 0 = P0 (nvmlDeviceGetPerformanceState)" },
	[NVML_M_THROTTLE] = { "throttle_reasons", "mask", F, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", 1, 0,
		"clock-event (throttle) reason bits (nvmlDeviceGetCurrentClocksEventReasons)" },
	[NVML_M_PCIE_TX] = { "pcie_tx_bytes_s", "bytes/s", L, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", 1 / 1024.0, 0,
		"PCIe transmit (GPU to host) throughput over 20 ms, KB/s (nvmlDeviceGetPcieThroughput)" },
	[NVML_M_PCIE_RX] = { "pcie_rx_bytes_s", "bytes/s", L, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", 1 / 1024.0, 0,
		"PCIe receive (host to GPU) throughput over 20 ms, KB/s (nvmlDeviceGetPcieThroughput)" },
	[NVML_M_PCIE_GEN] = { "pcie_link_gen", "", L, "DCGM_FI_DEV_PCIE_LINK_GEN", 1, 0,
		"current PCIe link generation (nvmlDeviceGetCurrPcieLinkGeneration)" },
	[NVML_M_PCIE_WIDTH] = { "pcie_link_width", "", L, "DCGM_FI_DEV_PCIE_LINK_WIDTH", 1, 0,
		"current PCIe link width, lanes (nvmlDeviceGetCurrPcieLinkWidth)" },
	[NVML_M_PCIE_GEN_MAX] = { "pcie_link_gen_max", "", S, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", 1, 0,
		"maximum PCIe link generation of GPU and system (nvmlDeviceGetMaxPcieLinkGeneration)" },
	[NVML_M_PCIE_WIDTH_MAX] = { "pcie_link_width_max", "", S, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", 1, 0,
		"maximum PCIe link width, lanes (nvmlDeviceGetMaxPcieLinkWidth)" },
	[NVML_M_PCIE_REPLAY] = { "pcie_replays", "", L, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 1, 1,
		"PCIe replays since reset (nvmlDeviceGetPcieReplayCounter)" },
	[NVML_M_ECC_SBE_VOL] = { "ecc_sbe_volatile", "", L, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 1, 1,
		"corrected ECC errors since the driver loaded (nvmlDeviceGetTotalEccErrors)" },
	[NVML_M_ECC_DBE_VOL] = { "ecc_dbe_volatile", "", L, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1, 1,
		"uncorrected ECC errors since the driver loaded (nvmlDeviceGetTotalEccErrors)" },
	[NVML_M_ECC_SBE_AGG] = { "ecc_sbe_aggregate", "", L, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", 1, 1,
		"corrected ECC errors over the GPU's life (nvmlDeviceGetTotalEccErrors)" },
	[NVML_M_ECC_DBE_AGG] = { "ecc_dbe_aggregate", "", L, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", 1, 1,
		"uncorrected ECC errors over the GPU's life (nvmlDeviceGetTotalEccErrors)" },
	[NVML_M_REMAP_CORR] = { "remapped_rows_correctable", "", L, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 1, 0,
		"rows remapped after correctable errors (nvmlDeviceGetRemappedRows)" },
	[NVML_M_REMAP_UNC] = { "remapped_rows_uncorrectable", "", L, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 1, 0,
		"rows remapped after uncorrectable errors (nvmlDeviceGetRemappedRows)" },
	[NVML_M_REMAP_PENDING] = { "remap_pending", "", L, "DCGM_FI_DEV_ROW_REMAP_PENDING", 1, 0,
		"1 when a row remap waits for a GPU reset (nvmlDeviceGetRemappedRows)" },
	[NVML_M_REMAP_FAILED] = { "remap_failure", "", L, "DCGM_FI_DEV_ROW_REMAP_FAILURE", 1, 0,
		"1 when a row remap failed (nvmlDeviceGetRemappedRows)" },
	[NVML_M_NVLINK_LINKS] = { "nvlink_links", "", S, NULL, 1, 0,
		"NVLink links present (nvmlDeviceGetNvLinkState answers)" },
	[NVML_M_NVLINK_UP] = { "nvlink_links_up", "", L, NULL, 1, 0,
		"NVLink links active (nvmlDeviceGetNvLinkState)" },
	[NVML_M_NVLINK_TX] = { "nvlink_tx_bytes_s", "bytes/s", L, NULL, 1, 0,
		"NVLink data transmitted, all links, bytes/s (field 138, rate between readings)" },
	[NVML_M_NVLINK_RX] = { "nvlink_rx_bytes_s", "bytes/s", L, NULL, 1, 0,
		"NVLink data received, all links, bytes/s (field 139, rate between readings)" },
	[NVML_M_PERSISTENCE] = { "persistence_mode", "", L, NULL, 1, 0,
		"1 when persistence mode is on (nvmlDeviceGetPersistenceMode)" },
	[NVML_M_NUMA_NODE] = { "numa_node", "", S, NULL, 1, 0,
		"NUMA node the GPU is attached to (nvmlDeviceGetNumaNodeId, else the node of its CPU affinity)" },
	[NVML_M_PROCESSES] = { "processes", "", L, NULL, 1, 0,
		"compute processes on the GPU (nvmlDeviceGetComputeRunningProcesses)" },
	[NVML_M_GPM_GR] = { "gpm_gr_active", "%", F, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.01, 0,
		"graphics/compute engine active, ratio (GPM GRAPHICS_UTIL)" },
	[NVML_M_GPM_SM] = { "gpm_sm_active", "%", F, "DCGM_FI_PROF_SM_ACTIVE", 0.01, 0,
		"cycles an SM has a warp resident, averaged over SMs, ratio (GPM SM_UTIL)" },
	[NVML_M_GPM_OCC] = { "gpm_sm_occupancy", "%", F, "DCGM_FI_PROF_SM_OCCUPANCY", 0.01, 0,
		"resident warps over the maximum, ratio (GPM SM_OCCUPANCY)" },
	[NVML_M_GPM_TENSOR] = { "gpm_tensor_active", "%", F, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0.01, 0,
		"any tensor pipe active, ratio (GPM ANY_TENSOR_UTIL)" },
	[NVML_M_GPM_HMMA] = { "gpm_hmma_active", "%", F, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", 0.01, 0,
		"half-precision tensor pipe active, ratio (GPM HMMA_TENSOR_UTIL)" },
	[NVML_M_GPM_IMMA] = { "gpm_imma_active", "%", F, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", 0.01, 0,
		"integer tensor pipe active, ratio (GPM IMMA_TENSOR_UTIL)" },
	[NVML_M_GPM_DFMA] = { "gpm_dfma_active", "%", F, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", 0.01, 0,
		"FP64 tensor pipe active, ratio (GPM DFMA_TENSOR_UTIL)" },
	[NVML_M_GPM_DRAM] = { "gpm_dram_bw_util", "%", F, "DCGM_FI_PROF_DRAM_ACTIVE", 0.01, 0,
		"memory interface busy, ratio of peak bandwidth (GPM DRAM_BW_UTIL)" },
	[NVML_M_GPM_FP64] = { "gpm_fp64_active", "%", F, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", 0.01, 0,
		"FP64 pipe active, ratio (GPM FP64_UTIL)" },
	[NVML_M_GPM_FP32] = { "gpm_fp32_active", "%", F, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", 0.01, 0,
		"FP32 pipe active, ratio (GPM FP32_UTIL)" },
	[NVML_M_GPM_FP16] = { "gpm_fp16_active", "%", F, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", 0.01, 0,
		"FP16 pipe active (not tensor), ratio (GPM FP16_UTIL)" },
	[NVML_M_GPM_INT] = { "gpm_int_active", "%", F, "DCGM_FI_PROF_PIPE_INT_ACTIVE", 0.01, 0,
		"integer pipe active, ratio (GPM INTEGER_UTIL)" },
	[NVML_M_GPM_PCIE_TX] = { "gpm_pcie_tx_bytes_s", "bytes/s", F, "DCGM_FI_PROF_PCIE_TX_BYTES", 1, 0,
		"PCIe bytes sent by the GPU per second (GPM PCIE_TX_PER_SEC)" },
	[NVML_M_GPM_PCIE_RX] = { "gpm_pcie_rx_bytes_s", "bytes/s", F, "DCGM_FI_PROF_PCIE_RX_BYTES", 1, 0,
		"PCIe bytes received by the GPU per second (GPM PCIE_RX_PER_SEC)" },
	[NVML_M_GPM_NVLINK_TX] = { "gpm_nvlink_tx_bytes_s", "bytes/s", F, "DCGM_FI_PROF_NVLINK_TX_BYTES", 1, 0,
		"NVLink bytes sent per second, all links (GPM NVLINK_TOTAL_TX_PER_SEC)" },
	[NVML_M_GPM_NVLINK_RX] = { "gpm_nvlink_rx_bytes_s", "bytes/s", F, "DCGM_FI_PROF_NVLINK_RX_BYTES", 1, 0,
		"NVLink bytes received per second, all links (GPM NVLINK_TOTAL_RX_PER_SEC)" },
};

#undef S
#undef F
#undef L

const struct nvml_metric_info *nvml_metric_info(unsigned m)
{
	if (m >= NVML_M__COUNT)
		BUG("metric %u out of range", m);
	return &metrics[m];
}

int nvml_metric_by_name(const char *name)
{
	for (unsigned i = 0; i < NVML_M__COUNT; i++)
		if (!strcmp(metrics[i].name, name))
			return (int)i;
	return -1;
}

static const char *const throttle_names[NVML_THROTTLE_BITS] = {
	"gpu_idle",                /* 0x1 */
	"applications_clocks",     /* 0x2 */
	"sw_power_cap",            /* 0x4 */
	"hw_slowdown",             /* 0x8 */
	"sync_boost",              /* 0x10 */
	"sw_thermal_slowdown",     /* 0x20 */
	"hw_thermal_slowdown",     /* 0x40 */
	"hw_power_brake_slowdown", /* 0x80 */
	"display_clock_setting",   /* 0x100 */
};

const char *nvml_throttle_name(unsigned bit)
{
	return bit < NVML_THROTTLE_BITS ? throttle_names[bit] : NULL;
}

uint64_t nvml_throttle_by_name(const char *name)
{
	for (unsigned i = 0; i < NVML_THROTTLE_BITS; i++)
		if (!strcmp(throttle_names[i], name))
			return 1ull << i;
	return 0;
}

void nvml_throttle_format(uint64_t mask, const char *sep, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!mask) {
		snprintf(buf, len, "none");
		return;
	}
	for (unsigned i = 0; i < 64; i++) {
		char unknown[24];
		const char *name;
		int n;

		if (!(mask & (1ull << i)))
			continue;
		name = nvml_throttle_name(i);
		if (!name) {
			snprintf(unknown, sizeof(unknown), "bit%u", i);
			name = unknown;
		}
		n = snprintf(buf + off, len - off, "%s%s", off ? sep : "", name);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += (size_t)n;
	}
}

static void set(struct nvml_sample *s, unsigned m, double v)
{
	if (!isfinite(v))
		return;
	s->v[m] = v;
	s->valid[m] = 1;
}

/* GPM metric id (nvmlGpmMetricId_t) -> our metric and scale to our unit. */
static const struct { unsigned id, metric; double scale; } gpm_map[] = {
	{ 1, NVML_M_GPM_GR, 1 },   { 2, NVML_M_GPM_SM, 1 },    { 3, NVML_M_GPM_OCC, 1 },
	{ 4, NVML_M_GPM_INT, 1 },  { 5, NVML_M_GPM_TENSOR, 1 }, { 6, NVML_M_GPM_DFMA, 1 },
	{ 7, NVML_M_GPM_HMMA, 1 }, { 9, NVML_M_GPM_IMMA, 1 },  { 10, NVML_M_GPM_DRAM, 1 },
	{ 11, NVML_M_GPM_FP64, 1 }, { 12, NVML_M_GPM_FP32, 1 }, { 13, NVML_M_GPM_FP16, 1 },
	{ 20, NVML_M_GPM_PCIE_TX, MIB }, { 21, NVML_M_GPM_PCIE_RX, MIB },
	{ 60, NVML_M_GPM_NVLINK_RX, MIB }, { 61, NVML_M_GPM_NVLINK_TX, MIB },
};

static void decode_one(const struct nvml_raw *r, struct nvml_sample *s,
		       struct nvml_gpu_info *info, struct nvml_gpu_state *st, uint64_t mono_ns)
{
	const double *v = r->val;

	if (r->ret != 0)
		return;
	switch (r->call) {
	case NVC_NAME:
		if (info)
			snprintf(info->name, sizeof(info->name), "%s", r->str);
		break;
	case NVC_UUID:
		if (info)
			snprintf(info->uuid, sizeof(info->uuid), "%s", r->str);
		break;
	case NVC_PCI_INFO:
		if (info && r->nval >= 3) {
			snprintf(info->bus_id, sizeof(info->bus_id), "%s", r->str);
			info->pci_domain = dbl_u32(v[0]);
			info->pci_bus = dbl_u32(v[1]);
			info->pci_device = dbl_u32(v[2]);
		}
		break;
	case NVC_CUDA_CC:
		if (info && r->nval >= 2) {
			info->cc_major = dbl_int(v[0]);
			info->cc_minor = dbl_int(v[1]);
		}
		break;
	case NVC_BUS_WIDTH:
		if (info)
			info->bus_width = dbl_int(v[0]);
		break;
	case NVC_ECC_MODE:
		if (info)
			info->ecc_enabled = v[0] != 0;
		break;
	case NVC_MIG_MODE:
		if (info)
			info->mig_enabled = v[0] != 0;
		break;
	case NVC_GPM_SUPPORT:
		if (info)
			info->gpm_supported = v[0] != 0;
		break;
	case NVC_NVLINK_PRESENT:
		set(s, NVML_M_NVLINK_LINKS, v[0]);
		break;
	case NVC_MAX_CLOCK:
		if (r->arg == 1)
			set(s, NVML_M_SM_CLOCK_MAX, v[0]);
		else if (r->arg == 2)
			set(s, NVML_M_MEM_CLOCK_MAX, v[0]);
		break;
	case NVC_MAX_PCIE_GEN:
		set(s, NVML_M_PCIE_GEN_MAX, v[0]);
		break;
	case NVC_MAX_PCIE_WIDTH:
		set(s, NVML_M_PCIE_WIDTH_MAX, v[0]);
		break;
	case NVC_TEMP_THRESHOLD:
		if (r->arg == 0)
			set(s, NVML_M_TEMP_SHUTDOWN, v[0]);
		else if (r->arg == 1)
			set(s, NVML_M_TEMP_SLOWDOWN, v[0]);
		break;
	case NVC_UTILIZATION:
		if (r->nval >= 2) {
			set(s, NVML_M_GPU_UTIL, v[0]);
			set(s, NVML_M_MEM_UTIL, v[1]);
		}
		break;
	case NVC_MEMORY:
		if (r->nval == 4) { /* v2: total, reserved, free, used */
			set(s, NVML_M_MEM_TOTAL, v[0]);
			set(s, NVML_M_MEM_RESERVED, v[1]);
			set(s, NVML_M_MEM_FREE, v[2]);
			set(s, NVML_M_MEM_USED, v[3]);
		} else if (r->nval == 3) { /* v1: total, free, used (used includes reserved) */
			set(s, NVML_M_MEM_TOTAL, v[0]);
			set(s, NVML_M_MEM_FREE, v[1]);
			set(s, NVML_M_MEM_USED, v[2]);
		}
		/* unified-memory parts report a zero total: unknown, not empty */
		if (s->valid[NVML_M_MEM_TOTAL] && s->v[NVML_M_MEM_TOTAL] == 0) {
			s->valid[NVML_M_MEM_TOTAL] = s->valid[NVML_M_MEM_USED] = 0;
			s->valid[NVML_M_MEM_FREE] = s->valid[NVML_M_MEM_RESERVED] = 0;
		}
		break;
	case NVC_CLOCK:
		if (r->arg == 1)
			set(s, NVML_M_SM_CLOCK, v[0]);
		else if (r->arg == 2)
			set(s, NVML_M_MEM_CLOCK, v[0]);
		break;
	case NVC_POWER:
		set(s, NVML_M_POWER, v[0] / 1000.0);
		break;
	case NVC_POWER_LIMIT:
		set(s, NVML_M_POWER_LIMIT, v[0] / 1000.0);
		break;
	case NVC_ENERGY:
		set(s, NVML_M_ENERGY, v[0] / 1000.0);
		break;
	case NVC_TEMP:
		set(s, NVML_M_TEMP, v[0]);
		break;
	case NVC_FIELD:
		if (r->arg == 82)
			set(s, NVML_M_MEM_TEMP, v[0]);
		else if ((r->arg == 138 || r->arg == 139) && st) {
			/* cumulative KiB over all links: a rate needs two readings */
			double *prev = r->arg == 138 ? &st->nvlink_tx_kib : &st->nvlink_rx_kib;
			unsigned m = r->arg == 138 ? NVML_M_NVLINK_TX : NVML_M_NVLINK_RX;
			if (st->nvlink_mono_ns && mono_ns > st->nvlink_mono_ns && v[0] >= *prev)
				set(s, m, (v[0] - *prev) * 1024.0 /
					  ((double)(mono_ns - st->nvlink_mono_ns) / 1e9));
			*prev = v[0];
		}
		break;
	case NVC_FAN:
		set(s, NVML_M_FAN, v[0]);
		break;
	case NVC_PSTATE:
		if (v[0] >= 0 && v[0] <= 15)
			set(s, NVML_M_PSTATE, v[0]);
		break;
	case NVC_EVENT_REASONS:
		set(s, NVML_M_THROTTLE, v[0]);
		break;
	case NVC_ENC_UTIL:
		set(s, NVML_M_ENC_UTIL, v[0]);
		break;
	case NVC_DEC_UTIL:
		set(s, NVML_M_DEC_UTIL, v[0]);
		break;
	case NVC_GPM:
		for (size_t i = 0; i < ARRAY_SIZE(gpm_map); i++)
			if (gpm_map[i].id == r->arg)
				set(s, gpm_map[i].metric, v[0] * gpm_map[i].scale);
		break;
	case NVC_PCIE_GEN:
		set(s, NVML_M_PCIE_GEN, v[0]);
		break;
	case NVC_PCIE_WIDTH:
		set(s, NVML_M_PCIE_WIDTH, v[0]);
		break;
	case NVC_PCIE_TPUT:
		set(s, r->arg == 0 ? NVML_M_PCIE_TX : NVML_M_PCIE_RX, v[0] * 1024.0);
		break;
	case NVC_PCIE_REPLAY:
		set(s, NVML_M_PCIE_REPLAY, v[0]);
		break;
	case NVC_ECC_ERRORS: {
		static const unsigned ecc_metric[4] = { NVML_M_ECC_SBE_VOL, NVML_M_ECC_SBE_AGG,
							NVML_M_ECC_DBE_VOL, NVML_M_ECC_DBE_AGG };
		if (r->arg < 4)
			set(s, ecc_metric[r->arg], v[0]);
		break;
	}
	case NVC_REMAPPED_ROWS:
		if (r->nval >= 4) {
			set(s, NVML_M_REMAP_CORR, v[0]);
			set(s, NVML_M_REMAP_UNC, v[1]);
			set(s, NVML_M_REMAP_PENDING, v[2]);
			set(s, NVML_M_REMAP_FAILED, v[3]);
		}
		break;
	case NVC_PERSISTENCE:
		set(s, NVML_M_PERSISTENCE, v[0]);
		break;
	case NVC_PROCESSES:
		set(s, NVML_M_PROCESSES, v[0]);
		s->nproc = 0;
		break;
	case NVC_PROCESS:
		if (s->nproc < NVML_MAX_PROCS && r->nval >= 2) {
			s->proc[s->nproc].pid = dbl_u32(v[0]);
			s->proc[s->nproc].used_bytes = v[1] < 0 ? UINT64_MAX : dbl_u64(v[1]);
			s->nproc++;
		}
		break;
	case NVC_NVLINK_STATE:
		/* counted below: links up among those answering */
		break;
	case NVC_NUMA_NODE:
		set(s, NVML_M_NUMA_NODE, v[0]);
		if (info)
			nvml_topo_decode(r, &info->topo);
		break;
	case NVC_TOPO_ANCESTOR:
	case NVC_P2P_STATUS:
	case NVC_NVLINK_REMOTE_PCI:
	case NVC_NVLINK_VERSION:
	case NVC_CPU_AFFINITY:
	case NVC_NVLINK_REMOTE_TYPE:
		if (info)
			nvml_topo_decode(r, &info->topo);
		break;
	default:
		break;
	}
}

void nvml_decode(const struct nvml_raw *r, size_t nr, struct nvml_sample *s,
		 struct nvml_gpu_info *info, struct nvml_gpu_state *st)
{
	unsigned links_up = 0, links_seen = 0;
	int nvlink_tput = 0;

	for (size_t i = 0; i < nr; i++) {
		decode_one(&r[i], s, info, st, s->mono_ns);
		if (r[i].call == NVC_NVLINK_STATE && r[i].ret == 0) {
			links_seen++;
			links_up += r[i].val[0] != 0;
		}
		if (r[i].call == NVC_FIELD && (r[i].arg == 138 || r[i].arg == 139) && r[i].ret == 0)
			nvlink_tput = 1;
	}
	/* a GPU without NVLink answers NOT_SUPPORTED for every link: unknown, not 0 */
	if (links_seen)
		set(s, NVML_M_NVLINK_UP, links_up);
	if (nvlink_tput && st)
		st->nvlink_mono_ns = s->mono_ns;
}
