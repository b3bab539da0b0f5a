/*
 * cmd_info.c - `gpuscope info REPORT`: what a report holds.
 */
#include "commands.h"
#include "captures.h"
#include "../import/import.h"
#include "../model/device_facts.h"
#include "../trace/trace.h"

#include <stdlib.h>

#include <inttypes.h>
#include <string.h>

static const char info_usage[] = "gpuscope info [--format text|json] REPORT";

static const struct cli_opt info_opts[] = {
	{ "format", 'f', 'f', ARG_REQUIRED, "FMT", "text (default) or json", "text json", OPT_CHOICE },
	CMD_OPT_NO_PROGRESS,
	{ 0 },
};

const struct cli_cmd cli_info = {
	.name = "info",
	.synopsis = info_usage,
	.summary = "what a report holds: processes, threads, counts, drops, warnings",
	.description = "What a report (or a Kineto trace, or an nsys SQLite export) holds: its "
		       "processes, threads and devices, the count of every kind of event, what was "
		       "dropped, and the warnings the recording or the reader left.",
	.opts = info_opts,
	.example = "gpuscope info run.gpuscope\ngpuscope info --format json trace.json",
	.args = "<file>",
};

struct count_row {
	const char *name;
	size_t n;
};

/*
 * Streaming `info` (issue 19: 1.88 GB to describe a 104 MB report).  The
 * bulk record types of a long run (CUDA calls, kernels, copies, syncs, OS
 * runtime calls, CPU samples, NVTX marks, allocations) are counted as they
 * pass through the loader's sink and never stored, so the memory `info`
 * needs does not grow with them.  What `info` prints from them is kept
 * beside the counts: the threads they name (one slot per thread), the span
 * of the record types that have no end (marks, allocations; the loader
 * keeps the span of the others), and one kernel row per process, which
 * model_finish() needs to number GPU metrics by CUDA device; NVTX ranges
 * are counted too, but for the start/end ranges still open when written,
 * which are kept (40 bytes each) to be joined with their ends.  GPU
 * metrics (a few per second per GPU), devices, names, strings and warnings
 * are still loaded as before.
 */
#define INFO_SINK_TYPES ((1u << TRACE_EV_OSRT) | (1u << TRACE_EV_CPU_SAMPLE) | (1u << TRACE_EV_API) | \
			 (1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) | \
			 (1u << TRACE_EV_SYNC) | (1u << TRACE_EV_MEMORY) | (1u << TRACE_EV_NVTX_MARK) | \
			 (1u << TRACE_EV_NVTX_RANGE) | (1u << TRACE_EV_NVTX_END))

/*
 * A start/end NVTX range is written open (end 0) and ended by an NVTX_END
 * entry of the same stream and range id: `info` keeps only these (and the
 * ends) to join them as the loader does (join_nvtx_ends() in model.c: each
 * open start, in file order, takes the first unused end of its key).
 */
struct info_open_range {
	uint64_t key;                 /* stream << 44 ^ range id, as the loader's */
	uint64_t start, end;
	uint32_t pid, tid;
};

struct info_end {
	uint64_t key, end;
	size_t idx;                   /* file order, for a stable sort */
	int used;
};

struct info_thread {
	uint32_t pid, tid;
	uint64_t first, last;
};

struct info_sink {
	struct model *m;
	uint64_t count[TRACE_EV__COUNT];
	struct info_thread *threads;  /* open addressing on (pid, tid); tid 0 = empty */
	size_t nthreads, cap;
	uint64_t t_min, t_max;        /* marks, allocations, ends of start/end ranges */
	MODEL_TABLE(struct trace_kernel) kernel_pids; /* the first kernel of each pid */
	MODEL_TABLE(struct info_open_range) open;
	MODEL_TABLE(struct info_end) ends;
	uint64_t nvtx_open;
};

