/*
 * osrt.c - OS-runtime interposers (LD_PRELOAD): blocking libc and pthread
 * calls longer than --osrt-threshold, plus the hooks that follow threads,
 * exec and _exit.
 *
 * Every wrapper resolves the real function lazily with dlsym(RTLD_NEXT)
 * (a wrapper can run before any constructor), does nothing but call it
 * while the thread is inside the collector (the re-entrancy guard), and
 * keeps errno.  Calls made inside libc (fopen's open, sleep's nanosleep)
 * do not pass through the PLT and are not seen: one record per call the
 * program made.  pthread_mutex_lock and the rwlock locks try the lock
 * first and time only the contended case, as nsys does.
 */
#undef _FORTIFY_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RESOLVE(var, name) \
	do { if (!(var)) (var) = (__typeof__(var))cl_sym(name); } while (0)
#define RESOLVE_V(var, name, ver) \
	do { if (!(var)) (var) = (__typeof__(var))cl_vsym(name, ver); } while (0)

static inline int osrt_enter(void)
{
	if (!atomic_load_explicit(&cl_live, memory_order_relaxed) ||
	    !(cl_config.trace & CL_TRACE_OSRT))
		return 0;
	return cl_guard_enter();
}

/* Record the call when it took at least the threshold; leaves the guard. */
static void osrt_leave(unsigned func, uint64_t t0, int64_t result, int err, int64_t arg)
{
	uint64_t t1 = cl_now();

	if (t1 - t0 >= cl_config.osrt_threshold_ns) {
		struct trace_osrt *r = cl_reserve(TRACE_EV_OSRT, sizeof(*r));
		if (r) {
			r->start = t0;
			r->end = t1;
			r->pid = cl_pid();
			r->tid = cl_tid();
			r->func = (uint16_t)func;
			r->err = err;
			r->result = result;
			r->arg = arg;
			cl_commit();
		}
	}
	cl_guard_leave();
}

/*
 * WRAP - a wrapper for a call that returns -1 (or NULL) and sets errno on
 * failure.  @ret type, @name symbol, @func enum trace_osrt_func, @params and
 * @args the parameter list and the call's arguments, @argval the recorded
 * argument, @failed an expression of r.
 */
