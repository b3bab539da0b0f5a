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

struct lean {
	struct stats_acc *accs;
	size_t n;
	struct stats_acc **by_type[TRACE_EV__COUNT]; /* NULL-terminated lists */
	unsigned sunk;             /* row types handed to the accumulators */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *pctx;
};

static void lean_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct lean *l = ctx;
	struct stats_acc **a = type < TRACE_EV__COUNT ? l->by_type[type] : NULL;

	for (; a && *a; a++)
		(*a)->def->add(*a, stream, type, rec);
}

static void lean_strings(void *ctx, const struct model_strmap *map)
{
	struct lean *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->accs[i].def)
			stats_acc_resolve(&l->accs[i], map);
}

static void lean_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct lean *l = ctx;

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

int stats_run_report(const char *path, const char *const *names, size_t n,
		     const struct stats_opts *o, struct stats_table *out,
		     void (*progress)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	struct lean l = { 0 };
	struct model_sink sink = { 0 };
	struct model m;
	unsigned stream_types = 0, keep_types = 0;
	uint64_t span_min = 0, span_max = 0; /* the report's, for a window (below) */
	int filtered = o && (o->start || o->end || o->nvtx), ret = 0;
	size_t done = 0;

	for (size_t i = 0; i < n; i++) {
		const struct stats_report_def *d = stats_report_find(names[i]);
		if (!d) {
			struct stats_table t;
			return stats_run(NULL, names[i], o, &t); /* the unknown-report error */
		}
		if (d->add)
			stream_types |= d->types;
		else
			keep_types |= whole_model_types(d);
	}
	l.accs = xcalloc(n ? n : 1, sizeof(*l.accs));
	l.n = n;
	l.progress = progress;
	l.pctx = ctx;
	if (!filtered)
		l.sunk = stream_types & ~keep_types;
	for (size_t i = 0; i < n; i++) {
		const struct stats_report_def *d = stats_report_find(names[i]);
		/* an accumulator takes rows during the load only when all its types are sunk */
		if (d->add && l.sunk && (d->types & l.sunk) == d->types)
			l.accs[i].def = d;
	}
	for (unsigned type = 0; type < TRACE_EV__COUNT; type++) {
		size_t k = 0;
		l.by_type[type] = xcalloc(n + 1, sizeof(*l.by_type[type]));
		for (size_t i = 0; i < n; i++)
			if (l.accs[i].def && (l.accs[i].def->types & (1u << type)))
				l.by_type[type][k++] = &l.accs[i];
	}
	sink.types = l.sunk;
	sink.ctx = &l;
	sink.row = lean_row;
	sink.strings = lean_strings;
	sink.progress = lean_progress;
	/*
	 * A time window (--start/--end): rows wholly outside it are not stored
	 * (the loader's window, model.h), so memory follows the window, not the
	 * file.  The window counts from the report's first event, so a
	 * streaming pass finds the report's span first; the model then keeps
	 * that span, as a whole load would, for the times the reports print.
	 */
	if (o && (o->start || o->end)) {
		if (o->relative && model_report_span(path, &span_min, &span_max) < 0) {
			model_init(&m);
			ret = -1;
			goto out;
		}
		sink.window_lo = (o->relative ? span_min : 0) + o->start;
		sink.window_hi = o->end ? (o->relative ? span_min : 0) + o->end : UINT64_MAX;
	}
	model_init(&m);
	if (model_load_report_sink(&m, path, &sink) < 0) {
		ret = -1;
		goto out;
	}
	if (sink.window_hi && o->relative) {
		m.t_min = span_min;
		m.t_max = span_max;
	}
	stats_print_warnings(&m);
	for (done = 0; done < n; done++) {
		struct stats_acc *a = &l.accs[done];
		if (a->def) {
			st_init(&out[done], a->def->name, a->def->title);
			a->def->table(a, &m, &out[done]);
		} else if (stats_run(&m, names[done], o, &out[done]) < 0) {
			ret = -1;
			break;
		}
	}
	if (ret < 0)
		for (size_t i = 0; i < done; i++)
			stats_table_release(&out[i]);
out:
	for (size_t i = 0; i < n; i++)
		stats_acc_release(&l.accs[i]);
	for (unsigned type = 0; type < TRACE_EV__COUNT; type++)
		free(l.by_type[type]);
	free(l.accs);
	model_release(&m);
	return ret;
}
