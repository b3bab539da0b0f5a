/*
 * import.c - format detection and dispatch.
 *
 * The format is told by content: the report magic "GPUSCOPE", the SQLite
 * header "SQLite format 3\0", the gzip magic 1f 8b (a compressed Kineto
 * trace), or JSON text whose first non-blank byte is '{' or '['.
 */
#include "import.h"
#include "import_int.h"
#include "model/device_facts.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int import_sniff_sqlite(const unsigned char *p, size_t n)
{
	return n >= 16 && !memcmp(p, "SQLite format 3", 16);
}

int import_sniff_json(const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3; /* UTF-8 byte-order mark */
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i < n && (p[i] == '{' || p[i] == '[');
}

void import_count_events(struct model *m)
{
	m->events = m->nvtx.n + m->marks.n + m->names.n + m->osrt.n + m->cpu.n + m->api.n +
		    m->kernels.n + m->memcpys.n + m->memsets.n + m->syncs.n + m->memory.n +
		    m->metrics.n + m->captures.n + m->devices.n;
}

struct range_ref {
	uint32_t pid, tid;
	uint64_t start, end;
	size_t idx;
};

static int cmp_range_ref(const void *a, const void *b)
{
	const struct range_ref *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the enclosing range first */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void import_nvtx_levels(struct model *m)
{
	struct range_ref *refs;
	uint64_t *stack = NULL;
	size_t n = 0, depth = 0, alloc = 0;

	if (!m->nvtx.n)
		return;
	refs = xmalloc(m->nvtx.n * sizeof(*refs));
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		if (!r->tid || r->kind != TRACE_NVTX_PUSHPOP)
			continue;
		refs[n].pid = r->pid;
		refs[n].tid = r->tid;
		refs[n].start = r->start;
		refs[n].end = r->end;
		refs[n++].idx = i;
	}
	qsort(refs, n, sizeof(*refs), cmp_range_ref);
	for (size_t i = 0; i < n; i++) {
		if (i && (refs[i].pid != refs[i - 1].pid || refs[i].tid != refs[i - 1].tid))
			depth = 0;
		while (depth && stack[depth - 1] <= refs[i].start)
			depth--;
		m->nvtx.v[refs[i].idx].level = (uint16_t)(depth > 0xffff ? 0xffff : depth);
		ALLOC_GROW(stack, depth + 1, alloc);
		stack[depth++] = refs[i].end;
	}
	free(stack);
	free(refs);
}

/* The first bytes of @path, decompressed when it is gzip; -1 on I/O error. */
static ssize_t read_head(const char *path, unsigned char *buf, size_t len, int *gzip)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	if (n < 0)
		return -1;
	*gzip = n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
	if (*gzip) {
		gzFile gz = gzopen(path, "rb");
		if (!gz)
			return -1;
		n = gzread(gz, buf, (unsigned)len);
		gzclose(gz);
		if (n < 0)
			n = 0; /* damaged: the importer says so with its own message */
	}
	return n;
}

/* A sink for the lean load: @o's, with @o's progress callback. */
static void sink_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct load_opts *o = ctx;

	if (o->progress)
		o->progress(o->progress_ctx, done, total);
	if (o->sink && o->sink->progress)
		o->sink->progress(o->sink->ctx, done, total);
}

static void sink_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct load_opts *o = ctx;

	o->sink->row(o->sink->ctx, stream, type, rec);
}

static void sink_strings(void *ctx, const struct model_strmap *map)
{
	struct load_opts *o = ctx;

	if (o->sink->strings)
		o->sink->strings(o->sink->ctx, map);
}

/*
 * The loader's window of @o (load_opts): the report's span first (one
 * streaming pass), then [start - margin, end + margin] in absolute times.
 */
static int report_window(const char *path, struct load_opts *o, struct model_sink *s,
			 uint64_t *span_min, uint64_t *span_max)
{
	uint64_t lo, hi;

	if (model_report_span(path, span_min, span_max) < 0)
		return -1;
	if (o->win_absolute) {
		s->window_lo = o->win_start > o->win_margin ? o->win_start - o->win_margin : 0;
		s->window_hi = o->win_end < UINT64_MAX - o->win_margin ? o->win_end + o->win_margin : UINT64_MAX;
		s->window_keep = o->win_keep;
		return 0;
	}
	lo = *span_min + o->win_start;
	lo = lo > o->win_margin ? lo - o->win_margin : 0;
	hi = o->win_end ? *span_min + o->win_end : UINT64_MAX;
	hi = hi < UINT64_MAX - o->win_margin ? hi + o->win_margin : UINT64_MAX;
	s->window_lo = lo;
	s->window_hi = hi;
	s->window_keep = o->win_keep;
	return 0;
}

static void drop_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	(void)ctx;
	(void)stream;
	(void)type;
	(void)rec;
}