#define WRAP(ret, name, func, params, args, argval, failed)                     \
	CL_EXPORT ret name params                                              \
	{                                                                      \
		static ret (*real) params;                                     \
		ret r;                                                         \
		uint64_t t0;                                                   \
		int e;                                                         \
		RESOLVE(real, #name);                                          \
		if (!osrt_enter())                                             \
			return real args;                                      \
		t0 = cl_now();                                                 \
		r = real args;                                                 \
		e = errno;                                                     \
		osrt_leave(func, t0, (int64_t)(r), (failed) ? e : 0, (int64_t)(argval)); \
		errno = e;                                                     \
		return r;                                                      \
	}

/* The same for pthread-style calls that return an error number. */
#define WRAP_PT(name, func, params, args, ver)                                  \
	CL_EXPORT int name params                                              \
	{                                                                      \
		static int (*real) params;                                     \
		int r;                                                         \
		uint64_t t0;                                                   \
		int e;                                                         \
		RESOLVE_V(real, #name, ver);                                   \
		if (!osrt_enter())                                             \
			return real args;                                      \
		e = errno;                                                     \
		t0 = cl_now();                                                 \
		r = real args;                                                 \
		osrt_leave(func, t0, r, r, -1);                                \
		errno = e;                                                     \
		return r;                                                      \
	}

WRAP(ssize_t, read, OSRT_READ, (int fd, void *buf, size_t n), (fd, buf, n), fd, r < 0)
WRAP(ssize_t, write, OSRT_WRITE, (int fd, const void *buf, size_t n), (fd, buf, n), fd, r < 0)
WRAP(ssize_t, pread, OSRT_PREAD, (int fd, void *buf, size_t n, off_t o), (fd, buf, n, o), fd, r < 0)
WRAP(ssize_t, pwrite, OSRT_PWRITE, (int fd, const void *buf, size_t n, off_t o), (fd, buf, n, o), fd, r < 0)
WRAP(ssize_t, pread64, OSRT_PREAD, (int fd, void *buf, size_t n, off64_t o), (fd, buf, n, o), fd, r < 0)
WRAP(ssize_t, pwrite64, OSRT_PWRITE, (int fd, const void *buf, size_t n, off64_t o), (fd, buf, n, o), fd, r < 0)
WRAP(ssize_t, readv, OSRT_READV, (int fd, const struct iovec *v, int n), (fd, v, n), fd, r < 0)
WRAP(ssize_t, writev, OSRT_WRITEV, (int fd, const struct iovec *v, int n), (fd, v, n), fd, r < 0)
WRAP(ssize_t, recv, OSRT_RECV, (int fd, void *buf, size_t n, int fl), (fd, buf, n, fl), fd, r < 0)
WRAP(ssize_t, recvfrom, OSRT_RECVFROM,
     (int fd, void *buf, size_t n, int fl, struct sockaddr *a, socklen_t *al),
     (fd, buf, n, fl, a, al), fd, r < 0)
WRAP(ssize_t, recvmsg, OSRT_RECVMSG, (int fd, struct msghdr *m, int fl), (fd, m, fl), fd, r < 0)
WRAP(ssize_t, send, OSRT_SEND, (int fd, const void *buf, size_t n, int fl), (fd, buf, n, fl), fd, r < 0)
WRAP(ssize_t, sendto, OSRT_SENDTO,
     (int fd, const void *buf, size_t n, int fl, const struct sockaddr *a, socklen_t al),
     (fd, buf, n, fl, a, al), fd, r < 0)
WRAP(ssize_t, sendmsg, OSRT_SENDMSG, (int fd, const struct msghdr *m, int fl), (fd, m, fl), fd, r < 0)
WRAP(int, connect, OSRT_CONNECT, (int fd, const struct sockaddr *a, socklen_t al), (fd, a, al), fd, r < 0)
WRAP(int, accept, OSRT_ACCEPT, (int fd, struct sockaddr *a, socklen_t *al), (fd, a, al), fd, r < 0)
WRAP(int, accept4, OSRT_ACCEPT, (int fd, struct sockaddr *a, socklen_t *al, int fl), (fd, a, al, fl), fd, r < 0)
WRAP(int, poll, OSRT_POLL, (struct pollfd *p, nfds_t n, int ms), (p, n, ms), n, r < 0)
WRAP(int, ppoll, OSRT_PPOLL,
     (struct pollfd *p, nfds_t n, const struct timespec *ts, const sigset_t *ss), (p, n, ts, ss), n, r < 0)
WRAP(int, select, OSRT_SELECT, (int n, fd_set *r_, fd_set *w, fd_set *x, struct timeval *tv),
     (n, r_, w, x, tv), n, r < 0)
WRAP(int, pselect, OSRT_PSELECT,
     (int n, fd_set *r_, fd_set *w, fd_set *x, const struct timespec *ts, const sigset_t *ss),
     (n, r_, w, x, ts, ss), n, r < 0)
WRAP(int, epoll_wait, OSRT_EPOLL_WAIT, (int fd, struct epoll_event *ev, int n, int ms),
     (fd, ev, n, ms), fd, r < 0)
WRAP(int, epoll_pwait, OSRT_EPOLL_PWAIT,
     (int fd, struct epoll_event *ev, int n, int ms, const sigset_t *ss), (fd, ev, n, ms, ss), fd, r < 0)
WRAP(int, nanosleep, OSRT_NANOSLEEP, (const struct timespec *req, struct timespec *rem), (req, rem),
     -1, r < 0)
WRAP(int, usleep, OSRT_USLEEP, (useconds_t us), (us), us, r < 0)
WRAP(unsigned, sleep, OSRT_SLEEP, (unsigned s), (s), s, 0)
WRAP(int, fsync, OSRT_FSYNC, (int fd), (fd), fd, r < 0)
WRAP(int, fdatasync, OSRT_FDATASYNC, (int fd), (fd), fd, r < 0)
WRAP(pid_t, waitpid, OSRT_WAITPID, (pid_t p, int *st, int opt), (p, st, opt), p, r < 0)
WRAP(pid_t, wait, OSRT_WAIT, (int *st), (st), -1, r < 0)
WRAP(FILE *, fopen, OSRT_FOPEN, (const char *p, const char *m), (p, m), -1, !r)
WRAP(FILE *, fopen64, OSRT_FOPEN, (const char *p, const char *m), (p, m), -1, !r)
WRAP(size_t, fread, OSRT_FREAD, (void *p, size_t s, size_t n, FILE *f), (p, s, n, f), s * n, 0)
WRAP(size_t, fwrite, OSRT_FWRITE, (const void *p, size_t s, size_t n, FILE *f), (p, s, n, f), s * n, 0)
WRAP_PT(pthread_cond_wait, OSRT_COND_WAIT, (pthread_cond_t *c, pthread_mutex_t *m), (c, m), "GLIBC_2.3.2")
WRAP_PT(pthread_cond_timedwait, OSRT_COND_TIMEDWAIT,
	(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts), (c, m, ts), "GLIBC_2.3.2")
WRAP_PT(pthread_join, OSRT_JOIN, (pthread_t t, void **ret), (t, ret), "GLIBC_2.34")
WRAP(int, sem_wait, OSRT_SEM_WAIT, (sem_t *s), (s), -1, r < 0)
WRAP(int, sem_timedwait, OSRT_SEM_TIMEDWAIT, (sem_t *s, const struct timespec *ts), (s, ts), -1, r < 0)

/* clock_nanosleep returns an error number instead of setting errno. */
CL_EXPORT int clock_nanosleep(clockid_t clk, int fl, const struct timespec *req, struct timespec *rem)
{
	static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);
	uint64_t t0;
	int r;

	RESOLVE(real, "clock_nanosleep");
	if (!osrt_enter())
		return real(clk, fl, req, rem);
	t0 = cl_now();
	r = real(clk, fl, req, rem);
	osrt_leave(OSRT_CLOCK_NANOSLEEP, t0, r, r, -1);
	return r;
}

/* open and openat take a mode only with O_CREAT or O_TMPFILE. */
static int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define WRAP_OPEN(name, func)                                                   \
	CL_EXPORT int name(const char *path, int flags, ...)                   \
	{                                                                      \
		static int (*real)(const char *, int, ...);                    \
		mode_t mode = 0;                                               \
		uint64_t t0;                                                   \
		int r, e;                                                      \
		if (needs_mode(flags)) {                                       \
			va_list ap;                                            \
			va_start(ap, flags);                                   \
			mode = (mode_t)va_arg(ap, int);                        \
			va_end(ap);                                            \
		}                                                              \
		RESOLVE(real, #name);                                          \
		if (!osrt_enter())                                             \
			return real(path, flags, mode);                        \
		t0 = cl_now();                                                 \
		r = real(path, flags, mode);                                   \
		e = errno;                                                     \
		osrt_leave(func, t0, r, r < 0 ? e : 0, -1);                    \
		errno = e;                                                     \
		return r;                                                      \
	}

#define WRAP_OPENAT(name, func)                                                 \
	CL_EXPORT int name(int dfd, const char *path, int flags, ...)          \
	{                                                                      \
		static int (*real)(int, const char *, int, ...);               \
		mode_t mode = 0;                                               \
		uint64_t t0;                                                   \
		int r, e;                                                      \
		if (needs_mode(flags)) {                                       \
			va_list ap;                                            \
			va_start(ap, flags);                                   \
			mode = (mode_t)va_arg(ap, int);                        \
			va_end(ap);                                            \
		}                                                              \
		RESOLVE(real, #name);                                          \
		if (!osrt_enter())                                             \
			return real(dfd, path, flags, mode);                   \
		t0 = cl_now();                                                 \
		r = real(dfd, path, flags, mode);                              \
		e = errno;                                                     \
		osrt_leave(func, t0, r, r < 0 ? e : 0, dfd);                   \
		errno = e;                                                     \
		return r;                                                      \
	}

WRAP_OPEN(open, OSRT_OPEN)
WRAP_OPEN(open64, OSRT_OPEN)
WRAP_OPENAT(openat, OSRT_OPENAT)
WRAP_OPENAT(openat64, OSRT_OPENAT)

CL_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	void *arg;
	va_list ap;
	uint64_t t0;
	int r, e;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	RESOLVE(real, "ioctl");
	if (!osrt_enter())
		return real(fd, req, arg);
	t0 = cl_now();
	r = real(fd, req, arg);
	e = errno;
	osrt_leave(OSRT_IOCTL, t0, r, r < 0 ? e : 0, fd);
	errno = e;
	return r;
}

/*
 * close() of the collector's part file by the program (daemons that close
 * every descriptor) would make later chunks land in whatever file reuses
 * the number: pretend it worked.  The same for the collector's other
 * lasting descriptors (cl_fd_keep), which it would otherwise open again.
 */
CL_EXPORT int close(int fd)
{
	static int (*real)(int);

	RESOLVE(real, "close");
	if (fd >= 0 && !cl_guard_depth && cl_fd_spared(fd))
		return 0;
	return real(fd);
}

/*
 * dup2()/dup3() onto the part file's descriptor: the part file moves first.
 * Onto another kept descriptor: the number is the program's from now on
 * (the sampler sees its file gone and opens its own again).
 */
static void dup_onto(int newfd)
{
	if (newfd < 0 || cl_guard_depth)
		return;
	if (newfd == atomic_load_explicit(&cl_part_fd, memory_order_relaxed))
		cl_part_fd_move(newfd);
	else
		cl_fd_forget(newfd);
}

CL_EXPORT int dup2(int oldfd, int newfd)
{
	static int (*real)(int, int);

	RESOLVE(real, "dup2");
	dup_onto(newfd);
	return real(oldfd, newfd);
}

CL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	static int (*real)(int, int, int);

	RESOLVE(real, "dup3");
	dup_onto(newfd);
	return real(oldfd, newfd, flags);
}

/*
 * close_range()/closefrom() over the collector's descriptors (Python's
 * os.closerange, subprocess's close_fds, daemons): everything but them is
 * closed, one range at a time between them.  CLOSE_RANGE_CLOEXEC only marks
 * descriptors and passes through.
 */
CL_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	static int (*real)(unsigned int, unsigned int, int);
	int spared[CL_KEEP_FDS + 1];
	size_t n;
	unsigned int lo = first;
	int r = 0;

	RESOLVE(real, "close_range");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (cl_guard_depth || (flags & CLOSE_RANGE_CLOEXEC) || first > last)
		return real(first, last, flags);
	n = cl_fds_spared(first, last, spared, sizeof(spared) / sizeof(spared[0]));
	for (size_t i = 0; i < n && r == 0; i++) {
		unsigned int s = (unsigned int)spared[i];
		if (s > lo)
			r = real(lo, s - 1, flags);
		lo = s + 1;
	}
	if (r == 0 && (!n || (unsigned int)spared[n - 1] < last))
		r = real(lo, last, flags);
	return r;
}

