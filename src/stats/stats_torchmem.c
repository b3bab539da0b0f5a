/*
 * stats_torchmem.c - torch_mem_sum: PyTorch's caching allocator per process
 * and device, from the profile hook's samples of torch.cuda.memory_stats()
 * or Kineto's [memory] events (docs/memory.md).
 *
 * One row per (process, device): how many samples (and how many at step
 * boundaries), the largest and the last allocated and reserved bytes seen,
 * the allocator's own peaks, the largest inactive-split bytes and their
 * largest share of reserved (fragmentation), and the allocator's counters at
 * the last sample (retries, OOMs) with the largest segment count.  A value
 * the source did not measure (Kineto has no split or counters) is "-".
 * The note counts out-of-memory events and names the first.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

struct tm_row {
	uint32_t pid, device;
	uint64_t n, nstep;
	uint64_t alloc_max, alloc_last, res_max, res_last, alloc_peak, res_peak;
	uint64_t split_max;
	double frag_max;           /* inactive_split / reserved, 0..1 */
	uint64_t retries, ooms, segments_max;
	unsigned flags;            /* TRACE_TM_HAS_* seen on every sample that set them */
	int kineto;                /* some samples came from Kineto's [memory] events */
};

static struct tm_row *row_of(struct tm_row **v, size_t *n, size_t *alloc, uint32_t pid,
			     uint32_t device)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid && (*v)[i].device == device)
			return &(*v)[i];
	ALLOC_GROW(*v, *n + 1, *alloc);
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].pid = pid;
	(*v)[*n].device = device;
	return &(*v)[(*n)++];
}

static int torchmem_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct tm_row *rows = NULL;
	size_t nrows = 0, arows = 0, nooms = 0;
	size_t cpid, cdev, csrc, cn, cstep, cam, cal, crm, crl, cap, crp, csp, cfr, cre, coo, cse;
	const struct trace_oom *first_oom = NULL;

	(void)o;
	cpid = st_col(t, "PID", STATS_INT);
	cdev = st_col(t, "Device", STATS_INT);
	csrc = st_col(t, "Source", STATS_STR);
	cn = st_col(t, "Samples", STATS_INT);
	cstep = st_col(t, "Step Samples", STATS_INT);
	cam = st_col(t, "Allocated Max (MB)", STATS_BYTES);
	cal = st_col(t, "Allocated Last (MB)", STATS_BYTES);
	crm = st_col(t, "Reserved Max (MB)", STATS_BYTES);
	crl = st_col(t, "Reserved Last (MB)", STATS_BYTES);
	cap = st_col(t, "Allocator Peak Allocated (MB)", STATS_BYTES);
	crp = st_col(t, "Allocator Peak Reserved (MB)", STATS_BYTES);
	csp = st_col(t, "Inactive Split Max (MB)", STATS_BYTES);
	cfr = st_col(t, "Fragmentation Max (%)", STATS_PCT);
	cre = st_col(t, "Retries", STATS_INT);
	coo = st_col(t, "OOMs", STATS_INT);
	cse = st_col(t, "Segments Max", STATS_INT);

	for (size_t i = 0; i < m->torch_mem.n; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		struct tm_row *r;
		if (f && !stats_filter_pass(f, x->time, x->time))
			continue;
		r = row_of(&rows, &nrows, &arows, x->pid, x->device);
		if (!r->n)
			r->flags = x->flags;
		r->flags &= x->flags | TRACE_TM_HAS_STEP;
		r->n++;
		r->nstep += x->kind == TRACE_TM_STEP;
		r->kineto |= x->kind == TRACE_TM_ALLOC;
		if (x->allocated > r->alloc_max)
			r->alloc_max = x->allocated;
		r->alloc_last = x->allocated;
		if (x->flags & TRACE_TM_HAS_RESERVED) {
			if (x->reserved > r->res_max)
				r->res_max = x->reserved;
			r->res_last = x->reserved;
		}
		if (x->flags & TRACE_TM_HAS_PEAKS) {
			if (x->allocated_peak > r->alloc_peak)
				r->alloc_peak = x->allocated_peak;
			if (x->reserved_peak > r->res_peak)
				r->res_peak = x->reserved_peak;
		}
		if (x->flags & TRACE_TM_HAS_ACTIVE) {
			if (x->inactive_split > r->split_max)
				r->split_max = x->inactive_split;
			if (x->reserved && (double)x->inactive_split / (double)x->reserved > r->frag_max)
				r->frag_max = (double)x->inactive_split / (double)x->reserved;
		}
		if (x->flags & TRACE_TM_HAS_COUNTS) {
			r->retries = x->retries;
			r->ooms = x->ooms;
			if (x->segments > r->segments_max)
				r->segments_max = x->segments;
		}
	}
	for (size_t i = 0; i < m->ooms.n; i++) {
		if (f && !stats_filter_pass(f, m->ooms.v[i].time, m->ooms.v[i].time))
			continue;
		if (m->ooms.v[i].flags & TRACE_OOM_PEAK)
			continue; /* a peak's snapshot, not an out-of-memory */
		if (!nooms++)
			first_oom = &m->ooms.v[i];
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct tm_row *x = &rows[i];
		size_t r = st_row(t);
		st_int(t, r, cpid, x->pid);
		st_int(t, r, cdev, x->device);
		st_str(t, r, csrc, x->kineto ? "kineto [memory]" : "profile hook");
		st_int(t, r, cn, (int64_t)x->n);
		st_int(t, r, cstep, (int64_t)x->nstep);
		st_f(t, r, cam, (double)x->alloc_max);
		st_f(t, r, cal, (double)x->alloc_last);
		if (x->flags & TRACE_TM_HAS_RESERVED) {
			st_f(t, r, crm, (double)x->res_max);
			st_f(t, r, crl, (double)x->res_last);
		}
		if (x->flags & TRACE_TM_HAS_PEAKS) {
			st_f(t, r, cap, (double)x->alloc_peak);
			st_f(t, r, crp, (double)x->res_peak);
		}
		if (x->flags & TRACE_TM_HAS_ACTIVE) {
			st_f(t, r, csp, (double)x->split_max);
			st_f(t, r, cfr, x->frag_max * 100.0);
		}
		if (x->flags & TRACE_TM_HAS_COUNTS) {
			st_int(t, r, cre, (int64_t)x->retries);
			st_int(t, r, coo, (int64_t)x->ooms);
			st_int(t, r, cse, (int64_t)x->segments_max);
		}
	}
	if (!nrows && !nooms)
		st_no_data(t, m, MODEL_HAS_TORCH_MEM, "PyTorch allocator samples", f && f->active);
	if (nooms) {
		char b1[32], b2[32];
		const struct trace_oom *x = first_oom;
		/* MB as the table's columns: 10^6 bytes */
		snprintf(b1, sizeof(b1), "%.1f", (double)x->requested / 1e6);
		if (x->flags & TRACE_OOM_HAS_DEVICE_FREE)
			snprintf(b2, sizeof(b2), "%.1f", (double)x->device_free / 1e6);
		else
			snprintf(b2, sizeof(b2), "-");
		st_note(t, "%zu out-of-memory event%s; the first: pid %u device %u asked for %s MB with %s MB free",
			nooms, nooms == 1 ? "" : "s", x->pid, x->device, b1, b2);
	}
	free(rows);
	return 0;
}

const struct stats_report_def stats_def_torch_mem_sum = {
	.name = "torch_mem_sum",
	.title = "PyTorch CUDA Caching Allocator",
	.types = 1u << TRACE_EV_TORCH_MEM | 1u << TRACE_EV_OOM,
	.run = torchmem_run,
};
