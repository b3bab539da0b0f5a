/*
 * kineto.c - import a PyTorch-profiler (Kineto) Chrome-trace JSON file.
 *
 * The file is parsed as a stream with yajl: the parser is fed 1 MiB blocks
 * read through zlib (gzread reads gzip and plain files alike), and each
 * event object is turned into model rows when its closing brace arrives.
 * No tree of the JSON is ever built, so memory is the model's own.
 *
 * Where Kineto rows go in the model (docs/import.md has the full table):
 *  - cpu_op / Operator, python_function, user_annotation (ProfilerStep#N):
 *    push/pop NVTX ranges in the domains "kineto:cpu_op", "kineto:python"
 *    and "kineto:user_annotation" on the host pid/tid, nesting level computed;
 *  - cuda_runtime / Runtime / cuda_driver: api rows (name, correlation, cbid);
 *  - kernel / Kernel, gpu_memcpy / Memcpy, gpu_memset / Memset, cuda_sync:
 *    kernel, memcpy, memset and sync rows on args.device/args.stream;
 *  - gpu_user_annotation: ranges in the domain "kineto:gpu_user_annotation"
 *    with tid 0 and category = the stream (they live on the GPU timeline);
 *  - NCCL kernels carry TRACE_GPU_COMM; when Kineto wrote their collective
 *    metadata, a range in the domain "kineto:collective" covers the kernel,
 *    named "allreduce Float in=N out=N group=G pg=name/desc/ranks", with
 *    the in-message element count as its U64 payload;
 *  - "[memory]" instants (profile_memory=True): memory rows (GPU) and the
 *    metrics "torch_allocated_bytes"/"torch_reserved_bytes"; ph "C"
 *    counters: metrics named "<event name>" or "<event name>.<arg>";
 *  - deviceProperties: device rows; distributedInfo: a note (warning list).
 *
 * Times: Chrome-trace "ts"/"dur" are microseconds, possibly with
 * fractions (ns-resolution traces).  They are converted from their decimal
 * text to integer nanoseconds exactly, never through a double (epoch
 * microseconds times 1000 exceed a double's 53-bit mantissa).
 */
#include "import_int.h"
#include "model/kernel_class.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define KINETO_BLOCK (1u << 20)
#define MAX_GENERIC_ARGS 16

enum kcat {
	KC_NONE = 0,
	KC_CPU_OP, KC_PYTHON, KC_USER_ANNOTATION, KC_RUNTIME, KC_DRIVER, KC_KERNEL,
	KC_MEMCPY, KC_MEMSET, KC_SYNC, KC_GPU_ANNOTATION, KC_INSTANT, KC_OTHER,
};

/* Keys we read; everything else is skipped. */
enum kkey {
	K_UNKNOWN = 0,
	/* event */
	K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS,
	/* args */
	K_EXTERNAL_ID, K_CORRELATION, K_DEVICE, K_CONTEXT, K_STREAM, K_REGISTERS, K_SHARED_MEM,
	K_GRID, K_BLOCK, K_BYTES, K_CBID, K_COLLECTIVE, K_IN_NELEMS, K_OUT_NELEMS, K_GROUP_SIZE,
	K_DTYPE, K_PG_NAME, K_PG_DESC, K_PG_RANKS, K_LABELS, K_DEVICE_ID, K_DEVICE_TYPE,
	K_ADDR, K_MEM_BYTES, K_TOTAL_ALLOC, K_TOTAL_RESERVED, K_SYNC_KIND, K_ROCM_KIND,
	K_WAIT_STREAM, K_WAIT_RECORD_CORR,
	/* cpu_op args kept whole (record_shapes): in this order, see cap_buf() */
	K_INPUT_DIMS, K_INPUT_TYPE, K_CONCRETE,
	/* root */
	K_TRACE_EVENTS, K_DEVICE_PROPS, K_DIST_INFO, K_HOST_NAME, K_BASE_TIME, K_PROFILE_MEMORY,
	/* deviceProperties / distributedInfo */
	K_ID, K_TOTAL_MEM, K_CC_MAJOR, K_CC_MINOR, K_NUM_SMS, K_MAX_THREADS_SM, K_RANK,
	K_WORLD_SIZE, K_BACKEND, K_NCCL_VERSION,
};

struct key_def {
	const char *s;
	unsigned char len;
	unsigned char key;
};

#define KD(str, k) { str, sizeof(str) - 1, k }
static const struct key_def event_keys[] = {
	KD("ph", K_PH), KD("cat", K_CAT), KD("name", K_NAME), KD("pid", K_PID), KD("tid", K_TID),
	KD("ts", K_TS), KD("dur", K_DUR), KD("args", K_ARGS),
};
static const struct key_def arg_keys[] = {
	KD("External id", K_EXTERNAL_ID), KD("external id", K_EXTERNAL_ID),
	KD("correlation", K_CORRELATION), KD("device", K_DEVICE), KD("context", K_CONTEXT),
	KD("stream", K_STREAM), KD("registers per thread", K_REGISTERS),
	KD("shared memory", K_SHARED_MEM), KD("grid", K_GRID), KD("block", K_BLOCK),
	KD("bytes", K_BYTES), KD("cbid", K_CBID), KD("cid", K_CBID),
	KD("Collective name", K_COLLECTIVE), KD("In msg nelems", K_IN_NELEMS),
	KD("Out msg nelems", K_OUT_NELEMS), KD("Group size", K_GROUP_SIZE), KD("dtype", K_DTYPE),
	KD("Process Group Name", K_PG_NAME), KD("Process Group Description", K_PG_DESC),
	KD("Process Group Ranks", K_PG_RANKS), KD("name", K_NAME), KD("labels", K_LABELS),
	KD("Device Id", K_DEVICE_ID), KD("Device Type", K_DEVICE_TYPE), KD("Addr", K_ADDR),
	KD("Bytes", K_MEM_BYTES), KD("Total Allocated", K_TOTAL_ALLOC),
	KD("Total Reserved", K_TOTAL_RESERVED), KD("cuda_sync_kind", K_SYNC_KIND),
	KD("kind", K_ROCM_KIND), KD("wait_on_stream", K_WAIT_STREAM),
	KD("wait_on_cuda_event_record_corr_id", K_WAIT_RECORD_CORR),
	KD("Input Dims", K_INPUT_DIMS), KD("Input type", K_INPUT_TYPE),
	KD("Concrete Inputs", K_CONCRETE),
};
static const struct key_def root_keys[] = {
	KD("traceEvents", K_TRACE_EVENTS), KD("deviceProperties", K_DEVICE_PROPS),
	KD("distributedInfo", K_DIST_INFO), KD("host_name", K_HOST_NAME),
	KD("baseTimeNanoseconds", K_BASE_TIME), KD("profile_memory", K_PROFILE_MEMORY),
};
static const struct key_def obj_keys[] = {
	KD("id", K_ID), KD("name", K_NAME), KD("totalGlobalMem", K_TOTAL_MEM),
	KD("computeMajor", K_CC_MAJOR), KD("computeMinor", K_CC_MINOR), KD("numSms", K_NUM_SMS),
	KD("maxThreadsPerMultiprocessor", K_MAX_THREADS_SM), KD("rank", K_RANK),
	KD("world_size", K_WORLD_SIZE), KD("backend", K_BACKEND),
	KD("nccl_version", K_NCCL_VERSION),
};
#undef KD

static unsigned key_lookup(const struct key_def *defs, size_t n, const unsigned char *s,
			   size_t len)
{
	if (!len)
		return K_UNKNOWN;
	for (size_t i = 0; i < n; i++)
		if (defs[i].len == len && defs[i].s[0] == s[0] && !memcmp(defs[i].s, s, len))
			return defs[i].key;
	return K_UNKNOWN;
}

