/*
 * cmd_dump.c - `gpuscope dump REPORT [--type T]`: one event per line.
 *
 * The line format is stable and documented in docs/dump-format.md:
 *   <time> <type> key=value key=value ...
 * <time> is nanoseconds since the report's first event (or absolute with
 * --absolute); strings are double-quoted with C escapes.  Lines are in time
 * order across types; ties keep the type order of the table below.
 */
#include "commands.h"
#include "../import/import.h"
#include "../model/device_facts.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char dump_usage[] = "gpuscope dump [--type T[,T...]] [--absolute] [--slice-events N] REPORT";
static const char dump_types[] = "process thread nvtx_range nvtx_mark name osrt cpu_sample api "
				 "kernel memcpy memset sync memory device metric kmetric capture torch_mem oom";

static const struct cli_opt dump_opts[] = {
	{ "type", 't', 't', ARG_REQUIRED, "T[,T...]",
	  "only events of these types (process thread nvtx_range nvtx_mark\nname osrt cpu_sample api "
	  "kernel memcpy memset sync memory\ndevice metric capture)",
	  "process thread nvtx_range nvtx_mark name osrt cpu_sample api kernel memcpy memset sync "
	  "memory device metric capture", 0 },
	{ "absolute", 'a', 'a', ARG_NONE, NULL, "absolute times (the clock's), not from the report's start",
	  NULL, 0 },
	{ "slice-events", 0, 'S', ARG_REQUIRED, "N",
	  "read a big report in time slices of about N events (default 2000000): memory follows N",
	  NULL, 0 },
	{ 0 },
};

const struct cli_cmd cli_dump = {
	.name = "dump",
	.synopsis = dump_usage,
	.summary = "print a report's events, one per line",
	.description = "Prints every event of a report, one per line, in time order after the "
		       "processes, devices and threads (docs/dump-format.md).",
	.opts = dump_opts,
	.example = "gpuscope dump --type kernel,memcpy run.gpuscope | head",
	.args = "<file>",
};

struct dump_ctx {
	const struct model *m;
	uint64_t base;
	struct strbuf sb;
};

static void q(struct strbuf *sb, const char *key, const char *s)
{
	strbuf_addf(sb, " %s=\"", key);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c == '\n')
			strbuf_addstr(sb, "\\n");
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(sb, "\\x%02x", c);
		else
			strbuf_addch(sb, c);
	}
	strbuf_addch(sb, '"');
}

static void t(struct dump_ctx *d, uint64_t time, const char *type)
{
	strbuf_addf(&d->sb, "%" PRIu64 " %s", time >= d->base ? time - d->base : 0, type);
}

static void range(struct dump_ctx *d, uint64_t start, uint64_t end)
{
	if (end)
		strbuf_addf(&d->sb, " dur=%" PRIu64, end >= start ? end - start : 0);
	else
		strbuf_addstr(&d->sb, " dur=open");
}

static void payload(struct strbuf *sb, unsigned type, uint64_t bits)
{
	double dv;

	switch (type) {
	case TRACE_PAYLOAD_U64: case TRACE_PAYLOAD_U32:
		strbuf_addf(sb, " payload=%" PRIu64, bits);
		break;
	case TRACE_PAYLOAD_I64: case TRACE_PAYLOAD_I32:
		strbuf_addf(sb, " payload=%" PRId64, (int64_t)bits);
		break;
	case TRACE_PAYLOAD_DOUBLE: case TRACE_PAYLOAD_FLOAT:
		memcpy(&dv, &bits, sizeof(dv));
		strbuf_addf(sb, " payload=%g", dv);
		break;
	default:
		break;
	}
}

