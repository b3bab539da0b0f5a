/*
 * stats_eff.c - each kernel's achieved throughput against its GPU's peaks
 * (cuda_kern_eff) and kernel time by class (cuda_kern_class_sum).
 *
 * A kernel's work comes from the operator that launched it: the kernel's
 * (pid, correlation) names its launching API call (model_corr); the call
 * names its operator by Kineto's External id (model.h, struct
 * model_op_launch), or, where the trace's External ids do not name
 * operators (older Kineto), the innermost CPU operator range that encloses
 * the call on its thread is the operator.  The operator's input shapes give
 * FLOPs and bytes (stats_work.c); the GPU facts table gives the peaks.
 * docs/stats.md says which peak is used when, and why.
 */
#include "stats_int.h"
#include "../model/gpu_facts.h"
#include "../model/kernel_class.h"

#include <stdlib.h>
#include <string.h>

/* Longest kernel name in the Name column (kernel_label shortens the rest). */
#define EFF_NAME_MAX 80
/* Longest operator name in the Op column (autograd node names can be long C++ types). */
#define EFF_OP_MAX 48

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

/* ---- linking kernels to operators ---- */

struct ext_ent {
	uint32_t pid, idx;
	uint64_t ext;
};

struct launch_ent {
	uint32_t pid, corr;
	uint64_t ext;
};

/* A CPU-operator range (NVTX domain "kineto:cpu_op"), with its enclosing range. */
struct range_ent {
	uint32_t pid, tid;
	uint64_t start, end;
	uint32_t name;
	int32_t parent;            /* index in the sorted ranges, -1 = outermost */
};

/* An op-shape row by (pid, tid, start, name), to find the row of a range. */
struct opkey_ent {
	uint32_t pid, tid;
	uint64_t start;
	uint32_t name, idx;
};

struct links {
	const struct model *m;
	struct model_corr corr;
	struct ext_ent *ext;
	size_t next;
	struct launch_ent *launch;
	size_t nlaunch;
	struct range_ent *ranges;
	size_t nranges;
	struct opkey_ent *opkeys;
	size_t nopkeys;
	uint64_t by_ext, by_range;  /* API calls linked each way */
};

static int cmp_ext(const void *pa, const void *pb)
{
	const struct ext_ent *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->ext > b->ext) - (a->ext < b->ext);
}

static int cmp_launch(const void *pa, const void *pb)
{
	const struct launch_ent *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->corr > b->corr) - (a->corr < b->corr);
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct range_ent *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* the outer of two ranges that start together comes first */
	return (a->end < b->end) - (a->end > b->end);
}

