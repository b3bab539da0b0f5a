/*
 * internal.h - what the collector's own files share beyond collect.h.
 *
 * config.c reads the settings, clock.c keeps the clock, strings.c the
 * string table; core.c owns the block pool, the per-thread state, the
 * capture windows, the writer thread and the part file; exit.c every way a
 * stream ends; fork.c the process tree.  The sources (sources.c's table:
 * cpusample.c, nvtx.c, cupti.c; osrt.c's interposers) only record through
 * cl_reserve()/cl_commit() and the helpers below.  Nothing here is
 * exported from the shared library.
 */
#ifndef GS_COLLECT_INTERNAL_H
#define GS_COLLECT_INTERNAL_H

#include "collect.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>

#define CL_TLS __attribute__((tls_model("initial-exec")))

/* Depth of the per-thread NVTX push/pop stack; deeper pushes are dropped. */
#define CL_NVTX_DEPTH 128
/* Entries of the per-thread string cache (a power of two). */
#define CL_ICACHE 256

struct cl_block;

/* An NVTX push/pop range that is open on this thread. */
struct cl_nvtx_open {
	uint64_t start;
	uint64_t payload;
	uint32_t name_id, domain_id, category, color;
	void *domain;             /* handle, to match domain pops */
	uint8_t payload_type;
	uint8_t capture;          /* this range opened the capture window */
	uint8_t dropped;          /* not recorded (capture off at push) */
};

struct cl_icache {
	const char *ptr;          /* caller's pointer (the key) */
	const char *copy;         /* interned copy, owned by the string table */
	uint32_t len, id, gen;
};

/*
 * Per-thread state, reached through a TLS pointer.  Created by the
 * pthread_create wrapper or on a thread's first record; handed back when
 * the thread ends and taken again by a later thread (never freed: the
 * registry keeps every state, alive or dead, so lookups stay safe).
 */
struct cl_thread {
	struct cl_block *blk;     /* current block, NULL until the first record */
	unsigned char *data;      /* blk's bytes */
	size_t cap, pos;          /* block size; bytes committed so far */
	size_t pending;           /* size of the entry reserved, not committed */
	uint32_t tid;
	_Atomic uint32_t tid_pub; /* tid, published for pthread_setname_np lookups */
	pthread_t self;
	int internal;             /* one of the collector's own threads */
	unsigned depth;           /* NVTX push/pop stack */
	struct cl_nvtx_open stack[CL_NVTX_DEPTH];
	struct cl_icache icache[CL_ICACHE];
	int dead;                 /* ended: on the free list, skipped by lookups */
	struct cl_thread *next;   /* registry of all states */
	struct cl_thread *next_free;
};

/* Longest string kept (entries are at most 64 KiB). */
#define CL_STR_MAX 4096

/* The string table (strings.c): its lock (taken across fork), the next id, the stream generation. */
extern pthread_mutex_t cl_str_lock;
extern _Atomic uint32_t cl_str_next_id;
extern _Atomic uint32_t cl_str_gen;   /* bumped for every new stream */

/* The clock (clock.c): set up at start; refitted by the writer thread. */
void cl_clock_init(void);
void cl_clock_calibrate(void);

/* Read every setting from the environment into cl_config (config.c). */
void cl_config_read(void);

/* The calling thread's state, creating it; NULL when not recording or dead. */
struct cl_thread *cl_thread_get(void);
/* The tid of the thread @th when it is known to the collector, else 0. */
uint32_t cl_thread_tid_of(pthread_t th);
/* Set up the state of a thread about to run (pthread_create wrapper). */
struct cl_thread *cl_thread_prepare(void);
void cl_thread_start(struct cl_thread *t);
/* Hand back a state that no thread uses (a pthread_create that failed, a thread's end). */
void cl_thread_release(struct cl_thread *t);

/* Set once cl_init() succeeded and until the process's stream ended. */
extern _Atomic int cl_live;
/*
 * What cl_capturing() reads (capture.c): 1 while records are kept (always,
 * in a plain profile), 0 outside a capture range and, under --on-demand,
 * outside a capture.  Read directly where a function call would cost.
 */
extern _Atomic int cl_capture_on;
/* The calling thread's state: NULL before its first record, CL_DEAD after its exit. */
extern __thread struct cl_thread *cl_self CL_TLS;
#define CL_DEAD ((struct cl_thread *)1)
/* Thread-local re-entrancy depth (see cl_guard_enter). */
extern __thread int cl_guard_depth CL_TLS;