static size_t thread_slot(const struct info_sink *is, uint32_t pid, uint32_t tid)
{
	size_t h = ((size_t)pid * 2654435761u ^ tid * 40503u) & (is->cap - 1);

	while (is->threads[h].tid && (is->threads[h].pid != pid || is->threads[h].tid != tid))
		h = (h + 1) & (is->cap - 1);
	return h;
}

/* As model_finish()'s see_thread(): a thread row for (pid, tid), seen from @a to @b. */
static void info_see_thread(struct info_sink *is, uint32_t pid, uint32_t tid, uint64_t a, uint64_t b)
{
	struct info_thread *t;

	if (!tid)
		return;
	if (2 * (is->nthreads + 1) > is->cap) {
		struct info_thread *old = is->threads;
		size_t ocap = is->cap;
		is->cap = ocap ? 2 * ocap : 256;
		is->threads = xcalloc(is->cap, sizeof(*is->threads));
		for (size_t i = 0; i < ocap; i++)
			if (old[i].tid)
				is->threads[thread_slot(is, old[i].pid, old[i].tid)] = old[i];
		free(old);
	}
	t = &is->threads[thread_slot(is, pid, tid)];
	if (!b)
		b = a;
	if (!t->tid) {
		t->pid = pid;
		t->tid = tid;
		t->first = a;
		t->last = b;
		is->nthreads++;
		return;
	}
	if (a && (!t->first || a < t->first))
		t->first = a;
	if (b > t->last)
		t->last = b;
}

/* As model_finish()'s span() for the record types without an end. */
static void info_span(struct info_sink *is, uint64_t a)
{
	if (a && (!is->t_min || a < is->t_min))
		is->t_min = a;
	if (a > is->t_max)
		is->t_max = a;
}

static void info_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct info_sink *is = ctx;

	is->count[type]++;
	switch (type) {
	case TRACE_EV_OSRT: {
		const struct trace_osrt *o = rec;
		info_see_thread(is, o->pid, o->tid, o->start, o->end);
		break;
	}
	case TRACE_EV_CPU_SAMPLE: {
		const struct trace_cpu_sample *c = rec;
		info_see_thread(is, c->pid, c->tid, c->time, 0);
		break;
	}
	case TRACE_EV_API: {
		const struct trace_api *a = rec;
		info_see_thread(is, a->pid, a->tid, a->start, a->end);
		break;
	}
	case TRACE_EV_NVTX_MARK: {
		const struct trace_nvtx_mark *k = rec;
		info_span(is, k->time);
		info_see_thread(is, k->pid, k->tid, k->time, 0);
		break;
	}
	case TRACE_EV_MEMORY:
		info_span(is, ((const struct trace_memory *)rec)->time);
		break;
	case TRACE_EV_NVTX_RANGE: {
		const struct trace_nvtx_range *r = rec;
		if (r->kind == TRACE_NVTX_STARTEND && !r->end) {
			struct info_open_range *o = MODEL_PUSH(is->open);
			o->key = ((uint64_t)stream << 44) ^ r->range_id;
			o->start = r->start;
			o->end = 0;
			o->pid = r->pid;
			o->tid = r->tid;
			break;
		}
		if (!r->end)
			is->nvtx_open++;
		info_see_thread(is, r->pid, r->tid, r->start, r->end);
		break;
	}
	case TRACE_EV_NVTX_END: {
		const struct trace_nvtx_end *e = rec;
		struct info_end *ie = MODEL_PUSH(is->ends);
		is->count[type]--; /* not a range of its own */
		ie->key = ((uint64_t)stream << 44) ^ e->range_id;
		ie->end = e->end;
		ie->idx = is->ends.n - 1;
		ie->used = 0;
		break;
	}
	case TRACE_EV_KERNEL: {
		const struct trace_kernel *k = rec;
		size_t i;
		for (i = 0; i < is->kernel_pids.n; i++)
			if (is->kernel_pids.v[i].pid == k->pid)
				break;
		if (i == is->kernel_pids.n) {
			struct trace_kernel *kp = MODEL_PUSH(is->kernel_pids);
			*kp = *k;
			kp->name_id = kp->mangled_id = 0; /* stream-local ids: not used */
		}
		break;
	}
	}
}