static int cmp_opkey(const void *pa, const void *pb)
{
	const struct opkey_ent *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

static void links_build(struct links *l, const struct model *m)
{
	uint32_t dom = strtab_find(&m->str, "kineto:cpu_op");
	int32_t *stack;
	size_t sp = 0, ralloc = 0;

	memset(l, 0, sizeof(*l));
	l->m = m;
	if (!m->op_shapes.n)
		return;
	model_corr_build(&l->corr, m);

	l->ext = xmalloc(m->op_shapes.n * sizeof(*l->ext));
	l->opkeys = xmalloc(m->op_shapes.n * sizeof(*l->opkeys));
	for (size_t i = 0; i < m->op_shapes.n; i++) {
		const struct model_op_shape *o = &m->op_shapes.v[i];
		struct opkey_ent *k = &l->opkeys[l->nopkeys++];
		k->pid = o->pid;
		k->tid = o->tid;
		k->start = o->start;
		k->name = o->name_id;
		k->idx = (uint32_t)i;
		if (o->ext_id) {
			l->ext[l->next].pid = o->pid;
			l->ext[l->next].ext = o->ext_id;
			l->ext[l->next++].idx = (uint32_t)i;
		}
	}
	qsort(l->ext, l->next, sizeof(*l->ext), cmp_ext);
	qsort(l->opkeys, l->nopkeys, sizeof(*l->opkeys), cmp_opkey);

	if (m->op_launches.n) {
		l->launch = xmalloc(m->op_launches.n * sizeof(*l->launch));
		for (size_t i = 0; i < m->op_launches.n; i++) {
			l->launch[i].pid = m->op_launches.v[i].pid;
			l->launch[i].corr = m->op_launches.v[i].correlation;
			l->launch[i].ext = m->op_launches.v[i].ext_id;
		}
		l->nlaunch = m->op_launches.n;
		qsort(l->launch, l->nlaunch, sizeof(*l->launch), cmp_launch);
	}

	for (size_t i = 0; dom != UINT32_MAX && i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		if (r->domain_id != dom || !r->end)
			continue;
		ALLOC_GROW(l->ranges, l->nranges + 1, ralloc);
		l->ranges[l->nranges].pid = r->pid;
		l->ranges[l->nranges].tid = r->tid;
		l->ranges[l->nranges].start = r->start;
		l->ranges[l->nranges].end = r->end;
		l->ranges[l->nranges].name = r->name_id;
		l->nranges++;
	}
	if (!l->nranges)
		return;
	qsort(l->ranges, l->nranges, sizeof(*l->ranges), cmp_range);
	/* each range's parent: the nearest earlier range on its thread that encloses it */
	stack = xmalloc(l->nranges * sizeof(*stack));
	sp = 0;
	for (size_t i = 0; i < l->nranges; i++) {
		struct range_ent *r = &l->ranges[i];
		if (i && (r->pid != r[-1].pid || r->tid != r[-1].tid))
			sp = 0;
		while (sp && l->ranges[stack[sp - 1]].end < r->end)
			sp--;
		r->parent = sp ? stack[sp - 1] : -1;
		stack[sp++] = (int32_t)i;
	}
	free(stack);
}

static void links_release(struct links *l)
{
	if (l->m && l->m->op_shapes.n)
		model_corr_release(&l->corr);
	free(l->ext);
	free(l->launch);
	free(l->ranges);
	free(l->opkeys);
	memset(l, 0, sizeof(*l));
}

static int encloses(const struct model_op_shape *o, const struct trace_api *a)
{
	return o->pid == a->pid && o->tid == a->tid && o->start <= a->start && a->end <= o->end;
}

/* The op-shape row of the operator that made API call @a, or -1. */
static long op_of_api(struct links *l, const struct trace_api *a)
{
	const struct model *m = l->m;
	size_t lo = 0, hi = l->nranges;

	if (l->nlaunch) {
		struct launch_ent k = { a->pid, a->correlation, 0 }, *f;
		f = bsearch(&k, l->launch, l->nlaunch, sizeof(*l->launch), cmp_launch);
		if (f) {
			struct ext_ent e = { f->pid, 0, f->ext }, *x;
			x = bsearch(&e, l->ext, l->next, sizeof(*l->ext), cmp_ext);
			/* an External id is trusted when its op encloses the call (true of every
			 * match in the traces we have); one that does not is a stray number */
			if (x && encloses(&m->op_shapes.v[x->idx], a)) {
				l->by_ext++;
				return x->idx;
			}
		}
	}
	/* the last range of the thread that starts at or before the call */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct range_ent *r = &l->ranges[mid];
		int before = r->pid != a->pid ? r->pid < a->pid :
			     r->tid != a->tid ? r->tid < a->tid : r->start <= a->start;
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		long c = (long)lo - 1;
		const struct range_ent *r = &l->ranges[c];
		if (r->pid != a->pid || r->tid != a->tid)
			return -1;
		while (c >= 0 && l->ranges[c].end < a->end)
			c = l->ranges[c].parent;
		if (c >= 0) {
			struct opkey_ent k = { a->pid, a->tid, l->ranges[c].start, l->ranges[c].name, 0 }, *f;
			f = bsearch(&k, l->opkeys, l->nopkeys, sizeof(*l->opkeys), cmp_opkey);
			if (f) {
				l->by_range++;
				return f->idx;
			}
		}
	}
	return -1;
}

/* The op-shape row of the operator that launched the GPU row (pid, corr), or -1. */
static long op_of_gpu(struct links *l, uint32_t pid, uint32_t corr)
{
	const struct trace_api *a;

	if (!l->m->op_shapes.n || !corr)
		return -1;
	a = model_corr_find(&l->corr, l->m, pid, corr);
	return a ? op_of_api(l, a) : -1;
}

/* ---- kernel classes, cached by name ---- */

struct classes {
	struct grpmap map;         /* key {name_id}: aux = index + 1 */
	struct kernel_info *v;
	size_t n, alloc;
};

static const struct kernel_info *class_of(struct classes *c, const struct model *m, uint32_t name)
{
	uint32_t key[GRP_KEY_WORDS] = { name };
	struct grp *g = grpmap_get(&c->map, key);

	if (!g->aux) {
		ALLOC_GROW(c->v, c->n + 1, c->alloc);
		kernel_classify(model_str(m, name), NULL, &c->v[c->n]);
		g->aux = ++c->n;
	}
	return &c->v[g->aux - 1];
}