CL_EXPORT void closefrom(int lowfd)
{
	static void (*real)(int);
	static int (*real_close)(int);
	int spared[CL_KEEP_FDS + 1];
	size_t n;
	int lo = lowfd;

	RESOLVE(real, "closefrom");
	RESOLVE(real_close, "close");
	if (cl_guard_depth || lowfd < 0) {
		if (real)
			real(lowfd);
		return;
	}
	if (close_range((unsigned int)lowfd, ~0U, 0) == 0)
		return;
	/* a kernel without close_range: one at a time up to the last spared one */
	n = cl_fds_spared((unsigned int)lowfd, ~0U, spared, sizeof(spared) / sizeof(spared[0]));
	for (size_t i = 0; i < n; i++) {
		for (int fd = lo; fd < spared[i] && real_close; fd++)
			real_close(fd);
		lo = spared[i] + 1;
	}
	if (real)
		real(lo);
}

/*
 * ---- locks: time only the contended case ----
 *
 * The try comes first, before the guard: an uncontended lock (nearly all
 * of them) costs one extra indirect call and the try.  Outside a capture
 * (--on-demand idle, or outside a capture range) a wrapper jumps to the
 * real function before any other work, so the flight recorder's ring holds
 * no lock waits and a capture's records have them from its start.
 *
 * Even the jump costs 1.8-2.8 ns a lock on the H200 machine (bench/nvtx,
 * "mutex", "rwlock"), and a launch-bound PyTorch step takes 1,840 of them
 * (1,180 mutex and 660 rwlock locks a step of 40 operations,
 * bench/overhead/hookcount.c): half of --on-demand's idle cost there
 * (bench/results/lockstep-b-h200-2026-12-02/).  So this file is compiled a
 * second time without the lock wrappers (CL_NO_LOCK_HOOKS:
 * libgpuscope-collect-nolock.so), which profile preloads under --on-demand
 * without --lock-waits and when OS-runtime calls are not traced.
 */
