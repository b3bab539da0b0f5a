/*
 * core.c - the collector's heart: per-thread buffers and the block pool,
 * the thread registry, the capture windows, the writer thread and the part
 * file, and cl_init().  (Settings: config.c; clock: clock.c; strings:
 * strings.c; endings: exit.c; fork: fork.c; sources: sources.c.)
 *
 * Buffers.  One address range of max_buffer_bytes is reserved at start
 * (MAP_NORESERVE: pages are only committed when written) and cut into
 * blocks of buffer_bytes.  A thread appends entries (the on-disk
 * struct trace_entry + record) to its current block and publishes them with
 * a store-release of the block's `used`; a full block is marked RETIRED and
 * the thread takes the next one.  When no block is free and the range is
 * used up, records are dropped and counted (TRACE_DROP_BUFFER).
 *
 * Writer.  A background thread wakes every flush_ns, takes the writer lock
 * (a spin word holding the owner's tid, so that a signal handler can take
 * it too), copies every block's new bytes [flushed, used) into a staging
 * buffer, writes them as zstd chunks into this process's part file, and
 * frees retired blocks once written.  Only the lock holder touches
 * `flushed`, the staging buffer and the part file.
 *
 * Ending (exit.c).  return/exit() (destructor), _exit() (interposed) and
 * exec (interposed) take the writer lock and write everything; fatal
 * signals and SIGINT/SIGTERM write every block's unflushed bytes as raw
 * chunks with write() only, then die with the default action.  fork()
 * (fork.c) gives the child a new part file, started lazily at its first
 * record, so that a child that only execs leaves no empty part behind.
 */
#include "internal.h"
#include "env.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic int cl_live;
__thread int cl_guard_depth CL_TLS;


__thread struct cl_thread *cl_self CL_TLS;


/* ---- blocks ---- */

/* enum BLK_*, struct cl_block: internal.h */

static unsigned char *pool_base;
struct cl_block *cl_blocks;
size_t cl_nblocks_max;
_Atomic size_t cl_nblocks_used;
struct cl_block *cl_free_list;
_Atomic size_t cl_nfree;
pthread_mutex_t cl_pool_lock = PTHREAD_MUTEX_INITIALIZER;

_Atomic uint64_t cl_drops[TRACE_DROP__COUNT];

/* ---- threads ---- */

pthread_mutex_t cl_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct cl_thread *cl_reg_head;
pthread_key_t cl_thread_key;

/* ---- process, part file, writer ---- */

_Atomic uint32_t cl_my_pid;
struct trace_writer cl_part;
int cl_part_open;
_Atomic int cl_part_fd = -1;
static _Atomic int keep_fds[CL_KEEP_FDS];   /* fd + 1; 0 free */
unsigned cl_part_seq;
_Atomic uint32_t cl_wlock;          /* tid of the holder, 0 = free */
_Atomic int cl_finished;            /* stream ended: nothing more is written */
_Atomic int cl_child_pending;       /* 1: forked child, part not started; 2: starting */
pthread_mutex_t cl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t writer_th;
int cl_writer_running;
uint32_t cl_writer_tid;
static unsigned char *stage;
size_t cl_stage_len;
static size_t stage_cap;
uint64_t cl_drops_written[TRACE_DROP__COUNT];
int cl_od_final;                    /* the stream's last pass: write the ring too */
uint64_t (*cl_real_write_fn)(int, const void *, size_t);

/* ---- capture ---- */

static _Atomic int capture_on;
static _Atomic int capture_done;
static int timed;
static uint64_t rec_from, rec_until = UINT64_MAX;
static int edge_from_written, edge_until_written;

/* Record types that are always written, whatever the capture state. */
#define META_TYPES ((1u << TRACE_EV_STRING) | (1u << TRACE_EV_PROCESS) | (1u << TRACE_EV_THREAD) | \
		    (1u << TRACE_EV_NAME) | (1u << TRACE_EV_DROPS) | (1u << TRACE_EV_CAPTURE) | \
		    (1u << TRACE_EV_WARNING) | (1u << TRACE_EV_DEVICE) | (1u << TRACE_EV_PROC_ATTR))

uint32_t cl_sys_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

uint32_t cl_pid(void)
{
	return atomic_load_explicit(&cl_my_pid, memory_order_relaxed);
}

uint32_t cl_tid(void)
{
	struct cl_thread *t = cl_self;

	if (t && t != CL_DEAD && t->tid)
		return t->tid;
	return cl_sys_gettid();
}

int cl_guard_enter(void)
{
	if (cl_guard_depth)
		return 0;
	cl_guard_depth = 1;
	return 1;
}

void cl_guard_leave(void)
{
	cl_guard_depth = 0;
}

void *cl_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

void *cl_vsym(const char *name, const char *version)
{
	void *p = dlvsym(RTLD_NEXT, name, version);

	return p ? p : dlsym(RTLD_NEXT, name);
}

int cl_in_vfork_child(void)
{
	uint32_t pid = cl_pid();

	return pid && (uint32_t)syscall(SYS_getpid) != pid;
}

void cl_add_drops(unsigned source, uint64_t n)
{
	if (source < TRACE_DROP__COUNT)
		atomic_fetch_add_explicit(&cl_drops[source], n, memory_order_relaxed);
}

/* ---- recording state ---- */

/*
 * The capture windows opened so far (nvtx and cudaProfilerApi capture), on
 * the report clock; end 0 = still open.  Records that arrive after their
 * event (CUPTI hands GPU records over up to a second later) are judged by
 * their own time against these (cl_reserve_at).  Past CAPTURE_WINDOWS the
 * last window stays open: later records are kept rather than lost.
 */
