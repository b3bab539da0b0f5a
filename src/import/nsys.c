/*
 * nsys.c - import an Nsight Systems SQLite export (nsys export --type sqlite).
 *
 * Every table and column is optional: the schema changes between nsys
 * releases and a lazy export leaves out empty tables, so each query is built
 * from what sqlite_master and PRAGMA table_info say exists; a missing
 * column reads as NULL (0).  Names are resolved through StringIds once.
 *
 * Mapping (docs/import.md): CUPTI_ACTIVITY_KIND_KERNEL/_MEMCPY/_MEMSET/
 * _SYNCHRONIZATION to kernel/memcpy/memset/sync rows, _RUNTIME to api rows
 * (eventClass 0 runtime, 1 driver; 67 CUDABACKTRACE rows repeat a call with
 * its backtrace and are skipped), NVTX_EVENTS to ranges, marks and names,
 * OSRT_API to os-runtime rows, TARGET_INFO_GPU and TARGET_INFO_CUDA_DEVICE (or
 * the activity's device ids) to devices (load_devices), GPU_METRICS to
 * metric rows, CUDA_GPU_MEMORY_USAGE_EVENTS to memory rows, ThreadNames and
 * PROCESSES to thread and process names.
 * The export schema version (META_DATA_EXPORT) is not checked: tables and
 * columns are probed instead.  globalTid packs
 * <hw:8><vm:8><pid:24><tid:24>.
 */
#include "import_int.h"
#include "model/kernel_class.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct nsys_str {
	int64_t id;               /* StringIds.id */
	size_t seq;               /* row order, for a repeated id */
	uint32_t sid;             /* model string id */
};

struct nsys {
	struct model *m;
	const char *path;
	sqlite3 *db;
	struct nsys_str *strs;    /* StringIds, sorted by id (load_strings) */
	size_t nstr;
	int memkind_nsys;         /* mem kind codes are nsys's (0 = pageable) */
	uint64_t backtrace_rows, osrt_unknown;
	uint64_t strings_unresolved; /* references to ids StringIds does not have */
	uint64_t metrics_skipped;    /* NaN/inf samples */
	MODEL_TABLE(uint32_t) pids;
	uint32_t *pid_slot;       /* open-addressing set of pids: pid, 0 = empty */
	uint32_t *pid_idx;        /* its index in pids */
	size_t pid_cap;
};

static uint32_t gtid_pid(int64_t g)
{
	return (uint32_t)(((uint64_t)g >> 24) & 0xffffff);
}

static uint32_t gtid_tid(int64_t g)
{
	return (uint32_t)((uint64_t)g & 0xffffff);
}

/* Index of @pid in n->pids, or SIZE_MAX. */
static size_t pid_find(const struct nsys *n, uint32_t pid)
{
	if (!n->pid_cap || !pid)
		return SIZE_MAX;
	for (size_t i = (pid * 2654435761u) & (n->pid_cap - 1);; i = (i + 1) & (n->pid_cap - 1)) {
		if (n->pid_slot[i] == pid)
			return n->pid_idx[i];
		if (!n->pid_slot[i])
			return SIZE_MAX;
	}
}

static void pid_insert(struct nsys *n, uint32_t pid, uint32_t idx)
{
	size_t i = (pid * 2654435761u) & (n->pid_cap - 1);

	while (n->pid_slot[i])
		i = (i + 1) & (n->pid_cap - 1);
	n->pid_slot[i] = pid;
	n->pid_idx[i] = idx;
}

/*
 * Every row notes its pid: a set, not a list scan, so that a table of many
 * distinct pids (a crafted file) costs linear time, not quadratic.
 */
static void note_pid(struct nsys *n, uint32_t pid)
{
	if (!pid || (n->pids.n && n->pids.v[n->pids.n - 1] == pid) || pid_find(n, pid) != SIZE_MAX)
		return;
	if (2 * (n->pids.n + 1) > n->pid_cap) {
		size_t cap = n->pid_cap ? 2 * n->pid_cap : 64;
		free(n->pid_slot);
		free(n->pid_idx);
		n->pid_slot = xcalloc(cap, sizeof(*n->pid_slot));
		n->pid_idx = xcalloc(cap, sizeof(*n->pid_idx));
		n->pid_cap = cap;
		for (size_t i = 0; i < n->pids.n; i++)
			pid_insert(n, n->pids.v[i], (uint32_t)i);
	}
	pid_insert(n, pid, (uint32_t)n->pids.n);
	*MODEL_PUSH(n->pids) = pid;
}

static int has_table(struct nsys *n, const char *table)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Append "col" or "NULL" for each of @cols (NULL-terminated) that @table has. */
static void select_cols(struct nsys *n, struct strbuf *sb, const char *table,
			const char *const *cols)
{
	struct strbuf q = STRBUF_INIT;
	sqlite3_stmt *st;
	char **have = NULL;
	size_t nhave = 0, alloc = 0;

	strbuf_addf(&q, "PRAGMA table_info(\"%s\")", table);
	if (sqlite3_prepare_v2(n->db, q.buf, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *c = sqlite3_column_text(st, 1);
			ALLOC_GROW(have, nhave + 1, alloc);
			have[nhave++] = xstrdup(c ? (const char *)c : "");
		}
		sqlite3_finalize(st);
	}
	strbuf_addstr(sb, "SELECT ");
	for (size_t i = 0; cols[i]; i++) {
		int ok = 0;
		for (size_t j = 0; j < nhave && !ok; j++)
			ok = !strcmp(have[j], cols[i]);
		strbuf_addf(sb, "%s%s%s%s", i ? ", " : "", ok ? "\"" : "", ok ? cols[i] : "NULL",
			    ok ? "\"" : "");
	}
	strbuf_addf(sb, " FROM \"%s\"", table);
	for (size_t j = 0; j < nhave; j++)
		free(have[j]);
	free(have);
	strbuf_release(&q);
}

