/*
 * sampler.h - NVML sampling inside `gpuscope profile`.
 *
 * The sampler runs in the profiling process (not in the target), on a thread
 * of its own, and writes its samples (TRACE_EV_METRIC, TRACE_EV_DEVICE) into
 * a part report of its own that the profile merges with the target's parts.
 *
 * Under `profile --on-demand` the samples go through a flight recorder of
 * their own (struct nvml_ring below): only those of the seconds before each
 * capture, inside each capture and at the end of the run reach the part
 * (docs/always-on.md, "GPU metrics in the flight recorder").
 *
 * GPUSCOPE_NVML_REPLAY=FILE (tests, demonstrations) samples a recording of
 * `gpuscope monitor --record` instead of the GPUs, one recorded tick per
 * tick until the recording ends, each reading stamped with the time it is
 * read, as a live GPU's would be (so that it lies among the program's
 * records).
 */
#ifndef GS_NVML_SAMPLER_H
#define GS_NVML_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

struct nvml_sampler;
struct nvml_sample;
struct trace_metric;

/* What one sampler did, for profile's last lines (nvml_sampler_finish). */
struct nvml_sampler_stats {
	uint64_t samples;         /* metric records taken */
	uint64_t kept;            /* of them, written to the part */
	uint64_t evicted;         /* dropped by the ring's byte bound before --ring-s had passed */
	size_t peak;              /* most samples the ring held at once */
	size_t peak_bytes;        /* the memory of that many */
	size_t max_bytes;         /* the ring's bound */
	size_t captures;          /* capture starts the ring was told of */
	int ring;                 /* 1: the samples went through the ring */
};

/*
 * struct nvml_sampler_opts - how to sample.
 * @hz:       ticks a second (1..100)
 * @watch:    called on the sampler's thread after each GPU's sample
 *            (profile's --trigger temp>... / mem_used>...); may be NULL
 * @ring_ns:  0: every sample goes to the part (a normal profile); else the
 *            flight recorder's --ring-s, and @edges_path must be set
 * @ring_bytes: the ring's hard bound in bytes (memory of the samples held)
 * @edges_path: the file the collectors append their capture edges to
 *            (GPUSCOPE_CAPTURE_EDGES; format in nvml_ring_edges); the
 *            sampler creates it empty when missing
 */
struct nvml_sampler_opts {
	unsigned hz;
	void (*watch)(void *ctx, unsigned gpu, const struct nvml_sample *s);
	void *watch_ctx;
	uint64_t ring_ns;
	size_t ring_bytes;
	const char *edges_path;
};

/*
 * nvml_sampler_open - sample every GPU as @o says into the new report
 * @path.  Returns NULL when no sampling is possible, with the reason in
 * @why ("no NVIDIA driver: libnvidia-ml.so.1 not found").
 */
struct nvml_sampler *nvml_sampler_open(const char *path, const struct nvml_sampler_opts *o, char *why,
				       size_t whylen);
/* nvml_sampler_start - nvml_sampler_open() at @hz, no watch, no ring. */
struct nvml_sampler *nvml_sampler_start(const char *path, unsigned hz, char *why, size_t whylen);
/* nvml_sampler_start_watch - the same with @watch(@ctx, gpu, sample) (see nvml_sampler_opts). */
struct nvml_sampler *nvml_sampler_start_watch(const char *path, unsigned hz,
					      void (*watch)(void *ctx, unsigned gpu, const struct nvml_sample *s),
					      void *ctx, char *why, size_t whylen);
/*
 * nvml_sampler_finish - stop, write the last samples (with a ring: those
 * the ring keeps at the end) and close the part; what was done into @st
 * when not NULL.  Frees @s.  0 or -1 (a write failed).
 */
int nvml_sampler_finish(struct nvml_sampler *s, struct nvml_sampler_stats *st);
/* nvml_sampler_stop - nvml_sampler_finish() without the numbers. */
int nvml_sampler_stop(struct nvml_sampler *s);

/*
 * struct nvml_ring - the GPU metrics' flight recorder (profile --on-demand).
 *
 * Samples are appended in time order.  A sample is decided once it is older
 * than ring_ns + slack_ns: it is kept (handed to @emit) when it lies in the
 * reach of a capture, [begin - ring_ns, end] (end: open = for ever), else
 * forgotten.  Any capture whose reach holds a sample of time t begins by
 * t + ring_ns, so when the sample is decided that capture began at least
 * slack_ns ago: slack_ns is the most a capture's start may take to be
 * known here (nvml_ring_edge).  At the end (nvml_ring_finish) every sample
 * left is decided, those within ring_ns of the end kept too.
 *
 * Memory: at most max samples (the byte bound / sizeof(struct
 * trace_metric)); the buffer grows as needed up to that.  When full, the
 * oldest sample is decided at once (kept in a known reach, else forgotten
 * and counted in evicted): a capture then reaches back less than ring_ns.
 * Captures are forgotten once closed before every sample still held.
 */
struct nvml_ring_capture {
	uint32_t pid, id;
	uint64_t begin, end;      /* report clock; end 0 = open */
};

struct nvml_ring {
	struct trace_metric *v;   /* circular: v[(head + i) % alloc], i < n */
	size_t head, n, alloc, max;
	uint64_t ring_ns, slack_ns;
	struct nvml_ring_capture *cap;
	size_t ncap, acap;
	void (*emit)(void *ctx, const struct trace_metric *m);
	void *ctx;
	uint64_t pushed, kept, evicted;
	size_t peak, captures;
};

/* nvml_ring_init - an empty ring of at most @max samples (at least 1); no allocation. */
void nvml_ring_init(struct nvml_ring *r, uint64_t ring_ns, uint64_t slack_ns, size_t max,
		    void (*emit)(void *ctx, const struct trace_metric *m), void *ctx);
/* nvml_ring_push - append @m (deciding the oldest first when the ring is full). */
void nvml_ring_push(struct nvml_ring *r, const struct trace_metric *m);
/*
 * nvml_ring_edge - capture @id of process @pid started (@start 1) or
 * stopped at @t.  A stop of a capture not known is ignored.
 */
void nvml_ring_edge(struct nvml_ring *r, int start, uint32_t pid, uint32_t id, uint64_t t);
/*
 * nvml_ring_edges - read the edge lines of @buf (@len bytes), as the
 * collector writes them: "start PID ID TIME\n" and "stop PID ID TIME\n"
 * (TIME in ns of the report clock).  Only whole lines are read; malformed
 * ones are skipped.  Returns the bytes read (the rest: a line not yet whole).
 */
size_t nvml_ring_edges(struct nvml_ring *r, const char *buf, size_t len);
/* nvml_ring_advance - decide the samples older than @now - ring_ns - slack_ns. */
void nvml_ring_advance(struct nvml_ring *r, uint64_t now);
/* nvml_ring_finish - the run ended at @end: decide every sample left. */
void nvml_ring_finish(struct nvml_ring *r, uint64_t end);
/* nvml_ring_release - free the ring's buffers. */
void nvml_ring_release(struct nvml_ring *r);

#endif