#define CAPTURE_WINDOWS 4096
static struct { _Atomic uint64_t begin, end; } cwin[CAPTURE_WINDOWS];
static atomic_int ncwin;

static void window_edge(int begin, uint64_t t)
{
	int n = atomic_load(&ncwin);

	if (begin) {
		if (n == CAPTURE_WINDOWS)
			return;
		atomic_store(&cwin[n].end, 0);
		atomic_store(&cwin[n].begin, t);
		atomic_store(&ncwin, n + 1);
	} else if (n > 0 && n < CAPTURE_WINDOWS) {
		atomic_store(&cwin[n - 1].end, t);
	}
}

int cl_recording_at(uint64_t t)
{
	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return 0;
	if (timed && (t < rec_from || t >= rec_until))
		return 0;
	if (cl_config.capture_mode == CL_CAPTURE_NONE && !cl_config.on_demand)
		return 1;
	for (int i = atomic_load(&ncwin) - 1; i >= 0; i--) {
		uint64_t b = atomic_load(&cwin[i].begin), e = atomic_load(&cwin[i].end);
		if (t >= b)
			return !e || t < e;
	}
	return 0;
}

int cl_recording(void)
{
	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return 0;
	if (!atomic_load_explicit(&capture_on, memory_order_relaxed))
		return 0;
	if (timed) {
		uint64_t t = cl_now();
		return t >= rec_from && t < rec_until;
	}
	return 1;
}

static _Atomic uint32_t capture_count;     /* captures opened (not on demand) */
static uint32_t capture_trigger;           /* the open one's trigger */

static void emit_capture(unsigned what, uint64_t time, uint32_t id)
{
	struct trace_capture *c = cl_reserve(TRACE_EV_CAPTURE, sizeof(*c));

	if (!c)
		return;
	c->time = time;
	c->pid = cl_pid();
	c->what = what;
	c->trigger = capture_trigger;
	c->id = id;
	cl_commit();
}

int cl_capturing(void)
{
	return atomic_load_explicit(&capture_on, memory_order_relaxed);
}

/*
 * Under --on-demand, ondemand.c keeps the captures and the writer writes
 * their edges (after the ring that comes before each); capture ranges are
 * then repeatable whatever --capture-range-end says, as a long run needs.
 */
uint32_t cl_capture_begin_by(unsigned trigger, uint32_t steps, uint64_t duration_ns)
{
	uint64_t now;
	uint32_t id;

	/* on demand, past the last window a capture is refused rather than left open */
	if (cl_config.on_demand && atomic_load(&ncwin) >= CAPTURE_WINDOWS)
		return 0;
	if (atomic_load(&capture_done) || atomic_exchange(&capture_on, 1))
		return 0;
	now = cl_now();
	window_edge(1, now);
	if (cl_config.on_demand)
		return cl_od_opened(now, trigger, steps, duration_ns);
	capture_trigger = trigger;
	id = atomic_fetch_add(&capture_count, 1) + 1;
	emit_capture(TRACE_CAPTURE_START, now, id);
	return id;
}

void cl_capture_begin(void)
{
	cl_capture_begin_by(cl_config.capture_mode == CL_CAPTURE_CUDA_PROFILER ? TRACE_TRIGGER_PROFILER
									   : TRACE_TRIGGER_NVTX, 0, 0);
}

void cl_capture_end(void)
{
	uint64_t now;

	if (!atomic_exchange(&capture_on, 0))
		return;
	now = cl_now();
	window_edge(0, now);
	if (cl_config.on_demand) {
		cl_od_closed(now);
		return;
	}
	emit_capture(TRACE_CAPTURE_STOP, now, atomic_load(&capture_count));
	if (!cl_config.capture_repeat)
		atomic_store(&capture_done, 1);
}

/* ---- blocks ---- */