/* Prepare SELECT @cols FROM @table; NULL (quietly) when the table is absent. */
static sqlite3_stmt *query(struct nsys *n, const char *table, const char *const *cols,
			   int *err)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = NULL;

	*err = 0;
	if (!has_table(n, table))
		return NULL;
	select_cols(n, &sb, table, cols);
	if (sqlite3_prepare_v2(n->db, sb.buf, -1, &st, NULL) != SQLITE_OK) {
		*err = error("nsys export '%s': cannot read table %s: %s", n->path, table,
			     sqlite3_errmsg(n->db));
		st = NULL;
	}
	strbuf_release(&sb);
	return st;
}

static int step_done(struct nsys *n, sqlite3_stmt *st, int rc, const char *table)
{
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return error("nsys export '%s': reading %s: %s", n->path, table,
			     sqlite3_errstr(rc));
	return 0;
}

static int64_t col_i(sqlite3_stmt *st, int i)
{
	return sqlite3_column_int64(st, i);
}

static uint32_t col_u32(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);
	return v < 0 ? 0 : (uint32_t)v;
}

static uint64_t col_time(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);
	return v < 0 ? 0 : (uint64_t)v;
}

/*
 * The StringIds map is a sorted array of (id, model string) pairs, looked up
 * by binary search, so it costs one entry per row whatever the ids are.
 * nsys numbers strings densely from 0, but an export cut to a time window
 * (nsys export --times, or a tool that drops rows) keeps only the strings
 * the window uses, with ids up to millions: an array indexed by id would
 * cost 4 bytes per id that is not there.  When the ids are dense the entry
 * at index id is the one (checked first, no search).
 */
