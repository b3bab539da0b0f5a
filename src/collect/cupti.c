/*
 * cupti.c - CUDA tracing through CUPTI (CUDA_INJECTION64_PATH).
 *
 * The CUDA driver calls InitializeInjection() from inside cuInit.  There we
 * load libcupti.so.13 (cupti_api.h), put CUPTI on the report clock
 * (cuptiActivityRegisterTimestampCallback -> cl_now), enable the activity
 * kinds we record and the API records that matter, and subscribe to the few
 * callbacks we need (cudaProfilerStart/Stop, device reset, context
 * teardown).  No CUDA call is ever made from here or from a callback.
 *
 * GPU records reach us in CUPTI activity buffers, handed over on CUPTI's
 * worker thread or inside cuptiActivityFlushAll.  The buffer callback only
 * queues them; our worker thread converts each record with the pure
 * functions of cupti_convert.c into the collector's buffers, and every
 * GPUSCOPE_CUPTI_FLUSH_MS (1 s) asks CUPTI for partly filled buffers.  The
 * exit path forces a last flush and converts what is left.
 *
 * API calls: only the APIs of cupti_api_keep() are recorded, one callback id
 * at a time, so the trivial calls PyTorch makes several times per kernel
 * cost nothing.  By default each kept call is timed by an enter/exit
 * callback of ours on the calling thread (two clock reads and one record);
 * GPUSCOPE_CUPTI_API_MODE=activity uses CUPTI's API activity records
 * enabled per callback id (cuptiActivityEnableRuntimeApi) instead, and
 * =hybrid those records with the synchronising calls from callbacks; both
 * measured as costly as the callbacks under PyTorch, which alone give every
 * sync record its stream (bench/RESULTS-cupti.md, Session 4); =subtract enables
 * the whole RUNTIME and DRIVER kinds and disables the skipped ids; =off
 * records no API call; GPUSCOPE_CUPTI_KINDS=kernel traces kernels only.
 * GPUSCOPE_CUDA_ALL_APIS=1 records every runtime and driver call.
 *
 * Failure to start (no libcupti, no driver, another CUPTI client) is one
 * cl_warning("CUDA tracing off: ...") and nothing else: the CPU side goes on.
 */
#include "collect.h"

#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"
#include "cupti_convert.h"
#include "kmetrics.h"
#include "pmsample.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum cupti_state {
	CUPTI_OFF = 0,      /* not started (or failed) */
	CUPTI_ON = 1,
	CUPTI_DEAD = 2,     /* forked child: never call CUPTI again */
};

#define API_CBIDS 1024      /* > CUPTI_RUNTIME/DRIVER_TRACE_CBID_SIZE */
#define KNAME_SLOTS 16384   /* kernel name cache (power of two) */
#define CTX_SLOTS 1024      /* context id -> device */
#define MAX_DEVICES 64

static struct cupti_api cu;
static CUpti_SubscriberHandle cu_sub;
static atomic_int cu_state;
static int cu_callback_mode;        /* API records from callbacks, not activity */
static int cu_api_off;              /* GPUSCOPE_CUPTI_API_MODE=off: no API records */
static int cu_api_subtract;         /* =subtract: whole kinds, then disable the skipped */
static int cu_api_hybrid;           /* =hybrid: activity records, syncs from callbacks */
static unsigned cu_kinds = ~0u;     /* GPUSCOPE_CUPTI_KINDS: KIND_* bits enabled */
static int cu_no_subscribe;         /* GPUSCOPE_CUPTI_SUBSCRIBE=0: no callbacks at all */
static int cu_cupti_clock;          /* GPUSCOPE_CUPTI_CLOCK=cupti: no timestamp callback */
static int cu_no_driver;            /* GPUSCOPE_CUPTI_DRIVER=0: no driver API records */
static int64_t cu_clock_offset;     /* cl_now() - cuptiGetTimestamp() at start */
static size_t cu_buffer_bytes = 4u << 20;
static unsigned cu_flush_ms = 1000;

/* measurement knob GPUSCOPE_CUPTI_KINDS=kernel,memcpy,memset,sync,memory */
enum {
	KIND_KERNEL = 1, KIND_MEMCPY = 2, KIND_MEMSET = 4, KIND_SYNC = 8, KIND_MEMORY = 16,
};

/* [0] runtime, [1] driver: string id of the function name (0 = not yet) */
static _Atomic uint32_t api_name_ids[2][API_CBIDS];
/* callback mode: which cbids are recorded */
static unsigned char api_keep_cb[2][API_CBIDS];
/*
 * callback mode: the synchronisation a cbid is (enum trace_sync_type, +16
 * for a per-thread default stream variant); its records come from our
 * callbacks instead of CUPTI's SYNCHRONIZATION kind, which cost the
 * launch-bound PyTorch step +23% on its own (bench/RESULTS-cupti.md).
 */
