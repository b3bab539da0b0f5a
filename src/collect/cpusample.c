/*
 * cpusample.c - per-thread CPU time from /proc/self/task/TID/schedstat.
 *
 * A thread of the collector wakes cpu_sample_hz times a second, lists
 * /proc/self/task, keeps one open schedstat fd per thread (pread, so a
 * sample costs one syscall) and writes a TRACE_EV_CPU_SAMPLE when a
 * thread's cumulative run time changed.  A thread seen for the first time
 * gets a TRACE_EV_THREAD entry, with its name from comm when it differs
 * from the process's (an inherited name says nothing).
 *
 * Every descriptor it keeps lies above 700, the task directory's too
 * (listed again with getdents64, not opened each time), and those it needs
 * from the start are opened before the program runs on: a descriptor
 * opened for a moment takes the lowest free number, which the program may
 * be about to open or may be checking it closed.  Only a thread the
 * program starts later costs that moment.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct task {
	uint32_t tid;
	int fd;
	dev_t dev;                /* of the schedstat file: the program may reuse */
	ino_t ino;                /* the descriptor number after closing it */
	int seen;
	uint64_t run_ns;
	int sampled;
	int announced;            /* its TRACE_EV_THREAD entry written */
	char comm[64];
	size_t comm_len;
};

static struct task *tasks;
static size_t ntasks, atasks;
static char main_comm[64];
static pthread_t sampler_th;
static _Atomic int sampler_stop;
static int sampler_running;
static _Atomic uint32_t sampler_tid;
static int task_dir = -1;         /* /proc/self/task */
static dev_t task_dir_dev;
static ino_t task_dir_ino;

/*
 * open(@path) with O_CLOEXEC, moved above the part file, out of the way of
 * the program's descriptors, and kept: the program's close(), close_range()
 * and closefrom() spare it (osrt.c).
 */
static int open_high(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 701);
		if (hi >= 0) {
			close(fd);
			fd = hi;
			cl_fd_keep(fd);
		}
	}
	return fd;
}

