/*
 * rule_underfill.c - under-filled-launch: hot kernels launched with fewer
 * thread blocks than the GPU has SMs, leaving SMs idle while they run.
 *
 * A launch fills blocks x warps-per-block of the SMs x target_warps_per_sm
 * warp slots that hide latency; the rest of its time is lost.  Gain: sum
 * over launches of hot kernels (each name at least
 * under-filled-launch.hot_share of kernel time) with fewer blocks than SMs
 * of duration x (1 - fill) / analysed GPU time.  The SM count is the device row's; without one,
 * under-filled-launch.assumed_sms is used and the evidence says so.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct kagg {
	uint64_t ns, waste, n, blocks_min, blocks_max;
	uint32_t sms, name_id;
};

static int cmp_waste(const void *pa, const void *pb)
{
	const struct kagg *a = pa, *b = pb;
	return (a->waste < b->waste) - (a->waste > b->waste);
}

void rule_underfill(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double hot = az_param(c, self, "hot_share");
	uint32_t assumed = (uint32_t)az_param(c, self, "assumed_sms");
	double target = az_param(c, self, "target_warps_per_sm");
	uint64_t min_kernel = (uint64_t)(az_param(c, self, "min_kernel_us") * 1e3);
	uint32_t *slot, last_pid = UINT32_MAX, last_dev = UINT32_MAX, sms = 0;
	struct kagg *agg = NULL;
	size_t nagg = 0, alloc = 0;
	uint64_t total = 0, waste = 0;
	int assumed_used = 0;
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0, nhot = 0;
	char b1[64], b2[64], name[AZ_NAME_MAX + 1];
	double gain;

	if (!c->has_gpu || !m->kernels.n)
		return;
	slot = xcalloc(m->str.nr + 1, sizeof(uint32_t));
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		uint64_t d = k->end > k->start ? k->end - k->start : 0, blocks;
		struct kagg *a;
		if (!az_in_win(c, k->start) || k->name_id >= m->str.nr)
			continue;
		total += d;
		blocks = az_kernel_blocks(k);
		if (!k->grid[0] || az_is_comm(c, k) || d < min_kernel)
			continue; /* grid unknown; collectives use few blocks on purpose; tiny kernels are launch costs */
		if (k->pid != last_pid || k->device != last_dev) {
			last_pid = k->pid;
			last_dev = k->device;
			sms = az_unit_sms(c, k->pid, k->device);
			if (!sms) {
				sms = assumed ? assumed : 1;
				assumed_used = 1;
			}
		}
		if (!slot[k->name_id]) {
			ALLOC_GROW(agg, nagg + 1, alloc);
			memset(&agg[nagg], 0, sizeof(agg[0]));
			agg[nagg].name_id = k->name_id;
			agg[nagg].blocks_min = UINT64_MAX;
			slot[k->name_id] = (uint32_t)++nagg;
		}
		a = &agg[slot[k->name_id] - 1];
		a->ns += d;
		a->n++;
		a->sms = sms;
		if (blocks < a->blocks_min)
			a->blocks_min = blocks;
		if (blocks > a->blocks_max)
			a->blocks_max = blocks;
		if (blocks < sms) {
			/* share of the GPU's latency-hiding warp slots the launch fills */
			uint64_t threads = (uint64_t)(k->block[0] ? k->block[0] : 1) * (k->block[1] ? k->block[1] : 1) *
					   (k->block[2] ? k->block[2] : 1);
			double warps = (double)((threads + 31) / 32);
			double fill = (double)blocks * warps / ((double)sms * (target > 0 ? target : 1));
			if (!k->block[0])
				fill = (double)blocks / sms;
			if (fill < 1)
				a->waste += (uint64_t)((double)d * (1 - fill));
		}
	}
	free(slot);
	if (nagg > 1)
		qsort(agg, nagg, sizeof(*agg), cmp_waste);
	for (size_t i = 0; i < nagg; i++) {
		if (!agg[i].waste || (double)agg[i].ns < hot * (double)total)
			continue;
		waste += agg[i].waste;
		if (nhot++ < 3)
			strbuf_addf(&ev, "%s: %llu launches, %s (%.0f%% of kernel time), %llu-%llu blocks on %u SMs, "
				    "%s of SM time idle\n",
				    kernel_label(name, sizeof(name), model_str(m, agg[i].name_id), AZ_NAME_MAX),
				    (unsigned long long)agg[i].n,
				    fmt_duration(b1, sizeof(b1), (double)agg[i].ns), az_div((double)agg[i].ns, (double)total) * 100,
				    (unsigned long long)agg[i].blocks_min, (unsigned long long)agg[i].blocks_max, agg[i].sms,
				    fmt_duration(b2, sizeof(b2), (double)agg[i].waste));
	}
	gain = az_div((double)waste, (double)c->unit_wall_ns);
	if (gain >= az_param(c, self, "min_gain") && nhot) {
		if (assumed_used)
			strbuf_addf(&ev, "the report has no SM count for some devices: assumed %u SMs\n", assumed);
		/* windows: the longest launches of the top kernel */
		for (size_t i = 0; i < m->kernels.n; i++) {
			const struct trace_kernel *k = &m->kernels.v[i];
			if (k->name_id != agg[0].name_id || !az_in_win(c, k->start))
				continue;
			if (nw < 3) {
				where[nw++] = (struct interval){ k->start, k->end > k->start ? k->end : k->start + 1 };
			} else {
				size_t min = 0;
				for (size_t q = 1; q < 3; q++)
					if (where[q].end - where[q].start < where[min].end - where[min].start)
						min = q;
				if (k->end - k->start > where[min].end - where[min].start)
					where[min] = (struct interval){ k->start, k->end };
			}
		}
		az_add(c, "under-filled-launch", az_severity(gain), gain,
		       "Hot kernels launch fewer blocks than the GPU has SMs",
		       "sum over launches of hot kernels with fewer blocks than SMs of duration x (1 - blocks x warps per "
		       "block / (SMs x under-filled-launch.target_warps_per_sm)) / analysed GPU time: the time saved if the "
		       "same work filled every SM with enough warps to hide latency",
		       ev.buf,
		       c->pytorch
		       ? "Give the GPU more parallel work: a larger batch, fewer sequential small ops (torch.compile fuses "
			 "them), batched ops (bmm, foreach) instead of loops; in custom/Triton kernels pick a grid of at least "
			 "2x the SM count (smaller tiles, split-K) "
		       : "Launch at least as many blocks as SMs (better 2-4x): smaller blocks or tiles, a grid-stride loop sized "
			 "to the SM count (cudaOccupancyMaxActiveBlocksPerMultiprocessor), split-K for thin GEMMs, or run "
			 "independent small kernels concurrently on several streams",
		       where, nw);
	}
	free(agg);
	strbuf_release(&ev);
}