static void classes_release(struct classes *c)
{
	grpmap_release(&c->map);
	free(c->v);
}

/* ---- GPU facts, cached by device ---- */

struct devfacts {
	uint32_t device;
	struct gpu_facts f;
};

struct devcache {
	struct devfacts *v;
	size_t n, alloc;
};

static const struct gpu_facts *facts_of(struct devcache *c, const struct model *m, uint32_t device)
{
	const struct trace_device *d;
	struct devfacts *x;

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].device == device)
			return &c->v[i].f;
	ALLOC_GROW(c->v, c->n + 1, c->alloc);
	x = &c->v[c->n++];
	x->device = device;
	d = model_device(m, device);
	if (!d && m->devices.n) {
		/*
		 * No device row has this id (a ROCm trace lists its one visible GPU as
		 * device 0 while its kernels say 2): when every device row is the same
		 * GPU model, that model is this one too.
		 */
		const struct trace_device *d0 = &m->devices.v[0];
		int same = 1;
		for (size_t i = 1; i < m->devices.n && same; i++)
			same = m->devices.v[i].name_id == d0->name_id &&
			       m->devices.v[i].cc_major == d0->cc_major &&
			       m->devices.v[i].cc_minor == d0->cc_minor &&
			       m->devices.v[i].sm_count == d0->sm_count;
		if (same)
			d = d0;
	}
	if (d)
		gpu_facts_lookup(model_str(m, d->name_id), d->cc_major, d->cc_minor, d->sm_count,
				 d->global_mem, &x->f);
	else
		gpu_facts_lookup(NULL, 0, 0, 0, 0, &x->f);
	return &x->f;
}

/* ---- the precision a peak is read for ---- */

/* The precision of an operator's first input type, KPREC_UNKNOWN when none. */
static enum kernel_prec dtype_prec(const char *types)
{
	static const struct { const char *t; enum kernel_prec p; } map[] = {
		{ "\"c10::BFloat16\"", KPREC_BF16 }, { "\"c10::Half\"", KPREC_FP16 },
		{ "\"float\"", KPREC_FP32 }, { "\"double\"", KPREC_FP64 },
		{ "\"c10::Float8_e4m3fn\"", KPREC_FP8 }, { "\"c10::Float8_e5m2\"", KPREC_FP8 },
		{ "\"c10::Float8_e4m3fnuz\"", KPREC_FP8 }, { "\"c10::Float8_e5m2fnuz\"", KPREC_FP8 },
	};

	if (!types || types[0] != '[')
		return KPREC_UNKNOWN;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strncmp(types + 1, map[i].t, strlen(map[i].t)))
			return map[i].p;
	return KPREC_UNKNOWN;
}

/*
 * The peak a kernel is held against (docs/stats.md, "Which peak"): the
 * tensor-core peak of its precision when it runs on tensor cores, or when
 * that is not known and it is a GEMM/conv/attention kernel in a precision
 * that only tensor cores run at full rate (BF16, FP16, FP8; TF32 exists only
 * on tensor cores); the CUDA-core FP32 peak for FP32 work not on tensor
 * cores.  GF__N when the table has no peak for the case (FP64, INT8, FP16
 * on CUDA cores).
 */
static enum gpu_fact peak_fact(enum kernel_prec p, enum kernel_tc tc, int matmul, const char **label)
{
	int on_tc = tc == KTC_YES || (tc == KTC_UNKNOWN && matmul && p != KPREC_FP32) ||
		    p == KPREC_TF32;

	*label = NULL;
	if (on_tc) {
		switch (p) {
		case KPREC_FP32:
		case KPREC_TF32: *label = "tf32 tensor"; return GF_TF32;
		case KPREC_BF16: *label = "bf16 tensor"; return GF_BF16;
		case KPREC_FP16: *label = "fp16 tensor"; return GF_BF16;
		case KPREC_FP8: *label = "fp8 tensor"; return GF_FP8;
		default: return GF__N;
		}
	}
	if (p == KPREC_FP32) {
		*label = "fp32 cuda-core";
		return GF_FP32;
	}
	return GF__N;
}

/* ---- the rows ---- */

enum row_kind { RK_KERNEL, RK_COPY, RK_SET };

struct eff_row {
	uint32_t kind, name, op, device;   /* name: kernel name id, or copy kind */
	uint64_t count, total;
	uint64_t nflops, nbytes;           /* instances whose FLOPs / bytes are known */
	double flops, flops_ns, bytes, bytes_ns;
	enum kernel_prec op_prec;
};

