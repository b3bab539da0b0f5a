/*
 * output.c - the text and JSON forms of an analysis (schema in docs/rules.md).
 */
#include "internal.h"
#include "ranks_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *sev_name(int s)
{
	return s == SEV_CRITICAL ? "critical" : s == SEV_WARNING ? "warning" : "info";
}

static double fin(double v)
{
	return isfinite(v) ? v : 0;
}

/* Seconds of @t relative to the report start; the model's t_min is the origin. */
static double rel(const struct model *m, uint64_t t)
{
	return t >= m->t_min ? (double)(t - m->t_min) / 1e9 : 0;
}

int analyze_print_rules(FILE *f)
{
	for (size_t i = 0; i < az_nrules; i++) {
		const struct az_rule *r = &az_rules[i];
		fprintf(f, "%s: %s (findings: %s)\n", r->id, r->title, r->emits);
		for (size_t k = 0; r->params[k].key; k++)
			fprintf(f, "  --set %s.%s=%g\t%s\n", r->id, r->params[k].key, r->params[k].def,
				r->params[k].why);
	}
	return ferror(f) ? -1 : 0;
}

int analyze_print_text(FILE *f, const struct model *m, const struct analyze_result *r)
{
	const struct analyze_summary *s = &r->summary;
	char b1[64], b2[64];

	fprintf(f, "wall %s", fmt_duration(b1, sizeof(b1), fin(s->wall_s) * 1e9));
	if (s->gpu_busy >= 0) {
		fprintf(f, " · GPU busy %.1f%% · idle %.1f%%", fin(s->gpu_busy) * 100,
			fin(s->gpu_idle) * 100);
		fprintf(f, " (gaps %zu", s->gaps);
		if (s->gaps)
			fprintf(f, "; median %s", fmt_duration(b2, sizeof(b2), fin(s->gap_median_s) * 1e9));
		if (s->step_period_s > 0)
			fprintf(f, "; %s every %s", s->step_source && strstr(s->step_source, "periodic")
				? "periodic" : "step",
				fmt_duration(b1, sizeof(b1), fin(s->step_period_s) * 1e9));
		fputs(")", f);
	} else {
		fputs(" · no GPU activity", f);
		if (s->step_period_s > 0)
			fprintf(f, " · step every %s", fmt_duration(b1, sizeof(b1), fin(s->step_period_s) * 1e9));
	}
	fputc('\n', f);
	/* the window every figure is over, and the whole run beside it: one number, one meaning */
	fprintf(f, "window: %.3f-%.3f s of the %s run", s->win_start_s, s->win_end_s,
		fmt_duration(b1, sizeof(b1), fin(s->run_s) * 1e9));
	if (s->run_gpu_busy >= 0)
		fprintf(f, "; GPU busy %.1f%% over the whole run", fin(s->run_gpu_busy) * 100);
	fputc('\n', f);
	if (s->step_source)
		fprintf(f, "steps: %s\n", s->step_source);
	for (size_t i = 0; i < r->nnotes; i++)
		fprintf(f, "note: %s\n", r->notes[i]);
	/* per-rank table (ranks_out.c): from a whole load; windows hold no model of the whole run */
	if (!r->windows && az_print_ranks_text(f, m) < 0)
		return -1;
	for (size_t i = 0; i < r->noneoffs && i < 5; i++)
		fprintf(f, "one-off: %s at %.6f s: %s\n", fmt_duration(b1, sizeof(b1), r->oneoffs[i].duration_s * 1e9),
			r->oneoffs[i].start_s, r->oneoffs[i].what);
	if (!r->n) {
		fputs("no problem found above the reporting thresholds\n", f);
		return ferror(f) ? -1 : 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *x = &r->findings[i];
		const char *p, *e;

		fprintf(f, "%zu. %s — est. gain %.1f%% [%s, %s]\n", i + 1, x->title,
			fin(x->gain) * 100, x->id, sev_name(x->severity));
		if (x->nwhere) {
			fputs("   where:", f);
			for (size_t k = 0; k < x->nwhere; k++)
				fprintf(f, "%s %.6f-%.6f s", k ? "," : "", rel(m, x->where[k].start),
					rel(m, x->where[k].end));
			fputc('\n', f);
		}
		for (p = x->evidence; p && *p; p = *e ? e + 1 : e) {
			e = strchr(p, '\n');
			if (!e)
				e = p + strlen(p);
			fprintf(f, "   evidence: %.*s\n", (int)(e - p), p);
		}
		if (x->transform && x->actual_s > 0)
			fprintf(f, "   %s: %s: %s -> %s (%.1f%% shorter)\n",
				x->whatif == FINDING_WHATIF_MODEL ? "what-if (the rule's model)" : "replay", x->transform,
				fmt_duration(b1, sizeof(b1), x->actual_s * 1e9),
				fmt_duration(b2, sizeof(b2), x->replayed_s * 1e9),
				(1 - x->replayed_s / x->actual_s) * 100);
		if (x->gain_formula && *x->gain_formula)
			fprintf(f, "   gain: %s\n", x->gain_formula);
		if (x->recommendation && *x->recommendation)
			fprintf(f, "   fix: %s\n", x->recommendation);
	}
	return ferror(f) ? -1 : 0;
}

static void jstr(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	strbuf_add_json_str(sb, s ? s : "");
	strbuf_addch(sb, '"');
}

static void jnum(struct strbuf *sb, double v)
{
	strbuf_addf(sb, "%.9g", fin(v));
}

