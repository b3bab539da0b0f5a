/*
 * chrome.c - Chrome trace-event JSON with the tracks of the Perfetto export.
 *
 * Slices are complete ("X") events; a process is a JSON process, a GPU a
 * pseudo-process (pid 0x40000000 + device), a further lane or a stream a
 * pseudo-thread.  Times are microseconds with three decimals relative to the
 * first event (otherData.baseTimeNanoseconds is the absolute start), so no
 * precision is lost.  Flows use the v2 form (bind_id with flow_out on the
 * launch, flow_in on the GPU operation), which binds to the event's own
 * slice.  Counters are "C" events of the process that owns the track.
 */
#include "internal.h"

#include <stdlib.h>

struct cj {
	const struct model *m;
	struct lay *l;
	struct xout *o;
	unsigned char *plain;   /* per model string: 0 unknown, 1 no escaping needed, 2 needs it */
	uint64_t base;
	int first;
	struct progress prog;
};

static void name_str(struct cj *c, uint32_t sid, const char *fallback)
{
	const struct model *m = c->m;

	if (!sid && fallback) {
		xout_json_str(c->o, fallback);
		return;
	}
	if (!c->plain[sid]) {
		const unsigned char *p = (const unsigned char *)model_str(m, sid);
		c->plain[sid] = 1;
		for (; *p; p++)
			if (*p < 0x20 || *p == '"' || *p == '\\' || *p == 0x7f) {
				c->plain[sid] = 2;
				break;
			}
	}
	if (c->plain[sid] == 2) {
		xout_json_str(c->o, model_str(m, sid));
	} else {
		xout_ch(c->o, '"');
		xout_write(c->o, m->str.str[sid], m->str.len[sid]);
		xout_ch(c->o, '"');
	}
}

static void sep(struct cj *c)
{
	if (c->first)
		c->first = 0;
	else
		xout_write(c->o, ",\n", 2);
}

static void track_ids(struct cj *c, uint32_t t)
{
	xout_write(c->o, ",\"pid\":", 7);
	xout_u64(c->o, c->l->tracks[t].json_pid);
	xout_write(c->o, ",\"tid\":", 7);
	xout_u64(c->o, c->l->tracks[t].json_tid);
}

static void metadata(struct cj *c)
{
	struct lay *l = c->l;

	for (size_t i = 0; i < l->ntracks; i++) {
		const struct lay_track *t = &l->tracks[i];
		if (t->kind == LT_PROCESS || t->kind == LT_GPU) {
			sep(c);
			xout_printf(c->o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":",
				    t->json_pid);
			xout_json_str(c->o, t->name);
			xout_str(c->o, "}}");
			sep(c);
			xout_printf(c->o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":0,"
					  "\"args\":{\"sort_index\":%d}}",
				    t->json_pid, t->kind == LT_GPU ? 1000000 + t->rank : t->rank);
		} else if (t->kind == LT_THREAD || t->kind == LT_LANE || t->kind == LT_STREAM) {
			sep(c);
			xout_printf(c->o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
				    t->json_pid, t->json_tid);
			xout_json_str(c->o, t->name);
			xout_str(c->o, "}}");
			sep(c);
			xout_printf(c->o, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
					  "\"args\":{\"sort_index\":%d}}",
				    t->json_pid, t->json_tid, t->rank);
		}
	}
}

static void dim3(struct xout *o, const uint32_t d[3])
{
	xout_ch(o, '[');
	xout_u64(o, d[0]);
	xout_ch(o, ',');
	xout_u64(o, d[1]);
	xout_ch(o, ',');
	xout_u64(o, d[2]);
	xout_ch(o, ']');
}