static void dump_one(struct dump_ctx *d, unsigned type, size_t i)
{
	const struct model *m = d->m;
	struct strbuf *sb = &d->sb;

	switch (type) {
	case TRACE_EV_PROCESS: {
		const struct model_process *p = &m->procs.v[i];
		t(d, p->start_mono_ns, "process");
		strbuf_addf(sb, " pid=%u ppid=%u", p->pid, p->ppid);
		q(sb, "cmdline", model_str(m, p->cmdline_id));
		q(sb, "host", model_str(m, p->host_id));
		break;
	}
	case TRACE_EV_THREAD: {
		const struct model_thread *th = &m->threads.v[i];
		t(d, th->first, "thread");
		strbuf_addf(sb, " pid=%u tid=%u", th->pid, th->tid);
		q(sb, "name", model_str(m, th->name_id));
		break;
	}
	case TRACE_EV_NVTX_RANGE: {
		const struct trace_nvtx_range *r = &m->nvtx.v[i];
		t(d, r->start, "nvtx_range");
		range(d, r->start, r->end);
		strbuf_addf(sb, " pid=%u tid=%u", r->pid, r->tid);
		if (r->kind == TRACE_NVTX_STARTEND)
			strbuf_addf(sb, " kind=startend end_tid=%u", r->end_tid);
		else
			strbuf_addf(sb, " kind=pushpop level=%u", r->level);
		q(sb, "name", model_str(m, r->name_id));
		if (r->domain_id)
			q(sb, "domain", model_str(m, r->domain_id));
		if (r->category)
			strbuf_addf(sb, " category=%u", r->category);
		if (r->color)
			strbuf_addf(sb, " color=0x%08x", r->color);
		payload(sb, r->payload_type, r->payload);
		break;
	}
	case TRACE_EV_NVTX_MARK: {
		const struct trace_nvtx_mark *k = &m->marks.v[i];
		t(d, k->time, "nvtx_mark");
		strbuf_addf(sb, " pid=%u tid=%u", k->pid, k->tid);
		q(sb, "name", model_str(m, k->name_id));
		if (k->domain_id)
			q(sb, "domain", model_str(m, k->domain_id));
		if (k->category)
			strbuf_addf(sb, " category=%u", k->category);
		if (k->color)
			strbuf_addf(sb, " color=0x%08x", k->color);
		payload(sb, k->payload_type, k->payload);
		break;
	}
	case TRACE_EV_NAME: {
		const struct trace_name *n = &m->names.v[i];
		t(d, 0, "name");
		strbuf_addf(sb, " kind=%u id=%" PRIu64 " pid=%u", n->kind, n->id, n->pid);
		if (n->domain_id)
			q(sb, "domain", model_str(m, n->domain_id));
		q(sb, "name", model_str(m, n->name_id));
		break;
	}
	case TRACE_EV_OSRT: {
		const struct trace_osrt *o = &m->osrt.v[i];
		t(d, o->start, "osrt");
		range(d, o->start, o->end);
		strbuf_addf(sb, " pid=%u tid=%u func=%s result=%" PRId64, o->pid, o->tid,
			    trace_osrt_name(o->func), o->result);
		if (o->arg >= 0)
			strbuf_addf(sb, " arg=%" PRId64, o->arg);
		if (o->err)
			strbuf_addf(sb, " errno=%d", o->err);
		break;
	}
	case TRACE_EV_CPU_SAMPLE: {
		const struct trace_cpu_sample *c = &m->cpu.v[i];
		t(d, c->time, "cpu_sample");
		strbuf_addf(sb, " pid=%u tid=%u run_ns=%" PRIu64 " wait_ns=%" PRIu64, c->pid, c->tid,
			    c->run_ns, c->wait_ns);
		break;
	}
	case TRACE_EV_API: {
		const struct trace_api *a = &m->api.v[i];
		t(d, a->start, "api");
		range(d, a->start, a->end);
		strbuf_addf(sb, " pid=%u tid=%u domain=%s cbid=%u corr=%u status=%d", a->pid, a->tid,
			    a->domain == TRACE_API_DRIVER ? "driver" : "runtime", a->cbid,
			    a->correlation, a->status);
		q(sb, "name", model_str(m, a->name_id));
		break;
	}
	case TRACE_EV_KERNEL: {
		const struct trace_kernel *k = &m->kernels.v[i];
		t(d, k->start, "kernel");
		range(d, k->start, k->end);
		strbuf_addf(sb, " pid=%u device=%u context=%u stream=%u corr=%u grid=%u,%u,%u "
			    "block=%u,%u,%u regs=%u smem=%u+%u", k->pid, k->device, k->context,
			    k->stream, k->correlation, k->grid[0], k->grid[1], k->grid[2],
			    k->block[0], k->block[1], k->block[2], k->registers, k->static_smem,
			    k->dynamic_smem);
		if (k->graph_id)
			strbuf_addf(sb, " graph=%u", k->graph_id);
		if (k->flags & TRACE_GPU_COMM)
			strbuf_addstr(sb, " comm=1");
		q(sb, "name", model_str(m, k->name_id));
		break;
	}
	case TRACE_EV_MEMCPY: {
		const struct trace_memcpy *c = &m->memcpys.v[i];
		t(d, c->start, "memcpy");
		range(d, c->start, c->end);
		strbuf_addf(sb, " pid=%u device=%u context=%u stream=%u corr=%u kind=%s "
			    "bytes=%" PRIu64 " src=%s dst=%s async=%d", c->pid, c->device, c->context,
			    c->stream, c->correlation, trace_copy_kind_name(c->kind), c->bytes,
			    trace_mem_kind_name(c->src_kind), trace_mem_kind_name(c->dst_kind),
			    !!(c->flags & TRACE_GPU_ASYNC));
		break;
	}
	case TRACE_EV_MEMSET: {
		const struct trace_memset *s = &m->memsets.v[i];
		t(d, s->start, "memset");
		range(d, s->start, s->end);
		strbuf_addf(sb, " pid=%u device=%u context=%u stream=%u corr=%u bytes=%" PRIu64
			    " value=%u mem=%s async=%d", s->pid, s->device, s->context, s->stream,
			    s->correlation, s->bytes, s->value, trace_mem_kind_name(s->mem_kind),
			    !!(s->flags & TRACE_GPU_ASYNC));
		break;
	}
	case TRACE_EV_SYNC: {
		const struct trace_sync *s = &m->syncs.v[i];
		t(d, s->start, "sync");
		range(d, s->start, s->end);
		strbuf_addf(sb, " pid=%u device=%u context=%u stream=%u event=%u corr=%u type=%s",
			    s->pid, s->device, s->context, s->stream, s->event, s->correlation,
			    trace_sync_type_name(s->type));
		break;
	}
	case TRACE_EV_MEMORY: {
		const struct trace_memory *a = &m->memory.v[i];
		t(d, a->time, "memory");
		strbuf_addf(sb, " pid=%u device=%u op=%s bytes=%" PRIu64 " mem=%s corr=%u", a->pid,
			    a->device, a->op == TRACE_MEM_FREE ? "free" : "alloc", a->bytes,
			    trace_mem_kind_name(a->mem_kind), a->correlation);
		break;
	}
	case TRACE_EV_DEVICE: {
		const struct trace_device *v = &m->devices.v[i];
		t(d, 0, "device");
		strbuf_addf(sb, " id=%u sms=%u cc=%u.%u mem=%" PRIu64 " clock_khz=%u pci=%04x:%02x:%02x",
			    v->id, v->sm_count, v->cc_major, v->cc_minor, v->global_mem,
			    v->core_clock_khz, v->pci_domain, v->pci_bus, v->pci_device);
		q(sb, "name", model_str(m, v->name_id));
		break;
	}
	case TRACE_EV_METRIC: {
		const struct trace_metric *x = &m->metrics.v[i];
		t(d, x->time, "metric");
		if (x->device == UINT32_MAX)
			strbuf_addstr(sb, " device=host");
		else
			strbuf_addf(sb, " device=%u", x->device);
		q(sb, "name", model_str(m, x->name_id));
		strbuf_addf(sb, " value=%.6g", x->value);
		break;
	}
	case TRACE_EV_KMETRIC: {
		const struct trace_kmetric *x = &m->kmetrics.v[i];
		t(d, x->time, "kmetric");
		strbuf_addf(sb, " pid=%u tid=%u device=%u corr=%u instance=%u passes=%u cost=%" PRIu64, x->pid,
			    x->tid, x->device, x->correlation, x->instance, x->passes, x->cost_ns);
		q(sb, "key", model_str(m, x->key_id));
		if (x->flags & TRACE_KM_VALID)
			strbuf_addf(sb, " value=%.6g", x->value);
		else
			strbuf_addstr(sb, x->flags & TRACE_KM_UNAVAILABLE ? " value=unavailable" : " value=failed");
		q(sb, "metric", model_str(m, x->metric_id));
		q(sb, "kernel", model_str(m, x->kernel_id));
		break;
	}
	case TRACE_EV_TORCH_MEM: { /* PyTorch's allocator (docs/memory.md); unknown fields print - */
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		static const char *const kinds[] = { "-", "periodic", "step", "peak", "alloc" };
		t(d, x->time, "torch_mem");
		strbuf_addf(sb, " pid=%u device=%u kind=%s allocated=%" PRIu64, x->pid, x->device,
			    x->kind < ARRAY_SIZE(kinds) ? kinds[x->kind] : "-", x->allocated);
		if (x->flags & TRACE_TM_HAS_RESERVED)
			strbuf_addf(sb, " reserved=%" PRIu64, x->reserved);
		else
			strbuf_addstr(sb, " reserved=-");
		if (x->flags & TRACE_TM_HAS_ACTIVE)
			strbuf_addf(sb, " active=%" PRIu64 " inactive_split=%" PRIu64, x->active, x->inactive_split);
		else
			strbuf_addstr(sb, " active=- inactive_split=-");
		if (x->flags & TRACE_TM_HAS_PEAKS)
			strbuf_addf(sb, " allocated_peak=%" PRIu64 " reserved_peak=%" PRIu64, x->allocated_peak,
				    x->reserved_peak);
		else
			strbuf_addstr(sb, " allocated_peak=- reserved_peak=-");
		if (x->flags & TRACE_TM_HAS_COUNTS)
			strbuf_addf(sb, " allocs=%" PRIu64 " frees=%" PRIu64 " retries=%u ooms=%u segments=%u",
				    x->alloc_count, x->free_count, x->retries, x->ooms, x->segments);
		else
			strbuf_addstr(sb, " allocs=- frees=- retries=- ooms=- segments=-");
		if (x->flags & TRACE_TM_HAS_STEP)
			strbuf_addf(sb, " step=%u", x->step);
		else
			strbuf_addstr(sb, " step=-");
		if (x->delta)
			strbuf_addf(sb, " delta=%" PRId64, x->delta);
		break;
	}
	case TRACE_EV_OOM: {
		const struct trace_oom *x = &m->ooms.v[i];
		t(d, x->time, "oom");
		strbuf_addf(sb, " pid=%u device=%u kind=%s requested=%" PRIu64, x->pid, x->device,
			    (x->flags & TRACE_OOM_PEAK) ? "peak" : "oom", x->requested);
		if (x->flags & TRACE_OOM_HAS_DEVICE_FREE)
			strbuf_addf(sb, " free=%" PRIu64 " total=%" PRIu64, x->device_free, x->device_total);
		else
			strbuf_addstr(sb, " free=- total=-");
		if (x->flags & TRACE_OOM_HAS_STATS)
			strbuf_addf(sb, " allocated=%" PRIu64 " reserved=%" PRIu64 " inactive_split=%" PRIu64,
				    x->allocated, x->reserved, x->inactive_split);
		else
			strbuf_addstr(sb, " allocated=- reserved=- inactive_split=-");
		if (x->flags & TRACE_OOM_HAS_BLOCKS) {
			strbuf_addf(sb, " largest_free=%" PRIu64 " blocks=", x->largest_free);
			for (uint32_t k = 0; k < x->nblocks && k < TRACE_OOM_BLOCKS; k++)
				strbuf_addf(sb, "%s%" PRIu64, k ? "," : "", x->blocks[k]);
			if (!x->nblocks)
				strbuf_addch(sb, '-');
		} else {
			strbuf_addstr(sb, " largest_free=- blocks=-");
		}
		q(sb, "detail", model_str(m, x->detail_id));
		break;
	}
	case TRACE_EV_CAPTURE: {
		const struct trace_capture *c = &m->captures.v[i];
		t(d, c->time, "capture");
		strbuf_addf(sb, " pid=%u what=%s", c->pid,
			    c->what == TRACE_CAPTURE_START ? "start" : "stop");
		break;
	}
	default:
		BUG("dump of type %u", type);
	}
	strbuf_addch(sb, '\n');
}