#define WRAP_LOCK(name, tryname, func, type)                                    \
	static int (*name##_real)(type *);                                     \
	static __attribute__((noinline)) int name##_traced(type *m)            \
	{                                                                      \
		static int (*try)(type *);                                     \
		uint64_t t0;                                                   \
		int r, e;                                                      \
		RESOLVE(name##_real, #name);                                   \
		RESOLVE(try, #tryname);                                        \
		if (!try || !atomic_load_explicit(&cl_capture_on, memory_order_relaxed)) \
			return name##_real(m);                                 \
		r = try(m);                                                    \
		if (r != EBUSY)                                                \
			return r;                                              \
		if (!osrt_enter())                                             \
			return name##_real(m);                                 \
		e = errno;                                                     \
		t0 = cl_now();                                                 \
		r = name##_real(m);                                            \
		osrt_leave(func, t0, r, r, -1);                                \
		errno = e;                                                     \
		return r;                                                      \
	}                                                                      \
	CL_EXPORT int name(type *m)                                            \
	{                                                                      \
		int (*real)(type *) = name##_real;                             \
		if (real && !atomic_load_explicit(&cl_capture_on, memory_order_relaxed)) \
			return real(m);                                        \
		return name##_traced(m);                                       \
	}

#ifndef CL_NO_LOCK_HOOKS   /* libgpuscope-collect-nolock.so (src/collect/CMakeLists.txt) */
WRAP_LOCK(pthread_mutex_lock, pthread_mutex_trylock, OSRT_MUTEX_LOCK, pthread_mutex_t)
WRAP_LOCK(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, OSRT_RWLOCK_RDLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, OSRT_RWLOCK_WRLOCK, pthread_rwlock_t)
#endif

/* ---- threads ---- */

struct start_arg {
	void *(*fn)(void *);
	void *arg;
	struct cl_thread *t;
};

static void *start_thread(void *p)
{
	struct start_arg a = *(struct start_arg *)p;

	free(p);
	cl_thread_start(a.t);
	return a.fn(a.arg);
}

CL_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start_arg *a;
	int r;

	RESOLVE(real, "pthread_create");
	if (!atomic_load(&cl_live) || !cl_guard_enter())
		return real(th, attr, fn, arg);
	a = malloc(sizeof(*a));
	if (a)
		a->t = cl_thread_prepare();
	if (!a || !a->t) {
		free(a);
		cl_guard_leave();
		return real(th, attr, fn, arg);
	}
	a->fn = fn;
	a->arg = arg;
	r = real(th, attr, start_thread, a);
	if (r) {
		cl_thread_release(a->t);
		free(a);
	}
	else
		a->t->self = *th;   /* the thread sets it too; a lookup may come first */
	cl_guard_leave();
	return r;
}

CL_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	static int (*real)(pthread_t, const char *);
	int r;

	RESOLVE(real, "pthread_setname_np");
	r = real(th, name);
	if (r == 0 && atomic_load(&cl_live) && cl_guard_enter()) {
		uint32_t tid = pthread_equal(th, pthread_self()) ? cl_tid() : cl_thread_tid_of(th);
		if (tid)
			cl_emit_thread(tid, cl_intern(name, strlen(name)), 0, cl_now());
		cl_guard_leave();
	}
	return r;
}

/* ---- exec and _exit ---- */

/*
 * An exec of a path that does not exist or may not be run fails without
 * ending the stream: shells (dash) try execve() along $PATH, and each
 * failed try would otherwise start a new part of the same process.
 */
static int exec_cannot_run(const char *path)
{
	int e = errno, r;

	if (!path)
		return 0;
	r = faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR || errno == EACCES);
	errno = e;
	return r;
}

