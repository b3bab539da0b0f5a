/*
 * color.c - severities and verdicts coloured in text output on a terminal
 * (util.h's color_on(): --color, NO_COLOR, a tty).  The printers of analyze
 * and diff stay colour-blind: their text goes through a memory stream and
 * is coloured here word by word, so files, pipes and tests get exactly the
 * bytes they always did.
 */
#include "commands.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

const char *color_for_word(FILE *f, const char *word)
{
	static const struct { const char *w; enum color c; } map[] = {
		{ "critical", COLOR_RED }, { "warning", COLOR_YELLOW }, { "info", COLOR_DIM },
		{ "worse", COLOR_RED }, { "better", COLOR_GREEN }, { "within noise", COLOR_DIM },
		{ "REGRESSED", COLOR_RED }, { "ok", COLOR_GREEN }, { "pass", COLOR_GREEN },
		{ "warn", COLOR_YELLOW }, { "fail", COLOR_RED },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(word, map[i].w))
			return color(f, map[i].c);
	return "";
}

/* The verdict words a line of diff ends with, longest first. */
static const char *const tail_words[] = { "within noise", "better", "worse", NULL };

static void put_line(FILE *f, const char *line, size_t len)
{
	const char *reset = color(f, COLOR_RESET);
	const char *br = len && line[len - 1] == ']' ? memrchr(line, ',', len) : NULL;

	/* analyze: "... — est. gain 39.8% [synchronization, critical]" */
	if (br && br + 2 < line + len) {
		size_t wl = (size_t)(line + len - 1 - (br + 2));
		char *w = xstrndup(br + 2, wl);
		const char *c = color_for_word(f, w);
		const char *dot = memchr(line, '.', len);
		size_t head = dot && dot < br ? (size_t)(dot - line + 1) : 0;
		if (*c) {
			/* the number bold, the severity in its colour */
			fprintf(f, "%s%.*s%s%.*s%s%s%s]\n", color(f, COLOR_BOLD), (int)head, line, reset,
				(int)(br + 2 - line - head), line + head, c, w, reset);
			free(w);
			return;
		}
		free(w);
	}
	/* diff: a row ending with its verdict */
	for (size_t i = 0; tail_words[i]; i++) {
		size_t wl = strlen(tail_words[i]);
		if (len > wl && !memcmp(line + len - wl, tail_words[i], wl) && line[len - wl - 1] == ' ') {
			fprintf(f, "%.*s%s%s%s\n", (int)(len - wl), line, color_for_word(f, tail_words[i]),
				tail_words[i], reset);
			return;
		}
	}
	fprintf(f, "%.*s\n", (int)len, line);
}

int print_colored(FILE *f, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (nl)
			put_line(f, p, n);
		else
			fwrite(p, 1, n, f);
		p += n + (nl ? 1 : 0);
	}
	return ferror(f) ? -1 : 0;
}