/* A numeric argument we do not know by name (kept for ph "C" counters). */
struct generic_arg {
	char key[48];
	double value;
};

/* The fields of the event being parsed; reset at each event's '{'. */
struct kev {
	char ph;
	unsigned char cat;
	int pid_ok, tid_ok;       /* pid/tid were numbers (or "stream N") */
	int64_t pid, tid;
	uint64_t ts, dur;
	int has_ts, has_dur;
	struct strbuf name;
	/* args */
	int64_t correlation, device, context, stream, registers, smem, bytes, cbid;
	int64_t in_nelems, out_nelems, group_size, device_id, device_type, mem_bytes;
	int64_t wait_stream, wait_record_corr; /* cuda_sync: the awaited event's record */
	int64_t ext_id;           /* "External id", 0 when none */
	double total_alloc, total_reserved;
	int has_total_alloc, has_total_reserved, has_collective;
	uint32_t grid[3], block[3];
	struct strbuf collective, dtype, pg_name, pg_desc, pg_ranks, arg_name, labels, kind;
	struct generic_arg gen[MAX_GENERIC_ARGS];
	size_t ngen;
};

struct meta_name {
	int64_t pid, tid;
	uint32_t name_id;
};

struct corr_pid {
	uint32_t correlation, pid;
};

struct kparser {
	struct model *m;
	const char *path;
	int depth;
	int root_is_array, root_seen;
	int events_depth;         /* depth inside the event array, 0 = not in it */
	unsigned root_key, ev_key, arg_key, obj_key;
	int arr_index;            /* index in grid/block arrays */
	int in_devprops, in_dist; /* depth of the deviceProperties array / distributedInfo */
	struct kev ev;
	struct trace_device dev;  /* deviceProperties entry being read */
	int dev_open;
	char err[256];

	/* collected while parsing, resolved at the end */
	uint32_t dom_cpu, dom_python, dom_user, dom_gpu_anno, dom_coll;
	uint32_t memory_alloc_id, memory_reserved_id;
	MODEL_TABLE(struct meta_name) proc_names;
	MODEL_TABLE(struct meta_name) thread_names;
	MODEL_TABLE(struct meta_name) proc_labels;
	MODEL_TABLE(int64_t) host_pids;
	int64_t last_host_pid;
	int64_t rank, world_size;
	struct strbuf backend, nccl_version, host_name;
	int has_rank, has_world_size, profile_memory, saw_memory, saw_sync, saw_counter;
	uint64_t skipped_events, events_seen, legacy_events, dup_devices;

	/*
	 * The event's "Input Dims", "Input type" and "Concrete Inputs" arrays,
	 * copied as compact JSON while they stream past (cap_key: the array
	 * being copied, cap_depth: the depth inside it).  An array holding an
	 * object is not a shape list: cap_bad drops it.  Reset after each event.
	 */
	unsigned cap_key;
	int cap_depth, cap_bad;
	struct strbuf cap[3];
	int cap_has[3];
};

/* ---- number parsing ---- */

/*
 * Decimal microseconds to integer nanoseconds, exactly: "1712195495984501.2"
 * gives 1712195495984501200.  The fourth fraction digit rounds.  Exponent
 * forms fall back to strtod.  Negative values clamp to 0.  Returns 0 or -1.
 */
static int parse_us_to_ns(const char *s, size_t len, uint64_t *out)
{
	uint64_t ip = 0, frac = 0;
	size_t i = 0;
	int fd = 0;

	if (len && s[0] == '-') {
		*out = 0;
		return 0;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (ip >= 1000000000000000ull) /* 1e16 us: past the year 2286 */
			return -1;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, fd++) {
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(s[i] - '0');
			else if (fd == 3 && s[i] >= '5')
				frac++;
		}
	}
	if (i < len) { /* exponent or junk */
		char buf[64];
		double d;
		if (len >= sizeof(buf))
			return -1;
		memcpy(buf, s, len);
		buf[len] = 0;
		d = strtod(buf, NULL);
		if (!(d >= 0) || d > 1.8e16)
			return -1;
		*out = (uint64_t)(d * 1000.0 + 0.5);
		return 0;
	}
	for (; fd < 3; fd++)
		frac *= 10;
	*out = ip * 1000 + frac;
	return 0;
}

static int64_t parse_int(const char *s, size_t len)
{
	int64_t v = 0;
	size_t i = 0;
	int neg = 0;

	if (len && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > INT64_MAX / 10 - 10)
			return neg ? INT64_MIN : INT64_MAX;
		v = v * 10 + (s[i] - '0');
	}
	if (i < len) { /* a fraction or exponent: go through a double */
		char buf[64];
		double d;
		if (len >= sizeof(buf))
			return 0;
		memcpy(buf, s, len);
		buf[len] = 0;
		d = strtod(buf, NULL);
		if (!(d > -9.2e18 && d < 9.2e18))
			return 0;
		return (int64_t)d;
	}
	return neg ? -v : v;
}

/* A finite double, or -1: JSON has no NaN, but 1e999 reads as infinity. */
static int parse_double(const char *s, size_t len, double *out)
{
	char buf[64];
	double d;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	d = strtod(buf, NULL);
	if (!isfinite(d))
		return -1;
	*out = d;
	return 0;
}

/* A pid/tid given as a string: "stream 7" (legacy) gives 7; no digits, not ok. */
static int parse_id_string(const unsigned char *s, size_t len, int64_t *out)
{
	size_t i = len;

	while (i > 0 && isdigit(s[i - 1]))
		i--;
	if (i == len)
		return 0;
	*out = parse_int((const char *)s + i, len - i);
	return 1;
}

/* ---- categories ---- */

static int ieq(const unsigned char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	if (n != len)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower(s[i]) != lit[i])
			return 0;
	return 1;
}

static unsigned classify_cat(struct kparser *p, const unsigned char *s, size_t len)
{
	/* current names first, then the 2021 (TensorBoard plugin) names */
	if (ieq(s, len, "cpu_op"))
		return KC_CPU_OP;
	if (ieq(s, len, "kernel"))
		return KC_KERNEL;
	if (ieq(s, len, "cuda_runtime"))
		return KC_RUNTIME;
	if (ieq(s, len, "gpu_memcpy"))
		return KC_MEMCPY;
	if (ieq(s, len, "gpu_memset"))
		return KC_MEMSET;
	if (ieq(s, len, "python_function"))
		return KC_PYTHON;
	if (ieq(s, len, "user_annotation"))
		return KC_USER_ANNOTATION;
	if (ieq(s, len, "gpu_user_annotation"))
		return KC_GPU_ANNOTATION;
	if (ieq(s, len, "cuda_driver"))
		return KC_DRIVER;
	if (ieq(s, len, "cuda_sync"))
		return KC_SYNC;
	if (ieq(s, len, "cpu_instant_event"))
		return KC_INSTANT;
	if (ieq(s, len, "operator")) {
		p->legacy_events++;
		return KC_CPU_OP;
	}
	if (ieq(s, len, "runtime")) {
		p->legacy_events++;
		return KC_RUNTIME;
	}
	if (ieq(s, len, "memcpy")) {
		p->legacy_events++;
		return KC_MEMCPY;
	}
	if (ieq(s, len, "memset")) {
		p->legacy_events++;
		return KC_MEMSET;
	}
	if (ieq(s, len, "python")) {
		p->legacy_events++;
		return KC_PYTHON;
	}
	return KC_OTHER;
}

/* ---- memcpy names: "Memcpy HtoD (Pageable -> Device)" ---- */

static unsigned mem_kind_word(const char *s, size_t len)
{
	static const struct { const char *w; unsigned k; } words[] = {
		{ "Pageable", MEM_PAGEABLE }, { "Pinned", MEM_PINNED }, { "Device", MEM_DEVICE },
		{ "Array", MEM_ARRAY }, { "Managed", MEM_MANAGED },
		{ "Static", MEM_DEVICE_STATIC }, { "ManagedStatic", MEM_MANAGED_STATIC },
	};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i].w) == len && !memcmp(words[i].w, s, len))
			return words[i].k;
	return MEM_UNKNOWN;
}

