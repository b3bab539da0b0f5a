/*
 * buffers.c - per-thread buffers, the block pool and the thread registry.
 *
 * One address range of max_buffer_bytes is reserved at start
 * (MAP_NORESERVE: pages are only committed when written) and cut into
 * blocks of buffer_bytes.  A thread appends entries (the on-disk
 * struct trace_entry + record) to its current block and publishes them with
 * a store-release of the block's `used`; a full block is marked RETIRED and
 * the thread takes the next one.  When no block is free and the range is
 * used up, records are dropped and counted (TRACE_DROP_BUFFER).  Whether a
 * record is kept at all is capture.c's answer (cl_recording()), or the
 * flight recorder's under --on-demand.
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

/* Record types that are always written, whatever the capture state. */
#define META_TYPES ((1u << TRACE_EV_STRING) | (1u << TRACE_EV_PROCESS) | (1u << TRACE_EV_THREAD) | \
		    (1u << TRACE_EV_NAME) | (1u << TRACE_EV_DROPS) | (1u << TRACE_EV_CAPTURE) | \
		    (1u << TRACE_EV_WARNING) | (1u << TRACE_EV_DEVICE) | (1u << TRACE_EV_PROC_ATTR))

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
	/* next to the pool: small enough to fit a hole between the program's libraries */
	cl_blocks = cl_layout_map_beside(pool_base, cl_nblocks_max * bs,
					 cl_nblocks_max * sizeof(*cl_blocks));
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
void cl_block_free(struct cl_block *b)
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

