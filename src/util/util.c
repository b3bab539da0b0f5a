/*
 * util.c - see util.h.
 */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *error_prefix = "gpuscope";
static int error_quiet;

void set_error_prefix(const char *prefix) { error_prefix = prefix; }
void set_error_quiet(int quiet) { error_quiet = quiet; }

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	if (error_prefix)
		fprintf(stderr, "%s: %s: %s\n", error_prefix, kind, msg);
	else
		fprintf(stderr, "%s: %s\n", kind, msg);
}

int error(const char *fmt, ...)
{
	va_list ap;

	if (error_quiet)
		return -1;
	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (error_quiet)
		return;
	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal", fmt, ap);
	va_end(ap);
	exit(2);
}

void bug_fn(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "BUG: %s:%d: %s\n", file, line, msg);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die("out of memory allocating %zu bytes", n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!sb.buf)
		return xstrdup("");
	return sb.buf;
}

/* strbuf */

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 > sb->alloc) {
		size_t want = sb->len + extra + 1;
		sb->alloc = want > sb->alloc * 3 / 2 ? want : sb->alloc * 3 / 2;
		if (sb->alloc < 64)
			sb->alloc = 64;
		sb->buf = xrealloc(sb->buf, sb->alloc);
		if (sb->len == 0)
			sb->buf[0] = '\0';
	}
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed");
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

void strbuf_add_json_str(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': strbuf_add(sb, "\\\"", 2); break;
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		default:
			if (c < 0x20)
				strbuf_addf(sb, "\\u%04x", c);
			else
				strbuf_addch(sb, c);
		}
	}
}

/* strtab */

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	strtab_intern(t, "");
}

void strtab_release(struct strtab *t)
{
	for (uint32_t i = 0; i < t->nr; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void strtab_rehash(struct strtab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->nslots = n;
	for (uint32_t id = 0; id < t->nr; id++) {
		uint32_t h = (uint32_t)hash_bytes(t->str[id], t->len[id]) & (n - 1);
		while (t->slots[h])
			h = (h + 1) & (n - 1);
		t->slots[h] = id + 1;
	}
}

static uint32_t strtab_lookup(const struct strtab *t, const char *s, size_t len, uint32_t *slot)
{
	uint32_t h;

	if (!t->nslots)
		return UINT32_MAX;
	h = (uint32_t)hash_bytes(s, len) & (t->nslots - 1);
	while (t->slots[h]) {
		uint32_t id = t->slots[h] - 1;
		if (t->len[id] == len && !memcmp(t->str[id], s, len))
			return id;
		h = (h + 1) & (t->nslots - 1);
	}
	if (slot)
		*slot = h;
	return UINT32_MAX;
}

uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t len)
{
	uint32_t slot = 0, id;

	if ((t->nr + 1) * 2 > t->nslots)
		strtab_rehash(t);
	id = strtab_lookup(t, s, len, &slot);
	if (id != UINT32_MAX)
		return id;
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 256;
		t->str = xrealloc(t->str, t->alloc * sizeof(*t->str));
		t->len = xrealloc(t->len, t->alloc * sizeof(*t->len));
	}
	id = t->nr++;
	t->str[id] = xstrndup(s, len);
	t->len[id] = (uint32_t)len;
	t->slots[slot] = id + 1;
	return id;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}

uint32_t strtab_find(const struct strtab *t, const char *s)
{
	return strtab_lookup(t, s, strlen(s), NULL);
}

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).  x86-64 CPUs since
 * 2008 compute it in hardware (SSE4.2 crc32 instruction, about 20 times the
 * speed of a table); elsewhere a byte-wise table.  Checksums are on the
 * path of every chunk written and read, so the speed shows in `stats`.
 */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c_table(uint32_t crc, const unsigned char *p, size_t len)
{
	if (!crc_table[1])
		crc_init();
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc32c_hw(crc, data, len);
#endif
	return ~crc32c_table(crc, data, len);
}

uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ull;

	while (len--) {
		h ^= *p++;
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

uint64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t now_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int parse_duration_ns(const char *s, uint64_t *out, const char *default_unit)
{
	char *end;
	double v;
	const char *unit;
	double mul;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0 || !isfinite(v))
		return -1;
	unit = *end ? end : default_unit;
	if (!strcmp(unit, "s"))
		mul = 1e9;
	else if (!strcmp(unit, "ms"))
		mul = 1e6;
	else if (!strcmp(unit, "us"))
		mul = 1e3;
	else if (!strcmp(unit, "ns"))
		mul = 1;
	else
		return -1;
	*out = (uint64_t)(v * mul + 0.5);
	return 0;
}

int parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0 || !isfinite(v))
		return -1;
	if (*end == '%' && !end[1]) {
		*out = v / 100;
		return 0;
	}
	if (*end)
		return -1;
	*out = v >= 1 ? v / 100 : v;
	return 0;
}

const char *fmt_duration(char *buf, size_t n, double ns)
{
	double a = fabs(ns);

	if (a >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.3f us", ns / 1e3);
	else
		snprintf(buf, n, "%.0f ns", ns);
	return buf;
}

const char *fmt_bytes(char *buf, size_t n, double bytes)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f B", bytes);
	else
		snprintf(buf, n, "%.1f %s", bytes, units[u]);
	return buf;
}

const char *kernel_label(char *buf, size_t n, const char *name, size_t max)
{
	size_t len, out = 0;
	int depth = 0;

	if (!n)
		return buf;
	if (!strncmp(name, "void ", 5))
		name += 5;
	len = strlen(name);
	/* the parameter list: the group that closes at the very end */
	if (len && name[len - 1] == ')') {
		size_t i = len;
		while (i-- > 0) {
			depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
			if (!depth)
				break;
		}
		if (!depth && i > 0 && i < len)
			len = i;
	}
	if (max < 4)
		max = 4;
	if (len > max) {
		/* template arguments collapsed, when the brackets balance */
		depth = 0;
		for (size_t i = 0; i < len && out + 1 < n; i++) {
			if (name[i] == '<' && depth++ == 0) {
				out += (size_t)snprintf(buf + out, n - out, "<...");
				out = out < n ? out : n - 1;
			} else if (name[i] == '>' && depth > 0 && --depth == 0) {
				buf[out++] = '>';
			} else if (!depth) {
				buf[out++] = name[i];
			}
		}
		buf[out] = '\0';
		if (depth)
			out = 0;    /* unbalanced: cut the name itself */
	}
	if (!out) {
		snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), name);
		out = strlen(buf);
	}
	if (out > max && max + 1 <= n)
		snprintf(buf + max - 3, 4, "...");
	return buf;
}

const char *kernel_base_name(const char *name, size_t *len)
{
	/*
	 * One pass at bracket depth 0: a component starts after a space or
	 * "::" and its name ends at its first '<'; a '(' that opens a
	 * component is a scope like "(anonymous namespace)", any other '(' is
	 * the parameter list, where the function name ends.  Inside template
	 * arguments and scope parentheses everything is skipped.
	 */
	size_t comp = 0, comp_end = SIZE_MAX, i;
	int angle = 0, paren = 0;

	for (i = 0; name[i]; i++) {
		char c = name[i];
		if (angle) {
			angle += c == '<' ? 1 : c == '>' ? -1 : 0;
			continue;
		}
		if (paren) {
			paren += c == '(' ? 1 : c == ')' ? -1 : 0;
			continue;
		}
		if (c == '<') {
			if (comp_end == SIZE_MAX)
				comp_end = i;
			angle = 1;
		} else if (c == '(') {
			if (i != comp)
				break; /* the parameter list */
			paren = 1;
		} else if (c == ' ' || (c == ':' && name[i + 1] == ':')) {
			i += c == ':';
			comp = i + 1;
			comp_end = SIZE_MAX;
		}
	}
	if (comp_end == SIZE_MAX)
		comp_end = i;
	if (angle || paren || comp_end <= comp || name[comp] == '(') {
		*len = strlen(name);
		return name;
	}
	*len = comp_end - comp;
	return name + comp;
}

int finish_stdout(void)
{
	if (fflush(stdout) || ferror(stdout))
		return error("write failure on standard output: %s",
			     errno ? strerror(errno) : "unknown error");
	if (fclose(stdout) && errno != EBADF)
		return error("close failed on standard output: %s", strerror(errno));
	return 0;
}

int close_checked(FILE *f, const char *path)
{
	int bad = ferror(f);
	int saved = errno;

	if (fclose(f) || bad)
		return error("cannot write '%s': %s", path,
			     strerror(bad ? (saved ? saved : EIO) : errno));
	return 0;
}
