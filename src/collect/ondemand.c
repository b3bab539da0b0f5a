/*
 * ondemand.c - always on, traced on demand (`profile --on-demand`,
 * docs/always-on.md): the flight recorder's ring, the captures' bookkeeping,
 * the step detector and its trigger, and the trigger socket.
 *
 * Idle.  cl_reserve() keeps the ring's record types (RING_TYPES: NVTX
 * ranges and marks, OS-runtime calls, CPU samples) even with no capture
 * open; CUDA tracing is not started (cupti.c waits for cl_cuda_capture()).
 * The writer thread hands every block's new bytes to cl_od_route(): records
 * of an open capture (judged by their own end time against the capture
 * windows) and the always-written types go to the part file, the rest into
 * the ring.
 *
 * Ring.  RING_SEGS segments of ring_bytes / RING_SEGS: records are
 * appended to the current segment; a full one moves the ring to the next,
 * forgetting the oldest segment whole.  So the ring keeps at least
 * (RING_SEGS - 1) / RING_SEGS of ring_bytes of the newest records, and
 * never more than ring_bytes.  Only the writer thread (writer lock held)
 * touches it.
 *
 * Captures.  cl_capture_begin_by() (a trigger: the socket, an NVTX or
 * cudaProfilerStart range, a slow step) opens a window in core.c and a row
 * here; the next writer pass writes the ring (its records that end within
 * ring_ns before the window), then the capture's start record, with the
 * ring's first time; the stop record follows once the window closed (after
 * its steps or duration, checked by the writer each pass, or its range's
 * end).  At the stream's end the ring is written too: the report of a run
 * never triggered holds its last ring_ns.
 *
 * Trigger socket.  One Unix stream socket per process, CTL_DIR/PID.sock, in
 * a directory only the user can enter (0700, owned by the user, checked
 * before use: od_dir_ok()); each connection's peer is checked again with
 * SO_PEERCRED (same user id, or root).  One request line per connection:
 *   "capture STEPS DURATION_NS TRIGGER"  -> "ok ID" | "error WHY"
 *   "info"        -> "pid PID name NAME captures N state idle|capturing steps K step_ns NS"
 *                    (steps seen so far and the last one's length; 0: none yet)
 * The writer thread polls it with profile's liveness pipe (core.c).
 */
#include "internal.h"
#include "env.h"
#include "trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- the ring ---- */

#define RING_SEGS 8
static unsigned char *ring_mem;
static size_t seg_cap;
static struct { size_t len; } seg[RING_SEGS];
static unsigned seg_cur;

/* The record types the flight recorder keeps while idle. */
#define RING_TYPES ((1u << TRACE_EV_NVTX_RANGE) | (1u << TRACE_EV_NVTX_END) | \
		    (1u << TRACE_EV_NVTX_MARK) | (1u << TRACE_EV_OSRT) | (1u << TRACE_EV_CPU_SAMPLE) | \
		    (1u << TRACE_EV_METRIC) | (1u << TRACE_EV_TORCH_MEM))

int cl_od_ring_type(unsigned type)
{
	return type < 32 && ((RING_TYPES >> type) & 1);
}

/* The time by which a record is judged: its end for start/end records, else its time. */
static uint64_t entry_time(const struct trace_entry *e)
{
	const unsigned char *r = (const unsigned char *)(e + 1);
	uint64_t t[2] = { 0, 0 };
	size_t have = e->size - sizeof(*e);

	memcpy(t, r, have < sizeof(t) ? have : sizeof(t));
	switch (e->type) {
	case TRACE_EV_NVTX_RANGE:
		return t[1] ? t[1] : t[0];   /* a start/end range not ended: its start */
	case TRACE_EV_NVTX_END:          /* range_id, end */
	case TRACE_EV_OSRT:
	case TRACE_EV_API:
	case TRACE_EV_KERNEL:
	case TRACE_EV_MEMCPY:
	case TRACE_EV_MEMSET:
	case TRACE_EV_SYNC:
		return t[1];
	default:
		return t[0];
	}
}

static void ring_put(const struct trace_entry *e)
{
	if (!ring_mem || e->size > seg_cap)
		return;
	if (seg[seg_cur].len + e->size > seg_cap) {
		seg_cur = (seg_cur + 1) % RING_SEGS;
		seg[seg_cur].len = 0;   /* the oldest segment is forgotten */
	}
	memcpy(ring_mem + seg_cur * seg_cap + seg[seg_cur].len, e, e->size);
	seg[seg_cur].len += e->size;
}

