/*
 * layout.c - the tracks of the timeline exports and which track each slice
 * goes on.
 *
 * Tracks: one per process, one per CPU thread (its CUDA API calls, OS
 * runtime calls, NVTX push/pop ranges and marks, which nest), one
 * "NVTX start/end" and one "CUDA synchronization" track per process, one per
 * GPU with a child per (process, stream).  Viewers need the slices of a
 * track to nest strictly, so slices are placed in order of start (longer
 * first on ties) on the first lane of their group where they nest; a slice
 * that would partially overlap goes to a further lane, a track named
 * "... (2)".  Counter tracks: GPU metrics per device, CPU use per thread
 * (from the cumulative run time of consecutive CPU samples), device memory
 * in use per process and device (allocations minus frees).
 */
#include "internal.h"

#include <stdlib.h>

#define GPU_JSON_PID_BASE 0x40000000u  /* GPU pseudo-processes in Chrome JSON */
#define SYNTH_TID_BASE 0x40000000u     /* lane pseudo-threads in Chrome JSON */
#define HOST_JSON_PID 0x3fffffffu      /* host counters (no device) in Chrome JSON */

enum group_kind { G_THREAD = 1, G_NVTX_ASYNC, G_SYNC, G_STREAM };

struct lane {
	uint32_t track;
	uint64_t *stack;      /* end times of the open slices, innermost last */
	size_t n, alloc;
};

struct lay_group {
	uint8_t kind;
	uint32_t a, b, c;     /* pid; tid or device; stream */
	struct lane *lanes;
	size_t nlanes, alloc;
};

static uint64_t mix3(uint32_t kind, uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = 0x9e3779b97f4a7c15ull * (kind + 1);
	h ^= a + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= b + 0x85ebca77c2b2ae63ull + (h << 6) + (h >> 2);
	h ^= c + 0xc2b2ae3d27d4eb4full + (h << 6) + (h >> 2);
	return h == UINT64_MAX ? 0 : h;
}

static uint32_t add_track(struct lay *l, unsigned kind, uint32_t parent, char *name)
{
	struct lay_track *t;

	ALLOC_GROW(l->tracks, l->ntracks + 1, l->alloc_tracks);
	t = &l->tracks[l->ntracks];
	memset(t, 0, sizeof(*t));
	t->uuid = l->ntracks + 1;
	t->kind = (uint8_t)kind;
	t->parent = parent;
	t->name = name;
	t->rank = (int32_t)l->ntracks;
	return (uint32_t)l->ntracks++;
}

static uint32_t process_track(struct lay *l, uint32_t pid)
{
	uint64_t *v = u64map_get(&l->procs, pid, 1);
	char buf[128];
	uint32_t t;

	if (*v)
		return (uint32_t)(*v - 1);
	t = add_track(l, LT_PROCESS, 0,
		      xstrfmt("%s (pid %u)", export_process_name(l->m, pid, buf, sizeof(buf)), pid));
	l->tracks[t].pid = pid;
	l->tracks[t].json_pid = pid;
	*v = t + 1;
	return t;
}

static uint32_t gpu_track(struct lay *l, uint32_t device)
{
	uint64_t *v = u64map_get(&l->gpus, device, 1);
	const struct trace_device *d;
	uint32_t t;

	if (*v)
		return (uint32_t)(*v - 1);
	d = model_device(l->m, device);
	if (d && *model_str(l->m, d->name_id))
		t = add_track(l, LT_GPU, 0, xstrfmt("GPU %u: %s", device, model_str(l->m, d->name_id)));
	else
		t = add_track(l, LT_GPU, 0, xstrfmt("GPU %u", device));
	l->tracks[t].device = device;
	l->tracks[t].json_pid = GPU_JSON_PID_BASE + (device & 0xffffff);
	l->tracks[t].rank = (int32_t)device;
	*v = t + 1;
	return t;
}

static struct lay_group *get_group(struct lay *l, unsigned kind, uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t k = mix3(kind, a, b, c);
	uint64_t *v;
	struct lay_group *g;

	for (;;) {
		v = u64map_get(&l->group_map, k, 1);
		if (!*v)
			break;
		g = &l->groups[*v - 1];
		if (g->kind == kind && g->a == a && g->b == b && g->c == c)
			return g;
		k = k + 1 == UINT64_MAX ? 0 : k + 1;
	}
	ALLOC_GROW(l->groups, l->ngroups + 1, l->alloc_groups);
	g = &l->groups[l->ngroups];
	memset(g, 0, sizeof(*g));
	g->kind = (uint8_t)kind;
	g->a = a;
	g->b = b;
	g->c = c;
	*v = ++l->ngroups;
	return g;
}

