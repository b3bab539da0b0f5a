/*
 * perfetto.c - the Perfetto protobuf trace, encoded here (no SDK).
 *
 * The file is a sequence of TracePacket messages, each written as field 1
 * of the Trace message (docs/export.md lists the fields used; the .proto in
 * tests/export holds exactly those).  One packet sequence (id 1) carries
 * everything: first a packet that clears the incremental state and interns
 * the categories and annotation names, then a TrackDescriptor per track,
 * then slices as SLICE_BEGIN/SLICE_END pairs, marks as INSTANT events and
 * counter samples.  Event names are interned on first use (in the packet
 * that first uses them).  Slices of one track are written in nesting order
 * (an END before a BEGIN at the same time); the trace processor sorts
 * packets by time and keeps file order for equal times.
 */
#include "internal.h"

#include <stdlib.h>

/* TracePacket */
#define PK_TIMESTAMP 8
#define PK_SEQ_ID 10
#define PK_TRACK_EVENT 11
#define PK_INTERNED 12
#define PK_SEQ_FLAGS 13
#define PK_TRACK_DESCRIPTOR 60
/* TrackDescriptor */
#define TD_UUID 1
#define TD_NAME 2
#define TD_PROCESS 3
#define TD_THREAD 4
#define TD_PARENT 5
#define TD_COUNTER 8
#define TD_CHILD_ORDERING 11
#define TD_SIBLING_RANK 12
#define TD_SIBLING_MERGE 15
/* TrackEvent */
#define TE_CATEGORY_IIDS 3
#define TE_DEBUG 4
#define TE_TYPE 9
#define TE_NAME_IID 10
#define TE_TRACK_UUID 11
#define TE_DOUBLE_COUNTER 44
#define TE_FLOW_IDS 47
#define TE_TERM_FLOW_IDS 48
/* InternedData */
#define IN_CATEGORIES 1
#define IN_NAMES 2
#define IN_DEBUG_NAMES 3

