/*
 * cmd_monitor.c - `gpuscope monitor`: a row per GPU per interval, like
 * `nvidia-smi dmon`, with CSV/JSON output, a Prometheus endpoint, alerts and
 * a recorder of raw NVML readings (docs/monitor.md).
 */
#include "commands.h"
#include "../monitor/monitor.h"
#include "../util/util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char monitor_usage[] =
	"gpuscope monitor [-s GROUPS | --columns LIST] [-i GPU[,GPU]] [-c COUNT] [--interval MS]\n"
	"                 [--format table|csv|json] [--log FILE] [--prometheus [ADDR:]PORT]\n"
	"                 [--alert EXPR]... [--alert-hold N] [--on-alert CMD] [--record FILE]\n"
	"                 [--replay FILE [--replay-loop]] [--force]";

enum { O_INTERVAL = 256, O_FORMAT, O_LOG, O_PROM, O_ALERT, O_HOLD, O_ON_ALERT, O_RECORD,
       O_LOOP, O_COLUMNS, O_FORCE };

static const struct cli_opt monitor_opts[] = {
	{ "select", 's', 's', ARG_REQUIRED, "GROUPS",
	  "column groups (default " MON_DEFAULT_GROUPS ", all " MON_ALL_GROUPS "):\n"
	  "p power/temp, u utilisation, c clocks, m memory, e ECC/PCIe errors,\n"
	  "t PCIe throughput, l PCIe link, x p-state/power limit/throttle reasons,\n"
	  "g GPM (SM active/occupancy, tensor, DRAM, FP64/32/16), n NVLink", NULL, 0 },
	{ "columns", 0, O_COLUMNS, ARG_REQUIRED, "LIST", "the columns by name, instead of -s", NULL, 0 },
	{ "count", 'c', 'c', ARG_REQUIRED, "COUNT", "stop after COUNT intervals (default: until interrupted)",
	  NULL, 0 },
	{ "gpu", 'i', 'i', ARG_REQUIRED, "GPU[,GPU]", "only these GPUs (indices)", NULL, 0 },
	{ "interval", 0, O_INTERVAL, ARG_REQUIRED, "MS", "sampling interval (default 1000 ms)", NULL, 0 },
	{ "format", 0, O_FORMAT, ARG_REQUIRED, "FMT", "table (default), csv or json", "table csv json",
	  OPT_CHOICE },
	{ "log", 0, O_LOG, ARG_REQUIRED, "FILE", "append the samples to FILE as well", "<file>", 0 },
	{ "prometheus", 0, O_PROM, ARG_REQUIRED, "[ADDR:]PORT", "serve the metrics for Prometheus", NULL, 0 },
	{ "alert", 0, O_ALERT, ARG_REQUIRED, "EXPR",
	  "METRIC OP VALUE[%] or throttle:REASON, e.g. 'temp>85', 'mem_used>95%'", NULL, OPT_REPEAT },
	{ "alert-hold", 0, O_HOLD, ARG_REQUIRED, "N", "an alert fires after N intervals in a row (default 1)",
	  NULL, 0 },
	{ "on-alert", 0, O_ON_ALERT, ARG_REQUIRED, "CMD", "run CMD (sh -c) when an alert fires", NULL, 0 },
	{ "record", 0, O_RECORD, ARG_REQUIRED, "FILE", "record the raw NVML readings to FILE (for --replay)",
	  "<file>", 0 },
	{ "force", 0, O_FORCE, ARG_BOOL, NULL, "overwrite an existing --record FILE", NULL, 0 },
	{ "replay", 0, CMD_O_REPLAY, ARG_REQUIRED, "FILE",
	  "read recorded NVML readings instead of the GPUs (tests, offline demos)", "<file>", 0 },
	{ "replay-loop", 0, O_LOOP, ARG_NONE, NULL, "with --replay: start again at the end", NULL, 0 },
	{ 0 },
};