static uint32_t new_lane_track(struct lay *l, struct lay_group *g)
{
	size_t k = g->nlanes;
	uint32_t t, parent;
	char suffix[32] = "";

	if (k)
		snprintf(suffix, sizeof(suffix), " (%zu)", k + 1);
	switch (g->kind) {
	case G_THREAD:
		parent = process_track(l, g->a);
		if (!k) {
			t = add_track(l, LT_THREAD, parent + 1,
				      xstrdup(model_thread_name(l->m, g->a, g->b)));
			l->tracks[t].pid = g->a;
			l->tracks[t].tid = g->b;
			l->tracks[t].json_pid = g->a;
			l->tracks[t].json_tid = g->b;
			return t;
		}
		/* a further lane of a thread lives under the thread's track */
		t = add_track(l, LT_LANE, g->lanes[0].track + 1,
			      xstrfmt("%s%s", model_thread_name(l->m, g->a, g->b), suffix));
		l->tracks[t].pid = g->a;
		l->tracks[t].json_pid = g->a;
		break;
	case G_NVTX_ASYNC:
	case G_SYNC:
		parent = process_track(l, g->a);
		t = add_track(l, LT_LANE, parent + 1,
			      xstrfmt("%s%s", g->kind == G_SYNC ? "CUDA synchronization" : "NVTX start/end",
				      suffix));
		l->tracks[t].pid = g->a;
		l->tracks[t].json_pid = g->a;
		break;
	case G_STREAM:
		parent = gpu_track(l, g->b);
		if (l->multi_pid)
			t = add_track(l, LT_STREAM, parent + 1,
				      xstrfmt("Stream %u pid %u%s", g->c, g->a, suffix));
		else
			t = add_track(l, LT_STREAM, parent + 1, xstrfmt("Stream %u%s", g->c, suffix));
		l->tracks[t].pid = g->a;
		l->tracks[t].device = g->b;
		l->tracks[t].json_pid = l->tracks[parent].json_pid;
		l->tracks[t].rank = (int32_t)((g->c & 0xffffff) * 8 + (k < 7 ? k : 7));
		break;
	default:
		BUG("bad group kind %u", g->kind);
	}
	l->tracks[t].json_tid = l->next_json_tid++;
	return t;
}

/* Put a slice [s, e] on the first lane of @g where it nests. */
static uint32_t place(struct lay *l, struct lay_group *g, uint64_t s, uint64_t e)
{
	struct lane *ln;

	for (size_t k = 0; k < g->nlanes; k++) {
		ln = &g->lanes[k];
		while (ln->n && ln->stack[ln->n - 1] <= s)
			ln->n--;
		if (!ln->n || e <= ln->stack[ln->n - 1]) {
			ALLOC_GROW(ln->stack, ln->n + 1, ln->alloc);
			ln->stack[ln->n++] = e;
			return ln->track;
		}
	}
	{
		uint32_t t = new_lane_track(l, g);
		ALLOC_GROW(g->lanes, g->nlanes + 1, g->alloc);
		ln = &g->lanes[g->nlanes++];
		memset(ln, 0, sizeof(*ln));
		ln->track = t;
		ALLOC_GROW(ln->stack, 1, ln->alloc);
		ln->stack[ln->n++] = e;
		return t;
	}
}

static uint32_t thread_track(struct lay *l, uint32_t pid, uint32_t tid)
{
	struct lay_group *g = get_group(l, G_THREAD, pid, tid, 0);

	if (!g->nlanes) {
		uint32_t t = new_lane_track(l, g);
		ALLOC_GROW(g->lanes, 1, g->alloc);
		memset(&g->lanes[0], 0, sizeof(g->lanes[0]));
		g->lanes[0].track = t;
		g->nlanes = 1;
	}
	return g->lanes[0].track;
}