struct eff {
	const struct model *m;
	struct links l;
	struct classes cls;
	struct devcache dev;
	struct eff_row *rows;
	size_t nrows, alloc;
	struct grpmap index;
	uint64_t kernels, linked, with_flops;
	uint64_t ops_assumed, ops_unfit; /* operators whose work needed an assumption / fit no formula */
};

static struct eff_row *row_get(struct eff *e, uint32_t kind, uint32_t name, uint32_t op,
			       uint32_t device)
{
	uint32_t key[GRP_KEY_WORDS] = { kind, name, op, device };
	struct grp *g = grpmap_get(&e->index, key);

	if (!g->aux) {
		ALLOC_GROW(e->rows, e->nrows + 1, e->alloc);
		memset(&e->rows[e->nrows], 0, sizeof(e->rows[0]));
		e->rows[e->nrows].kind = kind;
		e->rows[e->nrows].name = name;
		e->rows[e->nrows].op = op;
		e->rows[e->nrows].device = device;
		g->aux = ++e->nrows;
	}
	return &e->rows[g->aux - 1];
}

/* Per operator instance: its work and the time of the kernels that share it. */
struct op_acc {
	double mm_ns, all_ns;      /* time of its matmul-class kernels, of all its kernels */
	uint32_t n_mm, n_all;
	int state;                 /* 0 not computed, 1 computed */
	struct stats_op_work w;
};

/*
 * Which of an operator's kernels carry its work: a GEMM, convolution or
 * attention op's work is done by its kernels of those classes (not by the
 * layout and copy kernels it also launches: cuDNN's NCHW-to-NHWC, split-K
 * reductions); when it launched none of them (a GEMM that cuBLAS ran as a
 * GEMV, classified as a reduction) all its kernels carry it, as they do for
 * every other op.  1 = matmul-class kernels, 3 = all.
 */
static int work_group(const struct op_acc *o)
{
	return o->w.matmul && o->n_mm ? 1 : 3;
}

/* 1: a GEMM, convolution or attention kernel; 0: anything else. */
static int kernel_group(const struct kernel_info *ki)
{
	return ki->op == KOP_GEMM || ki->op == KOP_CONV || ki->op == KOP_ATTENTION;
}

static void eff_compute(struct eff *e, const struct model *m, const struct stats_filter *f)
{
	const size_t nk = m->kernels.n;
	struct op_acc *ops = NULL;
	long *kop = NULL;

	memset(e, 0, sizeof(*e));
	e->m = m;
	links_build(&e->l, m);
	if (m->op_shapes.n) {
		ops = xcalloc(m->op_shapes.n, sizeof(*ops));
		kop = xmalloc((nk ? nk : 1) * sizeof(*kop));
	}
	/* pass 1: each kernel's operator, and the time each operator's kernels take */
	for (size_t i = 0; ops && i < nk; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		const struct kernel_info *ki;
		struct op_acc *o;
		uint64_t d = dur(k->start, k->end);

		kop[i] = -1;
		if (!stats_filter_pass(f, k->start, k->end))
			continue;
		kop[i] = op_of_gpu(&e->l, k->pid, k->correlation);
		if (kop[i] < 0)
			continue;
		o = &ops[kop[i]];
		if (!o->state) {
			const struct model_op_shape *s = &m->op_shapes.v[kop[i]];
			int ret = stats_op_work(model_str(m, s->name_id), model_str(m, s->dims_id),
						s->types_id ? model_str(m, s->types_id) : NULL,
						s->concrete_id ? model_str(m, s->concrete_id) : NULL, &o->w);
			o->state = 1;
			if (ret < 0)
				e->ops_unfit++;
			else if (ret > 0 && o->w.note)
				e->ops_assumed++;
		}
		ki = class_of(&e->cls, m, k->name_id);
		o->all_ns += (double)d;
		o->n_all++;
		if (kernel_group(ki)) {
			o->mm_ns += (double)d;
			o->n_mm++;
		}
	}
	/* pass 2: the rows; an operator's work is split over its work kernels by time */
	for (size_t i = 0; i < nk; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		const struct kernel_info *ki;
		const struct op_acc *o = NULL;
		const struct model_op_shape *s = NULL;
		struct eff_row *r;
		uint64_t d = dur(k->start, k->end);

		if (!stats_filter_pass(f, k->start, k->end))
			continue;
		e->kernels++;
		if (kop && kop[i] >= 0) {
			o = &ops[kop[i]];
			s = &m->op_shapes.v[kop[i]];
			e->linked++;
		}
		r = row_get(e, RK_KERNEL, k->name_id, s ? s->name_id : 0, k->device);
		r->count++;
		r->total += d;
		if (s && !r->op_prec)
			r->op_prec = dtype_prec(s->types_id ? model_str(m, s->types_id) : NULL);
		if (o && (o->w.has_flops || o->w.has_bytes)) {
			int wg = work_group(o);
			double share, pool = wg == 1 ? o->mm_ns : o->all_ns;
			ki = class_of(&e->cls, m, k->name_id);
			if (wg == 1 && !kernel_group(ki))
				continue;
			share = pool > 0 ? (double)d / pool : 1.0 / (double)(wg == 1 ? o->n_mm : o->n_all);
			if (o->w.has_flops) {
				r->flops += o->w.flops * share;
				r->flops_ns += (double)d;
				r->nflops++;
				e->with_flops++;
			}
			if (o->w.has_bytes) {
				r->bytes += o->w.bytes * share;
				r->bytes_ns += (double)d;
				r->nbytes++;
			}
		}
	}
	/* copies and sets: bytes are recorded */
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *c = &m->memcpys.v[i];
		long op;
		struct eff_row *r;

		if (!stats_filter_pass(f, c->start, c->end))
			continue;
		op = op_of_gpu(&e->l, c->pid, c->correlation);
		r = row_get(e, RK_COPY, c->kind, op >= 0 ? m->op_shapes.v[op].name_id : 0, c->device);
		r->count++;
		r->total += dur(c->start, c->end);
		r->bytes += (double)c->bytes;
		r->bytes_ns += (double)dur(c->start, c->end);
		r->nbytes++;
	}
	for (size_t i = 0; i < m->memsets.n; i++) {
		const struct trace_memset *c = &m->memsets.v[i];
		long op;
		struct eff_row *r;

		if (!stats_filter_pass(f, c->start, c->end))
			continue;
		op = op_of_gpu(&e->l, c->pid, c->correlation);
		r = row_get(e, RK_SET, 0, op >= 0 ? m->op_shapes.v[op].name_id : 0, c->device);
		r->count++;
		r->total += dur(c->start, c->end);
		r->bytes += (double)c->bytes;
		r->bytes_ns += (double)dur(c->start, c->end);
		r->nbytes++;
	}
	free(ops);
	free(kop);
}

