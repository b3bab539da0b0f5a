/*
 * stats_sum.c - the summary reports that can be computed while rows stream
 * past: cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_kern_gb_sum,
 * cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, osrt_sum.
 *
 * Each groups rows by a key and keeps one value per row (a duration or a
 * byte count), since the median needs them all.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static inline void put(struct stats_acc *a, const uint32_t *key, uint64_t v)
{
	struct grp *g = grpmap_get(&a->g, key);

	u64vec_push(&g->d, v);
	g->total += v;
}

static const char *name_or(const struct model *m, uint32_t id, const char *unknown)
{
	const char *s = model_str(m, id);
	return *s ? s : unknown;
}

/* ---- cuda_api_sum ---- */

static inline void put_name(struct stats_acc *a, uint32_t stream, uint32_t name, uint64_t v)
{
	struct grp *g = stats_acc_name_group(a, stream, name);

	u64vec_push(&g->d, v);
	g->total += v;
}

static void api_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	const struct trace_api *r = rec;

	put_name(a, stream, r->name_id, dur(r->start, r->end));
}

/* Rows of @a: one per group, summary columns then @name_col from key[0]. */
static void name_summary(struct stats_acc *a, const struct model *m, struct stats_table *t,
			 const char *count_col, const char *name_col, const char *unknown)
{
	size_t c0 = st_summary_cols(t, count_col), cn = st_col(t, name_col, STATS_STR);
	uint64_t grand = 0;

	grpmap_sort_by_total(&a->g);
	for (size_t i = 0; i < a->g.n; i++)
		grand += a->g.v[i].total;
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *g = &a->g.v[i];
		struct summ s;
		size_t r = st_row(t);

		summ_compute(g->d.v, g->d.n, &s);
		st_summary_row(t, r, c0, &s, grand);
		st_str(t, r, cn, name_or(m, g->key[0], unknown));
	}
}

static void api_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	name_summary(a, m, t, "Num Calls", "Name", "[unknown]");
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_API, "CUDA API calls", a->filtered);
}

const struct stats_report_def stats_def_cuda_api_sum = {
	.name = "cuda_api_sum",
	.title = "CUDA API Summary",
	.types = 1u << TRACE_EV_API,
	.add = api_add,
	.key0_string = 1,
	.table = api_table,
};

/* ---- cuda_gpu_kern_sum ---- */

static void kern_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	const struct trace_kernel *r = rec;

	put_name(a, stream, r->name_id, dur(r->start, r->end));
}

static void kern_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	name_summary(a, m, t, "Instances", "Name", "[unknown kernel]");
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels", a->filtered);
}

const struct stats_report_def stats_def_cuda_gpu_kern_sum = {
	.name = "cuda_gpu_kern_sum",
	.title = "CUDA GPU Kernel Summary",
	.types = 1u << TRACE_EV_KERNEL,
	.add = kern_add,
	.key0_string = 1,
	.table = kern_table,
	.kernel_names = 1,
};

/* ---- cuda_gpu_kern_gb_sum ---- */

static void kern_gb_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	const struct trace_kernel *r = rec;
	uint32_t key[GRP_KEY_WORDS] = { r->name_id, stream, r->grid[0], r->grid[1], r->grid[2],
					r->block[0], r->block[1], r->block[2] };

	put(a, key, dur(r->start, r->end));
}

static void kern_gb_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	size_t c0 = st_summary_cols(t, "Instances");
	size_t cg = st_col(t, "GridXYZ", STATS_STR);
	size_t cb = st_col(t, "BlockXYZ", STATS_STR);
	size_t cn = st_col(t, "Name", STATS_STR);
	uint64_t grand = 0;

	grpmap_sort_by_total(&a->g);
	for (size_t i = 0; i < a->g.n; i++)
		grand += a->g.v[i].total;
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *g = &a->g.v[i];
		struct summ s;
		char buf[64];
		size_t r = st_row(t);

		summ_compute(g->d.v, g->d.n, &s);
		st_summary_row(t, r, c0, &s, grand);
		snprintf(buf, sizeof(buf), "%u %u %u", g->key[2], g->key[3], g->key[4]);
		st_str(t, r, cg, buf);
		snprintf(buf, sizeof(buf), "%u %u %u", g->key[5], g->key[6], g->key[7]);
		st_str(t, r, cb, buf);
		st_str(t, r, cn, name_or(m, g->key[0], "[unknown kernel]"));
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels", a->filtered);
}

const struct stats_report_def stats_def_cuda_gpu_kern_gb_sum = {
	.name = "cuda_gpu_kern_gb_sum",
	.title = "CUDA GPU Kernel/Grid/Block Summary",
	.types = 1u << TRACE_EV_KERNEL,
	.add = kern_gb_add,
	.key0_string = 1,
	.table = kern_gb_table,
	.kernel_names = 1,
};

/* ---- cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum ---- */

