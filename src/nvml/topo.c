/*
 * topo.c - GPU topology from NVML: the GPU x GPU matrix of `gpuscope topo`
 * (as `nvidia-smi topo -m` shows it), P2P capability, CPU and NUMA affinity.
 *
 * The readings are taken with the static facts at open (real.c's
 * read_topo), so they are recorded in and replayed from replay files like
 * any static reading (docs/monitor.md, "Replay format").
 *
 * A pair's link: NVLink when links of the row GPU end at the column GPU's
 * PCI bus id (nvmlDeviceGetNvLinkRemotePciInfo, counted), else the PCIe
 * path of nvmlDeviceGetTopologyCommonAncestor: INTERNAL (same board) and
 * SINGLE are PIX, MULTIPLE is PXB, HOSTBRIDGE is PHB, NODE is NODE, SYSTEM
 * is SYS: nvidia-smi's legend.  Links that end at an NVSwitch (remote
 * device type 2, or a bus id that is none of this host's GPUs when the type
 * is unknown) join every GPU with switch links: the pair gets the smaller
 * of the two GPUs' switch-link counts (DGX/HGX boards: NV18 between all).
 */
#include "nvml.h"
#include "../util/util.h"

#include <stdio.h>
#include <string.h>

void nvml_topo_init(struct nvml_gpu_topo *t)
{
	memset(t, 0, sizeof(*t));
	t->numa_node = -1;
	t->nvlink_version = -1;
	memset(t->level, -1, sizeof(t->level));
	memset(t->p2p, -1, sizeof(t->p2p));
	memset(t->link_type, -1, sizeof(t->link_type));
}

void nvml_topo_decode(const struct nvml_raw *r, struct nvml_gpu_topo *t)
{
	unsigned peer;

	if (r->ret != 0)
		return;
	switch (r->call) {
	case NVC_TOPO_ANCESTOR:
		if (r->arg < NVML_TOPO_MAX && r->nval >= 1 && r->val[0] >= 0 && r->val[0] <= 50)
			t->level[r->arg] = (int8_t)(r->val[0] / 10);
		break;
	case NVC_P2P_STATUS:
		peer = r->arg / 16;
		if (peer < NVML_TOPO_MAX && r->arg % 16 < 3 && r->nval >= 1 && r->val[0] >= 0 && r->val[0] < 100)
			t->p2p[peer][r->arg % 16] = (int8_t)r->val[0];
		break;
	case NVC_NVLINK_REMOTE_PCI:
		if (r->arg < NVML_TOPO_LINKS) {
			size_t k = strnlen(r->str, sizeof(r->str));
			if (k >= sizeof(t->link_peer[0]))
				k = sizeof(t->link_peer[0]) - 1; /* bus ids are 16 characters */
			memcpy(t->link_peer[r->arg], r->str, k);
			t->link_peer[r->arg][k] = '\0';
		}
		break;
	case NVC_NVLINK_VERSION:
		if (t->nvlink_version < 0 && r->nval >= 1)
			t->nvlink_version = dbl_int(r->val[0]);
		break;
	case NVC_CPU_AFFINITY:
		snprintf(t->cpus, sizeof(t->cpus), "%s", r->str);
		break;
	case NVC_NUMA_NODE:
		if (r->nval >= 1 && r->val[0] >= 0)
			t->numa_node = dbl_int(r->val[0]);
		break;
	case NVC_NVLINK_REMOTE_TYPE:
		if (r->arg < NVML_TOPO_LINKS && r->nval >= 1 && r->val[0] >= 0 && r->val[0] < 100)
			t->link_type[r->arg] = (int8_t)r->val[0];
		break;
	default:
		break;
	}
}

/* PCI bus ids compare without case and with the domain's width ("00000000:18:00.0" = "0000:18:00.0"). */
static int same_bus(const char *a, const char *b)
{
	const char *pa = strchr(a, ':'), *pb = strchr(b, ':');

	if (!*a || !*b || !pa || !pb)
		return 0;
	return !strcasecmp(pa, pb);
}

/* Links of GPU @g that end at an NVSwitch (see above). */
static unsigned switch_links(const struct nvml *n, unsigned g)
{
	const struct nvml_gpu_topo *t = &n->gpu[g].topo;
	unsigned k = 0;

	for (unsigned l = 0; l < NVML_TOPO_LINKS; l++) {
		int gpu = 0;
		if (!t->link_peer[l][0] || t->link_type[l] == 0 || t->link_type[l] == 1)
			continue;
		if (t->link_type[l] == 2) {
			k++;
			continue;
		}
		for (unsigned j = 0; j < n->sys.ngpus && !gpu; j++)
			gpu = same_bus(t->link_peer[l], n->gpu[j].bus_id);
		k += !gpu;
	}
	return k;
}

void nvml_topo_pair(const struct nvml *n, unsigned a, unsigned b, struct nvml_pair *out)
{
	const struct nvml_gpu_topo *t;
	int lv;

	memset(out, 0, sizeof(*out));
	out->p2p_read = out->p2p_write = -1;
	if (a >= n->sys.ngpus || b >= n->sys.ngpus)
		return;
	if (a == b) {
		out->link = NVML_LINK_SELF;
		return;
	}
	t = &n->gpu[a].topo;
	if (b < NVML_TOPO_MAX) {
		out->p2p_read = t->p2p[b][0];
		out->p2p_write = t->p2p[b][1];
	}
	for (unsigned l = 0; l < NVML_TOPO_LINKS; l++)
		if (same_bus(t->link_peer[l], n->gpu[b].bus_id) && t->link_type[l] != 2)
			out->nvlinks++;
	if (!out->nvlinks) {
		unsigned sa = switch_links(n, a), sb = switch_links(n, b);
		out->nvlinks = sa < sb ? sa : sb;
	}
	if (out->nvlinks) {
		out->link = NVML_LINK_NVLINK;
		return;
	}
	lv = b < NVML_TOPO_MAX ? t->level[b] : -1;
	switch (lv) {
	case 0: case 1: out->link = NVML_LINK_PIX; break;
	case 2: out->link = NVML_LINK_PXB; break;
	case 3: out->link = NVML_LINK_PHB; break;
	case 4: out->link = NVML_LINK_NODE; break;
	case 5: out->link = NVML_LINK_SYS; break;
	default: out->link = NVML_LINK_UNKNOWN; break;
	}
}

const char *nvml_link_name(const struct nvml_pair *p, char *buf, size_t len)
{
	static const char *const names[] = { "-", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" };

	if (p->link == NVML_LINK_NVLINK) {
		snprintf(buf, len, "NV%u", p->nvlinks);
		return buf;
	}
	snprintf(buf, len, "%s", names[p->link]);
	return buf;
}

const char *nvml_p2p_status_name(int st)
{
	switch (st) {
	case 0: return "OK";
	case 1: return "not supported by the chipset";
	case 2: return "not supported by the GPU";
	case 3: return "not supported by the IOH topology";
	case 4: return "disabled by a registry key";
	case 5: return "not supported";
	case 6: return "unknown";
	default: return "-";
	}
}
