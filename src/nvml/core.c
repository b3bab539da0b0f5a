/*
 * core.c - struct nvml: open a backend, keep system and static facts,
 * take samples and record raw readings (see nvml.h).
 */
#include "nvml.h"
#include "../util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned nvml_call_tier(unsigned call)
{
	if (call >= NVC_TOPO_ANCESTOR && call < NVC__COUNT)
		return NVML_TIER_STATIC; /* read once, with the static facts */
	if (call >= NVC_UTILIZATION && call < NVC_PCIE_GEN)
		return NVML_TIER_FAST;
	if (call >= NVC_PCIE_GEN && call < NVC__COUNT)
		return NVML_TIER_SLOW;
	return NVML_TIER_STATIC;
}

static void add_number(struct strbuf *sb, double v)
{
	if (v == floor(v) && fabs(v) < 9.0e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.17g", v);
}

void nvml_replay_line(struct strbuf *out, const char *kind, int gpu, uint64_t time_ns,
		      uint64_t mono_ns, unsigned tiers, const struct nvml_raws *raws)
{
	strbuf_addf(out, "{\"k\":\"%s\"", kind);
	if (gpu >= 0)
		strbuf_addf(out, ",\"gpu\":%d", gpu);
	if (time_ns)
		strbuf_addf(out, ",\"t\":%" PRIu64 ",\"m\":%" PRIu64 ",\"tiers\":%u", time_ns,
			    mono_ns, tiers);
	strbuf_addstr(out, ",\"r\":[");
	for (size_t i = 0; i < raws->nr; i++) {
		const struct nvml_raw *r = &raws->r[i];
		strbuf_addf(out, "%s[\"%s\",%u,%d,[", i ? "," : "", nvml_call_name(r->call),
			    r->arg, r->ret);
		for (unsigned k = 0; k < r->nval && k < NVML_RAW_VALUES; k++) {
			if (k)
				strbuf_addch(out, ',');
			add_number(out, r->val[k]);
		}
		strbuf_addch(out, ']');
		if (r->str[0]) {
			strbuf_addstr(out, ",\"");
			strbuf_add_json_str(out, r->str);
			strbuf_addch(out, '"');
		}
		strbuf_addch(out, ']');
	}
	strbuf_addstr(out, "]}\n");
}

static void decode_system(struct nvml_system *sys, const struct nvml_raws *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		const struct nvml_raw *r = &l->r[i];
		if (r->ret)
			continue;
		switch (r->call) {
		case NVC_DRIVER_VERSION:
			snprintf(sys->driver_version, sizeof(sys->driver_version), "%s", r->str);
			break;
		case NVC_NVML_VERSION:
			snprintf(sys->nvml_version, sizeof(sys->nvml_version), "%s", r->str);
			break;
		case NVC_CUDA_VERSION:
			sys->cuda_version = dbl_int(r->val[0]);
			break;
		case NVC_DEVICE_COUNT:
			sys->ngpus = dbl_u32(r->val[0]);
			break;
		case NVC_HOSTNAME:
			snprintf(sys->hostname, sizeof(sys->hostname), "%s", r->str);
			break;
		default:
			break;
		}
	}
}

struct nvml *nvml_open(const char *replay, char *why, size_t whylen)
{
	struct nvml *n = xcalloc(1, sizeof(*n));
	struct strbuf head = STRBUF_INIT;

	n->be = replay ? &nvml_backend_replay : &nvml_backend_real;
	if (n->be->open(n, replay, why, whylen)) {
		free(n);
		return NULL;
	}
	n->scratch.nr = 0;
	n->be->read_system(n, &n->scratch);
	decode_system(&n->sys, &n->scratch);
	strbuf_addf(&head, "{\"format\":\"gpuscope-nvml-replay\",\"version\":1,\"backend\":\"%s\"}\n",
		    n->be->name);
	nvml_replay_line(&head, "system", -1, 0, 0, 0, &n->scratch);
	if (n->sys.ngpus == 0) {
		snprintf(why, whylen, "no NVIDIA GPU found");
		strbuf_release(&head);
		nvml_close(n);
		return NULL;
	}
	n->gpu = xcalloc(n->sys.ngpus, sizeof(*n->gpu));
	n->state = xcalloc(n->sys.ngpus, sizeof(*n->state));
	for (unsigned i = 0; i < n->sys.ngpus; i++) {
		struct nvml_gpu_info *g = &n->gpu[i];
		g->index = i;
		g->cc_major = g->cc_minor = -1;
		g->bus_width = -1;
		g->ecc_enabled = g->mig_enabled = -1;
		n->scratch.nr = 0;
		n->be->read_static(n, i, &n->scratch);
		if (n->be->read_topo)
			n->be->read_topo(n, i, &n->scratch);
		nvml_topo_init(&g->topo);
		nvml_decode(n->scratch.r, n->scratch.nr, &g->statics, g, NULL);
		nvml_replay_line(&head, "static", (int)i, 0, 0, 0, &n->scratch);
	}
	n->head = head.buf;
	n->head_len = head.len;
	return n;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	nvml_record_stop(n);
	n->be->close(n);
	nvml_raws_release(&n->scratch);
	free(n->gpu);
	free(n->state);
	free(n->head);
	free(n);
}