struct key {
	uint64_t time;
	uint32_t type;
	uint32_t order;
	size_t idx;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static const unsigned dump_order[] = {
	TRACE_EV_PROCESS, TRACE_EV_DEVICE, TRACE_EV_NAME, TRACE_EV_THREAD,
	TRACE_EV_CAPTURE, TRACE_EV_NVTX_RANGE, TRACE_EV_NVTX_MARK, TRACE_EV_OSRT,
	TRACE_EV_CPU_SAMPLE, TRACE_EV_API, TRACE_EV_KERNEL, TRACE_EV_MEMCPY,
	TRACE_EV_MEMSET, TRACE_EV_SYNC, TRACE_EV_MEMORY, TRACE_EV_METRIC, TRACE_EV_KMETRIC,
	TRACE_EV_TORCH_MEM, TRACE_EV_OOM,
};

/*
 * Print the rows of @m whose time (the sort key) lies in [@lo, @hi), in
 * time order, ties in the type order of dump_order[], then in the model's
 * order.  @want (NULL: every type) picks the types.  0, or -1 when stdout
 * failed (checked by main too).
 */
static int dump_model(const struct model *m, const unsigned *want, uint64_t base, uint64_t lo,
		      uint64_t hi)
{
	struct dump_ctx d;
	struct key *keys = NULL;
	size_t nk = 0, ak = 0;

	for (unsigned o = 0; o < ARRAY_SIZE(dump_order); o++) {
		unsigned ty = dump_order[o];
		size_t n = 0;
		if (want && !want[ty])
			continue;
		switch (ty) {
		case TRACE_EV_PROCESS: n = m->procs.n; break;
		case TRACE_EV_DEVICE: n = m->devices.n; break;
		case TRACE_EV_NAME: n = m->names.n; break;
		case TRACE_EV_THREAD: n = m->threads.n; break;
		case TRACE_EV_CAPTURE: n = m->captures.n; break;
		case TRACE_EV_NVTX_RANGE: n = m->nvtx.n; break;
		case TRACE_EV_NVTX_MARK: n = m->marks.n; break;
		case TRACE_EV_OSRT: n = m->osrt.n; break;
		case TRACE_EV_CPU_SAMPLE: n = m->cpu.n; break;
		case TRACE_EV_API: n = m->api.n; break;
		case TRACE_EV_KERNEL: n = m->kernels.n; break;
		case TRACE_EV_MEMCPY: n = m->memcpys.n; break;
		case TRACE_EV_MEMSET: n = m->memsets.n; break;
		case TRACE_EV_SYNC: n = m->syncs.n; break;
		case TRACE_EV_MEMORY: n = m->memory.n; break;
		case TRACE_EV_METRIC: n = m->metrics.n; break;
		case TRACE_EV_KMETRIC: n = m->kmetrics.n; break;
		case TRACE_EV_TORCH_MEM: n = m->torch_mem.n; break;
		case TRACE_EV_OOM: n = m->ooms.n; break;
		}
		ALLOC_GROW(keys, nk + n, ak);
		for (size_t i = 0; i < n; i++) {
			uint64_t time = 0;
			switch (ty) {
			case TRACE_EV_PROCESS: time = m->procs.v[i].start_mono_ns; break;
			case TRACE_EV_THREAD: time = m->threads.v[i].first; break;
			case TRACE_EV_CAPTURE: time = m->captures.v[i].time; break;
			case TRACE_EV_NVTX_RANGE: time = m->nvtx.v[i].start; break;
			case TRACE_EV_NVTX_MARK: time = m->marks.v[i].time; break;
			case TRACE_EV_OSRT: time = m->osrt.v[i].start; break;
			case TRACE_EV_CPU_SAMPLE: time = m->cpu.v[i].time; break;
			case TRACE_EV_API: time = m->api.v[i].start; break;
			case TRACE_EV_KERNEL: time = m->kernels.v[i].start; break;
			case TRACE_EV_MEMCPY: time = m->memcpys.v[i].start; break;
			case TRACE_EV_MEMSET: time = m->memsets.v[i].start; break;
			case TRACE_EV_SYNC: time = m->syncs.v[i].start; break;
			case TRACE_EV_MEMORY: time = m->memory.v[i].time; break;
			case TRACE_EV_METRIC: time = m->metrics.v[i].time; break;
			case TRACE_EV_KMETRIC: time = m->kmetrics.v[i].time; break;
			case TRACE_EV_TORCH_MEM: time = m->torch_mem.v[i].time; break;
			case TRACE_EV_OOM: time = m->ooms.v[i].time; break;
			default: time = 0; break; /* devices and names come first */
			}
			if (time < lo || time >= hi)
				continue;
			keys[nk].time = time;
			keys[nk].type = ty;
			keys[nk].order = o;
			keys[nk].idx = i;
			nk++;
		}
	}
	/* a report with no events has no keys: qsort(NULL, 0) is undefined behaviour */
	if (nk)
		qsort(keys, nk, sizeof(*keys), cmp_key);
	d.m = m;
	d.base = base;
	memset(&d.sb, 0, sizeof(d.sb));
	for (size_t i = 0; i < nk; i++) {
		dump_one(&d, keys[i].type, keys[i].idx);
		if (d.sb.len > 1 << 16) {
			fwrite(d.sb.buf, 1, d.sb.len, stdout);
			strbuf_reset(&d.sb);
		}
	}
	if (d.sb.len)
		fwrite(d.sb.buf, 1, d.sb.len, stdout);
	strbuf_release(&d.sb);
	free(keys);
	return ferror(stdout) ? -1 : 0;
}

/*
 * ---- streaming a report in time slices (issue 19: a long run) ----
 *
 * A first streaming pass (a lean load that stores no timed row) finds what
 * every line needs from the whole report: its start (the times' origin),
 * each thread's first time (a thread's line is printed then) and how many
 * rows start when (a histogram).  The report is then read once per slice
 * of time, each slice holding about --slice-events rows: the loader's
 * window keeps the rows that overlap it, and the rows that start in it are
 * printed, in the order a whole load prints them.  Memory follows the
 * slice, not the report; each slice reads the whole file again.
 */

/* Rows per slice by default: about 250 MB of model (the loader's ~120 B a row, bench/RESULTS.md). */
#define DUMP_SLICE_EVENTS 2000000ull

struct thr_first {
	uint64_t key;   /* pid << 32 | tid; 0: empty slot */
	uint64_t first;
};

struct dump_scan {
	/* each thread's first time: open addressing, grown at half full */
	struct thr_first *thr;
	size_t nthr, athr;
	struct time_hist hist;     /* of row starts: slices cut at bucket edges */
	uint64_t t_min;   /* as model_finish(): the first start of the rows that count in the span */
};

static void scan_thread(struct dump_scan *ds, uint32_t pid, uint32_t tid, uint64_t t)
{
	size_t i;

	if (!tid)
		return;
	if (2 * (ds->nthr + 1) > ds->athr) {
		struct thr_first *old = ds->thr;
		size_t oa = ds->athr;
		ds->athr = oa ? 2 * oa : 1024;
		ds->thr = xcalloc(ds->athr, sizeof(*ds->thr));
		ds->nthr = 0;
		for (size_t k = 0; k < oa; k++)
			if (old[k].key)
				scan_thread(ds, (uint32_t)(old[k].key >> 32), (uint32_t)old[k].key, old[k].first);
		free(old);
	}
	{
		uint64_t key = (uint64_t)pid << 32 | tid;
		for (i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (ds->athr - 1); ds->thr[i].key;
		     i = (i + 1) & (ds->athr - 1)) {
			if (ds->thr[i].key == key) {
				/* as merge_threads(): the first nonzero time */
				if (t && (!ds->thr[i].first || t < ds->thr[i].first))
					ds->thr[i].first = t;
				return;
			}
		}
		ds->thr[i].key = key;
		ds->thr[i].first = t;
		ds->nthr++;
	}
}

static void scan_span(struct dump_scan *ds, uint64_t t)
{
	if (t && (!ds->t_min || t < ds->t_min))
		ds->t_min = t;
}

static void scan_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct dump_scan *ds = ctx;
	uint64_t t;

