/*
 * stats_kmetrics.c - cuda_kern_metrics: the hardware counters of every
 * profiled kernel instance (`gpuscope profile --kernel-metrics`).
 *
 * One row per profiled instance (the records of one instance share pid,
 * time, correlation and instance), one column per metric present in the
 * report, in the order of the metric sets (docs/cuda.md, "Kernel
 * metrics"); a metric the report does not know is added after them under
 * its own name.  A counter the GPU lacks, or that could not be read for the
 * instance, is printed "-", never 0.  The kernel's own duration comes from
 * its kernel record (joined by pid and correlation id), else from the
 * counter gpu__time_duration; the replay cost is the host time the launch
 * took under profiling, and "Cost (x)" that time over the kernel's own.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

/* gpuscope's metric keys: the column label and type of each (see kmetrics.c). */
static const struct {
	const char *key, *label;
	int type;
} km_cols[] = {
	{ "sm_throughput_pct", "SM Throughput (%)", STATS_PCT },
	{ "dram_throughput_pct", "DRAM Throughput (%)", STATS_PCT },
	{ "achieved_occupancy_pct", "Achieved Occupancy (%)", STATS_PCT },
	{ "tensor_hmma_pct", "Tensor HMMA Pipe (%)", STATS_PCT },
	{ "tensor_gmma_pct", "Tensor GMMA Pipe (%)", STATS_PCT },
	{ "tensor_pipe_pct", "Tensor Pipe (%)", STATS_PCT },
	{ "tensor_inst", "Tensor Instructions", STATS_FLOAT },
	{ "fma_pipe_pct", "FMA Pipe (%)", STATS_PCT },
	{ "l1_hit_pct", "L1 Hit Rate (%)", STATS_PCT },
	{ "l2_hit_pct", "L2 Hit Rate (%)", STATS_PCT },
	{ "dram_read_bytes", "DRAM Read (MB)", STATS_BYTES },
	{ "dram_write_bytes", "DRAM Written (MB)", STATS_BYTES },
	{ "stall_long_scoreboard", "Stall Long Scoreboard", STATS_FLOAT },
	{ "stall_barrier", "Stall Barrier", STATS_FLOAT },
	{ "stall_math_pipe_throttle", "Stall Math Throttle", STATS_FLOAT },
	{ "stall_mio_throttle", "Stall MIO Throttle", STATS_FLOAT },
	{ "stall_lg_throttle", "Stall LG Throttle", STATS_FLOAT },
	{ "stall_short_scoreboard", "Stall Short Scoreboard", STATS_FLOAT },
	{ "stall_wait", "Stall Wait", STATS_FLOAT },
	{ "stall_not_selected", "Stall Not Selected", STATS_FLOAT },
};

/* The key holding the kernel's duration under profiling (ns), used when no kernel record joins. */
#define KM_DURATION_KEY "duration_ns"

struct km_inst {
	size_t first, n;           /* rows of m->kmetrics */
};

/* Index of @key among the report's columns: known keys first, in km_cols order. */
static size_t key_rank(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(km_cols); i++)
		if (!strcmp(km_cols[i].key, key))
			return i;
	return ARRAY_SIZE(km_cols);
}

struct km_key {
	uint32_t id;
	size_t rank, col;
};

static int cmp_key(const void *pa, const void *pb, void *arg)
{
	const struct km_key *a = pa, *b = pb;
	const struct model *m = arg;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(model_str(m, a->id), model_str(m, b->id));
}

static int same_instance(const struct trace_kmetric *a, const struct trace_kmetric *b)
{
	return a->pid == b->pid && a->time == b->time && a->correlation == b->correlation &&
	       a->instance == b->instance && a->kernel_id == b->kernel_id;
}

/* The kernel record of (pid, correlation) starting at or after @after, or NULL. */
static const struct trace_kernel *find_kernel(const struct model *m, uint32_t pid, uint32_t corr,
					      uint64_t after)
{
	size_t lo = 0, hi = m->kernels.n;

	if (!corr)
		return NULL;
	/* kernels are sorted by start: begin at the first one that starts after the launch */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->kernels.v[mid].start < after)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->kernels.n; i++)
		if (m->kernels.v[i].pid == pid && m->kernels.v[i].correlation == corr)
			return &m->kernels.v[i];
	return NULL;
}

