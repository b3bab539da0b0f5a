/*
 * fixture.h - reports written through trace_builder for the stats tests.
 */
#ifndef GS_STATS_FIXTURE_H
#define GS_STATS_FIXTURE_H

#include "trace/trace.h"

/* The hand-checkable report described in fixture.c; 0 or -1. */
int fixture_write(const char *path);
/* The same events, with strings interned in another order (other string ids). */
int fixture_write_reversed(const char *path);
/* A report with one process and no events. */
int fixture_write_empty(const char *path);

#endif