/* The real libc symbol @name (dlsym RTLD_NEXT), or NULL. */
void *cl_sym(const char *name);
void *cl_vsym(const char *name, const char *version);

/* Record helpers used by several sources. */
void cl_emit_thread(uint32_t tid, uint32_t name_id, uint32_t flags, uint64_t time);

/* Exit and process-tree paths (exit.c), called by the interposers. */
void cl_before_exec(void);
void cl_after_exec_failed(void);
void cl_final(void);
/* In a vfork child (shares the parent's memory): do nothing at all. */
int cl_in_vfork_child(void);

/*
 * An event source's lifecycle (sources.c holds the table).  start: once the
 * writer runs (the process's start, a forked child's first record), 0 or
 * -1; stop: at the process's end, before the last write; atfork_child: in
 * a forked child, before anything is recorded; flush(final): hand over
 * what the source buffers itself, before a final write (@final: the
 * process is ending or exec'ing).  Any of them may be NULL.
 */
struct cl_source {
	const char *name;
	int (*start)(void);
	void (*stop)(void);
	void (*atfork_child)(void);
	void (*flush)(int final);
};
void cl_sources_start(void);
void cl_sources_stop(void);
void cl_sources_atfork_child(void);
void cl_sources_flush(int final);

/*
 * On-demand tracing (ondemand.c): the flight recorder's ring, the
 * captures, steps and their trigger, the trigger socket.
 */
int cl_od_start(void);
void cl_od_stop(void);
void cl_od_atfork_child(void);
int cl_od_ring_type(unsigned type);          /* kept in the ring while idle */
uint32_t cl_od_opened(uint64_t now, unsigned trigger, uint32_t steps, uint64_t duration_ns);
void cl_od_closed(uint64_t now);
void cl_od_route(const unsigned char *p, size_t n);   /* writer lock held */
void cl_od_pass_end(int final);                       /* writer lock held */
void cl_od_crash(void (*chunk)(const void *p, size_t n)); /* a fatal signal's path */
void cl_od_tick(void);                                /* writer thread, each pass */
int cl_od_ctl_fd(void);                               /* the trigger socket, -1 = none */
void cl_od_ctl_serve(void);                           /* writer thread: answer its requests */
int cl_od_is_step(uint32_t name_id);                  /* a --step-range name */
void cl_od_step_end(uint64_t start, uint64_t end);
void cl_od_counts(uint64_t *nsteps, uint64_t *last_step_ns, int *ncaptures);
/* The string of id @id (strings.c; a scan under the table's lock). */
size_t cl_str_copy(uint32_t id, char *buf, size_t cap);
/* The part's staging buffer (core.c; writer lock held). */
void cl_stage_raw(const void *p, size_t n);
void cl_stage_entry(unsigned type, const void *rec, size_t size);
extern int cl_od_final;   /* set by cl_stream_end() for its last pass */

/* CPU sampling thread (cpusample.c). */
int cl_cpusample_start(void);
void cl_cpusample_stop(void);
void cl_cpusample_atfork_child(void);

/* NVTX state kept across the process (nvtx.c). */
void cl_nvtx_atfork_child(void);

/* The part file's descriptor (-1 when none): close() of it is refused. */
extern _Atomic int cl_part_fd;
/* Move the part file off descriptor @fd (the program dup2()s onto it). */
void cl_part_fd_move(int fd);

/*
 * The collector's other lasting descriptors (the CPU sampler's, all above
 * 700): close(), close_range() and closefrom() by the program leave them
 * open, as the part file, so that the collector need not open them again
 * (each open takes, for a moment, the lowest free number).  Up to
 * CL_KEEP_FDS are kept; one past that is merely not spared.
 */
#define CL_KEEP_FDS 128
#define CL_KEEP_FD_MIN 700        /* no kept descriptor lies below */
void cl_fd_keep(int fd);
void cl_fd_forget(int fd);
/* Whether @fd is the part file or a kept descriptor. */
int cl_fd_spared(int fd);
/* The part file and kept descriptors in [@first, @last], sorted; how many (at most @max). */
size_t cl_fds_spared(unsigned first, unsigned last, int *out, size_t max);

