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
 * Speed: the whole export is one transaction, journal and sync off while
 * writing, and the big tables are filled from virtual tables over the
 * model (below); the database is written to a temporary name and renamed
 * into place only when complete.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../model/gpu_facts.h"

#ifdef HAVE_GS_ANALYZE
#include "../analyze/analyze.h"
#endif

/*
 * One database connection being written.  The export writes two at once
 * (below): the shared parts (extra strings, short names, OS function ids)
 * are complete before the second thread starts and only read after.
 */
struct sq {
	sqlite3 *db;
	const struct model *m;
	const char *path;
	struct strtab *extra;     /* strings not in the model; id = m->str.nr + extra id */
	uint32_t *short_id;       /* per model string: StringIds id of its short name, 0 = not yet */
	uint32_t *osrt_ids;       /* per OS function (< 64): StringIds id of its name */
	struct progress *prog;    /* NULL on the second thread */
	int failed;
	int *reported;            /* shared by both threads: one error line for the export */
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
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, "
	"systemClockNs INTEGER);\n"
	"CREATE TABLE EXPORT_SCHEMA_VERSION (major INTEGER, minor INTEGER, micro INTEGER);\n"
	"CREATE TABLE GPUSCOPE_THREAD_CPU (timestamp INTEGER NOT NULL, globalTid INTEGER NOT NULL, "
	"runNs INTEGER NOT NULL, waitNs INTEGER NOT NULL, cpuPercent REAL);\n"
	"CREATE TABLE GPUSCOPE_DROPS (source TEXT NOT NULL, count INTEGER NOT NULL);\n"
	"CREATE TABLE GPUSCOPE_WARNINGS (message TEXT NOT NULL);\n"
	"CREATE TABLE GPUSCOPE_FINDINGS (rank INTEGER NOT NULL, ruleId TEXT NOT NULL, "
	"severity TEXT NOT NULL, gain REAL, title TEXT NOT NULL, gainFormula TEXT, evidence TEXT, "
	"recommendation TEXT, whereStart INTEGER, whereEnd INTEGER);\n"
	"CREATE TABLE GPUSCOPE_SUMMARY (name TEXT NOT NULL, value REAL);\n";

/* nsys's SQLite schema version as of the reference the names follow (docs/export.md) */
#define NSYS_SCHEMA_VERSION "3.28.1"
#define NSYS_SCHEMA_MAJOR 3
#define NSYS_SCHEMA_MINOR 28
#define NSYS_SCHEMA_MICRO 1

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

/* SQLite's message, with the system's reason when an I/O call failed ("disk I/O error: File too large"). */
static int sq_report(struct sq *s, const char *what, const char *msg)
{
	int e = s->db ? sqlite3_system_errno(s->db) : 0;

	if (!s->failed && !__atomic_exchange_n(s->reported, 1, __ATOMIC_RELAXED)) {
		if (e)
			error("sqlite '%s': %s%s%s: %s", s->path, what ? what : "", what ? ": " : "", msg,
			      strerror(e));
		else
			error("sqlite '%s': %s%s%s", s->path, what ? what : "", what ? ": " : "", msg);
	}
	s->failed = 1;
	return -1;
}

static int sq_err(struct sq *s, const char *what)
{
	return sq_report(s, what, sqlite3_errmsg(s->db));
}

static int exec(struct sq *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		sq_report(s, NULL, msg ? msg : "error");
		sqlite3_free(msg);
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
	if (s->prog)
		progress_add(s->prog, 1);
	return 0;
}

#define BI(st, i, v) sqlite3_bind_int64(st, i, (sqlite3_int64)(v))
#define BT(st, i, v) sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC)
#define BN(st, i) sqlite3_bind_null(st, i)

static uint32_t extra_str(struct sq *s, const char *str)
{
	return s->m->str.nr + strtab_intern(s->extra, str);
}

/*
 * The short name nsys stores for a kernel (kernel_base_name()): the
 * function's own name, without return type, scopes (anonymous namespaces
 * too), template arguments and parameters, so that `GROUP BY shortName`
 * merges a kernel's instantiations as nsys's ":base" reports do.
 */
static uint32_t short_name(struct sq *s, uint32_t sid)
{
	const char *name = model_str(s->m, sid), *base;
	size_t len;
	uint32_t id;

	if (s->short_id[sid])
		return s->short_id[sid] - 1;
	base = kernel_base_name(name, &len);
	if (base == name && len == strlen(name)) {
		id = sid; /* already a base name */
	} else {
		char *copy = xstrndup(base, len);
		id = extra_str(s, copy);
		free(copy);
	}
	s->short_id[sid] = id + 1;
	return id;
}

static void uuid_text(char *buf, size_t n, const uint8_t u[16])
{
	snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/*
 * memoryBandwidth in bytes/s: from the recorded memory clock and bus width
 * (double data rate), else the datasheet's figure for the GPU model
 * (gpu_facts.h, GB/s), else NULL: unknown, not 0.
 */
static void bind_bandwidth(sqlite3_stmt *st, int col, const struct model *m, const struct trace_device *d)
{
	struct gpu_facts f;

	if (d->mem_clock_khz && d->mem_bus_width) {
		sqlite3_bind_int64(st, col, (int64_t)((uint64_t)d->mem_clock_khz * 1000 * 2 * (d->mem_bus_width / 8)));
		return;
	}
	gpu_facts_lookup(model_str(m, d->name_id), d->cc_major, d->cc_minor, d->sm_count, d->global_mem, &f);
	if (f.f[GF_MEM_BW].src != GFS_UNKNOWN && f.f[GF_MEM_BW].v > 0)
		sqlite3_bind_int64(st, col, (int64_t)(f.f[GF_MEM_BW].v * 1e9));
	else
		sqlite3_bind_null(st, col);
}

/*
 * The wall clock at the report's first timestamp: the earliest process
 * start with a wall-clock reading, moved back to t_min on the monotonic
 * clock.  0 when no process recorded one.
 */
static uint64_t session_start_utc(const struct model *m, uint64_t *mono)
{
	const struct model_process *best = NULL;

	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		if (p->start_realtime_ns && p->start_mono_ns && (!best || p->start_mono_ns < best->start_mono_ns))
			best = p;
	}
	if (!best)
		return 0;
	*mono = m->t_min;
	if (best->start_mono_ns >= m->t_min)
		return best->start_realtime_ns - (best->start_mono_ns - m->t_min);
	return best->start_realtime_ns + (m->t_min - best->start_mono_ns);
}

static void fmt_utc(char *buf, size_t n, uint64_t ns, int local)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!(local ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)) ||
	    !strftime(buf, n, local ? "%Y-%m-%d %H:%M:%S %z" : "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, n, "-");
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
		bind_bandwidth(st, 5, m, d);
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
	st = prep(s, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?,?,?,?)");
	if (st) {
		uint64_t mono = 0, utc = session_start_utc(m, &mono);
		char t1[64], t2[64];
		if (utc) {
			fmt_utc(t1, sizeof(t1), utc, 0);
			fmt_utc(t2, sizeof(t2), utc, 1);
			BI(st, 1, utc);
			BT(st, 2, t1);
			BT(st, 3, t2);
			BI(st, 4, mono);
			step(s, st);
		}
	}
	sqlite3_finalize(st);
	if (!s->failed) {
		char *sql = xstrfmt("INSERT INTO EXPORT_SCHEMA_VERSION VALUES (%d,%d,%d)", NSYS_SCHEMA_MAJOR,
				    NSYS_SCHEMA_MINOR, NSYS_SCHEMA_MICRO);
		exec(s, sql);
		free(sql);
	}
	st = prep(s, "INSERT INTO META_DATA_EXPORT VALUES (?,?)");
	if (st) {
		/* the nsys schema whose table and column names this export follows (docs/export.md) */
		BT(st, 1, "EXPORT_SCHEMA_VERSION");
		BT(st, 2, NSYS_SCHEMA_VERSION);
		step(s, st);
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
 * Bulk rows go in through virtual tables: each big table is filled by one
 * "INSERT INTO T (...) SELECT ... FROM gs_src_T", where gs_src_T is an
 * eponymous virtual table whose columns are read straight from the model's
 * arrays.  SQLite then runs one statement per table instead of one per row
 * and no value is bound: about twice the speed of prepared single-row
 * inserts.
 */
struct src_table;
typedef void (*col_fn)(const struct src_table *t, size_t row, int col, sqlite3_context *ctx);

struct src_table {
	struct sq *s;
	size_t nrows;
	int ncols;
	col_fn col;
	const size_t *idx;      /* rows to visit (NULL = 0..nrows-1) */
	int64_t base;           /* a running id's first value */
	const void *arg;
};

struct src_vtab {
	sqlite3_vtab base;
	struct src_table *t;
};

struct src_cursor {
	sqlite3_vtab_cursor base;
	size_t row;
};

static int src_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
		       char **err)
{
	struct src_table *t = aux;
	struct strbuf sb = STRBUF_INIT;
	struct src_vtab *v;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	strbuf_addstr(&sb, "CREATE TABLE x(");
	for (int c = 0; c < t->ncols; c++)
		strbuf_addf(&sb, "%sc%d", c ? "," : "", c);
	strbuf_addch(&sb, ')');
	rc = sqlite3_declare_vtab(db, sb.buf);
	strbuf_release(&sb);
	if (rc != SQLITE_OK)
		return rc;
	v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->t = t;
	*out = &v->base;
	return SQLITE_OK;
}

static int src_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int src_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	info->estimatedCost = (double)((struct src_vtab *)v)->t->nrows + 1;
	return SQLITE_OK;
}

