/*
 * health.c - `gpuscope health` checks: pass / warn / fail with a reason.
 * The thresholds are general facts about NVIDIA GPUs, documented with their
 * reasons in docs/monitor.md ("Health checks").
 */
#include "monitor.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* CUDA 13.0, the toolkit the collector is built with, needs an R580+ driver. */
#define HEALTH_MIN_CUDA 13000
/* Warn this many degrees below the GPU's own slowdown temperature. */
#define HEALTH_TEMP_MARGIN_C 5.0
/* P-states at or above this are idle states where links and clocks drop to save power. */
#define HEALTH_IDLE_PSTATE 8

const char *mon_verdict_name(enum mon_verdict v)
{
	switch (v) {
	case MON_PASS: return "pass";
	case MON_WARN: return "warn";
	case MON_FAIL: return "fail";
	case MON_SKIP: return "skip";
	}
	return "?";
}

__attribute__((format(printf, 5, 6)))
static void add(struct mon_checks *out, int gpu, const char *name, enum mon_verdict v,
		const char *fmt, ...)
{
	struct mon_check *c;
	va_list ap;

	ALLOC_GROW(out->c, out->nr + 1, out->alloc);
	c = &out->c[out->nr++];
	c->gpu = gpu;
	c->name = name;
	c->verdict = v;
	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
}

void mon_checks_release(struct mon_checks *c)
{
	free(c->c);
	memset(c, 0, sizeof(*c));
}

#define OK(m) (s->valid[m])
#define V(m) (s->v[m])

static void check_pcie(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	int idle;

	if (!OK(NVML_M_PCIE_GEN) || !OK(NVML_M_PCIE_WIDTH) || !OK(NVML_M_PCIE_GEN_MAX) ||
	    !OK(NVML_M_PCIE_WIDTH_MAX)) {
		add(out, gpu, "pcie_link", MON_SKIP, "PCIe link generation or width not reported");
		return;
	}
	idle = (OK(NVML_M_PSTATE) && V(NVML_M_PSTATE) >= HEALTH_IDLE_PSTATE) ||
	       (OK(NVML_M_THROTTLE) && ((uint64_t)V(NVML_M_THROTTLE) & 1));
	if (V(NVML_M_PCIE_WIDTH) < V(NVML_M_PCIE_WIDTH_MAX))
		add(out, gpu, "pcie_link", MON_WARN,
		    "link width x%.0f below its maximum x%.0f (Gen%.0f of Gen%.0f): check the slot, "
		    "riser and BIOS lane settings", V(NVML_M_PCIE_WIDTH), V(NVML_M_PCIE_WIDTH_MAX),
		    V(NVML_M_PCIE_GEN), V(NVML_M_PCIE_GEN_MAX));
	else if (V(NVML_M_PCIE_GEN) < V(NVML_M_PCIE_GEN_MAX) && !idle)
		add(out, gpu, "pcie_link", MON_WARN,
		    "link Gen%.0f below its maximum Gen%.0f while busy (x%.0f): check the slot and "
		    "BIOS PCIe speed", V(NVML_M_PCIE_GEN), V(NVML_M_PCIE_GEN_MAX),
		    V(NVML_M_PCIE_WIDTH));
	else if (V(NVML_M_PCIE_GEN) < V(NVML_M_PCIE_GEN_MAX))
		add(out, gpu, "pcie_link", MON_PASS,
		    "Gen%.0f x%.0f, below Gen%.0f because the GPU idles (power saving); check again "
		    "under load", V(NVML_M_PCIE_GEN), V(NVML_M_PCIE_WIDTH), V(NVML_M_PCIE_GEN_MAX));
	else
		add(out, gpu, "pcie_link", MON_PASS, "Gen%.0f x%.0f, the maximum",
		    V(NVML_M_PCIE_GEN), V(NVML_M_PCIE_WIDTH));
}

