/*
 * sqlite.c - an SQLite database with the table and column names of an nsys
 * export (`nsys export -t sqlite`, shared/reference/nsys.md section 5) where
 * gpuscope has the same data, so queries written for nsys exports run on it:
 *
 *   StringIds, ThreadNames, PROCESSES, TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE,
 *   CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, _SYNCHRONIZATION,
 *   NVTX_EVENTS, OSRT_API, CUDA_GPU_MEMORY_USAGE_EVENTS, GPU_METRICS,
 *   TARGET_INFO_GPU_METRICS, ANALYSIS_DETAILS, META_DATA_EXPORT and the
 *   ENUM_* tables of the codes used.
 *
 * Codes are nsys's: copyKind and syncType are CUPTI's codes (as in the
 * report); memory kinds are renumbered to nsys's ENUM_CUDA_MEM_KIND
 * (0 pageable ... 6 managed static, 7 unknown), which differs from CUPTI's.
 * globalTid = pid << 24 | tid (each 24 bits), globalPid = pid << 24.
 * Times are the report's nanoseconds.  Columns nsys has and gpuscope does
 * not record are NULL.  gpuscope's own tables start with GPUSCOPE_.
 *
 * Speed: the whole export is one transaction with prepared statements,
 * journal and sync off while writing; the database is written to a
 * temporary name and renamed into place only when complete.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_GS_ANALYZE
#include "../analyze/analyze.h"
#endif

struct sq {
	sqlite3 *db;
	const struct model *m;
	const char *path;
	struct strtab extra;      /* strings not in the model; id = m->str.nr + extra id */
	uint32_t *short_id;       /* per model string: StringIds id of its short name, 0 = not yet */
	struct progress prog;
	int failed;
};

static const char schema[] =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n"
	"CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);\n"
	"CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
	"CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, "
	"busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, "
	"memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, "
	"cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER, "
	"maxThreadsPerMultiprocessor INTEGER, globalMemoryBusWidth INTEGER, memoryClockRate INTEGER);\n"
	"CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, "
	"numMultiprocessors INTEGER);\n"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
	"deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
	"streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
	"demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, "
	"launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, "
	"gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
	"blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
	"staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
	"localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER NOT NULL, "
	"sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, "
	"graphId INTEGER);\n"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
	"eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
	"returnValue INTEGER NOT NULL, callchainId INTEGER);\n"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
	"deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
	"streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
	"copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, "
	"srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, "
	"migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);\n"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, "
	"deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
	"streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, "
	"bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);\n"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, "
	"deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
	"streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
	"deprecatedSyncType INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL, "
	"eventSyncId INTEGER);\n"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, "
	"rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
	"endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, "
	"int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
	"floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT, "
	"eventId INTEGER NOT NULL PRIMARY KEY);\n"
	"CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
	"globalTid INTEGER NOT NULL, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, "
	"nestingLevel INTEGER, callchainId INTEGER, argumentsId INTEGER);\n"
	"CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, "
	"deviceId INTEGER, contextId INTEGER, address INTEGER NOT NULL, pc INTEGER, bytes INTEGER NOT NULL, "
	"memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER, "
	"streamId INTEGER);\n"
	"CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, "
	"typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);\n"
	"CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER NOT NULL, "
	"metricId INTEGER NOT NULL, value INTEGER NOT NULL);\n"
	"CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER NOT NULL, "
	"startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);\n"
	"CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);\n"
	"CREATE TABLE GPUSCOPE_THREAD_CPU (timestamp INTEGER NOT NULL, globalTid INTEGER NOT NULL, "
	"runNs INTEGER NOT NULL, waitNs INTEGER NOT NULL, cpuPercent REAL);\n"
	"CREATE TABLE GPUSCOPE_DROPS (source TEXT NOT NULL, count INTEGER NOT NULL);\n"
	"CREATE TABLE GPUSCOPE_WARNINGS (message TEXT NOT NULL);\n"
	"CREATE TABLE GPUSCOPE_FINDINGS (rank INTEGER NOT NULL, ruleId TEXT NOT NULL, "
	"severity TEXT NOT NULL, gain REAL, title TEXT NOT NULL, gainFormula TEXT, evidence TEXT, "
	"recommendation TEXT, whereStart INTEGER, whereEnd INTEGER);\n"
	"CREATE TABLE GPUSCOPE_SUMMARY (name TEXT NOT NULL, value REAL);\n";

struct enum_row {
	int id;
	const char *name, *label;
};