static int src_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct src_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)v;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int src_close(sqlite3_vtab_cursor *c)
{
	sqlite3_free(c);
	return SQLITE_OK;
}

static int src_filter(sqlite3_vtab_cursor *c, int num, const char *str, int argc, sqlite3_value **argv)
{
	(void)num;
	(void)str;
	(void)argc;
	(void)argv;
	((struct src_cursor *)c)->row = 0;
	return SQLITE_OK;
}

static int src_next(sqlite3_vtab_cursor *c)
{
	struct src_table *t = ((struct src_vtab *)c->pVtab)->t;

	((struct src_cursor *)c)->row++;
	if (t->s->prog)
		progress_add(t->s->prog, 1);
	return SQLITE_OK;
}

static int src_eof(sqlite3_vtab_cursor *c)
{
	return ((struct src_cursor *)c)->row >= ((struct src_vtab *)c->pVtab)->t->nrows;
}

static int src_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
	const struct src_table *t = ((struct src_vtab *)c->pVtab)->t;
	size_t row = ((struct src_cursor *)c)->row;

	t->col(t, t->idx ? t->idx[row] : row, col, ctx);
	return SQLITE_OK;
}

static int src_rowid(sqlite3_vtab_cursor *c, sqlite_int64 *rowid)
{
	*rowid = (sqlite_int64)((struct src_cursor *)c)->row;
	return SQLITE_OK;
}