static int cmp_info_end(const void *pa, const void *pb)
{
	const struct info_end *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Join the open start/end ranges with their ends; then count them as the loader's rows. */
static void info_join(struct info_sink *is)
{
	if (is->ends.n)
		qsort(is->ends.v, is->ends.n, sizeof(*is->ends.v), cmp_info_end);
	for (size_t i = 0; i < is->open.n; i++) {
		struct info_open_range *o = &is->open.v[i];
		size_t lo = 0, hi = is->ends.n;
		/* the first end of the key, then the first unused one */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (is->ends.v[mid].key < o->key)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo < is->ends.n && is->ends.v[lo].key == o->key && is->ends.v[lo].used)
			lo++;
		if (lo < is->ends.n && is->ends.v[lo].key == o->key) {
			o->end = is->ends.v[lo].end;
			is->ends.v[lo].used = 1;
			info_span(is, o->end);
		} else {
			is->nvtx_open++;
		}
		info_see_thread(is, o->pid, o->tid, o->start, o->end);
	}
}

/* Called by the loader before model_finish(): hand it the threads and kernel pids. */
static void info_strings(void *ctx, const struct model_strmap *map)
{
	struct info_sink *is = ctx;
	struct model *m = is->m;

	info_join(is);

	for (size_t i = 0; i < is->cap; i++) {
		struct model_thread *t;
		if (!is->threads[i].tid)
			continue;
		t = MODEL_PUSH(m->threads);
		t->pid = is->threads[i].pid;
		t->tid = is->threads[i].tid;
		t->first = is->threads[i].first;
		t->last = is->threads[i].last;
	}
	for (size_t i = 0; i < is->kernel_pids.n; i++)
		*MODEL_PUSH(m->kernels) = is->kernel_pids.v[i];
	(void)map;
}

/*
 * After a report loaded through the sink of @is (counting the bulk rows,
 * see above): the span of the rows without an end, and what the sink kept
 * for model_finish() only dropped.
 */
static void info_loaded(struct model *m, struct info_sink *is)
{
	/* the representative kernels were for model_finish() only */
	m->kernels.n = 0;
	m->nvtx_open = is->nvtx_open;
	if (is->t_min && (!m->t_min || is->t_min < m->t_min))
		m->t_min = is->t_min;
	if (is->t_max > m->t_max)
		m->t_max = is->t_max;
}

/* Rows of a table: the sink's count where the sink took them. */
static size_t rows_of(const struct info_sink *is, unsigned type, size_t stored)
{
	return is && (INFO_SINK_TYPES & (1u << type)) ? (size_t)is->count[type] : stored;
}

static size_t fill_counts(const struct model *m, const struct info_sink *is, struct count_row *rows)
{
	size_t k = 0;
#define ROW(label, table) rows[k].name = label; rows[k].n = m->table.n; k++
#define SROW(label, table, type) rows[k].name = label; rows[k].n = rows_of(is, type, m->table.n); k++
	ROW("threads", threads);
	ROW("devices", devices);
	SROW("nvtx ranges", nvtx, TRACE_EV_NVTX_RANGE);
	SROW("nvtx marks", marks, TRACE_EV_NVTX_MARK);
	SROW("os runtime calls", osrt, TRACE_EV_OSRT);
	SROW("cpu samples", cpu, TRACE_EV_CPU_SAMPLE);
	SROW("cuda api calls", api, TRACE_EV_API);
	SROW("kernels", kernels, TRACE_EV_KERNEL);
	SROW("memcpys", memcpys, TRACE_EV_MEMCPY);
	SROW("memsets", memsets, TRACE_EV_MEMSET);
	SROW("syncs", syncs, TRACE_EV_SYNC);
	SROW("memory allocs/frees", memory, TRACE_EV_MEMORY);
	ROW("gpu metric samples", metrics);
	ROW("capture edges", captures);
#undef ROW
#undef SROW
	return k;
}

