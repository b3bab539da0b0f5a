/*
 * rank_merge.c - merge the reports and traces of several ranks with aligned
 * clocks (rank_merge.h says how; docs/distributed.md for users).
 */
#include "rank_merge.h"
#include "../import/import.h"
#include "../model/kernel_class.h"
#include "../model/model.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Times after 2001-09-09 in ns since the epoch: a trace whose times are this big is on the wall clock. */
#define RM_WALL_MIN_NS 1000000000000000000ull

/* One communication kernel: the n-th of its name on the rank's GPU. */
struct rm_coll {
	const char *name;          /* owned by the model it came from, or copied (the reference) */
	size_t occ;
	uint64_t end;
};

struct rm_seq {
	struct rm_coll *v;
	size_t n, alloc;
};

static int cmp_coll(const void *a, const void *b)
{
	const struct rm_coll *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->occ < y->occ ? -1 : x->occ > y->occ;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The collectives of one rank: the communication kernels of the (process,
 * GPU) that ran the most of them (one rank's GPU: the sequence every rank
 * shares), numbered per name in start order, sorted by (name, number).
 */
static void coll_seq(const struct model *m, struct rm_seq *s, int copy)
{
	struct { uint32_t pid, dev; size_t n; } *u = NULL;
	size_t nu = 0, alloc = 0, best = 0;
	struct { uint32_t name; size_t n; } *cnt = NULL;
	size_t ncnt = 0, calloc_ = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		size_t j;
		if (!kernel_is_comm(m, k, NULL))
			continue;
		for (j = 0; j < nu; j++)
			if (u[j].pid == k->pid && u[j].dev == k->device)
				break;
		if (j == nu) {
			ALLOC_GROW(u, nu + 1, alloc);
			u[nu].pid = k->pid;
			u[nu].dev = k->device;
			u[nu++].n = 0;
		}
		u[j].n++;
	}
	for (size_t j = 1; j < nu; j++)
		if (u[j].n > u[best].n)
			best = j;
	for (size_t i = 0; nu && i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		size_t j;
		if (k->pid != u[best].pid || k->device != u[best].dev || !kernel_is_comm(m, k, NULL) || !k->end)
			continue;
		for (j = 0; j < ncnt; j++)
			if (cnt[j].name == k->name_id)
				break;
		if (j == ncnt) {
			ALLOC_GROW(cnt, ncnt + 1, calloc_);
			cnt[ncnt].name = k->name_id;
			cnt[ncnt++].n = 0;
		}
		ALLOC_GROW(s->v, s->n + 1, s->alloc);
		s->v[s->n].name = copy ? xstrdup(model_str(m, k->name_id)) : model_str(m, k->name_id);
		s->v[s->n].occ = cnt[j].n++;
		s->v[s->n].end = k->end;
		s->n++;
	}
	free(u);
	free(cnt);
	if (s->n)
		if (s->n)
			qsort(s->v, s->n, sizeof(*s->v), cmp_coll);
}