static const sqlite3_module src_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only: usable by name, never created */
	.xConnect = src_connect,
	.xBestIndex = src_best_index,
	.xDisconnect = src_disconnect,
	.xDestroy = src_disconnect,
	.xOpen = src_open,
	.xClose = src_close,
	.xFilter = src_filter,
	.xNext = src_next,
	.xEof = src_eof,
	.xColumn = src_column,
	.xRowid = src_rowid,
};

/* Insert the rows of @t into @dest ("TABLE (col, ...)"); 0 or -1. */
static int copy_rows(struct sq *s, struct src_table *t, const char *name, const char *dest)
{
	struct strbuf sb = STRBUF_INIT;
	char *mod;
	int ret;

	if (s->failed)
		return -1;
	if (!t->nrows)
		return 0;
	t->s = s;
	mod = xstrfmt("gs_src_%s", name);
	if (sqlite3_create_module_v2(s->db, mod, &src_module, t, NULL) != SQLITE_OK) {
		free(mod);
		return sq_err(s, "create module");
	}
	strbuf_addf(&sb, "INSERT INTO %s SELECT ", dest);
	for (int c = 0; c < t->ncols; c++)
		strbuf_addf(&sb, "%sc%d", c ? "," : "", c);
	strbuf_addf(&sb, " FROM %s", mod);
	ret = exec(s, sb.buf);
	strbuf_release(&sb);
	free(mod);
	return ret;
}

#define RI(v) sqlite3_result_int64(ctx, (sqlite3_int64)(v))
#define RN() sqlite3_result_null(ctx)
#define RD(v) sqlite3_result_double(ctx, (v))
#define RT(p, n) sqlite3_result_text(ctx, (p), (int)(n), SQLITE_STATIC)
#define RSTR(m, sid) RT((m)->str.str[(sid) < (m)->str.nr ? (sid) : 0], (m)->str.len[(sid) < (m)->str.nr ? (sid) : 0])

