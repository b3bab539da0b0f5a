/*
 * nvtx.c - NVTX through NVTX_INJECTION64_PATH (InitializeInjectionNvtx2).
 *
 * The NVTX v3 headers compiled into a program (one instance per shared
 * object) dlopen this library at their first call and hand us their export
 * table; we fill the CORE and CORE2 slots with the handlers below.  Each
 * instance calls us once, so everything here is global and idempotent.
 *
 * Push/pop ranges live on a per-thread stack (struct cl_thread) and are
 * written whole at the pop.  Start/end ranges are written at the start with
 * end == 0 and closed by a TRACE_EV_NVTX_END, from any thread.  A range id
 * carries in its low bit whether the start was recorded, so an end whose
 * start fell outside the capture window writes nothing.
 *
 * Domain handles point at a struct cl_domain, registered string handles at
 * a struct cl_regstr (neither is ever freed: both outlive
 * nvtxDomainDestroy, as NVTX allows the tool).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#if __has_include(<nvtx3/nvToolsExt.h>)
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#define GS_HAVE_NVTX 1
#endif

#ifdef GS_HAVE_NVTX

struct cl_domain {
	uint32_t name_id;
	uint32_t len;
	struct cl_domain *next;
	char name[];
};

static pthread_mutex_t dom_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cl_domain *domains;
static _Atomic uint64_t next_range = 1;
static _Atomic uint64_t capture_range;          /* start/end range that opened capture */
static _Atomic uint32_t capture_name_id;        /* 0 = not yet interned */
static _Atomic uint32_t capture_domain_id;
static char resource_dummy;

/* What an event's attributes say, with strings interned. */
struct ev {
	uint32_t name_id, category, color;
	uint8_t payload_type;
	uint64_t payload;
};

/*
 * The string id of a domain's name.  Interned on every use (a cache hit):
 * after fork() the child's stream must define the name again.
 */
static uint32_t domain_id(nvtxDomainHandle_t d)
{
	const struct cl_domain *dom = (const void *)d;

	return dom ? cl_intern(dom->name, dom->len) : 0;
}

/* @w as UTF-8 in @buf (cut short at @cap); returns the length. */
static size_t utf8_of_wide(const wchar_t *w, char *buf, size_t cap)
{
	size_t n = 0;

	for (; *w && n + 4 < cap; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | (c >> 6));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xe0 | (c >> 12));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x110000) {
			buf[n++] = (char)(0xf0 | (c >> 18));
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[n++] = '?';
		}
	}
	return n;
}

static uint32_t intern_wide(const wchar_t *w)
{
	char buf[1024];

	if (!w)
		return 0;
	return cl_intern(buf, utf8_of_wide(w, buf, sizeof(buf)));
}

static uint32_t intern_ascii(const char *s)
{
	return s ? cl_intern(s, strlen(s)) : 0;
}

/*
 * A registered string: the handle points at its own copy, interned on
 * every use (a cache hit), so that a forked child's stream defines it too.
 */
struct cl_regstr {
	uint32_t len;
	char s[];
};

static uint32_t intern_registered(nvtxStringHandle_t h)
{
	const struct cl_regstr *r = (const void *)h;

	return r ? cl_intern(r->s, r->len) : 0;
}

static nvtxStringHandle_t register_string(const char *s, size_t len)
{
	struct cl_regstr *r;
	int guard = cl_guard_depth;

	if (!len)
		return NULL;
	cl_guard_depth = 1;
	r = malloc(sizeof(*r) + len + 1);   /* lives as long as the process */
	cl_guard_depth = guard;
	if (!r)
		return NULL;
	r->len = (uint32_t)len;
	memcpy(r->s, s, len);
	r->s[len] = 0;
	cl_intern(r->s, len);
	return (nvtxStringHandle_t)(void *)r;
}

