/*
 * internal.h - what the exporters share: a checked buffered output, a
 * progress line, a u64 hash map, and the track layout of the timeline
 * formats (Perfetto and Chrome JSON show the same tracks).
 */
#ifndef GS_EXPORT_INTERNAL_H
#define GS_EXPORT_INTERNAL_H

#include "export.h"
#include "../util/util.h"

#include <string.h>

/* ---- checked output ---- */

/*
 * xout - a buffered output file.  Every write is checked; after the first
 * failure the rest is dropped and xout_close() returns -1.  The buffer and
 * path are owned by the xout.
 */
struct xout {
	int fd;
	int is_regular;        /* remove the file when the export fails */
	int failed;
	char *path;
	unsigned char *buf;
	size_t len, cap;
	uint64_t bytes;
};

/* Open @path for writing ("-" = stdout); refuses an existing regular file unless @force. */
int xout_open(struct xout *o, const char *path, int force);
void xout_flush_buf(struct xout *o);
/* Flush and close; @ok = 0 marks the export failed.  Returns 0 or -1 (file removed). */
int xout_close(struct xout *o, int ok);

static inline void xout_write(struct xout *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		xout_flush_buf(o);
		if (n > o->cap) {
			/* larger than the buffer: write through */
			const unsigned char *c = p;
			while (n) {
				size_t k = n < o->cap ? n : o->cap;
				memcpy(o->buf, c, k);
				o->len = k;
				xout_flush_buf(o);
				c += k;
				n -= k;
			}
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}
static inline void xout_str(struct xout *o, const char *s)
{
	xout_write(o, s, strlen(s));
}
static inline void xout_ch(struct xout *o, char c)
{
	if (o->len + 1 > o->cap)
		xout_flush_buf(o);
	o->buf[o->len++] = (unsigned char)c;
}
void xout_u64(struct xout *o, uint64_t v);
void xout_i64(struct xout *o, int64_t v);
/* @ns as microseconds with three decimals ("12.345"). */
void xout_us3(struct xout *o, uint64_t ns);
/* A double, shortest round-trip form, JSON-safe (non-finite as null). */
void xout_double(struct xout *o, double v);
void xout_json_str(struct xout *o, const char *s); /* with quotes */
void xout_printf(struct xout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- progress: struct progress is util.h's ---- */

/* ---- u64 -> u64 hash map (open addressing; key UINT64_MAX is reserved) ---- */

struct u64map {
	uint64_t *keys, *vals;
	size_t n, cap;
};
void u64map_release(struct u64map *h);
/* Pointer to the value of @key, inserting it (value 0) when @create; NULL when absent. */
uint64_t *u64map_get(struct u64map *h, uint64_t key, int create);

/* ---- timeline layout ---- */

enum lay_src {
	SRC_API, SRC_OSRT, SRC_NVTX, SRC_KERNEL, SRC_MEMCPY, SRC_MEMSET, SRC_SYNC, SRC__COUNT
};

enum lay_kind {
	LT_PROCESS = 1,
	LT_THREAD,    /* a CPU thread: API calls, OS runtime calls, NVTX push/pop, marks */
	LT_LANE,      /* overflow lane or other slice track under a process or thread */
	LT_GPU,
	LT_STREAM,
	LT_COUNTER,
};

struct lay_track {
	uint64_t uuid;
	uint32_t parent;           /* index + 1 of the parent track; 0 = top level */
	uint8_t kind;              /* enum lay_kind */
	uint32_t pid, tid;         /* real ids (process, thread tracks) */
	uint32_t device;           /* GPU tracks */
	char *name;
	char *unit;                /* counters: unit name, or NULL */
	uint32_t json_pid, json_tid; /* where the track lives in Chrome JSON */
	int32_t rank;              /* order among siblings */
};

/*
 * lay - tracks and per-row assignments.  Every slice row of the model gets
 * a track on which it nests strictly (rows that would partially overlap
 * another go to a further lane), and flows link each launch to the first
 * GPU operation with its correlation id in the same process.
 */
struct lay {
	const struct model *m;
	struct lay_track *tracks;
	size_t ntracks, alloc_tracks;
	uint32_t *track[SRC__COUNT];  /* per row of each source table: track index */
	uint32_t *mark_track;         /* per NVTX mark */
	uint8_t *flow[SRC__COUNT];    /* per row: 1 = flow out (API), 2 = flow in (GPU) */
	uint64_t nflows;
	uint64_t nslices;
	/* counter tracks */
	uint32_t *metric_track;       /* per metric row */
	uint32_t *cpu_track;          /* per cpu sample row, UINT32_MAX = no value */
	double *cpu_value;            /* per cpu sample row: CPU use in percent */
	uint32_t *mem_track;          /* per memory row, UINT32_MAX = not device memory */
	double *mem_value;            /* per memory row: bytes in use after it */
	/*
	 * PyTorch's allocator (docs/memory.md): per torch_mem row i, the
	 * tracks of its allocated [2i] and reserved [2i + 1] bytes,
	 * UINT32_MAX = none (Kineto's samples are already metric rows).
	 */
	uint32_t *torch_track;
	uint64_t ncounter_samples;
	uint32_t next_json_tid;
	/* private to layout.c */
	struct lay_group *groups;
	size_t ngroups, alloc_groups;
	struct u64map group_map;      /* hash of the group key -> group index + 1 (chained by probing) */
	struct u64map procs, gpus, metric_tracks, cpu_tracks, mem_tracks;
	int multi_pid;
};

int lay_build(struct lay *l, const struct model *m);
void lay_release(struct lay *l);

/* The start and end of row @i of source @src (open NVTX ranges end at the model's end). */
void lay_span(const struct model *m, int src, size_t i, uint64_t *s, uint64_t *e);

/* Visit every slice row of every source in order of start (ties: the longer first). */
struct lay_iter {
	/*
	 * Rows of one source with the same start are visited longest first:
	 * tables are sorted by (start, end), so a run of equal starts is walked
	 * backwards, from run_hi down to run_lo.
	 */
	size_t next[SRC__COUNT];      /* first row after the current run */
	size_t run_lo[SRC__COUNT];
	size_t cur[SRC__COUNT];       /* next row to visit, counting down; run done when < run_lo */
	int live[SRC__COUNT];         /* cur is a valid row */
	uint64_t hs[SRC__COUNT], he[SRC__COUNT]; /* span of each head row */
	int started;
};
/* The next slice: sets *src and *row; returns 0 at the end. */
int lay_next(const struct model *m, struct lay_iter *it, int *src, size_t *row, uint64_t *s,
	     uint64_t *e);

/* Display name of a slice (static strings or model strings). */
const char *lay_slice_name(const struct model *m, int src, size_t row);
const char *lay_src_category(int src);
/* Flow id of a correlated pair (same on both ends). */
static inline uint64_t lay_flow_id(uint32_t pid, uint32_t correlation)
{
	return ((uint64_t)pid << 32) | correlation;
}

/* ---- shared naming ---- */
const char *export_copy_name(unsigned kind);       /* "Memcpy HtoD" */
const char *export_sync_name(unsigned type);       /* "Sync stream" */
/* A process's short name: the executable's base name, else "pid N" (buffer). */
const char *export_process_name(const struct model *m, uint32_t pid, char *buf, size_t n);

/* The earliest time of any row, counters included (0 for an empty model). */
uint64_t export_t0(const struct model *m);

/* ---- writers ---- */
/*
 * The writers of the format table (export.c).  The stream writers get an
 * opened xout; sqlite and csv open their own files.
 */
int export_perfetto(const struct export_input *in, struct xout *o);
int export_chrome(const struct export_input *in, struct xout *o);
int export_sqlite(const struct export_input *in, const char *path);
int export_csv(const struct export_input *in, const char *path);
int export_json(const struct export_input *in, struct xout *o);
int export_html(const struct export_input *in, struct xout *o);

#endif