static void eff_release(struct eff *e)
{
	links_release(&e->l);
	classes_release(&e->cls);
	free(e->dev.v);
	free(e->rows);
	grpmap_release(&e->index);
}

/* A row's compute peak (TFLOP/s), its label and source; 0 when unknown. */
static double row_peak(struct eff *e, const struct eff_row *r, const char **label,
		       const char **src)
{
	const struct kernel_info *ki = class_of(&e->cls, e->m, r->name);
	const struct gpu_facts *gf = facts_of(&e->dev, e->m, r->device);
	enum kernel_prec p = ki->prec != KPREC_UNKNOWN ? ki->prec : r->op_prec;
	int matmul = ki->op == KOP_GEMM || ki->op == KOP_CONV || ki->op == KOP_ATTENTION;
	enum gpu_fact f = peak_fact(p, ki->tc, matmul, label);

	*src = NULL;
	if (f == GF__N || gf->f[f].src == GFS_UNKNOWN || gf->f[f].v <= 0)
		return 0;
	*src = gpu_fact_src_name(gf->f[f].src);
	return gf->f[f].v;
}

/*
 * A copy's or set's bandwidth ceiling (GB/s) for its traffic (bytes moved
 * through that ceiling per byte copied: 2 for a device-to-device copy, which
 * reads and writes device memory); 0 when unknown.
 */
static double row_bw_peak(struct eff *e, const struct eff_row *r, double *traffic,
			  const char **label, const char **src)
{
	const struct gpu_facts *gf = facts_of(&e->dev, e->m, r->device);
	enum gpu_fact f = GF_MEM_BW;
	double div = 1;

	*traffic = 1;
	*label = "memory";
	if (r->kind == RK_COPY) {
		switch (r->name) {
		case COPY_HTOD: case COPY_DTOH: case COPY_HTOA: case COPY_ATOH:
			/* the table gives the host link both ways; a copy goes one way */
			f = GF_PCIE;
			div = 2;
			*label = "host link (one way)";
			break;
		case COPY_DTOD: case COPY_ATOA: case COPY_ATOD: case COPY_DTOA:
			*traffic = 2;
			*label = "memory (read + write)";
			break;
		case COPY_PTOP:
			f = gf->f[GF_NVLINK].src != GFS_UNKNOWN && gf->f[GF_NVLINK].v > 0 ? GF_NVLINK : GF_PCIE;
			div = 2;
			*label = f == GF_NVLINK ? "nvlink (one way)" : "host link (one way)";
			break;
		default:
			*label = NULL;
			*src = NULL;
			return 0;
		}
	}
	*src = NULL;
	if (gf->f[f].src == GFS_UNKNOWN || gf->f[f].v <= 0)
		return 0;
	*src = gpu_fact_src_name(gf->f[f].src);
	return gf->f[f].v / div;
}

