/*
 * zoo_line.h - the one line every zoo program prints (plain C, no CUDA).
 *
 *   zoo: case=<id> variant=<broken|fixed> step_ms=<ms, 4 decimals> steps=<n>
 *
 * step_ms is the median time per step over the measured steps (warm-up steps
 * excluded); steps is how many steps were measured.  record.sh and the tests
 * parse this line; examples/zoo/zoo_common.py prints the same format.
 */
#ifndef ZOO_LINE_H
#define ZOO_LINE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write the result line for @case_id/@variant into @buf (size @n). */
static inline int zoo_format_line(char *buf, size_t n, const char *case_id,
				  const char *variant, double step_ms, int steps)
{
	return snprintf(buf, n, "zoo: case=%s variant=%s step_ms=%.4f steps=%d",
			case_id, variant, step_ms, steps);
}

static inline int zoo_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of @n values (sorts @v in place); 0 when @n is 0. */
static inline double zoo_median(double *v, int n)
{
	if (n <= 0)
		return 0.0;
	qsort(v, (size_t)n, sizeof(*v), zoo_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