static unsigned copy_kind_word(const char *s, size_t len)
{
	static const char *const kinds[] = {
		[COPY_HTOD] = "HtoD", [COPY_DTOH] = "DtoH", [COPY_HTOA] = "HtoA",
		[COPY_ATOH] = "AtoH", [COPY_ATOA] = "AtoA", [COPY_ATOD] = "AtoD",
		[COPY_DTOA] = "DtoA", [COPY_DTOD] = "DtoD", [COPY_HTOH] = "HtoH",
		[COPY_PTOP] = "PtoP",
	};
	for (size_t i = 1; i < ARRAY_SIZE(kinds); i++)
		if (strlen(kinds[i]) == len && !memcmp(kinds[i], s, len))
			return (unsigned)i;
	return COPY_UNKNOWN;
}

/* Parse "Memcpy HtoD (Pageable -> Device)"; also the bare "Memcpy HtoD" (ROCm). */
static void parse_memcpy_name(const char *name, const char *rocm_kind, uint8_t *kind,
			      uint8_t *src, uint8_t *dst)
{
	const char *p = strchr(name, ' '), *q, *open, *arrow, *close;

	*kind = COPY_UNKNOWN;
	*src = *dst = MEM_UNKNOWN;
	if (p) {
		p++;
		q = p;
		while (*q && *q != ' ')
			q++;
		*kind = (uint8_t)copy_kind_word(p, (size_t)(q - p));
	}
	if (*kind == COPY_UNKNOWN && rocm_kind && *rocm_kind)
		*kind = (uint8_t)copy_kind_word(rocm_kind, strlen(rocm_kind));
	open = strchr(name, '(');
	arrow = open ? strstr(open, " -> ") : NULL;
	close = arrow ? strchr(arrow, ')') : NULL;
	if (open && arrow && close) {
		*src = (uint8_t)mem_kind_word(open + 1, (size_t)(arrow - open - 1));
		*dst = (uint8_t)mem_kind_word(arrow + 4, (size_t)(close - arrow - 4));
	}
}

/* "Memset (Device)" */
static uint8_t parse_memset_name(const char *name)
{
	const char *open = strchr(name, '('), *close = open ? strchr(open, ')') : NULL;

	if (!open || !close)
		return MEM_UNKNOWN;
	return (uint8_t)mem_kind_word(open + 1, (size_t)(close - open - 1));
}

static unsigned sync_type(const char *name)
{
	if (!strcmp(name, "Stream Sync"))
		return SYNC_STREAM;
	if (!strcmp(name, "Event Sync"))
		return SYNC_EVENT;
	if (!strcmp(name, "Context Sync"))
		return SYNC_CONTEXT;
	if (!strcmp(name, "Stream Wait Event"))
		return SYNC_STREAM_WAIT_EVENT;
	return SYNC_UNKNOWN;
}

/* NCCL and RCCL/HCCL communication kernels, by the names HTA also uses. */
static int is_comm_kernel(const char *name)
{
	return (kernel_class_flags(name) & KCF_COMM) != 0; /* model/kernel_class.c: NCCL/RCCL, NVSHMEM, DeepEP, custom all-reduce ... */
}

/* ---- event handling ---- */

static void kev_reset(struct kev *e)
{
	struct strbuf keep[8] = { e->name, e->collective, e->dtype, e->pg_name,
				  e->pg_desc, e->pg_ranks, e->arg_name, e->labels };
	struct strbuf kind = e->kind;

	memset(e, 0, offsetof(struct kev, gen));
	e->ngen = 0;
	e->name = keep[0];
	e->collective = keep[1];
	e->dtype = keep[2];
	e->pg_name = keep[3];
	e->pg_desc = keep[4];
	e->pg_ranks = keep[5];
	e->arg_name = keep[6];
	e->labels = keep[7];
	e->kind = kind;
	strbuf_reset(&e->name);
	strbuf_reset(&e->collective);
	strbuf_reset(&e->dtype);
	strbuf_reset(&e->pg_name);
	strbuf_reset(&e->pg_desc);
	strbuf_reset(&e->pg_ranks);
	strbuf_reset(&e->arg_name);
	strbuf_reset(&e->labels);
	strbuf_reset(&e->kind);
	e->correlation = e->device = e->context = e->stream = -1;
	e->registers = e->smem = e->bytes = e->cbid = -1;
	e->in_nelems = e->out_nelems = e->group_size = -1;
	e->device_id = e->device_type = -1;
	e->wait_stream = e->wait_record_corr = -1;
	e->mem_bytes = 0;
}

static void kev_release(struct kev *e)
{
	strbuf_release(&e->name);
	strbuf_release(&e->collective);
	strbuf_release(&e->dtype);
	strbuf_release(&e->pg_name);
	strbuf_release(&e->pg_desc);
	strbuf_release(&e->pg_ranks);
	strbuf_release(&e->arg_name);
	strbuf_release(&e->labels);
	strbuf_release(&e->kind);
}

static const char *sb_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

static void note_host_pid(struct kparser *p, int64_t pid)
{
	if (pid == p->last_host_pid)
		return;
	p->last_host_pid = pid;
	for (size_t i = 0; i < p->host_pids.n; i++)
		if (p->host_pids.v[i] == pid)
			return;
	*MODEL_PUSH(p->host_pids) = pid;
}

static uint32_t u32(int64_t v)
{
	return v < 0 ? 0 : (uint32_t)v;
}

/* GPU rows: device from args, else the Kineto pid (the device row); stream from args, else tid. */
static uint32_t ev_device(const struct kev *e)
{
	return e->device >= 0 ? (uint32_t)e->device : (e->pid_ok ? u32(e->pid) : 0);
}

static uint32_t ev_stream(const struct kev *e)
{
	return e->stream >= 0 ? (uint32_t)e->stream : (e->tid_ok ? u32(e->tid) : 0);
}

/* End of an event; a duration that would wrap is clamped. */
static uint64_t ev_end(const struct kev *e)
{
	return e->ts + e->dur < e->ts ? UINT64_MAX : e->ts + e->dur;
}

static void add_range(struct kparser *p, const struct kev *e, uint32_t domain)
{
	struct trace_nvtx_range *r = MODEL_PUSH(p->m->nvtx);

	r->start = e->ts;
	r->end = ev_end(e);
	r->pid = u32(e->pid);
	r->tid = r->end_tid = u32(e->tid);
	r->name_id = model_intern(p->m, sb_str(&e->name));
	r->domain_id = domain;
	r->kind = TRACE_NVTX_PUSHPOP;
}

static void add_collective(struct kparser *p, const struct kev *e, const struct trace_kernel *k)
{
	struct trace_nvtx_range *r;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, sb_str(&e->collective));
	if (e->dtype.len)
		strbuf_addf(&sb, " %s", e->dtype.buf);
	if (e->in_nelems >= 0)
		strbuf_addf(&sb, " in=%" PRId64, e->in_nelems);
	if (e->out_nelems >= 0)
		strbuf_addf(&sb, " out=%" PRId64, e->out_nelems);
	if (e->group_size >= 0)
		strbuf_addf(&sb, " group=%" PRId64, e->group_size);
	if (e->pg_name.len || e->pg_desc.len || e->pg_ranks.len)
		strbuf_addf(&sb, " pg=%s/%s/%s", sb_str(&e->pg_name), sb_str(&e->pg_desc),
			    sb_str(&e->pg_ranks));
	r = MODEL_PUSH(p->m->nvtx);
	r->start = k->start;
	r->end = k->end;
	r->category = k->stream;
	r->name_id = model_intern(p->m, sb.buf);
	r->domain_id = p->dom_coll;
	r->kind = TRACE_NVTX_PUSHPOP;
	if (e->in_nelems >= 0) {
		r->payload_type = TRACE_PAYLOAD_U64;
		r->payload = (uint64_t)e->in_nelems;
	}
	strbuf_release(&sb);
}