static int cmp_row_total(const void *pa, const void *pb)
{
	const struct eff_row *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return (a->device > b->device) - (a->device < b->device);
}

/* ---- cuda_kern_eff ---- */

enum {
	EC_PCT, EC_TOTAL, EC_COUNT, EC_DEV, EC_CLASS, EC_LIB, EC_PREC, EC_TC, EC_FLOPS, EC_NFLOPS,
	EC_TFLOPS, EC_PEAK, EC_PEAK_KIND, EC_PEAK_SRC, EC_PEAK_PCT, EC_BYTES, EC_GBS, EC_BW_PEAK,
	EC_BW_KIND, EC_BW_SRC, EC_BW_PCT, EC_OP, EC_NAME,
};

static int eff_run(const struct model *m, const struct stats_opts *o, const struct stats_filter *f,
		   struct stats_table *t)
{
	struct eff e;
	uint64_t grand = 0;

	(void)o;
	st_col(t, "Time (%)", STATS_PCT);
	st_col(t, "Total Time (ns)", STATS_DUR);
	st_col(t, "Instances", STATS_INT);
	st_col(t, "Device", STATS_INT);
	st_col(t, "Class", STATS_STR);
	st_col(t, "Library", STATS_STR);
	st_col(t, "Precision", STATS_STR);
	st_col(t, "Tensor Cores", STATS_STR);
	st_col(t, "GFLOP", STATS_FLOAT);
	st_col(t, "FLOP Inst", STATS_INT);
	st_col(t, "TFLOP/s", STATS_FLOAT);
	st_col(t, "Peak TFLOP/s", STATS_FLOAT);
	st_col(t, "Peak", STATS_STR);
	st_col(t, "Peak Source", STATS_STR);
	st_col(t, "Peak (%)", STATS_PCT);
	st_col(t, "Bytes (MB)", STATS_BYTES);
	st_col(t, "GB/s", STATS_FLOAT);
	st_col(t, "Peak GB/s", STATS_FLOAT);
	st_col(t, "BW Peak", STATS_STR);
	st_col(t, "BW Source", STATS_STR);
	st_col(t, "BW Peak (%)", STATS_PCT);
	st_col(t, "Op", STATS_STR);
	st_col(t, "Name", STATS_STR);

