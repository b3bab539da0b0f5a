/*
 * format.c - printing a stats table as an aligned table, CSV or JSON.
 *
 * Every format prints the same numbers: durations in the time unit (whole
 * nanoseconds, or as many decimals as keep nanoseconds exact), averages in
 * ns with one decimal, percentages with one decimal, sizes in MB (10^6
 * bytes) with three.  The table adds thousands separators; CSV and JSON do
 * not.  Unknown cells print "-" (table, CSV) or null (JSON).
 */
#include "stats_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *name;
	double div;
	int decimals;          /* decimals that keep whole nanoseconds */
};

static const struct unit units[] = {
	{ "ns", 1, 0 }, { "us", 1e3, 3 }, { "ms", 1e6, 6 }, { "s", 1e9, 9 },
};

static const struct unit *unit_of(const char *timeunit)
{
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (timeunit && !strcmp(units[i].name, timeunit))
			return &units[i];
	return &units[0];
}

const char *stats_col_label(const struct stats_col *col, const char *timeunit, char *buf,
			    size_t n)
{
	const char *name = col->name;
	size_t len = strlen(name);
	const struct unit *u = unit_of(timeunit);

	if ((col->type == STATS_DUR || col->type == STATS_DURF) && len >= 4 &&
	    !strcmp(name + len - 4, "(ns)") && u->div != 1) {
		snprintf(buf, n, "%.*s(%s)", (int)(len - 4), name, u->name);
		return buf;
	}
	snprintf(buf, n, "%s", name);
	return buf;
}

/* Insert thousands separators into the integer part of the number in @s. */
static void add_separators(struct strbuf *sb, const char *s)
{
	const char *p = s, *dot;
	size_t digits;

	if (*p == '-')
		strbuf_addch(sb, *p++);
	dot = strchr(p, '.');
	digits = dot ? (size_t)(dot - p) : strlen(p);
	for (size_t i = 0; i < digits; i++) {
		if (i && (digits - i) % 3 == 0)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, p[i]);
	}
	strbuf_addstr(sb, p + digits);
}

/* The text of a cell; @sep: thousands separators. */
static void cell_text(struct strbuf *sb, const struct stats_table *t, size_t r, size_t c,
		      const struct unit *u, int sep)
{
	const union stats_cell *v = stats_cell_at(t, r, c);
	char num[64];

	strbuf_reset(sb);
	if (!stats_cell_valid(t, r, c)) {
		strbuf_addch(sb, '-');
		return;
	}
	switch (t->cols[c].type) {
	case STATS_STR:
		strbuf_addstr(sb, v->s ? v->s : "");
		return;
	case STATS_INT:
		snprintf(num, sizeof(num), "%lld", (long long)v->i);
		break;
	case STATS_DUR:
		if (u->div == 1)
			snprintf(num, sizeof(num), "%lld", (long long)v->i);
		else
			snprintf(num, sizeof(num), "%.*f", u->decimals, (double)v->i / u->div);
		break;
	case STATS_DURF:
		snprintf(num, sizeof(num), "%.*f", u->div == 1 ? 1 : u->decimals, v->f / u->div);
		break;
	case STATS_PCT:
		snprintf(num, sizeof(num), "%.1f", v->f);
		break;
	case STATS_BYTES:
		snprintf(num, sizeof(num), "%.3f", v->f / 1e6);
		break;
	case STATS_FLOAT:
	default:
		snprintf(num, sizeof(num), "%.2f", v->f);
		break;
	}
	if (!strcmp(num, "-0.0") || !strcmp(num, "-0.00"))
		memmove(num, num + 1, strlen(num));
	if (sep)
		add_separators(sb, num);
	else
		strbuf_addstr(sb, num);
}

static int is_numeric(int type)
{
	return type != STATS_STR;
}