/*
 * Write the ring's records that end at or after @from to the part, oldest
 * first, and empty it.  Returns the earliest time written (0: none).
 */
static uint64_t ring_write(uint64_t from)
{
	uint64_t first = 0;

	for (unsigned k = 1; k <= RING_SEGS; k++) {
		unsigned s = (seg_cur + k) % RING_SEGS;
		const unsigned char *p = ring_mem + s * seg_cap;
		for (size_t pos = 0; pos + sizeof(struct trace_entry) <= seg[s].len;) {
			const struct trace_entry *e = (const void *)(p + pos);
			uint64_t t = entry_time(e);
			if (e->size < sizeof(*e))
				break;
			if (t >= from) {
				uint64_t t0;
				memcpy(&t0, e + 1, sizeof(t0));   /* a range's start */
				if (e->type == TRACE_EV_NVTX_END)
					t0 = t;
				if (!first || t0 < first)
					first = t0;
				cl_stage_raw(e, e->size);
			}
			pos += e->size;
		}
		seg[s].len = 0;
	}
	return first;
}

/* ---- captures ---- */

#define OD_CAPTURES 4096
static struct od_capture {
	uint64_t begin, end;      /* window; end 0 = open */
	uint64_t deadline;        /* end by then (0: no duration) */
	uint32_t trigger;
	int start_written, stop_written;
} caps[OD_CAPTURES];
static _Atomic int ncaps;
static _Atomic int32_t steps_left;     /* steps the open capture still records; <0: no bound */
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int cuda_on;            /* cl_cuda_capture(1) was called last */
/*
 * The reach of the last capture whose start was written: [from, begin).
 * Records of that span that reach the writer after the ring was written
 * (committed just before the trigger, or ended late) go to the part too.
 */
static uint64_t reach_from, reach_begin;

uint32_t cl_od_opened(uint64_t now, unsigned trigger, uint32_t steps, uint64_t duration_ns)
{
	int n;

	pthread_mutex_lock(&cap_lock);
	n = atomic_load(&ncaps);
	if (n == OD_CAPTURES) {
		pthread_mutex_unlock(&cap_lock);
		return 0;
	}
	memset(&caps[n], 0, sizeof(caps[n]));
	caps[n].begin = now;
	caps[n].deadline = duration_ns ? now + duration_ns : 0;
	caps[n].trigger = trigger;
	atomic_store(&steps_left, steps ? (int32_t)steps : -1);
	atomic_store(&ncaps, n + 1);
	pthread_mutex_unlock(&cap_lock);
	return (uint32_t)n + 1;
}

void cl_od_closed(uint64_t now)
{
	int n;

	pthread_mutex_lock(&cap_lock);
	n = atomic_load(&ncaps);
	if (n > 0 && !caps[n - 1].end)
		caps[n - 1].end = now;
	atomic_store(&steps_left, -1);
	pthread_mutex_unlock(&cap_lock);
}

static void stage_capture(uint64_t time, unsigned what, const struct od_capture *c, int id,
			  uint64_t ring_from)
{
	struct trace_capture r;

	memset(&r, 0, sizeof(r));
	r.time = time;
	r.pid = cl_pid();
	r.what = what;
	r.trigger = c->trigger;
	r.id = (uint32_t)id;
	r.ring_from = ring_from;
	cl_stage_entry(TRACE_EV_CAPTURE, &r, sizeof(r));
}

/* Writer lock held: the ring before each capture opened since, and its edges. */
static int edges_done;   /* captures before it have both edges written (writer only) */

static void od_edges(void)
{
	int n = atomic_load(&ncaps);

	while (edges_done < n && caps[edges_done].stop_written)
		edges_done++;
	for (int i = edges_done; i < n; i++) {
		struct od_capture c;
		pthread_mutex_lock(&cap_lock);
		c = caps[i];
		pthread_mutex_unlock(&cap_lock);
		if (!c.start_written) {
			uint64_t from = c.begin > cl_config.ring_ns ? c.begin - cl_config.ring_ns : 0;
			stage_capture(c.begin, TRACE_CAPTURE_START, &c, i + 1, ring_write(from));
			caps[i].start_written = 1;
			reach_from = from;
			reach_begin = c.begin;
		}
		if (c.end && !c.stop_written) {
			stage_capture(c.end, TRACE_CAPTURE_STOP, &c, i + 1, 0);
			caps[i].stop_written = 1;
		}
	}
}

/*
 * cl_od_route - the writer's pass over @n bytes of entries of one block
 * (writer lock held): each to the part or to the ring.
 */
