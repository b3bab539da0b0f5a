/*
 * strings.c - the string table: cl_intern() gives every distinct string one
 * id in this process's stream and defines it there on first use (again in
 * every new stream: after exec failed, in a forked child); a per-thread
 * cache (struct cl_icache) answers repeated pointers without the lock.
 * Also the UTF-8 cleaning of byte strings (command lines, paths).
 */
#include "internal.h"
#include "../util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct istr {
	uint64_t hash;
	uint32_t len, id;
	uint32_t gen;             /* stream generation it was last defined in */
	char s[];
};
pthread_mutex_t cl_str_lock = PTHREAD_MUTEX_INITIALIZER;
static struct istr **str_slots;
static size_t str_nslots, str_n;
static struct istr **str_by_id;      /* by id (ids also number strings not in the table: gaps) */
static size_t str_by_id_n;
_Atomic uint32_t cl_str_next_id = 1;
_Atomic uint32_t cl_str_gen = 1;     /* bumped for every new stream */

static struct istr *str_find_or_add(const char *s, size_t len, uint64_t h)
{
	size_t mask, i;
	struct istr *e;

	if (str_n * 2 >= str_nslots) {
		size_t n = str_nslots ? str_nslots * 2 : 1024;
		struct istr **slots = calloc(n, sizeof(*slots));
		if (!slots)
			return NULL;
		for (size_t k = 0; k < str_nslots; k++) {
			if (!str_slots[k])
				continue;
			for (i = str_slots[k]->hash & (n - 1); slots[i]; i = (i + 1) & (n - 1))
				;
			slots[i] = str_slots[k];
		}
		free(str_slots);
		str_slots = slots;
		str_nslots = n;
	}
	mask = str_nslots - 1;
	for (i = h & mask; (e = str_slots[i]); i = (i + 1) & mask)
		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return e;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->hash = h;
	e->len = (uint32_t)len;
	e->id = atomic_fetch_add(&cl_str_next_id, 1);
	e->gen = 0;
	memcpy(e->s, s, len);
	e->s[len] = 0;
	str_slots[i] = e;
	str_n++;
	if (e->id >= str_by_id_n) {
		/* the id index (cl_str_copy); without it a look-up only scans */
		size_t n = str_by_id_n ? str_by_id_n : 1024;
		struct istr **v;
		while (n <= e->id)
			n *= 2;
		v = realloc(str_by_id, n * sizeof(*v));
		if (v) {
			memset(v + str_by_id_n, 0, (n - str_by_id_n) * sizeof(*v));
			str_by_id = v;
			str_by_id_n = n;
		}
	}
	if (e->id < str_by_id_n)
		str_by_id[e->id] = e;
	return e;
}

static void emit_string(uint32_t id, const char *s, size_t len)
{
	struct trace_string *r = cl_reserve(TRACE_EV_STRING, sizeof(*r) + len);

	if (!r)
		return;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
	cl_commit();
}

uint32_t cl_intern(const char *s, size_t len)
{
	struct cl_thread *t = cl_self;
	uint32_t gen = atomic_load_explicit(&cl_str_gen, memory_order_relaxed), id;
	struct cl_icache *c = NULL;
	struct istr *e;
	int define, guard;

	if (!s || !len || !atomic_load_explicit(&cl_live, memory_order_relaxed))
		return 0;
	if (len > CL_STR_MAX)
		len = CL_STR_MAX;
	if (t && t != CL_DEAD) {
		uintptr_t p = (uintptr_t)s;
		c = &t->icache[((p >> 3) ^ (p >> 12)) & (CL_ICACHE - 1)];
		if (c->ptr == s && c->len == len && c->gen == gen && !memcmp(c->copy, s, len))
			return c->id;
	}
	guard = cl_guard_depth;
	cl_guard_depth = 1;
	pthread_mutex_lock(&cl_str_lock);
	e = str_find_or_add(s, len, hash_bytes(s, len));
	define = e && e->gen != gen;
	if (define)
		e->gen = gen;
	pthread_mutex_unlock(&cl_str_lock);
	if (!e) {
		cl_guard_depth = guard;
		return 0;
	}
	id = e->id;
	if (define) {
		struct cl_thread *me = cl_self;
		size_t before = me && me != CL_DEAD && me->blk ? me->pos : (size_t)-1;
		emit_string(id, e->s, len);
		me = cl_self;
		if (!me || me == CL_DEAD || !me->blk || me->pos == before) {
			/* the definition was dropped: let a later use define it */
			pthread_mutex_lock(&cl_str_lock);
			e->gen = 0;
			pthread_mutex_unlock(&cl_str_lock);
		}
	}
	t = cl_self;
	if (t && t != CL_DEAD) {
		uintptr_t p = (uintptr_t)s;
		c = &t->icache[((p >> 3) ^ (p >> 12)) & (CL_ICACHE - 1)];
		c->ptr = s;
		c->copy = e->s;
		c->len = (uint32_t)len;
		c->id = id;
		c->gen = gen;
	}
	cl_guard_depth = guard;
	return id;
}

void cl_warning(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	struct trace_warning *w;
	uint32_t id;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	id = cl_intern(buf, strlen(buf));
	w = cl_reserve(TRACE_EV_WARNING, sizeof(*w));
	if (!w)
		return;
	w->time = cl_now();
	w->pid = cl_pid();
	w->message_id = id;
	cl_commit();
}

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t k;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return k;
}

/*
 * Command lines and paths are bytes, the report's strings are UTF-8 text
 * (JSON, HTML, Perfetto): every byte that is not part of a valid sequence
 * becomes '?'.
 */
void cl_utf8_clean(char *s, size_t n)
{
	unsigned char *u = (unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(u + i, n - i);
		if (!k) {
			u[i++] = '?';
			continue;
		}
		i += k;
	}
}

/*
 * cl_str_copy - the string of id @id into @buf (at most @cap - 1 bytes and
 * a NUL); its length, or 0 when no string has that id.  Takes the table's
 * lock: for a name's first sight (the step detector caches the answer).
 */
size_t cl_str_copy(uint32_t id, char *buf, size_t cap)
{
	size_t n = 0;

	if (!id || !cap)
		return 0;
	pthread_mutex_lock(&cl_str_lock);
	if (id < str_by_id_n && str_by_id[id]) {
		const struct istr *e = str_by_id[id];
		n = e->len < cap - 1 ? e->len : cap - 1;
		memcpy(buf, e->s, n);
	} else {
		for (size_t i = 0; i < str_nslots; i++) {
			const struct istr *e = str_slots[i];
			if (e && e->id == id) {
				n = e->len < cap - 1 ? e->len : cap - 1;
				memcpy(buf, e->s, n);
				break;
			}
		}
	}
	pthread_mutex_unlock(&cl_str_lock);
	buf[n] = 0;
	return n;
}