static unsigned char api_sync[2][API_CBIDS];
static int cu_sync_cb;              /* sync records from the API calls */

struct kname_slot {
	const char *key;        /* CUPTI's pointer */
	char *copy;             /* the name it pointed to */
	uint32_t name_id, mangled_id;
	uint16_t flags;
};
static struct kname_slot knames[KNAME_SLOTS];
static size_t knames_used;
static pthread_mutex_t knames_lock = PTHREAD_MUTEX_INITIALIZER;

/* context id -> device id + 1 (0 = unknown) */
static _Atomic uint32_t ctx_device[CTX_SLOTS];

static _Atomic unsigned char device_done[MAX_DEVICES];

static atomic_int capture_open;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_t flusher;
static atomic_int flusher_stop;
static int flusher_started;

/* ---- clock ---- */

static uint64_t CUPTIAPI cupti_timestamp(void)
{
	return cl_now();
}

/* ---- emitting ---- */

/*
 * Emit a record of something that happened at @time: kept when @time is
 * inside a capture window (cudaProfilerApi, nvtx, --delay/--duration),
 * whenever CUPTI hands it over.
 */
static void emit(unsigned type, const void *rec, size_t size, uint64_t time)
{
	void *p = cl_reserve_at(type, size, time);

	if (!p)
		return;
	memcpy(p, rec, size);
	cl_commit();
}

static void note_context(uint32_t ctx, uint32_t device)
{
	if (ctx < CTX_SLOTS && device != CUPTI_DEVICE_UNKNOWN)
		atomic_store_explicit(&ctx_device[ctx], device + 1, memory_order_relaxed);
}

static uint32_t context_device(uint32_t ctx)
{
	uint32_t d = ctx < CTX_SLOTS ? atomic_load_explicit(&ctx_device[ctx], memory_order_relaxed) : 0;

	return d ? d - 1 : CUPTI_DEVICE_UNKNOWN;
}

static uint32_t api_name_id(unsigned dom, uint32_t cbid)
{
	CUpti_CallbackDomain domain = dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	const char *name = NULL;
	char buf[256];
	uint32_t id;
	size_t len;

	if (cbid >= API_CBIDS)
		return cl_intern("<unknown cuda api>", 18);
	id = atomic_load_explicit(&api_name_ids[dom][cbid], memory_order_relaxed);
	if (id)
		return id;
	if (cu.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
		len = (size_t)snprintf(buf, sizeof(buf), "%s api %u", dom ? "driver" : "runtime", cbid);
	} else {
		len = cupti_api_base_name(name, buf, sizeof(buf));
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	id = cl_intern(buf, len);
	atomic_store_explicit(&api_name_ids[dom][cbid], id, memory_order_relaxed);
	return id;
}

/* Name ids and flags of a kernel, demangled once per distinct name. */
static void kernel_names(const char *raw, struct trace_kernel *k)
{
	size_t h, i;
	struct kname_slot *slot = NULL;
	const char *name, *mangled;
	char *dem;

	if (!raw)
		raw = "";
	h = ((uintptr_t)raw >> 3) * 0x9e3779b97f4a7c15ull;
	pthread_mutex_lock(&knames_lock);
	for (i = 0; i < KNAME_SLOTS; i++) {
		struct kname_slot *s = &knames[(h + i) & (KNAME_SLOTS - 1)];
		if (!s->key) {
			slot = s;
			break;
		}
		if (s->key == raw) {
			if (!strcmp(s->copy, raw)) {
				k->name_id = s->name_id;
				k->mangled_id = s->mangled_id;
				k->flags |= s->flags;
				pthread_mutex_unlock(&knames_lock);
				return;
			}
			slot = s;   /* CUPTI reused the pointer: replace */
			free(s->copy);
			s->key = NULL;
			knames_used--;
			break;
		}
	}
	dem = cupti_demangle(raw);
	cupti_kernel_names(raw, dem, &name, &mangled);
	k->name_id = cl_intern(name, strlen(name));
	k->mangled_id = mangled ? cl_intern(mangled, strlen(mangled)) : 0;
	if (cupti_is_nccl_kernel(name))
		k->flags |= TRACE_GPU_COMM;
	if (slot && knames_used < KNAME_SLOTS / 4 * 3 && (slot->copy = strdup(raw))) {
		slot->key = raw;
		slot->name_id = k->name_id;
		slot->mangled_id = k->mangled_id;
		slot->flags = k->flags & TRACE_GPU_COMM;
		knames_used++;
	}
	pthread_mutex_unlock(&knames_lock);
	free(dem);
}

/* PCI location of the GPU with @uuid from /proc/driver/nvidia/gpus. */
static void device_pci(const uint8_t uuid[16], struct trace_device *d)
{
	DIR *dir = opendir("/proc/driver/nvidia/gpus");
	struct dirent *de;
	char path[512], text[4096];

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		int fd;
		ssize_t n;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		if (!cupti_info_pci(text, uuid, &d->pci_domain, &d->pci_bus, &d->pci_device))
			break;
	}
	closedir(dir);
}