static uint32_t str_find(const struct nsys *n, int64_t id)
{
	size_t lo = 0, hi = n->nstr;

	if ((uint64_t)id < n->nstr && n->strs[id].id == id)
		return n->strs[id].sid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (n->strs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->nstr && n->strs[lo].id == id ? n->strs[lo].sid : UINT32_MAX;
}

/*
 * The name in column @i of @st (a StringIds id): 0 when the column is NULL,
 * and when the id is not in StringIds (counted: a warning says how many
 * references were left unnamed).
 */
static uint32_t str_col(struct nsys *n, sqlite3_stmt *st, int i)
{
	uint32_t sid;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	sid = str_find(n, sqlite3_column_int64(st, i));
	if (sid == UINT32_MAX) {
		n->strings_unresolved++;
		return 0;
	}
	return sid;
}

/* str_col() without counting (a first pass over a table that a second pass counts) */
static uint32_t str_find_quiet(struct nsys *n, sqlite3_stmt *st, int i)
{
	uint32_t sid;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	sid = str_find(n, sqlite3_column_int64(st, i));
	return sid == UINT32_MAX ? 0 : sid;
}

static int cmp_strid(const void *a, const void *b)
{
	const struct nsys_str *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int load_strings(struct nsys *n)
{
	static const char *const cols[] = { "id", "value", NULL };
	sqlite3_stmt *st;
	size_t alloc = 0, out = 0;
	int err, rc, sorted = 1;

	st = query(n, "StringIds", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 1);
		struct nsys_str *e;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		ALLOC_GROW(n->strs, n->nstr + 1, alloc);
		e = &n->strs[n->nstr];
		e->id = col_i(st, 0);
		e->seq = n->nstr;
		e->sid = v ? model_intern(n->m, (const char *)v) : 0;
		if (n->nstr && e->id <= n->strs[n->nstr - 1].id)
			sorted = 0;
		n->nstr++;
	}
	if (!sorted) {
		/* a repeated id (damage: the column is the primary key) keeps its last row */
		qsort(n->strs, n->nstr, sizeof(*n->strs), cmp_strid);
		for (size_t i = 0; i < n->nstr; i++) {
			if (out && n->strs[out - 1].id == n->strs[i].id)
				out--;
			n->strs[out++] = n->strs[i];
		}
		n->nstr = out;
	}
	return step_done(n, st, rc, "StringIds");
}

/* nsys memory-kind code to CUPTI's (trace.h): nsys writes 0 = pageable ... 7 = unknown. */
static uint8_t mem_kind(const struct nsys *n, int64_t k)
{
	if (!n->memkind_nsys)
		return k >= 0 && k <= MEM_MANAGED_STATIC ? (uint8_t)k : MEM_UNKNOWN;
	if (k >= 0 && k <= 6)
		return (uint8_t)(k + 1);
	return MEM_UNKNOWN;
}

/* nsys copyKind: CUPTI's 0-10, then 11-13 for unified-memory migrations. */
static uint8_t copy_kind(int64_t k)
{
	if (k >= 0 && k <= COPY_PTOP)
		return (uint8_t)k;
	if (k == 11)
		return COPY_HTOD;
	if (k == 12)
		return COPY_DTOH;
	if (k == 13)
		return COPY_DTOD;
	return COPY_UNKNOWN;
}

/*
 * Which memory-kind codes does this export use?  ENUM_CUDA_MEM_KIND, when
 * present, says so by name; the documented schema (and every export we
 * have seen) numbers pageable 0, so that is the default.
 */
static void detect_memkind(struct nsys *n)
{
	sqlite3_stmt *st;

	n->memkind_nsys = 1;
	if (!has_table(n, "ENUM_CUDA_MEM_KIND"))
		return;
	if (sqlite3_prepare_v2(n->db, "SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name LIKE '%PAGEABLE'",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		n->memkind_nsys = sqlite3_column_int64(st, 0) == 0;
	sqlite3_finalize(st);
}

static int is_comm_name(const char *s)
{
	return (kernel_class_flags(s) & KCF_COMM) != 0; /* model/kernel_class.c */
}

static int load_kernels(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
		"demangledName", "mangledName", "registersPerThread", "gridX", "gridY", "gridZ",
		"blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
		"graphId", "shortName", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUPTI_ACTIVITY_KIND_KERNEL", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_kernel *k = MODEL_PUSH(n->m->kernels);
		k->start = col_time(st, 0);
		k->end = col_time(st, 1);
		k->device = col_u32(st, 2);
		k->context = col_u32(st, 3);
		k->stream = col_u32(st, 4);
		k->correlation = col_u32(st, 5);
		k->pid = gtid_pid(col_i(st, 6));
		k->name_id = str_col(n, st, 7);
		if (!k->name_id)
			k->name_id = str_col(n, st, 19);
		k->mangled_id = str_col(n, st, 8);
		k->registers = (uint16_t)col_u32(st, 9);
		for (int i = 0; i < 3; i++) {
			k->grid[i] = col_u32(st, 10 + i);
			k->block[i] = col_u32(st, 13 + i);
		}
		k->static_smem = col_u32(st, 16);
		k->dynamic_smem = col_u32(st, 17);
		k->graph_id = col_u32(st, 18);
		if (k->graph_id)
			k->flags |= TRACE_GPU_GRAPH;
		if (is_comm_name(model_str(n->m, k->name_id)))
			k->flags |= TRACE_GPU_COMM;
		note_pid(n, k->pid);
	}
	return step_done(n, st, rc, "CUPTI_ACTIVITY_KIND_KERNEL");
}

static int load_memcpys(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
		"bytes", "copyKind", "srcKind", "dstKind", "dstDeviceId", "graphNodeId", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUPTI_ACTIVITY_KIND_MEMCPY", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_memcpy *c = MODEL_PUSH(n->m->memcpys);
		c->start = col_time(st, 0);
		c->end = col_time(st, 1);
		c->device = col_u32(st, 2);
		c->context = col_u32(st, 3);
		c->stream = col_u32(st, 4);
		c->correlation = col_u32(st, 5);
		c->pid = gtid_pid(col_i(st, 6));
		c->bytes = col_time(st, 7);
		c->kind = copy_kind(col_i(st, 8));
		c->src_kind = sqlite3_column_type(st, 9) == SQLITE_NULL ? MEM_UNKNOWN :
			      mem_kind(n, col_i(st, 9));
		c->dst_kind = sqlite3_column_type(st, 10) == SQLITE_NULL ? MEM_UNKNOWN :
			      mem_kind(n, col_i(st, 10));
		c->dst_device = (uint16_t)col_u32(st, 11);
		if (sqlite3_column_type(st, 12) != SQLITE_NULL)
			c->flags |= TRACE_GPU_GRAPH;
		note_pid(n, c->pid);
	}
	return step_done(n, st, rc, "CUPTI_ACTIVITY_KIND_MEMCPY");
}

static int load_memsets(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
		"value", "bytes", "memKind", "graphNodeId", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUPTI_ACTIVITY_KIND_MEMSET", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_memset *s = MODEL_PUSH(n->m->memsets);
		s->start = col_time(st, 0);
		s->end = col_time(st, 1);
		s->device = col_u32(st, 2);
		s->context = col_u32(st, 3);
		s->stream = col_u32(st, 4);
		s->correlation = col_u32(st, 5);
		s->pid = gtid_pid(col_i(st, 6));
		s->value = col_u32(st, 7);
		s->bytes = col_time(st, 8);
		s->mem_kind = sqlite3_column_type(st, 9) == SQLITE_NULL ? MEM_UNKNOWN :
			      mem_kind(n, col_i(st, 9));
		if (sqlite3_column_type(st, 10) != SQLITE_NULL)
			s->flags |= TRACE_GPU_GRAPH;
		note_pid(n, s->pid);
	}
	return step_done(n, st, rc, "CUPTI_ACTIVITY_KIND_MEMSET");
}

