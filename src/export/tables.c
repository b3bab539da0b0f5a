#include "internal.h"
int export_csv(const struct model *m, const char *path, const struct export_opts *opt)
{ (void)m; (void)opt; return error("'%s': csv export TODO", path); }
int export_json(const struct model *m, struct xout *o, const struct export_opts *opt)
{ (void)m; (void)opt; (void)o; return error("json export TODO"); }