static void handle_device(const CUpti_ActivityDevice5 *r)
{
	struct trace_device d;
	const char *name = r->name ? r->name : "";

	if (r->id < MAX_DEVICES && atomic_exchange(&device_done[r->id], 1))
		return;
	cupti_conv_device(r, cl_pid(), cl_intern(name, strlen(name)), &d);
	device_pci(d.uuid, &d);
	emit(TRACE_EV_DEVICE, &d, sizeof(d), 0);
}

static void drop(void)
{
	cl_add_drops(TRACE_DROP_CUPTI, 1);
}

/* GPUSCOPE_CUPTI_CLOCK=cupti: CUPTI's own clock, moved by the offset at start */
static void shift(uint64_t *a, uint64_t *b)
{
	if (!cu_cupti_clock)
		return;
	if (*a)
		*a += (uint64_t)cu_clock_offset;
	if (b && *b)
		*b += (uint64_t)cu_clock_offset;
}

/* Emit a converted record whose times (@start, @end inside @rec) CUPTI stamped. */
static void emit_shifted(unsigned type, void *rec, size_t size, uint64_t *start, uint64_t *end)
{
	shift(start, end);
	emit(type, rec, size, *start);
}

static void emit_sync(const struct trace_api *a, unsigned what, const CUpti_CallbackData *cb);