CL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);
	int r, e;

	RESOLVE(real, "execve");
	if (exec_cannot_run(path))
		return real(path, argv, envp);
	cl_before_exec();
	r = real(path, argv, envp);
	e = errno;
	cl_after_exec_failed();
	errno = e;
	return r;
}

CL_EXPORT int execv(const char *path, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	int r, e;

	RESOLVE(real, "execv");
	if (exec_cannot_run(path))
		return real(path, argv);
	cl_before_exec();
	r = real(path, argv);
	e = errno;
	cl_after_exec_failed();
	errno = e;
	return r;
}

CL_EXPORT int execvp(const char *file, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	int r, e;

	RESOLVE(real, "execvp");
	cl_before_exec();
	r = real(file, argv);
	e = errno;
	cl_after_exec_failed();
	errno = e;
	return r;
}

CL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);
	int r, e;

	RESOLVE(real, "execvpe");
	cl_before_exec();
	r = real(file, argv, envp);
	e = errno;
	cl_after_exec_failed();
	errno = e;
	return r;
}

CL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	static int (*real)(int, char *const[], char *const[]);
	int r, e;

	RESOLVE(real, "fexecve");
	cl_before_exec();
	r = real(fd, argv, envp);
	e = errno;
	cl_after_exec_failed();
	errno = e;
	return r;
}

