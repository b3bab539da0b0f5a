/*
 * rule_p2p.c - no-p2p-path: two GPUs the run communicates between have no
 * peer-to-peer path, so NCCL and peer copies between them are staged
 * through host memory.
 *
 * The facts: the profile's NVML sampler writes, for each GPU a and each
 * other GPU b of its host, a metric "p2p_status.<b>" on device a with
 * nvmlDeviceGetP2PStatus's answer (0 OK, else the reason: chipset, topology,
 * disabled ...; docs/rules.md), b by NVML index, and a metric "nvml_index"
 * on each GPU.  The model moves metrics onto the CUDA ordinals of the GPUs
 * (by UUID; GPUs the run did not use become 100 + NVML index), so the
 * "nvml_index" metrics of one sampler (one pid) map its NVML indexes to
 * the devices the kernels name.
 *
 * The run communicates between a and b when it ran communication kernels
 * on both (the ranks of one host's communicator: NCCL connects every pair
 * of its ring or tree neighbours) or copied between them (peer copies,
 * COPY_PTOP or a device-to-device copy with another destination GPU).
 *
 * Gain: the communication time on the GPUs of such pairs (their
 * communication kernels, and the peer copies between the pair) times
 * staged_share, over the analysed GPU time.  A transfer staged through
 * host memory crosses PCIe twice (GPU to host, host to GPU) and is copied
 * once more by the CPU side; a direct path saves at least the second
 * crossing.  The finding is reported whatever its gain (a platform fact to
 * know before tuning NCCL), with severity "warning" at least.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define P2P_MAX 64                 /* GPUs per host the sampler names (NVML_TOPO_MAX) */

/* nvmlGpuP2PStatus_t's reasons, worded as `gpuscope topo` words them (nvml/topo.c; analyze does not link NVML). */
static const char *p2p_reason(int st)
{
	static const char *const r[] = {
		"OK", "not supported by the chipset", "not supported by the GPU",
		"not supported by the IOH topology", "disabled by a registry key", "not supported", "unknown",
	};

	return st >= 0 && st < (int)(sizeof(r) / sizeof(r[0])) ? r[st] : "not supported (NVML status unknown to gpuscope)";
}

