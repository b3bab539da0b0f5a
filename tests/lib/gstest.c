/*
 * gstest.c - see gstest.h.
 */
#include "gstest.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int gstest_failures;
static char tmpdir[256];

void gstest_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	gstest_failures++;
}

const char *gstest_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof(tmpdir), "%s/gstest.XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return tmpdir;
}

const char *gstest_data(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("GS_SOURCE_DIR");

#ifdef GS_SOURCE_DIR_DEFAULT
	if (!root)
		root = GS_SOURCE_DIR_DEFAULT;
#endif
	snprintf(buf, sizeof(buf), "%s/tests/data/%s", root ? root : ".", rel);
	return buf;
}

const char *gstest_shared_dir(void)
{
	static char buf[4096];
	const char *env = getenv("GS_SHARED_DIR"), *root = getenv("GS_SOURCE_DIR");

#ifdef GS_SOURCE_DIR_DEFAULT
	if (!root || !*root)
		root = GS_SOURCE_DIR_DEFAULT;
#endif
	if (env && *env && !access(env, R_OK | X_OK))
		return env;
	if (root && *root) {
		snprintf(buf, sizeof(buf), "%s/../shared", root);
		if (!access(buf, R_OK | X_OK))
			return buf;
	}
	return NULL;
}

static void cleanup_tmp(void)
{
	if (tmpdir[0]) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not remove %s\n", tmpdir);
	}
}

int gstest_main(int argc, char **argv, const struct gstest *tests)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	for (const struct gstest *t = tests; t->name; t++) {
		pid_t pid;
		int status = 0;

		if (only && strcmp(only, t->name))
			continue;
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			atexit(cleanup_tmp);
			t->fn();
			exit(gstest_failures ? 1 : 0);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok - %s\n", t->name);
			passed++;
		} else {
			if (WIFSIGNALED(status))
				printf("not ok - %s (killed by signal %d)\n", t->name, WTERMSIG(status));
			else
				printf("not ok - %s\n", t->name);
			failed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
