/*
 * util.h - small shared helpers: error reporting, checked allocation,
 * growable arrays, string buffers, interned string tables, CRC-32C, clocks.
 *
 * Error discipline (after git's usage.c): library code reports with error(),
 * which prints "error: ..." on stderr and returns -1, so call sites read
 *   return error("cannot open '%s': %s", path, strerror(errno));
 * Only main() and the x*alloc() wrappers exit.  Programmer mistakes are BUG().
 * Message grammar: lower case, no final full stop, subject in quotes.
 */
#ifndef GS_UTIL_H
#define GS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GS_UNUSED(x) ((void)(x))

int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void bug_fn(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
#define BUG(...) bug_fn(__FILE__, __LINE__, __VA_ARGS__)

/* Set the program name printed before messages ("gpuscope"); NULL for none. */
void set_error_prefix(const char *prefix);
/* When set, error() and warning() are silent (used by probes that try a format). */
void set_error_quiet(int quiet);

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A double read from outside (a replayed NVML file, an imported trace) as an
 * integer.  A plain cast of NaN or of a value outside the target's range is
 * undefined behaviour (the replay fuzz target found 9e15 cast to unsigned),
 * so these clamp to the range and read NaN as 0.
 */
static inline unsigned dbl_u32(double v)
{
	return !(v > 0) ? 0 : v >= 4294967295.0 ? 4294967295u : (unsigned)v;
}
static inline int dbl_int(double v)
{
	return v != v ? 0 : v <= -2147483648.0 ? -2147483647 - 1
	       : v >= 2147483647.0 ? 2147483647 : (int)v;
}
static inline uint64_t dbl_u64(double v)
{
	return !(v > 0) ? 0 : v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)v;
}

/*
 * ALLOC_GROW - make room for at least @nr elements in @x (capacity @alloc).
 * As git's ALLOC_GROW: grows by 3/2, never shrinks.
 */
#define alloc_nr(x) (((x) + 16) * 3 / 2)
#define ALLOC_GROW(x, nr, alloc)                                            \
	do {                                                                \
		if ((size_t)(nr) > (size_t)(alloc)) {                       \
			if (alloc_nr(alloc) < (size_t)(nr))                 \
				(alloc) = (nr);                             \
			else                                                \
				(alloc) = alloc_nr(alloc);                  \
			(x) = xrealloc((x), (size_t)(alloc) * sizeof(*(x))); \
		}                                                           \
	} while (0)

/* strbuf - a growable NUL-terminated byte buffer; owns buf. */
struct strbuf {
	size_t len, alloc;
	char *buf;
};
#define STRBUF_INIT { 0, 0, NULL }
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Append @s escaped as a JSON string body (no surrounding quotes). */
void strbuf_add_json_str(struct strbuf *sb, const char *s);

/*
 * strtab - interned strings.  Id 0 is always the empty string, so a zeroed
 * string reference reads as "".  Ids are dense (0..nr-1); strtab owns copies.
 */
struct strtab {
	char **str;       /* id -> string */
	uint32_t *len;
	uint32_t nr, alloc;
	uint32_t *slots;  /* open-addressing hash: id+1, 0 = empty */
	uint32_t nslots;
};
void strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s);
uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t len);
/* Returns the id of @s, or UINT32_MAX when it is not interned. */
uint32_t strtab_find(const struct strtab *t, const char *s);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->nr ? t->str[id] : "";
}

uint32_t crc32c(uint32_t crc, const void *data, size_t len);
uint64_t hash_bytes(const void *data, size_t len); /* FNV-1a 64 */

/* Clocks, in nanoseconds. */
uint64_t now_mono_ns(void);     /* CLOCK_MONOTONIC: the clock of every report */
uint64_t now_realtime_ns(void); /* CLOCK_REALTIME */

/* Parse "1.5s", "200ms", "10us", "5ns", "3" (seconds by default) into ns. */
int parse_duration_ns(const char *s, uint64_t *out, const char *default_unit);
/*
 * Parse a share: "5%", "0.05", or "5" (a bare number of 1 or more is a
 * percentage) into a fraction.  Returns 0, or -1 when malformed or negative.
 */
int parse_fraction(const char *s, double *out);
/* Format @ns with an auto unit into @buf ("12.3 ms"). */
const char *fmt_duration(char *buf, size_t n, double ns);
/* Format a byte count ("4.0 MiB"). */
const char *fmt_bytes(char *buf, size_t n, double bytes);
/*
 * A demangled kernel name as a person reads it on one line, into @buf:
 * without the "void " return type and the parameter list, and, when still
 * longer than @max, with its template arguments shown as "<...>", then cut
 * with "...".  "void at::native::k<float, 4>(Acc<float, 2>, int)" is
 * "at::native::k<float, 4>".  Full names stay in stats, dump and exports.
 */