static void check_throttle(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	static const uint64_t hw = 0x8 | 0x40 | 0x80;   /* hw, hw thermal, power brake */
	static const uint64_t sw = 0x4 | 0x20;          /* sw power cap, sw thermal */
	char names[256];
	uint64_t mask;

	if (!OK(NVML_M_THROTTLE)) {
		add(out, gpu, "throttle", MON_SKIP, "clock-event reasons not reported");
		return;
	}
	mask = (uint64_t)V(NVML_M_THROTTLE);
	nvml_throttle_format(mask, ",", names, sizeof(names));
	if (mask & hw)
		add(out, gpu, "throttle", MON_FAIL,
		    "hardware slowdown active (%s): overheating, power brake or a power supply "
		    "problem", names);
	else if (mask & sw)
		add(out, gpu, "throttle", MON_WARN,
		    "clocks reduced by the driver (%s): the GPU runs at its power or thermal limit",
		    names);
	else
		add(out, gpu, "throttle", MON_PASS, "no slowdown (reasons: %s)", names);
}

static void check_temp(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	if (!OK(NVML_M_TEMP)) {
		add(out, gpu, "temperature", MON_SKIP, "temperature not reported");
		return;
	}
	if (!OK(NVML_M_TEMP_SLOWDOWN)) {
		add(out, gpu, "temperature", MON_PASS, "%.0f C (no slowdown threshold reported)",
		    V(NVML_M_TEMP));
		return;
	}
	if (V(NVML_M_TEMP) >= V(NVML_M_TEMP_SLOWDOWN))
		add(out, gpu, "temperature", MON_FAIL, "%.0f C, at or above the slowdown threshold %.0f C",
		    V(NVML_M_TEMP), V(NVML_M_TEMP_SLOWDOWN));
	else if (V(NVML_M_TEMP) >= V(NVML_M_TEMP_SLOWDOWN) - HEALTH_TEMP_MARGIN_C)
		add(out, gpu, "temperature", MON_WARN,
		    "%.0f C, within %.0f C of the slowdown threshold %.0f C", V(NVML_M_TEMP),
		    HEALTH_TEMP_MARGIN_C, V(NVML_M_TEMP_SLOWDOWN));
	else
		add(out, gpu, "temperature", MON_PASS, "%.0f C, slowdown at %.0f C", V(NVML_M_TEMP),
		    V(NVML_M_TEMP_SLOWDOWN));
}

static void check_ecc(struct mon_checks *out, int gpu, const struct nvml_gpu_info *g,
		      const struct nvml_sample *s)
{
	if (g->ecc_enabled == 0) {
		add(out, gpu, "ecc", MON_WARN,
		    "ECC is off: memory errors go undetected (nvidia-smi -e 1 and a reset turn it on)");
		return;
	}
	if (!OK(NVML_M_ECC_DBE_VOL) && !OK(NVML_M_ECC_DBE_AGG)) {
		add(out, gpu, "ecc", MON_SKIP, "ECC error counts not reported");
		return;
	}
	if (OK(NVML_M_ECC_DBE_VOL) && V(NVML_M_ECC_DBE_VOL) > 0)
		add(out, gpu, "ecc", MON_FAIL,
		    "%.0f uncorrectable ECC errors since the driver loaded: results may be wrong; "
		    "drain and reset the GPU", V(NVML_M_ECC_DBE_VOL));
	else if (OK(NVML_M_ECC_DBE_AGG) && V(NVML_M_ECC_DBE_AGG) > 0)
		add(out, gpu, "ecc", MON_WARN,
		    "%.0f uncorrectable ECC errors over the GPU's life (none since the driver loaded)",
		    V(NVML_M_ECC_DBE_AGG));
	else
		add(out, gpu, "ecc", MON_PASS, "no uncorrectable errors (%.0f corrected since load)",
		    OK(NVML_M_ECC_SBE_VOL) ? V(NVML_M_ECC_SBE_VOL) : 0.0);
}