static void add_metric(struct kparser *p, uint64_t time, uint32_t device, uint32_t name_id,
		       double v, uint32_t pid)
{
	struct trace_metric *mt = MODEL_PUSH(p->m->metrics);

	mt->time = time;
	mt->value = v;
	mt->device = device;
	mt->name_id = name_id;
	mt->pid = pid;
}

static void memory_instant(struct kparser *p, const struct kev *e)
{
	uint32_t dev = e->device_id >= 0 && e->device_type != 0 ? (uint32_t)e->device_id
								   : UINT32_MAX;

	p->saw_memory = 1;
	note_host_pid(p, e->pid);
	if (dev != UINT32_MAX && e->mem_bytes) {
		struct trace_memory *mm = MODEL_PUSH(p->m->memory);
		mm->time = e->ts;
		/* in unsigned arithmetic: -INT64_MIN does not exist */
		mm->bytes = e->mem_bytes < 0 ? 0 - (uint64_t)e->mem_bytes : (uint64_t)e->mem_bytes;
		mm->op = e->mem_bytes > 0 ? TRACE_MEM_ALLOC : TRACE_MEM_FREE;
		mm->device = dev;
		mm->pid = u32(e->pid);
		mm->mem_kind = MEM_DEVICE;
	}
	if (e->has_total_alloc)
		add_metric(p, e->ts, dev, p->memory_alloc_id, e->total_alloc, u32(e->pid));
	if (e->has_total_reserved)
		add_metric(p, e->ts, dev, p->memory_reserved_id, e->total_reserved, u32(e->pid));
	/*
	 * A CUDA device's [memory] event is also a sample of the caching
	 * allocator (docs/memory.md): allocated and reserved after this
	 * allocation (+Bytes) or free (-Bytes).  Host (CPU) memory is not the
	 * CUDA allocator's and stays a metric.
	 */
	if (dev != UINT32_MAX && e->has_total_alloc && e->total_alloc >= 0 && e->total_alloc < 1e18) {
		struct trace_torch_mem *tm = MODEL_PUSH(p->m->torch_mem);
		tm->time = e->ts;
		tm->allocated = (uint64_t)e->total_alloc;
		if (e->has_total_reserved && e->total_reserved >= 0 && e->total_reserved < 1e18) {
			tm->reserved = (uint64_t)e->total_reserved;
			tm->flags |= TRACE_TM_HAS_RESERVED;
		}
		tm->delta = e->mem_bytes;
		tm->pid = u32(e->pid);
		tm->tid = u32(e->tid);
		tm->device = dev;
		tm->kind = TRACE_TM_ALLOC;
	}
}

static void counter_event(struct kparser *p, const struct kev *e)
{
	struct strbuf sb = STRBUF_INIT;

	p->saw_counter = 1;
	for (size_t i = 0; i < e->ngen; i++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, sb_str(&e->name));
		if (e->ngen > 1 || strcmp(e->gen[i].key, "value"))
			strbuf_addf(&sb, ".%s", e->gen[i].key);
		add_metric(p, e->ts, UINT32_MAX, model_intern(p->m, sb.buf), e->gen[i].value,
			   e->pid_ok ? u32(e->pid) : 0);
	}
	strbuf_release(&sb);
}

static void meta_event(struct kparser *p, const struct kev *e)
{
	struct meta_name *mn;
	const char *n = sb_str(&e->name);

	if (!e->pid_ok)
		return;
	if (!strcmp(n, "process_name") && e->arg_name.len)
		mn = MODEL_PUSH(p->proc_names);
	else if (!strcmp(n, "thread_name") && e->arg_name.len && e->tid_ok)
		mn = MODEL_PUSH(p->thread_names);
	else if (!strcmp(n, "process_labels") && e->labels.len) {
		mn = MODEL_PUSH(p->proc_labels);
		mn->pid = e->pid;
		mn->name_id = model_intern(p->m, e->labels.buf);
		return;
	} else
		return;
	mn->pid = e->pid;
	mn->tid = e->tid;
	mn->name_id = model_intern(p->m, e->arg_name.buf);
}

static void add_op_shape(struct kparser *p, const struct kev *e);

static void finish_event(struct kparser *p)
{
	struct kev *e = &p->ev;
	struct model *m = p->m;

	p->events_seen++;
	if (e->ph == 'M') {
		meta_event(p, e);
		return;
	}
	if (e->ph == 'C') {
		if (e->has_ts)
			counter_event(p, e);
		return;
	}
	if (e->cat == KC_INSTANT && e->has_ts && e->pid_ok && !strcmp(sb_str(&e->name), "[memory]")) {
		memory_instant(p, e);
		return;
	}
	/* everything else we read is a complete event with a numeric pid */
	if (e->ph != 'X' || !e->has_ts || !e->pid_ok || e->cat == KC_NONE || e->cat == KC_OTHER ||
	    e->cat == KC_INSTANT) {
		p->skipped_events++;
		return;
	}
	switch (e->cat) {
	case KC_CPU_OP:
	case KC_PYTHON:
	case KC_USER_ANNOTATION:
		if (!e->tid_ok) {
			p->skipped_events++;
			return;
		}
		note_host_pid(p, e->pid);
		add_range(p, e, e->cat == KC_CPU_OP ? p->dom_cpu :
				e->cat == KC_PYTHON ? p->dom_python : p->dom_user);
		if (e->cat == KC_CPU_OP)
			add_op_shape(p, e);
		break;
	case KC_RUNTIME:
	case KC_DRIVER: {
		struct trace_api *a = MODEL_PUSH(m->api);
		note_host_pid(p, e->pid);
		a->start = e->ts;
		a->end = ev_end(e);
		a->pid = u32(e->pid);
		a->tid = u32(e->tid);
		a->correlation = u32(e->correlation);
		a->cbid = u32(e->cbid);
		a->name_id = model_intern(m, sb_str(&e->name));
		a->domain = e->cat == KC_DRIVER ? TRACE_API_DRIVER : TRACE_API_RUNTIME;
		if (e->ext_id > 0 && a->correlation) {
			/* the operator that made the call; kept or dropped in finish_op_launches() */
			struct model_op_launch *l = MODEL_PUSH(m->op_launches);
			l->pid = a->pid;
			l->correlation = a->correlation;
			l->ext_id = (uint64_t)e->ext_id;
		}
		break;
	}
	case KC_KERNEL: {
		struct trace_kernel *k = MODEL_PUSH(m->kernels);
		k->start = e->ts;
		k->end = ev_end(e);
		k->device = ev_device(e);
		k->context = u32(e->context);
		k->stream = ev_stream(e);
		k->correlation = u32(e->correlation);
		k->name_id = model_intern(m, sb_str(&e->name));
		memcpy(k->grid, e->grid, sizeof(k->grid));
		memcpy(k->block, e->block, sizeof(k->block));
		k->static_smem = u32(e->smem); /* Kineto reports one "shared memory" figure */
		k->registers = (uint16_t)(e->registers > 0xffff ? 0xffff : u32(e->registers));
		if (e->has_collective || is_comm_kernel(sb_str(&e->name)))
			k->flags |= TRACE_GPU_COMM;
		if (e->has_collective)
			add_collective(p, e, k);
		break;
	}
	case KC_MEMCPY: {
		struct trace_memcpy *c = MODEL_PUSH(m->memcpys);
		c->start = e->ts;
		c->end = ev_end(e);
		c->bytes = e->bytes > 0 ? (uint64_t)e->bytes : 0;
		c->device = ev_device(e);
		c->context = u32(e->context);
		c->stream = ev_stream(e);
		c->correlation = u32(e->correlation);
		parse_memcpy_name(sb_str(&e->name), e->kind.len ? e->kind.buf : NULL, &c->kind,
				  &c->src_kind, &c->dst_kind);
		break;
	}
	case KC_MEMSET: {
		struct trace_memset *s = MODEL_PUSH(m->memsets);
		s->start = e->ts;
		s->end = ev_end(e);
		s->bytes = e->bytes > 0 ? (uint64_t)e->bytes : 0;
		s->device = ev_device(e);
		s->context = u32(e->context);
		s->stream = ev_stream(e);
		s->correlation = u32(e->correlation);
		s->mem_kind = parse_memset_name(sb_str(&e->name));
		break;
	}
	case KC_SYNC: {
		struct trace_sync *s = MODEL_PUSH(m->syncs);
		p->saw_sync = 1;
		s->start = e->ts;
		s->end = ev_end(e);
		s->device = ev_device(e);
		s->context = u32(e->context);
		s->stream = e->stream >= 0 ? (uint32_t)e->stream : UINT32_MAX;
		s->correlation = u32(e->correlation);
		s->type = (uint16_t)sync_type(sb_str(&e->name));
		if (e->wait_record_corr > 0 && e->wait_record_corr <= UINT32_MAX &&
		    e->wait_stream >= 0 && e->wait_stream < UINT16_MAX) {
			s->wait_correlation = (uint32_t)e->wait_record_corr;
			s->wait_stream = (uint16_t)e->wait_stream;
		}
		break;
	}
	case KC_GPU_ANNOTATION: {
		struct trace_nvtx_range *r = MODEL_PUSH(m->nvtx);
		r->start = e->ts;
		r->end = ev_end(e);
		r->category = ev_stream(e);
		r->name_id = model_intern(m, sb_str(&e->name));
		r->domain_id = p->dom_gpu_anno;
		r->kind = TRACE_NVTX_PUSHPOP;
		/* device in the payload: the range has no device field */
		r->payload_type = TRACE_PAYLOAD_U32;
		r->payload = ev_device(e);
		break;
	}
	default:
		p->skipped_events++;
		break;
	}
}

