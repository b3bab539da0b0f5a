/*
 * out.c - checked buffered output, a u64 hash map and
 * names shared by the exporters.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define XOUT_BUF (1u << 20)

int xout_open(struct xout *o, const char *path, int force)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = xstrdup(path);
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
	} else {
		int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
		if (output_check(path, force) < 0) {
			free(o->path);
			o->path = NULL;
			return -1;
		}
		/* never through a symbolic link: with --force the link itself is replaced */
		if (!lstat(path, &st) && S_ISLNK(st.st_mode) && unlink(path) < 0) {
			int e = errno;
			free(o->path);
			o->path = NULL;
			return error("cannot replace '%s': %s", path, strerror(e));
		}
		o->fd = open(path, flags, 0666);
		if (o->fd < 0) {
			int e = errno;
			free(o->path);
			o->path = NULL;
			return error("cannot create '%s': %s", path, strerror(e));
		}
		if (!fstat(o->fd, &st) && S_ISREG(st.st_mode))
			o->is_regular = 1;
	}
	o->cap = XOUT_BUF;
	o->buf = xmalloc(o->cap);
	return 0;
}

void xout_flush_buf(struct xout *o)
{
	size_t off = 0;

	if (o->failed) {
		o->len = 0;
		return;
	}
	while (off < o->len) {
		ssize_t k = write(o->fd, o->buf + off, o->len - off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			error("cannot write '%s': %s", !strcmp(o->path, "-") ? "stdout" : o->path,
			      strerror(errno));
			o->failed = 1;
			break;
		}
		off += (size_t)k;
	}
	o->bytes += off;
	o->len = 0;
}

int xout_close(struct xout *o, int ok)
{
	int ret = 0;

	if (!o->buf)
		return -1;
	if (ok)
		xout_flush_buf(o);
	if (!ok || o->failed)
		ret = -1;
	if (o->fd != STDOUT_FILENO) {
		if (close(o->fd) && !ret) {
			error("cannot write '%s': %s", o->path, strerror(errno));
			ret = -1;
		}
		if (ret && o->is_regular)
			unlink(o->path);
	}
	free(o->buf);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return ret;
}

void xout_u64(struct xout *o, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	xout_write(o, tmp + sizeof(tmp) - n, (size_t)n);
}

void xout_i64(struct xout *o, int64_t v)
{
	if (v < 0) {
		xout_ch(o, '-');
		xout_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		xout_u64(o, (uint64_t)v);
	}
}

void xout_us3(struct xout *o, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);
	char f[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
		      (char)('0' + frac % 10) };

	xout_u64(o, ns / 1000);
	xout_write(o, f, 4);
}

void xout_double(struct xout *o, double v)
{
	char tmp[40];
	int n;

	if (!isfinite(v)) {
		xout_str(o, "null");
		return;
	}
	if (v == (double)(int64_t)v && fabs(v) < 1e15) {
		xout_i64(o, (int64_t)v);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.17g", v);
	/* prefer the shorter form when it reads back the same */
	{
		char s2[40];
		int n2 = snprintf(s2, sizeof(s2), "%.6g", v);
		if (strtod(s2, NULL) == v) {
			xout_write(o, s2, (size_t)n2);
			return;
		}
	}
	xout_write(o, tmp, (size_t)n);
}

void xout_json_str(struct xout *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	xout_ch(o, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		xout_write(o, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': xout_write(o, "\\\"", 2); break;
		case '\\': xout_write(o, "\\\\", 2); break;
		case '\n': xout_write(o, "\\n", 2); break;
		case '\t': xout_write(o, "\\t", 2); break;
		case '\r': xout_write(o, "\\r", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			xout_write(o, u, 6);
		}
		}
	}
	xout_write(o, run, (size_t)(s - run));
	xout_ch(o, '"');
}

void xout_printf(struct xout *o, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		xout_write(o, small, (size_t)n);
	} else {
		char *big = xmalloc((size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		xout_write(o, big, (size_t)n);
		free(big);
	}
}

/* the progress line is util.h's */

/* ---- hash map ---- */

static inline uint64_t mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static void u64map_grow(struct u64map *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 1024;
	uint64_t *nk = xmalloc(ncap * sizeof(*nk)), *nv = xcalloc(ncap, sizeof(*nv));

	memset(nk, 0xff, ncap * sizeof(*nk));
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;
		if (h->keys[i] == UINT64_MAX)
			continue;
		for (j = mix64(h->keys[i]) & (ncap - 1); nk[j] != UINT64_MAX; j = (j + 1) & (ncap - 1))
			;
		nk[j] = h->keys[i];
		nv[j] = h->vals[i];
	}
	free(h->keys);
	free(h->vals);
	h->keys = nk;
	h->vals = nv;
	h->cap = ncap;
}

uint64_t *u64map_get(struct u64map *h, uint64_t key, int create)
{
	size_t j;

	if (key == UINT64_MAX)
		BUG("u64map key UINT64_MAX is reserved");
	if (!h->cap) {
		if (!create)
			return NULL;
		u64map_grow(h);
	}
	for (j = mix64(key) & (h->cap - 1); h->keys[j] != UINT64_MAX; j = (j + 1) & (h->cap - 1))
		if (h->keys[j] == key)
			return &h->vals[j];
	if (!create)
		return NULL;
	if ((h->n + 1) * 10 > h->cap * 7) {
		u64map_grow(h);
		return u64map_get(h, key, create);
	}
	h->keys[j] = key;
	h->vals[j] = 0;
	h->n++;
	return &h->vals[j];
}

void u64map_release(struct u64map *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

/* ---- names ---- */

const char *export_copy_name(unsigned kind)
{
	static const char *const names[] = {
		"Memcpy unknown", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH",
		"Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH",
		"Memcpy PtoP",
	};
	return kind < ARRAY_SIZE(names) ? names[kind] : names[0];
}

const char *export_sync_name(unsigned type)
{
	static const char *const names[] = {
		"Sync unknown", "Sync event", "Sync stream wait event", "Sync stream", "Sync context",
	};
	return type < ARRAY_SIZE(names) ? names[type] : names[0];
}

const char *export_process_name(const struct model *m, uint32_t pid, char *buf, size_t n)
{
	const struct model_process *p = model_process(m, pid);
	const char *s = NULL;

	if (p) {
		s = model_str(m, p->exe_id);
		if (!*s) {
			/* first word of the command line */
			const char *c = model_str(m, p->cmdline_id);
			size_t k = strcspn(c, " ");
			if (k) {
				const char *slash = memrchr(c, '/', k);
				if (slash)
					k -= (size_t)(slash + 1 - c), c = slash + 1;
				snprintf(buf, n, "%.*s", (int)k, c);
				return buf;
			}
		}
	}
	if (s && *s) {
		const char *slash = strrchr(s, '/');
		return slash ? slash + 1 : s;
	}
	snprintf(buf, n, "pid %u", pid);
	return buf;
}

uint64_t export_t0(const struct model *m)
{
	uint64_t t = m->t_min;

	if (m->metrics.n && (!t || m->metrics.v[0].time < t))
		t = m->metrics.v[0].time;
	if (m->cpu.n && (!t || m->cpu.v[0].time < t))
		t = m->cpu.v[0].time;
	return t;
}
