/*
 * nvml.h - GPU readings through NVML (and GPM on Hopper and newer).
 *
 * Layers, bottom up:
 *
 *  1. A backend (struct nvml_backend, as nvtop's gpu_vendor) produces *raw
 *     readings*: one struct nvml_raw per NVML call made, holding the call,
 *     its argument, NVML's return code and the values it returned.  The
 *     "nvml" backend dlopens libnvidia-ml.so.1 (our own declarations of the
 *     few types used, newest symbol versions first); the "replay" backend
 *     feeds raw readings recorded earlier (docs/monitor.md, "Replay format").
 *  2. The decoder turns raw readings into metrics (enum nvml_metric), each
 *     with a validity flag: a reading that failed or is not supported leaves
 *     its metric invalid, printed as "-", never as 0.
 *  3. struct nvml is what callers hold: system facts, per-GPU static facts
 *     and nvml_sample() for a new sample.  A recorder, when set, writes every
 *     raw reading to a replay file.
 *
 * Metrics are read in tiers: STATIC once at open (names, maxima), FAST every
 * sample (utilisation, clocks, power, GPM ...) and SLOW where the caller
 * asks, e.g. once a second in the profile sampler (PCIe link and throughput,
 * ECC, remapped rows, NVLink, processes).  Threads: a struct nvml is used by
 * one thread at a time.
 */
#ifndef GS_NVML_H
#define GS_NVML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strbuf;

/* ---- raw readings ---- */

/* One value per NVML call made (names in nvml_call_name(), used in replay files). */
enum nvml_call {
	NVC_NONE = 0,
	/* system */
	NVC_DRIVER_VERSION, NVC_CUDA_VERSION, NVC_NVML_VERSION, NVC_DEVICE_COUNT, NVC_HOSTNAME,
	/* static, per GPU */
	NVC_NAME, NVC_UUID, NVC_PCI_INFO, NVC_MAX_CLOCK, NVC_MAX_PCIE_GEN, NVC_MAX_PCIE_WIDTH,
	NVC_TEMP_THRESHOLD, NVC_ECC_MODE, NVC_CUDA_CC, NVC_BUS_WIDTH, NVC_GPM_SUPPORT,
	NVC_MIG_MODE, NVC_NVLINK_PRESENT,
	/* fast */
	NVC_UTILIZATION, NVC_MEMORY, NVC_CLOCK, NVC_POWER, NVC_TEMP, NVC_FIELD, NVC_FAN,
	NVC_PSTATE, NVC_EVENT_REASONS, NVC_ENC_UTIL, NVC_DEC_UTIL, NVC_ENERGY, NVC_GPM,
	/* slow */
	NVC_PCIE_GEN, NVC_PCIE_WIDTH, NVC_PCIE_TPUT, NVC_PCIE_REPLAY, NVC_ECC_ERRORS,
	NVC_REMAPPED_ROWS, NVC_PERSISTENCE, NVC_POWER_LIMIT, NVC_PROCESSES, NVC_PROCESS,
	NVC_NVLINK_STATE,
	/*
	 * topology, per GPU, read with the static facts (nvml_call_tier: STATIC):
	 * common ancestor with GPU arg (val[0] nvmlGpuTopologyLevel_t), P2P status
	 * with GPU arg / 16 for capability arg % 16 (0 read, 1 write, 2 NVLink;
	 * val[0] nvmlGpuP2PStatus_t), the PCI bus id at the far end of link arg
	 * (str), NVLink version of link arg (val[0] as NVML returns it), CPU
	 * affinity (str: a CPU list), NUMA node (val[0]), the kind of device at
	 * the far end of link arg (val[0]: 0 GPU, 1 IBM NPU, 2 NVSwitch)
	 */
	NVC_TOPO_ANCESTOR, NVC_P2P_STATUS, NVC_NVLINK_REMOTE_PCI, NVC_NVLINK_VERSION,
	NVC_CPU_AFFINITY, NVC_NUMA_NODE, NVC_NVLINK_REMOTE_TYPE,
	NVC__COUNT
};