static void seq_release(struct rm_seq *s, int copied)
{
	if (copied)
		for (size_t i = 0; i < s->n; i++)
			free((char *)s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* What the alignment of one input found. */
struct rm_align {
	int64_t off;               /* added to the input's times */
	unsigned flags;            /* TRACE_PA_CLOCK_* */
	size_t pairs;              /* collectives matched */
	uint64_t err_max, err_med; /* |end difference| after the refinement */
	int64_t refine;            /* the refinement applied on top of the wall offset */
};

/*
 * The difference between the local clock and the wall clock of model @m,
 * when known: 1 and *wall set, else 0.
 */
static int wall_offset(const struct model *m, int64_t *wall)
{
	if (m->format && !strcmp(m->format, "gpuscope")) {
		for (size_t i = 0; i < m->procs.n; i++)
			if (m->procs.v[i].start_realtime_ns && m->procs.v[i].start_mono_ns) {
				*wall = (int64_t)(m->procs.v[i].start_realtime_ns - m->procs.v[i].start_mono_ns);
				return 1;
			}
		return 0;
	}
	if (m->t_min >= RM_WALL_MIN_NS) {
		*wall = 0;
		return 1;
	}
	return 0;
}

static void align(struct rm_align *a, const struct model *m, const struct rm_seq *ref,
		  int ref_wall_known, int64_t ref_wall, uint64_t ref_tmin)
{
	struct rm_seq s;
	int64_t wall, *d = NULL;
	size_t nd = 0, alloc = 0;

	memset(a, 0, sizeof(*a));
	if (ref_wall_known && wall_offset(m, &wall)) {
		a->off = wall - ref_wall;
		a->flags |= TRACE_PA_CLOCK_WALL;
	} else if (m->t_min && ref_tmin) {
		a->off = (int64_t)(ref_tmin - m->t_min); /* first events together: a start, refined below */
	}
	coll_seq(m, &s, 0);
	for (size_t i = 0, j = 0; i < ref->n && j < s.n;) {
		int c = cmp_coll(&ref->v[i], &s.v[j]);
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			ALLOC_GROW(d, nd + 1, alloc);
			d[nd++] = (int64_t)ref->v[i].end - ((int64_t)s.v[j].end + a->off);
			i++;
			j++;
		}
	}
	a->pairs = nd;
	if (nd >= RM_MIN_PAIRS) {
		int64_t med;
		uint64_t *r = xmalloc(nd * sizeof(*r));
		if (nd)
			qsort(d, nd, sizeof(*d), cmp_i64);
		med = d[nd / 2];
		a->refine = med;
		a->off += med;
		a->flags |= TRACE_PA_CLOCK_COLL;
		for (size_t k = 0; k < nd; k++) {
			int64_t e = d[k] - med;
			r[k] = (uint64_t)(e < 0 ? -e : e);
			if (r[k] > a->err_max)
				a->err_max = r[k];
		}
		if (nd)
			qsort(r, nd, sizeof(*r), cmp_i64); /* values < 2^63: the signed order is the same */
		a->err_med = r[nd / 2];
		free(r);
	}
	free(d);
	seq_release(&s, 0);
}

/* ---- writing one model as a report ---- */

struct rm_writer {
	struct trace_builder b;
	const struct model *m;
	uint32_t *ids;             /* model string id -> builder id + 1 (0 = not yet) */
	int64_t off;
	/* pid and device renumbering (few entries: linear scans) */
	uint32_t (*pmap)[2];
	size_t npmap;
	uint32_t (*dmap)[2];
	size_t ndmap;
};

static uint32_t wstr(struct rm_writer *w, uint32_t id)
{
	if (!id || id >= w->m->str.nr)
		return 0;
	if (!w->ids[id])
		w->ids[id] = trace_builder_str(&w->b, model_str(w->m, id)) + 1;
	return w->ids[id] - 1;
}

static uint64_t wt(const struct rm_writer *w, uint64_t t)
{
	int64_t v;

	if (!t)
		return 0; /* unknown stays unknown */
	v = (int64_t)t + w->off;
	return v > 0 ? (uint64_t)v : 1;
}

static uint32_t wpid(const struct rm_writer *w, uint32_t pid)
{
	for (size_t i = 0; i < w->npmap; i++)
		if (w->pmap[i][0] == pid)
			return w->pmap[i][1];
	return pid;
}

static uint32_t wdev(const struct rm_writer *w, uint32_t dev)
{
	for (size_t i = 0; i < w->ndmap; i++)
		if (w->dmap[i][0] == dev)
			return w->dmap[i][1];
	return dev;
}

/* "+1.5 us" / "-3 ms" */
static const char *fmt_signed(char *buf, size_t n, int64_t ns)
{
	char d[48];

	fmt_duration(d, sizeof(d), (double)(ns < 0 ? -(double)ns : (double)ns));
	snprintf(buf, n, "%s%s", ns < 0 ? "-" : "+", d);
	return buf;
}

/* A text of the merger's own (not a model string). */
static uint32_t wstr_text(struct rm_writer *w, const char *s)
{
	return trace_builder_str(&w->b, s);
}

#define ADD(type, rec) trace_builder_add(&w->b, type, &(rec), sizeof(rec))

/*
 * What the merge did over all inputs: one warning at the end, and one per
 * input only where the merge is small (RM_LIST_INPUTS) or the input could
 * not be refined.
 */
#define RM_LIST_INPUTS 8
struct rm_summary {
	struct strtab seen;        /* input warnings already written (ranks repeat them) */
	size_t n, refined, wall_only, starts_only;
	uint64_t err_max;
	size_t err_at;             /* input index of err_max */
	const char *ref_path;
};

static void write_rows(struct rm_writer *w, const struct rm_align *al, const char *path,
		       int as_rank, int world, uint32_t main_pid, struct rm_summary *sum, size_t idx)
{
	const struct model *m = w->m;
	char b1[64], b2[64], b3[64];

	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		struct trace_process r = { 0 };
		struct trace_proc_attr a;
		r.pid = wpid(w, p->pid);
		r.ppid = p->ppid;
		r.start_realtime_ns = p->start_realtime_ns;
		r.start_mono_ns = wt(w, p->start_mono_ns);
		r.cmdline_id = wstr(w, p->cmdline_id);
		r.exe_id = wstr(w, p->exe_id);
		r.host_id = wstr(w, p->host_id);
		ADD(TRACE_EV_PROCESS, r);
		if (p->has_attr)
			a = p->attr;
		else
			model_proc_attr_unknown(&a);
		a.pid = r.pid;
		a.time = wt(w, a.time);
		a.launcher_id = wstr(w, a.launcher_id);
		a.cpus_id = wstr(w, a.cpus_id);
		if (as_rank >= 0 && p->pid == main_pid) {
			a.rank = as_rank;
			a.world_size = world;
		}
		a.clock_offset_ns = al->off;
		a.clock_error_ns = al->err_max;
		a.flags = (a.flags & ~(unsigned)(TRACE_PA_CLOCK_WALL | TRACE_PA_CLOCK_COLL)) | al->flags;
		ADD(TRACE_EV_PROC_ATTR, a);
	}
	for (size_t i = 0; i < m->threads.n; i++) {
		const struct model_thread *t = &m->threads.v[i];
		struct trace_thread r = { 0 };
		r.time = wt(w, t->first);
		r.pid = wpid(w, t->pid);
		r.tid = t->tid;
		r.name_id = wstr(w, t->name_id);
		r.flags = r.name_id ? TRACE_THREAD_NAME : 0;
		ADD(TRACE_EV_THREAD, r);
	}
	for (size_t i = 0; i < m->devices.n; i++) {
		struct trace_device r = m->devices.v[i];
		r.id = wdev(w, r.id);
		r.pid = wpid(w, r.pid);
		r.name_id = wstr(w, r.name_id);
		ADD(TRACE_EV_DEVICE, r);
	}
	for (size_t i = 0; i < m->names.n; i++) {
		struct trace_name r = m->names.v[i];
		r.pid = wpid(w, r.pid);
		r.name_id = wstr(w, r.name_id);
		r.domain_id = wstr(w, r.domain_id);
		ADD(TRACE_EV_NAME, r);
	}
	for (size_t i = 0; i < m->nvtx.n; i++) {
		struct trace_nvtx_range r = m->nvtx.v[i];
		r.start = wt(w, r.start);
		r.end = wt(w, r.end);
		r.pid = wpid(w, r.pid);
		r.name_id = wstr(w, r.name_id);
		r.domain_id = wstr(w, r.domain_id);
		if (r.kind == TRACE_NVTX_STARTEND && !r.end)
			r.range_id = 0; /* never ended: written open, no end follows */
		ADD(TRACE_EV_NVTX_RANGE, r);
	}
	for (size_t i = 0; i < m->marks.n; i++) {
		struct trace_nvtx_mark r = m->marks.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		r.name_id = wstr(w, r.name_id);
		r.domain_id = wstr(w, r.domain_id);
		ADD(TRACE_EV_NVTX_MARK, r);
	}
	for (size_t i = 0; i < m->osrt.n; i++) {
		struct trace_osrt r = m->osrt.v[i];
		r.start = wt(w, r.start);
		r.end = wt(w, r.end);
		r.pid = wpid(w, r.pid);
		ADD(TRACE_EV_OSRT, r);
	}
	for (size_t i = 0; i < m->cpu.n; i++) {
		struct trace_cpu_sample r = m->cpu.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		ADD(TRACE_EV_CPU_SAMPLE, r);
	}
	for (size_t i = 0; i < m->api.n; i++) {
		struct trace_api r = m->api.v[i];
		r.start = wt(w, r.start);
		r.end = wt(w, r.end);
		r.pid = wpid(w, r.pid);
		r.name_id = wstr(w, r.name_id);
		ADD(TRACE_EV_API, r);
	}
	for (size_t i = 0; i < m->kernels.n; i++) {
		struct trace_kernel r = m->kernels.v[i];
		r.start = wt(w, r.start);
		r.end = wt(w, r.end);
		r.pid = wpid(w, r.pid);
		r.device = wdev(w, r.device);
		if (kernel_is_comm(m, &m->kernels.v[i], NULL))
			r.flags |= TRACE_GPU_COMM;
		r.name_id = wstr(w, r.name_id);
		r.mangled_id = wstr(w, r.mangled_id);
		ADD(TRACE_EV_KERNEL, r);
	}
	/* copies, sets and syncs: times, process and GPU moved, nothing else */
#define GPU_OPS(table, type, ev) \
	for (size_t i = 0; i < m->table.n; i++) { \
		type r = m->table.v[i]; \
		r.start = wt(w, r.start); \
		r.end = wt(w, r.end); \
		r.pid = wpid(w, r.pid); \
		r.device = wdev(w, r.device); \
		ADD(ev, r); \
	}
	GPU_OPS(memcpys, struct trace_memcpy, TRACE_EV_MEMCPY)
	GPU_OPS(memsets, struct trace_memset, TRACE_EV_MEMSET)
	GPU_OPS(syncs, struct trace_sync, TRACE_EV_SYNC)
#undef GPU_OPS
	for (size_t i = 0; i < m->memory.n; i++) {
		struct trace_memory r = m->memory.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		r.device = wdev(w, r.device);
		ADD(TRACE_EV_MEMORY, r);
	}
	for (size_t i = 0; i < m->metrics.n; i++) {
		struct trace_metric r = m->metrics.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		if (r.device != UINT32_MAX)
			r.device = wdev(w, r.device);
		r.name_id = wstr(w, r.name_id);
		ADD(TRACE_EV_METRIC, r);
	}
	for (size_t i = 0; i < m->captures.n; i++) {
		struct trace_capture r = m->captures.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		ADD(TRACE_EV_CAPTURE, r);
	}
	for (size_t i = 0; i < m->kmetrics.n; i++) {
		struct trace_kmetric r = m->kmetrics.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		r.device = wdev(w, r.device);
		r.kernel_id = wstr(w, r.kernel_id);
		r.key_id = wstr(w, r.key_id);
		r.metric_id = wstr(w, r.metric_id);
		ADD(TRACE_EV_KMETRIC, r);
	}
	/* PyTorch's allocator: samples and out-of-memory events (docs/memory.md) */
	for (size_t i = 0; i < m->torch_mem.n; i++) {
		struct trace_torch_mem r = m->torch_mem.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		r.device = wdev(w, r.device);
		ADD(TRACE_EV_TORCH_MEM, r);
	}
	for (size_t i = 0; i < m->ooms.n; i++) {
		struct trace_oom r = m->ooms.v[i];
		r.time = wt(w, r.time);
		r.pid = wpid(w, r.pid);
		r.device = wdev(w, r.device);
		r.detail_id = wstr(w, r.detail_id);
		ADD(TRACE_EV_OOM, r);
	}
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++)
		if (m->drops[d]) {
			struct trace_drops r = { wpid(w, main_pid), d, m->drops[d] };
			ADD(TRACE_EV_DROPS, r);
		}
	/* the input's warnings, and what the alignment did (shown by `info`) */
	for (size_t i = 0; i < m->nr_warnings; i++) {
		const char *s = m->warnings[i], *p;
		struct strbuf sb = STRBUF_INIT;
		struct trace_warning r = { 0 };
		/* a report's warnings come back as "process N: ..."; drop that prefix */
		if (!strncmp(s, "process ", 8) && (p = strstr(s, ": ")))
			s = p + 2;
		/* the importer's note that a Kineto trace holds one rank no longer holds */
		if (!strncmp(s, "kineto: distributed run", 23))
			continue;
		if (strtab_find(&sum->seen, s) != UINT32_MAX)
			continue; /* said for an earlier rank */
		strtab_intern(&sum->seen, s);
		strbuf_addstr(&sb, s);
		r.pid = wpid(w, main_pid);
		r.message_id = wstr_text(w, sb.buf);
		strbuf_release(&sb);
		ADD(TRACE_EV_WARNING, r);
	}
	if (!(al->flags & TRACE_PA_REFERENCE)) {
		if (al->flags & TRACE_PA_CLOCK_COLL) {
			sum->refined++;
			if (al->err_max >= sum->err_max) {
				sum->err_max = al->err_max;
				sum->err_at = idx;
			}
		} else if (al->flags & TRACE_PA_CLOCK_WALL) {
			sum->wall_only++;
		} else {
			sum->starts_only++;
		}
	}
	if (sum->n <= RM_LIST_INPUTS || (!(al->flags & TRACE_PA_REFERENCE) && !(al->flags & TRACE_PA_CLOCK_COLL))) {
		struct strbuf sb = STRBUF_INIT;
		struct trace_warning r = { 0 };
		strbuf_addf(&sb, "merge: '%s'", path);
		if (as_rank >= 0)
			strbuf_addf(&sb, " (rank %d)", as_rank);
		else if (model_proc_rank(m, main_pid) >= 0)
			strbuf_addf(&sb, " (rank %d)", model_proc_rank(m, main_pid));
		if (al->flags & TRACE_PA_REFERENCE) {
			strbuf_addstr(&sb, ": its clock is the merged clock");
		} else {
			strbuf_addf(&sb, ": clock moved by %s", fmt_signed(b1, sizeof(b1), al->off));
			if (al->flags & TRACE_PA_CLOCK_WALL)
				strbuf_addf(&sb, " (wall-clock offset %s", fmt_signed(b2, sizeof(b2), al->off - al->refine));
			else
				strbuf_addstr(&sb, " (no wall-clock offset: first events aligned");
			if (al->flags & TRACE_PA_CLOCK_COLL)
				strbuf_addf(&sb, ", then %s from %zu collective ends): residual error %s at most, %s median",
					    fmt_signed(b2, sizeof(b2), al->refine), al->pairs,
					    fmt_duration(b3, sizeof(b3), (double)al->err_max),
					    fmt_duration(b1, sizeof(b1), (double)al->err_med));
			else
				strbuf_addf(&sb, "): not refined, %zu collectives matched where %d are needed: error unknown",
					    al->pairs, RM_MIN_PAIRS);
		}
		r.pid = wpid(w, main_pid);
		r.message_id = wstr_text(w, sb.buf);
		strbuf_release(&sb);
		ADD(TRACE_EV_WARNING, r);
	}
	if (idx + 1 == sum->n && sum->n > 1) {
		struct strbuf sb = STRBUF_INIT;
		struct trace_warning r = { 0 };
		strbuf_addf(&sb, "merge: %zu inputs on the clock of '%s': %zu aligned on collective ends",
			    sum->n, sum->ref_path, sum->refined);
		if (sum->refined)
			strbuf_addf(&sb, " (residual error at most %s, input %zu)",
				    fmt_duration(b1, sizeof(b1), (double)sum->err_max), sum->err_at + 1);
		if (sum->wall_only)
			strbuf_addf(&sb, ", %zu by wall-clock offsets alone (error unknown)", sum->wall_only);
		if (sum->starts_only)
			strbuf_addf(&sb, ", %zu by their first events alone (error unknown)", sum->starts_only);
		r.pid = wpid(w, main_pid);
		r.message_id = wstr_text(w, sb.buf);
		strbuf_release(&sb);
		ADD(TRACE_EV_WARNING, r);
	}
}