void lay_span(const struct model *m, int src, size_t i, uint64_t *s, uint64_t *e)
{
	switch (src) {
	case SRC_API: *s = m->api.v[i].start; *e = m->api.v[i].end; break;
	case SRC_OSRT: *s = m->osrt.v[i].start; *e = m->osrt.v[i].end; break;
	case SRC_NVTX:
		*s = m->nvtx.v[i].start;
		*e = m->nvtx.v[i].end;
		if (!*e)
			*e = m->t_max;
		break;
	case SRC_KERNEL: *s = m->kernels.v[i].start; *e = m->kernels.v[i].end; break;
	case SRC_MEMCPY: *s = m->memcpys.v[i].start; *e = m->memcpys.v[i].end; break;
	case SRC_MEMSET: *s = m->memsets.v[i].start; *e = m->memsets.v[i].end; break;
	case SRC_SYNC: *s = m->syncs.v[i].start; *e = m->syncs.v[i].end; break;
	default: BUG("bad source %d", src);
	}
	if (*e < *s)
		*e = *s;
}

static size_t src_len(const struct model *m, int src)
{
	switch (src) {
	case SRC_API: return m->api.n;
	case SRC_OSRT: return m->osrt.n;
	case SRC_NVTX: return m->nvtx.n;
	case SRC_KERNEL: return m->kernels.n;
	case SRC_MEMCPY: return m->memcpys.n;
	case SRC_MEMSET: return m->memsets.n;
	case SRC_SYNC: return m->syncs.n;
	}
	return 0;
}

static void load_head(const struct model *m, struct lay_iter *it, int k)
{
	size_t n = src_len(m, k);

	if (it->live[k] && it->cur[k] > it->run_lo[k]) {
		it->cur[k]--; /* the next shorter row of the run */
	} else if (it->next[k] < n) {
		/* a new run of rows with the same start: start at its longest (last) row */
		size_t lo = it->next[k], hi = lo;
		uint64_t s0, e0, s1, e1;
		lay_span(m, k, lo, &s0, &e0);
		while (hi + 1 < n) {
			lay_span(m, k, hi + 1, &s1, &e1);
			if (s1 != s0)
				break;
			hi++;
		}
		it->run_lo[k] = lo;
		it->cur[k] = hi;
		it->next[k] = hi + 1;
		it->live[k] = 1;
	} else {
		it->live[k] = 0;
		return;
	}
	lay_span(m, k, it->cur[k], &it->hs[k], &it->he[k]);
}

int lay_next(const struct model *m, struct lay_iter *it, int *src, size_t *row, uint64_t *s,
	     uint64_t *e)
{
	int best = -1;
	uint64_t bs = UINT64_MAX, be = 0;

	if (!it->started) {
		for (int k = 0; k < SRC__COUNT; k++)
			load_head(m, it, k);
		it->started = 1;
	}
	for (int k = 0; k < SRC__COUNT; k++) {
		if (!it->live[k])
			continue;
		if (best < 0 || it->hs[k] < bs || (it->hs[k] == bs && it->he[k] > be)) {
			best = k;
			bs = it->hs[k];
			be = it->he[k];
		}
	}
	if (best < 0)
		return 0;
	*src = best;
	*row = it->cur[best];
	*s = bs;
	*e = be;
	if (it->cur[best] == it->run_lo[best])
		it->live[best] = 0; /* the run is done: load_head starts the next one */
	load_head(m, it, best);
	return 1;
}

const char *lay_src_category(int src)
{
	static const char *const cats[] = { "cuda_api", "osrt", "nvtx", "kernel", "memcpy",
					    "memset", "sync" };
	return src >= 0 && src < SRC__COUNT ? cats[src] : "other";
}

const char *lay_slice_name(const struct model *m, int src, size_t row)
{
	const char *s;

	switch (src) {
	case SRC_API: return model_str(m, m->api.v[row].name_id);
	case SRC_OSRT: s = trace_osrt_name(m->osrt.v[row].func); return s ? s : "os call";
	case SRC_NVTX: s = model_str(m, m->nvtx.v[row].name_id); return *s ? s : "(unnamed range)";
	case SRC_KERNEL: s = model_str(m, m->kernels.v[row].name_id); return *s ? s : "(unnamed kernel)";
	case SRC_MEMCPY: return export_copy_name(m->memcpys.v[row].kind);
	case SRC_MEMSET: return "Memset";
	case SRC_SYNC: return export_sync_name(m->syncs.v[row].type);
	}
	return "";
}

/*
 * Link each API call to the first GPU operation with its (pid, correlation
 * id).  Correlation ids of one process are small and dense in practice, so
 * a single-process model uses an array indexed by id; otherwise a hash map.
 */
