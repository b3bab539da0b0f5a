/*
 * timehist.c - a histogram of times that widens to take any time, and the
 * slices of about N rows cut from it (model.h: struct time_hist).  `dump`
 * and `analyze` read a long report in such slices, each loaded alone.
 */
#include "model.h"

#include <string.h>

void time_hist_add(struct time_hist *h, uint64_t t)
{
	h->total++;
	if (!h->width) {
		h->lo = t;
		h->width = 1;
	}
	while (t < h->lo || (t - h->lo) / h->width >= TIME_HIST_BUCKETS) {
		/* widen: pairs of buckets merge; growing downwards the old range becomes the upper half */
		int down = t < h->lo;
		uint64_t span = h->width * TIME_HIST_BUCKETS;
		if (h->width > UINT64_MAX / 2 / TIME_HIST_BUCKETS)
			break;
		if (down) {
			for (size_t i = TIME_HIST_BUCKETS; i-- > TIME_HIST_BUCKETS / 2;)
				h->n[i] = h->n[2 * i - TIME_HIST_BUCKETS] + h->n[2 * i - TIME_HIST_BUCKETS + 1];
			memset(h->n, 0, TIME_HIST_BUCKETS / 2 * sizeof(h->n[0]));
			h->lo = h->lo > span ? h->lo - span : 0;
		} else {
			for (size_t i = 0; i < TIME_HIST_BUCKETS / 2; i++)
				h->n[i] = h->n[2 * i] + h->n[2 * i + 1];
			memset(h->n + TIME_HIST_BUCKETS / 2, 0, TIME_HIST_BUCKETS / 2 * sizeof(h->n[0]));
		}
		h->width *= 2;
	}
	{
		uint64_t b = t >= h->lo ? (t - h->lo) / h->width : 0;
		h->n[b < TIME_HIST_BUCKETS ? b : TIME_HIST_BUCKETS - 1]++;
	}
}

uint64_t time_hist_next_cut(const struct time_hist *h, size_t *b, uint64_t per)
{
	uint64_t acc = 0;

	for (; *b < TIME_HIST_BUCKETS; (*b)++) {
		acc += h->n[*b];
		if (acc >= per) {
			(*b)++;
			return *b < TIME_HIST_BUCKETS ? h->lo + *b * h->width : UINT64_MAX;
		}
	}
	return UINT64_MAX;
}