/* ---- the merge ---- */

struct rm_used {
	uint32_t *v;
	size_t n, alloc;
};

static int used_has(const struct rm_used *u, uint32_t x)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i] == x)
			return 1;
	return 0;
}

static void used_add(struct rm_used *u, uint32_t x)
{
	ALLOC_GROW(u->v, u->n + 1, u->alloc);
	u->v[u->n++] = x;
}

/* The process that ran the most kernels (the rank), else the first one; 0 when none. */
static uint32_t main_pid_of(const struct model *m)
{
	uint32_t best = m->procs.n ? m->procs.v[0].pid : 0;
	size_t bestn = 0;

	for (size_t i = 0; i < m->procs.n; i++) {
		size_t n = 0;
		for (size_t k = 0; k < m->kernels.n; k++)
			n += m->kernels.v[k].pid == m->procs.v[i].pid;
		if (n > bestn) {
			bestn = n;
			best = m->procs.v[i].pid;
		}
	}
	return best;
}

/*
 * Renumber the pids of @m that an earlier input used (ranks on different
 * hosts may share a pid) and the GPUs it ran work on that an earlier input
 * also used (ranks on different hosts, or with CUDA_VISIBLE_DEVICES set per
 * rank, all call theirs device 0): the merged report must keep them apart.
 */
