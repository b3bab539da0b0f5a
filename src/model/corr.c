/*
 * corr.c - launch correlation: (process, correlation id) -> the API call
 * that launched a GPU operation, for every consumer of the model (analyze's
 * timeline and replay, diff's step times).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>


/*
 * Correlation ids are small integers that grow with time in each process:
 * a dense array per process (filled and read in time order, so cache
 * friendly), with a hash for processes whose ids are too sparse.
 */
static inline size_t corr_hash(uint32_t pid, uint32_t corr)
{
	uint64_t h = ((uint64_t)pid << 32 | corr) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 20);
}

static struct model_corr_pid *corr_pid(struct model_corr *h, uint32_t pid)
{
	if (h->last < h->npids && h->pids[h->last].pid == pid)
		return &h->pids[h->last];
	for (size_t i = 0; i < h->npids; i++)
		if (h->pids[i].pid == pid) {
			h->last = i;
			return &h->pids[i];
		}
	return NULL;
}

void model_corr_build(struct model_corr *h, const struct model *m)
{
	size_t n = 16, nhash = 0;

	memset(h, 0, sizeof(*h));

	for (size_t i = 0; i < m->api.n && i < UINT32_MAX - 1; i++) {
		const struct trace_api *a = &m->api.v[i];
		struct model_corr_pid *p;
		if (!a->correlation)
			continue;
		if (!(p = corr_pid(h, a->pid))) {
			h->pids = xrealloc(h->pids, (h->npids + 1) * sizeof(*h->pids));
			p = &h->pids[h->npids++];
			memset(p, 0, sizeof(*p));
			p->pid = a->pid;
		}
		p->rows++;
		if (a->correlation > p->max)
			p->max = a->correlation;
	}
	for (size_t i = 0; i < h->npids; i++) {
		struct model_corr_pid *p = &h->pids[i];
		if ((size_t)p->max <= 8 * p->rows + 4096)
			p->dense = xcalloc((size_t)p->max + 1, sizeof(uint32_t));
		else
			nhash += p->rows;
	}
	if (nhash) {
		while (n < 2 * nhash + 16)
			n <<= 1;
		h->slot = xcalloc(n, sizeof(uint32_t));
		h->mask = n - 1;
	}
	for (size_t i = 0; i < m->api.n && i < UINT32_MAX - 1; i++) {
		const struct trace_api *a = &m->api.v[i];
		struct model_corr_pid *p;
		size_t s;
		if (!a->correlation || !(p = corr_pid(h, a->pid)))
			continue;
		if (p->dense) {
			if (!p->dense[a->correlation]) /* keep the first: a graph launch owns its kernels */
				p->dense[a->correlation] = (uint32_t)i + 1;
			continue;
		}
		for (s = corr_hash(a->pid, a->correlation) & h->mask; h->slot[s]; s = (s + 1) & h->mask) {
			const struct trace_api *b = &m->api.v[h->slot[s] - 1];
			if (b->pid == a->pid && b->correlation == a->correlation)
				break;
		}
		if (!h->slot[s])
			h->slot[s] = (uint32_t)i + 1;
	}
}

const struct trace_api *model_corr_find(struct model_corr *h, const struct model *m,
					 uint32_t pid, uint32_t corr)
{
	struct model_corr_pid *p;

	if (!corr || !(p = corr_pid(h, pid)) || corr > p->max)
		return NULL;
	if (p->dense)
		return p->dense[corr] ? &m->api.v[p->dense[corr] - 1] : NULL;
	if (!h->slot)
		return NULL;
	for (size_t s = corr_hash(pid, corr) & h->mask; h->slot[s]; s = (s + 1) & h->mask) {
		const struct trace_api *b = &m->api.v[h->slot[s] - 1];
		if (b->pid == pid && b->correlation == corr)
			return b;
	}
	return NULL;
}

void model_corr_release(struct model_corr *h)
{
	for (size_t i = 0; i < h->npids; i++)
		free(h->pids[i].dense);
	free(h->pids);
	free(h->slot);
}