static void handle_record(const CUpti_Activity *rec)
{
	uint32_t pid = cl_pid();

	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *r = (const void *)rec;
		struct trace_kernel k;
		note_context(r->contextId, r->deviceId);
		if (cupti_conv_kernel(r, pid, &k) < 0) {
			drop();
			break;
		}
		shift(&k.start, &k.end);
		if (!cl_recording_at(k.start))
			break;   /* before kernel_names(): no names interned for it */
		kernel_names(r->name, &k);
		emit(TRACE_EV_KERNEL, &k, sizeof(k), k.start);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *r = (const void *)rec;
		struct trace_memcpy c;
		note_context(r->contextId, r->deviceId);
		if (cupti_conv_memcpy(r, pid, &c) < 0)
			drop();
		else
			emit_shifted(TRACE_EV_MEMCPY, &c, sizeof(c), &c.start, &c.end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *r = (const void *)rec;
		struct trace_memcpy c;
		if (cupti_conv_memcpy_p2p(r, pid, &c) < 0)
			drop();
		else
			emit_shifted(TRACE_EV_MEMCPY, &c, sizeof(c), &c.start, &c.end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *r = (const void *)rec;
		struct trace_memset s;
		note_context(r->contextId, r->deviceId);
		if (cupti_conv_memset(r, pid, &s) < 0)
			drop();
		else
			emit_shifted(TRACE_EV_MEMSET, &s, sizeof(s), &s.start, &s.end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *r = (const void *)rec;
		struct trace_sync s;
		if (cupti_conv_sync(r, pid, context_device(r->contextId), &s) < 0)
			drop();
		else
			emit_shifted(TRACE_EV_SYNC, &s, sizeof(s), &s.start, &s.end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const CUpti_ActivityMemory4 *r = (const void *)rec;
		struct trace_memory m;
		note_context(r->contextId, r->deviceId);
		/* pool bookkeeping records are not allocations: not a drop */
		if (cupti_conv_memory(r, pid, &m) == 0)
			emit_shifted(TRACE_EV_MEMORY, &m, sizeof(m), &m.time, NULL);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *r = (const void *)rec;
		unsigned dom = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
		struct trace_api a;
		if (cupti_conv_api(r, dom ? TRACE_API_DRIVER : TRACE_API_RUNTIME,
				   api_name_id(dom, r->cbid), &a) < 0) {
			drop();
			break;
		}
		emit_shifted(TRACE_EV_API, &a, sizeof(a), &a.start, &a.end);
		if (r->cbid < API_CBIDS && api_sync[dom][r->cbid])
			emit_sync(&a, api_sync[dom][r->cbid], NULL);
		break;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE:
		handle_device((const void *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *r = (const void *)rec;
		note_context(r->contextId, r->deviceId);
		break;
	}
	default:
		break;
	}
}

/* ---- activity buffers ---- */

/*
 * Buffers are recycled: a converted buffer is zeroed on the worker thread
 * and kept (up to POOL_MAX) for CUPTI's next request, and CUPTI is told
 * (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) that it need not zero
 * them itself, which it would do on the application thread that asked for
 * the buffer.  No buffer is unmapped and mapped again either: an munmap
 * interrupts every CPU that runs one of the process's threads.  The worker
 * puts two buffers in the pool when it starts.  GPUSCOPE_CUPTI_POOL=0: the
 * old way (a new buffer each time, zeroed by CUPTI, freed after use).
 */
#define POOL_MAX 8
static uint8_t *pool[POOL_MAX];
static int pool_n;
static int cu_pool = 1;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* A new buffer; zeroed (its pages touched) when @zero. */
static uint8_t *buffer_new(int zero)
{
	void *p = NULL;

	if (posix_memalign(&p, 8, cu_buffer_bytes))
		return NULL;
	if (zero)
		memset(p, 0, cu_buffer_bytes);
	return p;
}

/* Give a buffer back: kept zeroed in the pool, or freed (at exit, or the pool full). */
static void buffer_release(uint8_t *buffer)
{
	if (!buffer)
		return;
	if (cu_pool && !atomic_load(&flusher_stop)) {
		memset(buffer, 0, cu_buffer_bytes);
		pthread_mutex_lock(&pool_lock);
		if (pool_n < POOL_MAX) {
			pool[pool_n++] = buffer;
			buffer = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	free(buffer);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *p = NULL;

	if (cu_pool) {
		pthread_mutex_lock(&pool_lock);
		if (pool_n > 0)
			p = pool[--pool_n];
		pthread_mutex_unlock(&pool_lock);
	}
	if (!p)
		p = buffer_new(cu_pool);
	*buffer = p;
	*size = p ? cu_buffer_bytes : 0;
	*max_records = 0;
}

/*
 * Completed buffers are only queued here: converting them inside the
 * callback would hold CUPTI's buffer lock (during cuptiActivityFlushAll)
 * while application threads wait for it to record their next launch.  The
 * worker thread converts them; the final flush converts what is left.
 */
struct done_buf {
	uint8_t *buf;
	size_t valid;
	struct done_buf *next;
};
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct done_buf *q_head, **q_tail = &q_head;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

static void convert_buffer(uint8_t *buffer, size_t valid)
{
	CUpti_Activity *rec = NULL;

	if (atomic_load(&cu_state) == CUPTI_ON)
		while (cu.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			handle_record(rec);
	buffer_release(buffer);
}

/*
 * Convert every queued buffer on this thread.  @wait: 1 block for the
 * locks, 0 give up when they are taken, 2 retry for up to half a second
 * (the exit and signal paths: the signal may have interrupted the holder).
 */
static void drain(int wait)
{
	struct done_buf *list, *next;

	if (wait == 2) {
		struct timespec ms = { 0, 1000000L };
		for (int i = 0; i < 500; i++) {
			if (!pthread_mutex_trylock(&drain_lock)) {
				if (!pthread_mutex_trylock(&q_lock))
					goto locked;
				pthread_mutex_unlock(&drain_lock);
			}
			nanosleep(&ms, NULL);
		}
		return;
	}
	if (wait) {
		pthread_mutex_lock(&drain_lock);
		pthread_mutex_lock(&q_lock);
	} else {
		if (pthread_mutex_trylock(&drain_lock))
			return;
		if (pthread_mutex_trylock(&q_lock)) {
			pthread_mutex_unlock(&drain_lock);
			return;
		}
	}
locked:
	list = q_head;
	q_head = NULL;
	q_tail = &q_head;
	pthread_mutex_unlock(&q_lock);
	for (; list; list = next) {
		next = list->next;
		convert_buffer(list->buf, list->valid);
		free(list);
	}
	pthread_mutex_unlock(&drain_lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	int g = cl_guard_enter();
	size_t dropped = 0;
	struct done_buf *d;

	(void)size;
	if (atomic_load(&cu_state) != CUPTI_ON || !buffer) {
		buffer_release(buffer);
		goto out;
	}
	if (cu.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		cl_add_drops(TRACE_DROP_CUPTI, dropped);
	if (!valid) {
		buffer_release(buffer);
		goto out;
	}
	d = flusher_started ? malloc(sizeof(*d)) : NULL;
	if (!d) {
		convert_buffer(buffer, valid);
		goto out;
	}
	d->buf = buffer;
	d->valid = valid;
	d->next = NULL;
	pthread_mutex_lock(&q_lock);
	*q_tail = d;
	q_tail = &d->next;
	pthread_cond_signal(&q_cond);
	pthread_mutex_unlock(&q_lock);
out:
	if (g)
		cl_guard_leave();
}

static void flush_all(uint32_t flags)
{
	if (atomic_load(&cu_state) == CUPTI_ON)
		cu.ActivityFlushAll(flags);
}

/* ---- capture range ---- */

static void capture_edge(int begin)
{
	pthread_mutex_lock(&capture_lock);
	if (begin && !atomic_load(&capture_open)) {
		atomic_store(&capture_open, 1);
		pthread_mutex_unlock(&capture_lock);
		cl_capture_begin();
		return;
	}
	if (!begin && atomic_load(&capture_open)) {
		atomic_store(&capture_open, 0);
		pthread_mutex_unlock(&capture_lock);
		cl_capture_end();
		/* hand over what the window produced (judged by its own time) */
		flush_all(0);
		drain(1);
		return;
	}
	pthread_mutex_unlock(&capture_lock);
}

/* ---- callbacks ---- */

/*
 * Depth of recorded runtime calls on this thread: a driver call made from
 * inside one (cudaMalloc -> cuMemAlloc) is the runtime call's own work and
 * is not recorded a second time.
 */
static __thread int rt_depth __attribute__((tls_model("initial-exec")));

/*
 * A synchronisation record for the API call @a just recorded: type and
 * per-thread flag from api_sync[], stream from the call's first parameter
 * (every stream sync and wait-event API takes the stream first).  CUPTI has
 * no id for an event handle: event is 0xffffffff (unknown), as the stream
 * of an event or context sync.  @cb is NULL for an API activity record
 * (GPUSCOPE_CUPTI_API_MODE=activity), which has no parameters or context:
 * device, context and stream then stay unknown.
 */
static void emit_sync(const struct trace_api *a, unsigned what, const CUpti_CallbackData *cb)
{
	struct trace_sync s;
	unsigned type = what & 15;
	uint32_t id;

	cupti_sync_from_api(a, type, &s);
	if (cb) {
		s.context = cb->contextUid;
		s.device = context_device(cb->contextUid);
		if (s.device == CUPTI_DEVICE_UNKNOWN && cb->context && cu.GetDeviceId &&
		    cu.GetDeviceId(cb->context, &id) == CUPTI_SUCCESS) {
			s.device = id;
			note_context(cb->contextUid, id);
		}
		if ((type == SYNC_STREAM || type == SYNC_STREAM_WAIT_EVENT) && cb->context &&
		    cb->functionParams && cu.GetStreamIdEx) {
			CUstream stream = *(CUstream const *)cb->functionParams;
			if (cu.GetStreamIdEx(cb->context, stream, (uint8_t)(what >> 4), &id) == CUPTI_SUCCESS)
				s.stream = id;
		}
	}
	emit(TRACE_EV_SYNC, &s, sizeof(s), s.start);
}

static void api_callback(unsigned dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (dom && rt_depth > 0)
		return;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (!dom)
			rt_depth++;
		*cb->correlationData = cl_now();
		return;
	}
	if (!dom && rt_depth > 0)
		rt_depth--;
	{
		struct trace_api a;
		memset(&a, 0, sizeof(a));
		a.start = *cb->correlationData;
		a.end = cl_now();
		a.pid = cl_pid();
		a.tid = cl_tid();
		a.correlation = cb->correlationId;
		a.cbid = cbid;
		a.name_id = api_name_id(dom, cbid);
		a.domain = dom ? TRACE_API_DRIVER : TRACE_API_RUNTIME;
		if (cb->functionReturnValue)
			a.status = *(const int *)cb->functionReturnValue;
		emit(TRACE_EV_API, &a, sizeof(a), a.start);
		if (cbid < API_CBIDS && api_sync[dom][cbid])
			emit_sync(&a, api_sync[dom][cbid], cb);
	}
}

static void CUPTIAPI cupti_callback(void *userdata, CUpti_CallbackDomain domain,
				    CUpti_CallbackId cbid, const void *data)
{
	int g;

	(void)userdata;
	if (atomic_load(&cu_state) != CUPTI_ON)
		return;
	g = cl_guard_enter();
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const CUpti_CallbackData *cb = data;
		unsigned dom = domain == CUPTI_CB_DOMAIN_DRIVER_API;
		int start = dom ? cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart
				: cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
		int stop = dom ? cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop
			       : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;

		if (start && cb->callbackSite == CUPTI_API_EXIT &&
		    cl_config.capture_mode == CL_CAPTURE_CUDA_PROFILER)
			capture_edge(1);
		if (stop && cb->callbackSite == CUPTI_API_ENTER &&
		    cl_config.capture_mode == CL_CAPTURE_CUDA_PROFILER)
			capture_edge(0);
		if (!dom && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
		    cb->callbackSite == CUPTI_API_ENTER)
			flush_all(0);
		/* kernel metrics inside the API record: its time includes the profiling */
		if (cb->callbackSite == CUPTI_API_EXIT)
			cl_kmetrics_callback(domain, cbid, cb);
		if (cbid < API_CBIDS && api_keep_cb[dom][cbid])
			api_callback(dom, cbid, cb);
		if (cb->callbackSite == CUPTI_API_ENTER)
			cl_kmetrics_callback(domain, cbid, cb);
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
		const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
		uint32_t dev = 0;
		if (cu.GetDeviceId && rd && cu.GetDeviceId(rd->context, &dev) == CUPTI_SUCCESS)
			cl_pmsample_context(dev);
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
		   cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		cl_pmsample_final();
		flush_all(0);
	}
	if (g)
		cl_guard_leave();
}

/* ---- flusher thread and exit ---- */

/*
 * The worker: converts queued buffers as they come, and every
 * GPUSCOPE_CUPTI_FLUSH_MS asks CUPTI for the records of partly filled
 * buffers (cuptiActivityFlushAll), so a crash loses at most that much.
 */
static void *flusher_main(void *arg)
{
	uint64_t period = (uint64_t)cu_flush_ms * 1000000u, last = cl_now();

	(void)arg;
	cl_guard_enter();   /* never leave: nothing this thread does is the app's */
	for (int i = 0; cu_pool && i < 2; i++)
		buffer_release(buffer_new(0));
	while (!atomic_load(&flusher_stop)) {
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&q_lock);
		if (!q_head && !atomic_load(&flusher_stop))
			pthread_cond_timedwait(&q_cond, &q_lock, &ts);
		pthread_mutex_unlock(&q_lock);
		if (atomic_load(&flusher_stop))
			break;
		drain(1);
		now = cl_now();
		if (period && now - last >= period) {
			last = now;
			flush_all(0);
			drain(1);
		}
	}
	return NULL;
}

static void cupti_atexit(void)
{
	cl_pmsample_final();
	cl_kmetrics_final();
	cl_cuda_flush(1);
}

void cl_cuda_flush(int final)
{
	int g;

	if (atomic_load(&cu_state) != CUPTI_ON)
		return;
	g = cl_guard_enter();
	if (final) {
		atomic_store(&flusher_stop, 1);
		flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		drain(2);
	} else {
		flush_all(0);
		drain(0);
	}
	if (g)
		cl_guard_leave();
}

void cl_cuda_atfork_child(void)
{
	/*
	 * CUPTI's worker thread did not survive the fork: any CUPTI call in
	 * the child may hang (a flush waits for it forever).  Forget CUPTI.
	 */
	if (atomic_load(&cu_state) == CUPTI_ON)
		atomic_store(&cu_state, CUPTI_DEAD);
	flusher_started = 0;
}

/* ---- start ---- */

/* Enable the API records (or callbacks) of one domain; how many kept. */
static unsigned enable_apis(unsigned dom, uint32_t size)
{
	CUpti_CallbackDomain domain = dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	unsigned kept = 0;

	for (uint32_t cbid = 1; cbid < size && cbid < API_CBIDS; cbid++) {
		const char *name = NULL;
		int per_thread, type;
		if (cu.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		if (cu_api_subtract) {
			if (!cupti_api_keep(name) &&
			    (dom ? cu.ActivityEnableDriverApi(cbid, 0)
				 : cu.ActivityEnableRuntimeApi(cbid, 0)) == CUPTI_SUCCESS)
				kept++;
			continue;
		}
		if (!cupti_api_keep(name))
			continue;
		type = cupti_sync_type(name, &per_thread);
		/* hybrid: the synchronising calls from callbacks, for their streams */
		if (cu_callback_mode || (cu_api_hybrid && type)) {
			if (cu.EnableCallback(1, cu_sub, domain, cbid) == CUPTI_SUCCESS) {
				api_keep_cb[dom][cbid] = 1;
				if (cu_sync_cb && type)
					api_sync[dom][cbid] = (unsigned char)(type | per_thread << 4);
				kept++;
			}
		} else if ((dom ? cu.ActivityEnableDriverApi(cbid, 1)
				: cu.ActivityEnableRuntimeApi(cbid, 1)) == CUPTI_SUCCESS) {
			/*
			 * sync records from runtime calls only: their activity
			 * records cannot tell a driver call made inside one
			 * (cuStreamSynchronize in cudaStreamSynchronize) from
			 * the program's own
			 */
			if (cu_sync_cb && type && !dom)
				api_sync[dom][cbid] = (unsigned char)(type | per_thread << 4);
			kept++;
		}
	}
	return kept;
}

/* cudaProfilerStart/Stop, device reset and context teardown */
static void enable_control_callbacks(void)
{
	static const struct { CUpti_CallbackDomain domain; CUpti_CallbackId cbid; } cbs[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 },
		{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart },
		{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 },
		{ CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING },
		{ CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED },
	};

	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++)
		cu.EnableCallback(1, cu_sub, cbs[i].domain, cbs[i].cbid);
}

/* GPUSCOPE_CUPTI_KINDS: unset = all; else a comma list of kernel, memcpy, memset, sync, memory */
static unsigned parse_kinds(const char *s)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "kernel", KIND_KERNEL }, { "memcpy", KIND_MEMCPY }, { "memset", KIND_MEMSET },
		{ "sync", KIND_SYNC }, { "memory", KIND_MEMORY },
	};
	unsigned bits = KIND_KERNEL;

	if (!s || !*s)
		return ~0u;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *p = strstr(s, names[i].name);
		if (p && (p == s || p[-1] == ','))
			bits |= names[i].bit;
	}
	return bits;
}

static int cupti_start(char *why, size_t n)
{
	CUptiResult r;
	const char *mode = cl_config.cupti.api_mode[0] ? cl_config.cupti.api_mode : NULL;
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
	};
	static const unsigned kind_bits[] = {
		~0u, ~0u, KIND_KERNEL, KIND_MEMCPY, KIND_MEMCPY, KIND_MEMSET, KIND_SYNC, KIND_MEMORY,
	};

	if (cupti_load(&cu, why, n) < 0)
		return -1;
	/* callbacks are the default: measured cheaper for PyTorch (bench/RESULTS-cupti.md) */
	cu_callback_mode = !mode || !*mode || !strcmp(mode, "callback");
	cu_api_off = mode && !strcmp(mode, "off");
	cu_api_subtract = mode && !strcmp(mode, "subtract");
	cu_api_hybrid = mode && !strcmp(mode, "hybrid");
	cu_kinds = parse_kinds(cl_config.cupti.kinds_set ? cl_config.cupti.kinds : NULL);
	cu_no_subscribe = cl_config.cupti.no_subscribe;
	if (cu_no_subscribe && cu_callback_mode)
		cu_api_off = 1;
	if (cu_no_subscribe)
		cu_api_hybrid = 0;  /* no callbacks: activity records for the syncs too */
	/*
	 * Sync records from the API calls (callbacks, or per-function API
	 * activity records); GPUSCOPE_CUPTI_KINDS naming sync, whole API kinds
	 * (--cuda-trace-all-apis, subtract) or no API records: CUPTI's
	 * SYNCHRONIZATION kind instead.
	 */
	cu_sync_cb = !cu_api_off && !cu_api_subtract && !cl_config.cuda_all_apis &&
		     !(cl_config.cupti.kinds_set && (cu_kinds & KIND_SYNC));
	if (cu_sync_cb)
		cu_kinds &= ~(unsigned)KIND_SYNC;
	cu_cupti_clock = cl_config.cupti.cupti_clock;
	cu_no_driver = cl_config.cupti.driver == 0;
	cu_pool = cl_config.cupti.pool;
	cu_buffer_bytes = cl_config.cupti.buffer_bytes;
	cu_flush_ms = cl_config.cupti.flush_ms;

	/* the clock first: every record must be on the report clock */
	if (cu_cupti_clock) {
		uint64_t t = 0;
		r = cu.GetTimestamp(&t);
		cu_clock_offset = (int64_t)(cl_now() - t);
	} else {
		r = cu.ActivityRegisterTimestampCallback(cupti_timestamp);
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "CUPTI cannot start (%s; is the NVIDIA driver loaded?)",
			 cupti_result_name(&cu, r));
		return -1;
	}
	if (cu_no_subscribe) {
		r = CUPTI_SUCCESS;
	} else if (cu.Subscribe_v2) {
		CUpti_SubscriberParams p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		p.subscriberName = "gpuscope";
		p.oldSubscriberName = holder;
		p.oldSubscriberSize = sizeof(holder);
		r = cu.Subscribe_v2(&cu_sub, cupti_callback, NULL, &p);
	} else {
		r = cu.Subscribe(&cu_sub, cupti_callback, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof(holder) - 1] = '\0';
		snprintf(why, n, "another CUPTI client is attached (%s)",
			 holder[0] ? holder : "Nsight, a debugger or a profiler");
		return -1;
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiSubscribe failed (%s; is the NVIDIA driver loaded?)",
			 cupti_result_name(&cu, r));
		return -1;
	}
	cu.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (cu_pool && cu.ActivitySetAttribute) {
		uint8_t zeroed = 1;
		size_t sz = sizeof(zeroed);
		cu.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &zeroed);
	}
	r = cu.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, n, "cuptiActivityRegisterCallbacks failed (%s)", cupti_result_name(&cu, r));
		if (!cu_no_subscribe)
			cu.Unsubscribe(cu_sub);
		return -1;
	}
	atomic_store(&cu_state, CUPTI_ON);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(cu_kinds & kind_bits[i]))
			continue;
		r = cu.ActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS && kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			snprintf(why, n, "cannot trace kernels (%s)", cupti_result_name(&cu, r));
			atomic_store(&cu_state, CUPTI_OFF);
			if (!cu_no_subscribe)
				cu.Unsubscribe(cu_sub);
			return -1;
		}
	}
	if (cu_api_off) {
		/* measurement knob: no API records at all */
	} else if (cl_config.cuda_all_apis) {
		cu.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
		cu.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
	} else {
		if (cu_api_subtract) {
			cu.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cu.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
		}
		enable_apis(0, CUPTI_RUNTIME_TRACE_CBID_SIZE);
		if (!cu_no_driver)
			enable_apis(1, CUPTI_DRIVER_TRACE_CBID_SIZE);
	}
	if (!cu_no_subscribe)
		enable_control_callbacks();
	{
		char kwhy[512] = "";
		if (cl_kmetrics_start(&cu, cu_no_subscribe ? NULL : cu_sub, kwhy, sizeof(kwhy)) < 0)
			cl_warning("kernel metrics off: %s", kwhy);
		kwhy[0] = '\0';
		if (cl_pmsample_start(&cu, kwhy, sizeof(kwhy)) < 0)
			cl_warning("PM sampling off: %s", kwhy);
	}
	if (!pthread_create(&flusher, NULL, flusher_main, NULL)) {
		pthread_setname_np(flusher, "gpuscope-cupti");
		pthread_detach(flusher);
		flusher_started = 1;
	}
	atexit(cupti_atexit);
	return 0;
}

