/*
 * core.c - the collector's identity and start: the process and thread ids,
 * the re-entry guard, symbol lookup, drop counters, and cl_init(), which
 * reads the settings and starts each part in order.  The parts, as uftrace
 * splits libmcount: settings config.c; clock clock.c; per-thread buffers,
 * the block pool and the thread registry buffers.c; what is recorded when
 * (capture windows, --delay/--duration) capture.c; the part file and the
 * writer thread writer.c; strings strings.c; endings exit.c; fork fork.c;
 * the sources (NVTX, OS runtime, CPU samples, CUPTI) behind one table in
 * sources.c; on-demand captures and the flight recorder ondemand.c.
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

/* ---- start ---- */

static _Atomic int init_state; /* 0 not yet, 1 running, 2 done */

int cl_init(void)
{
	int expect = 0, held;

	if (atomic_load(&init_state) == 2)
		return cl_config.enabled ? 0 : -1;
	if (!atomic_compare_exchange_strong(&init_state, &expect, 1))
		return atomic_load(&init_state) == 2 && cl_config.enabled ? 0 : -1;
	cl_guard_depth++;
	cl_config_read();
	/* what is mapped from here to the end goes away from the program's next mappings */
	held = cl_config.dir[0] != 0;
	if (held)
		cl_layout_hold();
	cl_real_write_fn = (uint64_t(*)(int, const void *, size_t))cl_sym("write");
	if (!cl_config.dir[0] || !cl_real_write_fn || cl_pool_init() < 0)
		goto out;
	if (cl_stage_init() < 0 || pthread_key_create(&cl_thread_key, cl_thread_exit_cb))
		goto out;
	set_error_prefix("gpuscope collector");
	atomic_store(&cl_my_pid, (uint32_t)syscall(SYS_getpid));
	cl_clock_init();
	if (cl_config.watch_fd >= 0) {
		struct pollfd p = { cl_config.watch_fd, POLLIN, 0 };
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
			goto out;   /* profile has ended: run on unrecorded */
		cl_fd_keep(cl_config.watch_fd);
		cl_watch_init(cl_config.watch_fd);
	}
	if (cl_part_start() < 0) {
		/* no directory: the profile that made it has ended (a process
		 * outlived it); the program runs on unrecorded and unwarned */
		if (errno != ENOENT)
			fprintf(stderr, "gpuscope collector: cannot write a part file in '%s': %s\n",
				cl_config.dir, strerror(errno));
		goto out;
	}
	cl_capture_init();
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
	if (held)
		cl_layout_release();
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