	(void)stream;
	memcpy(&t, rec, sizeof(t)); /* every timed record starts with its time or start */
	time_hist_add(&ds->hist, t);
	switch (type) {
	case TRACE_EV_NVTX_RANGE: {
		const struct trace_nvtx_range *r = rec;
		scan_span(ds, r->start);
		scan_thread(ds, r->pid, r->tid, r->start);
		break;
	}
	case TRACE_EV_NVTX_MARK: {
		const struct trace_nvtx_mark *k = rec;
		scan_span(ds, k->time);
		scan_thread(ds, k->pid, k->tid, k->time);
		break;
	}
	case TRACE_EV_OSRT: {
		const struct trace_osrt *o = rec;
		scan_span(ds, o->start);
		scan_thread(ds, o->pid, o->tid, o->start);
		break;
	}
	case TRACE_EV_CPU_SAMPLE: {
		const struct trace_cpu_sample *c = rec;
		scan_thread(ds, c->pid, c->tid, c->time);
		break;
	}
	case TRACE_EV_API: {
		const struct trace_api *a = rec;
		scan_span(ds, a->start);
		scan_thread(ds, a->pid, a->tid, a->start);
		break;
	}
	case TRACE_EV_KERNEL: case TRACE_EV_MEMCPY: case TRACE_EV_MEMSET: case TRACE_EV_SYNC:
	case TRACE_EV_MEMORY: case TRACE_EV_TORCH_MEM: case TRACE_EV_OOM:
		scan_span(ds, t); /* as model_finish(): GPU work, allocations and allocator events */
		break;
	default:
		break; /* samples, metrics, capture edges and kernel metrics are not in the span */
	}
}

