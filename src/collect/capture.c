/*
 * capture.c - what is recorded when: the capture windows (NVTX and
 * cudaProfilerApi capture ranges, on-demand captures) and the --delay /
 * --duration window, judged live (cl_recording) or by a record's own time
 * (cl_recording_at, for CUPTI records handed over late), and the capture
 * edges written to the report.  Under --on-demand the windows are also
 * published to profile (publish_windows).
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

/* ---- capture ---- */

/* internal.h: records are kept now (outside a capture range or an on-demand capture: 0) */
_Atomic int cl_capture_on;
static _Atomic int capture_done;
static int timed;
static uint64_t rec_from, rec_until = UINT64_MAX;
static int edge_from_written, edge_until_written;

/* ---- recording state ---- */

/*
 * The capture windows opened so far (nvtx and cudaProfilerApi capture), on
 * the report clock; end 0 = still open.  Records that arrive after their
 * event (CUPTI hands GPU records over up to a second later) are judged by
 * their own time against these (cl_reserve_at).  Past CAPTURE_WINDOWS the
 * last window stays open: later records are kept rather than lost.
 */
#define CAPTURE_WINDOWS 4096
static struct { _Atomic uint64_t begin, end; } cwin[CAPTURE_WINDOWS];
static atomic_int ncwin;

static void window_edge(int begin, uint64_t t)
{
	int n = atomic_load(&ncwin);

	if (begin) {
		if (n == CAPTURE_WINDOWS)
			return;
		atomic_store(&cwin[n].end, 0);
		atomic_store(&cwin[n].begin, t);
		atomic_store(&ncwin, n + 1);
	} else if (n > 0 && n < CAPTURE_WINDOWS) {
		atomic_store(&cwin[n - 1].end, t);
	}
}

int cl_recording_at(uint64_t t)
{
	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return 0;
	if (timed && (t < rec_from || t >= rec_until))
		return 0;
	if (cl_config.capture_mode == CL_CAPTURE_NONE && !cl_config.on_demand)
		return 1;
	for (int i = atomic_load(&ncwin) - 1; i >= 0; i--) {
		uint64_t b = atomic_load(&cwin[i].begin), e = atomic_load(&cwin[i].end);
		if (t >= b)
			return !e || t < e;
	}
	return 0;
}

int cl_recording(void)
{
	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return 0;
	if (!atomic_load_explicit(&cl_capture_on, memory_order_relaxed))
		return 0;
	if (timed) {
		uint64_t t = cl_now();
		return t >= rec_from && t < rec_until;
	}
	return 1;
}

static _Atomic uint32_t capture_count;     /* captures opened (not on demand) */
static uint32_t capture_trigger;           /* the open one's trigger */

static void emit_capture(unsigned what, uint64_t time, uint32_t id)
{
	struct trace_capture *c = cl_reserve(TRACE_EV_CAPTURE, sizeof(*c));

	if (!c)
		return;
	c->time = time;
	c->pid = cl_pid();
	c->what = what;
	c->trigger = capture_trigger;
	c->id = id;
	cl_commit();
}

int cl_capturing(void)
{
	return atomic_load_explicit(&cl_capture_on, memory_order_relaxed);
}

/*
 * Under --on-demand, ondemand.c keeps the captures and the writer writes
 * their edges (after the ring that comes before each); capture ranges are
 * then repeatable whatever --capture-range-end says, as a long run needs.
 */
uint32_t cl_capture_begin_by(unsigned trigger, uint32_t steps, uint64_t duration_ns)
{
	uint64_t now;
	uint32_t id;

	/* on demand, past the last window a capture is refused rather than left open */
	if (cl_config.on_demand && atomic_load(&ncwin) >= CAPTURE_WINDOWS)
		return 0;
	if (atomic_load(&capture_done) || atomic_exchange(&cl_capture_on, 1))
		return 0;
	now = cl_now();
	window_edge(1, now);
	if (cl_config.on_demand)
		return cl_od_opened(now, trigger, steps, duration_ns);
	capture_trigger = trigger;
	id = atomic_fetch_add(&capture_count, 1) + 1;
	emit_capture(TRACE_CAPTURE_START, now, id);
	return id;
}

void cl_capture_begin(void)
{
	cl_capture_begin_by(cl_config.capture_mode == CL_CAPTURE_CUDA_PROFILER ? TRACE_TRIGGER_PROFILER
									   : TRACE_TRIGGER_NVTX, 0, 0);
}