int load_nvtx_extent(const char *path, const char *want, uint64_t *lo, uint64_t *hi)
{
	struct model_sink s = { 0 };
	struct model m;
	int found = 0, is = trace_is_report(path);

	*lo = *hi = 0;
	if (is <= 0)
		return 0; /* not a report (or unreadable: the load says why) */
	/* every timed record type but the NVTX ranges passes by unstored */
	s.types = (1u << TRACE_EV_NVTX_MARK) | (1u << TRACE_EV_OSRT) | (1u << TRACE_EV_CPU_SAMPLE) |
		  (1u << TRACE_EV_API) | (1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_MEMCPY) |
		  (1u << TRACE_EV_MEMSET) | (1u << TRACE_EV_SYNC) | (1u << TRACE_EV_MEMORY) |
		  (1u << TRACE_EV_METRIC) | (1u << TRACE_EV_CAPTURE) | (1u << TRACE_EV_KMETRIC) |
		  (1u << TRACE_EV_TORCH_MEM) | (1u << TRACE_EV_OOM);
	s.row = drop_row;
	model_init(&m);
	if (model_load_report_sink(&m, path, &s) < 0) {
		model_release(&m);
		return -1;
	}
	/* the ranges analyze's window takes (analyze.c build_window) */
	for (size_t i = 0; i < m.nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m.nvtx.v[i];
		if (r->end <= r->start || !model_name_matches(model_str(&m, r->name_id), want))
			continue;
		if (!found || r->start < *lo)
			*lo = r->start;
		if (r->end > *hi)
			*hi = r->end;
		found = 1;
	}
	model_release(&m);
	return found;
}

static int load_report(struct model *m, const char *path, struct load_opts *o)
{
	struct model_sink s = { 0 };
	uint64_t span_min = 0, span_max = 0;
	int ret;

	if (o && o->windowed && !o->sink) {
		/* a windowed load: rows outside the window are neither stored nor handed on */
		if (report_window(path, o, &s, &span_min, &span_max) < 0)
			return -1;
		/*
		 * Refuse a window that cannot fit, as a whole load is refused:
		 * its share of the report's span stands for its share of the rows
		 * (an estimate: rows are rarely spread evenly).
		 */
		if (span_max > span_min) {
			uint64_t a = s.window_lo > span_min ? s.window_lo : span_min;
			uint64_t b = s.window_hi < span_max ? s.window_hi : span_max;
			double share = b > a ? (double)(b - a) / (double)(span_max - span_min) : 0;
			if (model_window_fits(path, share) < 0)
				return -1;
		}
		s.ctx = o;
		s.progress = sink_progress;
		ret = model_load_report_sink(m, path, &s);
		if (ret == 0) {
			/* the span of the whole report, as a whole load gives (times count from it) */
			m->t_min = span_min;
			m->t_max = span_max;
			o->win_loaded = 1;
		}
		return ret;
	}
	if (!o || (!o->sink && !o->progress))
		return model_load_report(m, path);
	s.ctx = o;
	s.progress = sink_progress;
	if (o->sink) {
		s.types = o->sink->types;
		s.row = sink_row;
		s.strings = sink_strings;
		/* the loader's window (stats --start/--end): rows outside it are not stored */
		s.window_lo = o->sink->window_lo;
		s.window_hi = o->sink->window_hi;
		o->sunk = 1;
	}
	return model_load_report_sink(m, path, &s);
}

/*
 * The load options of the import in hand, for import_progress(); set by
 * with_progress() around one importer call (a command loads one input at
 * a time).
 */
static const struct load_opts *progress_to;
static uint64_t progress_size;   /* the file's size in bytes */

void import_progress(uint64_t done, uint64_t total)
{
	if (!progress_to || !progress_to->progress)
		return;
	if (!total) {
		total = progress_size;
		if (done > total)
			done = total;   /* a file that grew while it was read */
	}
	progress_to->progress(progress_to->progress_ctx, done, total);
}

static int with_progress(int (*load)(struct model *m, const char *path), struct model *m,
			 const char *path, const struct load_opts *o, uint64_t size)
{
	int ret;

	progress_to = o;
	progress_size = size;
	ret = load(m, path);
	progress_to = NULL;
	return ret;
}

/* Load @path by its format (the importers), before the GPU table fills in missing device facts. */
static int load_any(struct model *m, const char *path, struct load_opts *o)
{
	unsigned char head[64];
	struct stat st;
	ssize_t n;
	int is_report, gzip = 0;

	if (stat(path, &st) < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return error("cannot read '%s': is a directory", path);
	is_report = trace_is_report(path);
	if (is_report < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (is_report)
		return load_report(m, path, o);
	n = read_head(path, head, sizeof(head), &gzip);
	if (n < 0)
		return error("cannot read '%s': %s", path, strerror(errno));
	if (import_sniff_sqlite(head, (size_t)n))
		return with_progress(nsys_load, m, path, o, (uint64_t)st.st_size);
	if (import_sniff_json(head, (size_t)n))
		return with_progress(kineto_load, m, path, o, (uint64_t)st.st_size);
	if (gzip)
		return error("'%s' is gzip-compressed but holds no JSON trace%s", path,
			     n == 0 ? " (the gzip stream is damaged)" : "");
	return error("'%s' is not a gpuscope report, Kineto JSON trace or nsys SQLite export",
		     path);
}

/*
 * The facts a device row lacks (an nsys export without TARGET_INFO_GPU's
 * SM count, a Kineto trace with an empty name) come from the GPU table,
 * marked "table" in m->device_sources, here once for every consumer
 * (model/device_facts.h).
 */
int load_input(struct model *m, const char *path)
{
	return load_input_opts(m, path, NULL);
}

int load_input_opts(struct model *m, const char *path, struct load_opts *o)
{
	if (o)
		o->sunk = o->win_loaded = 0;
	if (load_any(m, path, o) < 0)
		return -1;
	model_apply_gpu_facts(m);
	return 0;
}