static int kmetrics_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct km_inst *inst = NULL;
	struct km_key *keys = NULL;
	size_t ninst = 0, ainst = 0, nkeys = 0, akeys = 0, kernels = 0;
	uint64_t cost = 0, own = 0, own_n = 0;
	unsigned passes_min = 0, passes_max = 0;
	struct strbuf unavailable = STRBUF_INIT;
	size_t ck, ci, cg, cd, cp, cc, cx;

	(void)o;
	for (size_t i = 0; i < m->kmetrics.n; i++) {
		const struct trace_kmetric *k = &m->kmetrics.v[i];
		size_t j;

		if (!stats_filter_pass(f, k->time, k->time))
			continue;
		if (ninst && same_instance(&m->kmetrics.v[inst[ninst - 1].first], k) &&
		    inst[ninst - 1].first + inst[ninst - 1].n == i) {
			inst[ninst - 1].n++;
		} else {
			ALLOC_GROW(inst, ninst + 1, ainst);
			inst[ninst].first = i;
			inst[ninst].n = 1;
			ninst++;
		}
		for (j = 0; j < nkeys; j++)
			if (keys[j].id == k->key_id)
				break;
		if (j == nkeys && strcmp(model_str(m, k->key_id), KM_DURATION_KEY)) {
			ALLOC_GROW(keys, nkeys + 1, akeys);
			keys[nkeys].id = k->key_id;
			keys[nkeys].rank = key_rank(model_str(m, k->key_id));
			nkeys++;
		}
	}
	if (!ninst) {
		st_no_data(t, m, MODEL_HAS_KMETRICS, "kernel metrics", f && f->active);
		free(inst);
		free(keys);
		return 0;
	}
	if (nkeys > 1)
		qsort_r(keys, nkeys, sizeof(*keys), cmp_key, (void *)m);
	ck = st_col(t, "Kernel", STATS_STR);
	ci = st_col(t, "Instance", STATS_INT);
	cg = st_col(t, "GPU", STATS_INT);
	cd = st_col(t, "Duration (ns)", STATS_DUR);
	cp = st_col(t, "Passes", STATS_INT);
	cc = st_col(t, "Replay Cost (ns)", STATS_DUR);
	cx = st_col(t, "Cost (x)", STATS_FLOAT);
	for (size_t j = 0; j < nkeys; j++) {
		const char *key = model_str(m, keys[j].id);
		if (t->ncols >= STATS_MAX_COLS) {
			keys[j].col = SIZE_MAX; /* more metrics than columns: left out (see note) */
			continue;
		}
		keys[j].col = keys[j].rank < ARRAY_SIZE(km_cols)
				      ? st_col(t, km_cols[keys[j].rank].label, km_cols[keys[j].rank].type)
				      : st_col(t, key, STATS_FLOAT);
	}
	for (size_t n = 0; n < ninst; n++) {
		const struct trace_kmetric *k0 = &m->kmetrics.v[inst[n].first];
		const struct trace_kernel *kr = find_kernel(m, k0->pid, k0->correlation, k0->time);
		size_t r = st_row(t);
		int64_t dur = kr && kr->end > kr->start ? (int64_t)(kr->end - kr->start) : -1;

		if (k0->instance == 0)
			kernels++;
		st_str(t, r, ck, model_str(m, k0->kernel_id));
		st_int(t, r, ci, k0->instance);
		if (k0->device != UINT32_MAX)
			st_int(t, r, cg, k0->device);
		if (k0->passes) {
			st_int(t, r, cp, k0->passes);
			if (!passes_min || k0->passes < passes_min)
				passes_min = k0->passes;
			if (k0->passes > passes_max)
				passes_max = k0->passes;
		}
		for (size_t i = inst[n].first; i < inst[n].first + inst[n].n; i++) {
			const struct trace_kmetric *k = &m->kmetrics.v[i];
			const char *key = model_str(m, k->key_id);
			if (!strcmp(key, KM_DURATION_KEY)) {
				if (dur < 0 && (k->flags & TRACE_KM_VALID) && k->value > 0)
					dur = (int64_t)k->value;
				continue;
			}
			for (size_t j = 0; j < nkeys; j++) {
				if (keys[j].id != k->key_id)
					continue;
				if ((k->flags & TRACE_KM_VALID) && keys[j].col != SIZE_MAX)
					st_f(t, r, keys[j].col, k->value);
				if ((k->flags & TRACE_KM_UNAVAILABLE) &&
				    (!unavailable.len || !strstr(unavailable.buf, key))) {
					strbuf_addf(&unavailable, "%s%s (%s)", unavailable.len ? ", " : "",
						    key, model_str(m, k->metric_id));
				}
				break;
			}
		}
		if (dur >= 0)
			st_int(t, r, cd, dur);
		if (k0->cost_ns) {
			st_int(t, r, cc, (int64_t)k0->cost_ns);
			cost += k0->cost_ns;
			if (dur > 0) {
				st_f(t, r, cx, (double)k0->cost_ns / (double)dur);
				own += (uint64_t)dur;
				own_n++;
			}
		}
	}
	{
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%zu instance%s of %zu kernel%s profiled with kernel replay", ninst,
			    ninst == 1 ? "" : "s", kernels, kernels == 1 ? "" : "s");
		if (passes_max == passes_min && passes_max)
			strbuf_addf(&sb, ": each profiled launch ran its kernel %u time%s (passes)",
				    passes_max, passes_max == 1 ? "" : "s");
		else if (passes_max)
			strbuf_addf(&sb, ": each profiled launch ran its kernel %u to %u times (passes)",
				    passes_min, passes_max);
		if (cost)
			strbuf_addf(&sb, ", %.3f ms of host time in all", (double)cost / 1e6);
		if (own && own_n == ninst)
			strbuf_addf(&sb, ", %.1fx the profiled kernels' own %.3f ms",
				    (double)cost / (double)own, (double)own / 1e6);
		if (unavailable.len)
			strbuf_addf(&sb, "; unavailable on this GPU: %s", unavailable.buf);
		for (size_t j = 0; j < nkeys; j++)
			if (keys[j].col == SIZE_MAX) {
				strbuf_addf(&sb, "; %zu metrics left out (more than %d columns)",
					    nkeys - j, STATS_MAX_COLS);
				break;
			}
		st_note(t, "%s", sb.buf);
		strbuf_release(&sb);
	}
	strbuf_release(&unavailable);
	free(inst);
	free(keys);
	return 0;
}

const struct stats_report_def stats_def_cuda_kern_metrics = {
	.name = "cuda_kern_metrics",
	.title = "CUDA Kernel Hardware Counters (--kernel-metrics)",
	.types = 1u << TRACE_EV_KMETRIC | 1u << TRACE_EV_KERNEL | 1u << TRACE_EV_DEVICE,
	.run = kmetrics_run,
};