int cl_pool_init(void)
{
	size_t bs = cl_config.buffer_bytes;

	/*
	 * Reserve address space only; with overcommit off (a strict commit
	 * limit) a large reservation can fail: settle for less, down to 4 blocks.
	 */
	for (cl_nblocks_max = cl_config.max_buffer_bytes / bs;; cl_nblocks_max /= 2) {
		pool_base = mmap(NULL, cl_nblocks_max * bs, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (pool_base != MAP_FAILED)
			break;
		if (cl_nblocks_max / 2 < 4)
			return -1;
	}
	cl_config.max_buffer_bytes = cl_nblocks_max * bs;
	cl_blocks = mmap(NULL, cl_nblocks_max * sizeof(*cl_blocks), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cl_blocks == MAP_FAILED) {
		munmap(pool_base, cl_nblocks_max * bs);
		return -1;
	}
	return 0;
}

static struct cl_block *block_get(void)
{
	struct cl_block *b = NULL;

	if (!atomic_load_explicit(&cl_nfree, memory_order_relaxed) &&
	    atomic_load_explicit(&cl_nblocks_used, memory_order_relaxed) >= cl_nblocks_max)
		return NULL;
	pthread_mutex_lock(&cl_pool_lock);
	if (cl_free_list) {
		b = cl_free_list;
		cl_free_list = b->next_free;
		atomic_fetch_sub(&cl_nfree, 1);
	} else {
		size_t i = atomic_load(&cl_nblocks_used);
		if (i < cl_nblocks_max) {
			b = &cl_blocks[i];
			b->data = pool_base + i * cl_config.buffer_bytes;
			atomic_store_explicit(&cl_nblocks_used, i + 1, memory_order_release);
		}
	}
	pthread_mutex_unlock(&cl_pool_lock);
	if (b) {
		b->next_free = NULL;
		atomic_store_explicit(&b->used, 0, memory_order_relaxed);
		atomic_store_explicit(&b->state, BLK_ACTIVE, memory_order_release);
	}
	return b;
}

/* Writer lock holder only. */
static void block_free(struct cl_block *b)
{
	b->flushed = 0;
	atomic_store_explicit(&b->used, 0, memory_order_relaxed);
	atomic_store_explicit(&b->state, BLK_FREE, memory_order_release);
	pthread_mutex_lock(&cl_pool_lock);
	b->next_free = cl_free_list;
	cl_free_list = b;
	atomic_fetch_add(&cl_nfree, 1);
	pthread_mutex_unlock(&cl_pool_lock);
}

void cl_thread_retire(struct cl_thread *t)
{
	if (!t->blk)
		return;
	atomic_store_explicit(&t->blk->state, BLK_RETIRED, memory_order_release);
	t->blk = NULL;
	t->data = NULL;
	t->cap = t->pos = 0;
}

/* ---- threads ---- */

/*
 * Thread states are recycled: a thread that ended hands its state back
 * (thread_exit_cb, after its last record is committed and its block
 * retired to the writer), and the next thread takes it, so that the
 * collector holds one state (about 14 KB: the NVTX stack and the string
 * cache) per thread alive, not per thread ever created.  Nothing reads
 * another thread's state but cl_thread_tid_of(), under reg_lock, which
 * skips the dead.
 */
struct cl_thread *cl_thread_free_list;

/* A zeroed thread state, registered; NULL when out of memory. */
struct cl_thread *cl_thread_new(void)
{
	struct cl_thread *t;

	pthread_mutex_lock(&cl_reg_lock);
	t = cl_thread_free_list;
	if (t) {
		struct cl_thread *next = t->next;
		struct cl_block *blk = t->blk;
		unsigned char *data = t->data;
		size_t cap = t->cap, pos = t->pos;
		cl_thread_free_list = t->next_free;
		memset(t, 0, sizeof(*t));
		t->next = next;   /* stays in the registry */
		/* and keeps its block: short-lived threads fill one block, not one each */
		t->blk = blk;
		t->data = data;
		t->cap = cap;
		t->pos = pos;
	}
	pthread_mutex_unlock(&cl_reg_lock);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_lock(&cl_reg_lock);
	t->next = cl_reg_head;
	cl_reg_head = t;
	pthread_mutex_unlock(&cl_reg_lock);
	return t;
}

void cl_thread_release(struct cl_thread *t)
{
	if (!t || t == CL_DEAD)
		return;
	pthread_mutex_lock(&cl_reg_lock);
	t->dead = 1;
	t->next_free = cl_thread_free_list;
	cl_thread_free_list = t;
	pthread_mutex_unlock(&cl_reg_lock);
}

void cl_thread_bind(struct cl_thread *t)
{
	t->tid = cl_sys_gettid();
	t->self = pthread_self();
	atomic_store(&t->tid_pub, t->tid);
	cl_self = t;
	pthread_setspecific(cl_thread_key, t);
}

struct cl_thread *cl_thread_prepare(void)
{

	if (!atomic_load(&cl_live))
		return NULL;
	return cl_thread_new();
}

void cl_emit_thread(uint32_t tid, uint32_t name_id, uint32_t flags, uint64_t time)
{
	struct trace_thread *r = cl_reserve(TRACE_EV_THREAD, sizeof(*r));

	if (!r)
		return;
	r->time = time;
	r->pid = cl_pid();
	r->tid = tid;
	r->name_id = name_id;
	r->flags = flags | (name_id ? TRACE_THREAD_NAME : 0);
	cl_commit();
}

void cl_thread_start(struct cl_thread *t)
{
	if (!t)
		return;
	cl_thread_bind(t);
	cl_emit_thread(t->tid, 0, TRACE_THREAD_START, cl_now());
}

uint32_t cl_thread_tid_of(pthread_t th)
{
	struct cl_thread *found = NULL;

	pthread_mutex_lock(&cl_reg_lock);
	for (struct cl_thread *t = cl_reg_head; t; t = t->next)
		if (!t->dead && t->self == th) {
			found = t;
			break;
		}
	pthread_mutex_unlock(&cl_reg_lock);
	if (!found)
		return 0;
	/* a thread just created may not have published its tid yet */
	for (int i = 0; i < 2000 && !atomic_load(&found->tid_pub); i++) {
		struct timespec ts = { 0, 5000 };
		nanosleep(&ts, NULL);
	}
	return atomic_load(&found->tid_pub);
}

void cl_thread_exit_cb(void *arg)
{
	struct cl_thread *t = arg;
	int saved = errno;

	if (!t || t == CL_DEAD)
		return;
	cl_guard_depth = 1;
	if (!t->internal)
		cl_emit_thread(t->tid, 0, TRACE_THREAD_EXIT, cl_now());
	if (t->internal)
		cl_thread_retire(t);   /* the next thread that takes the state keeps the block */
	cl_self = CL_DEAD;
	pthread_setspecific(cl_thread_key, NULL);
	atomic_signal_fence(memory_order_seq_cst);
	if (!t->internal)
		cl_thread_release(t);
	errno = saved;
}

void cl_mark_internal_thread(void)
{
	struct cl_thread *t = cl_self;
	sigset_t all;

	cl_guard_depth = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (!t) {
		t = cl_thread_new();
		if (!t)
			return;
		cl_thread_bind(t);
	}
	t->internal = 1;
}

/* The slow path of cl_reserve(): create the thread's state, get a block. */
static struct cl_thread *reserve_slow(size_t esize)
{
	struct cl_thread *t = cl_self;
	int saved = errno, guard = cl_guard_depth, newborn = 0;

	if (t == CL_DEAD || !atomic_load(&cl_live)) {
		if (t == CL_DEAD)
			cl_add_drops(TRACE_DROP_BUFFER, 1);
		return NULL;
	}
	cl_guard_depth = 1;
	if (atomic_load(&cl_child_pending))
		cl_child_start();
	if (!t) {
		t = cl_thread_new();
		if (!t)
			goto fail;
		cl_thread_bind(t);
		newborn = 1;
	}
	/*
	 * A recycled state comes with the block its last thread wrote: the
	 * new thread appends to it while the record fits.
	 */
	if (!t->blk || t->pos + esize + (newborn ? trace_entry_size(sizeof(struct trace_thread)) : 0) > t->cap) {
		if (t->blk)
			cl_thread_retire(t);
		t->blk = block_get();
		if (!t->blk)
			goto fail;
		t->data = t->blk->data;
		t->cap = cl_config.buffer_bytes;
		t->pos = 0;
	}
	if (newborn) {
		/* first sight of a thread the pthread_create wrapper did not see */
		struct trace_entry *e = (struct trace_entry *)(t->data + t->pos);
		struct trace_thread *r = (struct trace_thread *)(e + 1);
		size_t n = trace_entry_size(sizeof(*r));
		memset(e, 0, n);
		e->type = TRACE_EV_THREAD;
		e->size = (uint16_t)n;
		r->time = cl_now();
		r->pid = cl_pid();
		r->tid = t->tid;
		t->pos += n;
		atomic_store_explicit(&t->blk->used, t->pos, memory_order_release);
	}
	cl_guard_depth = guard;
	errno = saved;
	return t;
fail:
	cl_add_drops(TRACE_DROP_BUFFER, 1);
	cl_guard_depth = guard;
	errno = saved;
	return NULL;
}

struct cl_thread *cl_thread_get(void)
{
	struct cl_thread *t = cl_self;

	if (__builtin_expect(t && t != CL_DEAD, 1))
		return t;
	if (t == CL_DEAD || !atomic_load(&cl_live))
		return NULL;
	reserve_slow(0);
	t = cl_self;
	return t && t != CL_DEAD ? t : NULL;
}

static void *reserve(unsigned type, size_t size, int keep);

static int is_meta(unsigned type)
{
	return type < 32 && (META_TYPES >> type) & 1;
}

/* Idle under --on-demand: the flight recorder's types are kept (for its ring). */
static int ring_keep(unsigned type)
{
	return cl_config.on_demand && cl_od_ring_type(type) &&
	       atomic_load_explicit(&cl_live, memory_order_relaxed);
}

void *cl_reserve(unsigned type, size_t size)
{
	return reserve(type, size, is_meta(type) ? atomic_load_explicit(&cl_live, memory_order_relaxed)
						 : cl_recording() || ring_keep(type));
}

void *cl_reserve_at(unsigned type, size_t size, uint64_t time)
{
	return reserve(type, size, is_meta(type) ? atomic_load_explicit(&cl_live, memory_order_relaxed)
						 : cl_recording_at(time) || ring_keep(type));
}

static void *reserve(unsigned type, size_t size, int keep)
{
	struct cl_thread *t = cl_self;
	size_t esize = trace_entry_size(size);
	struct trace_entry *e;

	if (!keep)
		return NULL;
	if (esize > 65528)
		return NULL;
	if (t && t != CL_DEAD) {
		/*
		 * Claim the thread's buffer before looking at it: a hook in a
		 * signal handler that interrupts this reservation finds it
		 * claimed and drops its record, and one that ran before the
		 * claim has finished by the time we read t->pos.
		 */
		if (t->pending) {
			cl_add_drops(TRACE_DROP_BUFFER, 1);
			return NULL;
		}
		t->pending = esize;
		atomic_signal_fence(memory_order_seq_cst);
	}
	if (__builtin_expect(!t || t == CL_DEAD || !t->data || t->pos + esize > t->cap, 0)) {
		t = reserve_slow(esize);
		if (!t) {
			t = cl_self;
			if (t && t != CL_DEAD)
				t->pending = 0;
			return NULL;
		}
		t->pending = esize;
	}
	e = (struct trace_entry *)(t->data + t->pos);
	memset(e, 0, esize);
	e->type = (uint16_t)type;
	e->size = (uint16_t)esize;
	return e + 1;
}

void cl_commit(void)
{
	struct cl_thread *t = cl_self;

	t->pos += t->pending;
	atomic_store_explicit(&t->blk->used, t->pos, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	t->pending = 0;
}

/* ---- the part file ---- */


void cl_stage_entry(unsigned type, const void *rec, size_t size)
{
	unsigned char buf[sizeof(struct trace_entry) + CL_STR_MAX + 64];
	struct trace_entry *e = (struct trace_entry *)buf;
	size_t n = trace_entry_size(size);

	if (n > sizeof(buf))
		return;
	memset(buf, 0, n);
	e->type = (uint16_t)type;
	e->size = (uint16_t)n;
	memcpy(e + 1, rec, size);
	cl_stage_raw(buf, n);
}

static uint32_t stage_string(char *s, size_t len)
{
	unsigned char buf[sizeof(struct trace_string) + CL_STR_MAX];
	struct trace_string *r = (struct trace_string *)buf;

	if (!len)
		return 0;
	if (len > CL_STR_MAX)
		len = CL_STR_MAX;
	cl_utf8_clean(s, len);
	r->id = atomic_fetch_add(&cl_str_next_id, 1);
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
	cl_stage_entry(TRACE_EV_STRING, buf, sizeof(*r) + len);
	return r->id;
}

static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return 0;
	while (got < cap && (n = read(fd, buf + got, cap - got)) > 0)
		got += (size_t)n;
	close(fd);
	return got;
}

static int stage_flush(void);

/*
 * A write past RLIMIT_FSIZE raises SIGXFSZ in the writing thread, and its
 * default action would end the program: the collector's writes from the
 * program's threads (part start, the last flush, exec) block it, and take
 * back the one their own failed write raised (EFBIG).  The write fails and
 * its records count as dropped.  gpuscope's own threads block every signal.
 */
void cl_xfsz_hold(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

void cl_xfsz_release(const sigset_t *old, int failed_efbig)
{
	sigset_t s, pend;
	struct timespec zero = { 0, 0 };

	if (failed_efbig && !sigismember(old, SIGXFSZ) && !sigpending(&pend) &&
	    sigismember(&pend, SIGXFSZ)) {
		sigemptyset(&s);
		sigaddset(&s, SIGXFSZ);
		sigtimedwait(&s, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Open a new part file for this process and write its process record. */
static int part_start_unguarded(void)
{
	char path[4200], cmd[CL_STR_MAX], exe[1024], host[256];
	struct trace_process p;
	size_t n;
	ssize_t k;
	int fd;

	for (;;) {
		snprintf(path, sizeof(path), "%s/%u-%u%s", cl_config.dir, cl_pid(), cl_part_seq++,
			 TRACE_FILE_EXT);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			break;
		if (errno != EEXIST || cl_part_seq > 100000)
			return -1;
	}
	{
		/* out of the way of programs that reuse low descriptors */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 700);
		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
	}
	if (trace_writer_fdopen(&cl_part, fd, path, 1) < 0)
		return -1;
	cl_part.level = cl_config.zstd_level;
	cl_part_open = 1;
	atomic_store(&cl_part_fd, fd);

	memset(&p, 0, sizeof(p));
	p.pid = cl_pid();
	p.ppid = (uint32_t)getppid();
	p.start_realtime_ns = 0;
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		p.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	p.start_mono_ns = cl_now();
	n = read_small("/proc/self/cmdline", cmd, sizeof(cmd));
	while (n && !cmd[n - 1])
		n--;
	for (size_t i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	p.cmdline_id = stage_string(cmd, n);
	k = readlink("/proc/self/exe", exe, sizeof(exe));
	p.exe_id = stage_string(exe, k > 0 ? (size_t)k : 0);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		p.host_id = stage_string(host, strlen(host));
	}
	cl_stage_entry(TRACE_EV_PROCESS, &p, sizeof(p));
	return stage_flush();
}

int cl_part_start(void)
{
	sigset_t old;
	int r;

	cl_xfsz_hold(&old);
	errno = 0;
	r = part_start_unguarded();
	cl_xfsz_release(&old, errno == EFBIG);
	return r;
}

void cl_stage_raw(const void *p, size_t n)
{
	if (cl_stage_len + n > stage_cap)
		stage_flush();
	if (n > stage_cap)
		return;
	memcpy(stage + cl_stage_len, p, n);
	cl_stage_len += n;
}

uint64_t cl_count_entries(const unsigned char *p, size_t n)
{
	uint64_t c = 0;

	for (size_t pos = 0; pos + sizeof(struct trace_entry) <= n;) {
		const struct trace_entry *e = (const void *)(p + pos);
		if (e->size < sizeof(*e))
			break;
		pos += e->size;
		c++;
	}
	return c;
}

/*
 * Write failures.  A full disk or RLIMIT_FSIZE (`ulimit -f`) ends what a
 * part file can take, and the drop counts written after the events would be
 * lost with them (the report would say "dropped 0").  On the first failed
 * write the part is cut back to the end of its last whole chunk, and further
 * back, chunk by chunk (their records counted as dropped too), until
 * PART_TAIL_ROOM bytes can be written there; from then on nothing but the
 * tail is written: every later record is counted as a write drop, and the
 * stream's end writes the counts, a warning and the end-of-stream chunk into
 * the room kept.  PART_TAIL_ROOM holds a drops record per source, a warning
 * with its message (at most 512 bytes) and three chunk headers, with room
 * to spare.  The last PART_RING chunks are remembered to cut back to.
 */
#define PART_TAIL_ROOM 4096
#define PART_RING 16
int cl_part_full;                    /* writer lock holder only */
static int part_errno;
static struct { uint64_t at, entries; } part_ring[PART_RING];
static unsigned part_ring_n, part_ring_head;

static void part_ring_push(uint64_t at, uint64_t entries)
{
	part_ring[part_ring_head].at = at;
	part_ring[part_ring_head].entries = entries;
	part_ring_head = (part_ring_head + 1) % PART_RING;
	if (part_ring_n < PART_RING)
		part_ring_n++;
}

/* Whether PART_TAIL_ROOM bytes fit at the part's end (then cut off again). */
static int part_room(void)
{
	static const unsigned char zero[PART_TAIL_ROOM];
	off_t at = (off_t)cl_part.offset;
	ssize_t n;

	if (ftruncate(cl_part.fd, at) < 0 || lseek(cl_part.fd, at, SEEK_SET) != at)
		return 0;
	n = pwrite(cl_part.fd, zero, sizeof(zero), at);
	if (ftruncate(cl_part.fd, at) < 0)
		return 0;
	return n == (ssize_t)sizeof(zero);
}

static void part_write_failed(void)
{
	part_errno = errno ? errno : EIO;
	cl_part_full = 1;
	while (!part_room()) {
		if (!part_ring_n) {
			cl_part_open = 0;   /* not even the tail fits: nothing more */
			return;
		}
		part_ring_head = (part_ring_head + PART_RING - 1) % PART_RING;
		part_ring_n--;
		cl_add_drops(TRACE_DROP_WRITE, part_ring[part_ring_head].entries);
		cl_part.offset = part_ring[part_ring_head].at;
	}
}

/* Write @n bytes of entries as one chunk, or count them as dropped. */
static int part_events(const unsigned char *p, size_t n)
{
	uint64_t at = cl_part.offset, entries = cl_count_entries(p, n);

	if (!cl_part_open || cl_part_full) {
		cl_add_drops(TRACE_DROP_WRITE, entries);
		return -1;
	}
	if (trace_writer_chunk(&cl_part, TRACE_CHUNK_EVENTS, 0, p, n, 1) < 0) {
		cl_add_drops(TRACE_DROP_WRITE, entries);
		part_write_failed();
		return -1;
	}
	part_ring_push(at, entries);
	return 0;
}

/*
 * The tail of a part that hit a write failure: the drop counts and a
 * warning, in the room part_write_failed() kept.  Writer lock held.
 */
void cl_part_tail(void)
{
	unsigned char buf[2048];
	size_t len = 0;
	char msg[512];
	uint32_t id = atomic_fetch_add(&cl_str_next_id, 1);
	int n;

	if (!cl_part_open || !cl_part_full)
		return;
	n = snprintf(msg, sizeof(msg), "%" PRIu64 " records were not written to the part file: %s",
		     atomic_load(&cl_drops[TRACE_DROP_WRITE]), strerror(part_errno));
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	{
		struct trace_entry *e = (struct trace_entry *)buf;
		struct trace_string *r = (struct trace_string *)(e + 1);
		size_t sz = trace_entry_size(sizeof(*r) + (size_t)n);
		memset(e, 0, sz);
		e->type = TRACE_EV_STRING;
		e->size = (uint16_t)sz;
		r->id = id;
		r->len = (uint32_t)n;
		memcpy(r + 1, msg, (size_t)n);
		len += sz;
	}
	{
		struct trace_entry *e = (struct trace_entry *)(buf + len);
		struct trace_warning *w = (struct trace_warning *)(e + 1);
		size_t sz = trace_entry_size(sizeof(*w));
		memset(e, 0, sz);
		e->type = TRACE_EV_WARNING;
		e->size = (uint16_t)sz;
		w->time = cl_now();
		w->pid = cl_pid();
		w->message_id = id;
		len += sz;
	}
	for (unsigned src = 1; src < TRACE_DROP__COUNT; src++) {
		struct trace_entry *e = (struct trace_entry *)(buf + len);
		struct trace_drops *d = (struct trace_drops *)(e + 1);
		size_t sz = trace_entry_size(sizeof(*d));
		uint64_t c = atomic_load(&cl_drops[src]);
		if (!c)
			continue;
		memset(e, 0, sz);
		e->type = TRACE_EV_DROPS;
		e->size = (uint16_t)sz;
		d->pid = cl_pid();
		d->source = src;
		d->count = c;
		len += sz;
		cl_drops_written[src] = c;
	}
	cl_part_full = 0;   /* for the tail only */
	if (trace_writer_chunk(&cl_part, TRACE_CHUNK_EVENTS, 0, buf, len, 0) < 0)
		cl_part_open = 0;
	cl_part_full = 1;
}

static int stage_flush(void)
{
	int ret;

	if (!cl_stage_len)
		return 0;
	ret = part_events(stage, cl_stage_len);
	cl_stage_len = 0;
	return ret;
}

/* ---- the writer lock ---- */

int cl_wlock_take(int give_up_when_finished)
{
	uint32_t me = cl_tid();

	for (;;) {
		uint32_t expect = 0;
		if (atomic_compare_exchange_weak(&cl_wlock, &expect, me))
			return 0;
		if (give_up_when_finished && atomic_load(&cl_finished))
			return -1;
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
}

void cl_wlock_drop(void)
{
	atomic_store(&cl_wlock, 0);
}

/* Write everything committed so far; writer lock held.  Returns bytes staged. */
size_t cl_writer_pass(void)
{
	size_t n = atomic_load_explicit(&cl_nblocks_used, memory_order_acquire), total = 0;

	for (size_t i = 0; i < n; i++) {
		struct cl_block *b = &cl_blocks[i];
		int st = atomic_load_explicit(&b->state, memory_order_acquire);
		size_t used;
		if (st == BLK_FREE)
			continue;
		used = atomic_load_explicit(&b->used, memory_order_acquire);
		if (used > b->flushed && cl_config.on_demand) {
			/* each record to the part or to the flight recorder's ring */
			total += used - b->flushed;
			cl_od_route(b->data + b->flushed, used - b->flushed);
			b->flushed = used;
		} else if (used > b->flushed) {
			size_t len = used - b->flushed;
			if (len >= (64u << 10)) {
				/* big enough for a chunk of its own: no copy */
				stage_flush();
				part_events(b->data + b->flushed, len);
			} else {
				cl_stage_raw(b->data + b->flushed, len);
			}
			total += len;
			b->flushed = used;
		}
		if (st == BLK_RETIRED)
			block_free(b);
	}
	if (timed) {
		uint64_t now = cl_now();
		struct trace_capture c;
		memset(&c, 0, sizeof(c));
		c.pid = cl_pid();
		c.trigger = TRACE_TRIGGER_TIMED;
		c.id = 1;
		if (!edge_from_written && rec_from && now >= rec_from) {
			c.time = rec_from;
			c.what = TRACE_CAPTURE_START;
			cl_stage_entry(TRACE_EV_CAPTURE, &c, sizeof(c));
			edge_from_written = 1;
		}
		if (!edge_until_written && rec_until != UINT64_MAX && now >= rec_until) {
			c.time = rec_until;
			c.what = TRACE_CAPTURE_STOP;
			cl_stage_entry(TRACE_EV_CAPTURE, &c, sizeof(c));
			edge_until_written = 1;
		}
	}
	if (cl_config.on_demand)
		cl_od_pass_end(cl_od_final);
	for (unsigned s = 1; s < TRACE_DROP__COUNT; s++) {
		uint64_t c = atomic_load(&cl_drops[s]);
		if (c != cl_drops_written[s]) {
			struct trace_drops d = { cl_pid(), s, c };
			cl_stage_entry(TRACE_EV_DROPS, &d, sizeof(d));
			cl_drops_written[s] = c;
		}
	}
	stage_flush();
	return total;
}

/*
 * profile's liveness pipe (GPUSCOPE_WATCH_FD): 0 while profile runs, 1
 * when it ended normally (it wrote a byte before closing), 2 when it is gone
 * without one (killed, even by SIGKILL: the kernel closes its end).  Waits
 * up to @ns for a change; without a pipe it only sleeps.
 */
static int watch_lost;                 /* the pipe is no longer at its number */
static dev_t watch_dev;
static ino_t watch_ino;

static int watch_wait(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	struct pollfd fds[2] = { { cl_config.watch_fd, POLLIN, 0 }, { cl_od_ctl_fd(), POLLIN, 0 } };
	struct pollfd p;

	if (cl_config.watch_fd < 0 || watch_lost)
		fds[0].fd = -1;   /* poll() skips a negative descriptor */
	if (fds[0].fd < 0 && fds[1].fd < 0) {
		nanosleep(&ts, NULL);
		return 0;
	}
	if (ppoll(fds, 2, &ts, NULL) <= 0)
		return 0;
	if (fds[1].revents & POLLIN)
		cl_od_ctl_serve();   /* a trigger: `gpuscope capture` (ondemand.c) */
	p = fds[0];
	if (p.fd < 0 || !p.revents)
		return 0;
	{
		/* the program may have dup2()ed another file onto the number */
		struct stat st;
		if (fstat(cl_config.watch_fd, &st) < 0 || st.st_ino != watch_ino ||
		    st.st_dev != watch_dev) {
			watch_lost = 1;
			return 0;
		}
	}
	if (p.revents & POLLIN)
		return 1;
	if (p.revents & POLLHUP)
		return 2;
	watch_lost = 1;
	return 0;
}

/*
 * profile has ended before this process: finish the part file (everything
 * committed, then the end of the stream) and stop recording; the program
 * runs on.  When profile was killed, say where the part is: `gpuscope
 * merge` makes a report of finished parts (docs/collector.md).
 */
static void watch_ended(int killed)
{
	char path[4200];

	if (cl_wlock_take(1) < 0)
		return;
	if (atomic_load(&cl_finished)) {
		cl_wlock_drop();
		return;
	}
	snprintf(path, sizeof(path), "%s", cl_part_open && cl_part.path ? cl_part.path : "");
	atomic_store(&cl_live, 0);
	cl_od_stop();   /* no more captures: the trigger socket goes */
	cl_stream_end();
	atomic_store(&cl_finished, 1);
	/* the lock stays taken: nothing more is written */
	if (killed && path[0])
		fprintf(stderr, "gpuscope collector: gpuscope profile ended before process %u; its part "
			"'%s' is complete: 'gpuscope merge -o OUT %s/*%s' makes a report of the parts\n",
			cl_pid(), path, cl_config.dir, TRACE_FILE_EXT);
}

static void *writer_main(void *arg)
{
	int busy = 0, w;

	(void)arg;
	cl_mark_internal_thread();
	prctl(PR_SET_NAME, "gpuscope-write", 0, 0, 0);
	__atomic_store_n(&cl_writer_tid, cl_tid(), __ATOMIC_RELEASE);
	while (!atomic_load(&cl_finished)) {
		w = watch_wait(busy ? 1000000u : cl_config.flush_ns);
		if (w) {
			watch_ended(w == 2);
			break;
		}
		if (cl_wlock_take(1) < 0)
			break;
		if (atomic_load(&cl_finished)) {
			cl_wlock_drop();
			break;
		}
		busy = cl_writer_pass() >= cl_config.buffer_bytes;
		cl_wlock_drop();
		cl_od_tick();
		cl_clock_calibrate();
	}
	return NULL;
}

int cl_writer_start(void)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		cl_sym("pthread_create");

	if (!create || create(&writer_th, NULL, writer_main, NULL))
		return -1;
	cl_writer_running = 1;
	/* publish the writer's tid before the CPU sampler starts listing threads */
	for (int i = 0; i < 1000 && !__atomic_load_n(&cl_writer_tid, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

void cl_flush_all(void)
{
	int guard = cl_guard_depth;

	if (!atomic_load(&cl_live) || cl_in_vfork_child())
		return;
	cl_guard_depth = 1;
	if (cl_wlock_take(1) == 0) {
		cl_writer_pass();
		cl_wlock_drop();
	}
	cl_guard_depth = guard;
}

/* The collector's lasting descriptors, spared by the program's close calls (internal.h). */
void cl_fd_keep(int fd)
{
	if (fd < CL_KEEP_FD_MIN)
		return;
	for (size_t i = 0; i < CL_KEEP_FDS; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&keep_fds[i], &free_slot, fd + 1))
			return;
	}
}

void cl_fd_forget(int fd)
{
	for (size_t i = 0; fd >= CL_KEEP_FD_MIN && i < CL_KEEP_FDS; i++) {
		int mine = fd + 1;
		if (atomic_compare_exchange_strong(&keep_fds[i], &mine, 0))
			return;
	}
}

int cl_fd_spared(int fd)
{
	if (fd < 0)
		return 0;
	if (fd == atomic_load_explicit(&cl_part_fd, memory_order_relaxed))
		return 1;
	for (size_t i = 0; fd >= CL_KEEP_FD_MIN && i < CL_KEEP_FDS; i++)
		if (atomic_load_explicit(&keep_fds[i], memory_order_relaxed) == fd + 1)
			return 1;
	return 0;
}

size_t cl_fds_spared(unsigned first, unsigned last, int *out, size_t max)
{
	size_t n = 0;
	int pfd = atomic_load_explicit(&cl_part_fd, memory_order_relaxed);

	if (pfd >= 0 && (unsigned)pfd >= first && (unsigned)pfd <= last && n < max)
		out[n++] = pfd;
	for (size_t i = 0; i < CL_KEEP_FDS && n < max; i++) {
		int v = atomic_load_explicit(&keep_fds[i], memory_order_relaxed) - 1;
		if (v >= 0 && (unsigned)v >= first && (unsigned)v <= last)
			out[n++] = v;
	}
	/* insertion sort: a handful of entries */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
			int t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/*
 * The program is about to dup2() onto the part file's descriptor: move the
 * part file to another descriptor first (writer lock held, so no chunk is
 * half written on the old one).
 */
void cl_part_fd_move(int fd)
{
	int guard = cl_guard_depth;

	if (!atomic_load(&cl_live) || fd != atomic_load(&cl_part_fd) || cl_in_vfork_child())
		return;
	cl_guard_depth = 1;
	if (cl_wlock_take(1) == 0) {
		if (cl_part_open && cl_part.fd == fd) {
			int nfd = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
			if (nfd >= 0) {
				cl_part.fd = nfd;
				atomic_store(&cl_part_fd, nfd);
			}
		}
		cl_wlock_drop();
	}
	cl_guard_depth = guard;
}

/* ---- start ---- */

static _Atomic int init_state; /* 0 not yet, 1 running, 2 done */

int cl_init(void)
{
	int expect = 0;

	if (atomic_load(&init_state) == 2)
		return cl_config.enabled ? 0 : -1;
	if (!atomic_compare_exchange_strong(&init_state, &expect, 1))
		return atomic_load(&init_state) == 2 && cl_config.enabled ? 0 : -1;
	cl_guard_depth++;
	cl_config_read();
	cl_real_write_fn = (uint64_t(*)(int, const void *, size_t))cl_sym("write");
	if (!cl_config.dir[0] || !cl_real_write_fn || cl_pool_init() < 0)
		goto out;
	stage_cap = 8u << 20;
	if (stage_cap < cl_config.buffer_bytes)
		stage_cap = cl_config.buffer_bytes;
	stage = malloc(stage_cap);
	if (!stage || pthread_key_create(&cl_thread_key, cl_thread_exit_cb))
		goto out;
	set_error_prefix("gpuscope collector");
	atomic_store(&cl_my_pid, (uint32_t)syscall(SYS_getpid));
	cl_clock_init();
	if (cl_config.watch_fd >= 0) {
		struct pollfd p = { cl_config.watch_fd, POLLIN, 0 };
		struct stat st;
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
			goto out;   /* profile has ended: run on unrecorded */
		cl_fd_keep(cl_config.watch_fd);
		if (fstat(cl_config.watch_fd, &st) == 0) {
			watch_dev = st.st_dev;
			watch_ino = st.st_ino;
		}
	}
	if (cl_part_start() < 0) {
		/* no directory: the profile that made it has ended (a process
		 * outlived it); the program runs on unrecorded and unwarned */
		if (errno != ENOENT)
			fprintf(stderr, "gpuscope collector: cannot write a part file in '%s': %s\n",
				cl_config.dir, strerror(errno));
		goto out;
	}
	if (cl_config.delay_ns || cl_config.duration_ns) {
		/* --delay/--duration count from the start of the profiled program */
		uint64_t base = cl_config.start_ns;
		if (!base)
			base = cl_now();
		timed = 1;
		rec_from = base + cl_config.delay_ns;
		if (cl_config.duration_ns)
			rec_until = rec_from + cl_config.duration_ns;
	}
	atomic_store(&capture_on, cl_config.capture_mode == CL_CAPTURE_NONE && !cl_config.on_demand);
	atomic_store(&ncwin, 0);
	cl_config.enabled = 1;
	atomic_store(&cl_live, 1);
	pthread_atfork(cl_atfork_prepare, cl_atfork_parent, cl_atfork_child);
	cl_signals_install();
	{
		struct cl_thread *t = cl_thread_new();
		if (t) {
			cl_thread_bind(t);
			cl_emit_thread(t->tid, 0, TRACE_THREAD_START, cl_now());
		}
	}
	cl_procinfo_emit(); /* rank, affinity, memory policy (procinfo.c) */
	if (cl_writer_start() < 0) {
		atomic_store(&cl_live, 0);
		cl_config.enabled = 0;
		goto out;
	}
	cl_sources_start();
out:
	atomic_store(&init_state, 2);
	cl_guard_depth--;
	return cl_config.enabled ? 0 : -1;
}

#ifndef CL_NO_CTOR /* unit tests call cl_init() and cl_final() themselves */
__attribute__((constructor)) static void cl_ctor(void)
{
	cl_init();
}

__attribute__((destructor)) static void cl_dtor(void)
{
	cl_final();
}
#endif