int nvml_record(struct nvml *n, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return error("cannot create '%s': %s", path, strerror(errno));
	if (n->head_len && fwrite(n->head, 1, n->head_len, f) != n->head_len) {
		fclose(f);
		return error("cannot write '%s': %s", path, strerror(errno));
	}
	n->rec = f;
	n->rec_path = xstrdup(path);
	return 0;
}

int nvml_record_stop(struct nvml *n)
{
	int ret = 0;

	if (!n->rec)
		return 0;
	ret = close_checked(n->rec, n->rec_path);
	n->rec = NULL;
	free(n->rec_path);
	n->rec_path = NULL;
	return ret;
}

int nvml_sample(struct nvml *n, unsigned gpu, unsigned tiers, struct nvml_sample *s)
{
	const struct nvml_sample *st;

	if (gpu >= n->sys.ngpus)
		BUG("gpu %u of %u", gpu, n->sys.ngpus);
	memset(s, 0, sizeof(*s));
	st = &n->gpu[gpu].statics;
	for (unsigned m = 0; m < NVML_M__COUNT; m++)
		if (st->valid[m]) {
			s->v[m] = st->v[m];
			s->valid[m] = 1;
		}
	n->scratch.nr = 0;
	if (n->be->read_tick(n, gpu, tiers & (NVML_TIER_FAST | NVML_TIER_SLOW), &n->scratch,
			     &s->time_ns, &s->mono_ns))
		return -1;
	nvml_decode(n->scratch.r, n->scratch.nr, s, NULL, &n->state[gpu]);
	if (n->rec) {
		struct strbuf line = STRBUF_INIT;
		nvml_replay_line(&line, "tick", (int)gpu, s->time_ns, s->mono_ns, tiers,
				 &n->scratch);
		if (fwrite(line.buf, 1, line.len, n->rec) != line.len) {
			error("cannot write '%s': %s", n->rec_path, strerror(errno));
			fclose(n->rec);
			n->rec = NULL;
		}
		strbuf_release(&line);
	}
	return 0;
}

void nvml_set_budget(struct nvml *n, double fraction, unsigned hz)
{
	n->cpu_budget = fraction > 0 ? fraction : 0;
	n->budget_hz = hz ? hz : 1;
}

double nvml_steer_budget(double nvml_budget, double budget, double used_share, double floor)
{
	double f = used_share > 0 ? budget / used_share : 2.0;

	if (f > 2.0)
		f = 2.0;
	if (f < 0.5)
		f = 0.5;
	nvml_budget *= f;
	if (nvml_budget > budget)
		nvml_budget = budget;
	if (nvml_budget < floor)
		nvml_budget = floor;
	return nvml_budget;
}

void nvml_costs(struct nvml *n, struct strbuf *sb)
{
	if (n->be->costs)
		n->be->costs(n, sb);
}

void nvml_fair_rates(const double *cost_s, const double *base_hz, double *rate_hz, size_t n,
		     double budget)
{
	size_t *order = xcalloc(n ? n : 1, sizeof(*order));
	double left = budget;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	/* by demand (cost x base rate), smallest first; insertion sort of a few dozen */
	for (size_t i = 1; i < n; i++) {
		size_t x = order[i], j = i;
		while (j > 0 && cost_s[order[j - 1]] * base_hz[order[j - 1]] > cost_s[x] * base_hz[x]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		size_t x = order[i];
		double share = left / (double)(n - i);
		double demand = cost_s[x] * base_hz[x];
		if (demand <= share || cost_s[x] <= 0) {
			rate_hz[x] = base_hz[x];
			left -= demand;
		} else {
			rate_hz[x] = share / cost_s[x];
			left -= share;
		}
	}
	free(order);
}