void cl_od_route(const unsigned char *p, size_t n)
{
	od_edges();
	for (size_t pos = 0; pos + sizeof(struct trace_entry) <= n;) {
		const struct trace_entry *e = (const void *)(p + pos);
		if (e->size < sizeof(*e) || e->size > n - pos)
			break;
		uint64_t t = cl_od_ring_type(e->type) ? entry_time(e) : 0;
		if (!cl_od_ring_type(e->type) || cl_recording_at(t) || (t >= reach_from && t < reach_begin))
			cl_stage_raw(e, e->size);
		else
			ring_put(e);
		pos += e->size;
	}
}

/*
 * cl_od_pass_end - after the writer's pass (writer lock held): the edges of
 * captures opened or closed since, and at the stream's end (@final) the
 * ring, with a stop for a capture still open.
 */
void cl_od_pass_end(int final)
{
	od_edges();
	if (final) {
		int n = atomic_load(&ncaps);
		if (n > 0 && !caps[n - 1].stop_written) {
			struct od_capture c = caps[n - 1];
			stage_capture(cl_now(), TRACE_CAPTURE_STOP, &c, n, 0);
			caps[n - 1].stop_written = 1;
		}
		{
			uint64_t now = cl_now();
			ring_write(now > cl_config.ring_ns ? now - cl_config.ring_ns : 0);
		}
	}
}

/*
 * cl_od_crash - a fatal signal or SIGINT/SIGTERM ends the process (exit.c's
 * crash_flush, writer lock held): the edges not yet written, a stop for an
 * open capture, then the ring, each handed to @chunk as one chunk's
 * entries.  Async-signal-safe: no lock, no allocation.  The ring is written
 * by segments, skipping those whose records all ended more than ring_ns
 * ago, so up to one segment older than --ring-s may come along.
 */
void cl_od_crash(void (*chunk)(const void *p, size_t n))
{
	unsigned char buf[2 * (sizeof(struct trace_entry) + sizeof(struct trace_capture))];
	int n = atomic_load(&ncaps);
	uint64_t now = cl_now(), from = now > cl_config.ring_ns ? now - cl_config.ring_ns : 0;

	if (!cl_config.on_demand)
		return;
	if (n > 0 && !caps[n - 1].stop_written) {
		struct trace_entry *e = (struct trace_entry *)buf;
		struct trace_capture *r = (struct trace_capture *)(e + 1);
		size_t len = 0;
		for (int k = caps[n - 1].start_written; k < 2; k++) {
			e = (struct trace_entry *)(buf + len);
			r = (struct trace_capture *)(e + 1);
			memset(e, 0, trace_entry_size(sizeof(*r)));
			e->type = TRACE_EV_CAPTURE;
			e->size = (uint16_t)trace_entry_size(sizeof(*r));
			r->time = k ? (caps[n - 1].end ? caps[n - 1].end : now) : caps[n - 1].begin;
			r->pid = cl_pid();
			r->what = k ? TRACE_CAPTURE_STOP : TRACE_CAPTURE_START;
			r->trigger = caps[n - 1].trigger;
			r->id = (uint32_t)n;
			len += e->size;
		}
		chunk(buf, len);
		caps[n - 1].start_written = caps[n - 1].stop_written = 1;
	}
	if (!ring_mem)
		return;
	for (unsigned k = 1; k <= RING_SEGS; k++) {
		unsigned sg = (seg_cur + k) % RING_SEGS;
		const unsigned char *p = ring_mem + sg * seg_cap;
		uint64_t newest = 0;
		for (size_t pos = 0; pos + sizeof(struct trace_entry) <= seg[sg].len;) {
			const struct trace_entry *e = (const void *)(p + pos);
			uint64_t t;
			if (e->size < sizeof(*e))
				break;
			t = entry_time(e);
			if (t > newest)
				newest = t;
			pos += e->size;
		}
		if (seg[sg].len && newest >= from)
			chunk(p, seg[sg].len);
		seg[sg].len = 0;
	}
}

/* ---- steps and the step_time trigger ---- */

/*
 * The step detector: an NVTX push/pop range whose name starts with
 * --step-range (default "ProfilerStep", PyTorch's profiler names steps
 * "ProfilerStep#N").  Whether a name id is a step's is looked up
 * (cl_str_copy, an index under the string table's lock) and cached for the
 * first STEP_IDS ids; later ids are looked up again at each pop.
 */
#define STEP_IDS 8192
static _Atomic unsigned char step_id[STEP_IDS];  /* 0 unknown, 1 a step, 2 not */

