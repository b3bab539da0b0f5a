/*
 * cuda_check.c - facts and invariants of the CUDA part of a report.
 */
#include "cuda_check.h"

#include <stdlib.h>
#include <string.h>

struct corr_key {
	uint32_t pid, corr;
	uint64_t start;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct corr_key *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

static const struct corr_key *find(const struct corr_key *keys, size_t n, uint32_t pid,
				   uint32_t corr)
{
	struct corr_key k = { pid, corr, 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {    /* first key >= (pid, corr, 0) */
		size_t mid = (lo + hi) / 2;
		if (cmp_key(&keys[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && keys[lo].pid == pid && keys[lo].corr == corr)
		return &keys[lo];
	return NULL;
}

void cuda_check_run(const struct model *m, struct cuda_check *c)
{
	struct corr_key *keys = calloc(m->api.n + 1, sizeof(*keys));
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	c->kernels = m->kernels.n;
	c->apis = m->api.n;
	c->memcpys = m->memcpys.n;
	c->memsets = m->memsets.n;
	c->syncs = m->syncs.n;
	c->memory = m->memory.n;
	c->devices = m->devices.n;
	for (size_t i = 0; i < m->api.n; i++) {
		keys[n].pid = m->api.v[i].pid;
		keys[n].corr = m->api.v[i].correlation;
		keys[n].start = m->api.v[i].start;
		n++;
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 1; i < n; i++)
		if (keys[i].pid == keys[i - 1].pid && keys[i].corr == keys[i - 1].corr)
			c->api_corr_shared++;
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		const struct corr_key *a = find(keys, n, k->pid, k->correlation);
		if (k->flags & TRACE_GPU_GRAPH)
			c->graph_kernels++;
		if (k->flags & TRACE_GPU_COMM)
			c->comm_kernels++;
		if (!a)
			continue;
		c->kernels_matched++;
		if (k->start < a->start)
			c->kernels_before_launch++;
		else if (k->start - a->start > c->max_launch_to_start_ns)
			c->max_launch_to_start_ns = k->start - a->start;
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *x = &m->memcpys.v[i];
		const struct corr_key *a = find(keys, n, x->pid, x->correlation);
		c->copy_kind[x->kind < 16 ? x->kind : 0]++;
		if (x->src_kind == MEM_PAGEABLE || x->dst_kind == MEM_PAGEABLE)
			c->copy_src_pageable++;
		if (x->src_kind == MEM_PINNED || x->dst_kind == MEM_PINNED)
			c->copy_src_pinned++;
		if (x->flags & TRACE_GPU_ASYNC)
			c->copy_async++;
		if (a && x->start < a->start)
			c->copies_before_api++;
	}
	for (size_t i = 0; i < m->syncs.n; i++)
		c->sync_type[m->syncs.v[i].type < 8 ? m->syncs.v[i].type : 0]++;
	free(keys);
}

size_t cuda_check_kernels_named(const struct model *m, const char *name)
{
	size_t len = strlen(name), cnt = 0;

	for (size_t i = 0; i < m->kernels.n; i++) {
		const char *s = model_str(m, m->kernels.v[i].name_id);
		if (!strncmp(s, name, len) && (s[len] == '\0' || s[len] == '(' || s[len] == '<'))
			cnt++;
	}
	return cnt;
}

size_t cuda_check_apis_named(const struct model *m, const char *name)
{
	size_t cnt = 0;

	for (size_t i = 0; i < m->api.n; i++)
		if (!strcmp(model_str(m, m->api.v[i].name_id), name))
			cnt++;
	return cnt;
}