/* The facts of a device row that `info` shows, with their JSON and text names. */
static const struct {
	const char *json, *text;
} facts[MODEL_FACT__COUNT] = {
	[MODEL_FACT_NAME] = { "name", "name" },
	[MODEL_FACT_SMS] = { "sm_count", "SMs" },
	[MODEL_FACT_CC] = { "cc", "cc" },
	[MODEL_FACT_MEMORY] = { "memory", "memory" },
};

/*
 * Where fact @f of device @d came from: "recorded", "table: ROW" (filled
 * from the GPU table by load_input()), or "-: REASON" (device_facts.h).
 */
static const char *fact_source(const struct model *m, const struct trace_device *d, enum model_fact f)
{
	return model_fact_source(m, d, f);
}

static void print_device_text(const struct model *m, const struct trace_device *d)
{
	char b1[64];
	int done[MODEL_FACT__COUNT] = { 0 };

	printf("  gpu %u: ", d->id);
	printf("%s, ", d->name_id ? model_str(m, d->name_id) : "-");
	if (d->sm_count)
		printf("%u SMs, ", d->sm_count);
	else
		printf("- SMs, ");
	if (d->cc_major)
		printf("cc %u.%u, ", d->cc_major, d->cc_minor);
	else
		printf("cc -, ");
	if (d->global_mem)
		printf("%s", fmt_bytes(b1, sizeof(b1), (double)d->global_mem));
	else
		printf("- memory");
	if (d->pid)
		printf(" (pid %u)", d->pid);
	printf("\n");
	/* one line per source, naming the facts that came from it */
	for (int f = 0; f < MODEL_FACT__COUNT; f++) {
		const char *src = fact_source(m, d, f);
		if (done[f])
			continue;
		printf("    source of %s", facts[f].text);
		for (int g = f + 1; g < MODEL_FACT__COUNT; g++)
			if (!done[g] && !strcmp(fact_source(m, d, g), src)) {
				printf(", %s", facts[g].text);
				done[g] = 1;
			}
		printf(": %s\n", src);
	}
}

/*
 * The captures (captures.h), times from the report's start: number,
 * trigger, start, length ("-" while never closed), the ring written before
 * it ("-": none), and how many processes took part.  `analyze --capture K`
 * loads one.
 */
static void print_captures_text(const struct model *m)
{
	struct capture *c;
	size_t n = captures_of(m, &c);
	char b1[64], b2[64], b3[64];

	if (n)
		printf("captures: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		double start = c[i].start > m->t_min ? (double)(c[i].start - m->t_min) : 0;
		printf("  %zu  %-15s start %s  length %s  ring %s  processes %zu\n", i + 1,
		       capture_trigger_name(c[i].trigger), fmt_duration(b1, sizeof(b1), start),
		       c[i].stop >= c[i].start ? fmt_duration(b2, sizeof(b2), (double)(c[i].stop - c[i].start))
					       : "-",
		       c[i].ring_from && c[i].ring_from < c[i].start
			       ? fmt_duration(b3, sizeof(b3), (double)(c[i].start - c[i].ring_from)) : "-",
		       c[i].nprocs);
	}
	free(c);
}

static void print_json_captures(struct strbuf *sb, const struct model *m)
{
	struct capture *c;
	size_t n = captures_of(m, &c);

	strbuf_addstr(sb, ",\"captures\":[");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s{\"id\":%zu,\"trigger\":\"%s\",\"start\":%" PRIu64 ",\"stop\":%" PRIu64
			    ",\"ring_from\":%" PRIu64 ",\"processes\":%zu}", i ? "," : "", i + 1,
			    capture_trigger_name(c[i].trigger), c[i].start, c[i].stop, c[i].ring_from,
			    c[i].nprocs);
	strbuf_addch(sb, ']');
	free(c);
}