/* ---- record_shapes: copying the argument arrays of cpu_op events ---- */

static struct strbuf *cap_buf(struct kparser *p)
{
	return &p->cap[p->cap_key - K_INPUT_DIMS];
}

/* Is the parser inside an array being copied? */
static int capturing(const struct kparser *p)
{
	return p->cap_key && p->depth >= p->cap_depth;
}

/* The buffer to append the next value to, after its separator; NULL when dropped. */
static struct strbuf *cap_value(struct kparser *p)
{
	struct strbuf *sb = cap_buf(p);

	if (p->cap_bad)
		return NULL;
	if (sb->len && sb->buf[sb->len - 1] != '[')
		strbuf_addch(sb, ',');
	return sb;
}

static void cap_string(struct kparser *p, const unsigned char *s, size_t len)
{
	struct strbuf *sb = cap_value(p);

	if (!sb)
		return;
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, s[i]);
		} else if (s[i] < 0x20) {
			strbuf_addf(sb, "\\u%04x", s[i]);
		} else {
			strbuf_addch(sb, s[i]);
		}
	}
	strbuf_addch(sb, '"');
}

static void cap_reset(struct kparser *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(p->cap); i++) {
		strbuf_reset(&p->cap[i]);
		p->cap_has[i] = 0;
	}
	p->cap_key = 0;
	p->cap_bad = 0;
}

/* The copied array @key as a model string id, 0 when the event had none. */
static uint32_t cap_id(struct kparser *p, unsigned key)
{
	size_t i = key - K_INPUT_DIMS;

	return p->cap_has[i] ? model_intern(p->m, p->cap[i].buf) : 0;
}

/* A cpu_op with "Input Dims": its shape row (model.h, struct model_op_shape). */
static void add_op_shape(struct kparser *p, const struct kev *e)
{
	struct model_op_shape *o;

	if (!p->cap_has[0])
		return;
	o = MODEL_PUSH(p->m->op_shapes);
	o->start = e->ts;
	o->end = ev_end(e);
	o->ext_id = e->ext_id > 0 ? (uint64_t)e->ext_id : 0;
	o->pid = u32(e->pid);
	o->tid = u32(e->tid);
	o->name_id = model_intern(p->m, sb_str(&e->name));
	o->dims_id = cap_id(p, K_INPUT_DIMS);
	o->types_id = cap_id(p, K_INPUT_TYPE);
	o->concrete_id = cap_id(p, K_CONCRETE);
}

struct pid_ext {
	uint32_t pid;
	uint64_t ext;
};

static int cmp_pid_ext(const void *pa, const void *pb)
{
	const struct pid_ext *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->ext > b->ext) - (a->ext < b->ext);
}

/*
 * Keep the launches whose External id is an operator with shapes (same
 * pid): older Kineto versions wrote the correlation id there, which names
 * no operator, and a trace without shapes needs none of them.
 */
static void finish_op_launches(struct kparser *p)
{
	struct model *m = p->m;
	struct pid_ext *v;
	size_t n = 0, out = 0;

	if (!m->op_shapes.n) {
		free(m->op_launches.v);
		memset(&m->op_launches, 0, sizeof(m->op_launches));
		return;
	}
	v = xmalloc(m->op_shapes.n * sizeof(*v));
	for (size_t i = 0; i < m->op_shapes.n; i++)
		if (m->op_shapes.v[i].ext_id) {
			v[n].pid = m->op_shapes.v[i].pid;
			v[n++].ext = m->op_shapes.v[i].ext_id;
		}
	qsort(v, n, sizeof(*v), cmp_pid_ext);
	for (size_t i = 0; i < m->op_launches.n; i++) {
		struct pid_ext k = { m->op_launches.v[i].pid, m->op_launches.v[i].ext_id };
		if (n && bsearch(&k, v, n, sizeof(*v), cmp_pid_ext))
			m->op_launches.v[out++] = m->op_launches.v[i];
	}
	m->op_launches.n = out;
	free(v);
}

/* ---- yajl callbacks ---- */

/* Where are we?  Returns a small code for the container the scalar is in. */
enum where {
	W_NONE, W_ROOT, W_EVENT, W_ARGS, W_ARG_ARRAY, W_DEVPROP, W_DIST,
};

static enum where where_am_i(const struct kparser *p)
{
	if (p->events_depth) {
		int d = p->depth - p->events_depth;
		if (d == 1)
			return W_EVENT;
		if (d == 2 && p->ev_key == K_ARGS)
			return W_ARGS;
		if (d == 3 && p->ev_key == K_ARGS && (p->arg_key == K_GRID || p->arg_key == K_BLOCK))
			return W_ARG_ARRAY;
		return W_NONE;
	}
	if (!p->root_is_array && p->depth == 1)
		return W_ROOT;
	if (p->in_devprops && p->depth == p->in_devprops + 1)
		return W_DEVPROP;
	if (p->in_dist && p->depth == p->in_dist)
		return W_DIST;
	return W_NONE;
}

