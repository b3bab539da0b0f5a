/*
 * import.c - format detection and dispatch.
 */
#include "import.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int load_input(struct model *m, const char *path)
{
	struct stat st;
	int is_report;

	if (stat(path, &st) < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return error("cannot read '%s': is a directory", path);
	is_report = trace_is_report(path);
	if (is_report < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (is_report)
		return model_load_report(m, path);
	return error("'%s' is not a gpuscope report, Kineto JSON trace or nsys SQLite export",
		     path);
}