static void print_text(const struct model *m, const struct info_sink *is)
{
	struct count_row rows[32];
	size_t nrows = fill_counts(m, is, rows);
	char b1[64];
	uint64_t total_drops = 0;

	printf("report:   %s\n", m->path ? m->path : "-");
	printf("format:   %s\n", m->format);
	if (m->t_max > m->t_min)
		printf("span:     %s\n", fmt_duration(b1, sizeof(b1), (double)(m->t_max - m->t_min)));
	else
		printf("span:     -\n");
	printf("events:   %" PRIu64 "\n", m->events);
	printf("processes: %zu\n", m->procs.n);
	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		printf("  pid %u (parent %u)%s: %s\n", p->pid, p->ppid,
		       p->ended ? "" : " [did not finish cleanly]", model_str(m, p->cmdline_id));
	}
	printf("threads:  %zu\n", m->threads.n);
	for (size_t i = 0; i < m->threads.n; i++) {
		const struct model_thread *t = &m->threads.v[i];
		printf("  pid %u tid %u  %s\n", t->pid, t->tid,
		       t->name_id ? model_str(m, t->name_id) : "-");
	}
	if (m->devices.n) {
		printf("devices:  %zu\n", m->devices.n);
		for (size_t i = 0; i < m->devices.n; i++)
			print_device_text(m, &m->devices.v[i]);
	}
	printf("counts:\n");
	for (size_t i = 0; i < nrows; i++)
		if (strcmp(rows[i].name, "threads") && strcmp(rows[i].name, "devices"))
			printf("  %-20s %zu\n", rows[i].name, rows[i].n);
	if (m->nvtx_open)
		printf("  %-20s %" PRIu64 "\n", "nvtx ranges open", m->nvtx_open);
	print_captures_text(m);
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++)
		total_drops += m->drops[d];
	printf("dropped:  %" PRIu64 "\n", total_drops);
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++)
		if (m->drops[d])
			printf("  %-20s %" PRIu64 "\n", trace_drop_source_name(d), m->drops[d]);
	printf("warnings: %zu\n", m->nr_warnings);
	for (size_t i = 0; i < m->nr_warnings; i++)
		printf("  %s\n", m->warnings[i]);
}

