/*
 * export.h - write a model in the formats other tools read (docs/export.md).
 *
 *  - Perfetto protobuf (.pftrace), encoded here without the Perfetto SDK;
 *  - Chrome trace-event JSON (.json), the same tracks, slices, flows and
 *    counters as the Perfetto output;
 *  - SQLite (.sqlite) with the table and column names of an nsys export
 *    where an equivalent exists, plus gpuscope's own tables;
 *  - CSV / JSON (a folder of files / one JSON document) of every stats
 *    report and of the findings;
 *  - one self-contained HTML report.
 *
 * Every writer checks every write: a full disk or a closed pipe is an error
 * (return -1 after error()), and the partial output file is removed, so a
 * failed export never leaves a short file behind with success.
 */
#ifndef GS_EXPORT_H
#define GS_EXPORT_H

#include "../model/model.h"

enum export_format {
	EXPORT_PERFETTO = 1,
	EXPORT_CHROME,
	EXPORT_SQLITE,
	EXPORT_CSV,
	EXPORT_JSON,
	EXPORT_HTML,
};

struct export_opts {
	int progress;          /* show progress on stderr (when it is a terminal) */
	int force;             /* overwrite an existing output file */
	const char *title;     /* name of the run for titles (the report path), or NULL */
};

/* The format for a name ("perfetto", "chrome", ...), or -1. */
int export_format_by_name(const char *name);
const char *export_format_name(int format);
/* The default output suffix of @format (".pftrace", ".json", ...). */
const char *export_format_ext(int format);
/*
 * export_default_path - the output path for @input in @format: the input's
 * name without its ".gpuscope"/".json"/".sqlite" suffix, plus the format's
 * suffix, in the input's folder.  Returned string is owned by the caller.
 */
char *export_default_path(const char *input, int format);

/*
 * export_write - write @m in @format to @path ("-" = stdout, not for
 * sqlite).  Returns 0, or -1 after error(); a failed regular output file is
 * removed.  An existing regular file is an error unless o->force.
 */
int export_write(const struct model *m, int format, const char *path, const struct export_opts *o);

#endif