/* Whether @fd is still the file (@dev, @ino): the program may have dup2()ed onto it. */
static int still_ours(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Close @fd, one of ours, unless the program dup2()ed one of its files onto it. */
static void close_ours(int fd, dev_t dev, ino_t ino)
{
	cl_fd_forget(fd);
	if (still_ours(fd, dev, ino))
		close(fd);
}

/* The task directory, opened again when the program dup2()ed onto it. */
static int task_dir_fd(void)
{
	struct stat st;

	if (still_ours(task_dir, task_dir_dev, task_dir_ino))
		return task_dir;
	cl_fd_forget(task_dir);
	task_dir = open_high("/proc/self/task", O_RDONLY | O_DIRECTORY);
	if (task_dir >= 0 && fstat(task_dir, &st) == 0) {
		task_dir_dev = st.st_dev;
		task_dir_ino = st.st_ino;
	}
	return task_dir;
}

static size_t read_comm(uint32_t tid, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return 0;
	while (n && (buf[n - 1] == '\n' || !buf[n - 1]))
		n--;
	buf[n] = 0;
	cl_utf8_clean(buf, (size_t)n); /* the kernel cuts names at 15 bytes */
	return (size_t)n;
}

static int is_internal(uint32_t tid)
{
	return tid == atomic_load(&sampler_tid) || tid == cl_writer_tid;
}

/*
 * Start following thread @tid: its schedstat descriptor and its name.
 * Writes nothing (the forked child's first hook opens the main thread's
 * while it holds the start lock): task_announce() does, on the sampler.
 */
static struct task *task_open(uint32_t tid)
{
	char path[64];
	struct task *t;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
	fd = open_high(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	if (ntasks == atasks) {
		size_t na = atasks ? atasks * 2 : 64;
		struct task *nt = realloc(tasks, na * sizeof(*nt));
		if (!nt) {
			cl_fd_forget(fd);
			close(fd);
			return NULL;
		}
		tasks = nt;
		atasks = na;
	}
	t = &tasks[ntasks++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->fd = fd;
	{
		struct stat st;
		if (fstat(fd, &st) == 0) {
			t->dev = st.st_dev;
			t->ino = st.st_ino;
		}
	}
	t->comm_len = read_comm(tid, t->comm, sizeof(t->comm));
	return t;
}

/* The thread's entry, with its name when it has its own. */
static void task_announce(struct task *t)
{
	if (t->tid == cl_pid())
		snprintf(main_comm, sizeof(main_comm), "%s", t->comm);
	if (t->comm_len && (t->tid == cl_pid() || strcmp(t->comm, main_comm)))
		cl_emit_thread(t->tid, cl_intern(t->comm, t->comm_len), 0, cl_now());
	else
		cl_emit_thread(t->tid, 0, 0, cl_now());
	t->announced = 1;
}

static struct task *task_add(uint32_t tid)
{
	struct task *t = task_open(tid);

	if (t)
		task_announce(t);
	return t;
}

/* Close @t's descriptor only if it is still ours (the program may have closed and reused it). */
static void task_drop(struct task *t)
{
	close_ours(t->fd, t->dev, t->ino);
}

/* Parse "run wait slices\n"; 0 when it is not schedstat's format. */
static int parse_schedstat(const char *buf, uint64_t *run, uint64_t *wait)
{
	char *end;

	*run = strtoull(buf, &end, 10);
	if (end == buf || *end != ' ')
		return 0;
	buf = end + 1;
	*wait = strtoull(buf, &end, 10);
	return end != buf && *end == ' ';
}

/* A thread seen in the listing: mark it, or start following it. */
static void task_seen(uint32_t tid)
{
	size_t i;

	if (!tid || is_internal(tid))
		return;
	for (i = 0; i < ntasks && tasks[i].tid != tid; i++)
		;
	if (i < ntasks)
		tasks[i].seen = 1;
	else if (task_add(tid))
		tasks[ntasks - 1].seen = 1;
}

/* getdents64's record (the raw system call: its glibc wrapper is 2.30+) */
struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static void sample_once(void)
{
	int dfd = task_dir_fd();
	union { char c[4096]; uint64_t align; } ents;
	long got;
	size_t out = 0;

	if (dfd < 0 || lseek(dfd, 0, SEEK_SET) < 0)
		return;
	for (size_t i = 0; i < ntasks; i++)
		tasks[i].seen = 0;
	/* the main thread first, so that its name is known before the others' */
	if (!ntasks)
		task_open(cl_pid());
	for (size_t i = 0; i < ntasks; i++)
		if (!tasks[i].announced)
			task_announce(&tasks[i]);
	while ((got = syscall(SYS_getdents64, dfd, ents.c, sizeof(ents.c))) > 0) {
		for (long off = 0; off < got;) {
			const struct dirent64_raw *de = (const void *)(ents.c + off);
			if (de->reclen == 0)
				break;
			task_seen((uint32_t)strtoul(de->name, NULL, 10));
			off += de->reclen;
		}
	}
	for (size_t i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];
		char buf[128];
		ssize_t n = t->seen ? pread(t->fd, buf, sizeof(buf) - 1, 0) : -1;
		uint64_t run, wait;
		if (n > 0)
			buf[n] = 0;
		if (n <= 0 || !parse_schedstat(buf, &run, &wait)) {
			task_drop(t);
			continue;
		}
		{
			if (!t->sampled || run != t->run_ns) {
				struct trace_cpu_sample *s = cl_reserve(TRACE_EV_CPU_SAMPLE, sizeof(*s));
				if (s) {
					s->time = cl_now();
					s->run_ns = run;
					s->wait_ns = wait;
					s->pid = cl_pid();
					s->tid = t->tid;
					cl_commit();
				}
				t->run_ns = run;
				t->sampled = 1;
			}
		}
		tasks[out++] = *t;
	}
	ntasks = out;
}

static void *sampler_main(void *arg)
{
	uint64_t period = 1000000000u / cl_config.cpu_sample_hz;

	(void)arg;
	cl_mark_internal_thread();
	prctl(PR_SET_NAME, "gpuscope-cpu", 0, 0, 0);
	atomic_store(&sampler_tid, (uint32_t)syscall(SYS_gettid));
	while (!atomic_load(&sampler_stop) && atomic_load(&cl_live)) {
		struct timespec ts = { (time_t)(period / 1000000000u), (long)(period % 1000000000u) };
		sample_once();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int cl_cpusample_start(void)
{
	if (!cl_config.cpu_sample_hz || sampler_running)
		return 0;
	/*
	 * The task directory and the main thread's descriptors are opened
	 * here, before the program runs on (the constructor, or the forked
	 * child's first hook), not on the thread beside it: only a thread
	 * started later costs a moment's low descriptor.
	 */
	task_dir_fd();
	if (!ntasks)
		task_open(cl_pid());
	atomic_store(&sampler_stop, 0);
	if (cl_own_thread_start(&sampler_th, sampler_main, NULL) < 0)
		return -1;
	sampler_running = 1;
	return 0;
}

void cl_cpusample_stop(void)
{
	atomic_store(&sampler_stop, 1);
}

void cl_cpusample_atfork_child(void)
{
	/* the fds are the parent's threads' */
	for (size_t i = 0; i < ntasks; i++)
		task_drop(&tasks[i]);
	ntasks = 0;
	/* the parent's task directory: the child lists its own */
	close_ours(task_dir, task_dir_dev, task_dir_ino);
	task_dir = -1;
	main_comm[0] = 0;
	sampler_running = 0;
	atomic_store(&sampler_tid, 0);
	atomic_store(&sampler_stop, 0);
}