static void renumber(struct rm_writer *w, const struct model *m, struct rm_used *pids,
		     struct rm_used *devs)
{
	struct rm_used mine = { 0 };

	for (size_t i = 0; i < m->procs.n; i++) {
		uint32_t p = m->procs.v[i].pid, q = p;
		while (used_has(pids, q))
			q += 1u << 22; /* above Linux's largest pid_max */
		if (q != p) {
			w->pmap = xrealloc(w->pmap, (w->npmap + 1) * sizeof(*w->pmap));
			w->pmap[w->npmap][0] = p;
			w->pmap[w->npmap++][1] = q;
		}
	}
	for (size_t i = 0; i < m->procs.n; i++)
		used_add(pids, wpid(w, m->procs.v[i].pid));
#define SEE(t) for (size_t i = 0; i < (t).n; i++) if (!used_has(&mine, (t).v[i].device)) used_add(&mine, (t).v[i].device)
	SEE(m->kernels);
	SEE(m->memcpys);
	SEE(m->memsets);
	SEE(m->torch_mem); /* a report of the allocator alone (no CUDA tracing) still names its GPU */
	SEE(m->ooms);
#undef SEE
	for (size_t i = 0; i < mine.n; i++) {
		uint32_t d = mine.v[i], e = d;
		if (used_has(devs, d)) {
			e = 0;
			while (used_has(devs, e) || used_has(&mine, e))
				e++;
			w->dmap = xrealloc(w->dmap, (w->ndmap + 1) * sizeof(*w->dmap));
			w->dmap[w->ndmap][0] = d;
			w->dmap[w->ndmap++][1] = e;
		}
		used_add(devs, e);
	}
	free(mine.v);
}