static void parse_attr(const nvtxEventAttributes_t *a, struct ev *e)
{
	memset(e, 0, sizeof(*e));
	if (!a || a->size < sizeof(nvtxEventAttributes_t))
		return;   /* version 1 and 2 have the same size; anything smaller is bogus */
	e->category = a->category;
	if (a->colorType == NVTX_COLOR_ARGB)
		e->color = a->color;
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		e->payload_type = TRACE_PAYLOAD_U64;
		e->payload = a->payload.ullValue;
		break;
	case NVTX_PAYLOAD_TYPE_INT64:
		e->payload_type = TRACE_PAYLOAD_I64;
		e->payload = (uint64_t)a->payload.llValue;
		break;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		e->payload_type = TRACE_PAYLOAD_DOUBLE;
		memcpy(&e->payload, &a->payload.dValue, sizeof(double));
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		e->payload_type = TRACE_PAYLOAD_U32;
		e->payload = a->payload.uiValue;
		break;
	case NVTX_PAYLOAD_TYPE_INT32:
		e->payload_type = TRACE_PAYLOAD_I32;
		e->payload = (uint64_t)(int64_t)a->payload.iValue;
		break;
	case NVTX_PAYLOAD_TYPE_FLOAT: {
		double d = a->payload.fValue;
		e->payload_type = TRACE_PAYLOAD_FLOAT;
		memcpy(&e->payload, &d, sizeof(d));
		break;
	}
	default:
		break;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		e->name_id = intern_ascii(a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		e->name_id = intern_wide(a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		e->name_id = intern_registered(a->message.registered);
		break;
	default:
		break;
	}
}

/*
 * The NVTX range names seen while the capture range has not started yet
 * (at most SEEN_MAX distinct, each written once as a TRACE_NAME_NVTX_SEEN
 * name record), so that a run whose range never started can say which
 * ranges it did see (a misspelt -p): `profile` lists them.  Ten names are
 * enough to spot the right one; the check costs a compare per name kept.
 */
#define SEEN_MAX 10
static _Atomic uint32_t seen_ids[SEEN_MAX];
static _Atomic int nseen, capture_seen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_seen(uint32_t name_id)
{
	int n = atomic_load_explicit(&nseen, memory_order_relaxed);
	struct trace_name *r;

	if (n >= SEEN_MAX || atomic_load_explicit(&capture_seen, memory_order_relaxed))
		return;
	for (int i = 0; i < n; i++)
		if (atomic_load_explicit(&seen_ids[i], memory_order_relaxed) == name_id)
			return;
	pthread_mutex_lock(&seen_lock);
	n = atomic_load(&nseen);
	for (int i = 0; i < n; i++)
		if (atomic_load(&seen_ids[i]) == name_id)
			n = SEEN_MAX;
	if (n < SEEN_MAX) {
		atomic_store(&seen_ids[n], name_id);
		atomic_store(&nseen, n + 1);
	}
	pthread_mutex_unlock(&seen_lock);
	if (n >= SEEN_MAX)
		return;
	r = cl_reserve(TRACE_EV_NAME, sizeof(*r));
	if (!r)
		return;
	r->kind = TRACE_NAME_NVTX_SEEN;
	r->id = (uint64_t)n;
	r->pid = cl_pid();
	r->name_id = name_id;
	cl_commit();
}

/* Does a range named @name_id in domain @dom open the capture window? */
static int is_capture(uint32_t name_id, uint32_t dom)
{
	uint32_t want;

	if (cl_config.capture_mode != CL_CAPTURE_NVTX || !name_id)
		return 0;
	want = atomic_load_explicit(&capture_name_id, memory_order_relaxed);
	if (!want) {
		want = intern_ascii(cl_config.capture_name);
		atomic_store(&capture_name_id, want);
		if (cl_config.capture_domain[0])
			atomic_store(&capture_domain_id, intern_ascii(cl_config.capture_domain));
	}
	if (name_id != want || (cl_config.capture_domain[0] && dom != atomic_load(&capture_domain_id))) {
		note_seen(name_id);
		return 0;
	}
	atomic_store_explicit(&capture_seen, 1, memory_order_relaxed);
	return 1;
}

/* ---- push / pop ---- */

static int push(nvtxDomainHandle_t d, const struct ev *e)
{
	struct cl_thread *t;
	struct cl_nvtx_open *o;
	unsigned level;

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed) || !(t = cl_thread_get()))
		return -1;
	level = t->depth++;
	if (level >= CL_NVTX_DEPTH) {
		cl_add_drops(TRACE_DROP_NVTX, 1);
		return (int)level;
	}
	o = &t->stack[level];
	o->domain_id = domain_id(d);
	o->capture = is_capture(e->name_id, o->domain_id);
	if (o->capture)
		cl_capture_begin();
	o->start = cl_now();
	o->name_id = e->name_id;
	o->domain = d;
	o->category = e->category;
	o->color = e->color;
	o->payload_type = e->payload_type;
	o->payload = e->payload;
	return (int)level;
}

