#include "internal.h"
int export_sqlite(const struct model *m, const char *path, const struct export_opts *opt)
{ (void)m; (void)opt; return error("'%s': sqlite export TODO", path); }
