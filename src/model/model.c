/*
 * model.c - loading a report into the model, finishing and clipping it.
 */
#include "model.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void *model_table_push(void **v, size_t *n, size_t *alloc, size_t elem)
{
	char *p;

	if (*n + 1 > *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*v = xrealloc(*v, *alloc * elem);
	}
	p = (char *)*v + *n * elem;
	memset(p, 0, elem);
	(*n)++;
	return p;
}

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	strtab_init(&m->str);
	m->format = "gpuscope";
}

#define FREE_TABLE(t) do { free((t).v); (t).v = NULL; (t).n = (t).alloc = 0; } while (0)

void model_release(struct model *m)
{
	FREE_TABLE(m->procs);
	FREE_TABLE(m->threads);
	FREE_TABLE(m->devices);
	FREE_TABLE(m->nvtx);
	FREE_TABLE(m->marks);
	FREE_TABLE(m->names);
	FREE_TABLE(m->osrt);
	FREE_TABLE(m->cpu);
	FREE_TABLE(m->api);
	FREE_TABLE(m->kernels);
	FREE_TABLE(m->memcpys);
	FREE_TABLE(m->memsets);
	FREE_TABLE(m->syncs);
	FREE_TABLE(m->memory);
	FREE_TABLE(m->metrics);
	FREE_TABLE(m->captures);
	FREE_TABLE(m->device_sources);
	FREE_TABLE(m->kmetrics);
	FREE_TABLE(m->torch_mem);
	FREE_TABLE(m->ooms);
	FREE_TABLE(m->op_shapes);
	FREE_TABLE(m->op_launches);
	for (size_t i = 0; i < m->nr_warnings; i++)
		free(m->warnings[i]);
	free(m->warnings);
	free(m->path);
	strtab_release(&m->str);
	memset(m, 0, sizeof(*m));
}

void model_warn(struct model *m, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < m->nr_warnings; i++) {
		if (!strcmp(m->warnings[i], sb.buf)) {
			strbuf_release(&sb);
			return;
		}
	}
	ALLOC_GROW(m->warnings, m->nr_warnings + 1, m->alloc_warnings);
	m->warnings[m->nr_warnings++] = sb.buf;
}

/* ---- loading ---- */

/* Which stream the rows of a table from index `first` on came from. */
struct seg {
	size_t first;
	uint32_t stream;
};

struct segs {
	struct seg *v;
	size_t n, alloc;
};

struct stream_state {
	uint32_t *map;             /* local string id -> model id, UINT32_MAX = undefined */
	size_t map_n;
	uint32_t pid;
	uint64_t drops[TRACE_DROP__COUNT];
	int seen;
};

struct loader {
	struct model *m;
	struct stream_state *streams;
	size_t nr_streams;
	struct segs segs[TRACE_EV__COUNT];
	MODEL_TABLE(struct trace_nvtx_end) ends;
	MODEL_TABLE(uint32_t) end_streams;
	MODEL_TABLE(struct trace_thread) thread_ev;
	MODEL_TABLE(struct trace_warning) warn_ev;
	MODEL_TABLE(uint32_t) warn_streams;
	MODEL_TABLE(struct trace_process) proc_ev;
	MODEL_TABLE(uint32_t) proc_streams;
	MODEL_TABLE(struct trace_proc_attr) attr_ev;
	MODEL_TABLE(uint32_t) attr_streams;
	const struct model_sink *sink;
	size_t map_total, map_budget;  /* string-map slots of all streams, and their cap */
	uint32_t max_streams;          /* stream ids below this can be in a file this big */
	uint64_t streams_dropped;      /* entries and chunks of streams beyond it */
	uint64_t strings_dropped;      /* definitions with ids no real writer reaches */
	uint64_t metrics_dropped;      /* metric samples that are NaN or infinite */
	uint64_t sunk_min, sunk_max;   /* span of the rows handed to the sink */
	unsigned sunk_has;             /* MODEL_HAS_* of the rows handed to the sink */
};

/* The string map a sink sees is the loader itself. */
struct model_strmap {
	struct loader l;
};

static struct stream_state *stream_get(struct loader *l, uint32_t stream)
{
	if (stream >= l->max_streams) {
		l->streams_dropped++;
		return NULL;
	}
	if (stream >= l->nr_streams) {
		size_t n = stream + 1;
		l->streams = xrealloc(l->streams, n * sizeof(*l->streams));
		memset(l->streams + l->nr_streams, 0, (n - l->nr_streams) * sizeof(*l->streams));
		l->nr_streams = n;
	}
	l->streams[stream].seen = 1;
	return &l->streams[stream];
}

static void note_seg(struct loader *l, unsigned type, size_t first, uint32_t stream)
{
	struct segs *s = &l->segs[type];

	if (s->n && s->v[s->n - 1].stream == stream)
		return;
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	s->v[s->n].first = first;
	s->v[s->n].stream = stream;
	s->n++;
}

static void define_string(struct loader *l, struct stream_state *st, const void *rec, size_t size)
{
	struct trace_string ts;
	uint32_t gid;

	if (size < sizeof(ts))
		return;
	memcpy(&ts, rec, sizeof(ts));
	if (ts.len > size - sizeof(ts) || ts.id >= (1u << 26))
		return;
	if (ts.id >= st->map_n) {
		size_t n = st->map_n ? st->map_n : 1024;
		while (n <= ts.id)
			n *= 2;
		/*
		 * Ids are handed out densely from 1, and every id a writer hands
		 * out costs at least one 16-byte definition somewhere in the file,
		 * so the maps of all streams together never need more slots than a
		 * few times the file size in bytes.  A bigger id is damage or a
		 * crafted file (one 24-byte entry would cost 256 MiB): skip it.
		 */
		if (l->map_total - st->map_n + n > l->map_budget) {
			l->strings_dropped++;
			return;
		}
		l->map_total += n - st->map_n;
		st->map = xrealloc(st->map, n * sizeof(*st->map));
		memset(st->map + st->map_n, 0xff, (n - st->map_n) * sizeof(*st->map));
		st->map_n = n;
	}
	gid = strtab_intern_n(&l->m->str, (const char *)rec + sizeof(ts), ts.len);
	st->map[ts.id] = gid;
}

#define ADD_ROW(table, type_enum, T)                                         \
	do {                                                                 \
		note_seg(l, type_enum, m->table.n, stream);                  \
		ALLOC_GROW(m->table.v, m->table.n + 1, m->table.alloc);       \
		memcpy(&m->table.v[m->table.n++], rec, sizeof(T));           \
	} while (0)

static uint32_t map_id(const struct stream_state *st, uint32_t id)
{
	if (id == 0)
		return 0;
	if (id < st->map_n && st->map[id] != UINT32_MAX)
		return st->map[id];
	return 0;
}

static const unsigned sink_has[TRACE_EV__COUNT] = {
	[TRACE_EV_NVTX_RANGE] = MODEL_HAS_NVTX,
	[TRACE_EV_OSRT] = MODEL_HAS_OSRT,
	[TRACE_EV_API] = MODEL_HAS_CUDA | MODEL_HAS_API,
	[TRACE_EV_KERNEL] = MODEL_HAS_CUDA,
	[TRACE_EV_MEMCPY] = MODEL_HAS_CUDA,
	[TRACE_EV_MEMSET] = MODEL_HAS_CUDA,
	[TRACE_EV_SYNC] = MODEL_HAS_SYNC,
};

/* Hand a row to the sink; the record types a sink may take start with start, end. */
static void sink_row(struct loader *l, uint32_t stream, unsigned type, const void *rec)
{
	uint64_t se[2];

	if (type < TRACE_EV__COUNT && sink_has[type]) {
		memcpy(se, rec, sizeof(se));
		if (se[0] && (!l->sunk_min || se[0] < l->sunk_min))
			l->sunk_min = se[0];
		if (se[1] > l->sunk_max)
			l->sunk_max = se[1];
		if (se[0] > l->sunk_max)
			l->sunk_max = se[0];
		l->sunk_has |= sink_has[type];
	}
	l->sink->row(l->sink->ctx, stream, type, rec);
}