enum { TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
#define SEQ_ID 1

/* debug annotation name iids */
enum {
	DA_CORRELATION = 1, DA_GRID, DA_BLOCK, DA_REGISTERS, DA_SMEM, DA_BYTES, DA_STATUS,
	DA_RESULT, DA_ARG, DA_ERRNO, DA_STREAM, DA_DEVICE, DA_DOMAIN, DA_PAYLOAD, DA_VALUE,
	DA_KIND, DA__COUNT
};
static const char *const da_names[DA__COUNT] = {
	NULL, "correlation", "grid", "block", "registers per thread", "shared memory",
	"bytes", "status", "result", "arg", "errno", "stream", "device", "domain", "payload",
	"value", "kind",
};

/* event name iids: fixed names below 128, model string id + 128 above */
#define IID_OSRT 1            /* + func (< 48) */
#define IID_COPY 50           /* + kind (< 11) */
#define IID_MEMSET 62
#define IID_SYNC 63           /* + type (< 5) */
#define IID_UNNAMED_RANGE 69
#define IID_UNNAMED_KERNEL 70
#define IID_OS_CALL 71
#define IID_MODEL 128

struct pb {
	unsigned char *b;
	size_t n, cap;
};

static inline void pb_need(struct pb *p, size_t k)
{
	if (p->n + k > p->cap) {
		p->cap = (p->n + k) * 2 + 64;
		p->b = xrealloc(p->b, p->cap);
	}
}

static inline void pb_varint_raw(struct pb *p, uint64_t v)
{
	pb_need(p, 10);
	while (v >= 0x80) {
		p->b[p->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p->b[p->n++] = (unsigned char)v;
}

static inline void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
	pb_varint_raw(p, (uint64_t)field << 3);
	pb_varint_raw(p, v);
}

static inline void pb_int(struct pb *p, unsigned field, int64_t v)
{
	pb_uint(p, field, (uint64_t)v);
}

static inline void pb_fixed64(struct pb *p, unsigned field, uint64_t v)
{
	pb_varint_raw(p, ((uint64_t)field << 3) | 1);
	pb_need(p, 8);
	for (int i = 0; i < 8; i++)
		p->b[p->n++] = (unsigned char)(v >> (8 * i));
}

static inline void pb_double(struct pb *p, unsigned field, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	pb_fixed64(p, field, v);
}

static inline void pb_bytes(struct pb *p, unsigned field, const void *data, size_t len)
{
	pb_varint_raw(p, ((uint64_t)field << 3) | 2);
	pb_varint_raw(p, len);
	pb_need(p, len);
	memcpy(p->b + p->n, data, len);
	p->n += len;
}

static inline void pb_str(struct pb *p, unsigned field, const char *s)
{
	pb_bytes(p, field, s, strlen(s));
}

static inline void pb_msg(struct pb *p, unsigned field, const struct pb *sub)
{
	pb_bytes(p, field, sub->b, sub->n);
}

struct pf {
	const struct model *m;
	struct lay *l;
	struct xout *o;
	struct pb pk, te, in, tmp, da;
	unsigned char *model_defined;  /* per model string: name interned */
	unsigned char fixed_defined[IID_MODEL];
	struct { uint64_t *v; size_t n, alloc; } *stacks; /* per track: open slice ends */
	struct progress prog;
};

/* Write the packet in pk as Trace.packet (field 1). */
static void emit_packet(struct pf *f)
{
	unsigned char hdr[11];
	size_t k = 0;
	uint64_t len = f->pk.n;

	hdr[k++] = 0x0a;
	while (len >= 0x80) {
		hdr[k++] = (unsigned char)(len | 0x80);
		len >>= 7;
	}
	hdr[k++] = (unsigned char)len;
	xout_write(f->o, hdr, k);
	xout_write(f->o, f->pk.b, f->pk.n);
	f->pk.n = 0;
}

/* Intern a name for this packet when new; returns the iid. */
static uint64_t name_iid(struct pf *f, int src, size_t row)
{
	const struct model *m = f->m;
	uint64_t iid = 0;
	uint32_t sid = UINT32_MAX;
	const char *name;

	switch (src) {
	case SRC_API: sid = m->api.v[row].name_id; break;
	case SRC_OSRT:
		iid = m->osrt.v[row].func < 48 && trace_osrt_name(m->osrt.v[row].func)
			      ? IID_OSRT + m->osrt.v[row].func
			      : IID_OS_CALL;
		break;
	case SRC_NVTX:
		sid = m->nvtx.v[row].name_id;
		if (!sid) {
			sid = UINT32_MAX;
			iid = IID_UNNAMED_RANGE;
		}
		break;
	case SRC_KERNEL:
		sid = m->kernels.v[row].name_id;
		if (!sid) {
			sid = UINT32_MAX;
			iid = IID_UNNAMED_KERNEL;
		}
		break;
	case SRC_MEMCPY:
		iid = IID_COPY + (m->memcpys.v[row].kind <= COPY_PTOP ? m->memcpys.v[row].kind : 0);
		break;
	case SRC_MEMSET: iid = IID_MEMSET; break;
	case SRC_SYNC: iid = IID_SYNC + (m->syncs.v[row].type <= SYNC_CONTEXT ? m->syncs.v[row].type : 0); break;
	case -1: sid = (uint32_t)row; break; /* a mark: model string */
	default: BUG("bad source %d", src);
	}
	if (sid != UINT32_MAX) {
		iid = IID_MODEL + (uint64_t)sid;
		if (f->model_defined[sid])
			return iid;
		f->model_defined[sid] = 1;
		name = model_str(m, sid);
	} else {
		if (f->fixed_defined[iid])
			return iid;
		f->fixed_defined[iid] = 1;
		name = src == -1 ? "" : lay_slice_name(m, src, row);
	}
	f->tmp.n = 0;
	pb_uint(&f->tmp, 1, iid);
	pb_str(&f->tmp, 2, name);
	pb_msg(&f->in, IN_NAMES, &f->tmp);
	return iid;
}

static void da_uint(struct pf *f, unsigned name, uint64_t v)
{
	f->tmp.n = 0;
	pb_uint(&f->tmp, 1, name);
	pb_uint(&f->tmp, 3, v);
	pb_msg(&f->te, TE_DEBUG, &f->tmp);
}

static void da_int(struct pf *f, unsigned name, int64_t v)
{
	f->tmp.n = 0;
	pb_uint(&f->tmp, 1, name);
	pb_int(&f->tmp, 4, v);
	pb_msg(&f->te, TE_DEBUG, &f->tmp);
}

static void da_str(struct pf *f, unsigned name, const char *s, size_t len)
{
	f->tmp.n = 0;
	pb_uint(&f->tmp, 1, name);
	pb_bytes(&f->tmp, 6, s, len);
	pb_msg(&f->te, TE_DEBUG, &f->tmp);
}

static size_t fmt_dim3(char *buf, const uint32_t d[3])
{
	size_t k = 0;
	for (int i = 0; i < 3; i++) {
		char t[12];
		int n = 0;
		uint32_t v = d[i];
		if (i)
			buf[k++] = 'x';
		do {
			t[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (n)
			buf[k++] = t[--n];
	}
	return k;
}

static void add_args(struct pf *f, int src, size_t row)
{
	const struct model *m = f->m;
	char buf[48];

	switch (src) {
	case SRC_API:
		da_uint(f, DA_CORRELATION, m->api.v[row].correlation);
		if (m->api.v[row].status)
			da_int(f, DA_STATUS, m->api.v[row].status);
		break;
	case SRC_OSRT:
		da_int(f, DA_RESULT, m->osrt.v[row].result);
		if (m->osrt.v[row].arg != -1)
			da_int(f, DA_ARG, m->osrt.v[row].arg);
		if (m->osrt.v[row].err)
			da_int(f, DA_ERRNO, m->osrt.v[row].err);
		break;
	case SRC_NVTX:
		if (m->nvtx.v[row].domain_id) {
			const char *d = model_str(m, m->nvtx.v[row].domain_id);
			da_str(f, DA_DOMAIN, d, strlen(d));
		}
		break;
	case SRC_KERNEL: {
		const struct trace_kernel *k = &m->kernels.v[row];
		da_uint(f, DA_CORRELATION, k->correlation);
		da_str(f, DA_GRID, buf, fmt_dim3(buf, k->grid));
		da_str(f, DA_BLOCK, buf, fmt_dim3(buf, k->block));
		da_uint(f, DA_REGISTERS, k->registers);
		da_uint(f, DA_SMEM, (uint64_t)k->static_smem + k->dynamic_smem);
		break;
	}
	case SRC_MEMCPY:
		da_uint(f, DA_CORRELATION, m->memcpys.v[row].correlation);
		da_uint(f, DA_BYTES, m->memcpys.v[row].bytes);
		break;
	case SRC_MEMSET:
		da_uint(f, DA_CORRELATION, m->memsets.v[row].correlation);
		da_uint(f, DA_BYTES, m->memsets.v[row].bytes);
		break;
	case SRC_SYNC:
		da_uint(f, DA_CORRELATION, m->syncs.v[row].correlation);
		da_uint(f, DA_STREAM, m->syncs.v[row].stream);
		break;
	}
}

static uint32_t slice_pid(const struct model *m, int src, size_t row)
{
	switch (src) {
	case SRC_API: return m->api.v[row].pid;
	case SRC_KERNEL: return m->kernels.v[row].pid;
	case SRC_MEMCPY: return m->memcpys.v[row].pid;
	case SRC_MEMSET: return m->memsets.v[row].pid;
	}
	return 0;
}

static uint32_t slice_corr(const struct model *m, int src, size_t row)
{
	switch (src) {
	case SRC_API: return m->api.v[row].correlation;
	case SRC_KERNEL: return m->kernels.v[row].correlation;
	case SRC_MEMCPY: return m->memcpys.v[row].correlation;
	case SRC_MEMSET: return m->memsets.v[row].correlation;
	}
	return 0;
}

static inline size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void out_varint(struct xout *o, uint64_t v)
{
	unsigned char b[10];
	size_t k = 0;
	while (v >= 0x80) {
		b[k++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[k++] = (unsigned char)v;
	xout_write(o, b, k);
}

/*
 * Write a packet of the track event in te (and the interned data in in)
 * straight to the output: the packet's size is known from its parts, so
 * nothing is copied twice.
 */
static void finish_event(struct pf *f, uint64_t ts, int needs_state)
{
	struct xout *o = f->o;
	size_t len = 1 + varint_len(ts) + 2 + (needs_state ? 2 : 0) + 1 + varint_len(f->te.n) + f->te.n;

	if (f->in.n)
		len += 1 + varint_len(f->in.n) + f->in.n;
	xout_ch(o, 0x0a);
	out_varint(o, len);
	xout_ch(o, PK_TIMESTAMP << 3);
	out_varint(o, ts);
	xout_ch(o, PK_SEQ_ID << 3);
	xout_ch(o, SEQ_ID);
	if (needs_state) {
		xout_ch(o, PK_SEQ_FLAGS << 3);
		xout_ch(o, SEQ_NEEDS);
	}
	xout_ch(o, (PK_TRACK_EVENT << 3) | 2);
	out_varint(o, f->te.n);
	xout_write(o, f->te.b, f->te.n);
	if (f->in.n) {
		xout_ch(o, (PK_INTERNED << 3) | 2);
		out_varint(o, f->in.n);
		xout_write(o, f->in.b, f->in.n);
	}
	f->te.n = 0;
	f->in.n = 0;
}

static void emit_end(struct pf *f, uint64_t uuid, uint64_t ts)
{
	f->te.n = 0;
	pb_uint(&f->te, TE_TYPE, TYPE_END);
	pb_uint(&f->te, TE_TRACK_UUID, uuid);
	finish_event(f, ts, 0);
}

static void close_until(struct pf *f, uint32_t t, uint64_t ts)
{
	while (f->stacks[t].n && f->stacks[t].v[f->stacks[t].n - 1] <= ts) {
		emit_end(f, f->l->tracks[t].uuid, f->stacks[t].v[f->stacks[t].n - 1]);
		f->stacks[t].n--;
	}
}

static void emit_slice(struct pf *f, int src, size_t row, uint64_t s, uint64_t e)
{
	struct lay *l = f->l;
	uint32_t t = l->track[src][row];
	uint64_t iid;

	close_until(f, t, s);
	ALLOC_GROW(f->stacks[t].v, f->stacks[t].n + 1, f->stacks[t].alloc);
	f->stacks[t].v[f->stacks[t].n++] = e;

	f->te.n = 0;
	f->in.n = 0;
	iid = name_iid(f, src, row);
	pb_uint(&f->te, TE_CATEGORY_IIDS, (uint64_t)src + 1);
	pb_uint(&f->te, TE_TYPE, TYPE_BEGIN);
	pb_uint(&f->te, TE_NAME_IID, iid);
	pb_uint(&f->te, TE_TRACK_UUID, l->tracks[t].uuid);
	if (l->flow[src][row] == 1)
		pb_fixed64(&f->te, TE_FLOW_IDS, lay_flow_id(slice_pid(f->m, src, row), slice_corr(f->m, src, row)));
	else if (l->flow[src][row] == 2)
		pb_fixed64(&f->te, TE_TERM_FLOW_IDS,
			   lay_flow_id(slice_pid(f->m, src, row), slice_corr(f->m, src, row)));
	add_args(f, src, row);
	finish_event(f, s, 1);
}

static void emit_descriptor(struct pf *f, const struct lay_track *t, uint64_t ts)
{
	struct pb *d = &f->te, *sub = &f->tmp;
	const struct model *m = f->m;

	d->n = 0;
	pb_uint(d, TD_UUID, t->uuid);
	if (t->parent)
		pb_uint(d, TD_PARENT, f->l->tracks[t->parent - 1].uuid);
	switch (t->kind) {
	case LT_PROCESS: {
		const struct model_process *p = model_process(m, t->pid);
		sub->n = 0;
		pb_int(sub, 1, t->pid);
		if (p && *model_str(m, p->cmdline_id))
			pb_str(sub, 2, model_str(m, p->cmdline_id));
		pb_str(sub, 6, t->name);
		pb_msg(d, TD_PROCESS, sub);
		break;
	}
	case LT_THREAD:
		sub->n = 0;
		pb_int(sub, 1, t->pid);
		pb_int(sub, 2, t->tid);
		pb_str(sub, 5, t->name);
		pb_msg(d, TD_THREAD, sub);
		break;
	case LT_COUNTER:
		pb_str(d, TD_NAME, t->name);
		sub->n = 0;
		if (t->unit && !strcmp(t->unit, "bytes"))
			pb_uint(sub, 3, 3); /* UNIT_SIZE_BYTES */
		else if (t->unit)
			pb_str(sub, 6, t->unit);
		pb_msg(d, TD_COUNTER, sub);
		break;
	case LT_GPU:
		pb_str(d, TD_NAME, t->name);
		pb_uint(d, TD_CHILD_ORDERING, 3); /* explicit: streams by id */
		pb_int(d, TD_SIBLING_RANK, t->rank);
		break;
	default:
		pb_str(d, TD_NAME, t->name);
		pb_int(d, TD_SIBLING_RANK, t->rank);
		pb_uint(d, TD_SIBLING_MERGE, 2); /* never merge lanes that share a name */
		break;
	}
	f->pk.n = 0;
	pb_uint(&f->pk, PK_TIMESTAMP, ts);
	pb_uint(&f->pk, PK_SEQ_ID, SEQ_ID);
	pb_msg(&f->pk, PK_TRACK_DESCRIPTOR, d);
	emit_packet(f);
	d->n = 0;
}

static void emit_counter(struct pf *f, uint32_t t, uint64_t ts, double v)
{
	f->te.n = 0;
	pb_uint(&f->te, TE_TYPE, TYPE_COUNTER);
	pb_uint(&f->te, TE_TRACK_UUID, f->l->tracks[t].uuid);
	pb_double(&f->te, TE_DOUBLE_COUNTER, v);
	finish_event(f, ts, 0);
	progress_add(&f->prog, 1);
}

int export_perfetto(const struct export_input *in, struct xout *o)
{
	const struct model *m = in->m;
	const struct export_opts *opt = &in->o;
	struct lay l;
	struct pf f;
	struct lay_iter it = { .started = 0 };
	int src;
	size_t row;
	uint64_t s, e, t0 = export_t0(m);

	if (lay_build(&l, m))
		return -1;
	memset(&f, 0, sizeof(f));
	f.m = m;
	f.l = &l;
	f.o = o;
	f.model_defined = xcalloc(m->str.nr + 1, 1);
	f.stacks = xcalloc(l.ntracks + 1, sizeof(*f.stacks));
	progress_init(&f.prog, opt->progress, "export perfetto",
		      l.nslices + m->marks.n + l.ncounter_samples);

	/* the first packet: clear incremental state, intern categories and annotation names */
	for (int k = 0; k < SRC__COUNT; k++) {
		f.tmp.n = 0;
		pb_uint(&f.tmp, 1, (uint64_t)k + 1);
		pb_str(&f.tmp, 2, lay_src_category(k));
		pb_msg(&f.in, IN_CATEGORIES, &f.tmp);
	}
	f.tmp.n = 0;
	pb_uint(&f.tmp, 1, SRC__COUNT + 1);
	pb_str(&f.tmp, 2, "nvtx_mark");
	pb_msg(&f.in, IN_CATEGORIES, &f.tmp);
	for (unsigned k = 1; k < DA__COUNT; k++) {
		f.tmp.n = 0;
		pb_uint(&f.tmp, 1, k);
		pb_str(&f.tmp, 2, da_names[k]);
		pb_msg(&f.in, IN_DEBUG_NAMES, &f.tmp);
	}
	pb_uint(&f.pk, PK_TIMESTAMP, t0);
	pb_uint(&f.pk, PK_SEQ_ID, SEQ_ID);
	pb_uint(&f.pk, PK_SEQ_FLAGS, SEQ_CLEARED);
	pb_msg(&f.pk, PK_INTERNED, &f.in);
	emit_packet(&f);
	f.in.n = 0;

	for (size_t i = 0; i < l.ntracks; i++)
		emit_descriptor(&f, &l.tracks[i], t0);

	while (lay_next(m, &it, &src, &row, &s, &e) && !o->failed) {
		emit_slice(&f, src, row, s, e);
		progress_add(&f.prog, 1);
	}
	for (size_t t = 0; t < l.ntracks; t++)
		close_until(&f, (uint32_t)t, UINT64_MAX);

	for (size_t i = 0; i < m->marks.n && !o->failed; i++) {
		const struct trace_nvtx_mark *k = &m->marks.v[i];
		f.te.n = 0;
		f.in.n = 0;
		pb_uint(&f.te, TE_CATEGORY_IIDS, SRC__COUNT + 1);
		pb_uint(&f.te, TE_TYPE, TYPE_INSTANT);
		pb_uint(&f.te, TE_NAME_IID, name_iid(&f, -1, k->name_id));
		pb_uint(&f.te, TE_TRACK_UUID, l.tracks[l.mark_track[i]].uuid);
		finish_event(&f, k->time, 1);
		progress_add(&f.prog, 1);
	}
	for (size_t i = 0; i < m->metrics.n && !o->failed; i++)
		emit_counter(&f, l.metric_track[i], m->metrics.v[i].time, m->metrics.v[i].value);
	for (size_t i = 0; i < m->cpu.n && !o->failed; i++)
		if (l.cpu_track[i] != UINT32_MAX)
			emit_counter(&f, l.cpu_track[i], m->cpu.v[i].time, l.cpu_value[i]);
	for (size_t i = 0; i < m->memory.n && !o->failed; i++)
		if (l.mem_track[i] != UINT32_MAX)
			emit_counter(&f, l.mem_track[i], m->memory.v[i].time, l.mem_value[i]);
	for (size_t i = 0; i < m->torch_mem.n && !o->failed; i++) {
		const struct trace_torch_mem *x = &m->torch_mem.v[i];
		if (l.torch_track[2 * i] != UINT32_MAX)
			emit_counter(&f, l.torch_track[2 * i], x->time, (double)x->allocated);
		if (l.torch_track[2 * i + 1] != UINT32_MAX)
			emit_counter(&f, l.torch_track[2 * i + 1], x->time, (double)x->reserved);
	}
	progress_end(&f.prog);

	for (size_t t = 0; t < l.ntracks; t++)
		free(f.stacks[t].v);
	free(f.stacks);
	free(f.model_defined);
	free(f.pk.b);
	free(f.te.b);
	free(f.in.b);
	free(f.tmp.b);
	free(f.da.b);
	lay_release(&l);
	return o->failed ? -1 : 0;
}
