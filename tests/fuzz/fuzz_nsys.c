/*
 * fuzz_nsys.c - libFuzzer target for the nsys SQLite importer.
 *
 * Mutating the bytes of a database file mostly exercises SQLite's own
 * corruption checks, so the input here is SQL text: it is run on a fresh
 * database (tables with missing or extra columns, wrong types, NULLs,
 * negative or huge values, duplicated ids), which nsys_load then imports.
 * The SQL may not attach other files or run pragmas, and a statement that
 * runs too long is interrupted.
 */
#include "import/import_int.h"
#include "util/util.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int deny_files(void *ctx, int action, const char *a, const char *b, const char *db,
		      const char *trigger)
{
	(void)ctx; (void)a; (void)b; (void)db; (void)trigger;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH || action == SQLITE_PRAGMA ?
		       SQLITE_DENY : SQLITE_OK;
}

static int too_long(void *ctx)
{
	return ++*(int *)ctx > 2000; /* x 1000 virtual-machine steps */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	sqlite3 *db;
	char *sql;
	struct model m;
	int steps = 0;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/gs_fuzz_nsys.%d.sqlite", (int)getpid());
		set_error_quiet(1);
	}
	unlink(path);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) {
		sqlite3_close(db);
		return 0;
	}
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", NULL, NULL, NULL);
	sqlite3_set_authorizer(db, deny_files, NULL);
	sqlite3_progress_handler(db, 1000, too_long, &steps);
	sql = malloc(size + 1);
	memcpy(sql, data, size);
	sql[size] = 0;
	sqlite3_exec(db, sql, NULL, NULL, NULL); /* runs the statements before the first bad one */
	free(sql);
	sqlite3_close(db);

	model_init(&m);
	if (nsys_load(&m, path) == 0) {
		for (size_t i = 0; i < m.kernels.n; i++)
			(void)model_str(&m, m.kernels.v[i].name_id);
		for (size_t i = 0; i < m.threads.n; i++)
			(void)model_thread_name(&m, m.threads.v[i].pid, m.threads.v[i].tid);
	}
	model_release(&m);
	unlink(path);
	return 0;
}