const struct cli_cmd cli_monitor = {
	.name = "monitor",
	.synopsis = monitor_usage,
	.summary = "live GPU metrics, Prometheus endpoint and alerts",
	.description = "Live GPU metrics from NVML, one line per GPU per interval, with a "
		       "Prometheus endpoint, alerts and a recorder of raw readings (docs/monitor.md).",
	.opts = monitor_opts,
	.example = "gpuscope monitor -s pucm --interval 500\n"
		   "gpuscope monitor --alert 'temp>85' --on-alert 'logger hot GPU' --prometheus 9400",
	.stop_at_arg = 1,
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	GS_UNUSED(sig);
	stop_flag = 1;
}

struct mon_opts {
	const char *groups, *names, *gpus, *log, *prom, *on_alert, *record;
	enum mon_format format;
	unsigned long count, interval_ms, hold;
	int loop;
	const char **alerts;
	size_t nalerts, alerts_alloc;
	unsigned cols[64];         /* the columns of -s/--columns (mon_select) */
	int ncols;
};

static int parse_ulong(const char *s, const char *what, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-')
		return usage_error(monitor_usage, "bad %s '%s': expected a whole number", what, s);
	return 0;
}

static void env_add(char ***env, size_t *nr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void env_add(char ***env, size_t *nr, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	*env = xrealloc(*env, (*nr + 2) * sizeof(**env));
	(*env)[(*nr)++] = sb.buf;
	(*env)[*nr] = NULL;
}

/* Run @cmd with /bin/sh, the alert in GPUSCOPE_* variables; reaped later. */
static void run_on_alert(const char *cmd, const struct mon_alert *a, const char *state,
			 const struct nvml_gpu_info *g, const char *value, const char *when)
{
	char **env = NULL;
	size_t nr = 0, keep = 0;
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	posix_spawnattr_t attr;
	sigset_t dfl;
	pid_t pid;
	int rc;

	for (char **e = environ; *e; e++)
		if (strncmp(*e, "GPUSCOPE_ALERT", 14) && strncmp(*e, "GPUSCOPE_GPU", 12))
			env_add(&env, &nr, "%s", *e);
	keep = nr;
	env_add(&env, &nr, "GPUSCOPE_ALERT=%s", a->expr);
	env_add(&env, &nr, "GPUSCOPE_ALERT_STATE=%s", state);
	env_add(&env, &nr, "GPUSCOPE_ALERT_VALUE=%s", value);
	env_add(&env, &nr, "GPUSCOPE_ALERT_TIME=%s", when);
	env_add(&env, &nr, "GPUSCOPE_GPU=%u", g->index);
	env_add(&env, &nr, "GPUSCOPE_GPU_UUID=%s", g->uuid);
	env_add(&env, &nr, "GPUSCOPE_GPU_NAME=%s", g->name);
	/* the command gets SIGPIPE and SIGXFSZ back, which gpuscope ignores */
	posix_spawnattr_init(&attr);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGXFSZ);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	if (rc)
		error("cannot run --on-alert command: %s", strerror(rc));
	GS_UNUSED(keep);
	for (size_t i = 0; i < nr; i++)
		free(env[i]);
	free(env);
}

static void reap(int block)
{
	while (waitpid(-1, NULL, block ? 0 : WNOHANG) > 0)
		;
}

static void alert_value(char *buf, size_t len, const struct mon_alert *a, double v)
{
	if (a->throttle)
		nvml_throttle_format((uint64_t)v, ",", buf, len);
	else if (a->percent)
		snprintf(buf, len, "%.1f%%", v);
	else
		snprintf(buf, len, "%.10g", v);
}

static int sleep_until(uint64_t when_mono)
{
	while (!stop_flag) {
		uint64_t now = now_mono_ns();
		struct timespec ts;
		if (now >= when_mono)
			return 0;
		ts.tv_sec = (time_t)((when_mono - now) / 1000000000ull);
		ts.tv_nsec = (long)((when_mono - now) % 1000000000ull);
		nanosleep(&ts, NULL); /* EINTR: look at stop_flag */
	}
	return -1;
}