static void generic_num(struct kparser *p, const char *s, size_t len)
{
	struct kev *e = &p->ev;

	if (e->ngen < MAX_GENERIC_ARGS && parse_double(s, len, &e->gen[e->ngen].value) == 0)
		e->ngen++;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct kparser *p = ctx;
	struct kev *e = &p->ev;

	if (capturing(p)) {
		struct strbuf *sb = cap_value(p);
		if (sb)
			strbuf_add(sb, s, len);
		return 1;
	}
	switch (where_am_i(p)) {
	case W_EVENT:
		switch (p->ev_key) {
		case K_TS:
			e->has_ts = parse_us_to_ns(s, len, &e->ts) == 0;
			break;
		case K_DUR:
			e->has_dur = parse_us_to_ns(s, len, &e->dur) == 0;
			if (!e->has_dur)
				e->dur = 0;
			break;
		case K_PID:
			e->pid = parse_int(s, len);
			e->pid_ok = 1;
			break;
		case K_TID:
			e->tid = parse_int(s, len);
			e->tid_ok = 1;
			break;
		}
		break;
	case W_ARGS:
		switch (p->arg_key) {
		case K_EXTERNAL_ID: e->ext_id = parse_int(s, len); break;
		case K_CORRELATION: e->correlation = parse_int(s, len); break;
		case K_DEVICE: e->device = parse_int(s, len); break;
		case K_CONTEXT: e->context = parse_int(s, len); break;
		case K_STREAM: e->stream = parse_int(s, len); break;
		case K_REGISTERS: e->registers = parse_int(s, len); break;
		case K_SHARED_MEM: e->smem = parse_int(s, len); break;
		case K_BYTES: e->bytes = parse_int(s, len); break;
		case K_CBID: e->cbid = parse_int(s, len); break;
		case K_IN_NELEMS: e->in_nelems = parse_int(s, len); break;
		case K_OUT_NELEMS: e->out_nelems = parse_int(s, len); break;
		case K_GROUP_SIZE: e->group_size = parse_int(s, len); break;
		case K_DEVICE_ID: e->device_id = parse_int(s, len); break;
		case K_DEVICE_TYPE: e->device_type = parse_int(s, len); break;
		case K_MEM_BYTES: e->mem_bytes = parse_int(s, len); break;
		case K_WAIT_STREAM: e->wait_stream = parse_int(s, len); break;
		case K_WAIT_RECORD_CORR: e->wait_record_corr = parse_int(s, len); break;
		case K_TOTAL_ALLOC:
			e->has_total_alloc = parse_double(s, len, &e->total_alloc) == 0;
			break;
		case K_TOTAL_RESERVED:
			e->has_total_reserved = parse_double(s, len, &e->total_reserved) == 0;
			break;
		case K_UNKNOWN:
			if (e->ph == 'C' || e->ph == 0)
				generic_num(p, s, len);
			break;
		}
		break;
	case W_ARG_ARRAY:
		if (p->arr_index < 3) {
			uint32_t v = u32(parse_int(s, len));
			if (p->arg_key == K_GRID)
				e->grid[p->arr_index] = v;
			else
				e->block[p->arr_index] = v;
		}
		p->arr_index++;
		break;
	case W_DEVPROP:
		switch (p->obj_key) {
		case K_ID: p->dev.id = u32(parse_int(s, len)); break;
		case K_TOTAL_MEM: p->dev.global_mem = (uint64_t)parse_int(s, len); break;
		case K_CC_MAJOR: p->dev.cc_major = u32(parse_int(s, len)); break;
		case K_CC_MINOR: p->dev.cc_minor = u32(parse_int(s, len)); break;
		case K_NUM_SMS: p->dev.sm_count = u32(parse_int(s, len)); break;
		case K_MAX_THREADS_SM: p->dev.max_threads_per_sm = u32(parse_int(s, len)); break;
		}
		break;
	case W_DIST:
		if (p->obj_key == K_RANK) {
			p->rank = parse_int(s, len);
			p->has_rank = 1;
		} else if (p->obj_key == K_WORLD_SIZE) {
			p->world_size = parse_int(s, len);
			p->has_world_size = 1;
		}
		break;
	default:
		break;
	}
	return 1;
}

static void set_sb(struct strbuf *sb, const unsigned char *s, size_t len)
{
	strbuf_reset(sb);
	strbuf_add(sb, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct kparser *p = ctx;
	struct kev *e = &p->ev;

	if (capturing(p)) {
		cap_string(p, s, len);
		return 1;
	}
	switch (where_am_i(p)) {
	case W_EVENT:
		switch (p->ev_key) {
		case K_PH: e->ph = len ? (char)s[0] : 0; break;
		case K_CAT: e->cat = (unsigned char)classify_cat(p, s, len); break;
		case K_NAME: set_sb(&e->name, s, len); break;
		case K_PID: e->pid_ok = parse_id_string(s, len, &e->pid); break;
		case K_TID: e->tid_ok = parse_id_string(s, len, &e->tid); break;
		case K_TS: e->has_ts = parse_us_to_ns((const char *)s, len, &e->ts) == 0; break;
		case K_DUR: e->has_dur = parse_us_to_ns((const char *)s, len, &e->dur) == 0; break;
		}
		break;
	case W_ARGS:
		switch (p->arg_key) {
		case K_COLLECTIVE: set_sb(&e->collective, s, len); e->has_collective = len > 0; break;
		case K_DTYPE: set_sb(&e->dtype, s, len); break;
		case K_PG_NAME: set_sb(&e->pg_name, s, len); break;
		case K_PG_DESC: set_sb(&e->pg_desc, s, len); break;
		case K_PG_RANKS: set_sb(&e->pg_ranks, s, len); break;
		case K_NAME: set_sb(&e->arg_name, s, len); break;
		case K_LABELS: set_sb(&e->labels, s, len); break;
		case K_ROCM_KIND: set_sb(&e->kind, s, len); break;
		/* ROCm writes some numbers as strings ("stream": "0x0") */
		case K_STREAM: case K_CORRELATION: case K_DEVICE: case K_BYTES: {
			int64_t v = 0;
			if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
				char buf[32];
				if (len < sizeof(buf)) {
					memcpy(buf, s, len);
					buf[len] = 0;
					v = (int64_t)strtoull(buf, NULL, 16);
				}
			} else if (!parse_id_string(s, len, &v)) {
				break;
			}
			if (p->arg_key == K_STREAM) e->stream = v;
			else if (p->arg_key == K_CORRELATION) e->correlation = v;
			else if (p->arg_key == K_DEVICE) e->device = v;
			else e->bytes = v;
			break;
		}
		}
		break;
	case W_ROOT:
		if (p->root_key == K_HOST_NAME)
			set_sb(&p->host_name, s, len);
		break;
	case W_DEVPROP:
		if (p->obj_key == K_NAME)
			p->dev.name_id = strtab_intern_n(&p->m->str, (const char *)s, len);
		break;
	case W_DIST:
		if (p->obj_key == K_BACKEND)
			set_sb(&p->backend, s, len);
		else if (p->obj_key == K_NCCL_VERSION)
			set_sb(&p->nccl_version, s, len);
		break;
	default:
		break;
	}
	return 1;
}

static int cb_bool(void *ctx, int v)
{
	struct kparser *p = ctx;

	if (capturing(p)) {
		struct strbuf *sb = cap_value(p);
		if (sb)
			strbuf_addstr(sb, v ? "true" : "false");
		return 1;
	}
	if (where_am_i(p) == W_ROOT && p->root_key == K_PROFILE_MEMORY)
		p->profile_memory = v;
	return 1;
}

