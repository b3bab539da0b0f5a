/*
 * rule_underfill.c - under-filled-launch: hot kernels launched with fewer
 * thread blocks than the GPU has SMs, leaving SMs idle while they run.
 *
 * A launch fills blocks x warps-per-block of the SMs x target_warps_per_sm
 * warp slots that hide latency; the rest of its time is lost.  Gain: sum
 * over launches of hot kernels (each name at least
 * under-filled-launch.hot_share of kernel time) with fewer blocks than SMs
 * of the launch's time alone on its GPU x (1 - fill) / analysed GPU time.
 *  - "alone": while another (non-communication) kernel of the same GPU runs,
 *    it fills the SMs this launch leaves idle, so that time is not lost;
 *  - communication kernels (model/kernel_class.c) are never counted: they
 *    use few blocks on purpose;
 *  - the SM count is the device row's (recorded, or filled from the GPU
 *    datasheet table by load_input(): model/device_facts.h), else the
 *    table's for the row's name or compute capability; a GPU with neither
 *    is skipped and a note says so (no assumed count).  The evidence names
 *    the source of each count: "recorded" or "table: ROW".
 */
#include "internal.h"
#include "model/device_facts.h"
#include "model/gpu_facts.h"

#include <stdlib.h>
#include <string.h>

struct kagg {
	uint64_t ns, waste, n, blocks_min, blocks_max;
	uint32_t sms, name_id;
	const char *sms_src;       /* where sms came from: "recorded", "table: ROW" (owned by the model or static) */
	const char *sms_row;       /* with sms_src "table": the table row (static), or NULL */
};

static int cmp_waste(const void *pa, const void *pb)
{
	const struct kagg *a = pa, *b = pb;
	return (a->waste < b->waste) - (a->waste > b->waste);
}

/*
 * The device row of (pid, device): that process's when it has an SM count,
 * else another process's row for the ordinal that has one, else any; NULL
 * if none.
 */
static const struct trace_device *unit_device(const struct model *m, uint32_t pid, uint32_t device)
{
	const struct trace_device *own = NULL, *with_sms = NULL, *any = NULL;

	for (size_t i = 0; i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		if (d->id != device)
			continue;
		if (d->pid == pid && !own)
			own = d;
		if (d->sm_count && !with_sms)
			with_sms = d;
		if (!any)
			any = d;
	}
	if (own && own->sm_count)
		return own;
	return with_sms ? with_sms : own ? own : any;
}

/*
 * SM count of (pid, device): the device row's, else the table's for its
 * name / compute capability, else 0.  *src says where it came from
 * ("recorded", "table: ROW", a string owned by the model or static); for
 * a count looked up here, *src is "table" and *row the table row's name
 * (static; NULL when several rows agree).
 */
static uint32_t unit_sms(const struct az_ctx *c, uint32_t pid, uint32_t device, const char **src, const char **row)
{
	const struct model *m = c->m;
	const struct trace_device *d = unit_device(m, pid, device);
	struct gpu_facts g;

	*src = NULL;
	*row = NULL;
	if (!d)
		return 0;
	if (d->sm_count) {
		*src = model_fact_source(m, d, MODEL_FACT_SMS);
		return d->sm_count;
	}
	gpu_facts_lookup(model_str(m, d->name_id), d->cc_major, d->cc_minor, 0, d->global_mem, &g);
	if (g.f[GF_SMS].src != GFS_TABLE || g.f[GF_SMS].v <= 0)
		return 0;
	*src = "table";
	*row = g.model;
	return (uint32_t)g.f[GF_SMS].v;
}

/*
 * For each GPU unit: the times when at least two non-communication kernels
 * run at once (@conc[unit], normalised).  One pass in start order: a time
 * t is covered by two kernels a and b (a starting first) exactly when t
 * lies in [start of b, min(end of b, the latest end of the kernels that
 * started before b)); those pieces come in start order and are merged as
 * they come, so no sort is needed.
 */
static void build_concurrency(struct az_ctx *c, struct interval_set *conc)
{
	const struct model *m = c->m;
	uint64_t *pmax = xcalloc(c->nunits + 1, sizeof(*pmax));
	size_t last = 0;

	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		struct interval_set *s;
		struct az_unit *un;
		uint64_t a, b;
		size_t ui;
		if (k->end <= k->start || !az_in_win(c, k->start))
			continue;
		if (last < c->nunits && c->units[last].pid == k->pid && c->units[last].device == k->device) {
			ui = last;
		} else {
			if (!(un = az_unit_find(c, k->pid, k->device)))
				continue;
			last = ui = (size_t)(un - c->units);
		}
		if (az_is_comm(c, k))
			continue;
		a = k->start;
		b = k->end < pmax[ui] ? k->end : pmax[ui];
		if (k->end > pmax[ui])
			pmax[ui] = k->end;
		if (b <= a)
			continue;
		s = &conc[ui];
		if (s->n && a <= s->v[s->n - 1].end) {
			if (b > s->v[s->n - 1].end)
				s->v[s->n - 1].end = b;
		} else {
			ivset_add(s, a, b);
		}
	}
	for (size_t ui = 0; ui < c->nunits; ui++)
		conc[ui].normal = 1;
	free(pmax);
}