/* Device rows of GPUs the input ran nothing on are dropped: every rank's Kineto trace lists all of a host's GPUs. */
static void keep_active_devices(struct model *m)
{
	size_t o = 0;

	for (size_t i = 0; i < m->devices.n; i++) {
		uint32_t id = m->devices.v[i].id;
		int active = 0;
		for (size_t k = 0; k < m->kernels.n && !active; k++)
			active = m->kernels.v[k].device == id;
		for (size_t k = 0; k < m->memcpys.n && !active; k++)
			active = m->memcpys.v[k].device == id;
		if (active || !m->kernels.n)
			m->devices.v[o++] = m->devices.v[i];
	}
	m->devices.n = o;
}

int rank_merge(const char *out, const char *const *inputs, size_t n, const struct rank_merge_opts *o)
{
	struct rm_seq ref = { 0 };
	struct rm_used pids = { 0 }, devs = { 0 };
	char **parts = xcalloc(n, sizeof(*parts));
	int64_t ref_wall = 0;
	int ref_wall_known = 0, ret = 0;
	uint64_t ref_tmin = 0;
	struct rm_summary sum;

	memset(&sum, 0, sizeof(sum));
	strtab_init(&sum.seen);
	sum.n = n;
	sum.ref_path = inputs[0];

	for (size_t i = 0; i < n && !ret; i++) {
		struct model m;
		struct rm_writer w;
		struct rm_align al;
		uint32_t main_pid;

		model_init(&m);
		if (load_input(&m, inputs[i]) < 0) {
			model_release(&m);
			ret = -1;
			break;
		}
		if (i == 0) {
			ref_wall_known = wall_offset(&m, &ref_wall);
			ref_tmin = m.t_min;
			coll_seq(&m, &ref, 1);
			memset(&al, 0, sizeof(al));
			al.flags = TRACE_PA_REFERENCE;
		} else {
			align(&al, &m, &ref, ref_wall_known, ref_wall, ref_tmin);
		}
		keep_active_devices(&m);
		memset(&w, 0, sizeof(w));
		w.m = &m;
		w.off = al.off;
		w.ids = xcalloc(m.str.nr ? m.str.nr : 1, sizeof(*w.ids));
		renumber(&w, &m, &pids, &devs);
		main_pid = main_pid_of(&m);
		parts[i] = xstrfmt("%s.part-%ld-%zu", out, (long)getpid(), i);
		if (trace_builder_open(&w.b, parts[i], 1, 0) < 0) {
			ret = -1;
		} else {
			write_rows(&w, &al, inputs[i], o->as_ranks ? (int)i : -1, (int)n, main_pid, &sum, i);
			if (trace_builder_close(&w.b, 0) < 0)
				ret = -1;
		}
		free(w.ids);
		free(w.pmap);
		free(w.dmap);
		model_release(&m);
	}
	if (!ret)
		ret = trace_merge(out, (const char *const *)parts, n, o->excl);
	for (size_t i = 0; i < n; i++) {
		if (parts[i])
			unlink(parts[i]);
		free(parts[i]);
	}
	free(parts);
	free(pids.v);
	free(devs.v);
	seq_release(&ref, 1);
	strtab_release(&sum.seen);
	return ret;
}

