/*
 * fork.c - fork() and the process tree: the locks taken across fork, and a
 * child's fresh start (its own part file, begun lazily at its first record,
 * so that a child that only execs leaves no empty part behind; the
 * parent's unwritten records stay the parent's).
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

/* ---- fork ---- */

void cl_atfork_prepare(void)
{
	if (!atomic_load(&cl_live))
		return;
	cl_guard_depth++;
	cl_wlock_take(0);
	pthread_mutex_lock(&cl_str_lock);
	pthread_mutex_lock(&cl_reg_lock);
	pthread_mutex_lock(&cl_pool_lock);
}

void cl_atfork_parent(void)
{
	if (!atomic_load(&cl_live))
		return;
	pthread_mutex_unlock(&cl_pool_lock);
	pthread_mutex_unlock(&cl_reg_lock);
	pthread_mutex_unlock(&cl_str_lock);
	cl_wlock_drop();
	cl_guard_depth--;
}

void cl_atfork_child(void)
{
	struct cl_thread *t = cl_self;
	size_t n;

	cl_layout_atfork_child();
	if (!atomic_load(&cl_live))
		return;
	pthread_mutex_init(&cl_pool_lock, NULL);
	pthread_mutex_init(&cl_reg_lock, NULL);
	pthread_mutex_init(&cl_str_lock, NULL);
	pthread_mutex_init(&cl_start_lock, NULL);
	atomic_store(&cl_my_pid, (uint32_t)syscall(SYS_getpid));
	/* the parent's unwritten records are the parent's: drop every block */
	cl_free_list = NULL;
	n = atomic_load(&cl_nblocks_used);
	for (size_t i = 0; i < n; i++) {
		cl_blocks[i].flushed = 0;
		atomic_store(&cl_blocks[i].used, 0);
		atomic_store(&cl_blocks[i].state, BLK_FREE);
		cl_blocks[i].next_free = cl_free_list;
		cl_free_list = &cl_blocks[i];
	}
	atomic_store(&cl_nfree, n);
	for (unsigned s = 0; s < TRACE_DROP__COUNT; s++) {
		atomic_store(&cl_drops[s], 0);
		cl_drops_written[s] = 0;
	}
	cl_reg_head = NULL;
	cl_thread_free_list = NULL;   /* the parent's, left as they are */
	if (t && t != CL_DEAD) {
		t->blk = NULL;
		t->data = NULL;
		t->cap = t->pos = t->pending = 0;
		t->tid = cl_sys_gettid();
		atomic_store(&t->tid_pub, t->tid);
		t->self = pthread_self();
		t->next = NULL;
		cl_reg_head = t;
	}
	if (cl_part_open) {
		atomic_store(&cl_part_fd, -1);
		close(cl_part.fd);
		cl_part.fd = -1;
		cl_part_open = 0;
	}
	cl_part_seq = 0;
	cl_stage_len = 0;
	cl_writer_running = 0;
	cl_writer_tid = 0;
	cl_exec_locked = 0;
	atomic_fetch_add(&cl_str_gen, 1);
	cl_sources_atfork_child();
	atomic_store(&cl_child_pending, 1);
	atomic_store(&cl_wlock, 0);
	cl_guard_depth--;
}

/* Start recording in a forked child: part file, writer, sampler. */
void cl_child_start(void)
{
	pthread_mutex_lock(&cl_start_lock);
	if (atomic_load(&cl_child_pending) == 1) {
		atomic_store(&cl_child_pending, 2);
		if (cl_wlock_take(0) == 0) {
			if (cl_part_start() < 0)
				atomic_store(&cl_live, 0);
			cl_wlock_drop();
		}
		if (atomic_load(&cl_live)) {
			cl_layout_hold();
			cl_writer_start();
			cl_sources_start();
			cl_layout_release();
		}
		atomic_store(&cl_child_pending, 0);
	}
	pthread_mutex_unlock(&cl_start_lock);
}
