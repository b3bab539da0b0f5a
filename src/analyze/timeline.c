/*
 * timeline.c - the GPU units, their busy sets and idle gaps, and what the
 * CPU was doing during each gap (the attribution every rule reads).
 *
 * One pass over kernels, copies and sets in start order (the three tables
 * are each sorted; a three-way merge keeps the pass linear).  For every
 * gap of a unit (a process's device) the next GPU operation names, through
 * its correlation id, the API call that launched it and so the thread that
 * fed the GPU.  What that thread did between the start of the gap and the
 * launch call is split by cause (enum az_cause):
 *
 *  - the launch call ended before the gap began: the work was queued and
 *    the GPU waited on something else (an event, another stream): "GPU side",
 *    not the CPU's fault (HTA's idle-time breakdown calls this kernel_wait
 *    or other);
 *  - a blocking call (synchronise, synchronous copy, cudaFree) that started
 *    while the GPU was busy returned at the start of the gap: the whole gap
 *    follows the synchronisation (the CPU could not run ahead);
 *  - otherwise the thread's CUDA API calls, OS-runtime calls (I/O, waits,
 *    locks, sleeps) and, for the time outside any call, NVTX ranges named
 *    like data work; what is left is CPU time, counted as launch overhead
 *    when the gap is shorter than launch-bound.max_gap_us;
 *  - from the launch call to the GPU start: launch latency, or staging
 *    time when the operation is a copy from/to pageable memory.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- API name classes ---- */

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

int az_api_class(const char *n)
{
	if (has_prefix(n, "cuInit") || has_prefix(n, "cuDevicePrimaryCtx") || has_prefix(n, "cuCtxCreate") ||
	    has_prefix(n, "cuModuleLoad") || has_prefix(n, "cuLibraryLoad") ||
	    has_prefix(n, "cuModuleGetFunction") || has_prefix(n, "cuLibraryGetKernel") ||
	    has_prefix(n, "cuKernelGetFunction"))
		return API_INIT;
	if (has_prefix(n, "cudaLaunch") || has_prefix(n, "cuLaunch") ||
	    has_prefix(n, "cudaGraphLaunch") || has_prefix(n, "cuGraphLaunch"))
		return API_LAUNCH;
	if (strstr(n, "Synchronize") && !strstr(n, "Set"))
		return API_SYNC;
	if (has_prefix(n, "cudaMemcpy") || has_prefix(n, "cudaMemset") ||
	    has_prefix(n, "cuMemcpy") || has_prefix(n, "cuMemset"))
		return strstr(n, "Async") || strstr(n, "async") ? API_COPY_ASYNC : API_COPY_SYNC;
	if (has_prefix(n, "cudaFree") || has_prefix(n, "cuMemFree") ||
	    has_prefix(n, "cuMemRelease") || has_prefix(n, "cuMemUnmap"))
		return strstr(n, "Async") ? API_OTHER : API_FREE;
	if (has_prefix(n, "cudaMalloc") || has_prefix(n, "cuMemAlloc") ||
	    has_prefix(n, "cudaHostAlloc") || has_prefix(n, "cuMemHostAlloc") ||
	    has_prefix(n, "cuMemCreate") || has_prefix(n, "cuMemMap"))
		return strstr(n, "Async") ? API_OTHER : API_ALLOC;
	return API_OTHER;
}

const char *az_cause_name(int cause)
{
	static const char *names[CAUSE__N] = {
		"I/O", "waiting on other processes", "waiting on a lock", "sleeping",
		"preparing input data on the CPU", "CPU work outside traced calls", "after a synchronisation",
		"copying from/to pageable memory", "allocating/freeing device memory",
		"inside other CUDA API calls", "launching", "CUDA start-up (context, module loading)",
		"unknown (no CPU data)",
	};
	return cause >= 0 && cause < CAUSE__N ? names[cause] : "?";
}

