/*
 * hookcount.c - how often a program calls what gpuscope's collector
 * interposes: a preloaded library (LD_PRELOAD=hookcount.so) that counts,
 * per thread, the calls of the OS-runtime functions src/collect/osrt.c
 * wraps, and passes each call on unchanged.
 *
 * A program's idle cost under --on-demand is, for its direct part, the
 * calls its hot thread makes into those wrappers times what one wrapper
 * costs (bench/nvtx: "mutex", "read"); this gives the first factor, which
 * the timings cannot resolve.  torch_step.py --count-hooks reads the
 * launching thread's counts before and after its steps through
 * hookcount_thread() and prints them per step.
 *
 * hookcount_thread(buf, n) writes the calling thread's counts as
 * "name=count ..." (names with a count of 0 left out) and returns the
 * length; hookcount_reset() zeroes them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum {
	C_MUTEX_LOCK, C_RWLOCK_RD, C_RWLOCK_WR, C_COND_WAIT, C_COND_TIMEDWAIT,
	C_IOCTL, C_READ, C_WRITE, C_POLL, C_NANOSLEEP, C_CLOCK_NANOSLEEP,
	C_OPEN, C_CLOSE, C_SEM_WAIT, C_N
};

static const char *const names[C_N] = {
	"pthread_mutex_lock", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
	"pthread_cond_wait", "pthread_cond_timedwait", "ioctl", "read", "write",
	"poll", "nanosleep", "clock_nanosleep", "open", "close", "sem_wait",
};

static __thread unsigned long counts[C_N] __attribute__((tls_model("initial-exec")));

#define REAL(var, name) \
	do { if (!(var)) (var) = (__typeof__(var))dlsym(RTLD_NEXT, name); } while (0)
#define REAL_V(var, name, ver) \
	do { if (!(var)) (var) = (__typeof__(var))dlvsym(RTLD_NEXT, name, ver); } while (0)

EXPORT int hookcount_thread(char *buf, size_t n)
{
	size_t len = 0;
	int i;

	if (n)
		buf[0] = '\0';
	for (i = 0; i < C_N; i++) {
		if (!counts[i] || len >= n)
			continue;
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%lu", len ? " " : "",
					names[i], counts[i]);
	}
	return (int)(len < n ? len : n);
}

EXPORT void hookcount_reset(void)
{
	memset(counts, 0, sizeof(counts));
}

/* COUNTED - a counting wrapper: @ret type, @name symbol, @c its counter, @params and @args */
#define COUNTED(ret, name, c, params, args)                                    \
	EXPORT ret name params                                                 \
	{                                                                      \
		static ret (*real) params;                                     \
		REAL(real, #name);                                             \
		counts[c]++;                                                   \
		return real args;                                              \
	}

COUNTED(int, pthread_mutex_lock, C_MUTEX_LOCK, (pthread_mutex_t *m), (m))
COUNTED(int, pthread_rwlock_rdlock, C_RWLOCK_RD, (pthread_rwlock_t *l), (l))
COUNTED(int, pthread_rwlock_wrlock, C_RWLOCK_WR, (pthread_rwlock_t *l), (l))
COUNTED(ssize_t, read, C_READ, (int fd, void *buf, size_t n), (fd, buf, n))
COUNTED(ssize_t, write, C_WRITE, (int fd, const void *buf, size_t n), (fd, buf, n))
COUNTED(int, poll, C_POLL, (struct pollfd *p, nfds_t n, int ms), (p, n, ms))
COUNTED(int, nanosleep, C_NANOSLEEP, (const struct timespec *req, struct timespec *rem), (req, rem))
COUNTED(int, clock_nanosleep, C_CLOCK_NANOSLEEP,
	(clockid_t clk, int fl, const struct timespec *req, struct timespec *rem), (clk, fl, req, rem))
COUNTED(int, close, C_CLOSE, (int fd), (fd))
COUNTED(int, sem_wait, C_SEM_WAIT, (sem_t *s), (s))

/* the condition waits: glibc's default version is 2.3.2, the one programs link */
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	static int (*real)(pthread_cond_t *, pthread_mutex_t *);

	REAL_V(real, "pthread_cond_wait", "GLIBC_2.3.2");
	counts[C_COND_WAIT]++;
	return real(c, m);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	static int (*real)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

	REAL_V(real, "pthread_cond_timedwait", "GLIBC_2.3.2");
	counts[C_COND_TIMEDWAIT]++;
	return real(c, m, ts);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	REAL(real, "ioctl");
	counts[C_IOCTL]++;
	return real(fd, req, arg);
}

EXPORT int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	REAL(real, "open");
	counts[C_OPEN]++;
	return real(path, flags, mode);
}