void cl_capture_end(void)
{
	uint64_t now;

	if (!atomic_exchange(&cl_capture_on, 0))
		return;
	now = cl_now();
	window_edge(0, now);
	if (cl_config.on_demand) {
		cl_od_closed(now);
		return;
	}
	emit_capture(TRACE_CAPTURE_STOP, now, atomic_load(&capture_count));
	if (!cl_config.capture_repeat)
		atomic_store(&capture_done, 1);
}

/*
 * Under --on-demand, profile keeps its NVML samples in a ring of its own
 * (src/nvml/sampler.h) and needs to know when each capture started and
 * stopped, whatever opened it: profile's own GPU trigger, `gpuscope
 * capture` from another shell, or the program (an NVTX range,
 * cudaProfilerStart, a slow step) that only the collector sees.  So the
 * writer, at each pass, appends the edges of the windows opened or closed
 * since to GS_CAPTURE_EDGES_FILE in the part directory (profile's private
 * temporary directory), one line each: "start PID ID NS" / "stop PID ID NS",
 * on the report clock.  A file rather than the socket: profile reads it at
 * each of its ticks without waking the program's collector, and nothing
 * costs anything while idle.  The file is opened, written with one write()
 * (O_APPEND: whole lines from several processes never mix) and closed each
 * time: edges are rare, and a descriptor kept open could be closed or
 * reused by the program.  Windows are sequential, so counts say what was
 * published.  A forked child inherits them: it publishes only its own.
 */
static int pub_start, pub_stop;   /* windows whose start / stop were published (writer only) */

static void publish_line(const char *what, int i, uint64_t t)
{
	char path[4200], line[96];
	int fd, n;

	n = snprintf(line, sizeof(line), "%s %u %d %" PRIu64 "\n", what, cl_pid(), i + 1, t);
	snprintf(path, sizeof(path), "%s/%s", cl_config.dir, GS_CAPTURE_EDGES_FILE);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;   /* profile did not create it (no GPU metrics), or is gone: nobody reads it */
	if (n > 0 && (size_t)n < sizeof(line))
		cl_real_write_fn(fd, line, (size_t)n);
	close(fd);
}

static void publish_windows(void)
{
	int n = atomic_load(&ncwin);

	if (!cl_config.on_demand)
		return;
	for (; pub_start < n; pub_start++)
		publish_line("start", pub_start, atomic_load(&cwin[pub_start].begin));
	for (; pub_stop < pub_start; pub_stop++) {
		uint64_t e = atomic_load(&cwin[pub_stop].end);
		if (!e)
			break;
		publish_line("stop", pub_stop, e);
	}
}

/*
 * The --delay/--duration window's edges, written by the writer (under its
 * lock) once the clock has passed them: the report says when recording
 * started and stopped.  Under --on-demand, the windows published to
 * profile (publish_windows), at the same pass.
 */
void cl_capture_timed_edges(void)
{
	publish_windows();
	if (!timed)
		return;
	{
		uint64_t now = cl_now();
		struct trace_capture c;
		memset(&c, 0, sizeof(c));
		c.pid = cl_pid();
		c.trigger = TRACE_TRIGGER_TIMED;
		c.id = 1;
		if (!edge_from_written && rec_from && now >= rec_from) {
			c.time = rec_from;
			c.what = TRACE_CAPTURE_START;
			cl_stage_entry(TRACE_EV_CAPTURE, &c, sizeof(c));
			edge_from_written = 1;
		}
		if (!edge_until_written && rec_until != UINT64_MAX && now >= rec_until) {
			c.time = rec_until;
			c.what = TRACE_CAPTURE_STOP;
			cl_stage_entry(TRACE_EV_CAPTURE, &c, sizeof(c));
			edge_until_written = 1;
		}
	}
}

/* Set the recording state from the settings: the --delay/--duration window, capture off until a range opens. */
void cl_capture_init(void)
{
	if (cl_config.delay_ns || cl_config.duration_ns) {
		/* --delay/--duration count from the start of the profiled program */
		uint64_t base = cl_config.start_ns;
		if (!base)
			base = cl_now();
		timed = 1;
		rec_from = base + cl_config.delay_ns;
		if (cl_config.duration_ns)
			rec_until = rec_from + cl_config.duration_ns;
	}
	atomic_store(&cl_capture_on, cl_config.capture_mode == CL_CAPTURE_NONE && !cl_config.on_demand);
	atomic_store(&ncwin, 0);
}