/* The timed record types the first pass counts and does not store. */
#define DUMP_SCAN_TYPES                                                                         \
	((1u << TRACE_EV_NVTX_RANGE) | (1u << TRACE_EV_NVTX_MARK) | (1u << TRACE_EV_OSRT) |     \
	 (1u << TRACE_EV_CPU_SAMPLE) | (1u << TRACE_EV_API) | (1u << TRACE_EV_KERNEL) |         \
	 (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) | (1u << TRACE_EV_SYNC) |            \
	 (1u << TRACE_EV_MEMORY) | (1u << TRACE_EV_METRIC) | (1u << TRACE_EV_CAPTURE) |         \
	 (1u << TRACE_EV_KMETRIC) | (1u << TRACE_EV_TORCH_MEM) | (1u << TRACE_EV_OOM))

static uint64_t scan_thread_first(const struct dump_scan *ds, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;

	if (!ds->athr)
		return 0;
	for (size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (ds->athr - 1); ds->thr[i].key;
	     i = (i + 1) & (ds->athr - 1))
		if (ds->thr[i].key == key)
			return ds->thr[i].first;
	return 0;
}

static int cmp_thread_id(const void *pa, const void *pb)
{
	const struct model_thread *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/*
 * The thread rows of a whole load: @m0's (from the thread entries) with the
 * rows' first times merged in, and the threads only rows name added.
 */
static void scan_merge_threads(struct model *m0, const struct dump_scan *ds)
{
	size_t n0 = m0->threads.n;

	for (size_t i = 0; i < n0; i++) {
		struct model_thread *t = &m0->threads.v[i];
		uint64_t f = scan_thread_first(ds, t->pid, t->tid);
		if (f && (!t->first || f < t->first))
			t->first = f;
	}
	for (size_t k = 0; k < ds->athr; k++) {
		const struct thr_first *x = &ds->thr[k];
		struct model_thread key = { 0 }, *t;
		if (!x->key)
			continue;
		key.pid = (uint32_t)(x->key >> 32);
		key.tid = (uint32_t)x->key;
		if (n0 && bsearch(&key, m0->threads.v, n0, sizeof(key), cmp_thread_id))
			continue;
		t = MODEL_PUSH(m0->threads);
		*t = key;
		t->first = t->last = x->first;
	}
	if (m0->threads.n > 1)
		qsort(m0->threads.v, m0->threads.n, sizeof(m0->threads.v[0]), cmp_thread_id);
}

static void drop_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	(void)ctx;
	(void)stream;
	(void)type;
	(void)rec;
}

