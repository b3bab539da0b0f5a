/*
 * run.c - stats_run_report(): load a report holding only what the requested
 * reports need, summarising streaming rows while they load.
 *
 * A 10-million-event report stored whole takes 50-90 bytes a row; the
 * summaries keep 8 bytes a row (the value the median needs), so the rows
 * that only accumulator reports read are handed to them by the loader
 * (model_load_report_sink) and never stored.
 */
#include "stats_int.h"

#include <stdlib.h>
#include <string.h>

struct stats_lean {
	struct stats_acc *accs;
	size_t n;
	struct stats_acc **by_type[TRACE_EV__COUNT]; /* NULL-terminated lists */
	unsigned sunk;             /* row types handed to the accumulators */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *pctx;
	int windowed;              /* stats_lean_window() set a loader window */
	uint64_t span_min, span_max; /* the report's span, kept by the windowed model */
};

static void lean_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct stats_lean *l = ctx;
	struct stats_acc **a = type < TRACE_EV__COUNT ? l->by_type[type] : NULL;

	for (; a && *a; a++)
		(*a)->def->add(*a, stream, type, rec);
}

static void lean_strings(void *ctx, const struct model_strmap *map)
{
	struct stats_lean *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->accs[i].def)
			stats_acc_resolve(&l->accs[i], map);
}

static void lean_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct stats_lean *l = ctx;

	if (l->progress)
		l->progress(l->pctx, done, total);
}

void stats_print_warnings(const struct model *m)
{
	uint64_t total = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < m->nr_warnings; i++)
		warning("%s", m->warnings[i]);
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++) {
		if (!m->drops[d])
			continue;
		strbuf_addf(&sb, "%s%s %llu", total ? ", " : "", trace_drop_source_name(d),
			    (unsigned long long)m->drops[d]);
		total += m->drops[d];
	}
	if (total)
		warning("the report lost %llu records while recording (%s); the summaries "
			"do not include them", (unsigned long long)total, sb.buf);
	strbuf_release(&sb);
}

/* Row types a whole-model report reads (none may be handed to a sink). */
static unsigned whole_model_types(const struct stats_report_def *d)
{
	return d->types ? d->types : ~0u;
}

struct stats_lean *stats_lean_new(const char *const *names, size_t n, const struct stats_opts *o,
				  struct model_sink *sink)
{
	struct stats_lean *l;
	unsigned stream_types = 0, keep_types = 0;
	int filtered = o && (o->start || o->end || o->nvtx);

	for (size_t i = 0; i < n; i++) {
		int kn;
		const struct stats_report_def *d = stats_report_parse(names[i], &kn);
		if (!d) {
			struct stats_table t;
			stats_run(NULL, names[i], o, &t); /* the unknown-report error */
			return NULL;
		}
		/* kernel names other than the recorded ones are set on the stored kernels */
		if (d->add && kn == STATS_NAMES_FULL)
			stream_types |= d->types;
		else
			keep_types |= whole_model_types(d);
	}
	l = xcalloc(1, sizeof(*l));
	l->accs = xcalloc(n ? n : 1, sizeof(*l->accs));
	l->n = n;
	if (!filtered)
		l->sunk = stream_types & ~keep_types;
	for (size_t i = 0; i < n; i++) {
		const struct stats_report_def *d = stats_report_find(names[i]);
		/* an accumulator takes rows during the load only when all its types are sunk */
		if (d && d->add && l->sunk && (d->types & l->sunk) == d->types)
			l->accs[i].def = d;
	}
	for (unsigned type = 0; type < TRACE_EV__COUNT; type++) {
		size_t k = 0;
		l->by_type[type] = xcalloc(n + 1, sizeof(*l->by_type[type]));
		for (size_t i = 0; i < n; i++)
			if (l->accs[i].def && (l->accs[i].def->types & (1u << type)))
				l->by_type[type][k++] = &l->accs[i];
	}
	memset(sink, 0, sizeof(*sink));
	sink->types = l->sunk;
	sink->ctx = l;
	sink->row = lean_row;
	sink->strings = lean_strings;
	sink->progress = lean_progress;
	return l;
}

