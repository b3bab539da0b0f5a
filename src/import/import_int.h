/*
 * import_int.h - the importers behind load_input() (internal to src/import).
 *
 * Each importer fills an initialised model, sets m->format, m->path and
 * m->has, adds the warnings its format calls for (what the format cannot
 * contain, said once) and calls model_finish().  On failure it returns -1
 * after one error() naming the file; the caller releases the model.
 */
#ifndef GS_IMPORT_INT_H
#define GS_IMPORT_INT_H

#include "../model/model.h"

/*
 * kineto_load - a PyTorch-profiler (Kineto) Chrome-trace JSON file, plain or
 * gzip-compressed, parsed as a stream (memory is bounded by the model, not
 * by the JSON text).  Returns 0 or -1.
 */
int kineto_load(struct model *m, const char *path);

/*
 * kineto_load_buffer - the same for @len bytes of (uncompressed) JSON in
 * memory; @name is used in messages.  For tests and the fuzzer.
 */
int kineto_load_buffer(struct model *m, const char *name, const void *data, size_t len);

/* nsys_load - an Nsight Systems SQLite export (nsys export --type sqlite). */
int nsys_load(struct model *m, const char *path);

/*
 * import_progress - how far the importer in hand has read (@done of
 * @total steps, or with @total 0 @done bytes of the file), for the progress line of the
 * command that loads it (load_opts.progress); nothing when it has none.
 * Call it now and then, not per row: the line is redrawn five times a
 * second at most but each call reads the clock.
 */
void import_progress(uint64_t done, uint64_t total);

/* Set m->events to the number of rows in every table (after model_finish). */
void import_count_events(struct model *m);

/*
 * import_nvtx_levels - set the nesting level of push/pop ranges with a
 * thread (tid != 0) from their times, per thread.  Call before model_finish().
 */
void import_nvtx_levels(struct model *m);

/* Sniffing helpers: 1 when the first bytes look like that format. */
int import_sniff_json(const unsigned char *p, size_t n);
int import_sniff_sqlite(const unsigned char *p, size_t n);

#endif
