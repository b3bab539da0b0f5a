/*
 * stats_torch.c - torch_op_sum: PyTorch's operator view (as TensorBoard's
 * "Operator" page shows it) from a Kineto trace or an NVTX-annotated run.
 *
 * An operator instance is an NVTX range that is one of:
 *  - a Kineto cpu_op event (the importer puts them in the domain
 *    "kineto:cpu_op"): its name is the operator ("aten::mm");
 *  - a range of the default domain whose name starts with a namespaced
 *    identifier, "NS::NAME" alone or followed by ", ": what
 *    torch.autograd.profiler.emit_nvtx() pushes ("aten::mm, seq = 12,
 *    op_id = 3, sizes = [[2, 3], [3, 4]]"); the operator is the part
 *    before the first ", ".
 * Only ended ranges count.
 *
 * Per instance, on its thread (ranges nest there: push/pop or Kineto's
 * nesting):
 *  - CPU total: its duration; CPU self: its duration less its direct child
 *    operators' durations;
 *  - GPU self: the time of the kernels whose launching API call (joined by
 *    process and correlation id) started inside it and inside no child
 *    operator; GPU total: the kernels launched inside it or any operator
 *    within it.  Copies and sets are not kernels and do not count.
 *  - input shapes: Kineto's "Input Dims" of the event (record_shapes), or
 *    emit_nvtx's "sizes = [...]" part; "-" where none was recorded.
 * Rows are one per operator and input shapes (TensorBoard's "group by
 * operator + input shape"), sorted by GPU self time, then CPU self time,
 * largest first.  An operator nested in one of the same name (aten::to in
 * aten::to) counts in its own row as well, so totals of a row can hold
 * another row's time, as in TensorBoard.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

#define CPU_OP_DOMAIN "kineto:cpu_op"

struct op {
	uint32_t pid, tid;
	uint64_t start, end;
	size_t parent;             /* index + 1 of the enclosing operator, 0 = none */
	uint64_t child_ns;         /* sum of direct children's durations */
	uint64_t gpu_self, gpu_total;
	uint32_t kernels;          /* kernels launched directly */
	uint32_t name, shapes;     /* ids in the local string table */
};

static int cmp_op(const void *pa, const void *pb)
{
	const struct op *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* the enclosing range first */
	return (a->end < b->end) - (a->end > b->end);
}