uint32_t model_strmap_id(const struct model_strmap *map, uint32_t stream, uint32_t local_id)
{
	const struct loader *l = &map->l;

	if (stream >= l->nr_streams)
		return 0;
	return map_id(&l->streams[stream], local_id);
}

/* Record types whose first field is a time (and not a start, end pair). */
static const unsigned char timed_point[TRACE_EV__COUNT] = {
	[TRACE_EV_NVTX_MARK] = 1, [TRACE_EV_CPU_SAMPLE] = 1, [TRACE_EV_MEMORY] = 1,
	[TRACE_EV_METRIC] = 1, [TRACE_EV_CAPTURE] = 1, [TRACE_EV_KMETRIC] = 1,
};

/* Does the row @rec of @type lie wholly outside the sink's window? */
static int outside_window(const struct model_sink *sink, unsigned type, const void *rec)
{
	uint64_t se[2];

	if (type >= TRACE_EV__COUNT)
		return 0;
	if (sink_has[type]) { /* the record types that start with start, end */
		memcpy(se, rec, sizeof(se));
		if (type == TRACE_EV_NVTX_RANGE && !se[1])
			return se[0] > sink->window_hi; /* not ended yet: its end is not known */
		if (se[1] < se[0])
			se[1] = se[0];
		return se[1] < sink->window_lo || se[0] > sink->window_hi;
	}
	if (timed_point[type]) {
		memcpy(se, rec, sizeof(se[0]));
		return se[0] < sink->window_lo || se[0] > sink->window_hi;
	}
	return 0;
}

static void load_entry(struct loader *l, uint32_t stream, unsigned type, const void *rec,
		       size_t size)
{
	struct model *m = l->m;
	struct stream_state *st = stream_get(l, stream);

	if (!st)
		return;
	if (l->sink && l->sink->window_hi && !(type < 32 && (l->sink->window_keep & (1u << type))) &&
	    outside_window(l->sink, type, rec))
		return;
	/*
	 * A NaN or infinity has no place on a time series (and breaks exports).
	 * Counted after the window: a windowed load that skips chunks by the
	 * index (window_want) counts the same samples as one that reads them.
	 */
	if (type == TRACE_EV_METRIC && !isfinite(((const struct trace_metric *)rec)->value)) {
		l->metrics_dropped++;
		return;
	}
	m->events++;
	if (l->sink && type < 32 && (l->sink->types & (1u << type))) {
		sink_row(l, stream, type, rec);
		return;
	}
	switch (type) {
	case TRACE_EV_STRING:
		m->events--;
		define_string(l, st, rec, size);
		break;
	case TRACE_EV_PROCESS:
		ALLOC_GROW(l->proc_ev.v, l->proc_ev.n + 1, l->proc_ev.alloc);
		memcpy(&l->proc_ev.v[l->proc_ev.n++], rec, sizeof(struct trace_process));
		ALLOC_GROW(l->proc_streams.v, l->proc_streams.n + 1, l->proc_streams.alloc);
		l->proc_streams.v[l->proc_streams.n++] = stream;
		st->pid = ((const struct trace_process *)rec)->pid;
		break;
	case TRACE_EV_THREAD:
		ALLOC_GROW(l->thread_ev.v, l->thread_ev.n + 1, l->thread_ev.alloc);
		memcpy(&l->thread_ev.v[l->thread_ev.n], rec, sizeof(struct trace_thread));
		/* remap the name now if known, else later through a segment */
		note_seg(l, TRACE_EV_THREAD, l->thread_ev.n, stream);
		l->thread_ev.n++;
		break;
	case TRACE_EV_NVTX_RANGE: ADD_ROW(nvtx, TRACE_EV_NVTX_RANGE, struct trace_nvtx_range); break;
	case TRACE_EV_NVTX_END:
		ALLOC_GROW(l->ends.v, l->ends.n + 1, l->ends.alloc);
		memcpy(&l->ends.v[l->ends.n++], rec, sizeof(struct trace_nvtx_end));
		ALLOC_GROW(l->end_streams.v, l->end_streams.n + 1, l->end_streams.alloc);
		l->end_streams.v[l->end_streams.n++] = stream;
		break;
	case TRACE_EV_NVTX_MARK: ADD_ROW(marks, TRACE_EV_NVTX_MARK, struct trace_nvtx_mark); break;
	case TRACE_EV_NAME: ADD_ROW(names, TRACE_EV_NAME, struct trace_name); break;
	case TRACE_EV_OSRT: ADD_ROW(osrt, TRACE_EV_OSRT, struct trace_osrt); break;
	case TRACE_EV_CPU_SAMPLE: ADD_ROW(cpu, TRACE_EV_CPU_SAMPLE, struct trace_cpu_sample); break;
	case TRACE_EV_API: ADD_ROW(api, TRACE_EV_API, struct trace_api); break;
	case TRACE_EV_KERNEL: ADD_ROW(kernels, TRACE_EV_KERNEL, struct trace_kernel); break;
	case TRACE_EV_MEMCPY: ADD_ROW(memcpys, TRACE_EV_MEMCPY, struct trace_memcpy); break;
	case TRACE_EV_MEMSET: ADD_ROW(memsets, TRACE_EV_MEMSET, struct trace_memset); break;
	case TRACE_EV_SYNC: ADD_ROW(syncs, TRACE_EV_SYNC, struct trace_sync); break;
	case TRACE_EV_MEMORY: ADD_ROW(memory, TRACE_EV_MEMORY, struct trace_memory); break;
	case TRACE_EV_DEVICE: ADD_ROW(devices, TRACE_EV_DEVICE, struct trace_device); break;
	case TRACE_EV_METRIC: ADD_ROW(metrics, TRACE_EV_METRIC, struct trace_metric); break;
	case TRACE_EV_CAPTURE: ADD_ROW(captures, TRACE_EV_CAPTURE, struct trace_capture); break;
	case TRACE_EV_KMETRIC: ADD_ROW(kmetrics, TRACE_EV_KMETRIC, struct trace_kmetric); break;
	case TRACE_EV_PROC_ATTR:
		ALLOC_GROW(l->attr_ev.v, l->attr_ev.n + 1, l->attr_ev.alloc);
		memcpy(&l->attr_ev.v[l->attr_ev.n++], rec, sizeof(struct trace_proc_attr));
		ALLOC_GROW(l->attr_streams.v, l->attr_streams.n + 1, l->attr_streams.alloc);
		l->attr_streams.v[l->attr_streams.n++] = stream;
		break;
	case TRACE_EV_TORCH_MEM: ADD_ROW(torch_mem, TRACE_EV_TORCH_MEM, struct trace_torch_mem); break;
	case TRACE_EV_OOM: ADD_ROW(ooms, TRACE_EV_OOM, struct trace_oom); break;
	case TRACE_EV_DROPS: {
		const struct trace_drops *d = rec;
		m->events--;
		if (d->source < TRACE_DROP__COUNT && d->count > st->drops[d->source])
			st->drops[d->source] = d->count;
		break;
	}
	case TRACE_EV_WARNING:
		m->events--;
		ALLOC_GROW(l->warn_ev.v, l->warn_ev.n + 1, l->warn_ev.alloc);
		memcpy(&l->warn_ev.v[l->warn_ev.n++], rec, sizeof(struct trace_warning));
		ALLOC_GROW(l->warn_streams.v, l->warn_streams.n + 1, l->warn_streams.alloc);
		l->warn_streams.v[l->warn_streams.n++] = stream;
		break;
	default:
		m->events--; /* unknown entry type from a newer writer: skipped */
		break;
	}
}


