/*
 * stats_nccl.c - message sizes of communication kernels and the nccl_sum
 * report (stats_nccl.h says where the sizes come from and how the
 * bandwidths are defined).
 */
#include "stats_nccl.h"
#include "stats_int.h"
#include "../model/kernel_class.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The table's name of the dtype @d (@n bytes long) and its size; NULL, 0 when unknown. */
static const char *dtype_lookup(const char *d, size_t n, uint32_t *size)
{
	/* PyTorch's ScalarType names, as Kineto writes them (c10::toString) */
	static const struct { const char *name; uint32_t size; } t[] = {
		{ "Float", 4 }, { "Double", 8 }, { "Half", 2 }, { "BFloat16", 2 },
		{ "Long", 8 }, { "Int", 4 }, { "Short", 2 }, { "Char", 1 }, { "Byte", 1 },
		{ "Bool", 1 }, { "ComplexHalf", 4 }, { "ComplexFloat", 8 }, { "ComplexDouble", 16 },
		{ "UInt16", 2 }, { "UInt32", 4 }, { "UInt64", 8 },
		{ "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 }, { "Float8_e4m3fnuz", 1 },
		{ "Float8_e5m2fnuz", 1 }, { "Float8_e8m0fnu", 1 },
	};

	*size = 0;
	if (!d)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (strlen(t[i].name) == n && !memcmp(d, t[i].name, n)) {
			*size = t[i].size;
			return t[i].name;
		}
	return NULL;
}

uint32_t nccl_dtype_size(const char *d)
{
	uint32_t size;

	dtype_lookup(d, d ? strlen(d) : 0, &size);
	return size;
}

/* The collective of a "Collective name" ("allreduce", "_allgather_base", "reduce", "send"). */
static const char *coll_of(const char *s)
{
	const char *c = kernel_collective(s);

	if (c)
		return c;
	/* the words kernel_collective() takes only inside a kernel name */
	if (!strcmp(s, "reduce"))
		return "reduce";
	if (!strcmp(s, "send") || !strcmp(s, "recv") || !strcmp(s, "recvAnysource"))
		return "send/recv";
	return NULL;
}

static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

int nccl_parse(const char *text, struct nccl_msg *x)
{
	const char *s = text, *e;
	int found = 0, word = 0;
	uint64_t in = 0, out = 0, grp = 0;
	int has_in = 0, has_out = 0;

	x->coll = NULL;
	x->dtype = "";
	x->in_nelems = x->out_nelems = 0;
	x->elem_size = 0;
	x->group = 0;
	x->has_nelems = 0;
	x->bytes = 0;
	if (!text)
		return -1;
	/*
	 * "allreduce BFloat16 in=N out=N group=N pg=..." : the first words
	 * without '=' are the collective and the dtype; the pg part is last and
	 * may hold spaces ("[0, 1]"), so parsing stops there.
	 */
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s || !strncmp(s, "pg=", 3))
			break;
		e = strchr(s, ' ');
		if (!e)
			e = s + strlen(s);
		if (!memchr(s, '=', (size_t)(e - s))) {
			if (word == 0) {
				char buf[96];
				size_t n = (size_t)(e - s) < sizeof(buf) - 1 ? (size_t)(e - s) : sizeof(buf) - 1;
				memcpy(buf, s, n);
				buf[n] = 0;
				x->coll = coll_of(buf);
				found = 1;
			} else if (word == 1) {
				const char *dn = dtype_lookup(s, (size_t)(e - s), &x->elem_size);
				x->dtype = dn ? dn : "";
				found = 1;
			}
			word++;
		} else if (!strncmp(s, "in=", 3)) {
			has_in = parse_u64(s + 3, e, &in) == 0;
			found |= has_in;
		} else if (!strncmp(s, "out=", 4)) {
			has_out = parse_u64(s + 4, e, &out) == 0;
			found |= has_out;
		} else if (!strncmp(s, "group=", 6)) {
			if (parse_u64(s + 6, e, &grp) == 0 && grp > 0 && grp < INT32_MAX)
				x->group = (int)grp;
			found = 1;
		}
		s = e;
	}
	if (has_in || has_out) {
		x->has_nelems = 1;
		x->in_nelems = has_in ? in : out;
		x->out_nelems = has_out ? out : in;
	}
	return found ? 0 : -1;
}