static const struct enum_row enum_memcpy[] = {
	{ 0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown" }, { 1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device" },
	{ 2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host" }, { 3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array" },
	{ 4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host" }, { 5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array" },
	{ 6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device" }, { 7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array" },
	{ 8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device" }, { 9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host" },
	{ 10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer" }, { -1, NULL, NULL },
};
static const struct enum_row enum_memkind[] = {
	{ 0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable" }, { 1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned" },
	{ 2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device" }, { 3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array" },
	{ 4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed" },
	{ 5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static" },
	{ 6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static" },
	{ 7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown" }, { -1, NULL, NULL },
};
static const struct enum_row enum_sync[] = {
	{ 0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown" },
	{ 1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync" },
	{ 2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait event" },
	{ 3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync" },
	{ 4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync" },
	{ -1, NULL, NULL },
};
static const struct enum_row enum_event_type[] = {
	{ 33, "NvtxCategory", "NVTX category" }, { 34, "NvtxMark", "NVTX mark" },
	{ 59, "NvtxPushPopRange", "NVTX push/pop range" }, { 60, "NvtxStartEndRange", "NVTX start/end range" },
	{ 75, "NvtxDomainCreate", "NVTX domain create" }, { -1, NULL, NULL },
};
static const struct enum_row enum_event_class[] = {
	{ 0, "CUDA_RUNTIME", "CUDA runtime API" }, { 1, "CUDA_DRIVER", "CUDA driver API" },
	{ 27, "OS_RUNTIME", "OS runtime library" }, { -1, NULL, NULL },
};
static const struct enum_row enum_launch[] = {
	{ 0, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular" },
	{ 1, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Cooperative single device" },
	{ 2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Cooperative multi device" },
	{ -1, NULL, NULL },
};
static const struct enum_row enum_memop[] = {
	{ 0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation" },
	{ 1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation" }, { -1, NULL, NULL },
};

static const struct {
	const char *table;
	const struct enum_row *rows;
} enums[] = {
	{ "ENUM_CUDA_MEMCPY_OPER", enum_memcpy }, { "ENUM_CUDA_MEM_KIND", enum_memkind },
	{ "ENUM_CUPTI_SYNC_TYPE", enum_sync }, { "ENUM_NSYS_EVENT_TYPE", enum_event_type },
	{ "ENUM_NSYS_EVENT_CLASS", enum_event_class }, { "ENUM_CUDA_KERNEL_LAUNCH_TYPE", enum_launch },
	{ "ENUM_CUDA_DEV_MEM_EVENT_OPER", enum_memop },
};

/* nsys's ENUM_CUDA_MEM_KIND numbering from CUPTI's (trace.h) */
static int nsys_mem_kind(unsigned cupti)
{
	return cupti >= 1 && cupti <= 7 ? (int)cupti - 1 : 7;
}

static inline int64_t gtid(uint32_t pid, uint32_t tid)
{
	return (int64_t)(((uint64_t)(pid & 0xffffff) << 24) | (tid & 0xffffff));
}

static inline int64_t gpid(uint32_t pid)
{
	return gtid(pid, 0);
}

static int sq_err(struct sq *s, const char *what)
{
	if (!s->failed)
		error("sqlite '%s': %s: %s", s->path, what, sqlite3_errmsg(s->db));
	s->failed = 1;
	return -1;
}

static int exec(struct sq *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (!s->failed)
			error("sqlite '%s': %s", s->path, msg ? msg : "error");
		sqlite3_free(msg);
		s->failed = 1;
		return -1;
	}
	return 0;
}

static sqlite3_stmt *prep(struct sq *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (s->failed)
		return NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sq_err(s, "prepare");
		return NULL;
	}
	return st;
}

/* Run a bound statement and reset it; progress counts rows. */
static int step(struct sq *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return sq_err(s, "insert");
	progress_add(&s->prog, 1);
	return 0;
}

#define BI(st, i, v) sqlite3_bind_int64(st, i, (sqlite3_int64)(v))
#define BT(st, i, v) sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC)
#define BN(st, i) sqlite3_bind_null(st, i)

static uint32_t extra_str(struct sq *s, const char *str)
{
	return s->m->str.nr + strtab_intern(&s->extra, str);
}

/*
 * The short name nsys shows for a kernel: the function's own name, without
 * return type, scope, template arguments and parameters.
 */
static uint32_t short_name(struct sq *s, uint32_t sid)
{
	const char *name = model_str(s->m, sid), *p;
	struct strbuf sb = STRBUF_INIT;
	int angle = 0, paren = 0, params = 0;
	size_t last_start = 0;
	uint32_t id;

	if (s->short_id[sid])
		return s->short_id[sid] - 1;
	for (p = name; *p; p++) {
		char c = *p;
		if (c == '<') {
			angle++;
			continue;
		}
		if (c == '>' && angle) {
			angle--;
			continue;
		}
		if (angle)
			continue;
		if (c == '(' && sb.len && !paren) {
			params = 1; /* the parameter list */
			break;
		}
		if (c == '(' || c == ')') {
			paren += c == '(' ? 1 : -1;
			strbuf_addch(&sb, c);
			continue;
		}
		if (!paren && (c == ' ' || (c == ':' && p[1] == ':'))) {
			if (c == ':')
				p++;
			last_start = sb.len;
			continue;
		}
		strbuf_addch(&sb, c);
	}
	if (!params || !sb.len || last_start >= sb.len)
		id = sid; /* not a C++ signature: the name as it is */
	else
		id = extra_str(s, sb.buf + last_start);
	strbuf_release(&sb);
	s->short_id[sid] = id + 1;
	return id;
}

static void uuid_text(char *buf, size_t n, const uint8_t u[16])
{
	snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

static int write_info(struct sq *s)
{
	const struct model *m = s->m;
	sqlite3_stmt *st;
	char buf[128];

	st = prep(s, "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, totalMemory, "
		     "memoryBandwidth, clockRate, smCount, uuid, cuDevice, computeMajor, computeMinor, "
		     "maxThreadsPerMultiprocessor, globalMemoryBusWidth, memoryClockRate) "
		     "VALUES (0,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?)");
	for (size_t i = 0; st && i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		char bus[32], uuid[64];
		if (model_device(m, d->id) != d)
			continue; /* one row per GPU */
		snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0", d->pci_domain, d->pci_bus, d->pci_device);
		uuid_text(uuid, sizeof(uuid), d->uuid);
		BI(st, 1, d->id);
		BT(st, 2, model_str(m, d->name_id));
		BT(st, 3, bus);
		BI(st, 4, d->global_mem);
		/* bytes/s: double data rate over the bus width */
		BI(st, 5, (uint64_t)d->mem_clock_khz * 1000 * 2 * (d->mem_bus_width / 8));
		BI(st, 6, (uint64_t)d->core_clock_khz * 1000);
		BI(st, 7, d->sm_count);
		BT(st, 8, uuid);
		BI(st, 9, d->id);
		BI(st, 10, d->cc_major);
		BI(st, 11, d->cc_minor);
		BI(st, 12, d->max_threads_per_sm);
		BI(st, 13, d->mem_bus_width);
		BI(st, 14, (uint64_t)d->mem_clock_khz * 1000);
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?,?,?,?,?)");
	for (size_t i = 0; st && i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		char uuid[64];
		uuid_text(uuid, sizeof(uuid), d->uuid);
		BI(st, 1, d->id);
		BI(st, 2, d->id);
		BI(st, 3, d->pid);
		BT(st, 4, uuid);
		BI(st, 5, d->sm_count);
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO PROCESSES VALUES (?,?,?)");
	for (size_t i = 0; st && i < m->procs.n; i++) {
		BI(st, 1, gpid(m->procs.v[i].pid));
		BI(st, 2, m->procs.v[i].pid);
		BT(st, 3, export_process_name(m, m->procs.v[i].pid, buf, sizeof(buf)));
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO ThreadNames VALUES (?,0,?)");
	for (size_t i = 0; st && i < m->threads.n; i++) {
		const struct model_thread *t = &m->threads.v[i];
		if (t->name_id) {
			BI(st, 1, t->name_id);
		} else {
			snprintf(buf, sizeof(buf), "tid %u", t->tid);
			BI(st, 1, extra_str(s, buf));
		}
		BI(st, 2, gtid(t->pid, t->tid));
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO ANALYSIS_DETAILS VALUES (0,?,?,?)");
	if (st) {
		BI(st, 1, m->t_max - m->t_min);
		BI(st, 2, m->t_min);
		BI(st, 3, m->t_max);
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO META_DATA_EXPORT VALUES (?,?)");
	if (st) {
		BT(st, 1, "EXPORTER");
		BT(st, 2, "gpuscope " GPUSCOPE_VERSION);
		step(s, st);
		BT(st, 1, "SOURCE_FORMAT");
		BT(st, 2, m->format ? m->format : "gpuscope");
		step(s, st);
		BT(st, 1, "TIMESTAMPS");
		BT(st, 2, "ns of CLOCK_MONOTONIC of the host");
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO GPUSCOPE_DROPS VALUES (?,?)");
	for (unsigned d = 1; st && d < TRACE_DROP__COUNT; d++) {
		const char *name = trace_drop_source_name(d);
		BT(st, 1, name ? name : "unknown");
		BI(st, 2, m->drops[d]);
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO GPUSCOPE_WARNINGS VALUES (?)");
	for (size_t i = 0; st && i < m->nr_warnings; i++) {
		BT(st, 1, m->warnings[i]);
		step(s, st);
	}
	sqlite3_finalize(st);
	for (size_t e = 0; e < ARRAY_SIZE(enums) && !s->failed; e++) {
		char *sql = xstrfmt("CREATE TABLE %s (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
				    "label TEXT)", enums[e].table);
		exec(s, sql);
		free(sql);
		sql = xstrfmt("INSERT INTO %s VALUES (?,?,?)", enums[e].table);
		st = prep(s, sql);
		free(sql);
		for (const struct enum_row *r = enums[e].rows; st && r->name; r++) {
			BI(st, 1, r->id);
			BT(st, 2, r->name);
			BT(st, 3, r->label);
			step(s, st);
		}
		sqlite3_finalize(st);
	}
	return s->failed ? -1 : 0;
}

/*
 * batch - rows of one table inserted BATCH_ROWS at a time with one
 * multi-row INSERT: the per-statement work of SQLite (cursor, transaction
 * check, reset) is paid once per batch instead of once per row.  Values are
 * appended in column order; text must stay valid until batch_close().
 */
#define BATCH_ROWS 64

enum { V_NULL, V_INT, V_DOUBLE, V_TEXT };

struct bval {
	int type;
	int len;
	union {
		int64_t i;
		double d;
		const char *t;
	} u;
};

struct batch {
	struct sq *s;
	char *head;               /* "INSERT INTO T (cols) VALUES " */
	int ncols, k, nv;
	sqlite3_stmt *full;
	struct bval *v;
};

static char *values_sql(const char *head, int ncols, int rows)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, head);
	for (int r = 0; r < rows; r++) {
		strbuf_addstr(&sb, r ? ",(" : "(");
		for (int c = 0; c < ncols; c++)
			strbuf_addstr(&sb, c ? ",?" : "?");
		strbuf_addch(&sb, ')');
	}
	return sb.buf;
}

static void batch_open(struct batch *b, struct sq *s, const char *table_cols, int ncols)
{
	char *sql;

	memset(b, 0, sizeof(*b));
	b->s = s;
	b->ncols = ncols;
	b->head = xstrfmt("INSERT INTO %s VALUES ", table_cols);
	sql = values_sql(b->head, ncols, BATCH_ROWS);
	b->full = prep(s, sql);
	free(sql);
	b->v = xmalloc((size_t)BATCH_ROWS * (size_t)ncols * sizeof(*b->v));
}

static void batch_run(struct batch *b, sqlite3_stmt *st)
{
	struct sq *s = b->s;

	if (!st || s->failed)
		return;
	for (int i = 0; i < b->nv; i++) {
		const struct bval *x = &b->v[i];
		switch (x->type) {
		case V_NULL: sqlite3_bind_null(st, i + 1); break;
		case V_INT: sqlite3_bind_int64(st, i + 1, x->u.i); break;
		case V_DOUBLE: sqlite3_bind_double(st, i + 1, x->u.d); break;
		default: sqlite3_bind_text(st, i + 1, x->u.t, x->len, SQLITE_STATIC); break;
		}
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		sq_err(s, "insert");
	sqlite3_reset(st);
	progress_add(&s->prog, (uint64_t)b->k);
}

static inline void bi(struct batch *b, int64_t v)
{
	struct bval *x = &b->v[b->nv++];
	x->type = V_INT;
	x->u.i = v;
}

static inline void bd(struct batch *b, double v)
{
	struct bval *x = &b->v[b->nv++];
	x->type = V_DOUBLE;
	x->u.d = v;
}

static inline void bt(struct batch *b, const char *t, int len)
{
	struct bval *x = &b->v[b->nv++];
	x->type = V_TEXT;
	x->u.t = t;
	x->len = len;
}

static inline void bn(struct batch *b)
{
	b->v[b->nv++].type = V_NULL;
}

/* The row's values are complete. */
static inline void batch_row(struct batch *b)
{
	if (b->nv != (b->k + 1) * b->ncols)
		BUG("batch row has %d values, expected %d", b->nv - b->k * b->ncols, b->ncols);
	if (++b->k == BATCH_ROWS) {
		batch_run(b, b->full);
		b->k = b->nv = 0;
	}
}

static int batch_close(struct batch *b)
{
	if (b->k && !b->s->failed) {
		char *sql = values_sql(b->head, b->ncols, b->k);
		sqlite3_stmt *st = prep(b->s, sql);
		batch_run(b, st);
		sqlite3_finalize(st);
		free(sql);
	}
	sqlite3_finalize(b->full);
	free(b->head);
	free(b->v);
	return b->s->failed ? -1 : 0;
}

static inline void bi_or_null(struct batch *b, int have, int64_t v)
{
	if (have)
		bi(b, v);
	else
		bn(b);
}

static int write_cuda(struct sq *s)
{
	const struct model *m = s->m;
	struct batch b;

	batch_open(&b, s, "CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
		   "correlationId, globalPid, demangledName, shortName, mangledName, launchType, "
		   "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
		   "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, graphId)", 24);
	for (size_t i = 0; i < m->kernels.n && !s->failed; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		bi(&b, (int64_t)k->start);
		bi(&b, (int64_t)k->end);
		bi(&b, k->device);
		bi(&b, k->context);
		bi(&b, k->stream);
		bi(&b, k->correlation);
		bi(&b, gpid(k->pid));
		bi(&b, k->name_id);
		bi(&b, short_name(s, k->name_id));
		bi_or_null(&b, k->mangled_id != 0, k->mangled_id);
		bi(&b, 0); /* launchType: regular */
		bi(&b, k->registers);
		for (int d = 0; d < 3; d++)
			bi(&b, k->grid[d]);
		for (int d = 0; d < 3; d++)
			bi(&b, k->block[d]);
		bi(&b, k->static_smem);
		bi(&b, k->dynamic_smem);
		bi(&b, 0);
		bi(&b, 0);
		bi(&b, (int64_t)i + 1); /* gridId: unique per launch */
		bi_or_null(&b, k->graph_id != 0, k->graph_id);
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
		   "correlationId, nameId, returnValue)", 7);
	for (size_t i = 0; i < m->api.n && !s->failed; i++) {
		const struct trace_api *a = &m->api.v[i];
		bi(&b, (int64_t)a->start);
		bi(&b, (int64_t)a->end);
		bi(&b, a->domain == TRACE_API_DRIVER ? 1 : 0);
		bi(&b, gtid(a->pid, a->tid));
		bi(&b, a->correlation);
		bi(&b, a->name_id);
		bi(&b, a->status);
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
		   "correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId)", 13);
	for (size_t i = 0; i < m->memcpys.n && !s->failed; i++) {
		const struct trace_memcpy *c = &m->memcpys.v[i];
		bi(&b, (int64_t)c->start);
		bi(&b, (int64_t)c->end);
		bi(&b, c->device);
		bi(&b, c->context);
		bi(&b, c->stream);
		bi(&b, c->correlation);
		bi(&b, gpid(c->pid));
		bi(&b, (int64_t)c->bytes);
		bi(&b, c->kind);
		bi(&b, nsys_mem_kind(c->src_kind));
		bi(&b, nsys_mem_kind(c->dst_kind));
		bi(&b, c->device);
		bi(&b, c->kind == COPY_PTOP ? c->dst_device : c->device);
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
		   "correlationId, globalPid, value, bytes, memKind)", 10);
	for (size_t i = 0; i < m->memsets.n && !s->failed; i++) {
		const struct trace_memset *c = &m->memsets.v[i];
		bi(&b, (int64_t)c->start);
		bi(&b, (int64_t)c->end);
		bi(&b, c->device);
		bi(&b, c->context);
		bi(&b, c->stream);
		bi(&b, c->correlation);
		bi(&b, gpid(c->pid));
		bi(&b, c->value);
		bi(&b, (int64_t)c->bytes);
		bi(&b, nsys_mem_kind(c->mem_kind));
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, "
		   "streamId, correlationId, globalPid, syncType, eventId)", 9);
	for (size_t i = 0; i < m->syncs.n && !s->failed; i++) {
		const struct trace_sync *c = &m->syncs.v[i];
		bi(&b, (int64_t)c->start);
		bi(&b, (int64_t)c->end);
		bi(&b, c->device);
		bi(&b, c->context);
		bi(&b, c->stream);
		bi(&b, c->correlation);
		bi(&b, gpid(c->pid));
		bi(&b, c->type);
		bi(&b, c->event);
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, "
		   "address, bytes, memKind, memoryOperationType, correlationId, streamId)", 10);
	for (size_t i = 0; i < m->memory.n && !s->failed; i++) {
		const struct trace_memory *a = &m->memory.v[i];
		bi(&b, (int64_t)a->time);
		bi(&b, gpid(a->pid));
		bi(&b, a->device);
		bi(&b, a->context);
		bi(&b, (int64_t)a->address);
		bi(&b, (int64_t)a->bytes);
		bi(&b, nsys_mem_kind(a->mem_kind));
		bi(&b, a->op == TRACE_MEM_FREE ? 1 : 0);
		bi(&b, a->correlation);
		bi(&b, a->stream);
		batch_row(&b);
	}
	return batch_close(&b);
}

/* uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue */
static void payload(struct batch *b, unsigned type, uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	for (unsigned col = TRACE_PAYLOAD_U64; col <= TRACE_PAYLOAD_FLOAT; col++) {
		if (col != type) {
			bn(b);
			continue;
		}
		switch (type) {
		case TRACE_PAYLOAD_U64: bi(b, (int64_t)bits); break;
		case TRACE_PAYLOAD_I64: bi(b, (int64_t)bits); break;
		case TRACE_PAYLOAD_DOUBLE: bd(b, d); break;
		case TRACE_PAYLOAD_U32: bi(b, (uint32_t)bits); break;
		case TRACE_PAYLOAD_I32: bi(b, (int32_t)(uint32_t)bits); break;
		default: bd(b, d); break;
		}
	}
}

static void text(struct batch *b, const struct model *m, uint32_t sid)
{
	bt(b, m->str.str[sid < m->str.nr ? sid : 0], (int)m->str.len[sid < m->str.nr ? sid : 0]);
}

static int write_host(struct sq *s)
{
	const struct model *m = s->m;
	struct batch b;
	int64_t event_id = 1;

	batch_open(&b, s, "NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, "
		   "globalTid, endGlobalTid, domainId, uint64Value, int64Value, doubleValue, uint32Value, "
		   "int32Value, floatValue, eventId)", 17);
	for (size_t i = 0; i < m->names.n && !s->failed; i++) {
		const struct trace_name *n = &m->names.v[i];
		if (n->kind != TRACE_NAME_DOMAIN && n->kind != TRACE_NAME_CATEGORY)
			continue;
		bi(&b, (int64_t)m->t_min);
		bn(&b);
		bi(&b, n->kind == TRACE_NAME_DOMAIN ? 75 : 33);
		bn(&b);
		bi_or_null(&b, n->kind == TRACE_NAME_CATEGORY, (int64_t)n->id);
		bn(&b);
		text(&b, m, n->name_id);
		bi(&b, gpid(n->pid));
		bn(&b);
		bi(&b, n->kind == TRACE_NAME_DOMAIN ? (int64_t)n->id : n->domain_id);
		payload(&b, 0, 0);
		bi(&b, event_id++);
		batch_row(&b);
	}
	for (size_t i = 0; i < m->nvtx.n && !s->failed; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		int se = r->kind == TRACE_NVTX_STARTEND;
		bi(&b, (int64_t)r->start);
		bi_or_null(&b, r->end != 0, (int64_t)r->end);
		bi(&b, se ? 60 : 59);
		bi_or_null(&b, se, (int64_t)r->range_id);
		bi(&b, r->category);
		bi_or_null(&b, r->color != 0, r->color);
		text(&b, m, r->name_id);
		bi(&b, gtid(r->pid, r->tid));
		bi_or_null(&b, se && r->end, gtid(r->pid, r->end_tid ? r->end_tid : r->tid));
		bi(&b, r->domain_id);
		payload(&b, r->payload_type, r->payload);
		bi(&b, event_id++);
		batch_row(&b);
	}
	for (size_t i = 0; i < m->marks.n && !s->failed; i++) {
		const struct trace_nvtx_mark *k = &m->marks.v[i];
		bi(&b, (int64_t)k->time);
		bn(&b);
		bi(&b, 34);
		bn(&b);
		bi(&b, k->category);
		bi_or_null(&b, k->color != 0, k->color);
		text(&b, m, k->name_id);
		bi(&b, gtid(k->pid, k->tid));
		bn(&b);
		bi(&b, k->domain_id);
		payload(&b, k->payload_type, k->payload);
		bi(&b, event_id++);
		batch_row(&b);
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel)", 7);
	{
		uint32_t func_ids[64] = { 0 };
		for (size_t i = 0; i < m->osrt.n && !s->failed; i++) {
			const struct trace_osrt *o = &m->osrt.v[i];
			unsigned f = o->func < 64 ? o->func : 0;
			if (!func_ids[f]) {
				const char *name = trace_osrt_name(o->func);
				func_ids[f] = extra_str(s, name ? name : "unknown") + 1;
			}
			bi(&b, (int64_t)o->start);
			bi(&b, (int64_t)o->end);
			bi(&b, 27);
			bi(&b, gtid(o->pid, o->tid));
			bi(&b, func_ids[f] - 1);
			bi(&b, o->result);
			bi(&b, 0);
			batch_row(&b);
		}
	}
	if (batch_close(&b))
		return -1;

	batch_open(&b, s, "GPUSCOPE_THREAD_CPU (timestamp, globalTid, runNs, waitNs, cpuPercent)", 5);
	{
		struct u64map prev = { 0 };
		for (size_t i = 0; i < m->cpu.n && !s->failed; i++) {
			const struct trace_cpu_sample *c = &m->cpu.v[i];
			uint64_t *v = u64map_get(&prev, ((uint64_t)c->pid << 32) | c->tid, 1);
			const struct trace_cpu_sample *p = *v ? &m->cpu.v[*v - 1] : NULL;
			bi(&b, (int64_t)c->time);
			bi(&b, gtid(c->pid, c->tid));
			bi(&b, (int64_t)c->run_ns);
			bi(&b, (int64_t)c->wait_ns);
			if (p && c->time > p->time && c->run_ns >= p->run_ns)
				bd(&b, 100.0 * (double)(c->run_ns - p->run_ns) / (double)(c->time - p->time));
			else
				bn(&b);
			*v = i + 1;
			batch_row(&b);
		}
		u64map_release(&prev);
	}
	return batch_close(&b);
}

static int write_metrics(struct sq *s)
{
	const struct model *m = s->m;
	struct u64map ids = { 0 }, seen = { 0 };
	struct batch b;
	sqlite3_stmt *info;
	uint32_t next_id = 0;
	char tn[32];

	info = prep(s, "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?,?,?,?,?)");
	batch_open(&b, s, "GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value)", 5);
	for (size_t i = 0; info && i < m->metrics.n && !s->failed; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		uint64_t *v = u64map_get(&ids, x->name_id, 1), id;
		int64_t type_id = x->device == UINT32_MAX ? -1 : (int64_t)x->device;
		uint64_t *sn;
		if (!*v)
			*v = ++next_id;
		id = *v - 1;
		/* one info row per metric and device */
		sn = u64map_get(&seen, ((uint64_t)(x->device + 1ull) << 32) | x->name_id, 1);
		if (!*sn) {
			*sn = 1;
			if (type_id < 0)
				snprintf(tn, sizeof(tn), "host");
			else
				snprintf(tn, sizeof(tn), "GPU %lld", (long long)type_id);
			BI(info, 1, type_id);
			BI(info, 2, type_id);
			BT(info, 3, tn);
			BI(info, 4, id);
			BT(info, 5, model_str(m, x->name_id));
			step(s, info);
		}
		bi(&b, (int64_t)x->time);
		bi(&b, (int64_t)x->time);
		bi(&b, type_id);
		bi(&b, (int64_t)id);
		if (x->value == (double)(int64_t)x->value)
			bi(&b, (int64_t)x->value);
		else
			bd(&b, x->value);
		batch_row(&b);
	}
	sqlite3_finalize(info);
	u64map_release(&ids);
	u64map_release(&seen);
	return batch_close(&b);
}

#ifdef HAVE_GS_ANALYZE
/*
 * The analysis runs on a second thread while the tables are written: it
 * only reads the model (the writer does too), and on a 2-core machine it
 * then costs no time of its own.
 */
struct analysis {
	const struct model *m;
	struct analyze_result r;
	int ret;
};

static void *analysis_thread(void *arg)
{
	struct analysis *a = arg;
	struct analyze_opts ao = { 0 };

	a->ret = analyze_run(a->m, &ao, &a->r);
	return NULL;
}
#endif

static int write_findings(struct sq *s, void *analysis)
{
#ifdef HAVE_GS_ANALYZE
	static const char *const sev[] = { "info", "warning", "critical" };
	struct analysis *a = analysis;
	const struct analyze_result *r = &a->r;
	sqlite3_stmt *st;

	if (a->ret)
		return -1;
	st = prep(s, "INSERT INTO GPUSCOPE_FINDINGS VALUES (?,?,?,?,?,?,?,?,?,?)");
	for (size_t i = 0; st && i < r->n; i++) {
		const struct finding *f = &r->findings[i];
		BI(st, 1, i + 1);
		BT(st, 2, f->id);
		BT(st, 3, f->severity >= 0 && f->severity <= 2 ? sev[f->severity] : "info");
		sqlite3_bind_double(st, 4, f->gain);
		BT(st, 5, f->title ? f->title : "");
		BT(st, 6, f->gain_formula);
		BT(st, 7, f->evidence);
		BT(st, 8, f->recommendation);
		if (f->nwhere) {
			BI(st, 9, f->where[0].start);
			BI(st, 10, f->where[0].end);
		} else {
			BN(st, 9);
			BN(st, 10);
		}
		step(s, st);
	}
	sqlite3_finalize(st);
	st = prep(s, "INSERT INTO GPUSCOPE_SUMMARY VALUES (?,?)");
	if (st) {
		static const char *const names[] = { "wall_s", "gpu_busy", "gpu_idle", "step_period_s" };
		double v[4] = { r->summary.wall_s, r->summary.gpu_busy, r->summary.gpu_idle,
				r->summary.step_period_s };
		for (int i = 0; i < 4; i++) {
			BT(st, 1, names[i]);
			sqlite3_bind_double(st, 2, v[i]);
			step(s, st);
		}
	}
	sqlite3_finalize(st);
#else
	(void)analysis;
#endif
	return s->failed ? -1 : 0;
}

static int write_strings(struct sq *s)
{
	const struct model *m = s->m;
	struct batch b;

	batch_open(&b, s, "StringIds (id, value)", 2);
	for (uint32_t i = 0; i < m->str.nr && !s->failed; i++) {
		bi(&b, i);
		bt(&b, m->str.str[i], (int)m->str.len[i]);
		batch_row(&b);
	}
	/* extra id 0 is the empty string, the same as model id 0: skip it */
	for (uint32_t i = 1; i < s->extra.nr && !s->failed; i++) {
		bi(&b, (int64_t)m->str.nr + i);
		bt(&b, s->extra.str[i], (int)s->extra.len[i]);
		batch_row(&b);
	}
	return batch_close(&b);
}

int export_sqlite(const struct model *m, const char *path, const struct export_opts *opt)
{
	struct sq s;
	struct stat stb;
	char *tmp;
	int ret = 0;
#ifdef HAVE_GS_ANALYZE
	struct analysis analysis = { 0 };
	pthread_t thread;
	int joined = 0;
#endif

	if (!stat(path, &stb) && !opt->force)
		return error("output '%s' exists (use --force to overwrite)", path);
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.path = path;
	strtab_init(&s.extra);
	s.short_id = xcalloc(m->str.nr + 1, sizeof(uint32_t));
	tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
	unlink(tmp);
	progress_init(&s.prog, opt->progress, "export sqlite",
		      m->kernels.n + m->api.n + m->memcpys.n + m->memsets.n + m->syncs.n + m->memory.n +
			      m->nvtx.n + m->marks.n + m->osrt.n + m->cpu.n + m->metrics.n);
	/* no allocation statistics (a global lock per malloc); fails harmlessly once initialised */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(tmp, &s.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		ret = error("cannot create '%s': %s", tmp, s.db ? sqlite3_errmsg(s.db) : "out of memory");
		goto out;
	}
	s.path = tmp;
#ifdef HAVE_GS_ANALYZE
	analysis.m = m;
	if (pthread_create(&thread, NULL, analysis_thread, &analysis)) {
		analysis_thread(&analysis); /* no thread: analyse first */
		joined = 1;
	}
#endif
	if (exec(&s, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
		     "PRAGMA page_size=65536; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;") ||
	    exec(&s, "BEGIN") || exec(&s, schema) || write_info(&s) || write_cuda(&s) ||
	    write_host(&s) || write_metrics(&s))
		ret = -1;
#ifdef HAVE_GS_ANALYZE
	if (!joined)
		pthread_join(thread, NULL);
	joined = 1;
	if (!ret && (write_findings(&s, &analysis) || write_strings(&s) || exec(&s, "COMMIT")))
		ret = -1;
	if (!analysis.ret)
		analyze_result_release(&analysis.r);
#else
	if (!ret && (write_findings(&s, NULL) || write_strings(&s) || exec(&s, "COMMIT")))
		ret = -1;
#endif
	progress_end(&s.prog);
	if (sqlite3_close(s.db) != SQLITE_OK && !ret)
		ret = error("cannot write '%s': %s", tmp, sqlite3_errmsg(s.db));
	s.db = NULL;
	if (!ret && rename(tmp, path))
		ret = error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
out:
	if (s.db)
		sqlite3_close(s.db);
	if (ret)
		unlink(tmp);
	free(tmp);
	free(s.short_id);
	strtab_release(&s.extra);
	return ret;
}