int analyze_print_json(FILE *f, const struct model *m, const struct analyze_result *r)
{
	const struct analyze_summary *s = &r->summary;
	struct strbuf sb = STRBUF_INIT;
	int ret;

	strbuf_addstr(&sb, "{\"schema\":\"gpuscope-analyze/1\",\"input\":");
	jstr(&sb, m->path);
	strbuf_addstr(&sb, ",\"format\":");
	jstr(&sb, m->format);
	strbuf_addstr(&sb, ",\"summary\":{\"wall_s\":");
	jnum(&sb, s->wall_s);
	strbuf_addstr(&sb, ",\"gpu_busy\":");
	if (s->gpu_busy >= 0)
		jnum(&sb, s->gpu_busy);
	else
		strbuf_addstr(&sb, "null");
	strbuf_addstr(&sb, ",\"gpu_idle\":");
	if (s->gpu_idle >= 0)
		jnum(&sb, s->gpu_idle);
	else
		strbuf_addstr(&sb, "null");
	strbuf_addstr(&sb, ",\"window_start_s\":");
	jnum(&sb, s->win_start_s);
	strbuf_addstr(&sb, ",\"window_end_s\":");
	jnum(&sb, s->win_end_s);
	strbuf_addstr(&sb, ",\"run_s\":");
	jnum(&sb, s->run_s);
	strbuf_addstr(&sb, ",\"run_gpu_busy\":");
	if (s->run_gpu_busy >= 0)
		jnum(&sb, s->run_gpu_busy);
	else
		strbuf_addstr(&sb, "null");
	strbuf_addstr(&sb, ",\"step_period_s\":");
	jnum(&sb, s->step_period_s);
	strbuf_addstr(&sb, ",\"step_source\":");
	if (s->step_source)
		jstr(&sb, s->step_source);
	else
		strbuf_addstr(&sb, "null");
	strbuf_addf(&sb, ",\"gaps\":%zu,\"gap_median_s\":", s->gaps);
	jnum(&sb, s->gap_median_s);
	/* 0: analysed at once; N: merged from N windows (docs/rules.md, "Long reports") */
	strbuf_addf(&sb, ",\"windows\":%zu", r->windows);
	strbuf_addstr(&sb, "},\"notes\":[");
	for (size_t i = 0; i < r->nnotes; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		jstr(&sb, r->notes[i]);
	}
	strbuf_addstr(&sb, "],\"one_offs\":[");
	for (size_t i = 0; i < r->noneoffs; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, "{\"what\":");
		jstr(&sb, r->oneoffs[i].what);
		strbuf_addstr(&sb, ",\"start_s\":");
		jnum(&sb, r->oneoffs[i].start_s);
		strbuf_addstr(&sb, ",\"duration_s\":");
		jnum(&sb, r->oneoffs[i].duration_s);
		strbuf_addch(&sb, '}');
	}
	strbuf_addstr(&sb, "],\"one_off_s\":");
	jnum(&sb, r->oneoff_s);
	strbuf_addstr(&sb, ",\"ranks\":");
	if (r->windows)
		strbuf_addstr(&sb, "null"); /* as the text: no per-rank table from windows */
	else
		az_ranks_json(&sb, m); /* ranks_out.c */
	strbuf_addstr(&sb, ",\"findings\":[");
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *x = &r->findings[i];
		const char *p, *e;
		int first = 1;

		if (i)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, "{\"id\":");
		jstr(&sb, x->id);
		strbuf_addstr(&sb, ",\"title\":");
		jstr(&sb, x->title);
		strbuf_addstr(&sb, ",\"severity\":");
		jstr(&sb, sev_name(x->severity));
		strbuf_addstr(&sb, ",\"gain\":");
		jnum(&sb, x->gain);
		strbuf_addstr(&sb, x->fatal ? ",\"fatal\":true" : ",\"fatal\":false");
		strbuf_addstr(&sb, ",\"transform\":");
		if (x->transform)
			jstr(&sb, x->transform);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"whatif\":");
		if (x->whatif)
			jstr(&sb, x->whatif == FINDING_WHATIF_MODEL ? "model" : "replay");
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"actual_s\":");
		if (x->actual_s >= 0)
			jnum(&sb, x->actual_s);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"replayed_s\":");
		if (x->replayed_s >= 0)
			jnum(&sb, x->replayed_s);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"gain_formula\":");
		jstr(&sb, x->gain_formula);
		strbuf_addstr(&sb, ",\"evidence\":[");
		for (p = x->evidence; p && *p; p = *e ? e + 1 : e) {
			char *line;
			e = strchr(p, '\n');
			if (!e)
				e = p + strlen(p);
			line = xstrndup(p, (size_t)(e - p));
			if (!first)
				strbuf_addch(&sb, ',');
			first = 0;
			jstr(&sb, line);
			free(line);
		}
		strbuf_addstr(&sb, "],\"where\":[");
		for (size_t k = 0; k < x->nwhere; k++) {
			if (k)
				strbuf_addch(&sb, ',');
			strbuf_addstr(&sb, "{\"start_s\":");
			jnum(&sb, rel(m, x->where[k].start));
			strbuf_addstr(&sb, ",\"end_s\":");
			jnum(&sb, rel(m, x->where[k].end));
			strbuf_addf(&sb, ",\"start_ns\":%llu,\"end_ns\":%llu}",
				    (unsigned long long)x->where[k].start,
				    (unsigned long long)x->where[k].end);
		}
		strbuf_addstr(&sb, "],\"recommendation\":");
		jstr(&sb, x->recommendation);
		strbuf_addch(&sb, '}');
	}
	strbuf_addstr(&sb, "]}\n");
	ret = fwrite(sb.buf, 1, sb.len, f) == sb.len && !ferror(f) ? 0 : -1;
	strbuf_release(&sb);
	return ret;
}