static void args(struct cj *c, int src, size_t row)
{
	const struct model *m = c->m;
	struct xout *o = c->o;

	switch (src) {
	case SRC_API:
		xout_str(o, ",\"args\":{\"correlation\":");
		xout_u64(o, m->api.v[row].correlation);
		if (m->api.v[row].status) {
			xout_str(o, ",\"status\":");
			xout_i64(o, m->api.v[row].status);
		}
		xout_ch(o, '}');
		break;
	case SRC_OSRT:
		xout_str(o, ",\"args\":{\"result\":");
		xout_i64(o, m->osrt.v[row].result);
		if (m->osrt.v[row].arg != -1) {
			xout_str(o, ",\"arg\":");
			xout_i64(o, m->osrt.v[row].arg);
		}
		if (m->osrt.v[row].err) {
			xout_str(o, ",\"errno\":");
			xout_i64(o, m->osrt.v[row].err);
		}
		xout_ch(o, '}');
		break;
	case SRC_NVTX:
		if (m->nvtx.v[row].domain_id) {
			xout_str(o, ",\"args\":{\"domain\":");
			xout_json_str(o, model_str(m, m->nvtx.v[row].domain_id));
			xout_ch(o, '}');
		}
		break;
	case SRC_KERNEL: {
		const struct trace_kernel *k = &m->kernels.v[row];
		xout_str(o, ",\"args\":{\"correlation\":");
		xout_u64(o, k->correlation);
		xout_str(o, ",\"device\":");
		xout_u64(o, k->device);
		xout_str(o, ",\"stream\":");
		xout_u64(o, k->stream);
		xout_str(o, ",\"grid\":");
		dim3(o, k->grid);
		xout_str(o, ",\"block\":");
		dim3(o, k->block);
		xout_str(o, ",\"registers per thread\":");
		xout_u64(o, k->registers);
		xout_str(o, ",\"shared memory\":");
		xout_u64(o, (uint64_t)k->static_smem + k->dynamic_smem);
		xout_ch(o, '}');
		break;
	}
	case SRC_MEMCPY:
		xout_str(o, ",\"args\":{\"correlation\":");
		xout_u64(o, m->memcpys.v[row].correlation);
		xout_str(o, ",\"bytes\":");
		xout_u64(o, m->memcpys.v[row].bytes);
		xout_ch(o, '}');
		break;
	case SRC_MEMSET:
		xout_str(o, ",\"args\":{\"correlation\":");
		xout_u64(o, m->memsets.v[row].correlation);
		xout_str(o, ",\"bytes\":");
		xout_u64(o, m->memsets.v[row].bytes);
		xout_ch(o, '}');
		break;
	case SRC_SYNC:
		xout_str(o, ",\"args\":{\"correlation\":");
		xout_u64(o, m->syncs.v[row].correlation);
		xout_str(o, ",\"stream\":");
		xout_u64(o, m->syncs.v[row].stream);
		xout_ch(o, '}');
		break;
	}
}

static void flow(struct cj *c, int src, size_t row)
{
	const struct model *m = c->m;
	uint32_t pid = 0, corr = 0;
	char buf[32];

	switch (src) {
	case SRC_API: pid = m->api.v[row].pid; corr = m->api.v[row].correlation; break;
	case SRC_KERNEL: pid = m->kernels.v[row].pid; corr = m->kernels.v[row].correlation; break;
	case SRC_MEMCPY: pid = m->memcpys.v[row].pid; corr = m->memcpys.v[row].correlation; break;
	case SRC_MEMSET: pid = m->memsets.v[row].pid; corr = m->memsets.v[row].correlation; break;
	}
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)lay_flow_id(pid, corr));
	xout_str(c->o, ",\"bind_id\":\"");
	xout_str(c->o, buf);
	xout_str(c->o, c->l->flow[src][row] == 1 ? "\",\"flow_out\":true" : "\",\"flow_in\":true");
}

