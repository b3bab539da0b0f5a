/*
 * exit.c - every way a process's stream ends: the last write at exit()
 * and _exit() (cl_final), before exec (and a new stream when exec failed),
 * and from signal handlers: fatal signals and SIGINT/SIGTERM/SIGHUP/SIGPIPE
 * write every block's unflushed bytes as raw chunks with write() only, then
 * die with the default action.  Also the sigaction()/signal() interposers
 * that keep the collector's handlers invisible to the program.
 */
#include "internal.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- signal-safe flush ---- */

static void raw_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t k = (ssize_t)cl_real_write_fn(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += k;
		n -= (size_t)k;
	}
}

static void raw_chunk(unsigned type, const void *payload, size_t n)
{
	struct trace_chunk_header h;

	trace_chunk_header_fill(&h, type, 0, 0, payload, (uint32_t)n, (uint32_t)n);
	raw_write_all(cl_part.fd, &h, sizeof(h));
	if (n)
		raw_write_all(cl_part.fd, payload, n);
}

/*
 * Write every block's unflushed bytes as raw chunks, with write() only.
 * Waits up to 2 s for a writer that is in the middle of a chunk.
 */
static void crash_events(const void *p, size_t n)
{
	raw_chunk(TRACE_CHUNK_EVENTS, p, n);
}

static void crash_flush(int clean)
{
	int locked = 0;
	uint32_t me = cl_sys_gettid();
	struct timespec t0, t1;
	sigset_t old;
	size_t n;

	/*
	 * past RLIMIT_FSIZE a write fails instead of ending the program first
	 * (the signal handler's mask: its return restores it)
	 */
	cl_xfsz_hold(&old);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint32_t expect = 0;
		if (atomic_compare_exchange_strong(&cl_wlock, &expect, me) || expect == me) {
			locked = 1;   /* the writer is not in the middle of the ring either */
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) > 2000000000L)
			break;
		struct timespec ts = { 0, 1000000 };
		syscall(SYS_nanosleep, &ts, NULL);
	}
	if (!cl_part_open || atomic_load(&cl_finished))
		return;
	atomic_store(&cl_live, 0);
	n = atomic_load(&cl_nblocks_used);
	for (size_t i = 0; i < n; i++) {
		struct cl_block *b = &cl_blocks[i];
		size_t used;
		if (atomic_load(&b->state) == BLK_FREE)
			continue;
		used = atomic_load(&b->used);
		if (used > b->flushed) {
			if (cl_part_full)  /* only the counts fit (see part_write_failed) */
				atomic_fetch_add(&cl_drops[TRACE_DROP_WRITE],
						 cl_count_entries(b->data + b->flushed, used - b->flushed));
			else
				raw_chunk(TRACE_CHUNK_EVENTS, b->data + b->flushed, used - b->flushed);
			b->flushed = used;
		}
	}
	/* under --on-demand: an open capture's stop and the flight recorder's ring */
	if (!cl_part_full && locked)
		cl_od_crash(crash_events);
	{
		unsigned char buf[TRACE_DROP__COUNT * 32];
		size_t len = 0;
		for (unsigned s = 1; s < TRACE_DROP__COUNT; s++) {
			uint64_t c = atomic_load(&cl_drops[s]);
			struct trace_entry *e = (struct trace_entry *)(buf + len);
			struct trace_drops *d = (struct trace_drops *)(e + 1);
			if (!c)
				continue;
			memset(e, 0, trace_entry_size(sizeof(*d)));
			e->type = TRACE_EV_DROPS;
			e->size = (uint16_t)trace_entry_size(sizeof(*d));
			d->pid = cl_pid();
			d->source = s;
			d->count = c;
			len += e->size;
		}
		if (len)
			raw_chunk(TRACE_CHUNK_EVENTS, buf, len);
	}
	if (clean)
		raw_chunk(TRACE_CHUNK_STREAM_END, NULL, 0);
	atomic_store(&cl_finished, 1);
}

static int (*real_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!real_sigaction_fn)
		real_sigaction_fn = (int (*)(int, const struct sigaction *, struct sigaction *))cl_sym("sigaction");
	if (!real_sigaction_fn) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction_fn(sig, act, old);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction dfl;

	(void)si;
	(void)uc;
	cl_guard_depth = 1;
	if (atomic_load(&cl_live) && !cl_in_vfork_child()) {
		/* a termination request, not a crash: the stream ends cleanly */
		int clean = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE;
		if (clean)
			cl_sources_flush(1);
		crash_flush(clean);
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	errno = saved;
	raise(sig);
}

static int is_collector_handler(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_signal;
}