static void check_remap(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	if (!OK(NVML_M_REMAP_FAILED) || !OK(NVML_M_REMAP_PENDING)) {
		add(out, gpu, "remapped_rows", MON_SKIP, "row remapping not reported (before Ampere)");
		return;
	}
	if (V(NVML_M_REMAP_FAILED) > 0)
		add(out, gpu, "remapped_rows", MON_FAIL,
		    "a row remap failed: the GPU has run out of spare rows; replace it");
	else if (V(NVML_M_REMAP_PENDING) > 0)
		add(out, gpu, "remapped_rows", MON_WARN,
		    "a row remap is pending: reset the GPU to apply it");
	else
		add(out, gpu, "remapped_rows", MON_PASS, "%.0f correctable, %.0f uncorrectable rows "
		    "remapped, none pending", V(NVML_M_REMAP_CORR), V(NVML_M_REMAP_UNC));
}

static void check_persistence(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	if (!OK(NVML_M_PERSISTENCE))
		add(out, gpu, "persistence", MON_SKIP, "persistence mode not reported");
	else if (V(NVML_M_PERSISTENCE) == 0)
		add(out, gpu, "persistence", MON_WARN,
		    "persistence mode is off: each first CUDA call re-initialises the GPU (seconds) "
		    "unless nvidia-persistenced runs");
	else
		add(out, gpu, "persistence", MON_PASS, "persistence mode on");
}

static void check_nvlink(struct mon_checks *out, int gpu, const struct nvml_sample *s)
{
	if (!OK(NVML_M_NVLINK_LINKS) || V(NVML_M_NVLINK_LINKS) == 0) {
		add(out, gpu, "nvlink", MON_SKIP, "no NVLink on this GPU");
		return;
	}
	if (!OK(NVML_M_NVLINK_UP))
		add(out, gpu, "nvlink", MON_SKIP, "NVLink state not reported");
	else if (V(NVML_M_NVLINK_UP) < V(NVML_M_NVLINK_LINKS))
		add(out, gpu, "nvlink", MON_FAIL, "%.0f of %.0f NVLink links down",
		    V(NVML_M_NVLINK_LINKS) - V(NVML_M_NVLINK_UP), V(NVML_M_NVLINK_LINKS));
	else
		add(out, gpu, "nvlink", MON_PASS, "all %.0f NVLink links up", V(NVML_M_NVLINK_LINKS));
}

enum mon_verdict mon_health(const struct nvml *n, const struct nvml_sample *s,
			    struct mon_checks *out)
{
	const struct nvml_system *sys = &n->sys;
	enum mon_verdict worst = MON_PASS;

	if (!sys->driver_version[0])
		add(out, -1, "driver", MON_WARN, "driver version not reported");
	else if (sys->cuda_version && sys->cuda_version < HEALTH_MIN_CUDA)
		add(out, -1, "driver", MON_WARN,
		    "driver %s supports CUDA %d.%d; gpuscope's CUDA tracing needs CUDA 13.0 (R580+)",
		    sys->driver_version, sys->cuda_version / 1000, sys->cuda_version % 1000 / 10);
	else if (!sys->cuda_version)
		add(out, -1, "driver", MON_PASS, "driver %s (CUDA version not reported)",
		    sys->driver_version);
	else
		add(out, -1, "driver", MON_PASS, "driver %s, CUDA %d.%d", sys->driver_version,
		    sys->cuda_version / 1000, sys->cuda_version % 1000 / 10);
	for (unsigned i = 0; i < sys->ngpus; i++) {
		check_pcie(out, (int)i, &s[i]);
		check_throttle(out, (int)i, &s[i]);
		check_temp(out, (int)i, &s[i]);
		check_ecc(out, (int)i, &n->gpu[i], &s[i]);
		check_remap(out, (int)i, &s[i]);
		check_persistence(out, (int)i, &s[i]);
		check_nvlink(out, (int)i, &s[i]);
	}
	for (size_t i = 0; i < out->nr; i++)
		if (out->c[i].verdict != MON_SKIP && out->c[i].verdict > worst)
			worst = out->c[i].verdict;
	return worst;
}