static int load_syncs(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
		"syncType", "eventId", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_sync *s = MODEL_PUSH(n->m->syncs);
		int64_t t = col_i(st, 7);
		s->start = col_time(st, 0);
		s->end = col_time(st, 1);
		s->device = col_u32(st, 2);
		s->context = col_u32(st, 3);
		s->stream = sqlite3_column_type(st, 4) == SQLITE_NULL ? UINT32_MAX : col_u32(st, 4);
		s->correlation = col_u32(st, 5);
		s->pid = gtid_pid(col_i(st, 6));
		s->type = (uint16_t)(t >= SYNC_UNKNOWN && t <= SYNC_CONTEXT ? t : SYNC_UNKNOWN);
		s->event = col_u32(st, 8);
		note_pid(n, s->pid);
	}
	return step_done(n, st, rc, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", as CUPTI names the call. */
static uint32_t api_name(struct nsys *n, sqlite3_stmt *st, int col)
{
	uint32_t sid = str_col(n, st, col);
	const char *s = model_str(n->m, sid), *v = strrchr(s, '_');
	size_t i;

	if (!v || v == s || v[1] != 'v' || !v[2])
		return sid;
	for (i = 2; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return sid;
	return strtab_intern_n(&n->m->str, s, (size_t)(v - s));
}

static int load_api(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "eventClass", "globalTid", "correlationId", "nameId",
		"returnValue", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUPTI_ACTIVITY_KIND_RUNTIME", cols, &err);
	if (!st)
		return err;
	n->m->has |= MODEL_HAS_API | MODEL_HAS_CUDA;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cls = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : col_i(st, 2);
		struct trace_api *a;
		if (cls != 0 && cls != 1) {
			if (cls == 67)
				n->backtrace_rows++;
			continue;
		}
		a = MODEL_PUSH(n->m->api);
		a->start = col_time(st, 0);
		a->end = col_time(st, 1);
		a->domain = cls == 1 ? TRACE_API_DRIVER : TRACE_API_RUNTIME;
		a->pid = gtid_pid(col_i(st, 3));
		a->tid = gtid_tid(col_i(st, 3));
		a->correlation = col_u32(st, 4);
		a->name_id = api_name(n, st, 5);
		a->status = (int32_t)col_i(st, 6);
		note_pid(n, a->pid);
	}
	return step_done(n, st, rc, "CUPTI_ACTIVITY_KIND_RUNTIME");
}

enum {
	NVTX_CATEGORY = 33, NVTX_MARK = 34, NVTX_THREAD = 39, NVTX_PUSHPOP = 59,
	NVTX_STARTEND = 60, NVTX_DOMAIN_CREATE = 75,
};

struct dom_map {
	int64_t id;
	size_t seq;               /* row order: a later DOMAIN_CREATE of an id wins */
	uint32_t name_id;
};

static int cmp_dom(const void *a, const void *b)
{
	const struct dom_map *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq; /* the latest row first */
}

/* The name of domain @dom (its latest DOMAIN_CREATE row), 0 if none. */
static uint32_t dom_name(const struct dom_map *v, size_t n, int64_t dom)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].id < dom)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].id == dom ? v[lo].name_id : 0;
}

static int load_nvtx(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "eventType", "rangeId", "category", "color", "text", "globalTid",
		"endGlobalTid", "textId", "domainId", "uint64Value", "int64Value", "doubleValue",
		"uint32Value", "int32Value", "floatValue", NULL,
	};
	MODEL_TABLE(struct dom_map) doms = { 0 };
	struct model *m = n->m;
	sqlite3_stmt *st;
	int err, rc, pass;

	/* two passes: domain names first (a domain is created before it is used, but rows are unordered) */
	for (pass = 0; pass < 2; pass++) {
		st = query(n, "NVTX_EVENTS", cols, &err);
		if (!st) {
			free(doms.v);
			return err;
		}
		m->has |= MODEL_HAS_NVTX;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t type = col_i(st, 2), dom = col_i(st, 10);
			const unsigned char *text = sqlite3_column_text(st, 6);
			uint32_t name = text ? model_intern(m, (const char *)text) :
					pass ? str_col(n, st, 9) : str_find_quiet(n, st, 9);
			uint32_t dom_id = 0;
			int64_t g = col_i(st, 7);

			if (pass == 0) {
				if (type == NVTX_DOMAIN_CREATE) {
					struct dom_map *d = MODEL_PUSH(doms);
					d->seq = doms.n;
					d->id = dom;
					d->name_id = name;
				}
				continue;
			}
			if (dom)
				dom_id = dom_name(doms.v, doms.n, dom);
			if (type == NVTX_PUSHPOP || type == NVTX_STARTEND) {
				struct trace_nvtx_range *r = MODEL_PUSH(m->nvtx);
				r->start = col_time(st, 0);
				r->end = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : col_time(st, 1);
				r->kind = type == NVTX_PUSHPOP ? TRACE_NVTX_PUSHPOP : TRACE_NVTX_STARTEND;
				r->range_id = (uint64_t)col_i(st, 3);
				r->category = col_u32(st, 4);
				r->color = col_u32(st, 5);
				r->pid = gtid_pid(g);
				r->tid = gtid_tid(g);
				r->end_tid = sqlite3_column_type(st, 8) == SQLITE_NULL ?
						     r->tid : gtid_tid(col_i(st, 8));
				r->name_id = name;
				r->domain_id = dom_id;
				if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
					r->payload_type = TRACE_PAYLOAD_U64;
					r->payload = (uint64_t)col_i(st, 11);
				} else if (sqlite3_column_type(st, 12) != SQLITE_NULL) {
					r->payload_type = TRACE_PAYLOAD_I64;
					r->payload = (uint64_t)col_i(st, 12);
				} else if (sqlite3_column_type(st, 13) != SQLITE_NULL) {
					double d = sqlite3_column_double(st, 13);
					r->payload_type = TRACE_PAYLOAD_DOUBLE;
					memcpy(&r->payload, &d, sizeof(d));
				}
				note_pid(n, r->pid);
			} else if (type == NVTX_MARK) {
				struct trace_nvtx_mark *k = MODEL_PUSH(m->marks);
				k->time = col_time(st, 0);
				k->pid = gtid_pid(g);
				k->tid = gtid_tid(g);
				k->name_id = name;
				k->domain_id = dom_id;
				k->category = col_u32(st, 4);
				k->color = col_u32(st, 5);
				note_pid(n, k->pid);
			} else if (type == NVTX_DOMAIN_CREATE || type == NVTX_CATEGORY) {
				struct trace_name *nm = MODEL_PUSH(m->names);
				nm->kind = type == NVTX_DOMAIN_CREATE ? TRACE_NAME_DOMAIN : TRACE_NAME_CATEGORY;
				nm->domain_id = dom_id;
				nm->id = type == NVTX_DOMAIN_CREATE ? dom_id : col_u32(st, 4);
				nm->pid = gtid_pid(g);
				nm->name_id = name;
			} else if (type == NVTX_THREAD && name) {
				struct model_thread *t = MODEL_PUSH(m->threads);
				t->pid = gtid_pid(g);
				t->tid = gtid_tid(g);
				t->name_id = name;
			}
		}
		if ((err = step_done(n, st, rc, "NVTX_EVENTS")) < 0) {
			free(doms.v);
			return err;
		}
		if (pass == 0 && doms.n)
			qsort(doms.v, doms.n, sizeof(*doms.v), cmp_dom);
	}
	free(doms.v);
	return 0;
}