	eff_compute(&e, m, f);
	if (e.nrows > 1)
		qsort(e.rows, e.nrows, sizeof(*e.rows), cmp_row_total);
	for (size_t i = 0; i < e.nrows; i++)
		grand += e.rows[i].total;
	for (size_t i = 0; i < e.nrows; i++) {
		const struct eff_row *x = &e.rows[i];
		size_t r = st_row(t);
		const char *label, *src;
		char buf[EFF_NAME_MAX * 2 + 16];

		st_f(t, r, EC_PCT, grand ? 100.0 * (double)x->total / (double)grand : 0);
		st_int(t, r, EC_TOTAL, (int64_t)x->total);
		st_int(t, r, EC_COUNT, (int64_t)x->count);
		st_int(t, r, EC_DEV, x->device);
		if (x->op)
			st_str(t, r, EC_OP, kernel_label(buf, sizeof(buf), model_str(m, x->op), EFF_OP_MAX));
		if (x->kind == RK_KERNEL) {
			const struct kernel_info *ki = class_of(&e.cls, m, x->name);
			double peak = row_peak(&e, x, &label, &src);
			const char *name = model_str(m, x->name);

			st_str(t, r, EC_NAME, *name ? kernel_label(buf, sizeof(buf), name, EFF_NAME_MAX)
						    : "[unknown kernel]");
			st_str(t, r, EC_CLASS, kernel_op_name(ki->op));
			st_str(t, r, EC_LIB, kernel_lib_name(ki->lib));
			if (ki->prec != KPREC_UNKNOWN)
				st_str(t, r, EC_PREC, kernel_prec_name(ki->prec));
			if (ki->tc != KTC_UNKNOWN)
				st_str(t, r, EC_TC, kernel_tc_name(ki->tc));
			st_int(t, r, EC_NFLOPS, (int64_t)x->nflops);
			if (label)
				st_str(t, r, EC_PEAK_KIND, label);
			if (peak > 0) {
				st_f(t, r, EC_PEAK, peak);
				st_str(t, r, EC_PEAK_SRC, src);
			}
			if (x->nflops) {
				/* FLOP per ns is GFLOP/s; / 1000 is TFLOP/s */
				double tflops = x->flops_ns > 0 ? x->flops / x->flops_ns / 1e3 : 0;
				st_f(t, r, EC_FLOPS, x->flops / 1e9);
				if (x->flops_ns > 0) {
					st_f(t, r, EC_TFLOPS, tflops);
					if (peak > 0)
						st_f(t, r, EC_PEAK_PCT, 100.0 * tflops / peak);
				}
			}
			if (x->nbytes) {
				const struct gpu_facts *gf = facts_of(&e.dev, m, x->device);
				st_f(t, r, EC_BYTES, x->bytes);
				st_str(t, r, EC_BW_KIND, "memory");
				if (x->bytes_ns > 0) {
					double gbs = x->bytes / x->bytes_ns;
					st_f(t, r, EC_GBS, gbs);
					if (gf->f[GF_MEM_BW].src != GFS_UNKNOWN && gf->f[GF_MEM_BW].v > 0) {
						st_f(t, r, EC_BW_PEAK, gf->f[GF_MEM_BW].v);
						st_str(t, r, EC_BW_SRC, gpu_fact_src_name(gf->f[GF_MEM_BW].src));
						st_f(t, r, EC_BW_PCT, 100.0 * gbs / gf->f[GF_MEM_BW].v);
					}
				}
			}
		} else {
			double traffic, peak = row_bw_peak(&e, x, &traffic, &label, &src);
			st_str(t, r, EC_NAME, stats_copy_op_name(x->kind == RK_SET ? STATS_OP_MEMSET : x->name));
			st_str(t, r, EC_CLASS, x->kind == RK_SET ? "memset" : "copy");
			st_f(t, r, EC_BYTES, x->bytes);
			if (label)
				st_str(t, r, EC_BW_KIND, label);
			if (x->bytes_ns > 0) {
				double gbs = x->bytes / x->bytes_ns;
				st_f(t, r, EC_GBS, gbs);
				if (peak > 0) {
					st_f(t, r, EC_BW_PEAK, peak);
					st_str(t, r, EC_BW_SRC, src);
					st_f(t, r, EC_BW_PCT, 100.0 * gbs * traffic / peak);
				}
			}
		}
	}
	if (!t->nrows) {
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels or copies", f->active);
	} else if (!m->op_shapes.n) {
		st_note(t, "no operator input shapes in this input (Kineto's record_shapes): FLOPs and kernel bytes are unknown");
	} else {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%llu of %llu kernels linked to an operator with shapes (%llu calls by External id, "
			    "%llu by the enclosing operator); FLOPs known for %llu",
			    (unsigned long long)e.linked, (unsigned long long)e.kernels,
			    (unsigned long long)e.l.by_ext, (unsigned long long)e.l.by_range,
			    (unsigned long long)e.with_flops);
		if (e.ops_assumed)
			strbuf_addf(&sb, "; %llu operators' work assumes what the trace did not record "
				    "(convolution stride 1, padding 0, dilation 1; attention not causal)",
				    (unsigned long long)e.ops_assumed);
		if (e.ops_unfit)
			strbuf_addf(&sb, "; %llu operators' shapes fit no formula (transposed convolution, "
				    "variable-length attention, ...): FLOPs unknown", (unsigned long long)e.ops_unfit);
		st_note(t, "%s", sb.buf);
		strbuf_release(&sb);
	}
	eff_release(&e);
	return 0;
}

const struct stats_report_def stats_def_cuda_kern_eff = {
	.name = "cuda_kern_eff",
	.title = "CUDA Kernel Efficiency (achieved vs peak)",
	.run = eff_run,
};