#define NVML_RAW_VALUES 4
#define NVML_RAW_STR 96

struct nvml_raw {
	uint16_t call;                 /* enum nvml_call */
	uint16_t nval;                 /* values used in val[] */
	uint32_t arg;                  /* the call's selector (clock type, link, field id ...) */
	int32_t ret;                   /* nvmlReturn_t; 0 = success */
	double val[NVML_RAW_VALUES];
	char str[NVML_RAW_STR];        /* string results ("" when none) */
};

/* A growable list of raw readings; owns r. */
struct nvml_raws {
	struct nvml_raw *r;
	size_t nr, alloc;
};
struct nvml_raw *nvml_raws_add(struct nvml_raws *l, unsigned call, unsigned arg, int ret);
void nvml_raws_release(struct nvml_raws *l);
const char *nvml_call_name(unsigned call);
int nvml_call_by_name(const char *name); /* -1 when unknown */

/* ---- metrics ---- */

enum nvml_tier {
	NVML_TIER_STATIC = 1u << 0,
	NVML_TIER_FAST = 1u << 1,
	NVML_TIER_SLOW = 1u << 2,
};

enum nvml_metric {
	NVML_M_GPU_UTIL, NVML_M_MEM_UTIL, NVML_M_ENC_UTIL, NVML_M_DEC_UTIL,
	NVML_M_MEM_USED, NVML_M_MEM_FREE, NVML_M_MEM_RESERVED, NVML_M_MEM_TOTAL,
	NVML_M_SM_CLOCK, NVML_M_MEM_CLOCK, NVML_M_SM_CLOCK_MAX, NVML_M_MEM_CLOCK_MAX,
	NVML_M_POWER, NVML_M_POWER_LIMIT, NVML_M_ENERGY,
	NVML_M_TEMP, NVML_M_MEM_TEMP, NVML_M_TEMP_SLOWDOWN, NVML_M_TEMP_SHUTDOWN,
	NVML_M_FAN, NVML_M_PSTATE, NVML_M_THROTTLE,
	NVML_M_PCIE_TX, NVML_M_PCIE_RX, NVML_M_PCIE_GEN, NVML_M_PCIE_WIDTH,
	NVML_M_PCIE_GEN_MAX, NVML_M_PCIE_WIDTH_MAX, NVML_M_PCIE_REPLAY,
	NVML_M_ECC_SBE_VOL, NVML_M_ECC_DBE_VOL, NVML_M_ECC_SBE_AGG, NVML_M_ECC_DBE_AGG,
	NVML_M_REMAP_CORR, NVML_M_REMAP_UNC, NVML_M_REMAP_PENDING, NVML_M_REMAP_FAILED,
	NVML_M_NVLINK_LINKS, NVML_M_NVLINK_UP, NVML_M_NVLINK_TX, NVML_M_NVLINK_RX,
	NVML_M_PERSISTENCE, NVML_M_PROCESSES,
	NVML_M_GPM_GR, NVML_M_GPM_SM, NVML_M_GPM_OCC, NVML_M_GPM_TENSOR, NVML_M_GPM_HMMA,
	NVML_M_GPM_IMMA, NVML_M_GPM_DFMA, NVML_M_GPM_DRAM, NVML_M_GPM_FP64, NVML_M_GPM_FP32,
	NVML_M_GPM_FP16, NVML_M_GPM_INT, NVML_M_GPM_PCIE_TX, NVML_M_GPM_PCIE_RX,
	NVML_M_GPM_NVLINK_TX, NVML_M_GPM_NVLINK_RX,
	NVML_M_NUMA_NODE,
	NVML_M__COUNT
};