static unsigned osrt_func(const char *name)
{
	for (unsigned f = 1; f < OSRT__COUNT; f++)
		if (!strcmp(trace_osrt_name(f), name))
			return f;
	/* glibc aliases nsys reports under their own names */
	if (!strcmp(name, "open64"))
		return OSRT_OPEN;
	if (!strcmp(name, "openat64"))
		return OSRT_OPENAT;
	if (!strcmp(name, "pread64"))
		return OSRT_PREAD;
	if (!strcmp(name, "pwrite64"))
		return OSRT_PWRITE;
	if (!strcmp(name, "mmap64"))
		return OSRT_MMAP;
	if (!strcmp(name, "fopen64"))
		return OSRT_FOPEN;
	return 0;
}

static int load_osrt(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "end", "globalTid", "nameId", "returnValue", NULL,
	};
	sqlite3_stmt *st;
	uint32_t cache_id = UINT32_MAX;
	unsigned cache_f = 0;
	int err, rc;

	st = query(n, "OSRT_API", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t name = str_col(n, st, 3);
		struct trace_osrt *o;
		if (name != cache_id) {
			cache_id = name;
			cache_f = osrt_func(model_str(n->m, name));
		}
		if (!cache_f) {
			n->osrt_unknown++;
			continue;
		}
		o = MODEL_PUSH(n->m->osrt);
		o->start = col_time(st, 0);
		o->end = col_time(st, 1);
		o->pid = gtid_pid(col_i(st, 2));
		o->tid = gtid_tid(col_i(st, 2));
		o->func = (uint16_t)cache_f;
		o->result = col_i(st, 4);
		o->arg = -1;
	}
	return step_done(n, st, rc, "OSRT_API");
}

static void parse_uuid(const char *s, uint8_t *out)
{
	size_t k = 0;

	for (; s && *s && k < 32; s++) {
		int v;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			v = *s - 'A' + 10;
		else
			continue;
		out[k / 2] = (uint8_t)(out[k / 2] << 4 | v);
		k++;
	}
}

/* Does @table have column @col? */
static int has_col(struct nsys *n, const char *table, const char *col)
{
	struct strbuf q = STRBUF_INIT;
	sqlite3_stmt *st;
	int found = 0;

	strbuf_addf(&q, "PRAGMA table_info(\"%s\")", table);
	if (sqlite3_prepare_v2(n->db, q.buf, -1, &st, NULL) == SQLITE_OK) {
		while (!found && sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *c = sqlite3_column_text(st, 1);
			found = c && !strcmp((const char *)c, col);
		}
		sqlite3_finalize(st);
	}
	strbuf_release(&q);
	return found;
}

/* A TARGET_INFO_GPU row: nsys's GPU id, its facts and where each came from. */
struct nsys_gpu {
	int64_t id;
	struct trace_device d;    /* d.id = cuDevice, else id */
	uint32_t src[MODEL_FACT__COUNT];
};

/* A TARGET_INFO_CUDA_DEVICE row: which CUDA ordinal process @pid gave GPU @gpu. */
struct nsys_cudadev {
	int64_t gpu;
	uint32_t cuda, pid, sms;
};

__attribute__((format(printf, 2, 3)))
static uint32_t intern_reason(struct nsys *n, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t id;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	id = model_intern(n->m, sb.buf);
	strbuf_release(&sb);
	return id;
}

/*
 * The source of a fact read from column @col of a TARGET_INFO_GPU row
 * (@have_col: the table has it): recorded when non-zero, else why not.
 */
static uint32_t fact_src(struct nsys *n, int have_col, const char *col, int nonzero)
{
	if (nonzero)
		return model_intern(n->m, "recorded");
	if (!have_col)
		return intern_reason(n, "-: TARGET_INFO_GPU has no %s column", col);
	return intern_reason(n, "-: TARGET_INFO_GPU.%s is empty or 0 for this GPU", col);
}

