/*
 * replay.c - the "replay" backend: feed raw readings recorded by
 * `gpuscope monitor --record FILE` (format in docs/monitor.md).
 *
 * The whole file is loaded at open.  Recordings made one after another may
 * be concatenated (`cat a.jsonl b.jsonl`): repeated headers are skipped.  Each GPU has its own cursor over its
 * recorded ticks; at the end the replay stops, or starts over when
 * n->replay_loop is set, shifting times so that they keep increasing.
 */
#include "nvml.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

struct replay_tick {
	uint64_t time_ns, mono_ns;
	unsigned tiers;
	struct nvml_raws raws;
};

struct replay_gpu {
	struct replay_tick *tick;
	size_t nr, alloc;
	size_t cursor;
	unsigned cycle;
	struct nvml_raws statics;
};

struct replay {
	struct nvml_raws system;
	struct replay_gpu *gpu;
	unsigned ngpus;
};

/*
 * A replay line nests four levels (line object, "r", a reading, its values).
 * yajl's tree parser builds and frees a tree by recursion, one C frame per
 * level, so a line of 500,000 brackets overflows the stack; lines nested
 * deeper than REPLAY_MAX_DEPTH are refused before they are parsed.  64
 * leaves a newer writer room and costs a few KiB of stack at most.
 */
#define REPLAY_MAX_DEPTH 64

/* Does the JSON text @s (of @len bytes) nest deeper than REPLAY_MAX_DEPTH? */
static int too_deep(const char *s, size_t len)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > REPLAY_MAX_DEPTH)
				return 1;
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return 0;
}

static yajl_val get(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };
	return yajl_tree_get(obj, path, yajl_t_any);
}

static int num(yajl_val v, double *out)
{
	if (!v || !YAJL_IS_NUMBER(v))
		return -1;
	*out = YAJL_IS_INTEGER(v) ? (double)YAJL_GET_INTEGER(v) : YAJL_GET_DOUBLE(v);
	return 0;
}

/* Nanosecond times need all 64 bits: not through a double. */
static int num_u64(yajl_val v, uint64_t *out)
{
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
		return -1;
	*out = (uint64_t)YAJL_GET_INTEGER(v);
	return 0;
}

/* Parse the "r" array of a line into @out; returns 0 or a message. */
static const char *parse_raws(yajl_val arr, struct nvml_raws *out)
{
	if (!arr || !YAJL_IS_ARRAY(arr))
		return "no \"r\" array";
	for (size_t i = 0; i < arr->u.array.len; i++) {
		yajl_val e = arr->u.array.values[i], vals;
		struct nvml_raw *r;
		double arg, ret;
		int call;

		const char *name;

		if (!YAJL_IS_ARRAY(e) || e->u.array.len < 4 ||
		    !(name = YAJL_GET_STRING(e->u.array.values[0])))
			return "a reading is not [call, arg, ret, [values], \"string\"]";
		call = nvml_call_by_name(name);
		if (call < 0)
			continue; /* a call this version does not know: skip it */
		if (num(e->u.array.values[1], &arg) || num(e->u.array.values[2], &ret))
			return "a reading's arg or ret is not a number";
		r = nvml_raws_add(out, (unsigned)call, (unsigned)arg, (int)ret);
		vals = e->u.array.values[3];
		if (!YAJL_IS_ARRAY(vals))
			return "a reading's values are not an array";
		for (size_t k = 0; k < vals->u.array.len && k < NVML_RAW_VALUES; k++)
			if (num(vals->u.array.values[k], &r->val[k]))
				return "a reading's value is not a number";
		r->nval = (uint16_t)(vals->u.array.len < NVML_RAW_VALUES ? vals->u.array.len
									 : NVML_RAW_VALUES);
		if (e->u.array.len > 4 && YAJL_GET_STRING(e->u.array.values[4]))
			snprintf(r->str, sizeof(r->str), "%s", YAJL_GET_STRING(e->u.array.values[4]));
	}
	return NULL;
}

