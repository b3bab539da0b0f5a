/*
 * steps.c - what a step is: step names, and the NVTX instances of one
 * thread's loop, for every consumer of the model (analyze's step period
 * and warm-up, diff's time per step).  The rule is written down in model.h.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static int is_cut(char ch)
{
	return (ch >= '0' && ch <= '9') || ch == '#' || ch == '_' || ch == ' ' || ch == '-';
}

static char lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
}

/* Length of @s once its trailing digits, '#', '_', ' ' and '-' are cut. */
static size_t stripped_len(const char *s)
{
	size_t n = strlen(s);

	while (n && is_cut(s[n - 1]))
		n--;
	return n;
}

/* Do the first @n bytes of @a and @b agree, ignoring ASCII case? */
static int same_lower(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != lower(b[i]))
			return 0;
	return 1;
}

int model_name_matches(const char *name, const char *want)
{
	size_t a, b;

	if (!strcmp(name, want))
		return 1;
	a = stripped_len(name);
	b = stripped_len(want);
	return b && a == b && same_lower(name, want, a);
}

int model_is_step_name(const char *name)
{
	/*
	 * The names training and inference loops give a step by habit, in
	 * stripped form: PyTorch's profiler ("ProfilerStep#N"), Lightning and
	 * hand-written loops ("training_step", "train_step", "step"), and
	 * "iteration"/"iter" loops; "train step" and "training step" as NVTX
	 * annotations are often spelt with a space.
	 */
	static const char *const names[] = {
		"profilerstep", "step", "train_step", "train step", "training_step", "train",
		"iteration", "iter", "train_iter", "training step",
	};
	size_t n = stripped_len(name);

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && same_lower(name, names[i], n))
			return 1;
	return 0;
}

/* Does [a, b) overlap the normalised window @win (NULL: all time)? */
static int in_window(const struct interval_set *win, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi;

	if (!win)
		return 1;
	hi = win->n;
	while (lo < hi) { /* first interval ending after @a */
		size_t mid = (lo + hi) / 2;
		if (win->v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < win->n && win->v[lo].start < b;
}

size_t model_find_steps(const struct model *m, const char *want, const struct interval_set *win,
			struct model_steps *out)
{
	const char *chosen = NULL;

	memset(out, 0, sizeof(*out));
	if (win && win->n && !win->normal)
		BUG("model_find_steps: the window is not normalised");
	/* the first step-like range; its name and the thread that steps most under it */
	for (size_t i = 0; i < m->nvtx.n && !chosen; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		const char *nm = model_str(m, r->name_id);
		if (r->end > r->start && in_window(win, r->start, r->end) &&
		    (want ? model_name_matches(nm, want) : model_is_step_name(nm))) {
			chosen = nm;
			out->name_id = r->name_id;
		}
	}
	if (!chosen)
		return 0;
	model_range_thread(m, out->name_id, &out->pid, &out->tid);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		const char *nm = model_str(m, r->name_id);
		/* one thread's loop: other ranks' or threads' steps interleave with it */
		if (r->pid != out->pid || r->tid != out->tid || r->end <= r->start)
			continue;
		/* a step overlapping the window counts: it starts before its first kernel */
		if (!in_window(win, r->start, r->end))
			continue;
		/* auto: stay with the first step-like name ("ProfilerStep#1" is "ProfilerStep#0"'s loop) */
		if (!model_name_matches(nm, want ? want : chosen))
			continue;
		/* ranges are in start order: an instance inside the last one is nested */
		if (out->n && r->start < out->v[out->n - 1].end)
			continue;
		ALLOC_GROW(out->v, out->n + 1, out->alloc);
		out->v[out->n].start = r->start;
		out->v[out->n].end = r->end;
		out->n++;
	}
	return out->n;
}

void model_steps_release(struct model_steps *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
