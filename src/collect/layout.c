/*
 * layout.c - the program's address space stays as it would be unprofiled.
 *
 * The kernel puts a new mapping (anonymous memory, a thread's stack, a
 * malloc arena, a library) in the highest gap of the mmap area that fits
 * it: at the start of a program, right below the libraries mapped so far.
 * What the collector maps at its start (the block pool, the stage, the
 * ring, its threads' stacks and their malloc arenas: about 2.3 GiB) would
 * lie between the libraries the program had at its start and those it
 * loads later (PyTorch's, CUDA's), and move each later library gigabytes
 * away from the earlier ones.  The program's hot code then sits at other
 * distances from the code it calls than it does unprofiled, which a
 * launch-bound step notices (docs/always-on.md, "Cost").
 *
 * So while the collector maps its own memory, a placeholder holds the top
 * of that gap: PROT_NONE, MAP_NORESERVE (nothing committed, nothing
 * counted against overcommit), as large as the program could want there
 * soon.  What the collector maps then lands below it; once its threads
 * have their stacks and arenas, the placeholder goes and the program finds
 * the gap it would have found.  Nested holds share one placeholder.
 *
 * Not done when an address-space limit is set (RLIMIT_AS: the placeholder
 * counts against it, and a program thread mapping meanwhile could fail),
 * nor with GPUSCOPE_KEEP_LAYOUT=0 (the layout before this, for measuring
 * what it changes).
 */
#include "internal.h"
#include "../util/util.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

/* the first hold: tried in order, the first that the address space allows */
static const size_t hold_sizes[] = { (size_t)1 << 40, (size_t)64 << 30, (size_t)4 << 30 };

static _Atomic int hold_lock;
static int holds;
static void *hold_at;
static size_t hold_len;
/*
 * The first hold's range: the gap handed back to the program.  The
 * collector's own mappings lie beyond its far end (below it where the mmap
 * area grows down, the usual layout; above it where it grows up).
 */
static uintptr_t gap_lo, gap_hi;
static int grows_down;

static void lock(void)
{
	int expect = 0;

	while (!atomic_compare_exchange_weak(&hold_lock, &expect, 1)) {
		struct timespec ts = { 0, 10000 };
		expect = 0;
		nanosleep(&ts, NULL);
	}
}

static void unlock(void)
{
	atomic_store(&hold_lock, 0);
}

static int allowed(void)
{
	struct rlimit rl;

	if (!cl_config.keep_layout)
		return 0;
	return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY;
}

/* [@at, @at + @len), anonymous and private, exactly there and only if free, or NULL */
static void *map_exactly(uintptr_t at, size_t len, int prot, int flags)
{
	void *p = mmap((void *)at, len, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if ((uintptr_t)p != at) {       /* a kernel older than 4.17 took it as a hint */
		munmap(p, len);
		return NULL;
	}
	return p;
}

/*
 * A later hold: the program has mapped into its gap since, from the far
 * side, so a placeholder of the first hold's size no longer fits there and
 * would land beyond the collector's own mappings instead.  Hold the free
 * part of the gap next to the collector's mappings, as much of it as is
 * free (found by halving: about 28 tries for 1 TiB), which is where the
 * kernel would put the collector's next mapping.
 */
static void hold_rest(void)
{
	size_t page = 4096, lo = 0, hi = (gap_hi - gap_lo) / page;

	while (lo < hi) {               /* the most pages free next to the collector's */
		size_t mid = lo + (hi - lo + 1) / 2;
		uintptr_t at = grows_down ? gap_lo : gap_hi - mid * page;
		void *p = map_exactly(at, mid * page, PROT_NONE, MAP_NORESERVE);
		if (p) {                /* given back: the next, larger try starts at the same place */
			munmap(p, mid * page);
			lo = mid;
		} else {
			hi = mid - 1;
		}
	}
	if (lo) {
		uintptr_t at = grows_down ? gap_lo : gap_hi - lo * page;
		hold_at = map_exactly(at, lo * page, PROT_NONE, MAP_NORESERVE);
		hold_len = hold_at ? lo * page : 0;
	}
}

static void hold_first(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(hold_sizes); i++) {
		void *p = mmap(NULL, hold_sizes[i], PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			hold_at = p;
			hold_len = hold_sizes[i];
			gap_lo = (uintptr_t)p;
			gap_hi = gap_lo + hold_sizes[i];
			/* the collector's code was mapped at the start, before the placeholder */
			grows_down = gap_lo < (uintptr_t)(void *)cl_layout_hold;
			return;
		}
	}
}