static int pop(nvtxDomainHandle_t d)
{
	struct cl_thread *t = cl_self;
	struct cl_nvtx_open *o;
	struct trace_nvtx_range *r;
	uint64_t end;
	unsigned level;

	(void)d;
	if (!t || t == CL_DEAD || !atomic_load_explicit(&cl_live, memory_order_relaxed))
		return -1;
	if (!t->depth) {
		cl_add_drops(TRACE_DROP_NVTX, 1); /* a pop without a push */
		return -1;
	}
	end = cl_now();
	level = --t->depth;
	if (level >= CL_NVTX_DEPTH)
		return (int)level;
	o = &t->stack[level];
	r = cl_reserve(TRACE_EV_NVTX_RANGE, sizeof(*r));
	if (r) {
		r->start = o->start;
		r->end = end;
		r->pid = cl_pid();
		r->tid = t->tid;
		r->end_tid = t->tid;
		r->name_id = o->name_id;
		r->domain_id = o->domain_id;
		r->category = o->category;
		r->color = o->color;
		r->kind = TRACE_NVTX_PUSHPOP;
		r->payload_type = o->payload_type;
		r->level = (uint16_t)level;
		r->payload = o->payload;
		cl_commit();
	}
	if (o->capture)
		cl_capture_end();
	/* a step's end: --steps captures and the step_time trigger (ondemand.c) */
	if (cl_config.on_demand && cl_od_is_step(o->name_id))
		cl_od_step_end(o->start, end);
	return (int)level;
}

static int push_a(const char *msg)
{
	struct ev e = { 0 };

	e.name_id = intern_ascii(msg);
	return push(NULL, &e);
}

static int push_w(const wchar_t *msg)
{
	struct ev e = { 0 };

	e.name_id = intern_wide(msg);
	return push(NULL, &e);
}

static int push_ex(const nvtxEventAttributes_t *a)
{
	struct ev e;

	parse_attr(a, &e);
	return push(NULL, &e);
}

static int pop0(void)
{
	return pop(NULL);
}

static int dom_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct ev e;

	parse_attr(a, &e);
	return push(d, &e);
}

/* ---- start / end ---- */

static nvtxRangeId_t start(nvtxDomainHandle_t d, const struct ev *e)
{
	uint64_t id = atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed) << 1;
	struct trace_nvtx_range *r;
	uint32_t dom;
	int cap;

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return id;
	dom = domain_id(d);   /* interned before cl_reserve(): see collect.h */
	cap = is_capture(e->name_id, dom);
	if (cap) {
		cl_capture_begin();
		atomic_store(&capture_range, id | 1);
	}
	r = cl_reserve(TRACE_EV_NVTX_RANGE, sizeof(*r));
	if (!r)
		return id;
	id |= 1;
	r->start = cl_now();
	r->pid = cl_pid();
	r->tid = cl_tid();
	r->name_id = e->name_id;
	r->domain_id = dom;
	r->category = e->category;
	r->color = e->color;
	r->kind = TRACE_NVTX_STARTEND;
	r->payload_type = e->payload_type;
	r->payload = e->payload;
	r->range_id = id;
	cl_commit();
	return id;
}

static void end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	struct trace_nvtx_end *r;

	(void)d;
	if (!(id & 1) || !atomic_load_explicit(&cl_live, memory_order_relaxed))
		return;
	/* an end is always written once its start was, whatever the capture state */
	r = cl_reserve(TRACE_EV_NVTX_END, sizeof(*r));
	if (r) {
		r->range_id = id;
		r->end = cl_now();
		r->tid = cl_tid();
		cl_commit();
	}
	if (id == atomic_load(&capture_range)) {
		atomic_store(&capture_range, 0);
		cl_capture_end();
	}
}

static nvtxRangeId_t start_a(const char *msg)
{
	struct ev e = { 0 };

	e.name_id = intern_ascii(msg);
	return start(NULL, &e);
}