static int ident_char(char c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/*
 * The length of the operator name at the start of an emit_nvtx range name
 * ("aten::mm, seq = 12" -> 8), or 0 when @s is not one: NS::NAME where NS and
 * NAME are identifiers (NAME may hold '.', "aten::add.Tensor"), followed by
 * the end or ", ".
 */
static size_t nvtx_op_len(const char *s)
{
	size_t i = 0;

	if (!ident_char(s[0], 1))
		return 0;
	while (ident_char(s[i], 0))
		i++;
	if (s[i] != ':' || s[i + 1] != ':' || !ident_char(s[i + 2], 1))
		return 0;
	for (i += 2; s[i] && s[i] != ','; i++)
		if (!ident_char(s[i], 0) && s[i] != ':' && s[i] != '.')
			return 0;
	if (s[i] == ',' && s[i + 1] != ' ')
		return 0;
	return i;
}

/* emit_nvtx's "sizes = [...]" part of @s: its start and *@len, or NULL. */
static const char *nvtx_sizes(const char *s, size_t *len)
{
	const char *p = strstr(s, ", sizes = [");
	int depth = 0;
	size_t i;

	if (!p)
		return NULL;
	p += strlen(", sizes = ");
	for (i = 0; p[i]; i++) {
		depth += p[i] == '[' ? 1 : p[i] == ']' ? -1 : 0;
		if (!depth)
			break;
	}
	if (depth || !p[i])
		return NULL;
	*len = i + 1;
	return p;
}

static uint32_t local_id(struct strtab *tab, const char *s, size_t n)
{
	return strtab_intern_n(tab, s, n);
}

/* GPU self (aux), then CPU self (aux2), largest first; ties by key. */
static int cmp_row(const void *pa, const void *pb)
{
	const struct grp *a = pa, *b = pb;

	if (a->aux != b->aux)
		return a->aux > b->aux ? -1 : 1;
	if (a->aux2 != b->aux2)
		return a->aux2 > b->aux2 ? -1 : 1;
	return memcmp(a->key, b->key, sizeof(a->key));
}

/* Kineto's shapes: the op_shapes row of the same thread, start and name; index + 1 or 0. */
static const char *kineto_dims(const struct model *m, const struct stats_tix *ix, size_t n,
			       const struct trace_nvtx_range *r)
{
	size_t lo = 0, hi = n;
	struct stats_tix key = { r->pid, r->tid, r->start, 0 };

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (stats_cmp_tix(&ix[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && ix[lo].pid == r->pid && ix[lo].tid == r->tid && ix[lo].start == r->start; lo++) {
		const struct model_op_shape *s = &m->op_shapes.v[ix[lo].idx];
		if (s->name_id == r->name_id && s->dims_id)
			return model_str(m, s->dims_id);
	}
	return NULL;
}

/* The innermost operator of thread (pid, tid) that holds time @t: index or SIZE_MAX. */
static size_t op_at(const struct op *ops, size_t n, uint32_t pid, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = n, i;
	struct op key = { .pid = pid, .tid = tid, .start = t, .end = 0 };

	/* the last operator of the thread starting at or before @t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_op(&ops[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return SIZE_MAX;
	i = lo - 1;
	if (ops[i].pid != pid || ops[i].tid != tid)
		return SIZE_MAX;
	/* climb to the first that still runs at @t */
	for (;;) {
		if (ops[i].start <= t && t < ops[i].end)
			return i;
		if (!ops[i].parent)
			return SIZE_MAX;
		i = ops[i].parent - 1;
	}
}

static int torch_op_sum_run(const struct model *m, const struct stats_opts *o,
			    const struct stats_filter *f, struct stats_table *t)
{
	struct strtab tab;
	struct op *ops = NULL;
	size_t nops = 0, alloc = 0, *stack = NULL, depth = 0;
	struct stats_tix *six = NULL;
	size_t nsix = 0;
	struct model_corr corr;
	struct grpmap g = { 0 };
	uint32_t none;
	size_t cn, csh, cc, ctt, cts, cgt, cgs, ck;

	(void)o;
	strtab_init(&tab);
	none = strtab_intern(&tab, "-");
	if (m->op_shapes.n) {
		six = xmalloc(m->op_shapes.n * sizeof(*six));
		for (size_t i = 0; i < m->op_shapes.n; i++)
			six[nsix++] = (struct stats_tix){ m->op_shapes.v[i].pid, m->op_shapes.v[i].tid,
							  m->op_shapes.v[i].start, i };
		if (nsix)
			qsort(six, nsix, sizeof(*six), stats_cmp_tix);
	}
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		const char *name = model_str(m, r->name_id), *dom = model_str(m, r->domain_id), *sh = NULL;
		size_t len = 0, shlen = 0;
		struct op *p;

		if (r->end <= r->start || !stats_filter_pass(f, r->start, r->end))
			continue;
		if (!strcmp(dom, CPU_OP_DOMAIN)) {
			len = strlen(name);
			sh = kineto_dims(m, six, nsix, r);
			shlen = sh ? strlen(sh) : 0;
		} else if (!*dom && (len = nvtx_op_len(name))) {
			sh = nvtx_sizes(name, &shlen);
		} else {
			continue;
		}
		ALLOC_GROW(ops, nops + 1, alloc);
		p = &ops[nops++];
		memset(p, 0, sizeof(*p));
		p->pid = r->pid;
		p->tid = r->tid;
		p->start = r->start;
		p->end = r->end;
		p->name = local_id(&tab, name, len);
		p->shapes = sh && shlen ? local_id(&tab, sh, shlen) : none;
	}
	free(six);

	cn = st_col(t, "Operator", STATS_STR);
	csh = st_col(t, "Input Shapes", STATS_STR);
	cc = st_col(t, "Calls", STATS_INT);
	ctt = st_col(t, "CPU Total (ns)", STATS_DUR);
	cts = st_col(t, "CPU Self (ns)", STATS_DUR);
	cgt = st_col(t, "GPU Total (ns)", STATS_DUR);
	cgs = st_col(t, "GPU Self (ns)", STATS_DUR);
	ck = st_col(t, "Kernels", STATS_INT);
	if (!nops) {
		strtab_release(&tab);
		free(ops);
		if (!m->nvtx.n)
			st_no_data(t, m, MODEL_HAS_NVTX, "PyTorch operators (torch.profiler cpu_op events or "
				   "emit_nvtx ranges)", f->active);
		else
			st_empty(t, "%s: no PyTorch operator among the NVTX ranges (record with torch.profiler, "
				 "or with torch.autograd.profiler.emit_nvtx() under gpuscope profile)", t->report);
		return 0;
	}

	/* nesting per thread: a stack of open operators */
	if (nops)
		qsort(ops, nops, sizeof(*ops), cmp_op);
	stack = xmalloc(nops * sizeof(*stack));
	for (size_t i = 0; i < nops; i++) {
		if (i && (ops[i].pid != ops[i - 1].pid || ops[i].tid != ops[i - 1].tid))
			depth = 0;
		while (depth && ops[stack[depth - 1]].end <= ops[i].start)
			depth--;
		/* a range that outlives its parent (unbalanced) is not nested in it */
		while (depth && ops[stack[depth - 1]].end < ops[i].end)
			depth--;
		if (depth) {
			ops[i].parent = stack[depth - 1] + 1;
			ops[stack[depth - 1]].child_ns += ops[i].end - ops[i].start;
		}
		stack[depth++] = i;
	}
	free(stack);

	/* kernels to the operator that launched them */
	model_corr_build(&corr, m);
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		const struct trace_api *a = model_corr_find(&corr, m, k->pid, k->correlation);
		uint64_t d = k->end > k->start ? k->end - k->start : 0;
		size_t at;

		if (!a || (at = op_at(ops, nops, a->pid, a->tid, a->start)) == SIZE_MAX)
			continue;
		ops[at].gpu_self += d;
		ops[at].kernels++;
		for (size_t p = at + 1; p; p = ops[p - 1].parent)
			ops[p - 1].gpu_total += d;
	}
	model_corr_release(&corr);

	/* one row per operator and shapes; aux: GPU self, aux2: CPU self, d: CPU durations */
	for (size_t i = 0; i < nops; i++) {
		uint32_t key[GRP_KEY_WORDS] = { ops[i].name, ops[i].shapes };
		struct grp *gr = grpmap_get(&g, key);
		uint64_t dur = ops[i].end - ops[i].start;
		gr->total += ops[i].gpu_total;
		gr->aux += ops[i].gpu_self;
		gr->aux2 += dur > ops[i].child_ns ? dur - ops[i].child_ns : 0;
		u64vec_push(&gr->d, dur);
		u64vec_push(&gr->d, ops[i].kernels);
	}
	/* the groups' slots are not used after this: sorting the array is safe */
	if (g.n)
		qsort(g.v, g.n, sizeof(*g.v), cmp_row);
	for (size_t i = 0; i < g.n; i++) {
		const struct grp *gr = &g.v[i];
		uint64_t cpu = 0, kernels = 0;
		size_t r = st_row(t);
		for (size_t k = 0; k + 1 < gr->d.n; k += 2) {
			cpu += gr->d.v[k];
			kernels += gr->d.v[k + 1];
		}
		st_str(t, r, cn, strtab_get(&tab, gr->key[0]));
		st_str(t, r, csh, strtab_get(&tab, gr->key[1]));
		st_int(t, r, cc, (int64_t)(gr->d.n / 2));
		st_int(t, r, ctt, (int64_t)cpu);
		st_int(t, r, cts, (int64_t)gr->aux2);
		if (m->has & MODEL_HAS_CUDA) {
			st_int(t, r, cgt, (int64_t)gr->total);
			st_int(t, r, cgs, (int64_t)gr->aux);
			st_int(t, r, ck, (int64_t)kernels);
		}
	}
	if (!(m->has & MODEL_HAS_CUDA))
		st_note(t, "no kernels in this input: the GPU columns are unknown");
	grpmap_release(&g);
	strtab_release(&tab);
	free(ops);
	return 0;
}

const struct stats_report_def stats_def_torch_op_sum = {
	.name = "torch_op_sum",
	.title = "PyTorch Operator Summary",
	.types = 1u << TRACE_EV_NVTX_RANGE,
	.run = torch_op_sum_run,
};
