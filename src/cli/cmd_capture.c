/*
 * cmd_capture.c - `gpuscope capture PID|NAME`: trigger a capture in a
 * program running under `gpuscope profile --on-demand` (docs/always-on.md),
 * from another shell, a monitor alert (--on-alert) or a Prometheus
 * alert's webhook script.
 *
 * Each process of an on-demand run listens on a Unix socket DIR/PID.sock
 * (src/collect/ondemand.c), DIR being the user's private directory
 * (trigger.h: $XDG_RUNTIME_DIR/gpuscope or /tmp/gpuscope-UID, 0700, owned
 * by the user; this command refuses any other).  A PID names one process;
 * a NAME every process of the run whose report is NAME (`profile -o NAME`).
 * The request is one line, "capture STEPS DURATION_NS TRIGGER"; the answer
 * "ok ID" or "error WHY".  --list asks each socket for "info".
 */
#include "commands.h"
#include "../collect/env.h"
#include "../collect/trigger.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char capture_usage[] =
	"gpuscope capture [--duration S | --steps N] PID|NAME\n   or: gpuscope capture --list | --metrics";

enum { OPT_DURATION = 'd', OPT_STEPS = 'n', OPT_LIST = 'l', OPT_METRICS = 256 };

static const struct cli_opt capture_opts[] = {
	{ "duration", 'd', OPT_DURATION, ARG_REQUIRED, "S",
	  "record S seconds (default 10 when --steps is not given)", NULL, 0 },
	{ "steps", 'n', OPT_STEPS, ARG_REQUIRED, "N",
	  "record the next N steps (NVTX ranges named by profile's --step-range)", NULL, 0 },
	{ "list", 'l', OPT_LIST, ARG_NONE, NULL,
	  "list the on-demand processes of this user: pid, report name, captures, state", NULL, 0 },
	{ "metrics", 0, OPT_METRICS, ARG_NONE, NULL,
	  "print their step time, steps and captures in Prometheus' text format\n"
	  "(for node_exporter's textfile collector; docs/always-on.md)", NULL, 0 },
	{ 0 },
};

const struct cli_cmd cli_capture = {
	.name = "capture",
	.synopsis = capture_usage,
	.summary = "trigger a capture in a program run by `profile --on-demand`",
	.description = "Asks a process run by `gpuscope profile --on-demand` (PID), or every process "
		       "of the run whose report is NAME, to record a capture now: CUDA tracing on for "
		       "S seconds or N steps, with the flight recorder's last seconds before it.  Only "
		       "the user who runs the program (or root) can trigger it (docs/always-on.md).",
	.opts = capture_opts,
	.example = "gpuscope capture --duration 5 12345\ngpuscope capture --steps 20 train",
	.args = "<pid>",
};

/* Default length of a capture: long enough for a few steps of most jobs, short enough to be cheap. */
#define CAPTURE_DEFAULT_S 10