static nvtxRangeId_t start_w(const wchar_t *msg)
{
	struct ev e = { 0 };

	e.name_id = intern_wide(msg);
	return start(NULL, &e);
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	struct ev e;

	parse_attr(a, &e);
	return start(NULL, &e);
}

static void end0(nvtxRangeId_t id)
{
	end(NULL, id);
}

static nvtxRangeId_t dom_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct ev e;

	parse_attr(a, &e);
	return start(d, &e);
}

/* ---- marks ---- */

static void mark(nvtxDomainHandle_t d, const struct ev *e)
{
	uint32_t dom = domain_id(d);
	struct trace_nvtx_mark *m = cl_reserve(TRACE_EV_NVTX_MARK, sizeof(*m));

	if (!m)
		return;
	m->time = cl_now();
	m->pid = cl_pid();
	m->tid = cl_tid();
	m->name_id = e->name_id;
	m->domain_id = dom;
	m->category = e->category;
	m->color = e->color;
	m->payload_type = e->payload_type;
	m->payload = e->payload;
	cl_commit();
}

static void mark_a(const char *msg)
{
	struct ev e = { 0 };

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return;
	e.name_id = intern_ascii(msg);
	mark(NULL, &e);
}

static void mark_w(const wchar_t *msg)
{
	struct ev e = { 0 };

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return;
	e.name_id = intern_wide(msg);
	mark(NULL, &e);
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	struct ev e;

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return;
	parse_attr(a, &e);
	mark(NULL, &e);
}

static void dom_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct ev e;

	if (!atomic_load_explicit(&cl_live, memory_order_relaxed))
		return;
	parse_attr(a, &e);
	mark(d, &e);
}

/* ---- names ---- */

static void emit_name(unsigned kind, uint32_t dom, uint64_t id, uint32_t name_id)
{
	struct trace_name *n;

	if (!name_id)
		return;
	n = cl_reserve(TRACE_EV_NAME, sizeof(*n));
	if (!n)
		return;
	n->kind = kind;
	n->domain_id = dom;
	n->id = id;
	n->pid = cl_pid();
	n->name_id = name_id;
	cl_commit();
}

static void name_category_a(uint32_t cat, const char *name)
{
	emit_name(TRACE_NAME_CATEGORY, 0, cat, intern_ascii(name));
}

static void name_category_w(uint32_t cat, const wchar_t *name)
{
	emit_name(TRACE_NAME_CATEGORY, 0, cat, intern_wide(name));
}

static void dom_name_category_a(nvtxDomainHandle_t d, uint32_t cat, const char *name)
{
	emit_name(TRACE_NAME_CATEGORY, domain_id(d), cat, intern_ascii(name));
}

static void dom_name_category_w(nvtxDomainHandle_t d, uint32_t cat, const wchar_t *name)
{
	emit_name(TRACE_NAME_CATEGORY, domain_id(d), cat, intern_wide(name));
}

static void name_thread(uint32_t tid, uint32_t name_id)
{
	if (name_id && tid)
		cl_emit_thread(tid, name_id, 0, cl_now());
}

static void name_os_thread_a(uint32_t tid, const char *name)
{
	name_thread(tid, intern_ascii(name));
}

static void name_os_thread_w(uint32_t tid, const wchar_t *name)
{
	name_thread(tid, intern_wide(name));
}

static nvtxStringHandle_t register_string_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return s ? register_string(s, strlen(s)) : NULL;
}

static nvtxStringHandle_t register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[1024];
	size_t n;

	(void)d;
	if (!s)
		return NULL;
	n = utf8_of_wide(s, buf, sizeof(buf));
	return register_string(buf, n);
}

static nvtxDomainHandle_t domain_create(const char *name, size_t len)
{
	struct cl_domain *d;
	int guard = cl_guard_depth;

	cl_guard_depth = 1;
	pthread_mutex_lock(&dom_lock);
	for (d = domains; d; d = d->next)
		if (d->len == len && !memcmp(d->name, name, len))
			break;
	if (!d) {
		d = malloc(sizeof(*d) + len + 1);
		if (d) {
			memcpy(d->name, name, len);
			d->name[len] = 0;
			d->name_id = 0;
			d->len = (uint32_t)len;
			d->next = domains;
			domains = d;
		}
	}
	pthread_mutex_unlock(&dom_lock);
	cl_guard_depth = guard;
	if (!d)
		return NULL;
	d->name_id = cl_intern(d->name, len);
	emit_name(TRACE_NAME_DOMAIN, d->name_id, d->name_id, d->name_id);
	return (nvtxDomainHandle_t)(void *)d;
}