int cl_od_is_step(uint32_t name_id)
{
	char name[256];
	unsigned char v = name_id < STEP_IDS ? atomic_load_explicit(&step_id[name_id], memory_order_relaxed) : 0;
	size_t plen = strlen(cl_config.step_range);

	if (!cl_config.on_demand || !name_id)
		return 0;
	if (v)
		return v == 1;
	cl_str_copy(name_id, name, sizeof(name));
	v = !strncmp(name, cl_config.step_range, plen) ? 1 : 2;
	if (name_id < STEP_IDS)
		atomic_store(&step_id[name_id], v);
	return v == 1;
}

/*
 * The step_time trigger compares a step with the median of the last
 * STEP_WINDOW steps, once STEP_WARMUP steps were seen (the first steps of
 * a run, compiling and warming caches, are slow and would trigger at
 * once).  A step-triggered capture records STEP_CAPTURE steps; the
 * trigger waits STEP_WARMUP steps after it before it can fire again, so a
 * run that slows down for good takes a capture every few dozen steps, not
 * every step.
 */
#define STEP_WINDOW 64
#define STEP_WARMUP 8
#define STEP_CAPTURE 10
/* ... and ends after STEP_CAPTURE_MAX_NS even if the steps stop (a hung program) */
#define STEP_CAPTURE_MAX_NS (60 * 1000000000ull)
static struct {
	uint64_t dur[STEP_WINDOW];
	unsigned n, head;
	unsigned quiet;               /* steps to wait before the trigger may fire */
	uint64_t count, last_ns;
} steps = { .quiet = STEP_WARMUP };
static pthread_mutex_t step_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void cl_od_step_end(uint64_t start, uint64_t end)
{
	uint64_t d = end > start ? end - start : 0, sorted[STEP_WINDOW], median = 0;
	int fire = 0;
	int32_t left;

	pthread_mutex_lock(&step_lock);
	steps.count++;
	steps.last_ns = d;
	if (steps.n >= STEP_WARMUP && !steps.quiet && cl_config.trigger == TRIGGER_STEP_TIME &&
	    !cl_capturing()) {
		memcpy(sorted, steps.dur, steps.n * sizeof(sorted[0]));
		qsort(sorted, steps.n, sizeof(sorted[0]), cmp_u64);
		median = sorted[steps.n / 2];
		fire = (double)d > cl_config.trigger_value * (double)median;
	}
	if (steps.quiet)
		steps.quiet--;
	steps.dur[steps.head] = d;
	steps.head = (steps.head + 1) % STEP_WINDOW;
	if (steps.n < STEP_WINDOW)
		steps.n++;
	if (fire)
		steps.quiet = STEP_CAPTURE + STEP_WARMUP;
	pthread_mutex_unlock(&step_lock);
	/* the capture's own steps */
	left = atomic_load(&steps_left);
	if (left > 0 && cl_capturing() && atomic_fetch_sub(&steps_left, 1) == 1)
		cl_capture_end();
	if (fire)
		cl_capture_begin_by(TRACE_TRIGGER_STEP_TIME, STEP_CAPTURE, STEP_CAPTURE_MAX_NS);
}

/* ---- the trigger socket ---- */

static int ctl_fd = -1;
static char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

