/*
 * rule_placement.c - numa-placement: a process (a rank) whose CPUs or
 * memory policy keep it off the NUMA node its GPU is attached to.
 *
 * Needs both sides recorded: the process's CPU affinity as NUMA nodes
 * (TRACE_EV_PROC_ATTR cpu_nodes; its memory policy and nodes) and its GPU's
 * node (the "numa_node" metric the profile's NVML sampler writes, from
 * nvmlDeviceGetNumaNodeId).  Its GPU is the device it ran the most kernels
 * on.  A process whose CPUs all lie on other nodes than its GPU's runs its
 * launches, its pinned buffers and its host<->device copies across the
 * socket interconnect; a memory policy that binds its memory to other nodes
 * (MPOL_BIND, MPOL_PREFERRED) puts its pinned buffers there.
 *
 * Gain: the time of its host<->device copies (kernels are not slowed) times
 * copy_slowdown, the share of that time the remote path costs (the seed
 * guides: NUMA misbinding halves host-device bandwidth), over the analysed
 * GPU time.  The finding is reported whatever its gain (it is a placement
 * error, cheap to fix); its severity follows the gain, at least "warning".
 */
#include "internal.h"

#include <string.h>

#define MPOL_PREFERRED 1
#define MPOL_BIND 2

/* The GPU a process ran the most kernels on, or UINT32_MAX. */
static uint32_t gpu_of(const struct model *m, uint32_t pid)
{
	uint32_t devs[16];
	uint64_t cnt[16];
	size_t n = 0, best = 0;

	for (size_t i = 0; i < m->kernels.n; i++) {
		size_t k;
		if (m->kernels.v[i].pid != pid)
			continue;
		for (k = 0; k < n && devs[k] != m->kernels.v[i].device; k++)
			;
		if (k == n) {
			if (n == 16)
				continue;
			devs[n] = m->kernels.v[i].device;
			cnt[n++] = 0;
		}
		cnt[k]++;
	}
	for (size_t k = 1; k < n; k++)
		if (cnt[k] > cnt[best])
			best = k;
	return n ? devs[best] : UINT32_MAX;
}

/* The NUMA node of GPU @dev from its "numa_node" samples, or -1. */
static int gpu_node(const struct model *m, uint32_t dev, uint32_t name_id)
{
	for (size_t i = 0; i < m->metrics.n; i++)
		if (m->metrics.v[i].name_id == name_id && m->metrics.v[i].device == dev &&
		    m->metrics.v[i].value >= 0 && m->metrics.v[i].value < 64)
			return (int)m->metrics.v[i].value;
	return -1;
}

static void node_list(struct strbuf *sb, uint64_t mask)
{
	int first = 1;

	for (int n = 0; n < 64; n++)
		if (mask & (1ull << n)) {
			strbuf_addf(sb, "%s%d", first ? "" : ",", n);
			first = 0;
		}
}

void rule_placement(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint32_t name_id = strtab_find(&m->str, "numa_node");

	if (!c->has_gpu || name_id == UINT32_MAX)
		return;
	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		const struct trace_proc_attr *a = &p->attr;
		struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT, who = STRBUF_INIT, rec = STRBUF_INIT;
		uint32_t dev;
		int node, cpu_off, mem_off;
		uint64_t copy_ns = 0;
		double gain;
		char b1[64];

		if (!p->has_attr || !a->cpu_nodes || (dev = gpu_of(m, p->pid)) == UINT32_MAX)
			continue;
		if ((node = gpu_node(m, dev, name_id)) < 0)
			continue;
		cpu_off = !(a->cpu_nodes & (1ull << node));
		mem_off = (a->mempolicy == MPOL_BIND || a->mempolicy == MPOL_PREFERRED) && a->mem_nodes &&
			  !(a->mem_nodes & (1ull << node));
		if (!cpu_off && !mem_off)
			continue;
		for (size_t k = 0; k < m->memcpys.n; k++) {
			const struct trace_memcpy *x = &m->memcpys.v[k];
			if (x->pid == p->pid && x->device == dev && (x->kind == COPY_HTOD || x->kind == COPY_DTOH) &&
			    az_in_win(c, x->start))
				copy_ns += az_win_overlap(c, x->start, x->end);
		}
		gain = az_div((double)copy_ns * az_param(c, self, "copy_slowdown"), (double)c->unit_wall_ns);
		if (a->rank >= 0)
			strbuf_addf(&who, "Rank %d", a->rank);
		else
			strbuf_addf(&who, "Process %u", p->pid);
		strbuf_addf(&title, "%s runs on NUMA node%s ", who.buf,
			    (a->cpu_nodes & (a->cpu_nodes - 1)) ? "s" : "");
		node_list(&title, cpu_off ? a->cpu_nodes : a->mem_nodes);
		strbuf_addf(&title, " while its GPU %u is attached to node %d", dev, node);
		strbuf_addf(&ev, "%s (pid %u): CPU affinity %s (NUMA node%s ", who.buf, p->pid,
			    a->cpus_id ? model_str(m, a->cpus_id) : "-", (a->cpu_nodes & (a->cpu_nodes - 1)) ? "s" : "");
		node_list(&ev, a->cpu_nodes);
		strbuf_addf(&ev, "); memory policy %d", a->mempolicy);
		if (a->mem_nodes) {
			strbuf_addstr(&ev, " on node(s) ");
			node_list(&ev, a->mem_nodes);
		}
		strbuf_addf(&ev, "\nGPU %u: NUMA node %d (NVML)\n", dev, node);
		strbuf_addf(&ev, "host<->device copies of this process on that GPU: %s in the window\n",
			    fmt_duration(b1, sizeof(b1), (double)copy_ns));
		strbuf_addf(&rec, "Bind the process to its GPU's node: numactl --cpunodebind=%d --membind=%d, or "
			    "taskset with the GPU's CPU affinity (`gpuscope topo` lists it; torchrun "
			    "--local-ranks-filter does not bind, srun --cpu-bind=map_ldom / --gpu-bind=closest and "
			    "mpirun --bind-to numa do)", node, node);
		az_add(c, "numa-placement", az_severity(gain) > SEV_WARNING ? az_severity(gain) : SEV_WARNING, gain,
		       title.buf,
		       "host<->device copy time of the process on its GPU x copy_slowdown / analysed GPU time (its "
		       "launches and host work across the socket are not counted)",
		       ev.buf, rec.buf, NULL, 0);
		strbuf_release(&ev);
		strbuf_release(&title);
		strbuf_release(&who);
		strbuf_release(&rec);
	}
}
