/*
 * import.h - load any input a command accepts into the model.
 *
 * The format is detected by content, never by name: a gpuscope report (its
 * magic), a PyTorch-profiler (Kineto) JSON trace, plain or gzip, or an nsys
 * SQLite export.
 */
#ifndef GS_IMPORT_H
#define GS_IMPORT_H

#include "../model/model.h"

/*
 * load_input - detect the format of @path and load it into @m (initialised
 * by the caller).  Returns 0, or -1 after a one-line error naming the file.
 */
int load_input(struct model *m, const char *path);

/*
 * The options of load_input_opts(), every command's one way into a model.
 * @sink is the streaming fast path (stats): for a gpuscope report, rows of
 * sink->types are handed to it while the report loads and not stored
 * (model_load_report_sink); other formats are loaded whole and @sunk says
 * so.  @progress (optional) is called now and then with bytes read and the
 * file size (gpuscope reports).
 */
struct load_opts {
	const struct model_sink *sink;
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	int sunk;   /* out: 1 when @sink took the rows of its types */
};
/* load_input() with @o (NULL: as load_input); 0 or -1 after a one-line error. */
int load_input_opts(struct model *m, const char *path, struct load_opts *o);

#endif
