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

struct analyze_result;
struct analyze_opts;

/*
 * export_input - what every writer is handed: the data is loaded and
 * analysed once, by the caller (cli/cmd_export.c, `profile --report-html`),
 * with the user's window and thresholds, and every format shows those same
 * findings (as uftrace's dump opens the data once and hands it to a table of
 * output ops).  Nothing here is owned by the input.
 *
 * @findings: analyze_run()'s result with @aopts, or NULL where the caller
 *   did not analyse (a build without the analyze part, a unit test): the
 *   formats with findings then say "not analysed" and write none.
 * @aopts: the options the findings were computed with (window, --set), or
 *   NULL.  The analysed window itself is @findings->summary.win_start/end.
 */
struct export_input {
	const struct model *m;
	const struct analyze_result *findings;
	const struct analyze_opts *aopts;
	struct export_opts o;
};

/*
 * export_writer - one output format: its name (`--format NAME`), the
 * default suffix of its output, and the function that writes it.  @write
 * gets the output path ("-" = stdout where @to_stdout) and returns 0, or -1
 * after error() with no partial file left behind.
 */
struct export_writer {
	const char *name;
	int format;            /* enum export_format */
	const char *ext;
	int to_stdout;         /* can write to "-" */
	int (*write)(const struct export_input *in, const char *path);
};

/* The writer of @format, or NULL. */
const struct export_writer *export_writer_of(int format);

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
 * export_write - write @in in @format to @path ("-" = stdout, not for
 * sqlite).  Returns 0, or -1 after error(); a failed regular output file is
 * removed.  An existing regular file is an error unless in->o.force.
 */
int export_write(const struct export_input *in, int format, const char *path);

#endif