/*
 * The execl family calls execve inside libc, out of our reach: gather the
 * arguments and go through our execv/execvp/execve.
 */
#define EXECL_MAX 4096
#define GATHER_ARGS(first, ap, argv, n)                                  \
	do {                                                             \
		(argv)[0] = (char *)(first);                             \
		(n) = 1;                                                 \
		while ((argv)[(n) - 1] && (n) < EXECL_MAX)               \
			(argv)[(n)++] = va_arg(ap, char *);              \
		if ((argv)[(n) - 1]) {                                   \
			va_end(ap);                                      \
			errno = E2BIG;                                   \
			return -1;                                       \
		}                                                        \
	} while (0)

CL_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX];
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv, n);
	va_end(ap);
	return execv(path, argv);
}

CL_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[EXECL_MAX];
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv, n);
	va_end(ap);
	return execvp(file, argv);
}

CL_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX];
	char *const *envp;
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv, n);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

CL_EXPORT void _exit(int status)
{
	static void (*real)(int);

	RESOLVE(real, "_exit");
	cl_final();
	real(status);
	__builtin_unreachable();
}

CL_EXPORT void _Exit(int status)
{
	static void (*real)(int);

	RESOLVE(real, "_Exit");
	cl_final();
	real(status);
	__builtin_unreachable();
}