/* Remap the string fields of rows [from, to) of @type using stream @st. */
static void remap_rows(struct loader *l, unsigned type, size_t from, size_t to,
		       const struct stream_state *st)
{
	struct model *m = l->m;

	for (size_t i = from; i < to; i++) {
		switch (type) {
		case TRACE_EV_THREAD:
			l->thread_ev.v[i].name_id = map_id(st, l->thread_ev.v[i].name_id);
			break;
		case TRACE_EV_NVTX_RANGE:
			m->nvtx.v[i].name_id = map_id(st, m->nvtx.v[i].name_id);
			m->nvtx.v[i].domain_id = map_id(st, m->nvtx.v[i].domain_id);
			break;
		case TRACE_EV_NVTX_MARK:
			m->marks.v[i].name_id = map_id(st, m->marks.v[i].name_id);
			m->marks.v[i].domain_id = map_id(st, m->marks.v[i].domain_id);
			break;
		case TRACE_EV_NAME:
			m->names.v[i].name_id = map_id(st, m->names.v[i].name_id);
			m->names.v[i].domain_id = map_id(st, m->names.v[i].domain_id);
			break;
		case TRACE_EV_API:
			m->api.v[i].name_id = map_id(st, m->api.v[i].name_id);
			break;
		case TRACE_EV_KERNEL:
			m->kernels.v[i].name_id = map_id(st, m->kernels.v[i].name_id);
			m->kernels.v[i].mangled_id = map_id(st, m->kernels.v[i].mangled_id);
			break;
		case TRACE_EV_DEVICE:
			m->devices.v[i].name_id = map_id(st, m->devices.v[i].name_id);
			break;
		case TRACE_EV_METRIC:
			m->metrics.v[i].name_id = map_id(st, m->metrics.v[i].name_id);
			break;
		case TRACE_EV_KMETRIC:
			m->kmetrics.v[i].kernel_id = map_id(st, m->kmetrics.v[i].kernel_id);
			m->kmetrics.v[i].key_id = map_id(st, m->kmetrics.v[i].key_id);
			m->kmetrics.v[i].metric_id = map_id(st, m->kmetrics.v[i].metric_id);
			break;
		case TRACE_EV_OOM:
			m->ooms.v[i].detail_id = map_id(st, m->ooms.v[i].detail_id);
			break;
		default:
			return;
		}
	}
}

