/*
 * writer.c - the part file and the writer thread.
 *
 * A background thread wakes every flush_ns, takes the writer lock (a spin
 * word holding the owner's tid, so that a signal handler can take it too),
 * copies every block's new bytes [flushed, used) into a staging buffer,
 * writes them as zstd chunks into this process's part file, and frees
 * retired blocks once written.  Only the lock holder touches `flushed`, the
 * staging buffer and the part file.
 *
 * Ending (exit.c).  return/exit() (destructor), _exit() (interposed) and
 * exec (interposed) take the writer lock and write everything; fatal
 * signals and SIGINT/SIGTERM write every block's unflushed bytes as raw
 * chunks with write() only, then die with the default action.  fork()
 * (fork.c) gives the child a new part file, started lazily at its first
 * record, so that a child that only execs leaves no empty part behind.
 * The descriptors the collector keeps (the part file, profile's liveness
 * pipe) are spared by the program's close calls (cl_fd_*).
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
			cl_block_free(b);
	}
	cl_capture_timed_edges();
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

/*
 * The first time glibc gives memory of a thread's own arena back (a free()
 * that leaves the top of its heap over the trim threshold, 128 KiB unless
 * set otherwise), it reads /proc/sys/vm/overcommit_memory, and for that
 * moment holds the lowest free descriptor.  On this thread, while the
 * program runs, that could be the number the program is about to open (zstd
 * resizing its workspace did it: tests/collect/close_range.sh, under load).
 * glibc keeps the answer for the process, so it is asked once here, while
 * cl_writer_start() waits and the program has not begun: 1 MiB in blocks
 * each far under the 128 KiB above which malloc maps memory of its own, all
 * freed again.  The thresholds stay as they were (only a free of mapped
 * memory moves them).
 */
static void arena_trim_once(void)
{
	enum { NBLK = 64, BLK = 16 << 10 };
	void *blk[NBLK];
	int n;

	for (n = 0; n < NBLK && (blk[n] = malloc(BLK)); n++)
		;
	while (n-- > 0)
		free(blk[n]);
}

static void *writer_main(void *arg)
{
	int busy = 0, w;

	(void)arg;
	cl_mark_internal_thread();
	prctl(PR_SET_NAME, "gpuscope-write", 0, 0, 0);
	arena_trim_once();
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
	if (cl_own_thread_start(&writer_th, writer_main, NULL) < 0)
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

/* The staging buffer: 8 MiB, or one block when blocks are larger; 0 or -1. */
int cl_stage_init(void)
{
	stage_cap = 8u << 20;
	if (stage_cap < cl_config.buffer_bytes)
		stage_cap = cl_config.buffer_bytes;
	stage = malloc(stage_cap);
	return stage ? 0 : -1;
}

/* profile's liveness pipe @fd: remember which file it is, to tell it from a reused descriptor */
void cl_watch_init(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0) {
		watch_dev = st.st_dev;
		watch_ino = st.st_ino;
	}
}