int stats_lean_window(struct stats_lean *l, struct model_sink *sink, const char *path, const struct stats_opts *o)
{
	/*
	 * A time window (--start/--end): rows wholly outside it are not stored
	 * (the loader's window, model.h), so memory follows the window, not the
	 * file.  The window counts from the report's first event, so a
	 * streaming pass finds the report's span first; the model then keeps
	 * that span, as a whole load would, for the times the reports print.
	 */
	if (!o || !(o->start || o->end))
		return 0;
	if (o->relative && model_report_span(path, &l->span_min, &l->span_max) < 0)
		return -1;
	sink->window_lo = (o->relative ? l->span_min : 0) + o->start;
	sink->window_hi = o->end ? (o->relative ? l->span_min : 0) + o->end : UINT64_MAX;
	l->windowed = o->relative;
	return 0;
}

/*
 * Set the name of every kernel of @m to the one @names asks for
 * (STATS_NAMES_BASE: its base name, added to the model's strings;
 * STATS_NAMES_MANGLED: its mangled name, where recorded); returns the ids
 * they had, for restore_kernel_names() (the model's other users, the next
 * report, see the recorded names).
 */
static uint32_t *set_kernel_names(struct model *m, int names)
{
	uint32_t *saved = xmalloc((m->kernels.n ? m->kernels.n : 1) * sizeof(*saved));
	uint32_t *base = NULL, nstr = m->str.nr;

	if (names == STATS_NAMES_BASE)
		base = xcalloc(nstr ? nstr : 1, sizeof(*base));   /* string id -> base id + 1 */
	for (size_t i = 0; i < m->kernels.n; i++) {
		struct trace_kernel *k = &m->kernels.v[i];
		saved[i] = k->name_id;
		if (names == STATS_NAMES_MANGLED && k->mangled_id) {
			k->name_id = k->mangled_id;
		} else if (names == STATS_NAMES_BASE && k->name_id < nstr) {
			if (!base[k->name_id]) {
				size_t len;
				const char *b = kernel_base_name(model_str(m, k->name_id), &len);
				base[k->name_id] = strtab_intern_n(&m->str, b, len) + 1;
			}
			k->name_id = base[k->name_id] - 1;
		}
	}
	free(base);
	return saved;
}

static void restore_kernel_names(struct model *m, uint32_t *saved)
{
	for (size_t i = 0; i < m->kernels.n; i++)
		m->kernels.v[i].name_id = saved[i];
	free(saved);
}

/* stats_run() of @report, with its kernel-name option (stats_report_parse) set on @m's kernels */
static int run_named(struct model *m, const char *report, const struct stats_opts *o, struct stats_table *out)
{
	int names;
	const struct stats_report_def *d = stats_report_parse(report, &names);
	uint32_t *saved;
	int ret;

	if (!d || names == STATS_NAMES_FULL)
		return stats_run(m, report, o, out);
	saved = set_kernel_names(m, names);
	ret = stats_run(m, d->name, o, out);
	restore_kernel_names(m, saved);
	out->report = report;   /* "cuda_gpu_kern_sum:base", as asked */
	return ret;
}

int stats_lean_finish(struct stats_lean *l, struct model *m, int sunk, const char *const *names,
		      const struct stats_opts *o, struct stats_table *out)
{
	size_t done;
	int ret = 0;

	if (l->windowed) {
		m->t_min = l->span_min;
		m->t_max = l->span_max;
	}
	stats_print_warnings(m);
	for (done = 0; done < l->n; done++) {
		struct stats_acc *a = &l->accs[done];
		if (a->def && sunk) {
			st_init(&out[done], a->def->name, a->def->title);
			a->def->table(a, m, &out[done]);
		} else if (run_named(m, names[done], o, &out[done]) < 0) {
			ret = -1;
			break;
		}
	}
	if (ret < 0)
		for (size_t i = 0; i < done; i++)
			stats_table_release(&out[i]);
	return ret;
}

void stats_lean_free(struct stats_lean *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		stats_acc_release(&l->accs[i]);
	for (unsigned type = 0; type < TRACE_EV__COUNT; type++)
		free(l->by_type[type]);
	free(l->accs);
	free(l);
}

int stats_run_report(const char *path, const char *const *names, size_t n,
		     const struct stats_opts *o, struct stats_table *out,
		     void (*progress)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	struct model_sink sink;
	struct stats_lean *l = stats_lean_new(names, n, o, &sink);
	struct model m;
	int ret;

	if (!l)
		return -1;
	l->progress = progress;
	l->pctx = ctx;
	model_init(&m);
	ret = stats_lean_window(l, &sink, path, o);
	if (ret == 0)
		ret = model_load_report_sink(&m, path, &sink);
	if (ret == 0)
		ret = stats_lean_finish(l, &m, 1, names, o, out);
	stats_lean_free(l);
	model_release(&m);
	return ret;
}