static size_t table_len(struct loader *l, unsigned type)
{
	struct model *m = l->m;

	switch (type) {
	case TRACE_EV_THREAD: return l->thread_ev.n;
	case TRACE_EV_NVTX_RANGE: return m->nvtx.n;
	case TRACE_EV_NVTX_MARK: return m->marks.n;
	case TRACE_EV_NAME: return m->names.n;
	case TRACE_EV_API: return m->api.n;
	case TRACE_EV_KERNEL: return m->kernels.n;
	case TRACE_EV_DEVICE: return m->devices.n;
	case TRACE_EV_METRIC: return m->metrics.n;
	case TRACE_EV_KMETRIC: return m->kmetrics.n;
	case TRACE_EV_OOM: return m->ooms.n;
	default: return 0;
	}
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

struct end_key {
	uint64_t key;
	size_t idx;
	int used;
};

static int cmp_end_key(const void *a, const void *b)
{
	const struct end_key *x = a, *y = b;
	return cmp_u64(x->key, y->key);
}

static void join_nvtx_ends(struct loader *l)
{
	struct model *m = l->m;
	struct end_key *keys;
	size_t nk = 0;
	struct segs *s = &l->segs[TRACE_EV_NVTX_RANGE];
	size_t si = 0;

	if (!l->ends.n)
		return;
	keys = xmalloc(l->ends.n * sizeof(*keys));
	for (size_t i = 0; i < l->ends.n; i++) {
		keys[nk].key = ((uint64_t)l->end_streams.v[i] << 44) ^ l->ends.v[i].range_id;
		keys[nk].idx = i;
		keys[nk].used = 0;
		nk++;
	}
	qsort(keys, nk, sizeof(*keys), cmp_end_key);
	for (size_t i = 0; i < m->nvtx.n; i++) {
		struct trace_nvtx_range *r = &m->nvtx.v[i];
		struct end_key probe, *hit;
		uint32_t stream;

		while (si + 1 < s->n && s->v[si + 1].first <= i)
			si++;
		if (r->kind != TRACE_NVTX_STARTEND || r->end)
			continue;
		stream = s->n ? s->v[si].stream : 0;
		probe.key = ((uint64_t)stream << 44) ^ r->range_id;
		hit = bsearch(&probe, keys, nk, sizeof(*keys), cmp_end_key);
		if (hit) {
			/* several ends may share a key: take the first unused one */
			while (hit > keys && hit[-1].key == probe.key)
				hit--;
			while (hit < keys + nk && hit->key == probe.key && hit->used)
				hit++;
		}
		if (hit && hit < keys + nk && hit->key == probe.key) {
			const struct trace_nvtx_end *e = &l->ends.v[hit->idx];
			r->end = e->end;
			r->end_tid = e->tid;
			hit->used = 1; /* a second start with the same id takes the next end */
		}
	}
	for (size_t i = 0; i < nk; i++)
		if (!keys[i].used)
			m->nvtx_orphan_ends++;
	free(keys);
}

static void loader_finish(struct loader *l)
{
	struct model *m = l->m;

	/* strings */
	for (unsigned type = 1; type < TRACE_EV__COUNT; type++) {
		struct segs *s = &l->segs[type];
		size_t n = table_len(l, type);
		for (size_t i = 0; i < s->n; i++) {
			size_t to = i + 1 < s->n ? s->v[i + 1].first : n;
			remap_rows(l, type, s->v[i].first, to, &l->streams[s->v[i].stream]);
		}
	}
	join_nvtx_ends(l);

	/* processes */
	for (size_t i = 0; i < l->proc_ev.n; i++) {
		const struct trace_process *p = &l->proc_ev.v[i];
		const struct stream_state *st = &l->streams[l->proc_streams.v[i]];
		struct model_process *mp = MODEL_PUSH(m->procs);
		mp->pid = p->pid;
		mp->ppid = p->ppid;
		mp->start_realtime_ns = p->start_realtime_ns;
		mp->start_mono_ns = p->start_mono_ns;
		mp->cmdline_id = map_id(st, p->cmdline_id);
		mp->exe_id = map_id(st, p->exe_id);
		mp->host_id = map_id(st, p->host_id);
		mp->stream = l->proc_streams.v[i];
	}

	/* process attributes, in file order: a later record adds to an earlier one */
	for (size_t i = 0; i < l->attr_ev.n; i++) {
		struct trace_proc_attr a = l->attr_ev.v[i];
		const struct stream_state *st = &l->streams[l->attr_streams.v[i]];
		a.launcher_id = map_id(st, a.launcher_id);
		a.cpus_id = map_id(st, a.cpus_id);
		model_proc_set_attr(m, a.pid, &a);
	}

	/* thread events become thread rows (merged in model_finish) */
	for (size_t i = 0; i < l->thread_ev.n; i++) {
		const struct trace_thread *t = &l->thread_ev.v[i];
		struct model_thread *mt = MODEL_PUSH(m->threads);
		mt->pid = t->pid;
		mt->tid = t->tid;
		mt->name_id = (t->flags & TRACE_THREAD_NAME) ? t->name_id : 0;
		mt->first = mt->last = t->time;
	}

	for (size_t i = 0; i < l->warn_ev.n; i++) {
		const struct stream_state *st = &l->streams[l->warn_streams.v[i]];
		uint32_t id = map_id(st, l->warn_ev.v[i].message_id);
		model_warn(m, "process %u: %s", l->warn_ev.v[i].pid, model_str(m, id));
	}

	for (size_t s = 0; s < l->nr_streams; s++)
		for (unsigned d = 0; d < TRACE_DROP__COUNT; d++)
			m->drops[d] += l->streams[s].drops[d];
}

static void loader_release(struct loader *l)
{
	for (size_t s = 0; s < l->nr_streams; s++)
		free(l->streams[s].map);
	free(l->streams);
	for (unsigned t = 0; t < TRACE_EV__COUNT; t++)
		free(l->segs[t].v);
	free(l->ends.v);
	free(l->end_streams.v);
	free(l->thread_ev.v);
	free(l->warn_ev.v);
	free(l->warn_streams.v);
	free(l->proc_ev.v);
	free(l->proc_streams.v);
	free(l->attr_ev.v);
	free(l->attr_streams.v);
}

int model_load_report(struct model *m, const char *path)
{
	return model_load_report_sink(m, path, NULL);
}

/*
 * Read-ahead: for a big report, one thread reads, checks and decompresses
 * chunks (trace_reader_next) while the caller's thread loads the previous
 * ones, so the two halves of the work use two cores.  Chunks are copied into
 * a ring of PREFETCH_SLOTS buffers; a slot is reused only after the loader
 * is done with it.
 */
#define PREFETCH_SLOTS 4
#define PREFETCH_MIN_FILE (1u << 20)

struct prefetch_slot {
	struct trace_chunk_header hdr;
	unsigned char *data;
	size_t len, cap;
	uint64_t offset, file_size;
};

struct prefetch {
	struct trace_reader *r;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct prefetch_slot slot[PREFETCH_SLOTS];
	uint64_t head, tail;       /* chunks produced, chunks released */
	int done, ret;             /* reader finished, with trace_reader_next's last return */
	int stop;                  /* the loader gives up */
};

static void *prefetch_main(void *arg)
{
	struct prefetch *p = arg;
	struct trace_chunk c;

	for (;;) {
		struct prefetch_slot *s;
		int ret;

		pthread_mutex_lock(&p->mu);
		while (p->head - p->tail == PREFETCH_SLOTS && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop) {
			p->done = 1;
			pthread_cond_broadcast(&p->cv);
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		pthread_mutex_unlock(&p->mu);
		ret = trace_reader_next(p->r, &c);
		if (ret <= 0) {
			pthread_mutex_lock(&p->mu);
			p->done = 1;
			p->ret = ret;
			pthread_cond_broadcast(&p->cv);
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		/* the slot at head is free: the loader releases slots below head only */
		s = &p->slot[p->head % PREFETCH_SLOTS];
		if (c.len > s->cap) {
			free(s->data);
			s->data = xmalloc(c.len);
			s->cap = c.len;
		}
		if (c.len)
			memcpy(s->data, c.data, c.len);
		s->len = c.len;
		s->hdr = c.hdr;
		s->offset = p->r->offset;
		s->file_size = p->r->file_size;
		pthread_mutex_lock(&p->mu);
		p->head++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* The next chunk in @s (valid until prefetch_release); 1, 0 at the end, -1 on error. */
static int prefetch_next(struct prefetch *p, struct prefetch_slot **s)
{
	int ret;

	pthread_mutex_lock(&p->mu);
	while (p->tail == p->head && !p->done)
		pthread_cond_wait(&p->cv, &p->mu);
	if (p->tail == p->head) {
		ret = p->ret;
	} else {
		*s = &p->slot[p->tail % PREFETCH_SLOTS];
		ret = 1;
	}
	pthread_mutex_unlock(&p->mu);
	return ret;
}

static void prefetch_release(struct prefetch *p)
{
	pthread_mutex_lock(&p->mu);
	p->tail++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static int prefetch_start(struct prefetch *p, struct trace_reader *r)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, prefetch_main, p)) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		return -1; /* no thread: the caller reads by itself */
	}
	return 0;
}

static void prefetch_finish(struct prefetch *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (int i = 0; i < PREFETCH_SLOTS; i++)
		free(p->slot[i].data);
}

/* One chunk's entries into the loader. */
static int load_chunk(struct loader *l, const struct trace_chunk_header *hdr,
		      const unsigned char *data, size_t len)
{
	unsigned char scratch[512];
	size_t pos = 0, size;
	unsigned type;
	const void *rec;
	int e;

	if (hdr->type == TRACE_CHUNK_STREAM_END) {
		struct stream_state *st = stream_get(l, hdr->stream);
		if (st)
			st->seen = 2;
		return 0;
	}
	while ((e = trace_entry_next(data, len, &pos, &type, &rec, &size, scratch,
				     sizeof(scratch))) > 0)
		load_entry(l, hdr->stream, type, rec, size);
	return e < 0 ? -1 : 0;
}

/*
 * Memory a whole load needs, per byte of decompressed event entries: rows
 * are stored as their records (the 8-byte entry header dropped), in tables
 * that grow by half (ALLOC_GROW), with the loader's per-row bookkeeping.
 * Measured on the H200 recordings in tests/data: the loaded model (the old
 * whole-model `info`) peaked at 1.1-1.2 × the entries' bytes above the
 * program's own 5.5 MB, `analyze` at 2.1-2.75 ×.  1.25 is the model alone:
 * a load is refused only when the model itself cannot fit, not when a
 * command's work beside it might not (bench/RESULTS.md, "Long runs").
 */
#define MODEL_BYTES_PER_RAW 1.25
/* Loads that need less than this are never refused: the estimate is coarse. */
#define MODEL_CHECK_MIN (256ull << 20)

/* Bytes this process may still allocate: the least of MemAvailable, RLIMIT_AS and RLIMIT_DATA headroom; 0 = unknown. */
static uint64_t memory_available(void)
{
	uint64_t avail = 0, vm = 0, data = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	struct rlimit rl;

	if (f) {
		unsigned long long kb;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
				avail = (uint64_t)kb << 10;
		fclose(f);
	}
	f = fopen("/proc/self/status", "r");
	if (f) {
		unsigned long long kb;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
				vm = (uint64_t)kb << 10;
			else if (sscanf(line, "VmData: %llu kB", &kb) == 1)
				data = (uint64_t)kb << 10;
		}
		fclose(f);
	}
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		uint64_t left = rl.rlim_cur > vm ? rl.rlim_cur - vm : 0;
		if (!avail || left < avail)
			avail = left ? left : 1;
	}
	if (!getrlimit(RLIMIT_DATA, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		uint64_t left = rl.rlim_cur > data ? rl.rlim_cur - data : 0;
		if (!avail || left < avail)
			avail = left ? left : 1;
	}
	return avail;
}

/*
 * Refuse, with one line that says how much is needed, a whole load that
 * cannot fit (issue 19: a 2.84 GB report was killed for memory at 23.5 GB
 * with no message).  The estimate reads only the chunk headers.
 */
static int check_memory(struct trace_reader *r, const char *path)
{
	uint64_t raw, chunks, need, avail;
	char b1[32], b2[32], b3[32];

	trace_reader_sizes(r, &raw, &chunks);
	need = (uint64_t)((double)raw * MODEL_BYTES_PER_RAW);
	if (need < MODEL_CHECK_MIN)
		return 0;
	avail = memory_available();
	if (!avail || need <= avail)
		return 0;
	return error("report '%s' needs about %s of memory to load whole (%s of events) and %s is "
		     "available: `gpuscope info` reads it streaming, and `stats`, `analyze`, `export` "
		     "and `diff` with --start T --end T load only that window", path, fmt_bytes(b1, sizeof(b1), (double)need),
		     fmt_bytes(b2, sizeof(b2), (double)raw), fmt_bytes(b3, sizeof(b3), (double)avail));
}

int model_report_raw_bytes(const char *path, uint64_t *raw)
{
	struct trace_reader r;
	uint64_t chunks;

	if (trace_reader_open(&r, path) < 0)
		return -1;
	trace_reader_sizes(&r, raw, &chunks);
	trace_reader_close(&r);
	return 0;
}

int model_window_fits(const char *path, double share)
{
	struct trace_reader r;
	uint64_t raw, chunks, need, avail;
	char b1[32], b2[32], b3[32];

	if (trace_reader_open(&r, path) < 0)
		return -1;
	trace_reader_sizes(&r, &raw, &chunks);
	trace_reader_close(&r);
	if (share > 1)
		share = 1;
	need = (uint64_t)((double)raw * share * MODEL_BYTES_PER_RAW);
	if (need < MODEL_CHECK_MIN)
		return 0;
	avail = memory_available();
	if (!avail || need <= avail)
		return 0;
	return error("report '%s': the window needs about %s of memory (%.0f%% of the report's %s of "
		     "events) and %s is available: narrow it with --start T --end T",
		     path, fmt_bytes(b1, sizeof(b1), (double)need), share * 100,
		     fmt_bytes(b2, sizeof(b2), (double)raw), fmt_bytes(b3, sizeof(b3), (double)avail));
}

/*
 * The chunk index (trace.h) lets a windowed load skip, unread, the events
 * chunks none of whose rows the window keeps: a chunk is skipped only when
 * every entry type it holds is one the window drops (window_types, less the
 * sink's window_keep) and its extent of timed records [t_lo, t_hi] lies
 * wholly before window_lo or after window_hi.  outside_window() would then
 * drop each of its rows, so the load is the same as a scan's, row for row.
 */
struct window_want {
	uint64_t lo, hi;
	unsigned skippable;        /* entry types a chunk may hold and still be skipped */
};

/* The record types outside_window() may drop (sink_has and timed_point). */
static unsigned window_types(void)
{
	unsigned mask = 0;

	for (unsigned t = 0; t < TRACE_EV__COUNT && t < 32; t++)
		if (sink_has[t] || timed_point[t])
			mask |= 1u << t;
	/* the index covers these types' times (trace_chunk_summary); never skip what it does not */
	return mask & trace_index_timed_types();
}

static int window_want(void *ctx, const struct trace_index_entry *e)
{
	const struct window_want *w = ctx;

	if (e->chunk_type != TRACE_CHUNK_EVENTS || !(e->flags & TRACE_IDX_KNOWN) ||
	    (e->flags & TRACE_IDX_WIDE) || (e->types & ~w->skippable))
		return 1;
	return !(e->t_hi < w->lo || e->t_lo > w->hi);
}

/* Say a damaged index once per report and process, not once per pass over it. */
static int index_quiet(const char *path)
{
	static char last[512];
	int said = !strcmp(last, path);

	snprintf(last, sizeof(last), "%s", path);
	return said;
}

static int load_report(struct model *m, const char *path, const struct model_sink *sink,
		       int (*want)(void *, const struct trace_index_entry *), void *want_ctx);

int model_load_report_sink(struct model *m, const char *path, const struct model_sink *sink)
{
	struct window_want ww;

	if (sink && sink->window_hi) {
		ww.lo = sink->window_lo;
		ww.hi = sink->window_hi;
		ww.skippable = window_types() & ~sink->window_keep;
		return load_report(m, path, sink, window_want, &ww);
	}
	return load_report(m, path, sink, NULL, NULL);
}

static int load_report(struct model *m, const char *path, const struct model_sink *sink,
		       int (*want)(void *, const struct trace_index_entry *), void *want_ctx)
{
	struct trace_reader r;
	struct trace_chunk c;
	struct loader l;
	struct prefetch pf;
	int ret, bad_entries = 0;

	if (trace_reader_open(&r, path) < 0)
		return -1;
	if (want && trace_reader_index(&r, index_quiet(path)) == 1) {
		r.want = want;
		r.want_ctx = want_ctx;
	}
	/* a load that stores every row (no types handed on, no window) must fit */
	if ((!sink || (!sink->types && !sink->window_hi)) && check_memory(&r, path) < 0) {
		trace_reader_close(&r);
		return -1;
	}
	memset(&l, 0, sizeof(l));
	l.m = m;
	l.sink = sink;
	l.map_budget = 4 * (size_t)r.file_size + (1u << 20);
	/*
	 * Writers number streams densely from 0 (the collector writes 0, merge
	 * renumbers), and each stream has at least one 32-byte chunk header, so
	 * a stream id above file size / 32 is damage; without the cap one chunk
	 * header could make the loader allocate state for 2^20 streams.
	 */
	l.max_streams = r.file_size / TRACE_CHUNK_HEADER_SIZE + 1024 < (1u << 20) ?
				(uint32_t)(r.file_size / TRACE_CHUNK_HEADER_SIZE + 1024) : 1u << 20;
	free(m->path);
	m->path = xstrdup(path);
	m->format = "gpuscope";
	if (r.file_size >= PREFETCH_MIN_FILE && prefetch_start(&pf, &r) == 0) {
		struct prefetch_slot *slot = NULL;
		while ((ret = prefetch_next(&pf, &slot)) > 0) {
			if (load_chunk(&l, &slot->hdr, slot->data, slot->len) < 0)
				bad_entries++;
			if (sink && sink->progress)
				sink->progress(sink->ctx, slot->offset, slot->file_size);
			prefetch_release(&pf);
		}
		prefetch_finish(&pf);
	} else {
		while ((ret = trace_reader_next(&r, &c)) > 0) {
			if (load_chunk(&l, &c.hdr, c.data, c.len) < 0)
				bad_entries++;
			if (sink && sink->progress)
				sink->progress(sink->ctx, r.offset, r.file_size);
		}
	}
	if (ret < 0) {
		loader_release(&l);
		trace_reader_close(&r);
		return -1;
	}
	/* the chunks after the last one loaded (the index, skipped ones) are done too */
	if (sink && sink->progress)
		sink->progress(sink->ctx, r.file_size, r.file_size);
	loader_finish(&l);
	for (size_t i = 0; i < m->procs.n; i++) {
		uint32_t s = m->procs.v[i].stream;
		m->procs.v[i].ended = s < l.nr_streams && l.streams[s].seen == 2;
	}
	m->truncated = r.truncated;
	m->chunks_bad = r.chunks_bad;
	m->bytes_skipped = r.bytes_skipped;
	m->chunks_skipped = r.chunks_skipped;
	if (r.truncated || r.chunks_bad)
		model_warn(m, "report '%s' is damaged: %s; loaded the %llu whole chunks, "
			   "skipped %llu bytes", path, r.first_problem,
			   (unsigned long long)r.chunks_read, (unsigned long long)r.bytes_skipped);
	if (bad_entries)
		model_warn(m, "report '%s': %d chunks had malformed entries", path, bad_entries);
	if (l.streams_dropped)
		model_warn(m, "report '%s': skipped %llu entries of streams numbered beyond what the file can hold",
			   path, (unsigned long long)l.streams_dropped);
	if (l.strings_dropped)
		model_warn(m, "report '%s': skipped %llu string definitions with implausibly large ids",
			   path, (unsigned long long)l.strings_dropped);
	if (l.metrics_dropped)
		model_warn(m, "report '%s': skipped %llu metric samples that are not finite numbers",
			   path, (unsigned long long)l.metrics_dropped);
	if (r.chunks_unknown)
		model_warn(m, "report '%s': skipped %llu chunks of types this version does not know",
			   path, (unsigned long long)r.chunks_unknown);
	if (sink && sink->strings)
		sink->strings(sink->ctx, (const struct model_strmap *)&l);
	trace_reader_close(&r);
	/* the loader's side tables go before model_finish() sorts and shrinks the model's */
	{
		unsigned has = l.sunk_has;
		uint64_t lo = l.sunk_min, hi = l.sunk_max;
		loader_release(&l);
		model_finish(m);
		if (sink) {
			m->has |= has;
			if (lo && (!m->t_min || lo < m->t_min))
				m->t_min = lo;
			if (hi > m->t_max)
				m->t_max = hi;
		}
	}
	return 0;
}

/*
 * model_report_span(): the span of the rows the loader's sunk span does not
 * see: marks and allocations (no end), and the ends of start/end NVTX ranges
 * (written open, ended by an NVTX_END entry).  Only those ranges' keys and
 * the ends are kept, 16 bytes each, and matched as join_nvtx_ends() matches
 * them: a key's starts take its ends, so min(starts, ends) of its ends count
 * (in file order; the loader's order among surplus ends of one key is not
 * defined, and such files are damaged).
 */
struct span_end {
	uint64_t key, end;
	size_t idx;                       /* file order */
};

struct span_sink {
	uint64_t t_min, t_max;
	MODEL_TABLE(uint64_t) starts;     /* keys of open start/end ranges */
	MODEL_TABLE(struct span_end) ends;
};

static void span_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct span_sink *s = ctx;
	uint64_t t;

	if (type == TRACE_EV_NVTX_RANGE) {
		const struct trace_nvtx_range *r = rec;
		if (r->kind == TRACE_NVTX_STARTEND && !r->end)
			*MODEL_PUSH(s->starts) = ((uint64_t)stream << 44) ^ r->range_id;
		return;
	}
	if (type == TRACE_EV_NVTX_END) {
		const struct trace_nvtx_end *e = rec;
		struct span_end *se = MODEL_PUSH(s->ends);
		se->key = ((uint64_t)stream << 44) ^ e->range_id;
		se->end = e->end;
		se->idx = s->ends.n - 1;
		return;
	}
	/* as model_finish(): marks and allocations count in the span, samples and metrics do not */
	if (type != TRACE_EV_NVTX_MARK && type != TRACE_EV_MEMORY)
		return;
	memcpy(&t, rec, sizeof(t));
	if (t && (!s->t_min || t < s->t_min))
		s->t_min = t;
	if (t > s->t_max)
		s->t_max = t;
}

