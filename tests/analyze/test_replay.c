/*
 * test_replay.c - the dependency graph reproduces every real run.
 *
 * Replayed unchanged (no transformation), the graph of replay.c must give
 * back each GPU's recorded span to the nanosecond: every edge delay is set
 * from the recorded times.  Checked on every report and trace in
 * tests/data and, where the shared folder is beside the repository, on the
 * real traces in shared/validation (recorded by other people: Kineto and
 * nsys, NVIDIA and AMD, one to many threads, graphs, collectives).
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "import/import.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t checked, graphs;

static int readable(const char *name)
{
	size_t n = strlen(name);
	static const char *const ext[] = { ".gpuscope", ".json.gz", ".sqlite" };

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t e = strlen(ext[i]);
		if (n > e && !strcmp(name + n - e, ext[i]))
			return 1;
	}
	return 0;
}

static void check_file(const char *path)
{
	struct model m;
	struct analyze_result r;
	struct analyze_opts o = { 0 };

	o.check_replay = 1;
	model_init(&m);
	if (load_input(&m, path) < 0) {
		model_release(&m);
		return; /* not a trace (a JSON of expectations): the importers' tests judge loading */
	}
	CHECK(analyze_run(&m, &o, &r) == 0);
	checked++;
	if (r.replay_check_ns >= 0)
		graphs++;
	if (r.replay_check_ns > 0)
		gstest_fail(__FILE__, __LINE__, "%s: the unchanged replay is off by %lld ns", path,
			    (long long)r.replay_check_ns);
	analyze_result_release(&r);
	model_release(&m);
}

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[8192];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && depth < 6)
			walk(path, depth + 1);
		else if (readable(e->d_name))
			check_file(path);
	}
	closedir(d);
}

static void test_identity(void)
{
	const char *root = getenv("GS_SOURCE_DIR"), *shared = gstest_shared_dir();
	char path[8192];

	snprintf(path, sizeof(path), "%s/tests/data", root ? root : GS_SOURCE_DIR_DEFAULT);
	walk(path, 0);
	if (shared) {
		snprintf(path, sizeof(path), "%s/validation", shared);
		walk(path, 0);
	} else {
		printf("# shared/validation not found beside the repository: only tests/data checked\n");
	}
	printf("# %zu inputs analysed, %zu with a graph, replayed unchanged\n", checked, graphs);
	CHECK(checked >= 10);
	CHECK(graphs >= 10);
}

static const struct gstest tests[] = {
	GSTEST(test_identity),
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