static int print_table(FILE *f, const struct stats_table *t, const struct unit *u)
{
	size_t width[STATS_MAX_COLS];
	char label[STATS_MAX_COLS][96];
	struct strbuf sb = STRBUF_INIT;

	fprintf(f, "\n ** %s (%s):\n\n", t->title, t->report);
	if (!t->nrows) {
		fprintf(f, "%s\n", t->empty_reason ? t->empty_reason : "no data");
		return 0;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		stats_col_label(&t->cols[c], u->name, label[c], sizeof(label[c]));
		width[c] = strlen(label[c]);
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			cell_text(&sb, t, r, c, u, 1);
			if (sb.len > width[c])
				width[c] = sb.len;
		}
	for (size_t c = 0; c < t->ncols; c++) {
		int last = c + 1 == t->ncols;
		if (is_numeric(t->cols[c].type))
			fprintf(f, "  %*s", (int)width[c], label[c]);
		else
			fprintf(f, "  %-*s", last ? 0 : (int)width[c], label[c]);
	}
	fputc('\n', f);
	for (size_t c = 0; c < t->ncols; c++) {
		int last = c + 1 == t->ncols;
		size_t w = last && !is_numeric(t->cols[c].type) ? strlen(label[c]) : width[c];
		fputs("  ", f);
		for (size_t i = 0; i < w; i++)
			fputc('-', f);
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			int last = c + 1 == t->ncols;
			cell_text(&sb, t, r, c, u, 1);
			if (is_numeric(t->cols[c].type))
				fprintf(f, "  %*s", (int)width[c], sb.buf);
			else
				fprintf(f, "  %-*s", last ? 0 : (int)width[c], sb.buf);
		}
		fputc('\n', f);
	}
	if (t->note)
		fprintf(f, "note: %s\n", t->note);
	strbuf_release(&sb);
	return 0;
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n") && !(*s == ' ' || (*s && s[strlen(s) - 1] == ' '))) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int print_csv(FILE *f, const struct stats_table *t, const struct unit *u)
{
	struct strbuf sb = STRBUF_INIT;
	char label[96];

	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		csv_field(f, stats_col_label(&t->cols[c], u->name, label, sizeof(label)));
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			cell_text(&sb, t, r, c, u, 0);
			csv_field(f, sb.buf);
		}
		fputc('\n', f);
	}
	strbuf_release(&sb);
	return 0;
}

static void json_str(FILE *f, struct strbuf *tmp, const char *s)
{
	strbuf_reset(tmp);
	strbuf_add_json_str(tmp, s);
	fputc('"', f);
	fwrite(tmp->buf, 1, tmp->len, f);
	fputc('"', f);
}

static const char *type_name(int type)
{
	switch (type) {
	case STATS_STR: return "string";
	case STATS_INT: return "integer";
	case STATS_DUR: return "duration";
	case STATS_DURF: return "duration";
	case STATS_PCT: return "percent";
	case STATS_BYTES: return "megabytes";
	default: return "number";
	}
}

static int print_json(FILE *f, const struct stats_table *t, const struct unit *u)
{
	struct strbuf sb = STRBUF_INIT, tmp = STRBUF_INIT;
	char label[STATS_MAX_COLS][96];

	fputs("{\"report\": ", f);
	json_str(f, &tmp, t->report);
	fputs(", \"title\": ", f);
	json_str(f, &tmp, t->title);
	fprintf(f, ", \"timeunit\": \"%s\", \"columns\": [", u->name);
	for (size_t c = 0; c < t->ncols; c++) {
		stats_col_label(&t->cols[c], u->name, label[c], sizeof(label[c]));
		fputs(c ? ", {\"name\": " : "{\"name\": ", f);
		json_str(f, &tmp, label[c]);
		fprintf(f, ", \"type\": \"%s\"}", type_name(t->cols[c].type));
	}
	fputs("],\n \"rows\": [", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n  {" : "\n  {", f);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputs(", ", f);
			json_str(f, &tmp, label[c]);
			fputs(": ", f);
			if (!stats_cell_valid(t, r, c)) {
				fputs("null", f);
				continue;
			}
			cell_text(&sb, t, r, c, u, 0);
			if (t->cols[c].type == STATS_STR)
				json_str(f, &tmp, sb.buf);
			else
				fputs(sb.buf, f);
		}
		fputc('}', f);
	}
	fputs(t->nrows ? "\n ],\n \"empty\": " : "],\n \"empty\": ", f);
	if (t->nrows || !t->empty_reason)
		fputs("null", f);
	else
		json_str(f, &tmp, t->empty_reason);
	fputs(", \"note\": ", f);
	if (t->note)
		json_str(f, &tmp, t->note);
	else
		fputs("null", f);
	fputs("}\n", f);
	strbuf_release(&sb);
	strbuf_release(&tmp);
	return 0;
}

int stats_format(FILE *f, const struct stats_table *t, const char *format, const char *timeunit)
{
	const struct unit *u = unit_of(timeunit);

	if (!format || !strcmp(format, "table"))
		print_table(f, t, u);
	else if (!strcmp(format, "csv"))
		print_csv(f, t, u);
	else if (!strcmp(format, "json"))
		print_json(f, t, u);
	else
		return error("unknown format '%s' (table, csv or json)", format);
	if (ferror(f))
		return error("cannot write report '%s': %s", t->report,
			     errno ? strerror(errno) : "write error");
	return 0;
}