static int read_gpus(struct nsys *n, struct nsys_gpu **out, size_t *nout)
{
	static const char *const cols[] = {
		"id", "cuDevice", "name", "busLocation", "totalMemory", "clockRate", "smCount",
		"uuid", "computeMajor", "computeMinor", "maxWarpsPerSm", "threadsPerWarp",
		"smMajor", "smMinor", NULL,
	};
	int have_sm, have_cc, have_mem, have_name, have_smcc;
	size_t alloc = 0;
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "TARGET_INFO_GPU", cols, &err);
	if (!st)
		return err;
	have_name = has_col(n, "TARGET_INFO_GPU", "name");
	have_sm = has_col(n, "TARGET_INFO_GPU", "smCount");
	have_cc = has_col(n, "TARGET_INFO_GPU", "computeMajor");
	have_smcc = has_col(n, "TARGET_INFO_GPU", "smMajor");
	have_mem = has_col(n, "TARGET_INFO_GPU", "totalMemory");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct nsys_gpu *g;
		struct trace_device *d;
		const unsigned char *bus = sqlite3_column_text(st, 3), *name = sqlite3_column_text(st, 2);
		unsigned dom = 0, b = 0, dv = 0, fn = 0;

		ALLOC_GROW(*out, *nout + 1, alloc);
		g = &(*out)[(*nout)++];
		memset(g, 0, sizeof(*g));
		d = &g->d;
		g->id = col_i(st, 0);
		d->id = sqlite3_column_type(st, 1) == SQLITE_NULL ? col_u32(st, 0) : col_u32(st, 1);
		d->name_id = name && *name ? model_intern(n->m, (const char *)name) : 0;
		if (bus && sscanf((const char *)bus, "%x:%x:%x.%x", &dom, &b, &dv, &fn) >= 3) {
			d->pci_domain = dom;
			d->pci_bus = b;
			d->pci_device = dv;
		}
		d->global_mem = col_time(st, 4);
		d->core_clock_khz = (uint32_t)(col_time(st, 5) / 1000);
		d->sm_count = col_u32(st, 6);
		parse_uuid((const char *)sqlite3_column_text(st, 7), d->uuid);
		d->cc_major = col_u32(st, 8);
		d->cc_minor = col_u32(st, 9);
		if (!d->cc_major) { /* smMajor/smMinor: the same numbers, under another name */
			d->cc_major = col_u32(st, 12);
			d->cc_minor = col_u32(st, 13);
		}
		d->max_threads_per_sm = col_u32(st, 10) * col_u32(st, 11);
		g->src[MODEL_FACT_NAME] = fact_src(n, have_name, "name", d->name_id != 0);
		g->src[MODEL_FACT_SMS] = fact_src(n, have_sm, "smCount", d->sm_count != 0);
		/* cc 0.x is no GPU CUDA runs on: 0 is "not recorded" */
		g->src[MODEL_FACT_CC] = fact_src(n, have_cc || have_smcc, "computeMajor", d->cc_major != 0);
		g->src[MODEL_FACT_MEMORY] = fact_src(n, have_mem, "totalMemory", d->global_mem != 0);
	}
	return step_done(n, st, rc, "TARGET_INFO_GPU");
}

static int read_cudadevs(struct nsys *n, struct nsys_cudadev **out, size_t *nout)
{
	static const char *const cols[] = { "gpuId", "cudaId", "pid", "numMultiprocessors", NULL };
	size_t alloc = 0;
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "TARGET_INFO_CUDA_DEVICE", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct nsys_cudadev *c;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		ALLOC_GROW(*out, *nout + 1, alloc);
		c = &(*out)[(*nout)++];
		c->gpu = col_i(st, 0);
		c->cuda = col_u32(st, 1);
		c->pid = col_u32(st, 2);
		c->sms = col_u32(st, 3);
	}
	return step_done(n, st, rc, "TARGET_INFO_CUDA_DEVICE");
}

/* By CUDA ordinal, then pid. */
static int cmp_device(const void *a, const void *b)
{
	const struct trace_device *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Add a device row and its sources. */
static void add_device(struct nsys *n, const struct trace_device *d, const uint32_t *src)
{
	struct model_device_source *s;

	*MODEL_PUSH(n->m->devices) = *d;
	s = MODEL_PUSH(n->m->device_sources);
	s->device = d->id;
	s->pid = d->pid;
	memcpy(s->src, src, sizeof(s->src));
}

/* The lowest pid whose kernels, copies or sets ran on CUDA device @dev; 0 if none. */
static uint32_t device_pid(const struct model *m, uint32_t dev)
{
	uint32_t pid = 0;

#define LOWEST(t) \
	for (size_t i = 0; i < m->t.n; i++) \
		if (m->t.v[i].device == dev && m->t.v[i].pid && (!pid || m->t.v[i].pid < pid)) \
			pid = m->t.v[i].pid
	LOWEST(kernels);
	LOWEST(memcpys);
	LOWEST(memsets);
#undef LOWEST
	return pid;
}

static int have_device(const struct model *m, uint32_t dev)
{
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == dev)
			return 1;
	return 0;
}

/* A device that GPU work ran on and no table describes: every fact unknown, for @why. */
static void add_unknown_device(struct nsys *n, uint32_t dev, uint32_t why)
{
	struct trace_device d;
	uint32_t src[MODEL_FACT__COUNT];

	memset(&d, 0, sizeof(d));
	d.id = dev;
	d.pid = device_pid(n->m, dev);
	for (int f = 0; f < MODEL_FACT__COUNT; f++)
		src[f] = why;
	add_device(n, &d, src);
}

/*
 * Devices, after the GPU activity is loaded (device ids and pids come from it).
 *
 * TARGET_INFO_GPU describes each GPU of the machine under nsys's own GPU id;
 * the activity tables' deviceId is the CUDA ordinal in the process, which
 * CUDA_VISIBLE_DEVICES makes differ from process to process.
 * TARGET_INFO_CUDA_DEVICE(gpuId, cudaId, pid), where the export has it, says
 * which ordinal each process gave each GPU: one device row per distinct
 * (GPU, ordinal), pid the lowest process that used it that way (two ranks
 * that each see their own GPU as ordinal 0 are two rows, told apart by pid).
 * GPUs that no process used are left out: they have no ordinal.  Without
 * that table, a GPU's ordinal is its cuDevice column (else its id), as
 * every process sees it.  A device id that GPU work ran on and that no
 * table describes (an export cut down to a window leaves TARGET_INFO_GPU
 * out) is still a device, with every fact unknown and the reason.
 */