/* ---- on demand (docs/always-on.md) ---- */

static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;
static int od_pending;     /* CUDA is up, CUPTI not started: the first capture starts it */
static int od_paused;      /* CUPTI started, its activity kinds and API callbacks off */

/* Activity kinds and API callbacks on or off, as cupti_start() chose them (inject_lock held). */
static void od_switch(int on)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
	};
	static const unsigned kind_bits[] = {
		KIND_KERNEL, KIND_MEMCPY, KIND_MEMCPY, KIND_MEMSET, KIND_SYNC, KIND_MEMORY,
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (cu_kinds & kind_bits[i])
			on ? cu.ActivityEnable(kinds[i]) : cu.ActivityDisable(kinds[i]);
	if (cl_config.cuda_all_apis || cu_api_subtract) {
		if (on) {
			cu.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cu.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
		} else {
			cu.ActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cu.ActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		}
	}
	if (cu_no_subscribe)
		return;
	for (unsigned dom = 0; dom < 2; dom++)
		for (uint32_t cbid = 1; cbid < API_CBIDS; cbid++)
			if (api_keep_cb[dom][cbid])
				cu.EnableCallback(on ? 1 : 0, cu_sub,
						  dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
						  cbid);
}

void cl_cuda_capture(int on)
{
	char why[512] = "";
	int g = cl_guard_enter();

	pthread_mutex_lock(&inject_lock);
	if (on && od_pending) {
		od_pending = 0;
		if (cupti_start(why, sizeof(why)) < 0)
			cl_warning("CUDA tracing off: %s", why);
	} else if (on && od_paused && atomic_load(&cu_state) == CUPTI_ON) {
		od_switch(1);
		od_paused = 0;
	} else if (!on && !od_paused && atomic_load(&cu_state) == CUPTI_ON) {
		od_switch(0);
		od_paused = 1;
		/* hand over what the capture produced (judged by its own time) */
		flush_all(0);
		drain(1);
	}
	pthread_mutex_unlock(&inject_lock);
	if (g)
		cl_guard_leave();
}