double nccl_bus_factor(const char *coll, int n)
{
	if (!coll || n <= 0)
		return 0;
	if (!strcmp(coll, "all-reduce"))
		return 2.0 * (n - 1) / n;
	if (!strcmp(coll, "all-gather") || !strcmp(coll, "reduce-scatter") || !strcmp(coll, "all-to-all"))
		return (double)(n - 1) / n;
	if (!strcmp(coll, "broadcast") || !strcmp(coll, "reduce") || !strcmp(coll, "send/recv"))
		return 1;
	return 0;
}

/* A "kineto:collective" range: its key (start, end, stream) and pid. */
struct nr {
	uint64_t start, end;
	uint32_t stream, pid;
	size_t idx;
};

static int cmp_nr(const void *a, const void *b)
{
	const struct nr *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t nccl_msgs_build(const struct model *m, struct nccl_msgs *out)
{
	uint32_t d = strtab_find(&m->str, "kineto:collective");
	struct nr *r = NULL;
	size_t nr = 0, alloc = 0, oalloc = 0;

	memset(out, 0, sizeof(*out));
	if (d == UINT32_MAX)
		return 0;
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *v = &m->nvtx.v[i];
		if (v->domain_id != d || !v->end)
			continue;
		ALLOC_GROW(r, nr + 1, alloc);
		r[nr].start = v->start;
		r[nr].end = v->end;
		r[nr].stream = v->category; /* the importer's range: category = the kernel's stream */
		r[nr].pid = v->pid;
		r[nr++].idx = i;
	}
	if (nr)
		qsort(r, nr, sizeof(*r), cmp_nr);
	for (size_t k = 0; nr && k < m->kernels.n; k++) {
		const struct trace_kernel *kn = &m->kernels.v[k];
		size_t lo = 0, hi = nr, best = SIZE_MAX;
		struct nccl_msg x;
		if (!kernel_is_comm(m, kn, NULL))
			continue;
		while (lo < hi) { /* the first range not before (start, end, stream) */
			size_t mid = lo + (hi - lo) / 2;
			const struct nr *q = &r[mid];
			if (q->start < kn->start || (q->start == kn->start && (q->end < kn->end ||
			    (q->end == kn->end && q->stream < kn->stream))))
				lo = mid + 1;
			else
				hi = mid;
		}
		/* several on one key (merged ranks): the one of the kernel's process first */
		for (size_t j = lo; j < nr && r[j].start == kn->start && r[j].end == kn->end &&
		     r[j].stream == kn->stream; j++)
			if (best == SIZE_MAX || r[j].pid == kn->pid)
				best = j;
		if (best == SIZE_MAX)
			continue;
		if (nccl_parse(model_str(m, m->nvtx.v[r[best].idx].name_id), &x) < 0)
			continue;
		x.kernel = k;
		if (x.has_nelems && x.elem_size) {
			uint64_t ne = x.in_nelems > x.out_nelems ? x.in_nelems : x.out_nelems;
			if (ne <= UINT64_MAX / x.elem_size) /* a damaged count is unknown, not a wrapped size */
				x.bytes = ne * x.elem_size;
		}
		ALLOC_GROW(out->v, out->n + 1, oalloc);
		out->v[out->n++] = x;
	}
	free(r);
	return out->n;
}

void nccl_msgs_release(struct nccl_msgs *out)
{
	free(out->v);
	memset(out, 0, sizeof(*out));
}

/* ---- nccl_sum ---- */

/* One row: the kernels of one (collective, dtype, size, group). */
struct nrow {
	const char *coll, *dtype;
	uint64_t bytes;
	int group;
	uint64_t count, total_ns;
};

static int cmp_nrow(const void *a, const void *b)
{
	const struct nrow *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->coll ? x->coll : "", y->coll ? y->coll : "");
}