int cl_od_start(void)
{
	struct sockaddr_un a;
	char dir[1024];
	int fd, hi;

	if (!cl_config.on_demand || ctl_fd >= 0)
		return 0;
	if (!ring_mem) {
		seg_cap = cl_config.ring_bytes / RING_SEGS;
		ring_mem = mmap(NULL, seg_cap * RING_SEGS, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (ring_mem == MAP_FAILED) {
			ring_mem = NULL;
			cl_warning("flight recorder off: cannot map %zu MiB", cl_config.ring_bytes >> 20);
		}
	}
	trigger_ctl_dir(cl_config.ctl_dir, dir, sizeof(dir));
	if (!trigger_dir_ok(dir, 1)) {
		cl_warning("no trigger socket: '%s' is not a private directory of this user "
			   "(owned by uid %u, mode 0700)", dir, (unsigned)geteuid());
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%u.sock", dir, cl_pid()) >=
	    sizeof(a.sun_path)) {
		cl_warning("no trigger socket: the path under '%s' is too long", dir);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* our pid's socket: left by this process before an exec, or by a dead one */
	unlink(a.sun_path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0) {
		cl_warning("no trigger socket '%s': %s", a.sun_path, strerror(errno));
		close(fd);
		return -1;
	}
	chmod(a.sun_path, 0600);
	hi = fcntl(fd, F_DUPFD_CLOEXEC, CL_KEEP_FD_MIN);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	cl_fd_keep(fd);
	snprintf(ctl_path, sizeof(ctl_path), "%s", a.sun_path);
	ctl_fd = fd;
	return 0;
}

void cl_od_stop(void)
{
	if (ctl_fd < 0)
		return;
	cl_fd_forget(ctl_fd);
	close(ctl_fd);
	ctl_fd = -1;
	unlink(ctl_path);
}

/* A forked child: its parent's socket, ring and captures are not its own. */
void cl_od_atfork_child(void)
{
	if (ctl_fd >= 0) {
		cl_fd_forget(ctl_fd);
		close(ctl_fd);
	}
	ctl_fd = -1;
	for (unsigned s = 0; s < RING_SEGS; s++)
		seg[s].len = 0;
	atomic_store(&ncaps, 0);
	atomic_store(&cuda_on, 0);
	reach_from = reach_begin = 0;
	edges_done = 0;
}

int cl_od_ctl_fd(void)
{
	return ctl_fd;
}

/* Read one line from a connection, waiting at most 200 ms for it. */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t k;
		if (poll(&p, 1, 200) <= 0)
			break;
		k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return (int)n;
}

static void reply(int fd, const char *s)
{
	size_t n = strlen(s);

	/* MSG_NOSIGNAL: a client gone already must not raise SIGPIPE */
	if (send(fd, s, n, MSG_NOSIGNAL) < 0)
		return;
}

/* One request on the trigger socket (the writer thread). */
static void serve(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char line[256], out[512];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || !trigger_peer_ok(cr.uid, (uint32_t)geteuid())) {
		reply(fd, "error not yours: the process belongs to another user\n");
		return;
	}
	if (read_line(fd, line, sizeof(line)) <= 0)
		return;
	if (!strcmp(line, "info")) {
		uint64_t nsteps, last;
		int nc;
		cl_od_counts(&nsteps, &last, &nc);
		snprintf(out, sizeof(out), "pid %u name %s captures %d state %s steps %" PRIu64
			 " step_ns %" PRIu64 "\n", cl_pid(),
			 cl_config.report_name[0] ? cl_config.report_name : "-", nc,
			 cl_capturing() ? "capturing" : "idle", nsteps, last);
		reply(fd, out);
		return;
	}
	if (!strncmp(line, "capture ", 8)) {
		unsigned long steps = 0;
		unsigned long long dur = 0;
		unsigned trig = TRACE_TRIGGER_COMMAND;
		uint32_t id;
		if (sscanf(line + 8, "%lu %llu %u", &steps, &dur, &trig) < 2 || trig >= TRACE_TRIGGER__COUNT ||
		    steps > INT32_MAX) {
			reply(fd, "error bad request\n");
			return;
		}
		if (cl_capturing()) {
			snprintf(out, sizeof(out), "error busy: capture %d is still recording\n",
				 atomic_load(&ncaps));
			reply(fd, out);
			return;
		}
		id = cl_capture_begin_by(trig, (uint32_t)steps, dur);
		if (!id) {
			reply(fd, "error no more captures in this run\n");
			return;
		}
		snprintf(out, sizeof(out), "ok %u\n", id);
		reply(fd, out);
		return;
	}
	reply(fd, "error unknown request\n");
}

void cl_od_ctl_serve(void)
{
	for (int i = 0; i < 8; i++) {
		int c = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return;
		serve(c);
		close(c);
	}
}

/*
 * cl_od_tick - the writer's periodic duty (not under the writer lock): end
 * a capture past its duration, and switch CUDA tracing to the state the
 * captures ask for.
 */
void cl_od_tick(void)
{
	int n = atomic_load(&ncaps), on;

	if (!cl_config.on_demand)
		return;
	if (n > 0 && cl_capturing()) {
		uint64_t dl;
		pthread_mutex_lock(&cap_lock);
		dl = caps[n - 1].end ? 0 : caps[n - 1].deadline;
		pthread_mutex_unlock(&cap_lock);
		if (dl && cl_now() >= dl)
			cl_capture_end();
	}
	on = cl_capturing();
	if (on != atomic_load(&cuda_on)) {
		atomic_store(&cuda_on, on);
		cl_cuda_capture(on);
	}
}

/* For Prometheus-style reporting and tests: steps seen, last step's time, captures. */
void cl_od_counts(uint64_t *nsteps, uint64_t *last_step_ns, int *ncaptures)
{
	pthread_mutex_lock(&step_lock);
	*nsteps = steps.count;
	*last_step_ns = steps.last_ns;
	pthread_mutex_unlock(&step_lock);
	*ncaptures = atomic_load(&ncaps);
}