/*
 * dump_report_sliced - print report @path in slices of about @per rows
 * (above).  Returns 0, 1 when the report is small enough for one whole
 * load (nothing printed), or -1 after error().
 */
static int dump_report_sliced(const char *path, const unsigned *want, int absolute, uint64_t per)
{
	struct dump_scan *ds = xcalloc(1, sizeof(*ds));
	struct model_sink sink = { 0 };
	struct model m0;
	uint64_t base, a;
	size_t b = 0;
	int ret = 0;

	sink.types = DUMP_SCAN_TYPES;
	sink.ctx = ds;
	sink.row = scan_row;
	model_init(&m0);
	if (model_load_report_sink(&m0, path, &sink) < 0) {
		model_release(&m0);
		free(ds);
		return -1;
	}
	if (ds->hist.total <= per) {
		/* one slice: the whole load prints it as it always has */
		model_release(&m0);
		free(ds->thr);
		free(ds);
		return 1;
	}
	report_damage(&m0);
	scan_merge_threads(&m0, ds);
	base = absolute ? 0 : ds->t_min;
	/* slices cut at bucket edges once they hold @per rows; the first starts at 0, the last ends at infinity */
	a = 0;
	while (a != UINT64_MAX && !ret) {
		uint64_t hi;
		struct model m;
		struct model_sink w = { 0 };
		hi = time_hist_next_cut(&ds->hist, &b, per);
		model_init(&m);
		/* rows of the types --type leaves out pass to a sink that drops them: not stored */
		if (want) {
			for (unsigned t = 0; t < TRACE_EV__COUNT && t < 32; t++)
				if ((DUMP_SCAN_TYPES & (1u << t)) && !want[t])
					w.types |= 1u << t;
			w.row = drop_row;
		}
		w.window_lo = a;
		w.window_hi = hi == UINT64_MAX ? UINT64_MAX : hi - 1;
		if (model_load_report_sink(&m, path, &w) < 0) {
			ret = -1;
		} else {
			model_apply_gpu_facts(&m); /* as load_input() */
			/* the threads of the whole report, first seen where a whole load sees them */
			free(m.threads.v);
			m.threads.v = xmalloc((m0.threads.n + 1) * sizeof(*m.threads.v));
			memcpy(m.threads.v, m0.threads.v, m0.threads.n * sizeof(*m.threads.v));
			m.threads.n = m.threads.alloc = m0.threads.n;
			if (dump_model(&m, want, base, a, hi) < 0)
				ret = -1;
		}
		model_release(&m);
		a = hi;
	}
	model_release(&m0);
	free(ds->thr);
	free(ds);
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	unsigned want[TRACE_EV__COUNT] = { 0 };
	int any_type = 0, absolute = 0, c, sliced = 1;
	uint64_t per = DUMP_SLICE_EVENTS;
	struct model m;
	struct opt_iter it;

	opt_iter_init(&it, &cli_dump, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 't': {
			char *list = xstrdup(it.arg), *save = NULL, *tok;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int ty = trace_event_type_by_name(tok);
				if (ty < 0 || ty == TRACE_EV_STRING || ty == TRACE_EV_NVTX_END ||
				    ty == TRACE_EV_DROPS || ty == TRACE_EV_WARNING) {
					int ret = usage_error(dump_usage, "unknown event type '%s' (types: %s)",
							      tok, dump_types);
					free(list);
					return ret;
				}
				want[ty] = 1;
				any_type = 1;
			}
			free(list);
			break;
		}
		case 'a': absolute = 1; break;
		case 'S': {
			char *e;
			unsigned long long v = strtoull(it.arg, &e, 10);
			if (*e || !*it.arg || !v || it.arg[0] == '-')
				return usage_error(dump_usage, "bad --slice-events '%s' (a count above 0)", it.arg);
			per = v;
			break;
		}
		default: return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return usage_error(dump_usage, optind < argc ? "too many arguments" : "no report given");
	if (trace_is_report(argv[optind]) == 1) {
		int r = dump_report_sliced(argv[optind], any_type ? want : NULL, absolute, per);
		if (r < 0)
			return EXIT_USAGE;
		sliced = r == 0;
	} else {
		sliced = 0;
	}
	if (sliced)
		return EXIT_OK;
	model_init(&m);
	if (load_input(&m, argv[optind]) < 0) {
		model_release(&m);
		return EXIT_USAGE;
	}
	report_damage(&m);
	dump_model(&m, any_type ? want : NULL, absolute ? 0 : m.t_min, 0, UINT64_MAX);
	model_release(&m);
	return EXIT_OK;
}