static int cb_null(void *ctx)
{
	struct kparser *p = ctx;

	if (capturing(p)) {
		struct strbuf *sb = cap_value(p);
		if (sb)
			strbuf_addstr(sb, "null");
	}
	return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct kparser *p = ctx;

	/* an empty key is a key we do not know: its value must not go to the previous key */
	switch (where_am_i(p)) {
	case W_EVENT:
		p->ev_key = key_lookup(event_keys, ARRAY_SIZE(event_keys), s, len);
		break;
	case W_ARGS:
		p->arg_key = key_lookup(arg_keys, ARRAY_SIZE(arg_keys), s, len);
		if (p->arg_key == K_UNKNOWN && p->ev.ngen < MAX_GENERIC_ARGS) {
			struct generic_arg *g = &p->ev.gen[p->ev.ngen];
			size_t n = len < sizeof(g->key) - 1 ? len : sizeof(g->key) - 1;
			memcpy(g->key, s, n);
			g->key[n] = 0;
			g->value = 0;
		}
		break;
	case W_ROOT:
		p->root_key = key_lookup(root_keys, ARRAY_SIZE(root_keys), s, len);
		break;
	case W_DEVPROP:
	case W_DIST:
		p->obj_key = key_lookup(obj_keys, ARRAY_SIZE(obj_keys), s, len);
		break;
	default:
		break;
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct kparser *p = ctx;
	enum where w = where_am_i(p);

	if (!p->root_seen) {
		p->root_seen = 1;
		p->depth = 1;
		return 1;
	}
	if (capturing(p)) {
		p->cap_bad = 1; /* an object in a shape list: not a list we know */
		p->depth++;
		return 1;
	}
	if (p->events_depth && p->depth == p->events_depth) {
		kev_reset(&p->ev);
		p->ev_key = K_UNKNOWN;
	} else if (w == W_EVENT && p->ev_key == K_ARGS) {
		p->arg_key = K_UNKNOWN;
	} else if (w == W_ROOT && p->root_key == K_DIST_INFO) {
		p->in_dist = p->depth + 1;
		p->obj_key = K_UNKNOWN;
	} else if (p->in_devprops && p->depth == p->in_devprops) {
		memset(&p->dev, 0, sizeof(p->dev));
		p->dev_open = 1;
		p->obj_key = K_UNKNOWN;
	}
	p->depth++;
	return 1;
}

static int cb_end_map(void *ctx)
{
	struct kparser *p = ctx;

	p->depth--;
	if (p->events_depth && p->depth == p->events_depth) {
		finish_event(p);
		cap_reset(p);
	} else if (p->events_depth && p->depth == p->events_depth + 1) {
		p->ev_key = K_UNKNOWN; /* args closed */
	} else if (p->in_dist && p->depth == p->in_dist - 1) {
		p->in_dist = 0;
	} else if (p->dev_open && p->depth == p->in_devprops) {
		/* one row per device id: a repeated entry replaces the earlier one */
		struct trace_device *d = NULL;
		for (size_t i = 0; i < p->m->devices.n && !d; i++)
			if (p->m->devices.v[i].id == p->dev.id)
				d = &p->m->devices.v[i];
		if (d)
			p->dup_devices++;
		else
			d = MODEL_PUSH(p->m->devices);
		*d = p->dev;
		p->dev_open = 0;
	}
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct kparser *p = ctx;
	enum where w = where_am_i(p);

	if (!p->root_seen) {
		/* a bare array of events (the Chrome "JSON Array Format") */
		p->root_seen = 1;
		p->root_is_array = 1;
		p->depth = 1;
		p->events_depth = 1;
		return 1;
	}
	if (capturing(p)) {
		struct strbuf *sb = cap_value(p);
		if (sb)
			strbuf_addch(sb, '[');
		p->depth++;
		return 1;
	}
	if (w == W_ARGS && p->arg_key >= K_INPUT_DIMS && p->arg_key <= K_CONCRETE) {
		p->cap_key = p->arg_key;
		p->cap_depth = p->depth + 1;
		strbuf_reset(cap_buf(p));
		strbuf_addch(cap_buf(p), '[');
		p->cap_has[p->cap_key - K_INPUT_DIMS] = 1;
		p->depth++;
		return 1;
	}
	if (w == W_ROOT && p->root_key == K_TRACE_EVENTS && !p->events_depth)
		p->events_depth = p->depth + 1;
	else if (w == W_ROOT && p->root_key == K_DEVICE_PROPS)
		p->in_devprops = p->depth + 1;
	else if (w == W_ARGS)
		p->arr_index = 0;
	p->depth++;
	return 1;
}

static int cb_end_array(void *ctx)
{
	struct kparser *p = ctx;

	if (capturing(p)) {
		if (!p->cap_bad)
			strbuf_addch(cap_buf(p), ']');
		p->depth--;
		if (p->depth < p->cap_depth) {
			/* the argument array closed */
			if (p->cap_bad)
				p->cap_has[p->cap_key - K_INPUT_DIMS] = 0;
			p->cap_key = 0;
			p->cap_bad = 0;
		}
		return 1;
	}
	p->depth--;
	if (p->events_depth && p->depth == p->events_depth - 1) {
		/* the event array closed; later root keys are read as root keys */
		p->events_depth = 0;
	} else if (p->in_devprops && p->depth == p->in_devprops - 1) {
		p->in_devprops = 0;
	}
	return 1;
}

static const yajl_callbacks kineto_callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

/* ---- after the parse ---- */

static int cmp_corr(const void *a, const void *b)
{
	const struct corr_pid *x = a, *y = b;
	return x->correlation < y->correlation ? -1 : x->correlation > y->correlation;
}

static uint32_t lookup_pid(const struct corr_pid *map, size_t n, uint32_t corr, uint32_t dflt)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (map[mid].correlation < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && map[lo].correlation == corr ? map[lo].pid : dflt;
}

/*
 * GPU rows in Kineto sit under the device's pseudo-process; give them the
 * host pid that launched them: through the correlation id when the trace
 * holds several host processes, else the only host process.
 */
static void assign_gpu_pids(struct kparser *p)
{
	struct model *m = p->m;
	uint32_t main_pid = p->host_pids.n ? u32(p->host_pids.v[0]) : 0;
	struct corr_pid *map = NULL;
	size_t n = 0;

	if (p->host_pids.n > 1 && m->api.n) {
		map = xmalloc(m->api.n * sizeof(*map));
		for (size_t i = 0; i < m->api.n; i++) {
			map[n].correlation = m->api.v[i].correlation;
			map[n++].pid = m->api.v[i].pid;
		}
		qsort(map, n, sizeof(*map), cmp_corr);
	}
#define PID_OF(corr) lookup_pid(map, n, corr, main_pid)
	for (size_t i = 0; i < m->kernels.n; i++)
		m->kernels.v[i].pid = PID_OF(m->kernels.v[i].correlation);
	for (size_t i = 0; i < m->memcpys.n; i++)
		m->memcpys.v[i].pid = PID_OF(m->memcpys.v[i].correlation);
	for (size_t i = 0; i < m->memsets.n; i++)
		m->memsets.v[i].pid = PID_OF(m->memsets.v[i].correlation);
	for (size_t i = 0; i < m->syncs.n; i++)
		m->syncs.v[i].pid = PID_OF(m->syncs.v[i].correlation);
#undef PID_OF
	for (size_t i = 0; i < m->nvtx.n; i++)
		if (m->nvtx.v[i].tid == 0 && m->nvtx.v[i].pid == 0)
			m->nvtx.v[i].pid = main_pid;
	for (size_t i = 0; i < m->devices.n; i++)
		m->devices.v[i].pid = main_pid;
	free(map);
}

static int is_host_pid(const struct kparser *p, int64_t pid)
{
	for (size_t i = 0; i < p->host_pids.n; i++)
		if (p->host_pids.v[i] == pid)
			return 1;
	return 0;
}

static void finish_model(struct kparser *p)
{
	struct model *m = p->m;
	uint32_t host_id = p->host_name.len ? model_intern(m, p->host_name.buf) : 0;

	assign_gpu_pids(p);
	finish_op_launches(p);
	import_nvtx_levels(m);
	for (size_t i = 0; i < p->host_pids.n; i++) {
		struct model_process *pr = MODEL_PUSH(m->procs);
		pr->pid = u32(p->host_pids.v[i]);
		pr->host_id = host_id;
		pr->ended = 1;
		for (size_t j = 0; j < p->proc_names.n; j++)
			if (p->proc_names.v[j].pid == p->host_pids.v[i])
				pr->cmdline_id = p->proc_names.v[j].name_id;
	}
	for (size_t i = 0; i < p->thread_names.n; i++) {
		const struct meta_name *t = &p->thread_names.v[i];
		struct model_thread *mt;
		if (!is_host_pid(p, t->pid) || t->tid <= 0)
			continue;
		mt = MODEL_PUSH(m->threads);
		mt->pid = u32(t->pid);
		mt->tid = u32(t->tid);
		mt->name_id = t->name_id;
	}

	m->has |= MODEL_HAS_NVTX; /* CPU ops and annotations are always written */
	if (m->kernels.n || m->memcpys.n || m->memsets.n || m->api.n || m->devices.n)
		m->has |= MODEL_HAS_CUDA | MODEL_HAS_API;
	if (p->saw_sync)
		m->has |= MODEL_HAS_SYNC;
	if (p->saw_memory || p->profile_memory)
		m->has |= MODEL_HAS_MEMORY | MODEL_HAS_TORCH_MEM;
	if (p->saw_counter || p->saw_memory)
		m->has |= MODEL_HAS_METRICS;

	if ((p->has_rank || p->has_world_size) && p->host_pids.n) {
		/* distributedInfo: the rank is the process that launches the GPU work */
		struct trace_proc_attr a;
		model_proc_attr_unknown(&a);
		a.pid = u32(p->host_pids.v[0]);
		if (p->has_rank && p->rank >= 0 && p->rank <= INT32_MAX)
			a.rank = (int32_t)p->rank;
		if (p->has_world_size && p->world_size > 0 && p->world_size <= INT32_MAX)
			a.world_size = (int32_t)p->world_size;
		a.launcher_id = model_intern(m, "kineto");
		model_proc_set_attr(m, a.pid, &a);
	}
	if (p->has_rank || p->has_world_size || p->backend.len) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "kineto: distributed run");
		if (p->has_rank)
			strbuf_addf(&sb, ", rank %" PRId64, p->rank);
		if (p->has_world_size)
			strbuf_addf(&sb, " of world size %" PRId64, p->world_size);
		if (p->backend.len)
			strbuf_addf(&sb, ", backend %s", p->backend.buf);
		if (p->nccl_version.len)
			strbuf_addf(&sb, ", nccl %s", p->nccl_version.buf);
		strbuf_addstr(&sb, " (this trace holds one rank only)");
		model_warn(m, "%s", sb.buf);
		strbuf_release(&sb);
	}
	if (p->dup_devices)
		model_warn(m, "kineto: deviceProperties repeats a device id %" PRIu64 " times; the last entry of each is used",
			   p->dup_devices);
	if (p->legacy_events)
		model_warn(m, "kineto: legacy (2021) event categories read as their current names");
	model_warn(m, "no OS-runtime data in this trace: the starvation rule cannot attribute gaps to I/O");
	model_warn(m, "no per-thread CPU samples in this trace: CPU-bound phases are inferred from CPU ops only");
	if (!p->saw_sync)
		model_warn(m, "no cuda_sync events in this trace: time blocked in synchronisation is not attributed");
	if (!(m->has & MODEL_HAS_MEMORY))
		model_warn(m, "no memory events in this trace (profile_memory was off)");
	model_warn(m, "no GPU metric samples (utilisation, clocks, power) in this trace");
	model_finish(m);
	import_count_events(m);
}

