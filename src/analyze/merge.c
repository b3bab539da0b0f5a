/*
 * merge.c - the analysis of a whole report from the analyses of windows
 * that tile it (docs/rules.md, "Long reports"): `analyze` of a report too
 * large to hold whole loads and analyses one window at a time, so that its
 * memory is one window's, and adds each window's result here.
 *
 * A finding of the whole is the same finding of its windows: the same rule
 * id and the same title once its numbers are set aside (titles carry
 * counts and sizes that differ from one window to the next).  Its gain is
 * the time it would save in each window where it was found, summed, over
 * the whole analysed wall time: a problem of one window in ten weighs a
 * tenth.  Its title, evidence, what-if and fix are those of the window
 * where it saved the most time (for findings without a time gain: the most
 * severe, then the first), with a line that says in how many windows it
 * was found.  The summary is the windows' summed (wall time, gaps) or
 * averaged by wall time (GPU busy), and, since the windows tile the run,
 * the run's GPU busy is known again.
 */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where-intervals kept per merged finding: the windows' first ones. */
#define MERGE_WHERE_MAX 16
/* One-offs kept over all windows: as analyze_result (the largest 16). */
#define MERGE_ONEOFFS_MAX 16

struct merge_row {
	char *key;                 /* id '\0' title with digit runs as '#' */
	struct finding best;       /* the representative window's finding (owned) */
	double best_weight;        /* its gain x window wall time; -1 for a finding without a time gain */
	double saved_s;            /* sum over windows of gain x wall */
	double actual_s, replayed_s; /* summed over the windows where it was found */
	int sev_min, sev_max, fatal;
	size_t windows;            /* windows where it was found */
	struct interval *where;
	size_t nwhere;
};

/* @p with each number (digits, with decimals) as one '#', appended to @sb */
static void add_shape(struct strbuf *sb, const char *p)
{
	while (*p) {
		if (isdigit((unsigned char)*p)) {
			/* a number, with its decimals: one '#' */
			while (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1])))
				p++;
			strbuf_addch(sb, '#');
		} else {
			strbuf_addch(sb, *p++);
		}
	}
}

static char *merge_key(const struct finding *f)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, f->id);
	strbuf_addch(&sb, '\0');
	add_shape(&sb, f->title ? f->title : "");
	return sb.buf; /* owned by the caller now; never NULL: the id is there */
}

static int same_key(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la == lb && !strcmp(a, b) && !strcmp(a + la + 1, b + lb + 1);
}

void analyze_merge_init(struct analyze_merge *mg)
{
	memset(mg, 0, sizeof(*mg));
}

static void add_finding(struct analyze_merge *mg, struct finding *f, double wall_s)
{
	char *key = merge_key(f);
	struct merge_row *row = NULL;
	double weight = f->gain > 0 ? f->gain * wall_s : -1;
	int better;

	for (size_t i = 0; i < mg->nrows; i++) {
		if (same_key(mg->rows[i].key, key)) {
			row = &mg->rows[i];
			break;
		}
	}
	if (!row) {
		if (mg->nrows == mg->arows) {
			mg->arows = mg->arows ? 2 * mg->arows : 16;
			mg->rows = xrealloc(mg->rows, mg->arows * sizeof(*mg->rows));
		}
		row = &mg->rows[mg->nrows++];
		memset(row, 0, sizeof(*row));
		row->key = key;
		row->sev_min = row->sev_max = f->severity;
		key = NULL;
	}
	free(key);
	row->windows++;
	row->saved_s += f->gain > 0 ? f->gain * wall_s : 0;
	if (f->actual_s > 0) {
		row->actual_s += f->actual_s;
		row->replayed_s += f->replayed_s;
	}
	if (f->severity < row->sev_min)
		row->sev_min = f->severity;
	row->fatal |= f->fatal;
	for (size_t k = 0; k < f->nwhere && row->nwhere < MERGE_WHERE_MAX; k++) {
		row->where = xrealloc(row->where, (row->nwhere + 1) * sizeof(*row->where));
		row->where[row->nwhere++] = f->where[k];
	}
	if (f->severity > row->sev_max)
		row->sev_max = f->severity;
	/* the representative: the most time saved; among gain-0 findings the most severe, then the first */
	if (row->windows == 1)
		better = 1;
	else if (weight >= 0 || row->best_weight >= 0)
		better = weight > row->best_weight;
	else
		better = f->severity > row->best.severity;
	if (better) {
		az_finding_release(&row->best);
		row->best = *f;
		row->best_weight = weight;
		memset(f, 0, sizeof(*f));
	}
	az_finding_release(f);
}