static int cmp_u64p_span(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* By key, then file order. */
static int cmp_span_end(const void *pa, const void *pb)
{
	const struct span_end *a = pa, *b = pb;

	if (a->key != b->key)
		return cmp_u64(a->key, b->key);
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void span_join(struct span_sink *s)
{
	size_t i = 0, j = 0;

	if (!s->starts.n || !s->ends.n)
		return;
	qsort(s->starts.v, s->starts.n, sizeof(*s->starts.v), cmp_u64p_span);
	qsort(s->ends.v, s->ends.n, sizeof(*s->ends.v), cmp_span_end);
	while (i < s->starts.n && j < s->ends.n) {
		uint64_t key = s->starts.v[i];
		size_t ns = 0;
		while (i < s->starts.n && s->starts.v[i] == key) {
			i++;
			ns++;
		}
		while (j < s->ends.n && s->ends.v[j].key < key)
			j++;
		while (j < s->ends.n && s->ends.v[j].key == key) {
			if (ns) {
				if (s->ends.v[j].end > s->t_max)
					s->t_max = s->ends.v[j].end;
				ns--;
			}
			j++;
		}
	}
}

/*
 * The span from a chunk index: the least non-zero span_lo and the greatest
 * span_hi of the events chunks are the span of every row but the ends that
 * start/end ranges take from their nvtx_end entries.  Those can move t_max
 * only when some end lies beyond it (end_hi); then only the chunks that
 * hold open ranges or ends are read, to join them.  Returns 1 when the
 * index could say (*need_join set when a join is needed), 0 when it cannot
 * (no valid index, or a chunk the writer could not summarise).
 */
static int index_span(const char *path, uint64_t *t_min, uint64_t *t_max, int *need_join)
{
	struct trace_reader r;
	uint64_t lo = 0, hi = 0, ends = 0;
	int ok;

	if (trace_reader_open(&r, path) < 0)
		return 0;
	ok = trace_reader_index(&r, index_quiet(path)) == 1;
	for (size_t i = 0; ok && i < r.nr_index; i++) {
		const struct trace_index_entry *e = &r.index[i];
		if (e->chunk_type != TRACE_CHUNK_EVENTS)
			continue;
		if (!(e->flags & TRACE_IDX_KNOWN)) {
			ok = 0;
			break;
		}
		if (e->span_lo && (!lo || e->span_lo < lo))
			lo = e->span_lo;
		if (e->span_hi > hi)
			hi = e->span_hi;
		if (e->end_hi > ends)
			ends = e->end_hi;
	}
	trace_reader_close(&r);
	if (!ok)
		return 0;
	*t_min = lo;
	*t_max = hi;
	*need_join = ends > hi;
	return 1;
}

/* The chunks a join of start/end ranges with their ends needs. */
static int join_want(void *ctx, const struct trace_index_entry *e)
{
	(void)ctx;
	return e->chunk_type != TRACE_CHUNK_EVENTS || !(e->flags & TRACE_IDX_KNOWN) ||
	       (e->flags & (TRACE_IDX_OPEN | TRACE_IDX_WIDE)) ||
	       (e->types & (1u << TRACE_EV_NVTX_END));
}

int model_report_span(const char *path, uint64_t *t_min, uint64_t *t_max)
{
	uint64_t ilo = 0, ihi = 0;
	int need_join = 1, indexed = index_span(path, &ilo, &ihi, &need_join);
	struct span_sink ss;
	struct model_sink sink = {
		(1u << TRACE_EV_OSRT) | (1u << TRACE_EV_CPU_SAMPLE) | (1u << TRACE_EV_API) |
			(1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) |
			(1u << TRACE_EV_SYNC) | (1u << TRACE_EV_MEMORY) | (1u << TRACE_EV_NVTX_MARK) |
			(1u << TRACE_EV_METRIC) | (1u << TRACE_EV_KMETRIC) | (1u << TRACE_EV_NVTX_RANGE) |
			(1u << TRACE_EV_NVTX_END),
		&ss, span_row, NULL, NULL, 0, 0, 0,
	};
	struct model m;
	int ret;

	if (indexed && !need_join) {
		*t_min = ilo;
		*t_max = ihi;
		return 0;
	}
	memset(&ss, 0, sizeof(ss));
	model_init(&m);
	ret = load_report(&m, path, &sink, indexed ? join_want : NULL, NULL);
	if (!ret) {
		span_join(&ss);
		*t_min = m.t_min;
		*t_max = m.t_max;
		if (ss.t_min && (!*t_min || ss.t_min < *t_min))
			*t_min = ss.t_min;
		if (ss.t_max > *t_max)
			*t_max = ss.t_max;
		if (indexed) { /* the chunks not read: from the index */
			if (ilo && (!*t_min || ilo < *t_min))
				*t_min = ilo;
			if (ihi > *t_max)
				*t_max = ihi;
		}
	}
	free(ss.starts.v);
	free(ss.ends.v);
	model_release(&m);
	return ret;
}

/* ---- finishing ---- */

#define DEFINE_CMP(name, T, a_start, a_end)                                  \
	static int name(const void *pa, const void *pb)                     \
	{                                                                   \
		const T *a = pa, *b = pb;                                   \
		int c = cmp_u64(a->a_start, b->a_start);                    \
		return c ? c : cmp_u64(a->a_end, b->a_end);                 \
	}

DEFINE_CMP(cmp_nvtx, struct trace_nvtx_range, start, end)
DEFINE_CMP(cmp_mark, struct trace_nvtx_mark, time, time)
DEFINE_CMP(cmp_osrt, struct trace_osrt, start, end)
DEFINE_CMP(cmp_cpu, struct trace_cpu_sample, time, time)
DEFINE_CMP(cmp_api, struct trace_api, start, end)
DEFINE_CMP(cmp_kernel, struct trace_kernel, start, end)
DEFINE_CMP(cmp_memcpy, struct trace_memcpy, start, end)
DEFINE_CMP(cmp_memset, struct trace_memset, start, end)
DEFINE_CMP(cmp_sync, struct trace_sync, start, end)
DEFINE_CMP(cmp_memory, struct trace_memory, time, time)
DEFINE_CMP(cmp_metric, struct trace_metric, time, time)
DEFINE_CMP(cmp_capture, struct trace_capture, time, time)
DEFINE_CMP(cmp_oom, struct trace_oom, time, time)

/* Samples of one time: by device, so a series per device reads in order. */
static int cmp_torch_mem(const void *pa, const void *pb)
{
	const struct trace_torch_mem *a = pa, *b = pb;
	int c = cmp_u64(a->time, b->time);

	if (!c)
		c = cmp_u64(a->pid, b->pid);
	if (!c)
		c = cmp_u64(a->device, b->device);
	return c;
}

/* Counters of one instance stay together, in the order they were written. */
static int cmp_kmetric(const void *pa, const void *pb)
{
	const struct trace_kmetric *a = pa, *b = pb;
	int c = cmp_u64(a->time, b->time);

	if (!c)
		c = cmp_u64(a->pid, b->pid);
	if (!c)
		c = cmp_u64(a->correlation, b->correlation);
	if (!c)
		c = cmp_u64(a->instance, b->instance);
	return c ? c : cmp_u64(a->key_id, b->key_id);
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct model_thread *a = pa, *b = pb;
	int c = cmp_u64(a->pid, b->pid);

	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c) /* in time order, so that the latest name wins */
		c = cmp_u64(a->first, b->first);
	return c ? c : cmp_u64(a->name_id, b->name_id);
}

/* Sort only when needed: collectors mostly write in order already. */
#define SORT_TABLE(t, cmp)                                                   \
	do {                                                                 \
		for (size_t i_ = 1; i_ < (t).n; i_++) {                      \
			if (cmp(&(t).v[i_ - 1], &(t).v[i_]) > 0) {           \
				qsort((t).v, (t).n, sizeof((t).v[0]), cmp);  \
				break;                                       \
			}                                                    \
		}                                                            \
	} while (0)

static void span(struct model *m, uint64_t a, uint64_t b)
{
	if (a && (!m->t_min || a < m->t_min))
		m->t_min = a;
	if (b > m->t_max)
		m->t_max = b;
	if (a > m->t_max)
		m->t_max = a;
}

/*
 * The thread rows that events imply, pushed from base on: each (pid, tid)
 * keeps one row, found again through a small direct-mapped cache, so that
 * the rows to sort and merge are about one per thread rather than one per
 * event (sorting one per event took 1-2% of analyze on 10 M events).
 */
struct seen_threads {
	size_t base;
	size_t slot[256];          /* row index + 1; 0: empty */
};

static void see_thread(struct model *m, struct seen_threads *st, uint32_t pid, uint32_t tid, uint64_t a,
		       uint64_t b)
{
	struct model_thread *t;
	size_t *slot;

	if (!tid)
		return;
	slot = &st->slot[(tid ^ pid * 31u) & (ARRAY_SIZE(st->slot) - 1)];
	if (*slot && *slot - 1 >= st->base && *slot - 1 < m->threads.n) {
		t = &m->threads.v[*slot - 1];
		if (t->pid == pid && t->tid == tid) {
			if (a && (!t->first || a < t->first))
				t->first = a;
			if ((b ? b : a) > t->last)
				t->last = b ? b : a;
			return;
		}
	}
	t = MODEL_PUSH(m->threads);
	t->pid = pid;
	t->tid = tid;
	t->first = a;
	t->last = b ? b : a;
	*slot = m->threads.n;
}

static void merge_threads(struct model *m)
{
	size_t out = 0;

	qsort(m->threads.v, m->threads.n, sizeof(m->threads.v[0]), cmp_thread);
	for (size_t i = 0; i < m->threads.n; i++) {
		struct model_thread *t = &m->threads.v[i];
		if (out && m->threads.v[out - 1].pid == t->pid && m->threads.v[out - 1].tid == t->tid) {
			struct model_thread *o = &m->threads.v[out - 1];
			if (t->first && (!o->first || t->first < o->first))
				o->first = t->first;
			if (t->last > o->last)
				o->last = t->last;
			if (t->name_id)
				o->name_id = t->name_id; /* rows are in time order: the latest name wins */
			continue;
		}
		m->threads.v[out++] = *t;
	}
	m->threads.n = out;
}

static int uuid_zero(const uint8_t u[16])
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

/* Is @pid in the sorted array @pids? */
static int pid_in(const uint32_t *pids, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pids[lo] == pid;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * GPU metrics are sampled by NVML in the profiling process, which numbers
 * GPUs by NVML index; CUDA numbers them by ordinal, after
 * CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.  Map every metric onto the
 * CUDA ordinal of the same GPU (same UUID), so that "device 0" means one GPU
 * everywhere.  GPUs the program did not use keep a number of their own,
 * 100 + NVML index, so they are never taken for a CUDA device.
 */
static void unify_devices(struct model *m)
{
	uint32_t *cuda_pids = NULL;
	size_t ncp = 0, acp = 0, out = 0;
	uint32_t *newid;

	if (!m->metrics.n || !m->devices.n)
		return;
	/* the pids of kernels and of processes whose CUDA reported devices: sorted, unique */
	for (size_t i = 0; i < m->kernels.n; i++)
		if (!ncp || cuda_pids[ncp - 1] != m->kernels.v[i].pid) {
			ALLOC_GROW(cuda_pids, ncp + 1, acp);
			cuda_pids[ncp++] = m->kernels.v[i].pid;
		}
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].sm_count) {
			ALLOC_GROW(cuda_pids, ncp + 1, acp);
			cuda_pids[ncp++] = m->devices.v[i].pid;
		}
	if (ncp) {
		size_t u = 1;
		qsort(cuda_pids, ncp, sizeof(*cuda_pids), cmp_u32);
		for (size_t i = 1; i < ncp; i++)
			if (cuda_pids[i] != cuda_pids[u - 1])
				cuda_pids[u++] = cuda_pids[i];
		ncp = u;
	}
	if (!ncp) {
		free(cuda_pids);
		return;
	}
	newid = xmalloc(m->devices.n * sizeof(*newid));
	for (size_t i = 0; i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		newid[i] = d->id;
		if (pid_in(cuda_pids, ncp, d->pid))
			continue;
		newid[i] = 100 + d->id;
		if (uuid_zero(d->uuid))
			continue;
		for (size_t j = 0; j < m->devices.n; j++)
			if (pid_in(cuda_pids, ncp, m->devices.v[j].pid) &&
			    !memcmp(m->devices.v[j].uuid, d->uuid, 16)) {
				newid[i] = m->devices.v[j].id;
				break;
			}
	}
	for (size_t i = 0; i < m->metrics.n; i++) {
		struct trace_metric *x = &m->metrics.v[i];
		if (x->device == UINT32_MAX || pid_in(cuda_pids, ncp, x->pid))
			continue;
		for (size_t j = 0; j < m->devices.n; j++)
			if (m->devices.v[j].pid == x->pid && m->devices.v[j].id == x->device) {
				x->device = newid[j];
				break;
			}
	}
	/* keep one row per GPU: sampler rows of GPUs that CUDA also reported go */
	for (size_t i = 0; i < m->devices.n; i++) {
		struct trace_device d = m->devices.v[i];
		if (!pid_in(cuda_pids, ncp, d.pid) && newid[i] < 100)
			continue;
		d.id = newid[i];
		m->devices.v[out++] = d;
	}
	m->devices.n = out;
	free(newid);
	free(cuda_pids);
}