int stats_kernel_efficiency(const struct model *m, uint32_t kernel_name_id, double *pct_of_peak)
{
	struct eff e;
	double flops = 0, ns = 0, peak = 0;
	int ret = -1, mixed = 0;

	eff_compute(&e, m, NULL);
	for (size_t i = 0; i < e.nrows; i++) {
		const struct eff_row *x = &e.rows[i];
		const char *label, *src;
		double p;

		if (x->kind != RK_KERNEL || x->name != kernel_name_id || !x->nflops)
			continue;
		p = row_peak(&e, x, &label, &src);
		if (peak > 0 && p != peak)
			mixed = 1;
		if (!(peak > 0))
			peak = p;
		flops += x->flops;
		ns += x->flops_ns;
	}
	if (peak > 0 && ns > 0 && !mixed) {
		*pct_of_peak = 100.0 * (flops / ns / 1e3) / peak;
		ret = 0;
	}
	eff_release(&e);
	return ret;
}

/* ---- cuda_kern_class_sum ---- */

static void class_add(struct stats_acc *a, uint32_t stream, unsigned type, const void *rec)
{
	const struct trace_kernel *r = rec;
	struct grp *g = stats_acc_name_group(a, stream, r->name_id);
	uint64_t d = dur(r->start, r->end);

	(void)type;
	g->total += d;
	g->aux++;
	/* d.v stays empty: this report needs totals and counts only */
}

struct class_row {
	struct kernel_info ki;
	uint64_t total, count, names;
};

static int cmp_class_row(const void *pa, const void *pb)
{
	const struct class_row *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->ki.op != b->ki.op)
		return a->ki.op < b->ki.op ? -1 : 1;
	if (a->ki.lib != b->ki.lib)
		return a->ki.lib < b->ki.lib ? -1 : 1;
	if (a->ki.prec != b->ki.prec)
		return a->ki.prec < b->ki.prec ? -1 : 1;
	return (a->ki.tc > b->ki.tc) - (a->ki.tc < b->ki.tc);
}

static void class_table(struct stats_acc *a, const struct model *m, struct stats_table *t)
{
	size_t cp = st_col(t, "Time (%)", STATS_PCT), ct = st_col(t, "Total Time (ns)", STATS_DUR);
	size_t ci = st_col(t, "Instances", STATS_INT), cn = st_col(t, "Kernels", STATS_INT);
	size_t cc = st_col(t, "Class", STATS_STR), cl = st_col(t, "Library", STATS_STR);
	size_t cr = st_col(t, "Precision", STATS_STR), cx = st_col(t, "Tensor Cores", STATS_STR);
	struct grpmap idx = { 0 };
	struct class_row *rows = NULL;
	size_t n = 0, alloc = 0;
	uint64_t grand = 0;

	for (size_t i = 0; i < a->g.n; i++) {
		const struct grp *g = &a->g.v[i];
		struct kernel_info ki;
		uint32_t key[GRP_KEY_WORDS];
		struct grp *x;

		kernel_classify(model_str(m, g->key[0]), NULL, &ki);
		memset(key, 0, sizeof(key));
		key[0] = ki.op;
		key[1] = ki.lib;
		key[2] = ki.prec;
		key[3] = ki.tc;
		x = grpmap_get(&idx, key);
		if (!x->aux) {
			ALLOC_GROW(rows, n + 1, alloc);
			memset(&rows[n], 0, sizeof(rows[0]));
			rows[n].ki = ki;
			x->aux = ++n;
		}
		rows[x->aux - 1].total += g->total;
		rows[x->aux - 1].count += g->aux;
		rows[x->aux - 1].names++;
		grand += g->total;
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_class_row);
	for (size_t i = 0; i < n; i++) {
		size_t r = st_row(t);

		st_f(t, r, cp, grand ? 100.0 * (double)rows[i].total / (double)grand : 0);
		st_int(t, r, ct, (int64_t)rows[i].total);
		st_int(t, r, ci, (int64_t)rows[i].count);
		st_int(t, r, cn, (int64_t)rows[i].names);
		st_str(t, r, cc, kernel_op_name(rows[i].ki.op));
		st_str(t, r, cl, kernel_lib_name(rows[i].ki.lib));
		if (rows[i].ki.prec != KPREC_UNKNOWN)
			st_str(t, r, cr, kernel_prec_name(rows[i].ki.prec));
		if (rows[i].ki.tc != KTC_UNKNOWN)
			st_str(t, r, cx, kernel_tc_name(rows[i].ki.tc));
	}
	free(rows);
	grpmap_release(&idx);
	if (!t->nrows)
		st_no_data(t, m, MODEL_HAS_CUDA, "CUDA kernels", a->filtered);
}

const struct stats_report_def stats_def_cuda_kern_class_sum = {
	.name = "cuda_kern_class_sum",
	.title = "CUDA Kernel Time by Class",
	.types = 1u << TRACE_EV_KERNEL,
	.add = class_add,
	.key0_string = 1,
	.table = class_table,
};