/* A window's note, unless an earlier window said the same (numbers aside): the first one's is kept. */
static void add_note(struct analyze_result *r, char *note)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	int dup = 0;

	add_shape(&a, note);
	for (size_t i = 0; i < r->nnotes && !dup; i++) {
		strbuf_reset(&b);
		add_shape(&b, r->notes[i]);
		dup = !strcmp(a.buf, b.buf);
	}
	strbuf_release(&a);
	strbuf_release(&b);
	if (dup) {
		free(note);
		return;
	}
	if (r->nnotes == r->alloc_notes) {
		r->alloc_notes = r->alloc_notes ? 2 * r->alloc_notes : 8;
		r->notes = xrealloc(r->notes, r->alloc_notes * sizeof(*r->notes));
	}
	r->notes[r->nnotes++] = note;
}

/* N of a step source "... (N instances)", 0 without */
static unsigned long long step_instances(const char *src)
{
	const char *p = src ? strrchr(src, '(') : NULL;
	unsigned long long n;
	char tail[16];

	if (p && sscanf(p, "(%llu %15s", &n, tail) == 2 && !strcmp(tail, "instances)"))
		return n;
	return 0;
}

void analyze_merge_add(struct analyze_merge *mg, struct analyze_result *w)
{
	struct analyze_result *acc = &mg->acc;
	const struct analyze_summary *s = &w->summary;
	double wall = s->wall_s > 0 ? s->wall_s : 0;

	if (!mg->windows) {
		acc->summary.win_start = s->win_start;
		acc->summary.win_start_s = s->win_start_s;
		acc->summary.run_s = s->run_s;
		acc->replay_check_ns = -1;
	}
	mg->windows++;
	acc->summary.wall_s += wall;
	if (s->win_end) {
		acc->summary.win_end = s->win_end;
		acc->summary.win_end_s = s->win_end_s;
	}
	if (s->gpu_busy >= 0) {
		mg->busy_s += s->gpu_busy * wall;
		mg->idle_s += s->gpu_idle * wall;
		mg->gpu_wall_s += wall;
	}
	acc->summary.gaps += s->gaps;
	mg->gap_median_sum += s->gap_median_s * (double)s->gaps;
	if (s->step_period_s > 0) {
		mg->period_sum += s->step_period_s * wall;
		mg->period_wall += wall;
	}
	if (!acc->summary.step_source && s->step_source)
		acc->summary.step_source = xstrdup(s->step_source);
	mg->step_instances += step_instances(s->step_source);
	for (size_t i = 0; i < w->n; i++)
		add_finding(mg, &w->findings[i], wall);
	for (size_t i = 0; i < w->nnotes; i++) {
		add_note(acc, w->notes[i]);
		w->notes[i] = NULL;
	}
	for (size_t i = 0; i < w->noneoffs; i++) {
		struct analyze_oneoff *o = &w->oneoffs[i];
		size_t at = acc->noneoffs;
		if (at == MERGE_ONEOFFS_MAX) {
			/* full: replace the smallest when this one is larger */
			at = 0;
			for (size_t k = 1; k < acc->noneoffs; k++)
				if (acc->oneoffs[k].duration_s < acc->oneoffs[at].duration_s)
					at = k;
			if (acc->oneoffs[at].duration_s >= o->duration_s)
				continue;
			free(acc->oneoffs[at].what);
		} else {
			acc->oneoffs = xrealloc(acc->oneoffs, (at + 1) * sizeof(*acc->oneoffs));
			acc->noneoffs++;
		}
		acc->oneoffs[at] = *o;
		o->what = NULL;
	}
	acc->oneoff_s += w->oneoff_s;
	analyze_result_release(w);
}