/* A number of steps: digits only, 1..1000000. */
static int parse_steps(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || !v || v > 1000000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Connect to @path; the socket, or -1 with errno. */
static int connect_to(const char *path)
{
	struct sockaddr_un a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Send @req on @path and read the one-line answer into @ans.  The collector
 * answers from its writer thread, which wakes at least every 50 ms: a
 * second is plenty.  0, or -1 with errno.
 */
static int ask(const char *path, const char *req, char *ans, size_t cap)
{
	int fd = connect_to(path);
	size_t n = 0;

	ans[0] = 0;
	if (fd < 0)
		return -1;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	while (n + 1 < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t k;
		if (poll(&p, 1, 2000) <= 0)
			break;
		k = read(fd, ans + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(ans, '\n', n))
			break;
	}
	ans[n] = 0;
	if (n && ans[n - 1] == '\n')
		ans[n - 1] = 0;
	close(fd);
	if (!n) {
		errno = ETIMEDOUT;
		return -1;
	}
	return 0;
}

/* Why a process has no usable trigger socket, as one line. */
static int explain(pid_t pid, const char *path, int connect_errno)
{
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return error("no such process %ld", (long)pid);
	if (kill(pid, 0) < 0 && errno == EPERM)
		return error("process %ld is not yours", (long)pid);
	if (connect_errno == ENOENT || connect_errno == ECONNREFUSED)
		return error("process %ld is not profiled on demand (no trigger socket '%s'; "
			     "run it with `gpuscope profile --on-demand`)", (long)pid, path);
	return error("cannot reach process %ld at '%s': %s", (long)pid, path, strerror(connect_errno));
}

/* Trigger the process behind @path; 0 or -1. */
/* Where "capture K started" lines go: standard output, standard error for profile's own triggers. */
static FILE *cap_out;

static int trigger_one(pid_t pid, const char *path, const char *req, const char *what)
{
	char ans[512];

	if (ask(path, req, ans, sizeof(ans)) < 0)
		return explain(pid, path, errno);
	if (!strncmp(ans, "ok ", 3)) {
		fprintf(cap_out ? cap_out : stdout, "%scapture %s started in process %ld (%s)\n",
			cap_out == stderr ? "gpuscope: " : "", ans + 3, (long)pid, what);
		return 0;
	}
	if (!strncmp(ans, "error ", 6))
		return error("process %ld: %s", (long)pid, ans + 6);
	return error("process %ld: unexpected answer '%s'", (long)pid, ans);
}

/* The pid of a socket's file name "PID.sock", or 0. */
static pid_t sock_pid(const char *name)
{
	char *end;
	long v = strtol(name, &end, 10);

	return v > 0 && end != name && !strcmp(end, ".sock") ? (pid_t)v : 0;
}

/* Parse "pid P name N captures C state S" into @name (the report's name). */
static int info_name(const char *ans, char *name, size_t cap)
{
	const char *p = strstr(ans, " name ");
	const char *e;

	if (!p)
		return -1;
	p += 6;
	e = strstr(p, " captures ");
	if (!e || (size_t)(e - p) >= cap)
		return -1;
	memcpy(name, p, (size_t)(e - p));
	name[e - p] = 0;
	return 0;
}

/* One value of an "info" answer ("... KEY VALUE ..."), or "0". */
static const char *info_field(const char *ans, const char *key, char *buf, size_t cap)
{
	char *k = xstrfmt(" %s ", key);
	const char *p = strstr(ans, k);
	size_t n = 0;

	free(k);
	if (p) {
		p += strlen(key) + 2;
		while (p[n] && p[n] != ' ' && n + 1 < cap)
			n++;
		memcpy(buf, p, n);
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, cap, "0");
	return buf;
}

/*
 * The Prometheus text format of the on-demand processes (dcgm-exporter
 * style: one gauge or counter a line, labelled; the GPU metrics themselves
 * are monitor's --prometheus), appended to @sb.  A step time of 0 means no
 * step seen yet.
 */
/* A live on-demand process of the user: its socket and its answer to "info". */
struct od_proc {
	pid_t pid;
	char *path;
	char ans[512], run[300];   /* the answer; the report name in it */
};

/*
 * The processes that answer on the sockets of @dir, into *@out (caller frees
 * with od_procs_free): how many, or -1 when @dir cannot be opened.  Stale
 * sockets of processes that ended are skipped.
 */
static ssize_t od_procs(const char *dir, struct od_proc **out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0, alloc = 0;

	*out = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		pid_t pid = sock_pid(de->d_name);
		struct od_proc p;
		if (!pid)
			continue;
		p.pid = pid;
		p.path = xstrfmt("%s/%s", dir, de->d_name);
		if (ask(p.path, "info\n", p.ans, sizeof(p.ans)) < 0 || info_name(p.ans, p.run, sizeof(p.run)) < 0) {
			free(p.path);
			continue;
		}
		ALLOC_GROW(*out, n + 1, alloc);
		(*out)[n++] = p;
	}
	closedir(d);
	return (ssize_t)n;
}

static void od_procs_free(struct od_proc *v, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

static void render_metrics(struct strbuf *sb, const struct od_proc *p, size_t n)
{
	static const struct { const char *name, *type, *help, *key; } rows[] = {
		{ "gpuscope_process_step_time_seconds", "gauge", "length of the last step (NVTX --step-range)", "step_ns" },
		{ "gpuscope_process_steps_total", "counter", "steps seen", "steps" },
		{ "gpuscope_process_captures_total", "counter", "captures taken", "captures" },
		{ "gpuscope_process_capturing", "gauge", "1 while a capture records", "state" },
	};
	char v[64];

	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", rows[r].name, rows[r].help, rows[r].name, rows[r].type);
		for (size_t i = 0; i < n; i++) {
			char *lab = xstrfmt("{pid=\"%ld\",report=\"%s\"}", (long)p[i].pid, p[i].run);
			info_field(p[i].ans, rows[r].key, v, sizeof(v));
			if (!strcmp(rows[r].key, "step_ns"))
				strbuf_addf(sb, "%s%s %.9g\n", rows[r].name, lab, strtod(v, NULL) / 1e9);
			else if (!strcmp(rows[r].key, "state"))
				strbuf_addf(sb, "%s%s %d\n", rows[r].name, lab, !strcmp(v, "capturing"));
			else
				strbuf_addf(sb, "%s%s %s\n", rows[r].name, lab, v);
			free(lab);
		}
	}
}

/* Every process of run @name (or, with @list, every process of the user): trigger or list. */
static int by_name(const char *dir, const char *name, const char *req, const char *what, int list)
{
	struct od_proc *p;
	ssize_t n = od_procs(dir, &p);
	int found = 0, failed = 0;

	if (n < 0) {
		if (list)
			return 0;
		return error("no on-demand run named '%s' (no trigger directory '%s')", name, dir);
	}
	for (ssize_t i = 0; i < n; i++) {
		if (list) {
			printf("%s\n", p[i].ans);
			found++;
		} else if (!strcmp(p[i].run, name)) {
			found++;
			failed |= trigger_one(p[i].pid, p[i].path, req, what) < 0;
		}
	}
	od_procs_free(p, n);
	if (!found && !list)
		return error("no on-demand run named '%s' (started by `gpuscope profile --on-demand -o %s`?)",
			     name, name);
	return failed ? -1 : 0;
}

/*
 * The user's trigger directory into @dir: 0, or -1 when it exists but is not
 * a private directory of the user's (said unless @quiet: its sockets could
 * be anyone's).
 */
static int ctl_dir(char *dir, size_t n, int quiet)
{
	trigger_ctl_dir(getenv(GS_ENV_CTL_DIR), dir, n);
	if (access(dir, F_OK) == 0 && !trigger_dir_ok(dir, 0))
		return quiet ? -1 : error("'%s' is not a private directory of yours (owned by you, mode 0700): "
					  "refusing to use its sockets", dir);
	return 0;
}

/* The request line of a capture of @steps steps or @duration_ns, opened by @trigger. */
static void capture_line(char *req, size_t n, unsigned steps, uint64_t duration_ns, unsigned trigger)
{
	snprintf(req, n, "capture %u %" PRIu64 " %u\n", steps, duration_ns, trigger);
}

int capture_request(const char *name, uint64_t duration_ns, unsigned trigger, const char *why)
{
	char dir[1024], req[128], what[160];
	int ret;

	if (ctl_dir(dir, sizeof(dir), 0) < 0)
		return -1;
	if (!duration_ns)
		duration_ns = (uint64_t)CAPTURE_DEFAULT_S * 1000000000u;
	capture_line(req, sizeof(req), 0, duration_ns, trigger);
	snprintf(what, sizeof(what), "%.3g s, %s", (double)duration_ns / 1e9, why);
	cap_out = stderr;
	ret = by_name(dir, name, req, what, 0);
	cap_out = NULL;
	return ret;
}

void capture_metrics_render(struct strbuf *sb)
{
	char dir[1024];
	struct od_proc *p = NULL;
	ssize_t n = 0;

	if (ctl_dir(dir, sizeof(dir), 1) < 0)
		return; /* not a private directory: its sockets are not asked */
	n = od_procs(dir, &p);
	render_metrics(sb, p, n > 0 ? (size_t)n : 0);
	od_procs_free(p, n);
}

int cmd_capture(int argc, char **argv)
{
	struct opt_iter it;
	uint64_t duration_ns = 0;
	unsigned steps = 0;
	int c, list = 0;
	char dir[1024], req[128], what[64];
	const char *target;
	pid_t pid;

	opt_iter_init(&it, &cli_capture, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case OPT_DURATION:
			if (parse_duration_ns(it.arg, &duration_ns, "s") < 0 || !duration_ns)
				return usage_error(capture_usage, "bad --duration '%s' (seconds, > 0)", it.arg);
			break;
		case OPT_STEPS:
			if (parse_steps(it.arg, &steps) < 0)
				return usage_error(capture_usage, "bad --steps '%s' (1 or more)", it.arg);
			break;
		case OPT_LIST:
			list = 1;
			break;
		case OPT_METRICS:
			list = 2;
			break;
		case OPT_HELP:
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (list ? it.ind != argc : it.ind != argc - 1)
		return usage_error(capture_usage, list ? "--list and --metrics take no process"
						       : "one PID or report NAME");
	if (ctl_dir(dir, sizeof(dir), 0) < 0)
		return EXIT_FAIL;
	if (list == 2) {
		struct strbuf sb = STRBUF_INIT;
		capture_metrics_render(&sb);
		fputs(sb.buf ? sb.buf : "", stdout);
		strbuf_release(&sb);
		return EXIT_OK;
	}
	if (list)
		return by_name(dir, NULL, NULL, NULL, list) < 0 ? EXIT_FAIL : EXIT_OK;
	if (!steps && !duration_ns)
		duration_ns = (uint64_t)CAPTURE_DEFAULT_S * 1000000000u;
	capture_line(req, sizeof(req), steps, duration_ns, TRACE_TRIGGER_COMMAND);
	if (steps && duration_ns)
		snprintf(what, sizeof(what), "%u steps or %.3g s", steps, (double)duration_ns / 1e9);
	else if (steps)
		snprintf(what, sizeof(what), "%u steps", steps);
	else
		snprintf(what, sizeof(what), "%.3g s", (double)duration_ns / 1e9);
	target = argv[it.ind];
	{
		char *probe = xstrfmt("%s.sock", target);
		pid = sock_pid(probe);   /* all digits: a pid */
		free(probe);
	}
	if (pid) {
		char *path = xstrfmt("%s/%ld.sock", dir, (long)pid);
		int r = trigger_one(pid, path, req, what);
		free(path);
		return r < 0 ? EXIT_FAIL : EXIT_OK;
	}
	return by_name(dir, target, req, what, 0) < 0 ? EXIT_FAIL : EXIT_OK;
}