static int load_devices(struct nsys *n)
{
	struct nsys_gpu *gpus = NULL;
	struct nsys_cudadev *cds = NULL;
	size_t ngpu = 0, ncd = 0;
	int has_gpu = has_table(n, "TARGET_INFO_GPU");
	uint32_t why;

	if (read_gpus(n, &gpus, &ngpu) < 0 || read_cudadevs(n, &cds, &ncd) < 0) {
		free(gpus);
		free(cds);
		return -1;
	}
	for (size_t i = 0; i < ncd; i++) {
		struct nsys_cudadev *c = &cds[i];
		struct trace_device d;
		uint32_t src[MODEL_FACT__COUNT], pid = c->pid;
		const struct nsys_gpu *g = NULL;
		size_t j;
		int dup = 0;

		for (j = 0; j < i && !dup; j++)
			dup = cds[j].gpu == c->gpu && cds[j].cuda == c->cuda;
		if (dup)
			continue;
		for (j = i + 1; j < ncd; j++)
			if (cds[j].gpu == c->gpu && cds[j].cuda == c->cuda && cds[j].pid &&
			    (!pid || cds[j].pid < pid))
				pid = cds[j].pid;
		for (j = 0; j < ngpu && !g; j++)
			if (gpus[j].id == c->gpu)
				g = &gpus[j];
		if (g) {
			d = g->d;
			memcpy(src, g->src, sizeof(src));
		} else {
			memset(&d, 0, sizeof(d));
			why = has_gpu ? intern_reason(n, "-: TARGET_INFO_GPU has no GPU %" PRId64, c->gpu) :
					model_intern(n->m, "-: the export has no TARGET_INFO_GPU table");
			for (int f = 0; f < MODEL_FACT__COUNT; f++)
				src[f] = why;
		}
		if (!d.sm_count && c->sms) {
			d.sm_count = c->sms;
			src[MODEL_FACT_SMS] = model_intern(n->m, "recorded");
		}
		d.id = c->cuda;
		d.pid = pid;
		add_device(n, &d, src);
	}
	if (!ncd)
		for (size_t i = 0; i < ngpu; i++) {
			struct trace_device d = gpus[i].d;
			d.pid = device_pid(n->m, d.id);
			add_device(n, &d, gpus[i].src);
		}
	why = has_gpu ? 0 : model_intern(n->m, "-: the export has no TARGET_INFO_GPU table");
#define UNDESCRIBED(t) \
	for (size_t i = 0; i < n->m->t.n; i++) \
		if (!have_device(n->m, n->m->t.v[i].device)) \
			add_unknown_device(n, n->m->t.v[i].device, why ? why : \
					   intern_reason(n, "-: TARGET_INFO_GPU has no row for CUDA device %u", \
							 n->m->t.v[i].device));
	UNDESCRIBED(kernels);
	UNDESCRIBED(memcpys);
	UNDESCRIBED(memsets);
#undef UNDESCRIBED
	if (n->m->devices.n > 1)
		qsort(n->m->devices.v, n->m->devices.n, sizeof(*n->m->devices.v), cmp_device);
	free(gpus);
	free(cds);
	return 0;
}

/* GPU_METRICS(timestamp, typeId, metricId, value) named by TARGET_INFO_GPU_METRICS. */
static int load_gpu_metrics(struct nsys *n)
{
	sqlite3_stmt *st;
	int rc;

	if (!has_table(n, "GPU_METRICS") || !has_table(n, "TARGET_INFO_GPU_METRICS"))
		return 0;
	if (sqlite3_prepare_v2(n->db,
			       "SELECT g.timestamp, g.value, t.sourceId, t.metricName FROM GPU_METRICS g "
			       "JOIN TARGET_INFO_GPU_METRICS t ON t.typeId = g.typeId AND t.metricId = g.metricId",
			       -1, &st, NULL) != SQLITE_OK) {
		model_warn(n->m, "nsys: GPU_METRICS present but unreadable (%s): skipped",
			   sqlite3_errmsg(n->db));
		return 0;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_metric *mt;
		const unsigned char *name = sqlite3_column_text(st, 3);
		struct strbuf sb = STRBUF_INIT;
		double v = sqlite3_column_double(st, 1);
		if (!isfinite(v)) { /* SQLite stores 9e999 as infinity */
			n->metrics_skipped++;
			continue;
		}
		mt = MODEL_PUSH(n->m->metrics);
		strbuf_addf(&sb, "nsys:%s", name ? (const char *)name : "?");
		mt->time = col_time(st, 0);
		mt->value = v;
		mt->device = col_u32(st, 2);
		mt->name_id = model_intern(n->m, sb.buf);
		strbuf_release(&sb);
	}
	return step_done(n, st, rc, "GPU_METRICS");
}

static int load_memory(struct nsys *n)
{
	static const char *const cols[] = {
		"start", "globalPid", "deviceId", "address", "bytes", "memKind",
		"memoryOperationType", "correlationId", "contextId", "streamId", NULL,
	};
	sqlite3_stmt *st;
	int err, rc;

	st = query(n, "CUDA_GPU_MEMORY_USAGE_EVENTS", cols, &err);
	if (!st)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_memory *mm = MODEL_PUSH(n->m->memory);
		mm->time = col_time(st, 0);
		mm->pid = gtid_pid(col_i(st, 1));
		mm->device = col_u32(st, 2);
		mm->address = (uint64_t)col_i(st, 3);
		mm->bytes = col_time(st, 4);
		mm->mem_kind = mem_kind(n, col_i(st, 5));
		/* ENUM_CUDA_DEV_MEM_EVENT_OPER: 0 allocation, 1 deallocation */
		mm->op = col_i(st, 6) == 1 ? TRACE_MEM_FREE : TRACE_MEM_ALLOC;
		mm->correlation = col_u32(st, 7);
		mm->context = col_u32(st, 8);
		mm->stream = col_u32(st, 9);
	}
	return step_done(n, st, rc, "CUDA_GPU_MEMORY_USAGE_EVENTS");
}