static void link_flows(struct lay *l)
{
	const struct model *m = l->m;
	struct u64map api = { 0 };
	uint32_t *dense = NULL, max_corr = 0, pid0 = m->api.n ? m->api.v[0].pid : 0;
	int one_pid = 1;

	for (size_t i = 0; i < m->api.n; i++) {
		if (m->api.v[i].pid != pid0)
			one_pid = 0;
		if (m->api.v[i].correlation > max_corr)
			max_corr = m->api.v[i].correlation;
	}
	if (one_pid && (uint64_t)max_corr < 4 * (uint64_t)m->api.n + 4096)
		dense = xcalloc((size_t)max_corr + 1, sizeof(uint32_t));
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		if (!a->correlation)
			continue;
		if (dense) {
			if (!dense[a->correlation])
				dense[a->correlation] = (uint32_t)i + 1;
		} else {
			uint64_t *v = u64map_get(&api, lay_flow_id(a->pid, a->correlation), 1);
			if (!*v)
				*v = i + 1;
		}
	}
#define LINK(table, src)                                                                    \
	for (size_t i = 0; i < m->table.n && m->api.n; i++) {                                  \
		uint32_t c = m->table.v[i].correlation;                                         \
		uint64_t row = 0;                                                               \
		if (!c)                                                                         \
			continue;                                                               \
		if (dense) {                                                                    \
			if (m->table.v[i].pid == pid0 && c <= max_corr)                         \
				row = dense[c];                                                 \
		} else {                                                                        \
			uint64_t *v = u64map_get(&api, lay_flow_id(m->table.v[i].pid, c), 0);   \
			row = v ? *v : 0;                                                       \
		}                                                                               \
		if (row && !l->flow[SRC_API][row - 1]) {                                        \
			l->flow[SRC_API][row - 1] = 1;                                          \
			l->flow[src][i] = 2;                                                    \
			l->nflows++;                                                            \
		}                                                                               \
	}
	LINK(kernels, SRC_KERNEL)
	LINK(memcpys, SRC_MEMCPY)
	LINK(memsets, SRC_MEMSET)
#undef LINK
	free(dense);
	u64map_release(&api);
}

static uint32_t counter_track(struct lay *l, struct u64map *map, uint64_t key, uint32_t parent,
			      char *name, const char *unit)
{
	uint64_t *v = u64map_get(map, key, 1);
	uint32_t t;

	if (*v) {
		free(name);
		return (uint32_t)(*v - 1);
	}
	t = add_track(l, LT_COUNTER, parent + 1, name);
	l->tracks[t].unit = unit ? xstrdup(unit) : NULL;
	l->tracks[t].json_pid = l->tracks[parent].json_pid;
	l->tracks[t].pid = l->tracks[parent].pid;
	*v = t + 1;
	return t;
}