static void slice(struct cj *c, int src, size_t row, uint64_t s, uint64_t e)
{
	const struct model *m = c->m;
	struct xout *o = c->o;

	sep(c);
	xout_str(o, "{\"ph\":\"X\",\"cat\":\"");
	xout_str(o, lay_src_category(src));
	xout_str(o, "\",\"name\":");
	switch (src) {
	case SRC_API: name_str(c, m->api.v[row].name_id, NULL); break;
	case SRC_NVTX: name_str(c, m->nvtx.v[row].name_id, "(unnamed range)"); break;
	case SRC_KERNEL: name_str(c, m->kernels.v[row].name_id, "(unnamed kernel)"); break;
	default: xout_json_str(o, lay_slice_name(m, src, row)); break;
	}
	track_ids(c, c->l->track[src][row]);
	xout_str(o, ",\"ts\":");
	xout_us3(o, s - c->base);
	xout_str(o, ",\"dur\":");
	xout_us3(o, e - s);
	if (c->l->flow[src][row])
		flow(c, src, row);
	args(c, src, row);
	xout_ch(o, '}');
}

static void counter(struct cj *c, uint32_t t, uint64_t ts, double v)
{
	struct xout *o = c->o;

	sep(c);
	xout_str(o, "{\"ph\":\"C\",\"name\":");
	xout_json_str(o, c->l->tracks[t].name);
	xout_str(o, ",\"pid\":");
	xout_u64(o, c->l->tracks[t].json_pid);
	xout_str(o, ",\"ts\":");
	xout_us3(o, ts - c->base);
	xout_str(o, ",\"args\":{\"value\":");
	xout_double(o, v);
	xout_str(o, "}}");
	progress_add(&c->prog, 1);
}

int export_chrome(const struct export_input *in, struct xout *o)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	struct lay l;
	struct cj c;
	struct lay_iter it = { .started = 0 };
	int src;
	size_t row;
	uint64_t s, e;

	if (lay_build(&l, m))
		return -1;
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.l = &l;
	c.o = o;
	c.first = 1;
	c.base = export_t0(m);
	c.plain = xcalloc(m->str.nr + 1, 1);
	progress_init(&c.prog, opt->progress, "export chrome", l.nslices + m->marks.n + l.ncounter_samples);

	xout_str(o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"gpuscope\",\"baseTimeNanoseconds\":");
	xout_u64(o, c.base);
	if (opt->title) {
		xout_str(o, ",\"source\":");
		xout_json_str(o, opt->title);
	}
	xout_str(o, "},\n\"traceEvents\":[\n");
	metadata(&c);
	while (lay_next(m, &it, &src, &row, &s, &e) && !o->failed) {
		slice(&c, src, row, s, e);
		progress_add(&c.prog, 1);
	}
	for (size_t i = 0; i < m->marks.n && !o->failed; i++) {
		const struct trace_nvtx_mark *k = &m->marks.v[i];
		sep(&c);
		xout_str(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx_mark\",\"name\":");
		name_str(&c, k->name_id, NULL);
		track_ids(&c, l.mark_track[i]);
		xout_str(o, ",\"ts\":");
		xout_us3(o, k->time - c.base);
		xout_ch(o, '}');
		progress_add(&c.prog, 1);
	}
	for (size_t i = 0; i < m->metrics.n && !o->failed; i++)
		counter(&c, l.metric_track[i], m->metrics.v[i].time, m->metrics.v[i].value);
	for (size_t i = 0; i < m->cpu.n && !o->failed; i++)
		if (l.cpu_track[i] != UINT32_MAX)
			counter(&c, l.cpu_track[i], m->cpu.v[i].time, l.cpu_value[i]);
	for (size_t i = 0; i < m->memory.n && !o->failed; i++)
		if (l.mem_track[i] != UINT32_MAX)
			counter(&c, l.mem_track[i], m->memory.v[i].time, l.mem_value[i]);
	for (size_t i = 0; i < m->torch_mem.n && !o->failed; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		if (l.torch_track[2 * i] != UINT32_MAX)
			counter(&c, l.torch_track[2 * i], x->time, (double)x->allocated);
		if (l.torch_track[2 * i + 1] != UINT32_MAX)
			counter(&c, l.torch_track[2 * i + 1], x->time, (double)x->reserved);
	}
	xout_str(o, "\n]}\n");
	progress_end(&c.prog);
	free(c.plain);
	lay_release(&l);
	return o->failed ? -1 : 0;
}