static int load_names(struct nsys *n)
{
	static const char *const tcols[] = { "nameId", "globalTid", NULL };
	static const char *const pcols[] = { "globalPid", "pid", "name", NULL };
	sqlite3_stmt *st;
	size_t base;
	int err, rc;

	st = query(n, "ThreadNames", tcols, &err);
	if (err)
		return err;
	if (st) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			uint32_t pid = gtid_pid(col_i(st, 1));
			struct model_thread *t;
			if (pid_find(n, pid) == SIZE_MAX)
				continue;
			t = MODEL_PUSH(n->m->threads);
			t->pid = pid;
			t->tid = gtid_tid(col_i(st, 1));
			t->name_id = str_col(n, st, 0);
		}
		if (step_done(n, st, rc, "ThreadNames") < 0)
			return -1;
	}
	base = n->m->procs.n;
	for (size_t i = 0; i < n->pids.n; i++) {
		struct model_process *p = MODEL_PUSH(n->m->procs);
		p->pid = n->pids.v[i];
		p->ended = 1;
	}
	st = query(n, "PROCESSES", pcols, &err);
	if (err)
		return err;
	if (st) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			uint32_t pid = sqlite3_column_type(st, 1) == SQLITE_NULL ?
					       gtid_pid(col_i(st, 0)) : col_u32(st, 1);
			const unsigned char *name = sqlite3_column_text(st, 2);
			size_t i = pid_find(n, pid);
			if (i != SIZE_MAX && name)
				n->m->procs.v[base + i].cmdline_id = model_intern(n->m, (const char *)name);
		}
		if (step_done(n, st, rc, "PROCESSES") < 0)
			return -1;
	}
	return 0;
}

static int nsys_read(struct nsys *n)
{
	static int (*const steps[])(struct nsys *n) = {
		load_strings, load_kernels, load_memcpys, load_memsets, load_devices, load_syncs,
		load_api, load_nvtx, load_osrt, load_gpu_metrics, load_memory, load_names,
	};
	struct model *m = n->m;
	sqlite3_stmt *st;
	int rc;

	/* the first read of the schema: a corrupt or non-database file fails here */
	rc = sqlite3_prepare_v2(n->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		rc = rc == SQLITE_ROW ? SQLITE_OK : rc;
	}
	if (rc != SQLITE_OK)
		return error("nsys export '%s': not a readable SQLite database: %s", n->path,
			     sqlite3_errmsg(n->db));
	if (!has_table(n, "StringIds") ||
	    (!has_table(n, "CUPTI_ACTIVITY_KIND_KERNEL") && !has_table(n, "NVTX_EVENTS") &&
	     !has_table(n, "CUPTI_ACTIVITY_KIND_RUNTIME") && !has_table(n, "OSRT_API") &&
	     !has_table(n, "TARGET_INFO_GPU")))
		return error("'%s' is an SQLite database but not an nsys export (no StringIds or event tables)",
			     n->path);
	detect_memkind(n);
	/* the tables in turn, each a step of the progress line */
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (steps[i](n) < 0)
			return -1;
		import_progress(i + 1, ARRAY_SIZE(steps));
	}
	if (n->backtrace_rows)
		model_warn(m, "nsys: %" PRIu64 " CUDA backtrace rows (eventClass 67) repeat API calls already counted and were not imported",
			   n->backtrace_rows);
	if (n->strings_unresolved)
		model_warn(m, "nsys: %" PRIu64 " references to string ids that StringIds does not have were left unnamed",
			   n->strings_unresolved);
	if (n->metrics_skipped)
		model_warn(m, "nsys: %" PRIu64 " GPU_METRICS samples that are not finite numbers were skipped",
			   n->metrics_skipped);
	if (n->osrt_unknown)
		model_warn(m, "nsys: %" PRIu64 " OS-runtime calls of functions gpuscope does not model were skipped",
			   n->osrt_unknown);
	if (m->osrt.n)
		m->has |= MODEL_HAS_OSRT;
	else
		model_warn(m, "no OS-runtime data in this export (OSRT_API absent or empty): the starvation rule cannot attribute gaps to I/O");
	/*
	 * nsys records CUDA synchronisation activity whenever it traces CUDA,
	 * so with API rows an empty or absent SYNCHRONIZATION table means none
	 * happened (a lazy export leaves empty tables out).
	 */
	if (m->syncs.n || m->api.n)
		m->has |= MODEL_HAS_SYNC;
	else
		model_warn(m, "no CUDA synchronisation records in this export: time blocked in synchronisation is not attributed");
	if (!m->metrics.n)
		model_warn(m, "no GPU metric samples in this export (nsys --gpu-metrics-devices was off)");
	if (m->memory.n)
		m->has |= MODEL_HAS_MEMORY;
	model_warn(m, "no per-thread CPU-time samples imported from nsys exports");
	return 0;
}

int nsys_load(struct model *m, const char *path)
{
	struct nsys n;
	int ret;

	memset(&n, 0, sizeof(n));
	n.m = m;
	n.path = path;
	if (sqlite3_open_v2(path, &n.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		ret = error("nsys export '%s': cannot open: %s", path,
			    n.db ? sqlite3_errmsg(n.db) : "out of memory");
		sqlite3_close(n.db);
		return ret;
	}
	free(m->path);
	m->path = xstrdup(path);
	m->format = "nsys-sqlite";
	ret = nsys_read(&n);
	sqlite3_close(n.db);
	free(n.strs);
	free(n.pids.v);
	free(n.pid_slot);
	free(n.pid_idx);
	if (ret)
		return ret;
	import_nvtx_levels(m);
	model_finish(m);
	import_count_events(m);
	return 0;
}