static void replay_free(struct replay *rp)
{
	nvml_raws_release(&rp->system);
	for (unsigned i = 0; i < rp->ngpus; i++) {
		for (size_t k = 0; k < rp->gpu[i].nr; k++)
			nvml_raws_release(&rp->gpu[i].tick[k].raws);
		free(rp->gpu[i].tick);
		nvml_raws_release(&rp->gpu[i].statics);
	}
	free(rp->gpu);
	free(rp);
}

static struct replay_gpu *gpu_of(struct replay *rp, yajl_val line)
{
	double g;

	if (num(get(line, "gpu"), &g) || g < 0 || g >= 4096)
		return NULL;
	if ((unsigned)g >= rp->ngpus) {
		rp->gpu = xrealloc(rp->gpu, ((size_t)g + 1) * sizeof(*rp->gpu));
		memset(rp->gpu + rp->ngpus, 0, ((size_t)g + 1 - rp->ngpus) * sizeof(*rp->gpu));
		rp->ngpus = (unsigned)g + 1;
	}
	return &rp->gpu[(unsigned)g];
}

static int replay_open(struct nvml *n, const char *path, char *why, size_t whylen)
{
	struct replay *rp = xcalloc(1, sizeof(*rp));
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int have_header = 0;

	if (!f) {
		snprintf(why, whylen, "cannot open replay '%s': %s", path, strerror(errno));
		free(rp);
		return -1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		char err[128];
		const char *problem = NULL, *kind;
		yajl_val v, k;

		lineno++;
		if (len == 1 && line[0] == '\n')
			continue;
		if (too_deep(line, (size_t)len)) {
			snprintf(why, whylen, "replay '%s': line %u: JSON nested deeper than %d levels",
				 path, lineno, REPLAY_MAX_DEPTH);
			free(line);
			fclose(f);
			replay_free(rp);
			return -1;
		}
		v = yajl_tree_parse(line, err, sizeof(err));
		if (!v || !YAJL_IS_OBJECT(v)) {
			problem = "not a JSON object";
		} else if (!have_header) {
			yajl_val fmt = get(v, "format");
			const char *fs = fmt && YAJL_IS_STRING(fmt) ? YAJL_GET_STRING(fmt) : NULL;
			if (!fs || strcmp(fs, "gpuscope-nvml-replay"))
				problem = "not a gpuscope NVML replay (no \"format\" line)";
			have_header = 1;
		} else if (get(v, "format")) {
			/* a header again: files recorded one after another, concatenated */
		} else if (!(k = get(v, "k")) || !YAJL_IS_STRING(k)) {
			problem = "no \"k\"";
		} else if (!(kind = YAJL_GET_STRING(k))) {
			problem = "no \"k\"";
		} else if (!strcmp(kind, "system")) {
			problem = parse_raws(get(v, "r"), &rp->system);
		} else if (!strcmp(kind, "static") || !strcmp(kind, "tick")) {
			struct replay_gpu *g = gpu_of(rp, v);
			if (!g) {
				problem = "bad \"gpu\"";
			} else if (kind[0] == 's') {
				g->statics.nr = 0;
				problem = parse_raws(get(v, "r"), &g->statics);
			} else {
				struct replay_tick *t;
				uint64_t tn, mn;
				double tiers;
				if (num_u64(get(v, "t"), &tn) || num_u64(get(v, "m"), &mn) ||
				    num(get(v, "tiers"), &tiers)) {
					problem = "a tick lacks \"t\", \"m\" or \"tiers\"";
				} else if (!(tiers >= 0 && tiers <= UINT32_MAX)) {
					problem = "a tick's \"tiers\" is not a 32-bit mask";
				} else {
					ALLOC_GROW(g->tick, g->nr + 1, g->alloc);
					t = &g->tick[g->nr++];
					memset(t, 0, sizeof(*t));
					t->time_ns = tn;
					t->mono_ns = mn;
					t->tiers = (unsigned)tiers;
					problem = parse_raws(get(v, "r"), &t->raws);
				}
			}
		} /* other kinds: from a newer writer, skipped */
		yajl_tree_free(v);
		if (problem) {
			snprintf(why, whylen, "replay '%s': line %u: %s", path, lineno, problem);
			free(line);
			fclose(f);
			replay_free(rp);
			return -1;
		}
	}
	free(line);
	fclose(f);
	if (!have_header) {
		snprintf(why, whylen, "replay '%s': empty file", path);
		replay_free(rp);
		return -1;
	}
	n->priv = rp;
	return 0;
}