static nvtxDomainHandle_t domain_create_a(const char *name)
{
	return name ? domain_create(name, strlen(name)) : NULL;
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
	char buf[512];
	size_t n = 0;

	if (!name)
		return NULL;
	/* domain names are short identifiers: keep ASCII, replace the rest */
	for (; *name && n + 1 < sizeof(buf); name++)
		buf[n++] = (uint32_t)*name < 0x80 ? (char)*name : '?';
	return domain_create(buf, n);
}

static void domain_destroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static nvtxResourceHandle_t resource_create(nvtxDomainHandle_t d, nvtxResourceAttributes_t *a)
{
	(void)d;
	(void)a;
	return (nvtxResourceHandle_t)(void *)&resource_dummy;
}

static void resource_destroy(nvtxResourceHandle_t r)
{
	(void)r;
}

static void initialize(const void *reserved)
{
	(void)reserved;
}

void cl_nvtx_atfork_child(void)
{
	/* string ids survive fork (definitions are emitted again on use) */
	pthread_mutex_init(&dom_lock, NULL);
	pthread_mutex_init(&seen_lock, NULL);
	atomic_store(&nseen, 0);   /* the child's stream lists its own */
}

#define SLOT(tbl, n, idx, fn) \
	do { if ((unsigned)(idx) <= (n) && (tbl)[idx]) *(tbl)[idx] = (NvtxFunctionPointer)(fn); } while (0)

CL_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	NvtxFunctionTable t;
	unsigned n = 0;

	if (cl_init() < 0 || !(cl_config.trace & CL_TRACE_NVTX) || !get)
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || !cb->GetModuleFunctionTable)
		return 0;
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
		SLOT(t, n, NVTX_CBID_CORE_MarkEx, mark_ex);
		SLOT(t, n, NVTX_CBID_CORE_MarkA, mark_a);
		SLOT(t, n, NVTX_CBID_CORE_MarkW, mark_w);
		SLOT(t, n, NVTX_CBID_CORE_RangeStartEx, start_ex);
		SLOT(t, n, NVTX_CBID_CORE_RangeStartA, start_a);
		SLOT(t, n, NVTX_CBID_CORE_RangeStartW, start_w);
		SLOT(t, n, NVTX_CBID_CORE_RangeEnd, end0);
		SLOT(t, n, NVTX_CBID_CORE_RangePushEx, push_ex);
		SLOT(t, n, NVTX_CBID_CORE_RangePushA, push_a);
		SLOT(t, n, NVTX_CBID_CORE_RangePushW, push_w);
		SLOT(t, n, NVTX_CBID_CORE_RangePop, pop0);
		SLOT(t, n, NVTX_CBID_CORE_NameCategoryA, name_category_a);
		SLOT(t, n, NVTX_CBID_CORE_NameCategoryW, name_category_w);
		SLOT(t, n, NVTX_CBID_CORE_NameOsThreadA, name_os_thread_a);
		SLOT(t, n, NVTX_CBID_CORE_NameOsThreadW, name_os_thread_w);
	}
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
		SLOT(t, n, NVTX_CBID_CORE2_DomainMarkEx, dom_mark_ex);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, dom_start_ex);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRangeEnd, end);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRangePushEx, dom_push_ex);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRangePop, pop);
		SLOT(t, n, NVTX_CBID_CORE2_DomainResourceCreate, resource_create);
		SLOT(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, resource_destroy);
		SLOT(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, dom_name_category_a);
		SLOT(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, dom_name_category_w);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a);
		SLOT(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w);
		SLOT(t, n, NVTX_CBID_CORE2_DomainCreateA, domain_create_a);
		SLOT(t, n, NVTX_CBID_CORE2_DomainCreateW, domain_create_w);
		SLOT(t, n, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
		SLOT(t, n, NVTX_CBID_CORE2_Initialize, initialize);
	}
	return 1;
}

#else /* no NVTX headers at build time: NVTX is not traced */

void cl_nvtx_atfork_child(void)
{
}

#endif
