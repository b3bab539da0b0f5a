/*
 * baseline.c - the baseline library: a directory of run summaries.
 */
#include "diff.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *baseline_dir(const char *opt)
{
	const char *env = getenv("GPUSCOPE_BASELINE_DIR");

	if (opt)
		return opt;
	return env && *env ? env : ".gpuscope-baselines";
}

int baseline_name_ok(const char *name)
{
	if (!*name || strlen(name) > 100 || name[0] == '.')
		return 0;
	for (const char *p = name; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

char *baseline_path(const char *dir, const char *name)
{
	return xstrfmt("%s/%s.baseline", dir, name);
}

int baseline_list(const char *dir, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t alloc = 0;

	*names = NULL;
	*n = 0;
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return error("cannot read baseline directory '%s': %s", dir, strerror(errno));
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 9 && !strcmp(e->d_name + len - 9, ".baseline")) {
			ALLOC_GROW(*names, *n + 1, alloc);
			(*names)[(*n)++] = xstrndup(e->d_name, len - 9);
		}
	}
	closedir(d);
	for (size_t i = 1; i < *n; i++) /* insertion sort: lists are short */
		for (size_t j = i; j > 0 && strcmp((*names)[j - 1], (*names)[j]) > 0; j--) {
			char *t = (*names)[j];
			(*names)[j] = (*names)[j - 1];
			(*names)[j - 1] = t;
		}
	return 0;
}

int baseline_mkdir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return error("cannot create baseline directory '%s': %s", dir, strerror(errno));
	return 0;
}