/*
 * Tables grow by half (ALLOC_GROW) while a report loads, so up to a third
 * of a big table is slack when the load ends; what runs after (analyze's
 * own tables) would sit on top of it.  Give back slack above
 * SHRINK_MIN_SLACK bytes: for the big tables glibc's realloc shrinks an
 * mmapped block in place (mremap), so this costs no copy.  A later push
 * grows the table again as before (alloc is kept equal to n).
 */
#define SHRINK_MIN_SLACK (64u << 10)
#define SHRINK_TABLE(t)                                                          \
	do {                                                                     \
		if ((t).n && ((t).alloc - (t).n) * sizeof((t).v[0]) > SHRINK_MIN_SLACK) { \
			(t).v = xrealloc((t).v, (t).n * sizeof((t).v[0]));       \
			(t).alloc = (t).n;                                       \
		}                                                                \
	} while (0)

static void shrink_tables(struct model *m)
{
	SHRINK_TABLE(m->nvtx);
	SHRINK_TABLE(m->marks);
	SHRINK_TABLE(m->names);
	SHRINK_TABLE(m->osrt);
	SHRINK_TABLE(m->cpu);
	SHRINK_TABLE(m->api);
	SHRINK_TABLE(m->kernels);
	SHRINK_TABLE(m->memcpys);
	SHRINK_TABLE(m->memsets);
	SHRINK_TABLE(m->syncs);
	SHRINK_TABLE(m->memory);
	SHRINK_TABLE(m->metrics);
	SHRINK_TABLE(m->captures);
	SHRINK_TABLE(m->kmetrics);
	SHRINK_TABLE(m->torch_mem);
	SHRINK_TABLE(m->ooms);
	SHRINK_TABLE(m->threads);
}