static void replay_close(struct nvml *n)
{
	if (n->priv)
		replay_free(n->priv);
	n->priv = NULL;
}

static void copy_raws(struct nvml_raws *out, const struct nvml_raws *in, unsigned tiers)
{
	for (size_t i = 0; i < in->nr; i++) {
		struct nvml_raw *r;
		if (!(nvml_call_tier(in->r[i].call) & tiers))
			continue;
		r = nvml_raws_add(out, in->r[i].call, in->r[i].arg, in->r[i].ret);
		*r = in->r[i];
	}
}

static int replay_read_system(struct nvml *n, struct nvml_raws *out)
{
	struct replay *rp = n->priv;
	struct nvml_raw *r;
	int have_count = 0;

	copy_raws(out, &rp->system, NVML_TIER_STATIC);
	for (size_t i = 0; i < out->nr; i++)
		have_count |= out->r[i].call == NVC_DEVICE_COUNT;
	if (!have_count) {
		r = nvml_raws_add(out, NVC_DEVICE_COUNT, 0, 0);
		r->nval = 1;
		r->val[0] = rp->ngpus;
	}
	return 0;
}

static int replay_read_static(struct nvml *n, unsigned gpu, struct nvml_raws *out)
{
	struct replay *rp = n->priv;

	if (gpu < rp->ngpus)
		copy_raws(out, &rp->gpu[gpu].statics, NVML_TIER_STATIC);
	return 0;
}

static int replay_read_tick(struct nvml *n, unsigned gpu, unsigned tiers, struct nvml_raws *out,
			    uint64_t *time_ns, uint64_t *mono_ns)
{
	struct replay *rp = n->priv;
	struct replay_gpu *g;
	const struct replay_tick *t;
	uint64_t shift_t = 0, shift_m = 0;

	if (gpu >= rp->ngpus || !rp->gpu[gpu].nr)
		return -1;
	g = &rp->gpu[gpu];
	if (g->cursor >= g->nr) {
		if (!n->replay_loop)
			return -1;
		g->cursor = 0;
		g->cycle++;
	}
	if (g->cycle) {
		/* one recorded span plus one mean interval per cycle */
		uint64_t span_t = g->tick[g->nr - 1].time_ns - g->tick[0].time_ns;
		uint64_t span_m = g->tick[g->nr - 1].mono_ns - g->tick[0].mono_ns;
		uint64_t step_t = g->nr > 1 ? span_t / (g->nr - 1) : 1000000000ull;
		uint64_t step_m = g->nr > 1 ? span_m / (g->nr - 1) : 1000000000ull;
		shift_t = g->cycle * (span_t + step_t);
		shift_m = g->cycle * (span_m + step_m);
	}
	t = &g->tick[g->cursor++];
	*time_ns = t->time_ns + shift_t;
	*mono_ns = t->mono_ns + shift_m;
	copy_raws(out, &t->raws, tiers);
	return 0;
}

const struct nvml_backend nvml_backend_replay = {
	.name = "replay",
	.open = replay_open,
	.close = replay_close,
	.read_system = replay_read_system,
	.read_static = replay_read_static,
	.read_tick = replay_read_tick,
};