struct nvml_metric_info {
	const char *name;      /* "gpu_util": the name in reports, JSON, CSV and alerts */
	const char *unit;      /* "%", "bytes", "MHz", "W", "C", "bytes/s", "" */
	unsigned tier;         /* enum nvml_tier */
	const char *dcgm;      /* Prometheus name in dcgm-exporter's scheme, or NULL */
	double dcgm_scale;     /* exported value = value * dcgm_scale (DCGM units) */
	int counter;           /* Prometheus counter rather than gauge */
	const char *help;      /* one line: meaning and source API */
};
const struct nvml_metric_info *nvml_metric_info(unsigned m);
int nvml_metric_by_name(const char *name); /* -1 when unknown */

/* Clock-event ("throttle") reason bits (NVML's nvmlClocksEventReason*). */
#define NVML_THROTTLE_BITS 9
/* Name of bit @bit ("sw_power_cap"), NULL past the end. */
const char *nvml_throttle_name(unsigned bit);
/* Bit mask of a reason name, 0 when unknown. */
uint64_t nvml_throttle_by_name(const char *name);
/* Write the names of the bits in @mask joined by @sep ("none" when 0). */
void nvml_throttle_format(uint64_t mask, const char *sep, char *buf, size_t len);
/* Reasons that mean the GPU is slowed by a limit (not idle, not a clocks setting). */
#define NVML_THROTTLE_SLOWDOWN_MASK 0xfcull

#define NVML_MAX_PROCS 64

struct nvml_process {
	uint32_t pid;
	uint64_t used_bytes;   /* UINT64_MAX when NVML does not know */
};

struct nvml_sample {
	uint64_t time_ns;      /* CLOCK_REALTIME of the reading */
	uint64_t mono_ns;      /* CLOCK_MONOTONIC of the reading */
	double v[NVML_M__COUNT];
	uint8_t valid[NVML_M__COUNT];
	unsigned nproc;        /* valid when valid[NVML_M_PROCESSES] */
	struct nvml_process proc[NVML_MAX_PROCS];
};

/*
 * The topology facts of one GPU (NVC_TOPO_* readings, decoded at open).
 * Peers are NVML indexes below NVML_TOPO_MAX; unknown is -1 (levels, P2P,
 * NUMA node, version) or "" (strings).
 */
#define NVML_TOPO_MAX 64
#define NVML_TOPO_LINKS 36
struct nvml_gpu_topo {
	int numa_node;                     /* -1 unknown */
	char cpus[NVML_RAW_STR];           /* CPU affinity list ("0-23,48-71"), "" unknown */
	int nvlink_version;                /* of its first link that answers, as NVML returns it; -1 unknown */
	int8_t level[NVML_TOPO_MAX];       /* nvmlGpuTopologyLevel_t / 10: 0 internal, 1 single switch, 2 multiple, 3 host bridge, 4 NUMA node, 5 system */
	int8_t p2p[NVML_TOPO_MAX][3];      /* nvmlGpuP2PStatus_t for read, write, NVLink: 0 OK, > 0 why not */
	char link_peer[NVML_TOPO_LINKS][32]; /* PCI bus id at the far end of each link, "" none */
	int8_t link_type[NVML_TOPO_LINKS]; /* what is there: 0 GPU, 2 NVSwitch, -1 unknown */
};

/* Facts about one GPU read once at open. */
struct nvml_gpu_info {
	unsigned index;        /* NVML index (PCI order, as nvidia-smi) */
	char name[NVML_RAW_STR];
	char uuid[NVML_RAW_STR];
	char bus_id[NVML_RAW_STR];
	unsigned pci_domain, pci_bus, pci_device;
	int cc_major, cc_minor;            /* -1 when unknown */
	int bus_width;                     /* bits, -1 when unknown */
	int ecc_enabled;                   /* 1, 0, -1 unknown */
	int mig_enabled;                   /* 1, 0, -1 unknown */
	int gpm_supported;                 /* 1, 0 */
	struct nvml_sample statics;        /* STATIC-tier metrics */
	struct nvml_gpu_topo topo;         /* topology (src/nvml/topo.c) */
};

