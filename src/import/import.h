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

#endif