static int parse_gpus(const char *list, const struct nvml *n, uint8_t *sel)
{
	const char *p = list;

	while (*p) {
		char *end;
		unsigned long g = strtoul(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return error("bad -i '%s': expected GPU indices like 0 or 0,2", list);
		if (g >= n->sys.ngpus)
			return error("no GPU %lu: this host has %u (0..%u)", g, n->sys.ngpus,
				     n->sys.ngpus - 1);
		sel[g] = 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* The samples of the GPUs of @n (the dispatcher's CMD_NEED_NVML), until the count or a signal. */
static int monitor_run(struct mon_opts *o, struct nvml *n)
{
	struct nvml_sample *smp = NULL;
	struct mon_alert *alerts = NULL;
	struct mon_prom *prom = NULL;
	FILE *log = NULL;
	const unsigned *cols = o->cols;
	int ncols = o->ncols, ret = EXIT_OK;
	uint8_t *sel = NULL;
	uint64_t next;
	struct strbuf out = STRBUF_INIT;
	FILE *alert_out = o->format == MON_TABLE ? stdout : stderr;

	n->replay_loop = o->loop;
	sel = xcalloc(n->sys.ngpus, 1);
	smp = xcalloc(n->sys.ngpus, sizeof(*smp));
	if (o->gpus) {
		if (parse_gpus(o->gpus, n, sel)) {
			ret = EXIT_USAGE;
			goto out;
		}
	} else {
		memset(sel, 1, n->sys.ngpus);
	}
	alerts = xcalloc(o->nalerts ? o->nalerts : 1, sizeof(*alerts));
	for (size_t i = 0; i < o->nalerts; i++)
		if (mon_alert_parse(&alerts[i], o->alerts[i], n->sys.ngpus)) {
			ret = EXIT_USAGE;
			goto out;
		}
	if (o->log && !(log = fopen(o->log, "a"))) {
		error("cannot open log '%s': %s", o->log, strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	if (o->record && nvml_record(n, o->record)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (o->prom) {
		unsigned port;
		if (!(prom = mon_prom_start(o->prom, &port))) {
			ret = EXIT_USAGE;
			goto out;
		}
		fprintf(stderr, "gpuscope: serving Prometheus metrics on port %u at /metrics\n", port);
	}
	mon_format_header(&out, o->format, cols, (size_t)ncols);
	next = now_mono_ns();
	for (unsigned long tick = 0; !stop_flag && (!o->count || tick < o->count); tick++) {
		int ended = 0;

		if (tick && sleep_until(next))
			break;
		next += o->interval_ms * 1000000ull;
		if (next < now_mono_ns()) /* reading took longer than the interval: no burst */
			next = now_mono_ns();
		for (unsigned g = 0; g < n->sys.ngpus; g++) {
			if (!sel[g])
				continue;
			if (nvml_sample(n, g, NVML_TIER_FAST | NVML_TIER_SLOW, &smp[g])) {
				ended = 1;
				break;
			}
			mon_format_row(&out, o->format, cols, (size_t)ncols, &n->gpu[g], &smp[g]);
			for (size_t a = 0; a < o->nalerts; a++) {
				double v;
				enum mon_alert_event ev = mon_alert_eval(&alerts[a], g, &smp[g],
									  (unsigned)o->hold, &v);
				char ts[40], val[256], line[640];
				if (ev == MON_ALERT_NONE)
					continue;
				mon_format_time(ts, sizeof(ts), smp[g].time_ns);
				alert_value(val, sizeof(val), &alerts[a], v);
				if (ev == MON_ALERT_START)
					snprintf(line, sizeof(line), "%s alert start gpu %u '%s' value %s\n",
						 ts, g, alerts[a].expr, val);
				else
					snprintf(line, sizeof(line),
						 "%s alert end gpu %u '%s' value %s after %.1f s\n", ts, g,
						 alerts[a].expr, val,
						 (double)(smp[g].time_ns - alerts[a].since_ns[g]) / 1e9);
				/* rows before the alert line, so the output reads in time order */
				fputs(out.buf ? out.buf : "", stdout);
				if (log)
					fputs(out.buf ? out.buf : "", log);
				strbuf_reset(&out);
				fputs(line, alert_out);
				fflush(alert_out);
				if (log)
					fputs(line, log);
				if (o->on_alert)
					run_on_alert(o->on_alert, &alerts[a],
						     ev == MON_ALERT_START ? "start" : "end", &n->gpu[g], val, ts);
			}
		}
		if (out.len) {
			fputs(out.buf, stdout);
			if (log)
				fputs(out.buf, log);
			strbuf_reset(&out);
		}
		if (fflush(stdout) || ferror(stdout)) {
			ret = EXIT_FAIL;
			break;
		}
		if (log)
			fflush(log);
		if (prom) {
			struct strbuf body = STRBUF_INIT;
			mon_prom_render(&body, n, smp);
			/* the on-demand processes of this user, so that an alert rule can trigger a capture */
			capture_metrics_render(&body);
			mon_prom_update(prom, body.buf ? body.buf : "", body.len);
			strbuf_release(&body);
		}
		reap(0);
		if (ended)
			break;
	}
	if (out.len)
		fputs(out.buf, stdout);
out:
	reap(1);
	mon_prom_stop(prom);
	if (log && close_checked(log, o->log) && ret == EXIT_OK)
		ret = EXIT_FAIL;
	if (n && n->rec && nvml_record_stop(n) && ret == EXIT_OK)
		ret = EXIT_FAIL;
	for (size_t i = 0; alerts && i < o->nalerts; i++)
		mon_alert_release(&alerts[i]);
	free(alerts);
	free(smp);
	free(sel);
	strbuf_release(&out);
	return ret;
}

static void mon_opts_free(void *priv)
{
	struct mon_opts *o = priv;

	free(o->alerts);
	free(o);
}

int cmd_monitor_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct mon_opts *o = xcalloc(1, sizeof(*o));
	int c, force = 0;
	struct opt_iter it;

	s->priv = o;
	s->priv_free = mon_opts_free;
	o->interval_ms = 1000;
	o->hold = 1;
	opt_iter_init(&it, &cli_monitor, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 's': o->groups = it.arg; break;
		case O_COLUMNS: o->names = it.arg; break;
		case 'c':
			if (parse_ulong(it.arg, "count", &o->count))
				return EXIT_USAGE;
			break;
		case 'i': o->gpus = it.arg; break;
		case O_INTERVAL:
			if (parse_ulong(it.arg, "interval", &o->interval_ms))
				return EXIT_USAGE;
			if (o->interval_ms < 10 || o->interval_ms > 3600000)
				return usage_error(monitor_usage, "interval %lu ms is outside 10..3600000",
						   o->interval_ms);
			break;
		case O_FORMAT:
			o->format = !strcmp(it.arg, "csv") ? MON_CSV : !strcmp(it.arg, "json") ? MON_JSON : MON_TABLE;
			break;
		case O_LOG: o->log = it.arg; break;
		case O_PROM: o->prom = it.arg; break;
		case O_ALERT:
			ALLOC_GROW(o->alerts, o->nalerts + 1, o->alerts_alloc);
			o->alerts[o->nalerts++] = it.arg;
			break;
		case O_HOLD:
			if (parse_ulong(it.arg, "alert-hold", &o->hold))
				return EXIT_USAGE;
			if (o->hold < 1 || o->hold > 1000)
				return usage_error(monitor_usage, "alert-hold %lu is outside 1..1000", o->hold);
			break;
		case O_ON_ALERT: o->on_alert = it.arg; break;
		case O_RECORD: o->record = it.arg; break;
		case O_LOOP: o->loop = 1; break;
		case O_FORCE: force = opt_bool(&it); break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (it.ind != argc)
		return usage_error(monitor_usage, "unexpected argument '%s'", argv[it.ind]);
	if (o->on_alert && !o->nalerts)
		return usage_error(monitor_usage, "--on-alert needs at least one --alert");
	/*
	 * The recorder (nvml_record) opens the file itself: refuse an existing
	 * file or link unless --force, and with --force remove it first, so
	 * the recording is a new file and never written through a link.
	 */
	if (o->record && output_check(o->record, force) < 0)
		return EXIT_USAGE;
	if (o->record && force && unlink(o->record) < 0 && errno != ENOENT)
		return usage_error(monitor_usage, "cannot replace '%s': %s", o->record, strerror(errno));
	o->ncols = mon_select(o->groups, o->names, o->cols, ARRAY_SIZE(o->cols));
	return o->ncols < 0 ? EXIT_USAGE : CMD_RUN;
}

int cmd_monitor_run(struct cmd_setup *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return monitor_run(s->priv, s->nvml);
}