static void col_kernel(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_kernel *k = &t->s->m->kernels.v[i];

	switch (c) {
	case 0: RI(k->start); break;
	case 1: RI(k->end); break;
	case 2: RI(k->device); break;
	case 3: RI(k->context); break;
	case 4: RI(k->stream); break;
	case 5: RI(k->correlation); break;
	case 6: RI(gpid(k->pid)); break;
	case 7: RI(k->name_id); break;
	case 8: RI(short_name(t->s, k->name_id)); break;
	case 9: if (k->mangled_id) RI(k->mangled_id); else RN(); break;
	case 10: RI(0); break; /* launchType: regular */
	case 11: RI(k->registers); break;
	case 12: case 13: case 14: RI(k->grid[c - 12]); break;
	case 15: case 16: case 17: RI(k->block[c - 15]); break;
	case 18: RI(k->static_smem); break;
	case 19: RI(k->dynamic_smem); break;
	case 20: case 21: RI(0); break; /* local memory: not recorded */
	case 22: RI(i + 1); break;      /* gridId: unique per launch */
	default: if (k->graph_id) RI(k->graph_id); else RN(); break;
	}
}

static void col_api(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_api *a = &t->s->m->api.v[i];

	switch (c) {
	case 0: RI(a->start); break;
	case 1: RI(a->end); break;
	case 2: RI(a->domain == TRACE_API_DRIVER ? 1 : 0); break;
	case 3: RI(gtid(a->pid, a->tid)); break;
	case 4: RI(a->correlation); break;
	case 5: RI(a->name_id); break;
	default: RI(a->status); break;
	}
}

static void col_memcpy(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_memcpy *x = &t->s->m->memcpys.v[i];

	switch (c) {
	case 0: RI(x->start); break;
	case 1: RI(x->end); break;
	case 2: RI(x->device); break;
	case 3: RI(x->context); break;
	case 4: RI(x->stream); break;
	case 5: RI(x->correlation); break;
	case 6: RI(gpid(x->pid)); break;
	case 7: RI(x->bytes); break;
	case 8: RI(x->kind); break;
	case 9: RI(nsys_mem_kind(x->src_kind)); break;
	case 10: RI(nsys_mem_kind(x->dst_kind)); break;
	case 11: RI(x->device); break;
	default: RI(x->kind == COPY_PTOP ? x->dst_device : x->device); break;
	}
}

static void col_memset(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_memset *x = &t->s->m->memsets.v[i];

	switch (c) {
	case 0: RI(x->start); break;
	case 1: RI(x->end); break;
	case 2: RI(x->device); break;
	case 3: RI(x->context); break;
	case 4: RI(x->stream); break;
	case 5: RI(x->correlation); break;
	case 6: RI(gpid(x->pid)); break;
	case 7: RI(x->value); break;
	case 8: RI(x->bytes); break;
	default: RI(nsys_mem_kind(x->mem_kind)); break;
	}
}

static void col_sync(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_sync *x = &t->s->m->syncs.v[i];

	switch (c) {
	case 0: RI(x->start); break;
	case 1: RI(x->end); break;
	case 2: RI(x->device); break;
	case 3: RI(x->context); break;
	case 4: RI(x->stream); break;
	case 5: RI(x->correlation); break;
	case 6: RI(gpid(x->pid)); break;
	case 7: RI(x->type); break;
	default: RI(x->event); break;
	}
}

static void col_memory(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_memory *x = &t->s->m->memory.v[i];

	switch (c) {
	case 0: RI(x->time); break;
	case 1: RI(gpid(x->pid)); break;
	case 2: RI(x->device); break;
	case 3: RI(x->context); break;
	case 4: RI(x->address); break;
	case 5: RI(x->bytes); break;
	case 6: RI(nsys_mem_kind(x->mem_kind)); break;
	case 7: RI(x->op == TRACE_MEM_FREE ? 1 : 0); break;
	case 8: RI(x->correlation); break;
	default: RI(x->stream); break;
	}
}

static int write_cuda(struct sq *s)
{
	const struct model *m = s->m;
	struct src_table t;

	t = (struct src_table){ .nrows = m->kernels.n, .ncols = 24, .col = col_kernel };
	if (copy_rows(s, &t, "kernel", "CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, demangledName, shortName, mangledName, launchType, "
		      "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
		      "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, graphId)"))
		return -1;
	t = (struct src_table){ .nrows = m->memcpys.n, .ncols = 13, .col = col_memcpy };
	if (copy_rows(s, &t, "memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, "
		      "dstDeviceId)"))
		return -1;
	t = (struct src_table){ .nrows = m->memsets.n, .ncols = 10, .col = col_memset };
	if (copy_rows(s, &t, "memset", "CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, value, bytes, memKind)"))
		return -1;
	t = (struct src_table){ .nrows = m->syncs.n, .ncols = 9, .col = col_sync };
	if (copy_rows(s, &t, "sync", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
		      "contextId, streamId, correlationId, globalPid, syncType, eventId)"))
		return -1;
	t = (struct src_table){ .nrows = m->memory.n, .ncols = 10, .col = col_memory };
	return copy_rows(s, &t, "memory", "CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, "
			 "contextId, address, bytes, memKind, memoryOperationType, correlationId, streamId)");
}