static void noop_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	(void)ctx; (void)stream; (void)type; (void)rec;
}

static void noop_strings(void *ctx, const struct model_strmap *map)
{
	(void)ctx; (void)map;
}

int rank_merge_wanted(const char *const *inputs, size_t n)
{
	char *host = NULL;
	int want = 0, ret;
	/* every timed record type: only processes, threads and strings are kept */
	struct model_sink sink = {
		.types = (1u << TRACE_EV_NVTX_RANGE) | (1u << TRACE_EV_OSRT) | (1u << TRACE_EV_API) |
			 (1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) |
			 (1u << TRACE_EV_SYNC),
		.row = noop_row,
		.strings = noop_strings,
	};

	for (size_t i = 0; i < n && !want; i++) {
		struct model m;
		if (trace_is_report(inputs[i]) != 1)
			return 1;
		model_init(&m);
		/* a probe: an input that does not load is the plain merger's to report */
		set_error_quiet(1);
		ret = model_load_report_sink(&m, inputs[i], &sink);
		set_error_quiet(0);
		if (ret == 0) {
			for (size_t p = 0; p < m.procs.n && !want; p++) {
				const char *h = model_str(&m, m.procs.v[p].host_id);
				if (!*h)
					continue;
				if (!host)
					host = xstrdup(h);
				else if (strcmp(host, h))
					want = 1;
			}
		}
		model_release(&m);
	}
	free(host);
	return want;
}