static int osrt_cause(unsigned f)
{
	switch (f) {
	case OSRT_READ: case OSRT_WRITE: case OSRT_PREAD: case OSRT_PWRITE: case OSRT_READV:
	case OSRT_WRITEV: case OSRT_RECV: case OSRT_RECVFROM: case OSRT_RECVMSG: case OSRT_SEND:
	case OSRT_SENDTO: case OSRT_SENDMSG: case OSRT_OPEN: case OSRT_OPENAT: case OSRT_FSYNC:
	case OSRT_FDATASYNC: case OSRT_CONNECT: case OSRT_ACCEPT: case OSRT_FOPEN: case OSRT_FREAD:
	case OSRT_FWRITE: case OSRT_MMAP:
		return CAUSE_IO;
	case OSRT_POLL: case OSRT_PPOLL: case OSRT_SELECT: case OSRT_PSELECT: case OSRT_EPOLL_WAIT:
	case OSRT_EPOLL_PWAIT: case OSRT_WAITPID: case OSRT_WAIT:
		return CAUSE_WAIT;
	case OSRT_MUTEX_LOCK: case OSRT_COND_WAIT: case OSRT_COND_TIMEDWAIT: case OSRT_JOIN:
	case OSRT_SEM_WAIT: case OSRT_SEM_TIMEDWAIT: case OSRT_FUTEX: case OSRT_RWLOCK_RDLOCK:
	case OSRT_RWLOCK_WRLOCK:
		return CAUSE_LOCK;
	case OSRT_NANOSLEEP: case OSRT_USLEEP: case OSRT_SLEEP: case OSRT_CLOCK_NANOSLEEP:
		return CAUSE_SLEEP;
	default:
		return -1; /* ioctl and the like: driver work, counted as CPU */
	}
}

/*
 * Data-work names: a word of the name (split at non-letters and at
 * lower-to-upper case changes) is one of the words below.  Names with
 * "parallel" are model wrappers (DataParallel, DistributedDataParallel);
 * qualified names ("aten::batch_norm") are framework operators, not ranges
 * a user put around data work.
 */
int az_is_data_name(const char *name)
{
	static const char *const words[] = {
		"data", "dataloader", "dataset", "load", "loader", "loading", "batch", "batches",
		"fetch", "read", "decode", "augment", "augmentation", "transform", "transforms",
		"collate", "preprocess", "preprocessing", "prefetch", "input", "inputs", "sampler",
		"io",
	};
	char w[64];
	size_t n = 0;
	int hit = 0;

	if (strcasestr(name, "parallel") || strstr(name, "::"))
		return 0;
	for (const char *p = name;; p++) {
		int alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
		int split = !alpha || (n && *p >= 'A' && *p <= 'Z' && p[-1] >= 'a' && p[-1] <= 'z');
		if (split && n) {
			w[n] = 0;
			for (size_t i = 0; i < ARRAY_SIZE(words) && !hit; i++)
				hit = !strcmp(w, words[i]);
			n = 0;
		}
		if (!*p || hit)
			break;
		if (alpha && n + 1 < sizeof(w))
			w[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	}
	return hit;
}

/* ---- kernel classes ---- */

static int contains_any(const char *low, const char *const *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(low, w[i]))
			return 1;
	return 0;
}

static unsigned classify_kernel(const char *name)
{
	static const char *const gemm[] = {
		"gemm", "matmul", "conv2d", "conv3d", "conv1d", "convolution", "convolve", "conv_",
		"wgrad", "dgrad", "fprop", "xmma", "cublas", "cutlass",
	};
	static const char *const tc[] = {
		"tf32", "bf16", "f16", "half", "hmma", "wgmma", "gmma", "imma", "tensorop", "16816",
		"1688", "884", "i8816", "tensor", "fp8", "e4m3", "e5m2",
	};
	char low[512];
	unsigned k = 0;
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	low[i] = 0;
	if (!strncmp(low, "nccl", 4) || strstr(low, "ncclkernel") || strstr(low, "nccldevkernel") ||
	    !strncmp(low, "void nccl", 9) || strstr(low, "rccl"))
		return KC_COMM;
	if (contains_any(low, gemm, ARRAY_SIZE(gemm)) && !strstr(low, "gemv")) {
		k |= KC_GEMM;
		if (contains_any(low, tc, ARRAY_SIZE(tc)))
			k |= KC_TC;
	}
	return k;
}

unsigned az_kernel_class(struct az_ctx *c, uint32_t id)
{
	if (id >= c->m->str.nr)
		return 0;
	if (!c->kclass)
		c->kclass = xcalloc(c->m->str.nr + 1, 1);
	if (!(c->kclass[id] & 0x80))
		c->kclass[id] = (uint8_t)(0x80 | classify_kernel(model_str(c->m, id)));
	return c->kclass[id] & 0x7f;
}

int az_is_comm(struct az_ctx *c, const struct trace_kernel *k)
{
	return (k->flags & TRACE_GPU_COMM) || (az_kernel_class(c, k->name_id) & KC_COMM);
}

struct az_unit *az_unit_find(struct az_ctx *c, uint32_t pid, uint32_t device)
{
	for (size_t i = 0; i < c->nunits; i++)
		if (c->units[i].pid == pid && c->units[i].device == device)
			return &c->units[i];
	return NULL;
}