static void parser_init(struct kparser *p, struct model *m, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->m = m;
	p->path = path;
	p->last_host_pid = -1;
	kev_reset(&p->ev);
	p->dom_cpu = model_intern(m, "kineto:cpu_op");
	p->dom_python = model_intern(m, "kineto:python");
	p->dom_user = model_intern(m, "kineto:user_annotation");
	p->dom_gpu_anno = model_intern(m, "kineto:gpu_user_annotation");
	p->dom_coll = model_intern(m, "kineto:collective");
	p->memory_alloc_id = model_intern(m, "torch_allocated_bytes");
	p->memory_reserved_id = model_intern(m, "torch_reserved_bytes");
	free(m->path);
	m->path = xstrdup(path);
	m->format = "kineto";
}

static void parser_release(struct kparser *p)
{
	kev_release(&p->ev);
	free(p->proc_names.v);
	free(p->thread_names.v);
	free(p->proc_labels.v);
	free(p->host_pids.v);
	strbuf_release(&p->backend);
	strbuf_release(&p->nccl_version);
	strbuf_release(&p->host_name);
	for (size_t i = 0; i < ARRAY_SIZE(p->cap); i++)
		strbuf_release(&p->cap[i]);
}

static yajl_handle parser_handle(struct kparser *p)
{
	yajl_handle h = yajl_alloc(&kineto_callbacks, NULL, p);

	yajl_config(h, yajl_dont_validate_strings, 1);
	return h;
}

/* One-line error from yajl with the byte offset in the (uncompressed) JSON. */
static int parse_error(struct kparser *p, yajl_handle h, const unsigned char *buf, size_t len,
		       uint64_t base)
{
	unsigned char *msg = yajl_get_error(h, 0, buf, len);
	char *nl;
	int ret;

	nl = strchr((char *)msg, '\n');
	if (nl)
		*nl = 0;
	ret = error("kineto trace '%s': invalid JSON near byte %" PRIu64 ": %s", p->path,
		    base + (uint64_t)yajl_get_bytes_consumed(h), (char *)msg);
	yajl_free_error(h, msg);
	return ret;
}

static int check_shape(struct kparser *p)
{
	if (!p->root_seen)
		return error("'%s' is JSON but not a Kineto/Chrome trace (no object or array)",
			     p->path);
	if (!p->root_is_array && !p->events_seen && !p->m->devices.n)
		return error("'%s' is JSON but not a Kineto/Chrome trace (no \"traceEvents\")",
			     p->path);
	return 0;
}

int kineto_load_buffer(struct model *m, const char *name, const void *data, size_t len)
{
	struct kparser p;
	yajl_handle h;
	int ret = 0;

	parser_init(&p, m, name);
	h = parser_handle(&p);
	if (yajl_parse(h, data, len) != yajl_status_ok)
		ret = parse_error(&p, h, data, len, 0);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		ret = error("kineto trace '%s': truncated JSON (ends inside a value)", name);
	yajl_free(h);
	if (!ret)
		ret = check_shape(&p);
	if (!ret)
		finish_model(&p);
	parser_release(&p);
	return ret;
}

int kineto_load(struct model *m, const char *path)
{
	struct kparser p;
	yajl_handle h;
	unsigned char *buf;
	gzFile gz;
	uint64_t base = 0;
	int ret = 0, n;

	gz = gzopen(path, "rb");
	if (!gz)
		return error("cannot open '%s': %s", path, strerror(errno ? errno : ENOMEM));
	gzbuffer(gz, 256 * 1024);
	buf = xmalloc(KINETO_BLOCK);
	parser_init(&p, m, path);
	h = parser_handle(&p);
	while ((n = gzread(gz, buf, KINETO_BLOCK)) > 0) {
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
			ret = parse_error(&p, h, buf, (size_t)n, base);
			break;
		}
		base += (uint64_t)n;
		import_progress((uint64_t)gzoffset(gz), 0);   /* bytes of the file read */
	}
	if (!ret && n < 0) {
		int zerr;
		const char *msg = gzerror(gz, &zerr);
		ret = error("kineto trace '%s': %s after %" PRIu64 " bytes", path,
			    zerr == Z_BUF_ERROR ? "truncated gzip stream" :
			    zerr == Z_ERRNO ? strerror(errno) : msg, base);
	}
	if (!ret && yajl_complete_parse(h) != yajl_status_ok)
		ret = error("kineto trace '%s': truncated JSON after %" PRIu64 " bytes", path, base);
	yajl_free(h);
	gzclose(gz);
	free(buf);
	if (!ret)
		ret = check_shape(&p);
	if (!ret)
		finish_model(&p);
	parser_release(&p);
	return ret;
}