/* A new slot at the end of @acc's findings. */
static struct finding *acc_push(struct analyze_result *acc)
{
	if (acc->n == acc->alloc) {
		acc->alloc = acc->alloc ? 2 * acc->alloc : 16;
		acc->findings = xrealloc(acc->findings, acc->alloc * sizeof(*acc->findings));
	}
	return &acc->findings[acc->n++];
}

void analyze_merge_add_run(struct analyze_merge *mg, struct analyze_result *w)
{
	struct analyze_result *acc = &mg->acc;

	for (size_t i = 0; i < w->n; i++) {
		*acc_push(acc) = w->findings[i];
		memset(&w->findings[i], 0, sizeof(w->findings[i]));
	}
	/* its notes describe a model without the timed rows (no GPU activity ...): the windows' stand */
	analyze_result_release(w);
}

static int cmp_oneoff_desc(const void *pa, const void *pb)
{
	const struct analyze_oneoff *a = pa, *b = pb;

	return (a->duration_s < b->duration_s) - (a->duration_s > b->duration_s);
}

void analyze_merge_finish(struct analyze_merge *mg, struct analyze_result *out)
{
	struct analyze_result *acc = &mg->acc;
	double total = acc->summary.wall_s;

	acc->summary.gpu_busy = mg->gpu_wall_s > 0 ? mg->busy_s / mg->gpu_wall_s : -1;
	acc->summary.gpu_idle = mg->gpu_wall_s > 0 ? mg->idle_s / mg->gpu_wall_s : -1;
	/* the windows tile the run: their GPU busy is the run's */
	acc->summary.run_gpu_busy = acc->summary.gpu_busy;
	acc->summary.gap_median_s = acc->summary.gaps ? mg->gap_median_sum / (double)acc->summary.gaps : 0;
	acc->summary.step_period_s = mg->period_wall > 0 ? mg->period_sum / mg->period_wall : 0;
	if (mg->step_instances && acc->summary.step_source && step_instances(acc->summary.step_source)) {
		/* the first window's source with every window's instances */
		char *p = strrchr(acc->summary.step_source, '(');
		char *s = xstrfmt("%.*s(%llu instances)", (int)(p - acc->summary.step_source),
				  acc->summary.step_source, mg->step_instances);
		free(acc->summary.step_source);
		acc->summary.step_source = s;
	}
	for (size_t i = 0; i < mg->nrows; i++) {
		struct merge_row *row = &mg->rows[i];
		struct finding *f;
		struct strbuf ev = STRBUF_INIT;

		f = acc_push(acc);
		*f = row->best;
		f->gain = total > 0 ? row->saved_s / total : 0;
		f->fatal = row->fatal;
		if (f->gain > 0) {
			/* as the rules grade a gain, but never below what every window said */
			f->severity = az_severity(f->gain);
			if (f->severity < row->sev_min)
				f->severity = row->sev_min;
		} else {
			f->severity = row->sev_max;
		}
		free(f->where);
		f->where = row->where;
		f->nwhere = row->nwhere;
		if (row->actual_s > 0) {
			f->actual_s = row->actual_s;
			f->replayed_s = row->replayed_s;
		}
		if (f->evidence && *f->evidence) {
			size_t len = strlen(f->evidence);
			while (len && f->evidence[len - 1] == '\n')
				len--;
			strbuf_add(&ev, f->evidence, len);
			strbuf_addch(&ev, '\n');
		}
		strbuf_addf(&ev, "found in %zu of the %zu windows the report was analysed in; "
			    "title, evidence and fix are the window's where it %s",
			    row->windows, mg->windows, row->best_weight >= 0 ? "saves the most time" :
			    "was most severe");
		if (row->actual_s > 0)
			strbuf_addstr(&ev, ", the what-if sums the windows where it was found");
		free(f->evidence);
		f->evidence = ev.buf;
		free(row->key);
	}
	free(mg->rows);
	if (acc->n > 1)
		qsort(acc->findings, acc->n, sizeof(*acc->findings), az_cmp_finding);
	if (acc->noneoffs > 1)
		qsort(acc->oneoffs, acc->noneoffs, sizeof(*acc->oneoffs), cmp_oneoff_desc);
	acc->windows = mg->windows;
	*out = *acc;
	memset(mg, 0, sizeof(*mg));
}