static int write_runtime(struct sq *s)
{
	struct src_table t = { .nrows = s->m->api.n, .ncols = 7, .col = col_api };

	return copy_rows(s, &t, "runtime", "CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
			 "correlationId, nameId, returnValue)");
}

/* columns 10..15: uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue */
static void payload(sqlite3_context *ctx, int col, unsigned type, uint64_t bits)
{
	double d;

	if (col - 10 + TRACE_PAYLOAD_U64 != (int)type) {
		RN();
		return;
	}
	memcpy(&d, &bits, sizeof(d));
	switch (type) {
	case TRACE_PAYLOAD_U64: RI(bits); break;
	case TRACE_PAYLOAD_I64: RI((int64_t)bits); break;
	case TRACE_PAYLOAD_U32: RI((uint32_t)bits); break;
	case TRACE_PAYLOAD_I32: RI((int32_t)(uint32_t)bits); break;
	default: RD(d); break;
	}
}

/* NVTX_EVENTS: start, end, eventType, rangeId, category, color, text, globalTid,
 * endGlobalTid, domainId, 6 payload columns, eventId */
static void col_nvtx_name(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct model *m = t->s->m;
	const struct trace_name *n = &m->names.v[i];
	int dom = n->kind == TRACE_NAME_DOMAIN;

	switch (c) {
	case 0: RI(m->t_min); break;
	case 2: RI(dom ? 75 : 33); break;
	case 4: if (dom) RN(); else RI(n->id); break;
	case 6: RSTR(m, n->name_id); break;
	case 7: RI(gpid(n->pid)); break;
	/* ranges carry the string id of their domain's name: so does its create event */
	case 9: RI(dom ? n->name_id : n->domain_id); break;
	case 16: RI(t->base); break;
	default: RN(); break;
	}
}

static void col_nvtx_range(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct model *m = t->s->m;
	const struct trace_nvtx_range *r = &m->nvtx.v[i];
	int se = r->kind == TRACE_NVTX_STARTEND;

	switch (c) {
	case 0: RI(r->start); break;
	case 1: if (r->end) RI(r->end); else RN(); break;
	case 2: RI(se ? 60 : 59); break;
	case 3: if (se) RI(r->range_id); else RN(); break;
	case 4: RI(r->category); break;
	case 5: if (r->color) RI(r->color); else RN(); break;
	case 6: RSTR(m, r->name_id); break;
	case 7: RI(gtid(r->pid, r->tid)); break;
	case 8: if (se && r->end) RI(gtid(r->pid, r->end_tid ? r->end_tid : r->tid)); else RN(); break;
	case 9: RI(r->domain_id); break;
	case 16: RI(t->base + (int64_t)i); break;
	default: payload(ctx, c, r->payload_type, r->payload); break;
	}
}

static void col_nvtx_mark(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct model *m = t->s->m;
	const struct trace_nvtx_mark *k = &m->marks.v[i];

	switch (c) {
	case 0: RI(k->time); break;
	case 1: case 3: case 8: RN(); break;
	case 2: RI(34); break;
	case 4: RI(k->category); break;
	case 5: if (k->color) RI(k->color); else RN(); break;
	case 6: RSTR(m, k->name_id); break;
	case 7: RI(gtid(k->pid, k->tid)); break;
	case 9: RI(k->domain_id); break;
	case 16: RI(t->base + (int64_t)i); break;
	default: payload(ctx, c, k->payload_type, k->payload); break;
	}
}

static void col_osrt(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_osrt *o = &t->s->m->osrt.v[i];
	const uint32_t *func_ids = t->s->osrt_ids;

	switch (c) {
	case 0: RI(o->start); break;
	case 1: RI(o->end); break;
	case 2: RI(27); break;
	case 3: RI(gtid(o->pid, o->tid)); break;
	case 4: RI(func_ids[o->func < 64 ? o->func : 0]); break;
	case 5: RI(o->result); break;
	default: RI(0); break;
	}
}