void rule_underfill(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double hot = az_param(c, self, "hot_share");
	double target = az_param(c, self, "target_warps_per_sm");
	uint64_t min_kernel = (uint64_t)(az_param(c, self, "min_kernel_us") * 1e3);
	uint32_t *slot, last_pid = UINT32_MAX, last_dev = UINT32_MAX, sms = 0;
	struct kagg *agg = NULL;
	size_t nagg = 0, alloc = 0;
	uint64_t total = 0, waste = 0;
	int skipped = 0;
	const char *sms_src = NULL, *sms_row = NULL;
	uint64_t shared_ns = 0;
	struct interval_set *conc;
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0, nhot = 0;
	char b1[64], b2[64], name[AZ_NAME_MAX + 1];
	double gain;
	uint32_t *cut;
	uint8_t *hot_name;         /* per name: a hot kernel that is judged */
	uint64_t saved = 0;
	int replayed = 0;
	struct finding *f;

	if (!c->has_gpu || !m->kernels.n)
		return;
	slot = xcalloc(m->str.nr + 1, sizeof(uint32_t));
	cut = xcalloc(m->kernels.n + 1, sizeof(*cut));
	hot_name = xcalloc(m->str.nr + 1, 1);
	conc = xcalloc(c->nunits ? c->nunits : 1, sizeof(*conc));
	build_concurrency(c, conc);
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
			sms = unit_sms(c, k->pid, k->device, &sms_src, &sms_row);
			if (!sms)
				skipped = 1;
		}
		if (!sms)
			continue; /* no SM count anywhere: nothing to compare the grid with */
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
		a->sms_src = sms_src;
		a->sms_row = sms_row;
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
			if (fill < 1) {
				/* only the time no other kernel of this GPU shares the SMs with it */
				struct az_unit *u = az_unit_find(c, k->pid, k->device);
				uint64_t shared = u ? ivset_overlap(&conc[u - c->units], k->start, k->end) : 0;
				uint64_t alone = d > shared ? d - shared : 0;
				shared_ns += d - alone;
				a->waste += (uint64_t)((double)alone * (1 - fill));
				{
					double x = (double)alone * (1 - fill);
					cut[i] = x < 4294967295.0 ? (uint32_t)x : UINT32_MAX;
				}
			}
		}
	}
	free(slot);
	for (size_t ui = 0; ui < c->nunits; ui++)
		ivset_release(&conc[ui]);
	free(conc);
	if (skipped)
		az_note(c, "under-filled-launch: a GPU has no SM count in the input and is not in the GPU table; "
			"its launches were not judged");
	if (nagg > 1)
		qsort(agg, nagg, sizeof(*agg), cmp_waste);
	for (size_t i = 0; i < nagg; i++) {
		if (!agg[i].waste || (double)agg[i].ns < hot * (double)total)
			continue;
		hot_name[agg[i].name_id] = 1;
		waste += agg[i].waste;
		if (nhot++ < 3)
			strbuf_addf(&ev, "%s: %llu launches, %s (%.0f%% of kernel time), %llu-%llu blocks on %u SMs "
				    "(SM count: %s%s%s), %s of SM time idle\n",
				    kernel_label(name, sizeof(name), model_str(m, agg[i].name_id), AZ_NAME_MAX),
				    (unsigned long long)agg[i].n,
				    fmt_duration(b1, sizeof(b1), (double)agg[i].ns), az_div((double)agg[i].ns, (double)total) * 100,
				    (unsigned long long)agg[i].blocks_min, (unsigned long long)agg[i].blocks_max, agg[i].sms,
				    agg[i].sms_src ? agg[i].sms_src : "-", agg[i].sms_row ? ": " : "",
				    agg[i].sms_row ? agg[i].sms_row : "",
				    fmt_duration(b2, sizeof(b2), (double)agg[i].waste));
	}
	gain = az_div((double)waste, (double)c->unit_wall_ns);
	if (gain >= az_param(c, self, "min_gain") && nhot) {
		/* the replay: only the hot kernels' launches are refilled */
		double g;
		for (size_t i = 0; i < m->kernels.n; i++)
			if (cut[i] && (m->kernels.v[i].name_id >= m->str.nr || !hot_name[m->kernels.v[i].name_id]))
				cut[i] = 0;
		g = az_replay_kernel_cut(c, "the hot under-filled kernels' work spread over every SM", cut, &saved);
		if (g >= 0)
			gain = g;
		replayed = g >= 0;
	}
	free(cut);
	free(hot_name);
	if (gain >= az_param(c, self, "min_gain") && nhot) {
		if (shared_ns)
			strbuf_addf(&ev, "%s of these launches ran beside other kernels of the same GPU, which filled "
				    "the idle SMs: not counted\n", fmt_duration(b1, sizeof(b1), (double)shared_ns));
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
		f = az_add(c, "under-filled-launch", az_severity(gain), gain,
		       "Hot kernels launch fewer blocks than the GPU has SMs",
		       "the replay with each launch of a hot kernel that has fewer blocks than SMs shortened by the time "
		       "no other kernel of the GPU ran beside it x (1 - blocks x warps per block / (SMs x "
		       "under-filled-launch.target_warps_per_sm)), over the analysed GPU time (without a graph: the sum "
		       "of those savings over the analysed GPU time): the time saved if the same work filled every SM "
		       "with enough warps to hide latency",
		       ev.buf,
		       c->pytorch
		       ? "Give the GPU more parallel work: a larger batch, fewer sequential small ops (torch.compile fuses "
			 "them), batched ops (bmm, foreach) instead of loops; in custom/Triton kernels pick a grid of at least "
			 "2x the SM count (smaller tiles, split-K) "
		       : "Launch at least as many blocks as SMs (better 2-4x): smaller blocks or tiles, a grid-stride loop sized "
			 "to the SM count (cudaOccupancyMaxActiveBlocksPerMultiprocessor), split-K for thin GEMMs, or run "
			 "independent small kernels concurrently on several streams",
		       where, nw);
		if (replayed)
			az_replay_finding(c, f, "the hot under-filled kernels' work spread over every SM", saved);
		else
			az_model_finding(c, f, "the hot under-filled kernels' work spread over every SM");
	}
	free(agg);
	strbuf_release(&ev);
}
