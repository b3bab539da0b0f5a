/*
 * output.c - the progress line, safe output files and terminal colour
 * (util.h).
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- progress ---- */

/*
 * The line appears once a run has lasted half a second (shorter runs show
 * nothing, so quick commands and tests print the same as without a
 * terminal) and is redrawn five times a second at most: often enough to
 * look alive, rarely enough to cost nothing.  progress_add() checks the
 * clock once per PROGRESS_STRIDE items only.
 */
#define PROGRESS_DELAY_NS 500000000ull
#define PROGRESS_EVERY_NS 200000000ull
#define PROGRESS_STRIDE 65536

void progress_init(struct progress *p, int on, const char *what, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->on = on && isatty(STDERR_FILENO);
	p->what = what;
	p->unit = "events";
	p->total = total;
	p->next = p->on ? PROGRESS_STRIDE : UINT64_MAX;
	p->t0 = p->last_ns = now_mono_ns();
}

static void progress_draw(struct progress *p)
{
	uint64_t now = now_mono_ns();

	if (now - p->t0 < PROGRESS_DELAY_NS || (p->shown && now - p->last_ns < PROGRESS_EVERY_NS))
		return;
	p->last_ns = now;
	p->shown = 1;
	if (!p->unit && p->total)
		fprintf(stderr, "\r%s: %3u%%", p->what, (unsigned)(p->done * 100 / p->total));
	else if (p->total)
		fprintf(stderr, "\r%s: %3u%% (%" PRIu64 " of %" PRIu64 " %s)", p->what,
			(unsigned)(p->done * 100 / p->total), p->done, p->total, p->unit);
	else
		fprintf(stderr, "\r%s: %" PRIu64 " %s", p->what, p->done, p->unit ? p->unit : "");
}

void progress_tick(struct progress *p)
{
	p->next = p->done + PROGRESS_STRIDE;
	progress_draw(p);
}

void progress_set(struct progress *p, uint64_t done, uint64_t total)
{
	if (!p->on)
		return;
	p->done = done;
	p->total = total;
	progress_draw(p);
}

void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	progress_set(ctx, done, total);
}

void progress_end(struct progress *p)
{
	if (p->shown && !p->unit)
		fputs("\r\033[K", stderr);
	else if (p->shown)
		fprintf(stderr, "\r%s: done (%" PRIu64 " %s)            \n", p->what, p->done, p->unit);
	p->shown = 0;
}

/* ---- output files ---- */

static int is_stdout(const char *path)
{
	return !path || !strcmp(path, "-");
}

int output_check(const char *path, int force)
{
	struct stat st;

	if (is_stdout(path))
		return 0;
	if (!*path)
		return error("empty output file name");
	if (!lstat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return error("cannot create '%s': %s", path, strerror(EISDIR));
		/* a device or a pipe (/dev/null, a FIFO) is written to, not replaced */
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return access(path, W_OK) < 0
				? error("cannot write '%s': %s", path, strerror(errno)) : 0;
		if (!force)
			return error("output '%s' exists (use --force to overwrite)", path);
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			return error("cannot replace '%s': not a regular file", path);
	} else if (errno != ENOENT) {
		return error("cannot create '%s': %s", path, strerror(errno));
	}
	return output_dir_writable(path);
}

