/*
 * ranks.c - processes as ranks of a distributed job: their attributes
 * (TRACE_EV_PROC_ATTR, Kineto's distributedInfo) and keeping one rank alone
 * (`--rank N`).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

void model_proc_attr_unknown(struct trace_proc_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->rank = a->local_rank = a->world_size = -1;
	a->mempolicy = -1;
}

void model_proc_set_attr(struct model *m, uint32_t pid, const struct trace_proc_attr *a)
{
	struct model_process *p = NULL;
	struct trace_proc_attr *d;

	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].pid == pid)
			p = &m->procs.v[i];
	if (!p) {
		p = MODEL_PUSH(m->procs);
		p->pid = pid;
	}
	d = &p->attr;
	if (!p->has_attr) {
		model_proc_attr_unknown(d);
		d->pid = pid;
		p->has_attr = 1;
	}
	if (a->time && !d->time)
		d->time = a->time;
	if (a->rank >= 0)
		d->rank = a->rank;
	if (a->local_rank >= 0)
		d->local_rank = a->local_rank;
	if (a->world_size > 0)
		d->world_size = a->world_size;
	if (a->launcher_id)
		d->launcher_id = a->launcher_id;
	if (a->cpus_id)
		d->cpus_id = a->cpus_id;
	if (a->ncpus)
		d->ncpus = a->ncpus;
	if (a->mempolicy >= 0)
		d->mempolicy = a->mempolicy;
	if (a->cpu_nodes)
		d->cpu_nodes = a->cpu_nodes;
	if (a->mem_nodes)
		d->mem_nodes = a->mem_nodes;
	if (a->flags & (TRACE_PA_CLOCK_WALL | TRACE_PA_CLOCK_COLL | TRACE_PA_REFERENCE)) {
		d->clock_offset_ns = a->clock_offset_ns;
		d->clock_error_ns = a->clock_error_ns;
	}
	d->flags |= a->flags;
}

int model_proc_rank(const struct model *m, uint32_t pid)
{
	const struct model_process *p = model_process(m, pid);

	return p && p->has_attr ? p->attr.rank : -1;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

size_t model_ranks(const struct model *m, int32_t **out)
{
	int32_t *v = NULL;
	size_t n = 0, k = 0;

	*out = NULL;
	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].has_attr && m->procs.v[i].attr.rank >= 0)
			n++;
	if (!n)
		return 0;
	v = xmalloc(n * sizeof(*v));
	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].has_attr && m->procs.v[i].attr.rank >= 0)
			v[k++] = m->procs.v[i].attr.rank;
	if (k)
		qsort(v, k, sizeof(*v), cmp_i32);
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (!n || v[n - 1] != v[i])
			v[n++] = v[i];
	*out = v;
	return n;
}

/* Is @pid one of the @n pids in @pids? (few ranks share a rank number: a scan) */
static int pid_in(const uint32_t *pids, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

#define KEEP_PID(t)                                                          \
	do {                                                                 \
		size_t o_ = 0;                                               \
		for (size_t i_ = 0; i_ < (t).n; i_++)                        \
			if (pid_in(pids, npids, (t).v[i_].pid))              \
				(t).v[o_++] = (t).v[i_];                     \
		(t).n = o_;                                                  \
	} while (0)

int model_keep_rank(struct model *m, int rank)
{
	uint32_t *pids = NULL;
	size_t npids = 0, alloc = 0;
	uint64_t devs = 0;          /* CUDA ordinals 0-63 the rank used */
	unsigned has = m->has;

	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].has_attr && m->procs.v[i].attr.rank == rank) {
			ALLOC_GROW(pids, npids + 1, alloc);
			pids[npids++] = m->procs.v[i].pid;
		}
	if (!npids)
		return error("no process of rank %d in '%s'", rank, m->path ? m->path : "input");
	for (size_t i = 0; i < m->kernels.n; i++)
		if (pid_in(pids, npids, m->kernels.v[i].pid) && m->kernels.v[i].device < 64)
			devs |= 1ull << m->kernels.v[i].device;
	KEEP_PID(m->procs);
	KEEP_PID(m->threads);
	KEEP_PID(m->devices);
	KEEP_PID(m->nvtx);
	KEEP_PID(m->marks);
	KEEP_PID(m->names);
	KEEP_PID(m->osrt);
	KEEP_PID(m->cpu);
	KEEP_PID(m->api);
	KEEP_PID(m->kernels);
	KEEP_PID(m->memcpys);
	KEEP_PID(m->memsets);
	KEEP_PID(m->syncs);
	KEEP_PID(m->memory);
	KEEP_PID(m->captures);
	KEEP_PID(m->kmetrics);
	KEEP_PID(m->op_shapes);
	KEEP_PID(m->op_launches);
	KEEP_PID(m->device_sources);
	/*
	 * GPU metrics are sampled by the profiling process, not by a rank: keep
	 * host counters and the samples of the GPUs this rank ran kernels on.
	 */
	{
		size_t o = 0;
		for (size_t i = 0; i < m->metrics.n; i++) {
			uint32_t d = m->metrics.v[i].device;
			if (d == UINT32_MAX || (d < 64 && (devs & (1ull << d))))
				m->metrics.v[o++] = m->metrics.v[i];
		}
		m->metrics.n = o;
	}
	free(pids);
	model_finish(m);
	m->has |= has;
	return 0;
}