static void col_cpu(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_cpu_sample *x = &t->s->m->cpu.v[i];
	const double *pct = t->arg;

	switch (c) {
	case 0: RI(x->time); break;
	case 1: RI(gtid(x->pid, x->tid)); break;
	case 2: RI(x->run_ns); break;
	case 3: RI(x->wait_ns); break;
	default: if (pct[i] >= 0) RD(pct[i]); else RN(); break;
	}
}

static int write_host(struct sq *s)
{
	const struct model *m = s->m;
	struct src_table t;
	size_t *idx = NULL, nidx = 0;
	double *pct;
	struct u64map prev = { 0 };
	int ret;

	/* NVTX_EVENTS: domains and categories, then ranges, then marks; eventId runs on */
	idx = xmalloc((m->names.n + 1) * sizeof(*idx));
	for (size_t i = 0; i < m->names.n; i++)
		if (m->names.v[i].kind == TRACE_NAME_DOMAIN || m->names.v[i].kind == TRACE_NAME_CATEGORY)
			idx[nidx++] = i;
	{
		static const char dest[] = "NVTX_EVENTS (start, end, eventType, rangeId, category, color, "
					   "text, globalTid, endGlobalTid, domainId, uint64Value, int64Value, "
					   "doubleValue, uint32Value, int32Value, floatValue, eventId)";
		ret = 0;
		for (size_t k = 0; k < nidx && !ret; k++) {
			/* few rows: one statement each keeps the running id simple */
			char name[48];
			t = (struct src_table){ .nrows = 1, .ncols = 17, .col = col_nvtx_name,
						.idx = &idx[k], .base = (int64_t)k + 1 };
			snprintf(name, sizeof(name), "nvtx_name_%zu", k);
			ret = copy_rows(s, &t, name, dest);
		}
		t = (struct src_table){ .nrows = m->nvtx.n, .ncols = 17, .col = col_nvtx_range,
					.base = (int64_t)nidx + 1 };
		if (!ret)
			ret = copy_rows(s, &t, "nvtx_range", dest);
		t = (struct src_table){ .nrows = m->marks.n, .ncols = 17, .col = col_nvtx_mark,
					.base = (int64_t)(nidx + m->nvtx.n) + 1 };
		if (!ret)
			ret = copy_rows(s, &t, "nvtx_mark", dest);
	}
	free(idx);
	if (ret)
		return -1;

	t = (struct src_table){ .nrows = m->osrt.n, .ncols = 7, .col = col_osrt };
	if (copy_rows(s, &t, "osrt", "OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, "
		      "nestingLevel)"))
		return -1;

	/* CPU use between consecutive samples of a thread; -1 = none */
	pct = xmalloc((m->cpu.n + 1) * sizeof(double));
	for (size_t i = 0; i < m->cpu.n; i++) {
		const struct trace_cpu_sample *c = &m->cpu.v[i];
		uint64_t *v = u64map_get(&prev, ((uint64_t)c->pid << 32) | c->tid, 1);
		const struct trace_cpu_sample *p = *v ? &m->cpu.v[*v - 1] : NULL;
		pct[i] = -1;
		if (p && c->time > p->time && c->run_ns >= p->run_ns)
			pct[i] = 100.0 * (double)(c->run_ns - p->run_ns) / (double)(c->time - p->time);
		*v = i + 1;
	}
	u64map_release(&prev);
	t = (struct src_table){ .nrows = m->cpu.n, .ncols = 5, .col = col_cpu, .arg = pct };
	ret = copy_rows(s, &t, "cpu", "GPUSCOPE_THREAD_CPU (timestamp, globalTid, runNs, waitNs, cpuPercent)");
	free(pct);
	return ret;
}

static void col_metric(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct trace_metric *x = &t->s->m->metrics.v[i];
	const uint32_t *ids = t->arg;

	switch (c) {
	case 0: case 1: RI(x->time); break;
	case 2: RI(x->device == UINT32_MAX ? -1 : (int64_t)x->device); break;
	case 3: RI(ids[i]); break;
	default:
		/* whole values within int64 range as INTEGER (the cast is defined only there) */
		if (x->value >= -9.2e18 && x->value <= 9.2e18 && x->value == (double)(int64_t)x->value)
			RI((int64_t)x->value);
		else
			RD(x->value);
		break;
	}
}