void cl_layout_hold(void)
{
	lock();
	if (holds++ == 0 && allowed()) {
		if (!gap_hi)
			hold_first();
		else
			hold_rest();
	}
	unlock();
}

void cl_layout_release(void)
{
	lock();
	if (holds > 0 && --holds == 0 && hold_at) {
		munmap(hold_at, hold_len);
		hold_at = NULL;
		hold_len = 0;
	}
	unlock();
}

/*
 * A fork while another thread held: the holder is not in the child, so its
 * hold goes.
 */
void cl_layout_atfork_child(void)
{
	if (hold_at)
		munmap(hold_at, hold_len);
	hold_at = NULL;
	hold_len = 0;
	holds = 0;
	atomic_store(&hold_lock, 0);
}

/*
 * @len bytes of memory (read-write, private) next to the collector's mapping
 * [@at, @at + @at_len): on the side the mmap area grows towards, where it is
 * free, when the layout is kept, else wherever mmap puts it.  A small
 * mapping made with mmap(NULL) would fit a hole between the program's
 * libraries, above any hold.
 */
void *cl_layout_map_beside(void *at, size_t at_len, size_t len)
{
	size_t page = 4096, n = (len + page - 1) / page * page;

	if (gap_hi) {                   /* a hold was taken: the layout is kept */
		uintptr_t want = grows_down ? (uintptr_t)at - n : (uintptr_t)at + at_len;
		void *p = map_exactly(want, n, PROT_READ | PROT_WRITE, 0);
		if (p)
			return p;
	}
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/*
 * A thread's first malloc() gives it an arena of its own (64 MiB of address
 * space): taken here, while a hold lasts, it lands below the placeholder.
 */
void cl_layout_thread_arena(void)
{
	/* volatile: the compiler may drop a malloc() whose memory is only freed */
	void *volatile p = malloc(1);

	free(p);
}

struct start {
	void *(*fn)(void *);
	void *arg;
	_Atomic int ready;
	_Atomic int left;       /* the creator stopped waiting: the thread frees this */
};

static void *trampoline(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	cl_layout_thread_arena();
	atomic_store(&s->ready, 1);
	if (atomic_exchange(&s->left, 1))       /* the creator is gone: this is the last use */
		free(s);
	return fn(arg);
}

/*
 * Start a collector thread with the real pthread_create, under a hold, and
 * wait (at most a second: it takes microseconds) until it has its arena.  The
 * creator never waits longer: a thread that is slow to run gets its arena
 * wherever the kernel puts it then.  The thread is born with every signal
 * blocked (it inherits the creator's mask for the call), so that a signal sent
 * to the process never lands in it before cl_mark_internal_thread() blocks
 * them for good: the program's handler would run on a collector thread.
 */
int cl_own_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	static int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s;
	sigset_t all, old;
	int err;

	if (!create)
		create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			cl_sym("pthread_create");
	if (!create || !(s = calloc(1, sizeof(*s))))
		return -1;
	s->fn = fn;
	s->arg = arg;
	cl_layout_hold();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = create(th, NULL, trampoline, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; !err && i < 10000 && !atomic_load(&s->ready); i++) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	cl_layout_release();
	if (err || atomic_exchange(&s->left, 1))  /* no thread, or it is done with @s */
		free(s);
	return err ? -1 : 0;
}

/* The Python allocator hook's thread (sitecustomize.py) is started under a hold too. */
CL_EXPORT void gpuscope_layout_hold(void)
{
	cl_layout_hold();
}

CL_EXPORT void gpuscope_layout_release(void)
{
	cl_layout_release();
}

CL_EXPORT void gpuscope_layout_thread_arena(void)
{
	cl_layout_thread_arena();
}