static const int caught_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
				   SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static int is_caught(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(caught_sigs); i++)
		if (caught_sigs[i] == sig)
			return 1;
	return 0;
}

static void collector_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = on_signal;
	sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa->sa_mask);
}

void cl_signals_install(void)
{
	static const int *sigs = caught_sigs;
	static char altstack[64 << 10];
	stack_t ss, cur;

	/* an alternate stack the program (or its launcher) set stays */
	if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_sp = altstack;
		ss.ss_size = sizeof(altstack);
		sigaltstack(&ss, NULL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(caught_sigs); i++) {
		struct sigaction old, sa;
		if (real_sigaction(sigs[i], NULL, &old) < 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue; /* the program (or its launcher) chose already */
		collector_action(&sa);
		real_sigaction(sigs[i], &sa, NULL);
	}
}

/*
 * The collector's handlers are invisible: where one is installed the
 * program is told the action is the default (Python maps an unknown C
 * handler to None, and then neither installs KeyboardInterrupt nor can
 * restore a handler it saved).  Setting a handler or SIG_IGN replaces
 * ours; setting SIG_DFL installs ours, which ends in the default action
 * (programs such as sort(1) catch SIGPIPE, clean up, then restore the
 * default and raise the signal again).
 */
static int wants_default(int sig, const struct sigaction *act)
{
	return act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
	       is_caught(sig) && atomic_load(&cl_live) && !cl_in_vfork_child();
}

CL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction ours;
	int r;

	if (wants_default(sig, act)) {
		collector_action(&ours);
		act = &ours;
	}
	r = real_sigaction(sig, act, old);

	if (r == 0 && old && is_collector_handler(old)) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = SIG_DFL;
	}
	return r;
}

CL_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	static sighandler_t (*real)(int, sighandler_t);
	struct sigaction cur;
	int ours;
	sighandler_t r;

	if (!real)
		real = (sighandler_t (*)(int, sighandler_t))cl_sym("signal");
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (handler == SIG_DFL) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		if (wants_default(sig, &dfl)) {
			if (sigaction(sig, &dfl, &cur) < 0)
				return SIG_ERR;
			return cur.sa_handler;
		}
	}
	ours = real_sigaction(sig, NULL, &cur) == 0 && is_collector_handler(&cur);
	r = real(sig, handler);
	return ours && r != SIG_ERR ? SIG_DFL : r;
}

/* ---- ending ---- */

void cl_stream_end(void)
{
	sigset_t old;
	int efbig;

	cl_xfsz_hold(&old);
	errno = 0;
	cl_od_final = 1;   /* under --on-demand: the ring goes in too (ondemand.c) */
	cl_writer_pass();
	cl_od_final = 0;
	cl_part_tail();
	if (cl_part_open) {
		cl_part_full = 0;   /* the end chunk fits in the tail's room */
		trace_writer_chunk(&cl_part, TRACE_CHUNK_STREAM_END, 0, NULL, 0, 0);
		atomic_store(&cl_part_fd, -1);
		trace_writer_close(&cl_part, 0);
		cl_part_open = 0;
	}
	efbig = errno == EFBIG;
	cl_xfsz_release(&old, efbig);
}

void cl_final(void)
{
	int guard = cl_guard_depth;

	if (!atomic_load(&cl_live) || cl_in_vfork_child())
		return;
	cl_guard_depth = 1;
	if (atomic_load(&cl_child_pending))
		cl_child_start();
	cl_sources_flush(1);
	cl_sources_stop();
	if (cl_wlock_take(1) == 0) {
		struct cl_thread *t = cl_self;
		if (t && t != CL_DEAD && !t->internal)
			cl_emit_thread(t->tid, 0, TRACE_THREAD_EXIT, cl_now());
		atomic_store(&cl_live, 0);
		cl_stream_end();
		atomic_store(&cl_finished, 1);
		/* the lock stays taken: nothing more is written */
	}
	cl_guard_depth = guard;
}

int cl_exec_locked;

void cl_before_exec(void)
{
	if (!atomic_load(&cl_live) || cl_in_vfork_child() || atomic_load(&cl_child_pending))
		return;
	cl_guard_depth++;
	cl_sources_flush(1);
	if (cl_wlock_take(1) == 0) {
		cl_stream_end();
		cl_exec_locked = 1;
	}
	cl_guard_depth--;
}

void cl_after_exec_failed(void)
{
	if (!cl_exec_locked)
		return;
	cl_guard_depth++;
	cl_exec_locked = 0;
	atomic_fetch_add(&cl_str_gen, 1);   /* a new stream: strings are defined again */
	if (cl_part_start() < 0)
		atomic_store(&cl_live, 0);
	cl_wlock_drop();
	cl_guard_depth--;
}
