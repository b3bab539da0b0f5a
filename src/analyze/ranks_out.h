/*
 * ranks_out.h - the per-rank table of `analyze` (ranks_out.c; docs/distributed.md).
 */
#ifndef GS_ANALYZE_RANKS_OUT_H
#define GS_ANALYZE_RANKS_OUT_H

#include <stdio.h>
#include "../model/model.h"

/* Print the table (nothing with fewer than two known ranks); 0, or -1 on a write error. */
int az_print_ranks_text(FILE *f, const struct model *m);
/* Append the "ranks" value of analyze's JSON: an object, or null when no rank is known. */
void az_ranks_json(struct strbuf *sb, const struct model *m);

#endif
