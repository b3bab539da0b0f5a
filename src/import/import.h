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
	/*
	 * A time window (analyze, export, diff --start/--end): @win_start and
	 * @win_end are ns from the report's first event (@win_end 0: to the
	 * end), set with @windowed.  For a gpuscope report a streaming pass
	 * finds the report's span (model_report_span), then only the rows that
	 * overlap [start - @win_margin, end + @win_margin] are stored, so memory
	 * follows the window, not the file; the model keeps the report's span
	 * (t_min/t_max) as a whole load would, so times still count from the
	 * report's first event.  Other formats load whole.  @win_loaded (out) is
	 * 1 when the load was windowed.  A caller that needs the window exact
	 * still clips or windows its own analysis to [start, end]; @win_keep
 * names the record types it needs from the whole report.
	 */
	int windowed;
	uint64_t win_start, win_end, win_margin;
	unsigned win_keep;  /* record types loaded whole all the same (model_sink.window_keep) */
	int win_absolute;   /* @win_start/@win_end are absolute report times (load_nvtx_extent) */
	int win_loaded;
};
/*
 * How far around its window a windowed load keeps rows (1 s): an analysis
 * of [start, end] also reads what brackets the window's edges, the GPU
 * work before a gap that crosses the start, the thread CPU samples on both
 * sides of an idle gap (100 a second by default, `profile --cpu-sample-hz`)
 * and the API call of a launch queued before the start.  On the reports in
 * tests/data 100 ms gave the same findings as a whole load and 0 did not
 * (the CPU samples); 1 s leaves room for 1 Hz sampling and longer queues,
 * and costs 2 s of rows beside the window.  Something further away (a
 * launch queued more than 1 s before its kernel) is not seen.
 */
#define LOAD_WINDOW_MARGIN_NS 1000000000ull

/*
 * load_nvtx_extent - the first start (*@lo) and last end (*@hi) of the
 * ranges of the gpuscope report @path whose name answers @want
 * (model_name_matches), read in one streaming pass that stores only the
 * NVTX ranges: the window of `analyze --nvtx RANGE`, known before the
 * load.  Returns 1, 0 when @path is no gpuscope report or has no such
 * range, or -1 after error().
 */
int load_nvtx_extent(const char *path, const char *want, uint64_t *lo, uint64_t *hi);

/* load_input() with @o (NULL: as load_input); 0 or -1 after a one-line error. */
int load_input_opts(struct model *m, const char *path, struct load_opts *o);

#endif