const char *stats_copy_op_name(unsigned kind)
{
	switch (kind) {
	case COPY_HTOD: return "[CUDA memcpy Host-to-Device]";
	case COPY_DTOH: return "[CUDA memcpy Device-to-Host]";
	case COPY_HTOA: return "[CUDA memcpy Host-to-Array]";
	case COPY_ATOH: return "[CUDA memcpy Array-to-Host]";
	case COPY_ATOA: return "[CUDA memcpy Array-to-Array]";
	case COPY_ATOD: return "[CUDA memcpy Array-to-Device]";
	case COPY_DTOA: return "[CUDA memcpy Device-to-Array]";
	case COPY_DTOD: return "[CUDA memcpy Device-to-Device]";
	case COPY_HTOH: return "[CUDA memcpy Host-to-Host]";
	case COPY_PTOP: return "[CUDA memcpy Peer-to-Peer]";
	case STATS_OP_MEMSET: return "[CUDA memset]";
	default: return "[CUDA memcpy Unknown]";
	}
}

static void mem_time_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	uint32_t key[GRP_KEY_WORDS] = { 0 };

	if (type == TRACE_EV_MEMCPY) {
		const struct trace_memcpy *r = rec;
		key[0] = r->kind;
		put(a, key, dur(r->start, r->end));
	} else {
		const struct trace_memset *r = rec;
		key[0] = STATS_OP_MEMSET;
		put(a, key, dur(r->start, r->end));
	}
}

static void mem_time_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	size_t c0 = st_summary_cols(t, "Count"), cn = st_col(t, "Operation", STATS_STR);
	uint64_t grand = 0;

	grpmap_sort_by_total(&a->g);
	for (size_t i = 0; i < a->g.n; i++)
		grand += a->g.v[i].total;
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *g = &a->g.v[i];
		struct summ s;
		size_t r = st_row(t);

		summ_compute(g->d.v, g->d.n, &s);
		st_summary_row(t, r, c0, &s, grand);
		st_str(t, r, cn, stats_copy_op_name(g->key[0]));
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA memory operations", a->filtered);
}

const struct stats_report_def stats_def_cuda_gpu_mem_time_sum = {
	.name = "cuda_gpu_mem_time_sum",
	.title = "CUDA GPU MemOps Summary (by Time)",
	.types = 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET,
	.add = mem_time_add,
	.table = mem_time_table,
};

static void mem_size_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	uint32_t key[GRP_KEY_WORDS] = { 0 };

	if (type == TRACE_EV_MEMCPY) {
		const struct trace_memcpy *r = rec;
		key[0] = r->kind;
		put(a, key, r->bytes);
	} else {
		const struct trace_memset *r = rec;
		key[0] = STATS_OP_MEMSET;
		put(a, key, r->bytes);
	}
}

static void mem_size_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	size_t ct = st_col(t, "Total (MB)", STATS_BYTES);
	size_t cc = st_col(t, "Count", STATS_INT);
	size_t ca = st_col(t, "Avg (MB)", STATS_BYTES);
	size_t cm = st_col(t, "Med (MB)", STATS_BYTES);
	size_t cmin = st_col(t, "Min (MB)", STATS_BYTES);
	size_t cmax = st_col(t, "Max (MB)", STATS_BYTES);
	size_t cs = st_col(t, "StdDev (MB)", STATS_BYTES);
	size_t cn = st_col(t, "Operation", STATS_STR);

	grpmap_sort_by_total(&a->g);
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *g = &a->g.v[i];
		struct summ s;
		size_t r = st_row(t);

		summ_compute(g->d.v, g->d.n, &s);
		st_f(t, r, ct, (double)s.total);
		st_int(t, r, cc, (int64_t)s.count);
		st_f(t, r, ca, s.avg);
		st_f(t, r, cm, s.med);
		st_f(t, r, cmin, (double)s.min);
		st_f(t, r, cmax, (double)s.max);
		st_f(t, r, cs, s.stddev);
		st_str(t, r, cn, stats_copy_op_name(g->key[0]));
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA memory operations", a->filtered);
}

const struct stats_report_def stats_def_cuda_gpu_mem_size_sum = {
	.name = "cuda_gpu_mem_size_sum",
	.title = "CUDA GPU MemOps Summary (by Size)",
	.types = 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET,
	.add = mem_size_add,
	.table = mem_size_table,
};

/* ---- osrt_sum ---- */

static void osrt_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	const struct trace_osrt *r = rec;
	uint32_t key[GRP_KEY_WORDS] = { r->func };

	put(a, key, dur(r->start, r->end));
}

static void osrt_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	size_t c0 = st_summary_cols(t, "Num Calls"), cn = st_col(t, "Name", STATS_STR);
	uint64_t grand = 0;

	grpmap_sort_by_total(&a->g);
	for (size_t i = 0; i < a->g.n; i++)
		grand += a->g.v[i].total;
	for (size_t i = 0; i < a->g.n; i++) {
		struct grp *g = &a->g.v[i];
		const char *name = trace_osrt_name(g->key[0]);
		char buf[32];
		struct summ s;
		size_t r = st_row(t);

		summ_compute(g->d.v, g->d.n, &s);
		st_summary_row(t, r, c0, &s, grand);
		if (!name) {
			snprintf(buf, sizeof(buf), "osrt function %u", g->key[0]);
			name = buf;
		}
		st_str(t, r, cn, name);
	}
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_OSRT, "OS runtime calls", a->filtered);
}

const struct stats_report_def stats_def_osrt_sum = {
	.name = "osrt_sum",
	.title = "OS Runtime Summary",
	.types = 1u << TRACE_EV_OSRT,
	.add = osrt_add,
	.table = osrt_table,
};