uint32_t az_unit_sms(const struct az_ctx *c, uint32_t pid, uint32_t device)
{
	const struct model *m = c->m;

	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == device && m->devices.v[i].pid == pid && m->devices.v[i].sm_count)
			return m->devices.v[i].sm_count;
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == device && m->devices.v[i].sm_count)
			return m->devices.v[i].sm_count;
	return 0;
}

/* ---- tallies ---- */

void az_tally_add(struct az_tally *t, uint64_t key, uint64_t ns)
{
	size_t i, min = 0;

	for (i = 0; i < t->n; i++) {
		if (t->key[i] == key) {
			t->ns[i] += ns;
			return;
		}
		if (t->ns[i] < t->ns[min])
			min = i;
	}
	if (t->n < AZ_TOP) {
		t->key[t->n] = key;
		t->ns[t->n++] = ns;
	} else if (ns > t->ns[min]) { /* space-saving: replace the smallest */
		t->key[min] = key;
		t->ns[min] = ns;
	}
}

int az_tally_top(const struct az_tally *t)
{
	int best = -1;

	for (size_t i = 0; i < t->n; i++)
		if (best < 0 || t->ns[i] > t->ns[best])
			best = (int)i;
	return best;
}

/* ---- per-thread indexes ---- */

/* Row indices of one table bucketed by thread, each bucket in start order. */
struct thread_index {
	size_t *off;               /* nthreads + 1 */
	uint32_t *row;
	uint64_t *pmax;            /* running max of end within the bucket */
};

static size_t thread_of(const struct model *m, uint32_t pid, uint32_t tid)
{
	const struct model_thread *t = model_thread(m, pid, tid);
	return t ? (size_t)(t - m->threads.v) : SIZE_MAX;
}

#define BUILD_INDEX(ix, m, tab, len)                                                \
	do {                                                                        \
		size_t nt_ = (m)->threads.n, *cur_;                                 \
		size_t *tix_ = xmalloc(((len) + 1) * sizeof(size_t));               \
		(ix)->off = xcalloc(nt_ + 2, sizeof(size_t));                       \
		for (size_t i_ = 0; i_ < (len); i_++) {                             \
			size_t last_ = i_ ? tix_[i_ - 1] : SIZE_MAX;                \
			if (i_ && (tab)[i_].pid == (tab)[i_ - 1].pid &&             \
			    (tab)[i_].tid == (tab)[i_ - 1].tid)                     \
				tix_[i_] = last_;                                   \
			else                                                        \
				tix_[i_] = thread_of(m, (tab)[i_].pid, (tab)[i_].tid); \
			if (tix_[i_] != SIZE_MAX)                                   \
				(ix)->off[tix_[i_] + 1]++;                          \
		}                                                                   \
		for (size_t t_ = 0; t_ < nt_; t_++)                                 \
			(ix)->off[t_ + 1] += (ix)->off[t_];                         \
		cur_ = xmalloc((nt_ + 1) * sizeof(size_t));                         \
		memcpy(cur_, (ix)->off, (nt_ + 1) * sizeof(size_t));                \
		(ix)->row = xmalloc(((ix)->off[nt_] + 1) * sizeof(uint32_t));       \
		(ix)->pmax = xmalloc(((ix)->off[nt_] + 1) * sizeof(uint64_t));      \
		for (size_t i_ = 0; i_ < (len); i_++) {                             \
			size_t t_ = tix_[i_], k_;                                   \
			if (t_ == SIZE_MAX)                                         \
				continue;                                           \
			k_ = cur_[t_]++;                                            \
			(ix)->row[k_] = (uint32_t)i_;                               \
			(ix)->pmax[k_] = (tab)[i_].end > (tab)[i_].start ? (tab)[i_].end \
									  : (tab)[i_].start; \
			if (k_ > (ix)->off[t_] && (ix)->pmax[k_ - 1] > (ix)->pmax[k_]) \
				(ix)->pmax[k_] = (ix)->pmax[k_ - 1];                \
		}                                                                   \
		free(cur_);                                                         \
		free(tix_);                                                         \
	} while (0)

static void index_release(struct thread_index *ix)
{
	free(ix->off);
	free(ix->row);
	free(ix->pmax);
}