static int write_metrics(struct sq *s)
{
	const struct model *m = s->m;
	struct u64map ids = { 0 }, seen = { 0 };
	struct src_table t;
	sqlite3_stmt *info;
	uint32_t next_id = 0, *row_ids;
	char tn[32];
	int ret;

	row_ids = xmalloc((m->metrics.n + 1) * sizeof(uint32_t));
	info = prep(s, "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?,?,?,?,?)");
	for (size_t i = 0; info && i < m->metrics.n && !s->failed; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		uint64_t *v = u64map_get(&ids, x->name_id, 1), *sn;
		int64_t type_id = x->device == UINT32_MAX ? -1 : (int64_t)x->device;
		if (!*v)
			*v = ++next_id;
		row_ids[i] = (uint32_t)(*v - 1);
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
			BI(info, 4, row_ids[i]);
			BT(info, 5, model_str(m, x->name_id));
			step(s, info);
		}
	}
	sqlite3_finalize(info);
	t = (struct src_table){ .nrows = m->metrics.n, .ncols = 5, .col = col_metric, .arg = row_ids };
	ret = copy_rows(s, &t, "metric", "GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value)");
	free(row_ids);
	u64map_release(&ids);
	u64map_release(&seen);
	return ret ? -1 : (s->failed ? -1 : 0);
}

/*
 * The findings the caller computed (export_input): the same as `analyze`
 * with the same options prints.  None when the caller did not analyse.
 */
static int write_findings(struct sq *s, const struct analyze_result *r)
{
#ifdef HAVE_GS_ANALYZE
	static const char *const sev[] = { "info", "warning", "critical" };
	sqlite3_stmt *st;

	if (!r)
		return 0;
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
	(void)r;
#endif
	return s->failed ? -1 : 0;
}

static void col_string(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct strtab *tab = t->arg;

	if (c == 0)
		RI(t->base + (int64_t)i);
	else
		RT(tab->str[i], tab->len[i]);
}

static void col_string_extra(const struct src_table *t, size_t i, int c, sqlite3_context *ctx)
{
	const struct strtab *tab = t->arg;

	if (c == 0)
		RI(t->base + (int64_t)i);
	else
		RT(tab->str[i + 1], tab->len[i + 1]);
}

static int write_strings(struct sq *s)
{
	const struct model *m = s->m;
	struct src_table t;

	t = (struct src_table){ .nrows = m->str.nr, .ncols = 2, .col = col_string, .arg = &m->str };
	if (copy_rows(s, &t, "strings", "StringIds (id, value)"))
		return -1;
	/* extra id 0 is the empty string, the same as model id 0: skip it */
	if (s->extra->nr <= 1)
		return 0;
	t = (struct src_table){ .nrows = s->extra->nr - 1, .ncols = 2, .col = col_string_extra,
				.arg = s->extra, .base = (int64_t)m->str.nr + 1 };
	return copy_rows(s, &t, "strings_extra", "StringIds (id, value)");
}

/* Short names of every kernel and the ids of OS function names: shared, so made first. */
static void precompute(struct sq *s)
{
	const struct model *m = s->m;

	for (size_t i = 0; i < m->kernels.n; i++)
		short_name(s, m->kernels.v[i].name_id);
	for (size_t i = 0; i < m->osrt.n; i++) {
		unsigned f = m->osrt.v[i].func < 64 ? m->osrt.v[i].func : 0;
		if (!s->osrt_ids[f]) {
			const char *name = f ? trace_osrt_name(f) : NULL;
			s->osrt_ids[f] = extra_str(s, name ? name : "unknown");
		}
	}
}

static const char pragmas[] = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
			      "PRAGMA locking_mode=EXCLUSIVE; PRAGMA page_size=65536; "
			      "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;";