void rule_p2p(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	int8_t (*st)[P2P_MAX];
	uint64_t comm_ns[P2P_MAX] = { 0 }, ncomm[P2P_MAX] = { 0 };
	uint64_t (*copy_ns)[P2P_MAX];
	unsigned char bad_gpu[P2P_MAX] = { 0 };
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT, pairs = STRBUF_INIT, rec = STRBUF_INIT;
	size_t npairs = 0, nknown = 0;
	int first_a = -1, first_b = -1, first_st = 0;
	double cost = 0, gain;
	char b1[64], b2[64];
	struct { uint32_t pid, index, device; } *map = NULL;
	size_t nmap = 0, amap = 0;
	uint32_t nvml_id;

	if (!c->has_gpu)
		return;
	st = xmalloc(P2P_MAX * sizeof(*st));
	copy_ns = xcalloc(P2P_MAX, sizeof(*copy_ns));
	memset(st, -1, P2P_MAX * sizeof(*st));
	nvml_id = strtab_find(&m->str, "nvml_index");
	if (nvml_id == UINT32_MAX)
		goto out;
	/* each sampler's NVML index -> device */
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		if (x->name_id != nvml_id || x->value < 0 || x->value >= P2P_MAX)
			continue;
		ALLOC_GROW(map, nmap + 1, amap);
		map[nmap].pid = x->pid;
		map[nmap].index = (uint32_t)x->value;
		map[nmap++].device = x->device;
	}
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		const char *name = model_str(m, x->name_id);
		char *end;
		unsigned long peer;
		uint32_t b = UINT32_MAX;
		if (strncmp(name, "p2p_status.", 11) || x->device >= P2P_MAX)
			continue;
		peer = strtoul(name + 11, &end, 10);
		if (end == name + 11 || *end || x->value < 0 || x->value > 100)
			continue;
		for (size_t k = 0; k < nmap; k++)
			if (map[k].pid == x->pid && map[k].index == peer)
				b = map[k].device;
		if (b >= P2P_MAX || b == x->device)
			continue; /* a GPU the run did not use (100 + index) */
		st[x->device][b] = (int8_t)x->value;
		nknown++;
	}
	if (!nknown)
		goto out;
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		if (k->device >= P2P_MAX || !az_in_win(c, k->start) || !az_is_comm(c, k))
			continue;
		comm_ns[k->device] += az_win_overlap(c, k->start, k->end);
		ncomm[k->device]++;
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *x = &m->memcpys.v[i];
		/* peer copies only: a device-to-device copy within one GPU leaves dst_device 0 */
		if (x->kind != COPY_PTOP || x->device >= P2P_MAX || x->dst_device >= P2P_MAX ||
		    x->dst_device == x->device || !az_in_win(c, x->start))
			continue;
		copy_ns[x->device][x->dst_device] += az_win_overlap(c, x->start, x->end);
	}
	for (unsigned a = 0; a < P2P_MAX; a++)
		for (unsigned b = a + 1; b < P2P_MAX; b++) {
			int s = st[a][b] > 0 ? st[a][b] : st[b][a] > 0 ? st[b][a] : 0;
			uint64_t cp = copy_ns[a][b] + copy_ns[b][a];
			if (s <= 0 || !((ncomm[a] && ncomm[b]) || cp))
				continue;
			if (!npairs) {
				first_a = (int)a;
				first_b = (int)b;
				first_st = s;
			}
			strbuf_addf(&pairs, "%sGPU %u - GPU %u: %s", npairs ? "; " : "", a, b, p2p_reason(s));
			if (ncomm[a] && ncomm[b])
				strbuf_addf(&pairs, ", communication kernels on both (%s and %s)",
					    fmt_duration(b1, sizeof(b1), (double)comm_ns[a]),
					    fmt_duration(b2, sizeof(b2), (double)comm_ns[b]));
			if (cp) {
				strbuf_addf(&pairs, ", peer copies %s", fmt_duration(b1, sizeof(b1), (double)cp));
				cost += (double)cp;
			}
			if (ncomm[a] && ncomm[b])
				bad_gpu[a] = bad_gpu[b] = 1;
			npairs++;
		}
	if (!npairs)
		goto out;
	for (unsigned a = 0; a < P2P_MAX; a++)
		if (bad_gpu[a])
			cost += (double)comm_ns[a]; /* each GPU's communication once, however many pairs it is in */
	gain = az_div(cost * az_param(c, self, "staged_share"), (double)c->unit_wall_ns);
	if (npairs == 1)
		strbuf_addf(&title, "GPUs %d and %d have no P2P path while the run communicates between them", first_a,
			    first_b);
	else
		strbuf_addf(&title, "%zu pairs of GPUs that communicate have no P2P path (GPUs %d and %d: %s, ...)",
			    npairs, first_a, first_b, p2p_reason(first_st));
	strbuf_addf(&ev, "P2P status (NVML, recorded by the profile): %s\n", pairs.buf);
	strbuf_addf(&ev, "their collectives and copies go through host memory: %s of communication on those GPUs "
		    "in the window\n", fmt_duration(b1, sizeof(b1), cost));
	strbuf_addstr(&rec, "Place the ranks that communicate most on GPUs with a P2P path (`gpuscope topo` "
		      "shows the matrix: NV# or PIX/PXB within one PCIe switch), e.g. CUDA_VISIBLE_DEVICES per "
		      "node group, or tensor-parallel groups within a socket; check that IOMMU/ACS settings or a "
		      "VM do not disable P2P (nvidia-smi topo -p2p r); NCCL_P2P_LEVEL does not create a path that "
		      "the platform lacks");
	az_add(c, "no-p2p-path", az_severity(gain) > SEV_WARNING ? az_severity(gain) : SEV_WARNING, gain,
	       title.buf,
	       "communication time on the GPUs of the pairs without P2P (their communication kernels and the "
	       "peer copies between them) x staged_share / analysed GPU time",
	       ev.buf, rec.buf, NULL, 0);
out:
	free(map);
	free(st);
	free(copy_ns);
	strbuf_release(&ev);
	strbuf_release(&title);
	strbuf_release(&pairs);
	strbuf_release(&rec);
}
