/*
 * cmd_info.c - `gpuscope info REPORT`: what a report holds.
 */
#include "commands.h"
#include "../import/import.h"
#include "../model/device_facts.h"

#include <inttypes.h>
#include <string.h>

static const char info_usage[] = "gpuscope info [--format text|json] REPORT";

static const struct cli_opt info_opts[] = {
	{ "format", 'f', 'f', ARG_REQUIRED, "FMT", "text (default) or json", "text json", 0 },
	{ NULL },
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

static size_t fill_counts(const struct model *m, struct count_row *rows)
{
	size_t k = 0;
#define ROW(label, table) rows[k].name = label; rows[k].n = m->table.n; k++
	ROW("threads", threads);
	ROW("devices", devices);
	ROW("nvtx ranges", nvtx);
	ROW("nvtx marks", marks);
	ROW("os runtime calls", osrt);
	ROW("cpu samples", cpu);
	ROW("cuda api calls", api);
	ROW("kernels", kernels);
	ROW("memcpys", memcpys);
	ROW("memsets", memsets);
	ROW("syncs", syncs);
	ROW("memory allocs/frees", memory);
	ROW("gpu metric samples", metrics);
	ROW("capture edges", captures);
#undef ROW
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

static void print_text(const struct model *m)
{
	struct count_row rows[32];
	size_t nrows = fill_counts(m, rows);
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

static void print_json(const struct model *m)
{
	struct count_row rows[32];
	size_t nrows = fill_counts(m, rows);
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
	strbuf_addstr(&sb, "},\"warnings\":[");
	for (size_t i = 0; i < m->nr_warnings; i++) {
		strbuf_addstr(&sb, i ? ",\"" : "\"");
		strbuf_add_json_str(&sb, m->warnings[i]);
		strbuf_addch(&sb, '"');
	}
	strbuf_addstr(&sb, "]}\n");
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
}

int cmd_info(int argc, char **argv)
{
	const char *format = "text";
	struct opt_iter it;
	struct model m;
	int c, first;

	opt_iter_init(&it, &cli_info, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'f': format = it.arg; break;
		default: return c == OPT_HELP ? EXIT_OK : EXIT_USAGE;
		}
	}
	first = it.ind;
	if (strcmp(format, "text") && strcmp(format, "json"))
		return usage_error(info_usage, "unknown format '%s'", format);
	if (first != argc - 1)
		return usage_error(info_usage, first < argc ? "too many arguments" : "no report given");
	model_init(&m);
	if (load_input(&m, argv[first]) < 0) {
		model_release(&m);
		return EXIT_USAGE;
	}
	if (!strcmp(format, "json"))
		print_json(&m);
	else
		print_text(&m);
	model_release(&m);
	return EXIT_OK;
}
