/*
 * device_facts.c - device fact sources and filling facts from the GPU
 * table (see device_facts.h).
 */
#include "device_facts.h"
#include "gpu_facts.h"

#include <string.h>

int model_fact_known(const struct trace_device *d, enum model_fact f)
{
	switch (f) {
	case MODEL_FACT_NAME: return d->name_id != 0;
	case MODEL_FACT_SMS: return d->sm_count != 0;
	case MODEL_FACT_CC: return d->cc_major != 0;
	case MODEL_FACT_MEMORY: return d->global_mem != 0;
	default: return 0;
	}
}

const char *model_fact_source(const struct model *m, const struct trace_device *d, enum model_fact f)
{
	const struct model_device_source *s = model_device_source(m, d);
	int known = model_fact_known(d, f);

	if ((unsigned)f >= MODEL_FACT__COUNT)
		return "-: no such fact";
	if (s && s->src[f]) {
		const char *src = model_str(m, s->src[f]);
		int unknown_src = src[0] == '-';
		if (known != unknown_src)
			return src;
	}
	return known ? "recorded" : "-: not recorded in the input";
}

/* The source row of device @d, added (every source "not said") when there is none. */
static struct model_device_source *source_row(struct model *m, const struct trace_device *d)
{
	struct model_device_source *s;

	for (size_t i = 0; i < m->device_sources.n; i++)
		if (m->device_sources.v[i].device == d->id && m->device_sources.v[i].pid == d->pid)
			return &m->device_sources.v[i];
	s = MODEL_PUSH(m->device_sources);
	s->device = d->id;
	s->pid = d->pid;
	return s;
}

size_t model_apply_gpu_facts(struct model *m)
{
	size_t filled = 0;

	for (size_t i = 0; i < m->devices.n; i++) {
		struct trace_device *d = &m->devices.v[i];
		struct model_device_source *s;
		struct gpu_facts g;
		struct strbuf label = STRBUF_INIT;
		uint32_t src;

		if (d->name_id && d->sm_count && d->cc_major && d->global_mem)
			continue;
		if (gpu_facts_lookup(model_str(m, d->name_id), d->cc_major, d->cc_minor, d->sm_count, d->global_mem,
				     &g) < 0)
			continue;
		strbuf_addstr(&label, "table");
		if (g.model)
			strbuf_addf(&label, ": %s", g.model);
		src = model_intern(m, label.buf);
		strbuf_release(&label);
		s = source_row(m, d);
		if (!d->sm_count && g.f[GF_SMS].src == GFS_TABLE && g.f[GF_SMS].v > 0) {
			d->sm_count = (uint32_t)g.f[GF_SMS].v;
			s->src[MODEL_FACT_SMS] = src;
			filled++;
		}
		if (!d->cc_major && g.cc_src == GFS_TABLE && g.cc_major) {
			d->cc_major = g.cc_major;
			d->cc_minor = g.cc_minor;
			s->src[MODEL_FACT_CC] = src;
			filled++;
		}
		if (!d->global_mem && g.f[GF_MEM_GB].src == GFS_TABLE && g.f[GF_MEM_GB].v > 0) {
			d->global_mem = (uint64_t)(g.f[GF_MEM_GB].v * GPU_GB);
			s->src[MODEL_FACT_MEMORY] = src;
			filled++;
		}
		if (!d->name_id && g.model) {
			d->name_id = model_intern(m, g.model);
			s->src[MODEL_FACT_NAME] = src;
			filled++;
		}
	}
	return filled;
}