static int open_db(struct sq *s, const char *file)
{
	if (sqlite3_open_v2(file, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		error("cannot create '%s': %s", file, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		s->failed = 1;
		return -1;
	}
	s->path = file;
	return exec(s, pragmas);
}

/*
 * The second half of the tables (API calls, NVTX, OS runtime, CPU samples,
 * metrics, strings) goes to a database of its own on a second thread; the
 * main database then copies its tables in whole ("INSERT INTO T SELECT *",
 * which SQLite does record by record without decoding them).
 */
static const char *const second_tables[] = {
	"CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "OSRT_API", "GPUSCOPE_THREAD_CPU",
	"TARGET_INFO_GPU_METRICS", "GPU_METRICS", "StringIds",
};

struct second {
	struct sq s;
	const char *file;
	int ret;
};

static void *second_thread(void *arg)
{
	struct second *a = arg;
	struct sq *s = &a->s;

	a->ret = -1;
	if (open_db(s, a->file) || exec(s, "BEGIN") || exec(s, schema) || write_runtime(s) ||
	    write_host(s) || write_metrics(s) || write_strings(s) || exec(s, "COMMIT"))
		a->ret = -1;
	else
		a->ret = 0;
	if (s->db && sqlite3_close(s->db) != SQLITE_OK && !a->ret)
		a->ret = error("cannot write '%s': %s", a->file, sqlite3_errmsg(s->db));
	s->db = NULL;
	return NULL;
}

static int copy_second(struct sq *s, const char *file, uint64_t rows)
{
	char *sql;
	int ret = 0;

	sql = sqlite3_mprintf("ATTACH DATABASE %Q AS second", file);
	ret = exec(s, sql);
	sqlite3_free(sql);
	if (!ret)
		ret = exec(s, "BEGIN");
	for (size_t i = 0; !ret && i < ARRAY_SIZE(second_tables); i++) {
		sql = sqlite3_mprintf("INSERT INTO main.%s SELECT * FROM second.%s", second_tables[i],
				      second_tables[i]);
		ret = exec(s, sql);
		sqlite3_free(sql);
	}
	if (!ret)
		ret = exec(s, "COMMIT");
	if (!ret)
		ret = exec(s, "DETACH DATABASE second");
	if (!ret && s->prog)
		progress_add(s->prog, rows);
	return ret;
}

int export_sqlite(const struct export_input *in, const char *path)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	struct sq s;
	struct second sec;
	struct stat stb;
	struct strtab extra;
	struct progress prog;
	uint32_t osrt_ids[64] = { 0 };
	char *tmp, *tmp2;
	int ret = 0, second_started = 0, reported = 0;
	uint64_t second_rows = m->api.n + m->nvtx.n + m->marks.n + m->osrt.n + m->cpu.n + m->metrics.n;
	pthread_t thread2;

	if (!stat(path, &stb) && !opt->force)
		return error("output '%s' exists (use --force to overwrite)", path);
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.path = path;
	s.reported = &reported;
	strtab_init(&extra);
	s.extra = &extra;
	s.short_id = xcalloc(m->str.nr + 1, sizeof(uint32_t));
	s.osrt_ids = osrt_ids;
	s.prog = &prog;
	tmp = xstrfmt("%s.tmp-%ld", path, (long)getpid());
	tmp2 = xstrfmt("%s.tmp2-%ld", path, (long)getpid());
	unlink(tmp);
	unlink(tmp2);
	progress_init(&prog, opt->progress, "export sqlite",
		      m->kernels.n + m->memcpys.n + m->memsets.n + m->syncs.n + m->memory.n + second_rows);
	/* no allocation statistics (a global lock per malloc); fails harmlessly once initialised */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (open_db(&s, tmp) || exec(&s, "BEGIN") || exec(&s, schema) || write_info(&s)) {
		ret = -1;
	} else {
		precompute(&s);
		/* from here on the shared parts are only read */
		memset(&sec, 0, sizeof(sec));
		sec.s = s;
		sec.s.db = NULL;
		sec.s.prog = NULL;
		sec.file = tmp2;
		if (!pthread_create(&thread2, NULL, second_thread, &sec))
			second_started = 1;
		else
			second_thread(&sec);
		if (write_cuda(&s) || exec(&s, "COMMIT"))
			ret = -1;
		if (second_started)
			pthread_join(thread2, NULL);
		if (!ret && sec.ret)
			ret = -1;
		if (!ret && copy_second(&s, tmp2, second_rows))
			ret = -1;
	}
	if (!ret && (exec(&s, "BEGIN") || write_findings(&s, in->findings) || exec(&s, "COMMIT")))
		ret = -1;
	progress_end(&prog);
	if (s.db && sqlite3_close(s.db) != SQLITE_OK && !ret)
		ret = error("cannot write '%s': %s", tmp, sqlite3_errmsg(s.db));
	if (ret && s.db)
		sqlite3_close_v2(s.db);
	s.db = NULL;
	if (!ret && rename(tmp, path))
		ret = error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
	if (ret)
		unlink(tmp);
	unlink(tmp2);
	free(tmp);
	free(tmp2);
	free(s.short_id);
	strtab_release(&extra);
	return ret;
}