const char *kernel_label(char *buf, size_t n, const char *name, size_t max);

/*
 * kernel_base_name - a demangled kernel name's base name, as nsys's
 * shortName (and its ":base" reports) give it: the function's own name
 * without return type, scopes, template arguments and parameter list.
 * "void at::native::(anonymous namespace)::max_pool_forward_nchw<float,
 * float>(int, float const*)" is "max_pool_forward_nchw";
 * "multi_tensor_apply_kernel<TensorListMetadata<4>, ...>" (no parameters)
 * is "multi_tensor_apply_kernel"; a plain C name is itself.  The base name
 * is a part of @name: returns its start and sets *@len; @name itself (with
 * *@len its length) where no base name can be told (unbalanced brackets).
 */
const char *kernel_base_name(const char *name, size_t *len);

/*
 * Flush and check stdout at exit; a closed pipe or full disk becomes an
 * error with exit status 1 (git's run_builtin).  Returns 0 or -1.
 */
int finish_stdout(void);
/* fclose() @f and report a write error for @path; returns 0 or -1. */
int close_checked(FILE *f, const char *path);


/*
 * progress - a progress line on stderr for long runs, shown only when stderr
 * is a terminal and only after the run has lasted PROGRESS_DELAY_NS (short
 * runs print nothing), redrawn at most every PROGRESS_EVERY_NS.
 * @unit names what is counted ("events"); NULL shows a percentage only and
 * erases the line at the end.  progress_add() is cheap: it only compares
 * with a next mark before doing any work.
 */
struct progress {
	int on;
	const char *what, *unit;
	uint64_t total, done, next;
	uint64_t t0, last_ns;
	int shown;
};
void progress_init(struct progress *p, int on, const char *what, uint64_t total);
void progress_tick(struct progress *p);
static inline void progress_add(struct progress *p, uint64_t n)
{
	p->done += n;
	if (p->done >= p->next)
		progress_tick(p);
}
/* Set the absolute position (bytes read of @total, say); for reader callbacks. */
void progress_set(struct progress *p, uint64_t done, uint64_t total);
/* A callback form of progress_set() for model_load's sink (ctx is the progress). */
void progress_cb(void *ctx, uint64_t done, uint64_t total);
void progress_end(struct progress *p);

/*
 * output_file - a file a command writes, made safe: an existing file is
 * refused unless @force, a symbolic link is never written through, and the
 * path only ever holds a whole file.  The data goes to a temporary in the
 * same directory ("PATH.tmpXXXXXX"); output_commit() moves it into place:
 * with @force by rename() (which replaces a link, not its target), without
 * by link() (which fails when anything, even a dangling link, is at the
 * path), so a file that appeared meanwhile is never clobbered.  "-" (or
 * NULL) is standard output, written directly.
 */
struct output_file {
	char *path, *tmp;
	FILE *f;
	int force;
};
/*
 * output_check - whether @path may be written: 0, or -1 after an error
 * ("output 'P' exists (use --force to overwrite)", "... is a directory",
 * an unwritable directory).  Run it for every output before any work.
 */
int output_check(const char *path, int force);
/* Whether the directory @path would be created in exists and is writable: 0, or -1 after an error. */
int output_dir_writable(const char *path);
/* output_open - output_check() and create the temporary; 0 or -1 (said why). */
int output_open(struct output_file *o, const char *path, int force);
/* output_commit - close (checked) and move into place; 0 or -1 (temporary removed). */
int output_commit(struct output_file *o);
/* output_abort - close and remove the temporary (after a failed write). */
void output_abort(struct output_file *o);

/*
 * Colour on a terminal: color_set_mode("auto"|"always"|"never"), NULL
 * meaning "always" (--color without a value); "auto" (the default) is on
 * when the stream is a terminal and NO_COLOR is unset or empty
 * (no-color.org).  -1 for an unknown mode (said why).
 */
int color_set_mode(const char *mode);
int color_on(FILE *f);
/* ANSI SGR sequences, or "" when colour is off for @f */
enum color { COLOR_RESET, COLOR_RED, COLOR_YELLOW, COLOR_GREEN, COLOR_BOLD, COLOR_DIM };
const char *color(FILE *f, enum color c);

#endif