void model_finish(struct model *m)
{
	size_t nthreads = m->threads.n;
	struct seen_threads seen = { 0 };

	SORT_TABLE(m->nvtx, cmp_nvtx);
	SORT_TABLE(m->marks, cmp_mark);
	SORT_TABLE(m->osrt, cmp_osrt);
	SORT_TABLE(m->cpu, cmp_cpu);
	SORT_TABLE(m->api, cmp_api);
	SORT_TABLE(m->kernels, cmp_kernel);
	SORT_TABLE(m->memcpys, cmp_memcpy);
	SORT_TABLE(m->memsets, cmp_memset);
	SORT_TABLE(m->syncs, cmp_sync);
	SORT_TABLE(m->memory, cmp_memory);
	SORT_TABLE(m->metrics, cmp_metric);
	SORT_TABLE(m->captures, cmp_capture);
	SORT_TABLE(m->kmetrics, cmp_kmetric);
	SORT_TABLE(m->torch_mem, cmp_torch_mem);
	SORT_TABLE(m->ooms, cmp_oom);

	m->t_min = m->t_max = 0;
	m->nvtx_open = 0;
	seen.base = m->threads.n;
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		span(m, r->start, r->end);
		if (!r->end)
			m->nvtx_open++;
		see_thread(m, &seen, r->pid, r->tid, r->start, r->end);
	}
	for (size_t i = 0; i < m->marks.n; i++) {
		span(m, m->marks.v[i].time, 0);
		see_thread(m, &seen, m->marks.v[i].pid, m->marks.v[i].tid, m->marks.v[i].time, 0);
	}
	for (size_t i = 0; i < m->osrt.n; i++) {
		span(m, m->osrt.v[i].start, m->osrt.v[i].end);
		see_thread(m, &seen, m->osrt.v[i].pid, m->osrt.v[i].tid, m->osrt.v[i].start, m->osrt.v[i].end);
	}
	for (size_t i = 0; i < m->cpu.n; i++)
		see_thread(m, &seen, m->cpu.v[i].pid, m->cpu.v[i].tid, m->cpu.v[i].time, 0);
	for (size_t i = 0; i < m->api.n; i++) {
		span(m, m->api.v[i].start, m->api.v[i].end);
		/* one thread row per API thread is enough; skip repeats of the previous tid */
		if (i == 0 || m->api.v[i].tid != m->api.v[i - 1].tid)
			see_thread(m, &seen, m->api.v[i].pid, m->api.v[i].tid, m->api.v[i].start,
				   m->api.v[i].end);
	}
	for (size_t i = 0; i < m->kernels.n; i++)
		span(m, m->kernels.v[i].start, m->kernels.v[i].end);
	for (size_t i = 0; i < m->memcpys.n; i++)
		span(m, m->memcpys.v[i].start, m->memcpys.v[i].end);
	for (size_t i = 0; i < m->memsets.n; i++)
		span(m, m->memsets.v[i].start, m->memsets.v[i].end);
	for (size_t i = 0; i < m->syncs.n; i++)
		span(m, m->syncs.v[i].start, m->syncs.v[i].end);
	for (size_t i = 0; i < m->memory.n; i++)
		span(m, m->memory.v[i].time, 0);
	/* allocator samples and OOMs are host events of the run, as marks are */
	for (size_t i = 0; i < m->torch_mem.n; i++)
		span(m, m->torch_mem.v[i].time, 0);
	for (size_t i = 0; i < m->ooms.n; i++)
		span(m, m->ooms.v[i].time, 0);
	if (nthreads != m->threads.n || nthreads > 1)
		merge_threads(m);
	unify_devices(m);
	for (size_t i = 0; i < m->procs.n; i++)
		if (!m->procs.v[i].has_attr)
			model_proc_attr_unknown(&m->procs.v[i].attr);

	if (m->kernels.n || m->memcpys.n || m->memsets.n || m->api.n || m->devices.n)
		m->has |= MODEL_HAS_CUDA;
	if (m->api.n)
		m->has |= MODEL_HAS_API;
	if (m->nvtx.n || m->marks.n)
		m->has |= MODEL_HAS_NVTX;
	if (m->osrt.n)
		m->has |= MODEL_HAS_OSRT;
	if (m->cpu.n)
		m->has |= MODEL_HAS_CPU_SAMPLES;
	if (m->metrics.n)
		m->has |= MODEL_HAS_METRICS;
	if (m->syncs.n)
		m->has |= MODEL_HAS_SYNC;
	if (m->memory.n)
		m->has |= MODEL_HAS_MEMORY;
	if (m->kmetrics.n)
		m->has |= MODEL_HAS_KMETRICS | MODEL_HAS_CUDA;
	if (m->torch_mem.n || m->ooms.n)
		m->has |= MODEL_HAS_TORCH_MEM;
	shrink_tables(m);
}