/* Replace every byte of @s[0..n) that is not valid UTF-8 with '?'. */
void cl_utf8_clean(char *s, size_t n);

/* The writer thread's tid (not sampled). */
extern uint32_t cl_writer_tid;

/* A tid that must not be sampled or traced: one of the collector's threads. */
void cl_mark_internal_thread(void);

/*
 * ---- shared by core.c (buffers, threads, writer, start), exit.c and fork.c ----
 * Locking: the writer lock (cl_wlock, a spin word holding its owner's tid,
 * so that a signal handler can take it) guards the part file, the staging
 * buffer and every block's `flushed`; cl_pool_lock the free list;
 * cl_reg_lock the thread registry.  fork() takes them all (fork.c).
 */
enum { BLK_FREE = 0, BLK_ACTIVE = 1, BLK_RETIRED = 2 };

struct cl_block {
	unsigned char *data;
	_Atomic size_t used;      /* committed bytes, store-release by the owner */
	size_t flushed;           /* written bytes; writer lock holder only */
	_Atomic int state;
	struct cl_block *next_free;
};

/* the block pool (buffers.c) */
extern struct cl_block *cl_blocks;
extern size_t cl_nblocks_max;
extern _Atomic size_t cl_nblocks_used;
extern struct cl_block *cl_free_list;
extern _Atomic size_t cl_nfree;
extern pthread_mutex_t cl_pool_lock;
extern _Atomic uint64_t cl_drops[TRACE_DROP__COUNT];
extern uint64_t cl_drops_written[TRACE_DROP__COUNT];
int cl_pool_init(void);
void cl_thread_retire(struct cl_thread *t);
/* A block back to the free list once the writer has written it (buffers.c). */
void cl_block_free(struct cl_block *b);

/* the thread registry (buffers.c) */
extern pthread_mutex_t cl_reg_lock;
extern struct cl_thread *cl_reg_head;
extern struct cl_thread *cl_thread_free_list;
extern pthread_key_t cl_thread_key;
struct cl_thread *cl_thread_new(void);
void cl_thread_bind(struct cl_thread *t);
void cl_thread_exit_cb(void *arg);
uint32_t cl_sys_gettid(void);

/* the process (core.c), its part file and the writer (writer.c) */
extern _Atomic uint32_t cl_my_pid;
extern struct trace_writer cl_part;
extern int cl_part_open;
extern unsigned cl_part_seq;
extern int cl_part_full;                  /* a write failed: only the tail is written */
extern _Atomic uint32_t cl_wlock;         /* tid of the holder, 0 = free */
extern _Atomic int cl_finished;           /* stream ended: nothing more is written */
extern _Atomic int cl_child_pending;      /* 1: forked child, part not started; 2: starting */
extern pthread_mutex_t cl_start_lock;
extern int cl_writer_running;
extern size_t cl_stage_len;
extern uint64_t (*cl_real_write_fn)(int, const void *, size_t);
int cl_wlock_take(int give_up_when_finished);
void cl_wlock_drop(void);
size_t cl_writer_pass(void);
int cl_writer_start(void);
/*
 * The program's address-space layout kept (layout.c): what the collector
 * maps between cl_layout_hold() and cl_layout_release() lands away from
 * where the program maps next.  cl_own_thread_start() starts a collector
 * thread so (the real pthread_create), its stack and arena away too.
 */
void cl_layout_hold(void);
void cl_layout_release(void);
void cl_layout_thread_arena(void);
void *cl_layout_map_beside(void *at, size_t at_len, size_t len);
void cl_layout_atfork_child(void);
int cl_own_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);
int cl_stage_init(void);
void cl_watch_init(int fd);
/* what is recorded when (capture.c): set from the settings; the timed window's edges, by the writer */
void cl_capture_init(void);
void cl_capture_timed_edges(void);
int cl_part_start(void);
void cl_part_tail(void);
uint64_t cl_count_entries(const unsigned char *p, size_t n);
void cl_xfsz_hold(sigset_t *old);
void cl_xfsz_release(const sigset_t *old, int failed_efbig);

/* ending (exit.c) */
extern int cl_exec_locked;
void cl_stream_end(void);
void cl_signals_install(void);

/* fork (fork.c) */
void cl_atfork_prepare(void);
void cl_atfork_parent(void);
void cl_atfork_child(void);
void cl_child_start(void);

#endif