static int nccl_sum_run(const struct model *m, const struct stats_opts *o,
			const struct stats_filter *f, struct stats_table *t)
{
	struct nccl_msgs s;
	struct nrow *rows = NULL;
	size_t nrows = 0, alloc = 0, ncomm = 0, sized = 0;
	size_t cc, cd, cg, cs, cn, ct, ca, calg, cbus;

	(void)o;
	cc = st_col(t, "Collective", STATS_STR);
	cd = st_col(t, "Dtype", STATS_STR);
	cg = st_col(t, "Group", STATS_INT);
	cs = st_col(t, "Size (B)", STATS_INT);
	cn = st_col(t, "Count", STATS_INT);
	ct = st_col(t, "Total Time (ns)", STATS_DUR);
	ca = st_col(t, "Avg (ns)", STATS_DURF);
	calg = st_col(t, "AlgBW (GB/s)", STATS_FLOAT);
	cbus = st_col(t, "BusBW (GB/s)", STATS_FLOAT);
	if (f->active)
		st_note(t, "nccl_sum covers the whole run: --start/--end/--nvtx do not apply");
	for (size_t k = 0; k < m->kernels.n; k++)
		ncomm += kernel_is_comm(m, &m->kernels.v[k], NULL);
	nccl_msgs_build(m, &s);
	for (size_t i = 0; i < s.n; i++) {
		const struct nccl_msg *x = &s.v[i];
		const struct trace_kernel *k = &m->kernels.v[x->kernel];
		size_t j;
		if (!x->has_nelems)
			continue;
		sized++;
		for (j = 0; j < nrows; j++)
			if (rows[j].coll == x->coll && rows[j].dtype == x->dtype &&
			    rows[j].bytes == x->bytes && rows[j].group == x->group)
				break;
		if (j == nrows) {
			ALLOC_GROW(rows, nrows + 1, alloc);
			memset(&rows[nrows], 0, sizeof(rows[nrows]));
			rows[nrows].coll = x->coll;
			rows[nrows].dtype = x->dtype;
			rows[nrows].bytes = x->bytes;
			rows[nrows++].group = x->group;
		}
		rows[j].count++;
		rows[j].total_ns += k->end > k->start ? k->end - k->start : 0;
	}
	if (!nrows) {
		st_empty(t, "%s: no message sizes of communication kernels were recorded in this report (%zu communication kernels; sizes come from PyTorch's profiler traces: docs/distributed.md)",
			 t->report, ncomm);
		nccl_msgs_release(&s);
		return 0;
	}
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), cmp_nrow);
	for (size_t j = 0; j < nrows; j++) {
		const struct nrow *w = &rows[j];
		size_t r = st_row(t);
		double fct = nccl_bus_factor(w->coll, w->group);
		st_str(t, r, cc, w->coll ? w->coll : "-");
		if (*w->dtype)
			st_str(t, r, cd, w->dtype);
		if (w->group)
			st_int(t, r, cg, w->group);
		if (w->bytes)
			st_int(t, r, cs, (int64_t)w->bytes);
		st_int(t, r, cn, (int64_t)w->count);
		st_int(t, r, ct, (int64_t)w->total_ns);
		st_f(t, r, ca, (double)w->total_ns / (double)w->count);
		/* bytes per ns are GB/s (1e9 bytes per second, as nccl-tests prints) */
		if (w->bytes && w->total_ns) {
			double alg = (double)w->bytes * (double)w->count / (double)w->total_ns;
			st_f(t, r, calg, alg);
			if (fct > 0)
				st_f(t, r, cbus, alg * fct);
		}
	}
	st_note(t, "%zu of %zu communication kernels have message sizes; busbw = algbw x nccl-tests' factor (all-reduce 2(n-1)/n, all-gather, reduce-scatter, all-to-all (n-1)/n, others 1); kernel times include the wait for later ranks",
		sized, ncomm);
	free(rows);
	nccl_msgs_release(&s);
	return 0;
}

const struct stats_report_def stats_def_nccl_sum = {
	.name = "nccl_sum",
	.title = "NCCL Collectives by Message Size",
	.run = nccl_sum_run,
};