#define CLIP_TABLE(t, a_start, a_end)                                        \
	do {                                                                 \
		size_t o_ = 0;                                               \
		for (size_t i_ = 0; i_ < (t).n; i_++) {                      \
			uint64_t s_ = (t).v[i_].a_start, e_ = (t).v[i_].a_end;  \
			if (e_ < s_)                                         \
				e_ = s_;                                     \
			if (e_ < lo || s_ > hi)                              \
				continue;                                    \
			(t).v[o_++] = (t).v[i_];                             \
		}                                                            \
		(t).n = o_;                                                  \
	} while (0)

void model_clip(struct model *m, uint64_t lo, uint64_t hi)
{
	CLIP_TABLE(m->nvtx, start, end);
	CLIP_TABLE(m->marks, time, time);
	CLIP_TABLE(m->osrt, start, end);
	CLIP_TABLE(m->cpu, time, time);
	CLIP_TABLE(m->api, start, end);
	CLIP_TABLE(m->kernels, start, end);
	CLIP_TABLE(m->memcpys, start, end);
	CLIP_TABLE(m->memsets, start, end);
	CLIP_TABLE(m->syncs, start, end);
	CLIP_TABLE(m->memory, time, time);
	CLIP_TABLE(m->metrics, time, time);
	CLIP_TABLE(m->captures, time, time);
	CLIP_TABLE(m->kmetrics, time, time);
	CLIP_TABLE(m->torch_mem, time, time);
	CLIP_TABLE(m->ooms, time, time);
	{
		unsigned has = m->has;
		model_finish(m);
		m->has |= has; /* what could be recorded does not change with the window */
	}
}

const struct model_process *model_process(const struct model *m, uint32_t pid)
{
	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].pid == pid)
			return &m->procs.v[i];
	return NULL;
}

const struct model_thread *model_thread(const struct model *m, uint32_t pid, uint32_t tid)
{
	size_t lo = 0, hi = m->threads.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct model_thread *t = &m->threads.v[mid];
		if (t->pid < pid || (t->pid == pid && t->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->threads.n && m->threads.v[lo].pid == pid && m->threads.v[lo].tid == tid)
		return &m->threads.v[lo];
	return NULL;
}

size_t model_range_thread(const struct model *m, uint32_t name_id, uint32_t *pid, uint32_t *tid)
{
	struct { uint32_t pid, tid; size_t n; uint64_t first; } *t = NULL;
	size_t nt = 0, alloc = 0, best = 0;

	*pid = *tid = 0;
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		size_t k;
		if (r->name_id != name_id || r->end <= r->start)
			continue;
		/* ranges are in start order: the last thread seen is the likeliest */
		for (k = nt; k-- > 0;)
			if (t[k].pid == r->pid && t[k].tid == r->tid)
				break;
		if (k == (size_t)-1) {
			ALLOC_GROW(t, nt + 1, alloc);
			k = nt++;
			t[k].pid = r->pid;
			t[k].tid = r->tid;
			t[k].n = 0;
			t[k].first = r->start;
		}
		t[k].n++;
	}
	for (size_t k = 0; k < nt; k++)
		if (t[k].n > t[best].n || (t[k].n == t[best].n && t[k].first < t[best].first))
			best = k;
	if (!nt)
		return 0;
	*pid = t[best].pid;
	*tid = t[best].tid;
	best = t[best].n;
	free(t);
	return best;
}

const char *model_thread_name(const struct model *m, uint32_t pid, uint32_t tid)
{
	static char buf[32];
	const struct model_thread *t = model_thread(m, pid, tid);

	if (t && t->name_id)
		return model_str(m, t->name_id);
	snprintf(buf, sizeof(buf), "tid %u", tid);
	return buf;
}

const struct trace_device *model_device(const struct model *m, uint32_t id)
{
	for (size_t i = 0; i < m->devices.n; i++)
		if (m->devices.v[i].id == id)
			return &m->devices.v[i];
	return NULL;
}