static void build_counters(struct lay *l)
{
	const struct model *m = l->m;

	l->metric_track = xmalloc((m->metrics.n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *s = &m->metrics.v[i];
		uint64_t key = ((uint64_t)s->device << 32) | s->name_id;
		uint32_t parent;
		if (s->device == UINT32_MAX) {
			/* a host counter: a top-level track */
			uint64_t *v = u64map_get(&l->metric_tracks, key, 1);
			if (!*v) {
				uint32_t t = add_track(l, LT_COUNTER, 0,
						       xstrfmt("host %s", model_str(m, s->name_id)));
				l->tracks[t].json_pid = HOST_JSON_PID;
				*v = t + 1;
			}
			l->metric_track[i] = (uint32_t)(*v - 1);
			continue;
		}
		parent = gpu_track(l, s->device);
		l->metric_track[i] = counter_track(l, &l->metric_tracks, key, parent,
						   xstrfmt("GPU %u %s", s->device, model_str(m, s->name_id)),
						   NULL);
	}
	l->ncounter_samples += m->metrics.n;

	/* CPU use of each thread between consecutive samples */
	l->cpu_track = xmalloc((m->cpu.n + 1) * sizeof(uint32_t));
	l->cpu_value = xmalloc((m->cpu.n + 1) * sizeof(double));
	{
		struct u64map prev = { 0 };
		for (size_t i = 0; i < m->cpu.n; i++) {
			const struct trace_cpu_sample *c = &m->cpu.v[i];
			uint64_t key = ((uint64_t)c->pid << 32) | c->tid;
			uint64_t *v = u64map_get(&prev, key, 1);
			l->cpu_track[i] = UINT32_MAX;
			if (*v) {
				const struct trace_cpu_sample *p = &m->cpu.v[*v - 1];
				if (c->time > p->time && c->run_ns >= p->run_ns) {
					uint32_t th = thread_track(l, c->pid, c->tid);
					l->cpu_track[i] = counter_track(
						l, &l->cpu_tracks, key, th,
						xstrfmt("CPU %% %s", model_thread_name(m, c->pid, c->tid)), "%");
					l->cpu_value[i] = 100.0 * (double)(c->run_ns - p->run_ns) /
							  (double)(c->time - p->time);
					l->ncounter_samples++;
				}
			}
			*v = i + 1;
		}
		u64map_release(&prev);
	}

	/* device memory in use */
	l->mem_track = xmalloc((m->memory.n + 1) * sizeof(uint32_t));
	l->mem_value = xmalloc((m->memory.n + 1) * sizeof(double));
	{
		struct u64map totals = { 0 }, sizes = { 0 };
		for (size_t i = 0; i < m->memory.n; i++) {
			const struct trace_memory *a = &m->memory.v[i];
			uint64_t key = ((uint64_t)a->pid << 32) | a->device;
			/* addresses are per process: fold the pid into the key */
			uint64_t akey = (a->address * 0x9e3779b97f4a7c15ull) ^ a->pid;
			uint64_t *tot, *sz;
			l->mem_track[i] = UINT32_MAX;
			if (a->mem_kind == MEM_PAGEABLE || a->mem_kind == MEM_PINNED)
				continue;
			if (akey == UINT64_MAX)
				akey = 0;
			tot = u64map_get(&totals, key, 1);
			sz = u64map_get(&sizes, akey, 1);
			if (a->op == TRACE_MEM_ALLOC) {
				*tot -= *sz < *tot ? *sz : *tot; /* re-used address without a free */
				*sz = a->bytes;
				*tot += a->bytes;
			} else if (a->op == TRACE_MEM_FREE) {
				uint64_t b = *sz ? *sz : a->bytes;
				*tot -= b < *tot ? b : *tot;
				*sz = 0;
			} else {
				continue;
			}
			l->mem_track[i] = counter_track(l, &l->mem_tracks, key, gpu_track(l, a->device),
							xstrfmt("GPU %u memory in use pid %u", a->device, a->pid),
							"bytes");
			l->mem_value[i] = (double)*tot;
			l->ncounter_samples++;
		}
		u64map_release(&totals);
		u64map_release(&sizes);
	}

	/* PyTorch's caching allocator: allocated and reserved bytes per process and device */
	l->torch_track = xmalloc((2 * m->torch_mem.n + 1) * sizeof(uint32_t));
	{
		struct u64map tracks = { 0 };
		for (size_t i = 0; i < m->torch_mem.n; i++) {
			const struct trace_torch_mem *x = &m->torch_mem.v[i];
			uint64_t key = ((uint64_t)x->pid << 32) | x->device;
			l->torch_track[2 * i] = l->torch_track[2 * i + 1] = UINT32_MAX;
			if (x->kind == TRACE_TM_ALLOC)
				continue;
			l->torch_track[2 * i] = counter_track(l, &tracks, key << 1, gpu_track(l, x->device),
							      xstrfmt("GPU %u torch allocated pid %u", x->device, x->pid),
							      "bytes");
			l->ncounter_samples++;
			if (!(x->flags & TRACE_TM_HAS_RESERVED))
				continue;
			l->torch_track[2 * i + 1] = counter_track(l, &tracks, key << 1 | 1, gpu_track(l, x->device),
								  xstrfmt("GPU %u torch reserved pid %u", x->device,
									  x->pid), "bytes");
			l->ncounter_samples++;
		}
		u64map_release(&tracks);
	}
}

#define GROUP_CACHE 64

int lay_build(struct lay *l, const struct model *m)
{
	struct lay_iter it = { .started = 0 };
	size_t cache[GROUP_CACHE] = { 0 };
	int src;
	size_t row;
	uint64_t s, e;

	memset(l, 0, sizeof(*l));
	l->m = m;
	l->next_json_tid = SYNTH_TID_BASE;
	l->multi_pid = m->procs.n > 1;
	for (int k = 0; k < SRC__COUNT; k++) {
		size_t n = src_len(m, k) + 1;
		l->track[k] = xmalloc(n * sizeof(uint32_t));
		l->flow[k] = xcalloc(n, 1);
	}
	for (size_t i = 0; i < m->procs.n; i++)
		process_track(l, m->procs.v[i].pid);
	for (size_t i = 0; i < m->devices.n; i++)
		gpu_track(l, m->devices.v[i].id);
	for (size_t i = 0; i < m->threads.n; i++)
		thread_track(l, m->threads.v[i].pid, m->threads.v[i].tid);
	link_flows(l);

	while (lay_next(m, &it, &src, &row, &s, &e)) {
		struct lay_group *g;
		uint32_t ka, kb, kc;
		unsigned kind;
		switch (src) {
		case SRC_API: kind = G_THREAD; ka = m->api.v[row].pid; kb = m->api.v[row].tid; kc = 0; break;
		case SRC_OSRT: kind = G_THREAD; ka = m->osrt.v[row].pid; kb = m->osrt.v[row].tid; kc = 0; break;
		case SRC_NVTX:
			ka = m->nvtx.v[row].pid;
			kc = 0;
			if (m->nvtx.v[row].kind == TRACE_NVTX_STARTEND) {
				kind = G_NVTX_ASYNC;
				kb = 0;
			} else {
				kind = G_THREAD;
				kb = m->nvtx.v[row].tid;
			}
			break;
		case SRC_KERNEL:
			kind = G_STREAM;
			ka = m->kernels.v[row].pid;
			kb = m->kernels.v[row].device;
			kc = m->kernels.v[row].stream;
			break;
		case SRC_MEMCPY:
			kind = G_STREAM;
			ka = m->memcpys.v[row].pid;
			kb = m->memcpys.v[row].device;
			kc = m->memcpys.v[row].stream;
			break;
		case SRC_MEMSET:
			kind = G_STREAM;
			ka = m->memsets.v[row].pid;
			kb = m->memsets.v[row].device;
			kc = m->memsets.v[row].stream;
			break;
		case SRC_SYNC: kind = G_SYNC; ka = m->syncs.v[row].pid; kb = kc = 0; break;
		default: BUG("bad source %d", src);
		}
		/* a small cache: runs of slices mostly go to a few groups */
		{
			size_t h = (ka * 31u + kb * 7u + kc + kind) & (GROUP_CACHE - 1);
			size_t gi = cache[h];
			if (gi && (g = &l->groups[gi - 1])->kind == kind && g->a == ka && g->b == kb &&
			    g->c == kc) {
				/* hit */
			} else {
				g = get_group(l, kind, ka, kb, kc);
				cache[h] = (size_t)(g - l->groups) + 1;
			}
		}
		l->track[src][row] = place(l, g, s, e);
		l->nslices++;
	}
	/* the stacks are only needed while placing */
	for (size_t i = 0; i < l->ngroups; i++)
		for (size_t k = 0; k < l->groups[i].nlanes; k++) {
			free(l->groups[i].lanes[k].stack);
			l->groups[i].lanes[k].stack = NULL;
			l->groups[i].lanes[k].n = l->groups[i].lanes[k].alloc = 0;
		}

	l->mark_track = xmalloc((m->marks.n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < m->marks.n; i++)
		l->mark_track[i] = thread_track(l, m->marks.v[i].pid, m->marks.v[i].tid);
	build_counters(l);
	return 0;
}

void lay_release(struct lay *l)
{
	for (size_t i = 0; i < l->ntracks; i++) {
		free(l->tracks[i].name);
		free(l->tracks[i].unit);
	}
	free(l->tracks);
	for (int k = 0; k < SRC__COUNT; k++) {
		free(l->track[k]);
		free(l->flow[k]);
	}
	free(l->mark_track);
	free(l->metric_track);
	free(l->cpu_track);
	free(l->cpu_value);
	free(l->mem_track);
	free(l->mem_value);
	free(l->torch_track);
	for (size_t i = 0; i < l->ngroups; i++) {
		for (size_t k = 0; k < l->groups[i].nlanes; k++)
			free(l->groups[i].lanes[k].stack);
		free(l->groups[i].lanes);
	}
	free(l->groups);
	u64map_release(&l->group_map);
	u64map_release(&l->procs);
	u64map_release(&l->gpus);
	u64map_release(&l->metric_tracks);
	u64map_release(&l->cpu_tracks);
	u64map_release(&l->mem_tracks);
	memset(l, 0, sizeof(*l));
}