int output_dir_writable(const char *path)
{
	char *copy = xstrdup(path), *dir = dirname(copy);
	struct stat st;
	int ret = 0;

	if (stat(dir, &st) < 0)
		ret = error("cannot create '%s': %s", path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		ret = error("cannot create '%s': %s", path, strerror(ENOTDIR));
	else if (access(dir, W_OK | X_OK) < 0)
		ret = error("cannot create '%s': %s", path, strerror(errno));
	free(copy);
	return ret;
}

int output_open(struct output_file *o, const char *path, int force)
{
	struct stat st;
	int fd = -1;

	memset(o, 0, sizeof(*o));
	o->force = force;
	if (is_stdout(path)) {
		o->f = stdout;
		return 0;
	}
	if (output_check(path, force) < 0)
		return -1;
	o->path = xstrdup(path);
	if (!lstat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		/* written directly; O_NOFOLLOW: the lstat() above saw no link */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			o->f = fdopen(fd, "w");
		if (!o->f) {
			error("cannot write '%s': %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			free(o->path);
			o->path = NULL;
			return -1;
		}
		return 0;
	}
	o->tmp = xstrfmt("%s.tmpXXXXXX", path);
	fd = mkstemp(o->tmp);   /* O_EXCL: never an existing file or a link's target */
	if (fd < 0) {
		error("cannot create '%s': %s", o->tmp, strerror(errno));
		free(o->tmp);
		free(o->path);
		o->tmp = o->path = NULL;
		return -1;
	}
	/* mkstemp() makes it 0600; an output is an ordinary file (0666 less the umask) */
	{
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		error("cannot create '%s': %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		free(o->path);
		o->tmp = o->path = NULL;
		return -1;
	}
	return 0;
}

static void output_free(struct output_file *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->f = NULL;
}

int output_commit(struct output_file *o)
{
	int ret = 0;

	if (!o->f)
		return -1;
	if (o->f == stdout) {
		o->f = NULL;
		return 0;   /* main() checks standard output (finish_stdout) */
	}
	if (close_checked(o->f, o->path) < 0) {
		if (o->tmp)
			unlink(o->tmp);
		output_free(o);
		return -1;
	}
	if (!o->tmp) {   /* a device or a pipe, written directly */
		output_free(o);
		return 0;
	}
	if (o->force) {
		if (rename(o->tmp, o->path) < 0)
			ret = error("cannot replace '%s': %s", o->path, strerror(errno));
	} else if (link(o->tmp, o->path) < 0) {
		if (errno == EEXIST)
			ret = error("output '%s' exists (use --force to overwrite)", o->path);
		else if (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP) {
			/* a file system without hard links: the check above, then rename */
			struct stat st;
			if (!lstat(o->path, &st))
				ret = error("output '%s' exists (use --force to overwrite)", o->path);
			else if (rename(o->tmp, o->path) < 0)
				ret = error("cannot create '%s': %s", o->path, strerror(errno));
		} else {
			ret = error("cannot create '%s': %s", o->path, strerror(errno));
		}
	}
	unlink(o->tmp);   /* after link(), or after a failure; gone already after rename() */
	output_free(o);
	return ret;
}

void output_abort(struct output_file *o)
{
	if (o->f && o->f != stdout) {
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
	}
	output_free(o);
}

/* ---- colour ---- */

static int color_mode = -1;   /* -1 auto, 0 never, 1 always */

int color_set_mode(const char *mode)
{
	if (!mode || !strcmp(mode, "always") || !strcmp(mode, "yes") || !strcmp(mode, "true"))
		color_mode = 1;
	else if (!strcmp(mode, "never") || !strcmp(mode, "no") || !strcmp(mode, "false"))
		color_mode = 0;
	else if (!strcmp(mode, "auto"))
		color_mode = -1;
	else
		return error("unknown --color '%s' (auto, always or never)", mode);
	return 0;
}

int color_on(FILE *f)
{
	const char *nc = getenv("NO_COLOR");

	if (color_mode >= 0)
		return color_mode;
	if (nc && *nc)
		return 0;
	return isatty(fileno(f));
}

const char *color(FILE *f, enum color c)
{
	static const char *const sgr[] = {
		[COLOR_RESET] = "\033[m", [COLOR_RED] = "\033[31m", [COLOR_YELLOW] = "\033[33m",
		[COLOR_GREEN] = "\033[32m", [COLOR_BOLD] = "\033[1m", [COLOR_DIM] = "\033[2m",
	};

	return color_on(f) ? sgr[c] : "";
}