struct nvml_system {
	char driver_version[NVML_RAW_STR]; /* "" when unknown */
	char nvml_version[NVML_RAW_STR];
	int cuda_version;                  /* 13000 for 13.0; 0 when unknown */
	char hostname[NVML_RAW_STR];
	unsigned ngpus;
};

/* ---- backends ---- */

struct nvml;

struct nvml_backend {
	const char *name;
	/* Open; @arg is the replay file for "replay".  0, or -1 with the reason in why. */
	int (*open)(struct nvml *n, const char *arg, char *why, size_t whylen);
	void (*close)(struct nvml *n);
	/* System facts (NVC_DRIVER_VERSION ... NVC_DEVICE_COUNT). */
	int (*read_system)(struct nvml *n, struct nvml_raws *out);
	/* STATIC-tier readings of GPU @gpu. */
	int (*read_static)(struct nvml *n, unsigned gpu, struct nvml_raws *out);
	/*
	 * Readings of @tiers (FAST/SLOW) of GPU @gpu now; sets the time of the
	 * reading.  Returns 0, or -1 when nothing more can be read (end of a
	 * replay that does not loop).
	 */
	int (*read_tick)(struct nvml *n, unsigned gpu, unsigned tiers, struct nvml_raws *out,
			 uint64_t *time_ns, uint64_t *mono_ns);
	/* Optional: topology readings of GPU @gpu (NVC_TOPO_* ...), added to the static ones. */
	int (*read_topo)(struct nvml *n, unsigned gpu, struct nvml_raws *out);
	/* Optional: describe the measured CPU cost of each read group (a table). */
	void (*costs)(struct nvml *n, struct strbuf *sb);
};

extern const struct nvml_backend nvml_backend_real;
extern const struct nvml_backend nvml_backend_replay;

/* Per-GPU decoder state: for rates derived from cumulative counters. */
struct nvml_gpu_state {
	double nvlink_rx_kib, nvlink_tx_kib; /* last cumulative readings */
	uint64_t nvlink_mono_ns;             /* 0 = none yet */
};

struct nvml {
	const struct nvml_backend *be;
	void *priv;                          /* the backend's */
	struct nvml_system sys;
	struct nvml_gpu_info *gpu;           /* sys.ngpus entries */
	struct nvml_gpu_state *state;
	FILE *rec;                           /* recorder, or NULL */
	char *rec_path;
	char *head;                          /* replay lines of the facts read at open */
	size_t head_len;
	struct nvml_raws scratch;
	int replay_loop;                     /* replay: start over at the end */
	double cpu_budget;                   /* see nvml_set_budget(); 0 = none */
	unsigned budget_hz;
};

/*
 * nvml_open - open NVML (or, when @replay is not NULL, the replay file
 * @replay) and read system and static facts.  Returns NULL with a one-line
 * reason in @why ("no NVIDIA driver: libnvidia-ml.so.1 not found").
 */
struct nvml *nvml_open(const char *replay, char *why, size_t whylen);
void nvml_close(struct nvml *n);

/*
 * nvml_record - write every raw reading from now on (and the system and
 * static facts read at open) to the replay file @path.  0 or -1.
 */
int nvml_record(struct nvml *n, const char *path);
/* Stop recording, flush and close the file; 0 or -1. */
int nvml_record_stop(struct nvml *n);

/* ---- topology (topo.c) ---- */

/* Link between two GPUs, as `nvidia-smi topo -m` names it. */
enum nvml_link {
	NVML_LINK_UNKNOWN = 0,
	NVML_LINK_SELF,          /* X */
	NVML_LINK_NVLINK,        /* NV# (links counted) */
	NVML_LINK_PIX,           /* at most one PCIe bridge */
	NVML_LINK_PXB,           /* several PCIe bridges, no host bridge */
	NVML_LINK_PHB,           /* through a PCIe host bridge (the CPU) */
	NVML_LINK_NODE,          /* between host bridges of one NUMA node */
	NVML_LINK_SYS,           /* across NUMA nodes (the SMP interconnect: QPI/UPI, Infinity Fabric) */
};

