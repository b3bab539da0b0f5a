/*
 * interval.c - interval algebra over nanosecond half-open intervals.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

void ivset_add(struct interval_set *s, uint64_t start, uint64_t end)
{
	if (end <= start)
		return;
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	if (s->normal && s->n && s->v[s->n - 1].end > start)
		s->normal = 0;
	if (!s->n)
		s->normal = 1;
	s->v[s->n].start = start;
	s->v[s->n].end = end;
	s->n++;
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct interval *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

void ivset_normalize(struct interval_set *s)
{
	size_t out = 0;
	int sorted = 1;

	if (s->normal || s->n == 0) {
		s->normal = 1;
		return;
	}
	for (size_t i = 1; i < s->n && sorted; i++)
		if (s->v[i].start < s->v[i - 1].start)
			sorted = 0;
	if (!sorted)
		qsort(s->v, s->n, sizeof(*s->v), cmp_iv);
	for (size_t i = 0; i < s->n; i++) {
		if (out && s->v[i].start <= s->v[out - 1].end) {
			if (s->v[i].end > s->v[out - 1].end)
				s->v[out - 1].end = s->v[i].end;
			continue;
		}
		s->v[out++] = s->v[i];
	}
	s->n = out;
	s->normal = 1;
}

uint64_t ivset_total(struct interval_set *s)
{
	uint64_t t = 0;

	ivset_normalize(s);
	for (size_t i = 0; i < s->n; i++)
		t += s->v[i].end - s->v[i].start;
	return t;
}

uint64_t ivset_overlap(struct interval_set *s, uint64_t lo, uint64_t hi)
{
	uint64_t t = 0;
	size_t a = 0, b;

	ivset_normalize(s);
	b = s->n;
	while (a < b) { /* first interval ending after lo */
		size_t mid = (a + b) / 2;
		if (s->v[mid].end <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i < s->n && s->v[i].start < hi; i++) {
		uint64_t st = s->v[i].start > lo ? s->v[i].start : lo;
		uint64_t en = s->v[i].end < hi ? s->v[i].end : hi;
		if (en > st)
			t += en - st;
	}
	return t;
}

uint64_t ivset_intersect_total(struct interval_set *a, struct interval_set *b)
{
	uint64_t t = 0;
	size_t i = 0, j = 0;

	ivset_normalize(a);
	ivset_normalize(b);
	while (i < a->n && j < b->n) {
		uint64_t st = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
		uint64_t en = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;
		if (en > st)
			t += en - st;
		if (a->v[i].end < b->v[j].end)
			i++;
		else
			j++;
	}
	return t;
}

void ivset_gaps(struct interval_set *s, uint64_t lo, uint64_t hi, struct interval_set *out)
{
	uint64_t cur = lo;

	ivset_normalize(s);
	for (size_t i = 0; i < s->n && cur < hi; i++) {
		if (s->v[i].end <= cur)
			continue;
		if (s->v[i].start > cur)
			ivset_add(out, cur, s->v[i].start < hi ? s->v[i].start : hi);
		cur = s->v[i].end;
	}
	if (cur < hi)
		ivset_add(out, cur, hi);
	ivset_normalize(out);
}

void ivset_release(struct interval_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void model_gpu_busy(const struct model *m, uint32_t device, struct interval_set *out)
{
	for (size_t i = 0; i < m->kernels.n; i++)
		if (device == UINT32_MAX || m->kernels.v[i].device == device)
			ivset_add(out, m->kernels.v[i].start, m->kernels.v[i].end);
	for (size_t i = 0; i < m->memcpys.n; i++)
		if (device == UINT32_MAX || m->memcpys.v[i].device == device)
			ivset_add(out, m->memcpys.v[i].start, m->memcpys.v[i].end);
	for (size_t i = 0; i < m->memsets.n; i++)
		if (device == UINT32_MAX || m->memsets.v[i].device == device)
			ivset_add(out, m->memsets.v[i].start, m->memsets.v[i].end);
	ivset_normalize(out);
}