static void print_json(const struct model *m, const struct info_sink *is)
{
	struct count_row rows[32];
	size_t nrows = fill_counts(m, is, rows);
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "{\"report\":\"");
	strbuf_add_json_str(&sb, m->path ? m->path : "");
	strbuf_addf(&sb, "\",\"format\":\"%s\",\"t_min_ns\":%" PRIu64 ",\"t_max_ns\":%" PRIu64
		    ",\"events\":%" PRIu64 ",\"processes\":[", m->format, m->t_min, m->t_max,
		    m->events);
	for (size_t i = 0; i < m->procs.n; i++) {
		const struct model_process *p = &m->procs.v[i];
		strbuf_addf(&sb, "%s{\"pid\":%u,\"ppid\":%u,\"ended\":%s,\"cmdline\":\"", i ? "," : "",
			    p->pid, p->ppid, p->ended ? "true" : "false");
		strbuf_add_json_str(&sb, model_str(m, p->cmdline_id));
		strbuf_addstr(&sb, "\"}");
	}
	strbuf_addstr(&sb, "],\"threads\":[");
	for (size_t i = 0; i < m->threads.n; i++) {
		const struct model_thread *t = &m->threads.v[i];
		strbuf_addf(&sb, "%s{\"pid\":%u,\"tid\":%u,\"name\":\"", i ? "," : "", t->pid, t->tid);
		strbuf_add_json_str(&sb, model_str(m, t->name_id));
		strbuf_addstr(&sb, "\"}");
	}
	strbuf_addstr(&sb, "],\"devices\":[");
	for (size_t i = 0; i < m->devices.n; i++) {
		const struct trace_device *d = &m->devices.v[i];
		strbuf_addf(&sb, "%s{\"id\":%u,\"pid\":%u,\"name\":", i ? "," : "", d->id, d->pid);
		if (d->name_id) {
			strbuf_addch(&sb, '"');
			strbuf_add_json_str(&sb, model_str(m, d->name_id));
			strbuf_addch(&sb, '"');
		} else {
			strbuf_addstr(&sb, "null");
		}
		if (d->sm_count)
			strbuf_addf(&sb, ",\"sm_count\":%u", d->sm_count);
		else
			strbuf_addstr(&sb, ",\"sm_count\":null");
		if (d->cc_major)
			strbuf_addf(&sb, ",\"cc_major\":%u,\"cc_minor\":%u", d->cc_major, d->cc_minor);
		else
			strbuf_addstr(&sb, ",\"cc_major\":null,\"cc_minor\":null");
		if (d->global_mem)
			strbuf_addf(&sb, ",\"memory_bytes\":%" PRIu64, d->global_mem);
		else
			strbuf_addstr(&sb, ",\"memory_bytes\":null");
		for (int f = 0; f < MODEL_FACT__COUNT; f++) {
			strbuf_addf(&sb, ",\"%s_source\":\"", facts[f].json);
			strbuf_add_json_str(&sb, fact_source(m, d, f));
			strbuf_addch(&sb, '"');
		}
		strbuf_addch(&sb, '}');
	}
	strbuf_addstr(&sb, "],\"counts\":{");
	for (size_t i = 0; i < nrows; i++)
		strbuf_addf(&sb, "%s\"%s\":%zu", i ? "," : "", rows[i].name, rows[i].n);
	strbuf_addf(&sb, "},\"nvtx_open\":%" PRIu64 ",\"drops\":{", m->nvtx_open);
	for (unsigned d = 1; d < TRACE_DROP__COUNT; d++)
		strbuf_addf(&sb, "%s\"%s\":%" PRIu64, d > 1 ? "," : "", trace_drop_source_name(d),
			    m->drops[d]);
	strbuf_addch(&sb, '}');
	print_json_captures(&sb, m);
	strbuf_addstr(&sb, ",\"warnings\":[");
	for (size_t i = 0; i < m->nr_warnings; i++) {
		strbuf_addstr(&sb, i ? ",\"" : "\"");
		strbuf_add_json_str(&sb, m->warnings[i]);
		strbuf_addch(&sb, '"');
	}
	strbuf_addstr(&sb, "]}\n");
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
}

struct info_args {
	int json;
	struct info_sink is;
	struct model_sink sink;
};

static void info_args_free(void *priv)
{
	struct info_args *a = priv;

	free(a->is.threads);
	free(a->is.kernel_pids.v);
	free(a->is.open.v);
	free(a->is.ends.v);
	free(a);
}

int cmd_info_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct info_args *a = xcalloc(1, sizeof(*a));
	struct opt_iter it;
	int c;

	s->priv = a;
	s->priv_free = info_args_free;
	opt_iter_init(&it, &cli_info, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'f': a->json = !strcmp(it.arg, "json"); break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (it.ind != argc - 1)
		return usage_error(info_usage, it.ind < argc ? "too many arguments" : "no report given");
	s->input = argv[it.ind];
	a->is.m = &s->m;
	/* a gpuscope report streams its bulk rows through the counting sink */
	a->sink = (struct model_sink){ INFO_SINK_TYPES, &a->is, info_row, info_strings, NULL, 0, 0, 0 };
	s->load.sink = &a->sink;
	return CMD_RUN;
}

int cmd_info_run(struct cmd_setup *s)
{
	struct info_args *a = s->priv;
	struct info_sink *is = s->load.sunk ? &a->is : NULL;

	if (is)
		info_loaded(&s->m, is);
	if (a->json)
		print_json(&s->m, is);
	else
		print_text(&s->m, is);
	return EXIT_OK;
}