CL_EXPORT int InitializeInjection(void)
{
	static int done;
	char why[512];
	int g;

	pthread_mutex_lock(&inject_lock);
	if (done) {
		pthread_mutex_unlock(&inject_lock);
		return 1;
	}
	done = 1;
	if (cl_init() < 0 || !cl_config.enabled || !(cl_config.trace & CL_TRACE_CUDA)) {
		pthread_mutex_unlock(&inject_lock);
		return 1;
	}
	/*
	 * --on-demand: no CUPTI at all until a capture (a cudaProfilerApi
	 * capture range needs the subscription for its callbacks: CUPTI starts
	 * with its activity kinds off).
	 */
	if (cl_config.on_demand && !cl_capturing() &&
	    cl_config.capture_mode != CL_CAPTURE_CUDA_PROFILER) {
		od_pending = 1;
		pthread_mutex_unlock(&inject_lock);
		return 1;
	}
	g = cl_guard_enter();
	why[0] = '\0';
	if (cupti_start(why, sizeof(why)) < 0)
		cl_warning("CUDA tracing off: %s", why);
	else if (cl_config.on_demand && !cl_capturing()) {
		od_switch(0);
		od_paused = 1;
	}
	if (g)
		cl_guard_leave();
	pthread_mutex_unlock(&inject_lock);
	return 1;
}

#else /* !GS_HAVE_CUPTI */

CL_EXPORT int InitializeInjection(void)
{
	if (cl_init() == 0 && cl_config.enabled && (cl_config.trace & CL_TRACE_CUDA))
		cl_warning("CUDA tracing off: gpuscope was built without the CUPTI headers");
	return 1;
}

void cl_cuda_flush(int final)
{
	(void)final;
}

void cl_cuda_atfork_child(void)
{
}

void cl_cuda_capture(int on)
{
	(void)on;
}

#endif
