#include "internal.h"
int export_html(const struct model *m, struct xout *o, const struct export_opts *opt)
{ (void)m; (void)opt; (void)o; return error("html export TODO"); }