/* First position in thread @t's bucket whose running max end is > @t0. */
static size_t index_first(const struct thread_index *ix, size_t t, uint64_t t0)
{
	size_t lo = ix->off[t], hi = ix->off[t + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->pmax[mid] <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- correlation hash: (pid, correlation) -> API row ---- */

struct corr_map {
	uint32_t *slot;            /* row + 1, 0 = empty */
	size_t mask;
};

static inline size_t corr_hash(uint32_t pid, uint32_t corr)
{
	uint64_t h = ((uint64_t)pid << 32 | corr) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 20);
}

static void corr_build(struct corr_map *h, const struct model *m)
{
	size_t n = 16;

	while (n < 2 * m->api.n + 16)
		n <<= 1;
	h->slot = xcalloc(n, sizeof(uint32_t));
	h->mask = n - 1;
	for (size_t i = 0; i < m->api.n && i < UINT32_MAX - 1; i++) {
		const struct trace_api *a = &m->api.v[i];
		size_t s;
		if (!a->correlation)
			continue;
		for (s = corr_hash(a->pid, a->correlation) & h->mask; h->slot[s]; s = (s + 1) & h->mask) {
			const struct trace_api *b = &m->api.v[h->slot[s] - 1];
			if (b->pid == a->pid && b->correlation == a->correlation)
				break; /* keep the first (a graph launch owns its kernels) */
		}
		if (!h->slot[s])
			h->slot[s] = (uint32_t)i + 1;
	}
}

static const struct trace_api *corr_find(const struct corr_map *h, const struct model *m,
					 uint32_t pid, uint32_t corr)
{
	if (!corr || !h->slot)
		return NULL;
	for (size_t s = corr_hash(pid, corr) & h->mask; h->slot[s]; s = (s + 1) & h->mask) {
		const struct trace_api *b = &m->api.v[h->slot[s] - 1];
		if (b->pid == pid && b->correlation == corr)
			return b;
	}
	return NULL;
}

/* ---- the pass ---- */

struct gpu_op {
	uint64_t start, end;
	uint32_t pid, device, corr;
	int kind;                  /* 0 kernel, 1 copy, 2 set */
	int comm;
	int pageable;
	int htod;                  /* a host-to-device copy */
};

struct tl {
	struct az_ctx *c;
	const struct model *m;
	struct thread_index api, osrt, nvtx;
	struct corr_map corr;
	uint32_t *main_thread;     /* per unit: thread index + 1 of the main thread, 0 = none */
	uint8_t *pid_has_cpu;      /* per unit */
	uint64_t *cur_end;         /* per unit: running end of its GPU work */
	uint64_t *credit;          /* per unit: blocked sync time not yet spent */
	uint32_t *credit_name;     /* per unit: name of that sync call */
	uint64_t min_gap, launch_max_gap, sync_tol;
};

static size_t unit_get(struct az_ctx *c, uint32_t pid, uint32_t device, size_t *last)
{
	if (*last < c->nunits && c->units[*last].pid == pid && c->units[*last].device == device)
		return *last;
	for (size_t i = 0; i < c->nunits; i++)
		if (c->units[i].pid == pid && c->units[i].device == device)
			return *last = i;
	c->units = xrealloc(c->units, (c->nunits + 1) * sizeof(*c->units));
	memset(&c->units[c->nunits], 0, sizeof(*c->units));
	c->units[c->nunits].pid = pid;
	c->units[c->nunits].device = device;
	return *last = c->nunits++;
}

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t ov(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = umax(a0, b0), e = umin(a1, b1);
	return e > s ? e - s : 0;
}

static int is_pageable_copy(const struct model *m, const struct trace_api *a, const struct gpu_op *op)
{
	(void)m;
	(void)a;
	return op->kind == 1 && op->pageable;
}

struct parts {
	uint64_t ns[CAUSE__N];
	uint64_t name[CAUSE__N];   /* a name key for the tally of each cause */
};

static void add_part(struct parts *p, int cause, uint64_t ns, uint64_t name)
{
	if (!ns)
		return;
	p->ns[cause] += ns;
	if (!p->name[cause])
		p->name[cause] = name;
}

/* What thread @t did in [a, e) outside its API calls. */
static void thread_activity(struct tl *l, size_t t, uint64_t a, uint64_t e, uint64_t gap_len,
			    struct parts *p)
{
	const struct model *m = l->m;
	uint64_t api_ns = 0, os_ns = 0, data_ns = 0, rest;
	size_t i;

	if (e <= a)
		return;
	/*
	 * CUDA API calls.  Driver calls made inside a runtime call are recorded
	 * too: count only time no earlier call covered, except that one-time
	 * initialisation inside a call (context creation, module loading) is
	 * taken out of its parent and counted as such.
	 */
	{
		uint64_t covered = a;
		int top = CAUSE_API;
		for (i = index_first(&l->api, t, a); i < l->api.off[t + 1]; i++) {
			const struct trace_api *r = &m->api.v[l->api.row[i]];
			uint64_t o, s0, e0;
			int cls = l->c->api_class[r->name_id], cause;
			if (r->start >= e)
				break;
			switch (cls) {
			case API_SYNC: case API_COPY_SYNC: cause = CAUSE_SYNC; break;
			case API_ALLOC: case API_FREE: cause = CAUSE_ALLOC; break;
			case API_LAUNCH: case API_COPY_ASYNC: cause = CAUSE_LAUNCH; break;
			case API_INIT: cause = CAUSE_INIT; break;
			default: cause = CAUSE_API; break;
			}
			if (r->start < covered && cls == API_INIT && top != CAUSE_INIT) {
				/* nested start-up work: move it out of the enclosing call */
				uint64_t x = ov(a, umin(e, covered), r->start, r->end);
				x = umin(x, p->ns[top]);
				p->ns[top] -= x;
				add_part(p, CAUSE_INIT, x, (uint64_t)1 << 40 | r->name_id);
			}
			s0 = umax(umax(a, r->start), covered);
			e0 = umin(e, r->end);
			o = e0 > s0 ? e0 - s0 : 0;
			if (!o)
				continue;
			add_part(p, cause, o, (uint64_t)1 << 40 | r->name_id);
			api_ns += o;
			covered = e0;
			top = cause;
		}
	}
	/* OS-runtime calls not inside an API call (the driver's own ioctls are API time) */
	for (i = index_first(&l->osrt, t, a); i < l->osrt.off[t + 1]; i++) {
		const struct trace_osrt *r = &m->osrt.v[l->osrt.row[i]];
		uint64_t o, inside = 0;
		int cause;
		if (r->start >= e)
			break;
		o = ov(a, e, r->start, r->end);
		if (!o || (cause = osrt_cause(r->func)) < 0)
			continue;
		if (api_ns) {
			for (size_t j = index_first(&l->api, t, umax(a, r->start)); j < l->api.off[t + 1]; j++) {
				const struct trace_api *q = &m->api.v[l->api.row[j]];
				if (q->start >= umin(e, r->end))
					break;
				inside += ov(umax(a, r->start), umin(e, r->end), q->start, q->end);
			}
		}
		o = o > inside ? o - inside : 0;
		add_part(p, cause, o, (uint64_t)2 << 40 | r->func);
		os_ns += o;
	}
	rest = e - a;
	rest = rest > api_ns + os_ns ? rest - api_ns - os_ns : 0;
	if (!rest)
		return;
	/* NVTX ranges named like data work */
	if (l->nvtx.off) {
		uint64_t best = 0, best_name = 0;
		for (i = index_first(&l->nvtx, t, a); i < l->nvtx.off[t + 1]; i++) {
			const struct trace_nvtx_range *r = &m->nvtx.v[l->nvtx.row[i]];
			uint64_t o;
			if (r->start >= e)
				break;
			o = ov(a, e, r->start, r->end);
			if (!o)
				continue;
			if (az_is_data_name(model_str(m, r->name_id))) {
				data_ns = umax(data_ns, o);
				if (o >= best) {
					best = o;
					best_name = (uint64_t)3 << 40 | r->name_id;
				}
			}
		}
		data_ns = umin(data_ns, rest);
		add_part(p, CAUSE_DATA_CPU, data_ns, best_name);
		rest -= data_ns;
	}
	add_part(p, gap_len < l->launch_max_gap ? CAUSE_LAUNCH : CAUSE_CPU, rest, 0);
}

/* Keep the three gaps where the cause took the most time. */
static void big_add(struct az_cause_stat *cs, uint64_t a, uint64_t b, uint64_t ns)
{
	int k;

	for (k = 0; k < 3; k++)
		if (ns > cs->big_ns[k])
			break;
	if (k == 3)
		return;
	memmove(&cs->big[k + 1], &cs->big[k], (size_t)(2 - k) * sizeof(cs->big[0]));
	memmove(&cs->big_ns[k + 1], &cs->big_ns[k], (size_t)(2 - k) * sizeof(cs->big_ns[0]));
	cs->big[k].start = a;
	cs->big[k].end = b;
	cs->big_ns[k] = ns;
}

static void gap(struct tl *l, size_t ui, uint64_t a, uint64_t b, const struct gpu_op *next)
{
	struct az_ctx *c = l->c;
	const struct model *m = l->m;
	const struct trace_api *la;
	struct parts p;
	uint64_t len = b - a, len_in, L, thr_key = 0;
	size_t t = SIZE_MAX;

	len_in = c->win.n > 1 ? az_win_overlap(c, a, b) : len;
	if (len_in < l->min_gap)
		return;
	ALLOC_GROW(c->gaps, c->ngaps + 1, c->alloc_gaps);
	c->gaps[c->ngaps].start = a;
	c->gaps[c->ngaps].unit = ui;
	c->gaps[c->ngaps++].len = len_in;

	memset(&p, 0, sizeof(p));
	la = corr_find(&l->corr, m, next->pid, next->corr);
	if (la && la->end <= a) {
		/* queued before the GPU went idle: it waited on the GPU side */
		c->gpu_side_ns += len_in;
		c->gpu_side_gaps++;
		return;
	}
	if (la) {
		t = thread_of(m, la->pid, la->tid);
		L = umin(umax(la->start, a), b);
		c->launch_gaps++;
	} else {
		if (l->main_thread[ui])
			t = l->main_thread[ui] - 1;
		L = b;
	}
	if (t == SIZE_MAX) {
		add_part(&p, CAUSE_UNKNOWN, len, 0);
	} else {
		const struct model_thread *th = &m->threads.v[t];
		const struct trace_api *blk = NULL;
		thr_key = (uint64_t)th->pid << 32 | th->tid;
		/* a blocking call that returned as the GPU went idle */
		for (size_t i = index_first(&l->api, t, a > l->sync_tol ? a - l->sync_tol : 0);
		     i < l->api.off[t + 1]; i++) {
			const struct trace_api *r = &m->api.v[l->api.row[i]];
			int cls;
			if (r->start >= L)
				break;
			cls = c->api_class[r->name_id];
			if ((cls == API_SYNC || cls == API_COPY_SYNC || cls == API_FREE) &&
			    r->start < a && r->end + l->sync_tol >= a && r->end <= L)
				blk = r;
		}
		/* what the thread did; explicit work (I/O, waits, allocations) keeps its cause */
		thread_activity(l, t, a, L, len, &p);
		if (L < b) {
			int cause = CAUSE_LAUNCH;
			if (la && is_pageable_copy(m, la, next))
				cause = CAUSE_PAGEABLE;
			else if (b - L >= l->launch_max_gap)
				cause = CAUSE_API; /* a launch that long loads modules or waits: not launch overhead */
			add_part(&p, cause, b - L, la ? (uint64_t)1 << 40 | la->name_id : 0);
			if (cause == CAUSE_API) { /* lazy module loading inside the launch */
				for (size_t i = index_first(&l->api, t, L); i < l->api.off[t + 1]; i++) {
					const struct trace_api *r = &m->api.v[l->api.row[i]];
					uint64_t x;
					if (r->start >= b)
						break;
					if (c->api_class[r->name_id] != API_INIT)
						continue;
					x = umin(ov(L, b, r->start, r->end), p.ns[CAUSE_API]);
					p.ns[CAUSE_API] -= x;
					add_part(&p, CAUSE_INIT, x, (uint64_t)1 << 40 | r->name_id);
				}
			}
		}
		if (blk && c->api_class[blk->name_id] == API_FREE) {
			/* cudaFree drained the GPU: the dispatch after it is the free's cost */
			for (int k = CAUSE_CPU; k <= CAUSE_LAUNCH; k += CAUSE_LAUNCH - CAUSE_CPU) {
				p.ns[CAUSE_ALLOC] += p.ns[k];
				p.ns[k] = 0;
			}
			p.name[CAUSE_ALLOC] = (uint64_t)1 << 40 | blk->name_id;
		} else if (blk) {
			l->credit[ui] = a > blk->start ? a - blk->start : 0;
			l->credit_name[ui] = blk->name_id;
		}
		/*
		 * A sync emptied the queue: the dispatch that follows it (CPU and launch
		 * time, up to the time the thread was blocked) is the sync's cost; the
		 * rest of the blocked time carries over to the following gaps.
		 */
		if (l->credit[ui]) {
			for (int k = CAUSE_CPU; k <= CAUSE_LAUNCH; k += CAUSE_LAUNCH - CAUSE_CPU) {
				uint64_t x = umin(l->credit[ui], p.ns[k]);
				p.ns[k] -= x;
				p.ns[CAUSE_SYNC] += x;
				l->credit[ui] -= x;
				if (x && !p.name[CAUSE_SYNC])
					p.name[CAUSE_SYNC] = (uint64_t)1 << 40 | l->credit_name[ui];
			}
		}
		/*
		 * Host work that ends in a host-to-device copy prepared that copy's
		 * data: the input pipeline, whatever calls it made on the way.
		 */
		if (next->htod) {
			static const int prep[] = { CAUSE_CPU, CAUSE_LOCK, CAUSE_SLEEP };
			for (size_t k = 0; k < ARRAY_SIZE(prep); k++) {
				if (!p.ns[prep[k]])
					continue;
				p.ns[CAUSE_DATA_CPU] += p.ns[prep[k]];
				p.ns[prep[k]] = 0;
				p.name[CAUSE_DATA_CPU] = (uint64_t)4 << 40 | (la ? la->name_id : 0);
			}
		}
		if (!l->pid_has_cpu[ui] && !la) {
			memset(&p, 0, sizeof(p));
			add_part(&p, CAUSE_UNKNOWN, len, 0);
		}
	}
	/* scale to the part inside the window, record */
	for (int k = 0; k < CAUSE__N; k++) {
		uint64_t ns = p.ns[k];
		if (!ns)
			continue;
		if (len_in != len)
			ns = (uint64_t)((double)ns * ((double)len_in / (double)len));
		c->cause[k].ns += ns;
		c->cause[k].gaps++;
		if (thr_key)
			az_tally_add(&c->cause[k].threads, thr_key, ns);
		if (p.name[k])
			az_tally_add(&c->cause[k].names, p.name[k], ns);
		big_add(&c->cause[k], a, b, ns);
	}
}

static void route(struct tl *l, const struct gpu_op *op, size_t *last)
{
	struct az_ctx *c = l->c;
	struct az_unit *u;
	uint64_t s, e;
	size_t ui;

	if (op->end <= c->lo || op->start >= c->hi)
		return;
	if (c->win.n > 1 && !az_win_overlap(c, op->start, op->end > op->start ? op->end : op->start + 1))
		return;
	ui = unit_get(c, op->pid, op->device, last);
	if (ui >= l->c->nunits)
		return;
	u = &c->units[ui];
	s = umax(op->start, c->lo);
	e = umin(op->end, c->hi);
	if (e < s)
		e = s;
	if (op->kind == 0) {
		ivset_add(op->comm ? &u->comm : &u->compute, s, e);
		u->kernels++;
	} else {
		ivset_add(&u->copy, s, e);
		u->copies++;
	}
	if (!u->has_work) {
		u->has_work = 1;
		u->first = s;
		u->last = e;
		l->cur_end[ui] = e;
		return;
	}
	if (s > l->cur_end[ui])
		gap(l, ui, l->cur_end[ui], s, op);
	if (e > l->cur_end[ui])
		l->cur_end[ui] = e;
	if (e > u->last)
		u->last = e;
}

/* The union of three normalised sets, merged in order (no sort). */
static void merge3(struct interval_set *out, const struct interval_set *a, const struct interval_set *b,
		   const struct interval_set *c)
{
	size_t i = 0, j = 0, k = 0;

	for (;;) {
		uint64_t sa = i < a->n ? a->v[i].start : UINT64_MAX;
		uint64_t sb = j < b->n ? b->v[j].start : UINT64_MAX;
		uint64_t sc = k < c->n ? c->v[k].start : UINT64_MAX;
		const struct interval *iv;
		if (sa == UINT64_MAX && sb == UINT64_MAX && sc == UINT64_MAX)
			break;
		if (sa <= sb && sa <= sc)
			iv = &a->v[i++];
		else if (sb <= sc)
			iv = &b->v[j++];
		else
			iv = &c->v[k++];
		if (out->n && iv->start <= out->v[out->n - 1].end) {
			if (iv->end > out->v[out->n - 1].end)
				out->v[out->n - 1].end = iv->end;
			continue;
		}
		ivset_add(out, iv->start, iv->end);
	}
	out->normal = 1;
}

/* Find units first (cheap), so that per-unit arrays can be sized. */
static void find_units(struct az_ctx *c)
{
	const struct model *m = c->m;
	size_t last = 0;

	for (size_t i = 0; i < m->kernels.n; i++)
		unit_get(c, m->kernels.v[i].pid, m->kernels.v[i].device, &last);
	for (size_t i = 0; i < m->memcpys.n; i++)
		unit_get(c, m->memcpys.v[i].pid, m->memcpys.v[i].device, &last);
	for (size_t i = 0; i < m->memsets.n; i++)
		unit_get(c, m->memsets.v[i].pid, m->memsets.v[i].device, &last);
}

static void main_threads(struct tl *l)
{
	struct az_ctx *c = l->c;
	const struct model *m = l->m;

	for (size_t ui = 0; ui < c->nunits; ui++) {
		size_t best = SIZE_MAX, best_n = 0;
		for (size_t t = 0; t < m->threads.n; t++) {
			size_t n;
			if (m->threads.v[t].pid != c->units[ui].pid)
				continue;
			n = (l->api.off[t + 1] - l->api.off[t]) * 4 + (l->osrt.off[t + 1] - l->osrt.off[t]);
			if (n)
				l->pid_has_cpu[ui] = 1;
			if (best == SIZE_MAX || n > best_n ||
			    (n == best_n && m->threads.v[t].tid == c->units[ui].pid)) {
				best = t;
				best_n = n;
			}
		}
		l->main_thread[ui] = best == SIZE_MAX ? 0 : (uint32_t)best + 1;
	}
}

void az_build_timeline(struct az_ctx *c)
{
	const struct model *m = c->m;
	const struct az_rule *rs = az_rule_find("gpu-starvation");
	const struct az_rule *rl = az_rule_find("launch-bound");
	struct tl l;
	size_t ik = 0, ic = 0, is = 0, last = 0;

	memset(&l, 0, sizeof(l));
	l.c = c;
	l.m = m;
	l.min_gap = (uint64_t)(az_param(c, rs, "min_gap_us") * 1e3);
	l.sync_tol = (uint64_t)(az_param(c, rs, "sync_tolerance_us") * 1e3);
	l.launch_max_gap = (uint64_t)(az_param(c, rl, "max_gap_us") * 1e3);
	if (!l.min_gap)
		l.min_gap = 1;

	find_units(c);
	BUILD_INDEX(&l.api, m, m->api.v, m->api.n);
	BUILD_INDEX(&l.osrt, m, m->osrt.v, m->osrt.n);
	BUILD_INDEX(&l.nvtx, m, m->nvtx.v, m->nvtx.n);
	corr_build(&l.corr, m);
	l.main_thread = xcalloc(c->nunits + 1, sizeof(uint32_t));
	l.pid_has_cpu = xcalloc(c->nunits + 1, 1);
	l.cur_end = xcalloc(c->nunits + 1, sizeof(uint64_t));
	l.credit = xcalloc(c->nunits + 1, sizeof(uint64_t));
	l.credit_name = xcalloc(c->nunits + 1, sizeof(uint32_t));
	main_threads(&l);

	/* three-way merge of kernels, copies and sets by start */
	for (;;) {
		uint64_t sk = ik < m->kernels.n ? m->kernels.v[ik].start : UINT64_MAX;
		uint64_t sc = ic < m->memcpys.n ? m->memcpys.v[ic].start : UINT64_MAX;
		uint64_t ss = is < m->memsets.n ? m->memsets.v[is].start : UINT64_MAX;
		struct gpu_op op;
		size_t before;

		if (sk == UINT64_MAX && sc == UINT64_MAX && ss == UINT64_MAX)
			break;
		memset(&op, 0, sizeof(op));
		if (sk <= sc && sk <= ss) {
			const struct trace_kernel *k = &m->kernels.v[ik++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 0; op.comm = az_is_comm(c, k);
		} else if (sc <= ss) {
			const struct trace_memcpy *k = &m->memcpys.v[ic++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 1;
			op.pageable = k->src_kind == MEM_PAGEABLE || k->dst_kind == MEM_PAGEABLE;
			op.htod = k->kind == COPY_HTOD;
		} else {
			const struct trace_memset *k = &m->memsets.v[is++];
			op.start = k->start; op.end = k->end; op.pid = k->pid; op.device = k->device;
			op.corr = k->correlation; op.kind = 2;
		}
		if (op.end < op.start)
			op.end = op.start;
		before = c->nunits;
		route(&l, &op, &last);
		if (c->nunits != before) /* cannot happen: units were found first */
			BUG("unit appeared during the pass");
	}

	for (size_t ui = 0; ui < c->nunits; ui++) {
		struct az_unit *u = &c->units[ui];
		struct interval_set all = { 0 };
		if (!u->has_work)
			continue;
		ivset_normalize(&u->compute);
		ivset_normalize(&u->comm);
		ivset_normalize(&u->copy);
		merge3(&all, &u->compute, &u->comm, &u->copy);
		if (c->win.n > 1)
			u->busy_ns = ivset_intersect_total(&all, &c->win);
		else
			u->busy_ns = ivset_total(&all);
		ivset_release(&all);
		u->idle_ns = c->wall_ns > u->busy_ns ? c->wall_ns - u->busy_ns : 0;
		c->busy_ns += u->busy_ns;
		c->idle_ns += u->idle_ns;
		c->has_gpu = 1;
	}

	index_release(&l.api);
	index_release(&l.osrt);
	index_release(&l.nvtx);
	free(l.corr.slot);
	free(l.main_thread);
	free(l.pid_has_cpu);
	free(l.cur_end);
	free(l.credit);
	free(l.credit_name);
}

void az_release_timeline(struct az_ctx *c)
{
	for (size_t i = 0; i < c->nunits; i++) {
		ivset_release(&c->units[i].compute);
		ivset_release(&c->units[i].comm);
		ivset_release(&c->units[i].copy);
	}
	free(c->units);
	c->units = NULL;
	c->nunits = 0;
	free(c->gaps);
	c->gaps = NULL;
}