struct nvml_pair {
	enum nvml_link link;
	unsigned nvlinks;        /* links from the row GPU to the column GPU */
	int p2p_read, p2p_write; /* nvmlGpuP2PStatus_t, -1 unknown */
};

/*
 * nvml_topo_pair - the link from GPU @a to GPU @b of @n: NVLink when a link
 * of @a ends at @b's PCI bus id, else the PCIe path from the common
 * ancestor; and P2P read/write status.
 */
void nvml_topo_pair(const struct nvml *n, unsigned a, unsigned b, struct nvml_pair *out);
/* Set every topology fact of @t to unknown. */
void nvml_topo_init(struct nvml_gpu_topo *t);
/* Apply one topology reading (NVC_TOPO_ANCESTOR ... NVC_NUMA_NODE) to @t. */
void nvml_topo_decode(const struct nvml_raw *r, struct nvml_gpu_topo *t);
/* "X", "NV18", "PIX", ... for a pair; @buf of at least 8 bytes. */
const char *nvml_link_name(const struct nvml_pair *p, char *buf, size_t len);
/* "OK", "not supported by the chipset", ... for nvmlGpuP2PStatus_t, "-" unknown. */
const char *nvml_p2p_status_name(int st);

/* Which tier a raw call belongs to (enum nvml_tier). */
unsigned nvml_call_tier(unsigned call);

/* Append one replay line ("{\"k\":...}\n") for @raws to @out. */
void nvml_replay_line(struct strbuf *out, const char *kind, int gpu, uint64_t time_ns,
		      uint64_t mono_ns, unsigned tiers, const struct nvml_raws *raws);

/*
 * nvml_set_budget - hold the CPU time spent in NVML calls to about
 * @fraction of one core (0.008 = 0.8 %) for a caller sampling every GPU at
 * @hz: the backend measures each call's CPU cost and reads expensive
 * metrics less often than @hz (their metrics are then invalid in the
 * samples that skip them).  0 turns the budget off (the default).
 */
void nvml_set_budget(struct nvml *n, double fraction, unsigned hz);
/*
 * nvml_fair_rates - max-min fair share of a CPU @budget (CPU seconds per
 * second) among @n periodic calls, call i costing @cost_s[i] CPU seconds and
 * wanted at @base_hz[i]: calls wanting less than an equal share of what is
 * left run at their base rate; the others split the rest equally, running at
 * share / cost.  Sets @rate_hz[i] (<= base_hz[i]).
 */
void nvml_fair_rates(const double *cost_s, const double *base_hz, double *rate_hz, size_t n,
		     double budget);
/*
 * nvml_steer_budget - the NVML calls' next budget, from their current one
 * (@nvml_budget) and how the whole sampler thread did: it used @used_share
 * of a core since it started against its @budget.  Scales by budget /
 * used_share, at most x2 or /2 per call, never above @budget (the calls are
 * part of the thread) nor below @floor.
 */
double nvml_steer_budget(double nvml_budget, double budget, double used_share, double floor);
/* Append the backend's per-call CPU cost table to @sb (nothing for replay). */
void nvml_costs(struct nvml *n, struct strbuf *sb);

/*
 * nvml_sample - read @tiers of GPU @gpu into @s.  STATIC metrics are always
 * copied in; metrics of tiers not read are invalid.  Returns 0, or -1 at the
 * end of a replay.
 */
int nvml_sample(struct nvml *n, unsigned gpu, unsigned tiers, struct nvml_sample *s);

/*
 * nvml_decode - apply raw readings to @s (and to @info for strings and
 * modes, when not NULL).  Exposed for tests.
 */
void nvml_decode(const struct nvml_raw *r, size_t nr, struct nvml_sample *s,
		 struct nvml_gpu_info *info, struct nvml_gpu_state *st);

#endif
