/*
 * cmd_profile.c - `gpuscope profile [options] -- PROGRAM ARGS...`
 *
 * Runs PROGRAM with the collector injected (LD_PRELOAD, and the NVTX and
 * CUDA injection variables), waits for it, and merges the part files that
 * every traced process wrote into a temporary directory into one report.
 * The profile exits with the program's status (128+N when signal N killed
 * it), forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT to it once (not those the
 * process group got already), hands it the signal actions and mask profile
 * inherited, tells the collectors through a pipe when profile is gone, and
 * never overwrites a report unless --force.  docs/collector.md documents
 * every option.
 */
#include "commands.h"
#include "captures.h"
#include "../collect/env.h"
#include "../collect/trigger.h"
#include "../nvml/nvml.h"
#include "../nvml/sampler.h"
#include "../import/import.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char profile_usage[] =
	"gpuscope profile [options] [--] PROGRAM ARGS...";

enum {
	OPT_FORCE = 'f', OPT_OUTPUT = 'o', OPT_TRACE = 't', OPT_CAPTURE = 'c', OPT_DELAY = 'y',
	OPT_DURATION = 'd', OPT_NVTX_CAPTURE = 'p',
	OPT_OSRT_THRESHOLD = 256, OPT_CPU_HZ, OPT_CAPTURE_END, OPT_GPU_METRICS, OPT_NO_GPU_METRICS,
	OPT_CUDA_ALL, OPT_STATS, OPT_ANALYZE, OPT_HTML, OPT_KMETRICS, OPT_KFILTER, OPT_KCOUNT,
	OPT_PM, OPT_TORCH_HISTORY, OPT_ON_DEMAND, OPT_RING_S, OPT_RING_MB, OPT_TRIGGER, OPT_STEP_RANGE, OPT_LOCK_WAITS,
};

/* The nsys spellings (-t, -c, -p, -y, -d, -f true, --stats=true) are docs/nsys-options.md's. */
static const struct cli_opt profile_opts[] = {
	{ "output", 'o', OPT_OUTPUT, ARG_REQUIRED, "NAME",
	  "the report NAME.gpuscope (default: the first free reportN);\n"
	  "%p pid, %h host name, %q{VAR} an environment variable,\n%n the first free number, %% a %",
	  "<file>", 0 },
	{ "force", 'f', OPT_FORCE, ARG_BOOL, NULL, "overwrite an existing report", NULL, 0 },
	{ "force-overwrite", 0, OPT_FORCE, ARG_BOOL, NULL, "nsys's name for --force", NULL, OPT_HIDDEN },
	{ "trace", 't', OPT_TRACE, ARG_REQUIRED, "LIST",
	  "what to trace: cuda,nvtx,osrt (default all three), or none", "cuda nvtx osrt none", 0 },
	{ "osrt-threshold", 0, OPT_OSRT_THRESHOLD, ARG_REQUIRED, "DUR",
	  "record OS runtime calls that last DUR or longer (default 1us)", NULL, 0 },
	{ "cpu-sample-hz", 0, OPT_CPU_HZ, ARG_REQUIRED, "N",
	  "CPU samples per second per thread, 0 for none (default 100)", NULL, 0 },
	{ "sampling-frequency", 0, OPT_CPU_HZ, ARG_REQUIRED, "N", "nsys's name for --cpu-sample-hz", NULL,
	  OPT_HIDDEN },
	{ "capture-range", 'c', OPT_CAPTURE, ARG_REQUIRED, "RANGE",
	  "record only inside nvtx:NAME[@DOMAIN] or cudaProfilerApi\n"
	  "(start/stop); nvtx alone takes the range from -p", "cudaProfilerApi nvtx", 0 },
	{ "nvtx-capture", 'p', OPT_NVTX_CAPTURE, ARG_REQUIRED, "NAME[@DOMAIN]",
	  "the NVTX range of --capture-range=nvtx", NULL, 0 },
	{ "capture-range-end", 0, OPT_CAPTURE_END, ARG_REQUIRED, "WHEN",
	  "stop (default: at the range's first end) or repeat", "stop repeat", 0 },
	{ "delay", 'y', OPT_DELAY, ARG_REQUIRED, "S", "start recording S seconds after the start", NULL, 0 },
	{ "duration", 'd', OPT_DURATION, ARG_REQUIRED, "S", "stop recording after S seconds", NULL, 0 },
	{ "gpu-metrics", 0, OPT_GPU_METRICS, ARG_OPTIONAL, "HZ",
	  "sample GPU metrics (NVML) HZ times a second (default on, 10); with --on-demand\n"
	  "they are kept as the ring is: before, during and after captures", NULL, 0 },
	{ "no-gpu-metrics", 0, OPT_NO_GPU_METRICS, ARG_NONE, NULL, "no GPU metric samples", NULL, 0 },
	{ "cuda-trace-all-apis", 0, OPT_CUDA_ALL, ARG_NONE, NULL,
	  "trace every CUDA API call, not only those that matter", NULL, 0 },
	{ "kernel-metrics", 0, OPT_KMETRICS, ARG_OPTIONAL, "SET",
	  "hardware counters of kernels: basic (default), tensor, memory, full",
	  "basic tensor memory full", 0 },
	{ "kernel-filter", 0, OPT_KFILTER, ARG_REQUIRED, "REGEX",
	  "profile only kernels whose name matches REGEX (implies --kernel-metrics)", NULL, 0 },
	{ "kernel-count", 0, OPT_KCOUNT, ARG_REQUIRED, "N",
	  "profile N instances of each kernel (default 1; implies --kernel-metrics)", NULL, 0 },
	{ "pm-sampling", 0, OPT_PM, ARG_OPTIONAL, "US",
	  "sample GPU hardware counters every US microseconds (default 1000, 200 or more;\n"
	  "CUPTI PM sampling, docs/cuda.md); not with --kernel-metrics", NULL, 0 },
	{ "torch-memory-history", 0, OPT_TORCH_HISTORY, ARG_NONE, NULL,
	  "record PyTorch's allocation history, so an out-of-memory names the largest\n"
	  "allocations with their stacks (docs/memory.md)", NULL, 0 },
	{ "on-demand", 0, OPT_ON_DEMAND, ARG_NONE, NULL,
	  "stay idle (no CUDA tracing) until a capture: `gpuscope capture PID|NAME`,\n"
	  "a capture range or --trigger; keep the last --ring-s seconds of NVTX, OS runtime,\n"
	  "CPU samples and GPU metrics in memory for each capture (docs/always-on.md)", NULL, 0 },
	{ "ring-s", 0, OPT_RING_S, ARG_REQUIRED, "S",
	  "with --on-demand: a capture also writes the S seconds before it, and the run's\n"
	  "end its last S seconds (default 30)", NULL, 0 },
	{ "ring-mb", 0, OPT_RING_MB, ARG_REQUIRED, "MB",
	  "with --on-demand: memory of that ring per process, and of profile's ring of\n"
	  "GPU metrics (default 64)", NULL, 0 },
	{ "trigger", 0, OPT_TRIGGER, ARG_REQUIRED, "COND",
	  "with --on-demand: capture when COND holds: 'step_time>1.3x median' (a slow step),\n"
	  "'temp>85' or 'mem_used>95%' (a GPU reading, from profile's own NVML samples)", NULL, 0 },
	{ "step-range", 0, OPT_STEP_RANGE, ARG_REQUIRED, "NAME",
	  "with --on-demand: NVTX push/pop ranges whose name starts with NAME are steps\n"
	  "(default ProfilerStep)", NULL, 0 },
	{ "lock-waits", 0, OPT_LOCK_WAITS, ARG_NONE, NULL,
	  "with --on-demand: captures also record contended mutex and rwlock locks (costs the\n"
	  "idle program its lock wrappers: about 2 ns a lock, docs/always-on.md)", NULL, 0 },
	{ "stats", 0, OPT_STATS, ARG_BOOL, NULL, "print `gpuscope stats` of the report afterwards", NULL, 0 },
	{ "analyze", 0, OPT_ANALYZE, ARG_NONE, NULL, "print `gpuscope analyze` of the report afterwards",
	  NULL, 0 },
	{ "report-html", 0, OPT_HTML, ARG_NONE, NULL, "write the report's HTML page afterwards", NULL, 0 },
	{ 0 },
};

const struct cli_cmd cli_profile = {
	.name = "profile",
	.synopsis = profile_usage,
	.summary = "run a program and record its CPU threads and GPUs",
	.description = "Runs PROGRAM with the collector injected and records its CPU threads (NVTX, "
		       "OS runtime calls, CPU samples) and GPUs (CUDA API, kernels, copies, GPU "
		       "metrics) into one report (docs/collector.md).  The exit status is the "
		       "program's.  A report is never overwritten without --force.",
	.opts = profile_opts,
	.example = "gpuscope profile -o run --analyze -- python train.py\n"
		   "gpuscope profile -t cuda,nvtx -c nvtx -p train_step -o rank%q{RANK} ./app",
	.stop_at_arg = 1,
	.args = "<file>",
};

/*
 * --kernel-count default: one instance of each matching kernel.  Kernel
 * replay runs a profiled kernel once per pass and saves and restores the
 * memory it writes, so every profiled instance costs several times the
 * kernel; one instance per kernel bounds that cost by the number of
 * distinct kernels (docs/cuda.md, "Kernel metrics").
 */
#define KERNEL_COUNT_DEFAULT 1

struct profile_opts {
	const char *output;
	int force;
	unsigned trace;           /* enum cl_trace bits, see collect.h (1 nvtx, 2 osrt, 4 cuda) */
	uint64_t osrt_threshold_ns;
	unsigned cpu_hz;
	const char *capture;
	const char *capture_end;
	uint64_t delay_ns, duration_ns;
	int gpu_metrics;          /* -1 default (on, quiet), 0 off, 1 asked for */
	unsigned gpu_hz;
	int cuda_all_apis;
	const char *kernel_metrics;   /* metric set, NULL = off */
	const char *kernel_filter;
	unsigned kernel_count;
	unsigned pm_us;               /* PM sampling interval, 0 = off */
	int stats, analyze, html;
	int torch_history;        /* --torch-memory-history (docs/memory.md) */
	int on_demand;            /* --on-demand (docs/always-on.md) */
	uint64_t ring_ns;
	unsigned ring_mb;
	const char *trigger, *step_range;
	int lock_waits;           /* --lock-waits: the collector with its lock wrappers under --on-demand */
	int gpu_trigger;          /* TRIGGER_TEMP or TRIGGER_MEM_USED: watched here, on the NVML samples */
	double gpu_trigger_v;
};

enum { TR_NVTX = 1, TR_OSRT = 2, TR_CUDA = 4 };

/* ---- signals and supervision ---- */

/*
 * The signal actions and mask gpuscope inherited, saved by a constructor
 * before main() ignores SIGXFSZ and before profile installs its handlers:
 * the program gets them back before exec, so that `nohup gpuscope profile
 * -- prog` ignores SIGHUP as `nohup prog` does.  (Only SIG_DFL and SIG_IGN
 * survive an exec, so these are all a program can inherit.)
 */
static const int inherit_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ };
static struct sigaction inherited_act[ARRAY_SIZE(inherit_sigs)];
static sigset_t inherited_mask;
static int inherited_saved;

__attribute__((constructor)) static void save_inherited_signals(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(inherit_sigs); i++)
		if (sigaction(inherit_sigs[i], NULL, &inherited_act[i]) < 0)
			return;
	if (sigprocmask(SIG_SETMASK, NULL, &inherited_mask) < 0)
		return;
	/*
	 * Except SIGINT and SIGQUIT: a shell without job control ignores them
	 * in every command it starts with &, so that the terminal's keys spare
	 * them; profile's promise is that a SIGINT sent to it reaches the
	 * program (tests/collect/exit_paths.sh), so the program gets their
	 * defaults, as before.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(inherit_sigs); i++)
		if (inherit_sigs[i] == SIGINT || inherit_sigs[i] == SIGQUIT) {
			memset(&inherited_act[i], 0, sizeof(inherited_act[i]));
			inherited_act[i].sa_handler = SIG_DFL;
			sigemptyset(&inherited_act[i].sa_mask);
		}
	inherited_saved = 1;
}

static int inherited_ignored(int sig)
{
	for (size_t i = 0; inherited_saved && i < ARRAY_SIZE(inherit_sigs); i++)
		if (inherit_sigs[i] == sig)
			return !(inherited_act[i].sa_flags & SA_SIGINFO) &&
			       inherited_act[i].sa_handler == SIG_IGN;
	return 0;
}

/* In the forked child, before exec (async-signal-safe calls only). */
static void restore_inherited_signals(void)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(inherit_sigs); i++)
		sigaction(inherit_sigs[i], inherited_saved ? &inherited_act[i] : &dfl, NULL);
	if (inherited_saved)
		sigprocmask(SIG_SETMASK, &inherited_mask, NULL);
}

/*
 * Forwarding without doubling.  profile forwards SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT to the program, but a signal sent to the whole process group
 * (Ctrl-C from the terminal, `kill -INT -PGID`, a service manager) already
 * reached the program, which shares profile's group: forwarding it again
 * would deliver it twice (Python's KeyboardInterrupt cleanup is then
 * interrupted by a second KeyboardInterrupt).  siginfo tells the terminal's
 * signals (SI_KERNEL) apart, not a kill() of the group from one of
 * profile alone.  So profile keeps a sentinel: a child process in the same
 * group that blocks these signals and never handles them by itself.  A
 * signal that was sent to the group is pending in the sentinel
 * (/proc/PID/status, ShdPnd) by the time profile's handler runs, one sent
 * to profile alone is not; the handler then has the sentinel take it (one
 * byte on a pipe) so that the next one can be told apart again.
 * kill() of a group marks every member within the one system call; the
 * handler looks for up to SENTINEL_WAIT_US in case it runs before the
 * sender's kill() reached the sentinel (on another CPU).
 */
#define SENTINEL_WAIT_US 3000

static const int fwd_sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static volatile sig_atomic_t child_pid;
static pid_t sentinel_pid = -1;
static int sentinel_cmd = -1;          /* write end: the signal to take */

/* Whether signal @sig is pending for the sentinel process (async-signal-safe). */
static int sentinel_pending(int sig)
{
	char path[64], buf[2048];
	const char *p;
	ssize_t n;
	size_t got = 0;
	int fd;
	uint64_t mask = 0;

	/* "/proc/<pid>/status" without snprintf (not async-signal-safe) */
	{
		char digits[16];
		size_t k = 0, len = 0;
		unsigned long v = (unsigned long)sentinel_pid;
		do
			digits[k++] = (char)('0' + v % 10);
		while ((v /= 10) && k < sizeof(digits));
		memcpy(path, "/proc/", 6);
		len = 6;
		while (k)
			path[len++] = digits[--k];
		memcpy(path + len, "/status", 8);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = 0;
	p = strstr(buf, "\nShdPnd:");
	if (!p)
		return 0;
	for (p += 8; *p == ' ' || *p == '\t'; p++)
		;
	for (; *p; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0)
			break;
		mask = mask << 4 | (uint64_t)d;
	}
	return sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/* Whether @sig, just received by profile, was sent to the whole process group. */
static int group_got(int sig, const siginfo_t *si, pid_t pid)
{
	if (getpgid(pid) != getpgrp())
		return 0;   /* the program left profile's group: nothing reached it */
	if (si && si->si_code == SI_KERNEL)
		return 1;   /* the terminal: the foreground group */
	if (sentinel_pid <= 0)
		return 0;
	for (int waited = 0;; waited += 100) {
		if (sentinel_pending(sig)) {
			unsigned char b = (unsigned char)sig;
			ssize_t n = write(sentinel_cmd, &b, 1);
			(void)n;
			return 1;
		}
		if (waited >= SENTINEL_WAIT_US)
			return 0;
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}

static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	pid_t pid = (pid_t)child_pid;

	(void)uc;
	if (pid > 0 && !group_got(sig, si, pid))
		kill(pid, sig);
	errno = saved;
}

/*
 * Start the sentinel (see group_got).  It blocks the forwarded signals,
 * takes one when profile says so, and ends when profile does (the pipe's
 * end, or PR_SET_PDEATHSIG).  Without it (fork failed) every signal but
 * the terminal's is forwarded, as before.
 */
static void sentinel_start(void)
{
	sigset_t block, old;
	int fds[2];
	pid_t pid, parent = getpid();

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(fwd_sigs); i++)
		sigaddset(&block, fwd_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid == 0) {
		unsigned char b;
		close(fds[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		prctl(PR_SET_NAME, "gpuscope-group", 0, 0, 0);
		if (getppid() != parent)
			_exit(0);
		for (;;) {
			ssize_t n = read(fds[0], &b, 1);
			sigset_t one;
			struct timespec zero = { 0, 0 };
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				_exit(0);
			sigemptyset(&one);
			sigaddset(&one, b);
			sigtimedwait(&one, NULL, &zero);
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return;
	}
	sentinel_pid = pid;
	sentinel_cmd = fds[1];
}

static void sentinel_stop(void)
{
	if (sentinel_pid <= 0)
		return;
	close(sentinel_cmd);
	kill(sentinel_pid, SIGKILL);
	while (waitpid(sentinel_pid, NULL, 0) < 0 && errno == EINTR)
		;
	sentinel_pid = -1;
	sentinel_cmd = -1;
}

/*
 * The liveness pipe.  Every process of the tree inherits its read end (at
 * descriptor >= WATCH_FD_MIN, spared from the program's close calls, see
 * collect/internal.h); profile holds the only write end.  Its end, when
 * profile is killed (even by SIGKILL), tells each collector to finish its
 * part file; a byte written before a normal end says that profile merged
 * what it could and nothing needs recovering.
 */
#define WATCH_FD_MIN 900
static int watch_w = -1, watch_r = -1;

static void watch_start(void)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	watch_r = fcntl(fds[0], F_DUPFD_CLOEXEC, WATCH_FD_MIN);
	close(fds[0]);
	if (watch_r < 0) {
		close(fds[1]);
		return;
	}
	watch_w = fds[1];
}

/* profile ends normally: the collectors that still run stop quietly. */
static void watch_end(void)
{
	unsigned char b = 1;
	sigset_t pipe_sig, old;
	struct timespec zero = { 0, 0 };

	if (watch_w < 0)
		return;
	/* when every reader is gone already the write fails: no SIGPIPE for that */
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_sig, &old);
	if (write(watch_w, &b, 1) < 0 && errno == EPIPE && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe_sig, NULL, &zero);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(watch_w);
	watch_w = -1;
}

static int parse_trace(const char *s, unsigned *out)
{
	char *copy = xstrdup(s), *p = copy, *tok;
	int ret = 0;

	*out = 0;
	while ((tok = strsep(&p, ","))) {
		if (!strcmp(tok, "nvtx"))
			*out |= TR_NVTX;
		else if (!strcmp(tok, "osrt"))
			*out |= TR_OSRT;
		else if (!strcmp(tok, "cuda"))
			*out |= TR_CUDA;
		else if (!strcmp(tok, "none") || !*tok)
			;
		else
			ret = error("unknown trace source '%s' (known: cuda, nvtx, osrt)", tok);
	}
	free(copy);
	return ret;
}

static int parse_u32(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int check_capture(const char *s)
{
	if (!strcmp(s, "cudaProfilerApi"))
		return 0;
	if (!strncmp(s, "nvtx:", 5) && s[5] && s[5] != '@')
		return 0;
	return -1;
}

/*
 * nsys's patterns in an output name: %p this process's id (each rank of a
 * Slurm or MPI launch runs its own profile, so its own id), %h the host
 * name, %q{VAR} the environment variable VAR (empty when unset), %% a '%';
 * %n is the smallest positive number for which the name is free, put in by
 * the caller (@n).  NULL after an error.
 */
static char *expand_name(const char *name, unsigned n, int *has_n)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *p = name; *p; p++) {
		if (*p != '%') {
			strbuf_addch(&sb, *p);
			continue;
		}
		switch (*++p) {
		case '%': strbuf_addch(&sb, '%'); break;
		case 'p': strbuf_addf(&sb, "%ld", (long)getpid()); break;
		case 'h': {
			char host[256];
			if (gethostname(host, sizeof(host)) < 0)
				snprintf(host, sizeof(host), "unknown");
			host[sizeof(host) - 1] = '\0';
			strbuf_addstr(&sb, host);
			break;
		}
		case 'n':
			*has_n = 1;
			strbuf_addf(&sb, "%u", n);
			break;
		case 'q': {
			const char *end = p[1] == '{' ? strchr(p, '}') : NULL;
			char *var;
			const char *val;
			if (!end) {
				error("bad output name '%s': %%q needs {VAR}", name);
				strbuf_release(&sb);
				return NULL;
			}
			var = xstrndup(p + 2, (size_t)(end - p - 2));
			val = getenv(var);
			strbuf_addstr(&sb, val ? val : "");
			free(var);
			p = end;
			break;
		}
		default:
			error("bad output name '%s': unknown pattern '%%%c' (%%p, %%h, %%q{VAR}, %%n, %%%%)",
			      name, *p ? *p : ' ');
			strbuf_release(&sb);
			return NULL;
		}
		if (!*p)
			break;
	}
	return sb.buf ? sb.buf : xstrdup("");
}

static char *with_ext(char *name)
{
	size_t n = strlen(name), e = strlen(TRACE_FILE_EXT);
	char *p;

	if (n > e && !strcmp(name + n - e, TRACE_FILE_EXT))
		return name;
	p = xstrfmt("%s%s", name, TRACE_FILE_EXT);
	free(name);
	return p;
}

/* NAME -> NAME.gpuscope (patterns expanded); none -> the first free reportN.gpuscope. */
static char *output_path(const char *name)
{
	if (name) {
		int has_n = 0;
		char *p = expand_name(name, 1, &has_n);
		if (!p || !has_n)
			return p ? with_ext(p) : NULL;
		free(p);
		for (unsigned i = 1;; i++) {
			p = with_ext(expand_name(name, i, &has_n));
			if (access(p, F_OK) < 0 && errno == ENOENT)
				return p;
			free(p);
		}
	}
	for (unsigned i = 1;; i++) {
		char *p = xstrfmt("report%u%s", i, TRACE_FILE_EXT);
		if (access(p, F_OK) < 0 && errno == ENOENT)
			return p;
		free(p);
	}
}

static int check_output(const char *path, int force)
{
	char *copy = xstrdup(path), *dir = dirname(copy);
	int ret = 0;
	struct stat st;

	/*
	 * lstat(): a symbolic link, even a dangling one, is there; with --force
	 * the new report is renamed over it (the link is replaced, never
	 * written through).
	 */
	if (lstat(path, &st) == 0) {
		if (!force)
			ret = error("report '%s' already exists (use --force to overwrite)", path);
		else if (S_ISDIR(st.st_mode))
			ret = error("cannot write '%s': it is a directory", path);
		else if (S_ISREG(st.st_mode) && access(path, W_OK) < 0)
			ret = error("cannot write '%s': %s", path, strerror(errno));
	} else if (errno != ENOENT) {
		ret = error("cannot write '%s': %s", path, strerror(errno));
	}
	if (!ret && access(dir, W_OK | X_OK) < 0)
		ret = error("cannot write '%s': directory '%s': %s", path, dir, strerror(errno));
	free(copy);
	return ret;
}

#ifndef GS_COLLECTOR_REL
#define GS_COLLECTOR_REL "../lib/gpuscope"
#endif
#ifndef GS_COLLECTOR_DIR
#define GS_COLLECTOR_DIR "/usr/local/lib/gpuscope"
#endif

/* @dir/@sub/libgpuscope-collect.so when readable (a full path), else NULL */
static char *collector_in(const char *dir, const char *sub)
{
	char *p = xstrfmt("%s%s%s/libgpuscope-collect.so", dir, sub ? "/" : "", sub ? sub : "");
	char *r = NULL;

	if (access(p, R_OK) == 0)
		r = realpath(p, NULL);
	free(p);
	return r;
}

/*
 * The collector library: $GPUSCOPE_COLLECTOR; else next to this binary (a
 * build tree); else where an install puts it, relative to this binary
 * (BINDIR/../lib/gpuscope, so any prefix or a moved tree works), then
 * ../lib; else the configured install directory (cmake/install.cmake).
 */
static char *find_collector(void)
{
	const char *env = getenv(GS_ENV_COLLECTOR);
	char exe[4096], *dir, *p;
	ssize_t n;

	if (env && *env) {
		if (access(env, R_OK) < 0) {
			error("collector library '%s' (GPUSCOPE_COLLECTOR): %s", env, strerror(errno));
			return NULL;
		}
		return realpath(env, NULL);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		error("cannot find the gpuscope binary: %s", strerror(errno));
		return NULL;
	}
	exe[n] = 0;
	dir = dirname(exe);
	if ((p = collector_in(dir, NULL)) || (p = collector_in(dir, GS_COLLECTOR_REL)) ||
	    (p = collector_in(dir, "../lib")) || (p = collector_in(GS_COLLECTOR_DIR, NULL)))
		return p;
	error("collector library 'libgpuscope-collect.so' not found next to '%s', in '%s/%s' or in "
	      "'%s' (set GPUSCOPE_COLLECTOR)", exe, dir, GS_COLLECTOR_REL, GS_COLLECTOR_DIR);
	return NULL;
}

/*
 * Without OS-runtime tracing, and under --on-demand without --lock-waits:
 * the collector built without lock wrappers, libgpuscope-collect-nolock.so
 * beside @lib (which it replaces, freed), when it is there; else @lib.
 * Idle, a lock wrapper costs about 2 ns even when it only jumps on, and a
 * launch-bound PyTorch step takes 1,840 locks (docs/always-on.md, "Cost").
 */
static char *collector_nolock(char *lib)
{
	const char *base = strrchr(lib, '/');
	char *p;

	if (!base || strcmp(base + 1, "libgpuscope-collect.so"))
		return lib;   /* GPUSCOPE_COLLECTOR named another file: that one */
	p = xstrfmt("%.*s/libgpuscope-collect-nolock.so", (int)(base - lib), lib);
	if (access(p, R_OK) < 0) {
		free(p);
		return lib;
	}
	free(lib);
	return p;
}

static void setenv_u64(const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	setenv(name, buf, 1);
}

/*
 * The Python start-up hook (docs/memory.md): the gpuscope_site directory
 * beside the collector goes first on PYTHONPATH, unless
 * GPUSCOPE_TORCH_MEM=0 or the directory is missing.
 */
static void set_python_hook(const struct profile_opts *o, const char *lib)
{
	const char *off = getenv(GS_ENV_TORCH_MEM), *old = getenv("PYTHONPATH");
	char *copy = xstrdup(lib), *site = xstrfmt("%s/gpuscope_site", dirname(copy));

	setenv(GS_ENV_TORCH_HISTORY, o->torch_history ? "1" : "0", 1);
	if (!(off && !strcmp(off, "0")) && access(site, R_OK | X_OK) == 0) {
		char *v = old && *old ? xstrfmt("%s:%s", site, old) : xstrdup(site);
		setenv("PYTHONPATH", v, 1);
		free(v);
	}
	free(site);
	free(copy);
}

/* The report's name for `gpuscope capture NAME`: the output's file name without its extension. */
static char *report_name;

/*
 * --trigger temp>C / mem_used>P%: profile's own NVML sampler watches every
 * GPU (the program is not asked to sample anything) and, when a reading
 * crosses the line, asks the run for a capture as `gpuscope capture NAME`
 * does (trigger "gpu").  A GPU fires once per crossing: it is armed again
 * when its reading falls back to the line or below, so a hot GPU that stays
 * hot does not capture again and again.
 */
static struct gpu_watch {
	int kind;                 /* TRIGGER_TEMP, TRIGGER_MEM_USED */
	double line;              /* degrees C, or percent of the memory used */
	const char *name;         /* the run's report name */
	uint8_t fired[64];        /* per GPU: above the line since its capture */
} gpu_watch;

static void gpu_trigger_watch(void *ctx, unsigned gpu, const struct nvml_sample *s)
{
	struct gpu_watch *g = ctx;
	double x;
	char why[128];

	if (gpu >= ARRAY_SIZE(g->fired))
		return;
	if (g->kind == TRIGGER_TEMP) {
		if (!s->valid[NVML_M_TEMP])
			return;
		x = s->v[NVML_M_TEMP];
	} else {
		if (!s->valid[NVML_M_MEM_USED] || !s->valid[NVML_M_MEM_TOTAL] || s->v[NVML_M_MEM_TOTAL] <= 0)
			return;
		x = 100 * s->v[NVML_M_MEM_USED] / s->v[NVML_M_MEM_TOTAL];
	}
	if (x <= g->line) {
		g->fired[gpu] = 0;
		return;
	}
	if (g->fired[gpu])
		return;
	snprintf(why, sizeof(why), "GPU %u %s %.1f%s over %.1f%s", gpu, g->kind == TRIGGER_TEMP ? "at" : "memory used",
		 x, g->kind == TRIGGER_TEMP ? " C" : "%", g->line, g->kind == TRIGGER_TEMP ? " C" : "%");
	/*
	 * Not yet listening (the program has not started its collector), or
	 * a capture already running: quiet, and asked again at the next
	 * sample while the reading stays over the line.
	 */
	set_error_quiet(1);
	if (capture_request(g->name, 0, TRACE_TRIGGER_GPU, why) == 0)
		g->fired[gpu] = 1;
	set_error_quiet(0);
}

/* --on-demand's settings (docs/always-on.md); unset otherwise, so that nothing leaks into a nested profile. */
static void set_on_demand(const struct profile_opts *o)
{
	static const char *const vars[] = { GS_ENV_ON_DEMAND, GS_ENV_RING_MS, GS_ENV_RING_MB,
					    GS_ENV_TRIGGER, GS_ENV_STEP_RANGE, GS_ENV_REPORT_NAME };

	if (!o->on_demand) {
		for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
			unsetenv(vars[i]);
		return;
	}
	setenv(GS_ENV_ON_DEMAND, "1", 1);
	setenv_u64(GS_ENV_RING_MS, o->ring_ns / 1000000u);
	setenv_u64(GS_ENV_RING_MB, o->ring_mb);
	if (o->trigger)
		setenv(GS_ENV_TRIGGER, o->trigger, 1);
	else
		unsetenv(GS_ENV_TRIGGER);
	if (o->step_range)
		setenv(GS_ENV_STEP_RANGE, o->step_range, 1);
	else
		unsetenv(GS_ENV_STEP_RANGE);
	setenv(GS_ENV_REPORT_NAME, report_name ? report_name : "", 1);
}

static void set_environment(const struct profile_opts *o, const char *dir, const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	struct strbuf sb = STRBUF_INIT;

	setenv(GS_ENV_DIR, dir, 1);
	if (o->trace & TR_CUDA)
		strbuf_addstr(&sb, "cuda,");
	if (o->trace & TR_NVTX)
		strbuf_addstr(&sb, "nvtx,");
	if (o->trace & TR_OSRT)
		strbuf_addstr(&sb, "osrt,");
	if (sb.len)
		sb.buf[--sb.len] = 0;
	setenv(GS_ENV_TRACE, sb.len ? sb.buf : "none", 1);
	strbuf_release(&sb);
	setenv_u64(GS_ENV_OSRT_THRESHOLD, o->osrt_threshold_ns);
	setenv_u64(GS_ENV_CPU_SAMPLE_HZ, o->cpu_hz);
	if (o->capture)
		setenv(GS_ENV_CAPTURE, o->capture, 1);
	else
		unsetenv(GS_ENV_CAPTURE);
	setenv(GS_ENV_CAPTURE_END, o->capture_end ? o->capture_end : "stop", 1);
	setenv_u64(GS_ENV_DELAY, o->delay_ns);
	setenv_u64(GS_ENV_DURATION, o->duration_ns);
	setenv_u64(GS_ENV_CUDA_ALL_APIS, (uint64_t)o->cuda_all_apis);
	if (o->kernel_metrics) {
		setenv(GS_ENV_KERNEL_METRICS, o->kernel_metrics, 1);
		setenv_u64(GS_ENV_KERNEL_COUNT, o->kernel_count);
		if (o->kernel_filter)
			setenv(GS_ENV_KERNEL_FILTER, o->kernel_filter, 1);
		else
			unsetenv(GS_ENV_KERNEL_FILTER);
	} else {
		unsetenv(GS_ENV_KERNEL_METRICS);
		unsetenv(GS_ENV_KERNEL_FILTER);
		unsetenv(GS_ENV_KERNEL_COUNT);
	}
	if (o->pm_us)
		setenv_u64(GS_ENV_PM_SAMPLING, o->pm_us);
	else
		unsetenv(GS_ENV_PM_SAMPLING);
	setenv_u64(GS_ENV_START, now_mono_ns());
	set_on_demand(o);
	if (watch_r >= 0)
		setenv_u64(GS_ENV_WATCH_FD, (uint64_t)watch_r);
	else
		unsetenv(GS_ENV_WATCH_FD);

	if (old && *old) {
		char *v = xstrfmt("%s:%s", lib, old);
		setenv("LD_PRELOAD", v, 1);
		free(v);
	} else {
		setenv("LD_PRELOAD", lib, 1);
	}
	if (o->trace & TR_NVTX)
		setenv("NVTX_INJECTION64_PATH", lib, 1);
	else
		unsetenv("NVTX_INJECTION64_PATH");
	if (o->trace & TR_CUDA)
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	else
		unsetenv("CUDA_INJECTION64_PATH");
	set_python_hook(o, lib);
}

/*
 * Start @argv with a close-on-exec pipe that carries errno back when exec
 * fails.  Returns the pid, or -1 after error().
 */
static pid_t spawn(char **argv)
{
	int fds[2], err = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error("cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		/* what the program would have had without profile */
		restore_inherited_signals();
		if (watch_r >= 0)
			fcntl(watch_r, F_SETFD, 0);   /* inherited through exec */
		execvp(argv[0], argv);
		err = errno;
		n = write(fds[1], &err, sizeof(err));
		(void)n;
		_exit(127);
	}
	child_pid = pid;   /* signals from now on are forwarded */
	close(fds[1]);
	if (watch_r >= 0) {
		close(watch_r);   /* the tree holds it now */
		watch_r = -1;
	}
	do
		n = read(fds[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		child_pid = 0;
		/* as shells do: 127 not found, 126 found but not runnable */
		if (err == ENOENT) {
			error("program '%s' not found", argv[0]);
			return -127;
		}
		error("cannot run '%s': %s", argv[0], strerror(err));
		return -126;
	}
	return pid;
}

/*
 * Wait for the program, reaping every other process of its tree that ends
 * meanwhile (profile is their subreaper, so orphans leave no zombies).
 */
static int wait_status(pid_t pid)
{
	int st;

	for (;;) {
		pid_t r = waitpid(-1, &st, 0);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return error("cannot wait for the program: %s", strerror(errno)), 1;
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/*
 * Processes of the tree still running when the program ended (Python's
 * resource tracker and forkserver, a pipeline's last writers) usually end
 * within milliseconds: give them up to PROFILE_LINGER_MS to finish their
 * part files.  Longer-lived ones (daemons) are left running.
 */
#define PROFILE_LINGER_MS 2000

static void wait_rest(void)
{
	for (int waited = 0; waited < PROFILE_LINGER_MS;) {
		struct timespec ts = { 0, 5 * 1000000L };
		pid_t r = waitpid(-1, NULL, WNOHANG);
		if (r > 0)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return; /* ECHILD: none left */
		nanosleep(&ts, NULL);
		waited += 5;
	}
}

/*
 * Is @prog (found as execvp() would) an ELF executable without a program
 * interpreter?  A statically linked program never loads the collector.
 */
static int is_static_elf(const char *prog)
{
	unsigned char h[64];
	char *path = NULL;
	int fd = -1, stat_elf = 0;

	if (strchr(prog, '/')) {
		path = xstrdup(prog);
	} else {
		const char *p = getenv("PATH");
		if (!p || !*p)
			p = "/usr/local/bin:/usr/bin:/bin";
		while (*p) {
			size_t n = strcspn(p, ":");
			char *cand = xstrfmt("%.*s/%s", (int)n, n ? p : ".", prog);
			if (access(cand, X_OK) == 0) {
				path = cand;
				break;
			}
			free(cand);
			p += n;
			if (*p == ':')
				p++;
		}
	}
	if (path)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && !memcmp(h, ELFMAG, SELFMAG) &&
	    h[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		memcpy(&eh, h, sizeof(eh));
		if (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) {
			stat_elf = 1;
			for (unsigned i = 0; i < eh.e_phnum; i++) {
				Elf64_Phdr ph;
				if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
				    (ssize_t)sizeof(ph)) {
					stat_elf = 0;
					break;
				}
				if (ph.p_type == PT_INTERP) {
					stat_elf = 0;
					break;
				}
			}
		}
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return stat_elf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The part files in @dir, sorted, each at least a file header long. */
static char **list_parts(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t alloc = 0, e = strlen(TRACE_FILE_EXT);

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		char *p;
		if (len <= e || strcmp(de->d_name + len - e, TRACE_FILE_EXT))
			continue;
		p = xstrfmt("%s/%s", dir, de->d_name);
		if (stat(p, &st) < 0 || st.st_size < TRACE_HEADER_SIZE) {
			free(p);
			continue;
		}
		ALLOC_GROW(v, *n + 1, alloc);
		v[(*n)++] = p;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* Count events (as `info` does), processes, kernels and kernel counters of a report, streaming. */
struct report_counts {
	uint64_t events, procs, kernels, kmetrics;
	int capture_started;      /* a capture range's start edge was recorded */
	size_t captures;          /* captures (cli/captures.h) */
	char *nvtx_seen;          /* NVTX range names in the report, "a, b" (owned), or NULL */
};

static void count_row(void *ctx, uint32_t stream, unsigned type, const void *rec)
{
	struct report_counts *rc = ctx;

	if (type == TRACE_EV_KERNEL)
		rc->kernels++;
}

/*
 * What the report holds, read through every command's loader
 * (load_input_opts) with its streaming path: the bulk rows are counted as
 * they pass and never stored, so this costs little memory on a big report;
 * processes, capture edges and NVTX ranges are kept for the capture check.
 */
static int count_report(const char *path, struct report_counts *rc)
{
	struct model_sink sink = { 0 };
	struct load_opts lo = { 0 };
	struct model m;
	struct strbuf seen = STRBUF_INIT;
	size_t nseen = 0;

	memset(rc, 0, sizeof(*rc));
	sink.types = (1u << TRACE_EV_OSRT) | (1u << TRACE_EV_CPU_SAMPLE) | (1u << TRACE_EV_API) |
		     (1u << TRACE_EV_KERNEL) | (1u << TRACE_EV_MEMCPY) | (1u << TRACE_EV_MEMSET) |
		     (1u << TRACE_EV_SYNC) | (1u << TRACE_EV_MEMORY) | (1u << TRACE_EV_METRIC);
	sink.ctx = rc;
	sink.row = count_row;
	lo.sink = &sink;
	model_init(&m);
	if (load_input_opts(&m, path, &lo) < 0) {
		model_release(&m);
		return -1;
	}
	rc->events = m.events;
	rc->procs = m.procs.n;
	rc->kmetrics = m.kmetrics.n;
	for (size_t i = 0; i < m.captures.n; i++)
		if (m.captures.v[i].what == TRACE_CAPTURE_START)
			rc->capture_started = 1;
	{
		struct capture *c;
		rc->captures = captures_of(&m, &c);
		free(c);
	}
	/* up to 10 distinct names, which is enough to spot a misspelt range */
	for (size_t i = 0; i < m.nvtx.n && nseen < 10; i++) {
		const char *name = strtab_get(&m.str, m.nvtx.v[i].name_id);
		size_t j;
		for (j = 0; j < i; j++)
			if (m.nvtx.v[j].name_id == m.nvtx.v[i].name_id)
				break;
		if (j < i || !*name)
			continue;
		strbuf_addf(&seen, "%s'%s'", nseen++ ? ", " : "", name);
	}
	/* the names the collector saw while the range had not started (TRACE_NAME_NVTX_SEEN) */
	for (size_t i = 0; i < m.names.n && nseen < 10; i++) {
		const char *name = strtab_get(&m.str, m.names.v[i].name_id);
		size_t j;
		if (m.names.v[i].kind != TRACE_NAME_NVTX_SEEN || !*name)
			continue;
		for (j = 0; j < i; j++)
			if (m.names.v[j].kind == TRACE_NAME_NVTX_SEEN && m.names.v[j].name_id == m.names.v[i].name_id)
				break;
		if (j < i)
			continue;
		{
			/* not again when the report's own ranges named it */
			char *q = xstrfmt("'%s'", name);
			int dup = seen.buf && strstr(seen.buf, q);
			free(q);
			if (dup)
				continue;
		}
		strbuf_addf(&seen, "%s'%s'", nseen++ ? ", " : "", name);
	}
	rc->nvtx_seen = seen.buf;
	model_release(&m);
	return 0;
}

/*
 * Add the warning @msg to the report @out: a small part holding it, merged
 * with the report into a new file that then replaces it.  0 or -1.
 */
static int add_report_warning(const char *out, const char *tmpdir, const char *msg)
{
	char *part = xstrfmt("%s/warning%s", tmpdir, TRACE_FILE_EXT);
	char *dest = xstrfmt("%s.%ld.tmp", out, (long)getpid());
	const char *inputs[2] = { out, part };
	struct trace_builder b;
	struct trace_warning w = { 0 };
	int ret = -1;

	if (trace_builder_open(&b, part, 1, 0) == 0) {
		w.time = now_mono_ns();
		w.pid = (uint32_t)getpid();
		w.message_id = trace_builder_str(&b, msg);
		trace_builder_add(&b, TRACE_EV_WARNING, &w, sizeof(w));
		if (trace_builder_close(&b, 0) == 0 && trace_merge(dest, inputs, 2, 1) == 0) {
			ret = rename(dest, out);
			if (ret < 0) {
				error("cannot replace '%s': %s", out, strerror(errno));
				unlink(dest);
			}
		}
	}
	unlink(part);
	free(part);
	free(dest);
	return ret;
}

static void remove_dir(const char *dir, char **parts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		unlink(parts[i]);
	if (rmdir(dir) < 0) {
		/* leftovers (a part too short to merge): remove them too */
		DIR *d = opendir(dir);
		struct dirent *de;
		if (d) {
			while ((de = readdir(d))) {
				char *p;
				if (de->d_name[0] == '.')
					continue;
				p = xstrfmt("%s/%s", dir, de->d_name);
				unlink(p);
				free(p);
			}
			closedir(d);
		}
		rmdir(dir);
	}
}

static int parse_args(int argc, char **argv, struct profile_opts *o, int *first)
{
	/* "nvtx:" and -p's range; static, so reachable until exit (profile runs once) */
	static char *nvtx_range;
	const char *nvtx_capture = NULL;
	struct opt_iter it;
	int c;

	opt_iter_init(&it, &cli_profile, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		const char *optarg = it.arg;
		switch (c) {
		case OPT_OUTPUT:
			if (!*optarg)
				return usage_error(profile_usage, "-o needs a name");
			o->output = optarg;
			break;
		case OPT_FORCE:
			o->force = opt_bool(&it);
			break;
		case OPT_TRACE:
			if (parse_trace(optarg, &o->trace) < 0)
				return EXIT_USAGE;
			break;
		case OPT_OSRT_THRESHOLD:
			if (parse_duration_ns(optarg, &o->osrt_threshold_ns, "ns") < 0)
				return usage_error(profile_usage, "bad --osrt-threshold '%s' (e.g. 1000, 5us)",
						   optarg);
			break;
		case OPT_CPU_HZ:
			if (parse_u32(optarg, 10000, &o->cpu_hz) < 0)
				return usage_error(profile_usage, "bad --cpu-sample-hz '%s' (0 to 10000)", optarg);
			break;
		case OPT_NVTX_CAPTURE:
			if (!*optarg || *optarg == '@')
				return usage_error(profile_usage, "bad -p '%s' (NAME[@DOMAIN])", optarg);
			nvtx_capture = optarg;
			break;
		case OPT_CAPTURE:
			if (!strcmp(optarg, "nvtx") || !strcmp(optarg, "none")) {
				/* nsys's -c nvtx -p NAME; "none" is nsys's default */
				o->capture = !strcmp(optarg, "nvtx") ? "nvtx" : NULL;
				break;
			}
			if (check_capture(optarg) < 0)
				return usage_error(profile_usage,
						   "bad --capture-range '%s' (nvtx:NAME[@DOMAIN] or cudaProfilerApi)",
						   optarg);
			o->capture = optarg;
			break;
		case OPT_CAPTURE_END:
			if (strcmp(optarg, "stop") && strcmp(optarg, "repeat"))
				return usage_error(profile_usage, "bad --capture-range-end '%s' (stop or repeat)",
						   optarg);
			o->capture_end = optarg;
			break;
		case OPT_DELAY:
			if (parse_duration_ns(optarg, &o->delay_ns, "s") < 0)
				return usage_error(profile_usage, "bad --delay '%s' (seconds)", optarg);
			break;
		case OPT_DURATION:
			if (parse_duration_ns(optarg, &o->duration_ns, "s") < 0 || !o->duration_ns)
				return usage_error(profile_usage, "bad --duration '%s' (seconds, > 0)", optarg);
			break;
		case OPT_GPU_METRICS:
			o->gpu_metrics = 1;
			if (optarg && (parse_u32(optarg, 10000, &o->gpu_hz) < 0 || !o->gpu_hz))
				return usage_error(profile_usage, "bad --gpu-metrics rate '%s' (Hz)", optarg);
			break;
		case OPT_NO_GPU_METRICS:
			o->gpu_metrics = 0;
			break;
		case OPT_CUDA_ALL:
			o->cuda_all_apis = 1;
			break;
		case OPT_KMETRICS:
			o->kernel_metrics = optarg ? optarg : "basic";
			if (strcmp(o->kernel_metrics, "basic") && strcmp(o->kernel_metrics, "tensor") &&
			    strcmp(o->kernel_metrics, "memory") && strcmp(o->kernel_metrics, "full"))
				return usage_error(profile_usage,
						   "bad --kernel-metrics set '%s' (basic, tensor, memory, full)",
						   optarg);
			break;
		case OPT_KFILTER: {
			regex_t re;
			int e = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);
			if (e) {
				char msg[128];
				regerror(e, &re, msg, sizeof(msg));
				return usage_error(profile_usage, "bad --kernel-filter '%s': %s", optarg, msg);
			}
			regfree(&re);
			o->kernel_filter = optarg;
			break;
		}
		case OPT_KCOUNT:
			if (parse_u32(optarg, 1000000, &o->kernel_count) < 0 || !o->kernel_count)
				return usage_error(profile_usage, "bad --kernel-count '%s' (1 or more)", optarg);
			break;
		case OPT_PM:
			/* default 1 ms: 1,000 samples a second, finer than NVML's 10 Hz; 200 us is the floor (pmsample.c) */
			o->pm_us = 1000;
			if (optarg && (parse_u32(optarg, 10000000, &o->pm_us) < 0 || o->pm_us < 200))
				return usage_error(profile_usage, "bad --pm-sampling interval '%s' (microseconds, 200 or more)",
						   optarg);
			break;
		case OPT_TORCH_HISTORY:
			o->torch_history = 1;
			break;
		case OPT_ON_DEMAND:
			o->on_demand = 1;
			break;
		case OPT_RING_S:
			if (parse_duration_ns(optarg, &o->ring_ns, "s") < 0 || o->ring_ns < 1000000u ||
			    o->ring_ns > 3600000000000u)
				return usage_error(profile_usage, "bad --ring-s '%s' (1 ms to 3600 seconds)", optarg);
			break;
		case OPT_RING_MB:
			if (parse_u32(optarg, 1024, &o->ring_mb) < 0 || !o->ring_mb)
				return usage_error(profile_usage, "bad --ring-mb '%s' (1 to 1024)", optarg);
			break;
		case OPT_TRIGGER: {
			double v;
			int k = trigger_parse(optarg, &v);
			if (!k)
				return usage_error(profile_usage, "bad --trigger '%s' ('step_time>1.3x median', "
						   "'temp>85' or 'mem_used>95%%')", optarg);
			if (k == TRIGGER_STEP_TIME) {
				o->trigger = optarg; /* the collector watches the steps */
			} else {
				/* a GPU reading: profile watches its own NVML samples and asks for the capture */
				o->gpu_trigger = k;
				o->gpu_trigger_v = v;
			}
			break;
		}
		case OPT_LOCK_WAITS:
			o->lock_waits = 1;
			break;
		case OPT_STEP_RANGE:
			if (!*optarg)
				return usage_error(profile_usage, "--step-range needs a name");
			o->step_range = optarg;
			break;
		case OPT_STATS:
			o->stats = opt_bool(&it);
			break;
		case OPT_ANALYZE:
			o->analyze = 1;
			break;
		case OPT_HTML:
			o->html = 1;
			break;
		case OPT_HELP:
			return -1;
		default:
			return EXIT_USAGE;
		}
	}
	if (nvtx_capture && (!o->capture || !strcmp(o->capture, "nvtx"))) {
		free(nvtx_range);
		nvtx_range = xstrfmt("nvtx:%s", nvtx_capture);
		o->capture = nvtx_range;
	} else if (nvtx_capture) {
		return usage_error(profile_usage, "-p '%s' needs --capture-range=nvtx, not '%s'",
				   nvtx_capture, o->capture);
	} else if (o->capture && !strcmp(o->capture, "nvtx")) {
		return usage_error(profile_usage, "--capture-range=nvtx needs a range: -p NAME[@DOMAIN] "
				   "or --capture-range=nvtx:NAME");
	}
	if ((o->kernel_filter || o->kernel_count) && !o->kernel_metrics)
		o->kernel_metrics = "basic";   /* --kernel-filter/--kernel-count imply --kernel-metrics */
	if (!o->kernel_count)
		o->kernel_count = KERNEL_COUNT_DEFAULT;
	if (o->kernel_metrics && !(o->trace & TR_CUDA))
		return usage_error(profile_usage, "--kernel-metrics needs CUDA tracing (--trace=cuda,...)");
	if (o->pm_us && !(o->trace & TR_CUDA))
		return usage_error(profile_usage, "--pm-sampling needs CUDA tracing (--trace=cuda,...)");
	if (o->pm_us && o->kernel_metrics)
		return usage_error(profile_usage, "--pm-sampling and --kernel-metrics cannot share the GPU's counters: "
				   "use one per run");
	if (!o->on_demand && (o->ring_ns || o->ring_mb || o->trigger || o->gpu_trigger || o->step_range ||
			      o->lock_waits))
		return usage_error(profile_usage, "--ring-s, --ring-mb, --trigger, --step-range and --lock-waits "
				   "need --on-demand");
	if (o->on_demand && (o->delay_ns || o->duration_ns))
		return usage_error(profile_usage, "--on-demand records on a trigger, not by --delay/--duration: "
				   "`gpuscope capture --duration S` bounds a capture");
	if (!o->ring_ns)
		o->ring_ns = 30000000000u;    /* defaults: docs/always-on.md, collector's config.c */
	if (!o->ring_mb)
		o->ring_mb = 64;
	if (it.ind >= argc)
		return usage_error(profile_usage, "no program to profile");
	*first = it.ind;
	return 0;
}

/*
 * --on-demand: the NVML samples go through a flight recorder in this
 * process (src/nvml/sampler.h, struct nvml_ring), the counterpart of the
 * collector's ring: only the samples of the --ring-s seconds before each
 * capture, those inside it, and the last --ring-s seconds of the run reach
 * the report.  The ring is bounded in time (--ring-s, plus the seconds it
 * may take to learn of a capture) and in bytes (--ring-mb, as each
 * process's ring).  The capture edges come from the collectors, whatever
 * opened the capture (GS_CAPTURE_EDGES_FILE, src/collect/capture.c): the
 * sampler creates the file in the part directory and reads what they
 * append at each tick.  Sets @so's ring and returns the file's path
 * (owned by the caller).
 */
static char *ring_gpu_metrics(const struct profile_opts *o, const char *tmp, struct nvml_sampler_opts *so)
{
	char *path = xstrfmt("%s/%s", tmp, GS_CAPTURE_EDGES_FILE);

	so->ring_ns = o->ring_ns;
	so->ring_bytes = (size_t)o->ring_mb << 20;
	so->edges_path = path;
	return path;
}

/* The GPU metric ring's account at the end of an on-demand run (stderr). */
static void print_ring_stats(const struct nvml_sampler_stats *st)
{
	if (!st->ring)
		return;
	fprintf(stderr, "gpuscope: on demand: GPU metrics: %" PRIu64 " of %" PRIu64 " samples kept; the ring "
		"held %zu at most (%zu KiB of %zu KiB)\n", st->kept, st->samples, st->peak,
		st->peak_bytes >> 10, st->max_bytes >> 10);
	if (st->evicted)
		warning("GPU metrics: the ring's bound (--ring-mb) forgot %" PRIu64 " samples before "
			"--ring-s had passed: the metrics before a capture may reach back less", st->evicted);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_opts o = { 0 };
	char *out, *lib, *tmp, *nvml_path = NULL, **parts;
	const char *tmproot = getenv("TMPDIR");
	struct nvml_sampler *sampler = NULL;
	struct nvml_sampler_stats gst = { 0 };
	char *edges_path = NULL;
	struct sigaction sa, old[ARRAY_SIZE(fwd_sigs)];
	struct report_counts rc = { 0 };
	size_t nparts;
	int first = 0, status, ret;
	pid_t pid;

	o.trace = TR_CUDA | TR_NVTX | TR_OSRT;
	o.osrt_threshold_ns = 1000;
	o.cpu_hz = 100;
	o.gpu_metrics = -1;
	o.gpu_hz = 10;
	ret = parse_args(argc, argv, &o, &first);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;

	out = output_path(o.output);
	if (!out)
		return EXIT_USAGE;
	if (check_output(out, o.force) < 0) {
		free(out);
		return EXIT_USAGE;
	}
	lib = find_collector();
	if (!lib) {
		free(out);
		return EXIT_FAIL;
	}
	if (!(o.trace & TR_OSRT) || (o.on_demand && !o.lock_waits))
		lib = collector_nolock(lib);
	if (o.on_demand) {
		const char *base = strrchr(out, '/');
		size_t n;
		base = base ? base + 1 : out;
		n = strlen(base);
		if (n > strlen(TRACE_FILE_EXT) && !strcmp(base + n - strlen(TRACE_FILE_EXT), TRACE_FILE_EXT))
			n -= strlen(TRACE_FILE_EXT);
		report_name = xstrdup(base);
		report_name[n] = 0;
		/*
		 * GPU metrics are sampled here, outside the program (their cost is
		 * not the program's), on by default as in a normal profile, but
		 * through a flight recorder of their own (ring_gpu_metrics): a
		 * GPU trigger needs them, and says so when there are none.
		 */
		if (o.gpu_trigger && !o.gpu_metrics)
			return usage_error(profile_usage, "--trigger on a GPU reading needs GPU metrics (not --no-gpu-metrics)");
		if (o.gpu_trigger)
			o.gpu_metrics = 1;
	}
	tmp = xstrfmt("%s/gpuscope-XXXXXX", tmproot && *tmproot ? tmproot : "/tmp");
	if (!mkdtemp(tmp)) {
		error("cannot create a temporary directory '%s': %s", tmp, strerror(errno));
		free(out);
		free(lib);
		free(tmp);
		return EXIT_FAIL;
	}
	sentinel_start();
	watch_start();
	set_environment(&o, tmp, lib);

	if (o.gpu_metrics) {
		char why[256] = "";
		struct nvml_sampler_opts so = { 0 };
		nvml_path = xstrfmt("%s/nvml%s", tmp, TRACE_FILE_EXT);
		gpu_watch.kind = o.gpu_trigger;
		gpu_watch.line = o.gpu_trigger_v;
		gpu_watch.name = report_name;
		so.hz = o.gpu_hz;
		so.watch = o.gpu_trigger ? gpu_trigger_watch : NULL;
		so.watch_ctx = &gpu_watch;
		if (o.on_demand)
			edges_path = ring_gpu_metrics(&o, tmp, &so);
		sampler = nvml_sampler_open(nvml_path, &so, why, sizeof(why));
		if (!sampler && o.gpu_metrics > 0)
			warning("no GPU metrics%s: %s", o.gpu_trigger ? " (the --trigger on a GPU reading is off)" : "",
				why[0] ? why : "unknown reason");
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fwd_sigs); i++)
		sigaddset(&sa.sa_mask, fwd_sigs[i]);   /* one handler at a time (the sentinel) */
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	for (size_t i = 0; i < ARRAY_SIZE(fwd_sigs); i++) {
		/* a signal ignored where profile was started (nohup) stays ignored */
		if (inherited_ignored(fwd_sigs[i]))
			sigaction(fwd_sigs[i], NULL, &old[i]);
		else
			sigaction(fwd_sigs[i], &sa, &old[i]);
	}

	if (is_static_elf(argv[first]))
		warning("'%s' is statically linked: the collector cannot be loaded into it, only into "
			"the dynamically linked programs it runs", argv[first]);
	/* orphans of the tree become our children: reaped, and waited for briefly */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pid = spawn(argv + first);
	if (pid < 0) {
		sentinel_stop();
		watch_end();
		if (sampler)
			nvml_sampler_stop(sampler);
		parts = list_parts(tmp, &nparts);
		remove_dir(tmp, parts, nparts);
		for (size_t i = 0; i < nparts; i++)
			free(parts[i]);
		free(parts);
		free(out);
		free(lib);
		free(tmp);
		free(nvml_path);
		free(edges_path);
		return pid == -126 ? 126 : 127;
	}
	child_pid = pid;
	status = wait_status(pid);
	child_pid = 0;
	sentinel_stop();
	wait_rest();
	for (size_t i = 0; i < ARRAY_SIZE(fwd_sigs); i++)
		sigaction(fwd_sigs[i], &old[i], NULL);
	watch_end();
	if (sampler && nvml_sampler_finish(sampler, &gst) < 0)
		warning("GPU metrics may be incomplete");

	parts = list_parts(tmp, &nparts);
	if (!nparts) {
		error("no data was recorded (was the collector '%s' loaded?)", lib);
		remove_dir(tmp, parts, nparts);
		if (!status)
			status = EXIT_FAIL;
		ret = 1;
	} else {
		/*
		 * With --force the old report stays until the new one is whole:
		 * merge beside it, then rename over it.
		 */
		char *dest = o.force ? xstrfmt("%s.%ld.tmp", out, (long)getpid()) : xstrdup(out);
		ret = trace_merge(dest, (const char *const *)parts, nparts, 1);
		if (ret == 0 && o.force && rename(dest, out) < 0) {
			ret = error("cannot replace '%s': %s", out, strerror(errno));
			unlink(dest);
		}
		free(dest);
		if (ret == 0)
			ret = count_report(out, &rc);
	}
	if (ret > 0) {
		/* nothing recorded: said above */
	} else if (ret < 0) {
		error("the parts of the report are kept in '%s'", tmp);
		if (!status)
			status = EXIT_FAIL;
	} else {
		int step = EXIT_OK;
		char *capture_msg = NULL;
		/*
		 * A capture range that never started leaves an empty report: say
		 * so at the end, and in the report (info, stats and analyze show
		 * its warnings), with the NVTX ranges the report does hold.
		 */
		if (o.capture && !strncmp(o.capture, "nvtx:", 5) && !rc.capture_started) {
			capture_msg = xstrfmt("--capture-range=%s: the range never started, so nothing "
					      "inside it was recorded (NVTX ranges seen: %s)",
					      o.capture, rc.nvtx_seen ? rc.nvtx_seen : "none");
			if (add_report_warning(out, tmp, capture_msg) < 0)
				warning("the report '%s' does not hold the warning below", out);
		}
		remove_dir(tmp, parts, nparts);
		fprintf(stderr, "gpuscope: wrote '%s' (%" PRIu64 " events, %" PRIu64 " processes)\n", out,
			rc.events, rc.procs);
		if (capture_msg)
			warning("%s", capture_msg);
		free(capture_msg);
		if (o.on_demand)
			fprintf(stderr, "gpuscope: on demand: %zu capture%s (`gpuscope info %s` lists them)\n",
				rc.captures, rc.captures == 1 ? "" : "s", out);
		if (o.on_demand)
			print_ring_stats(&gst);   /* only when the samples went through the ring */
		if (o.kernel_metrics && !rc.kmetrics)
			fprintf(stderr, "gpuscope: no kernel metrics: %s\n",
				!rc.kernels ? "no CUDA kernel was recorded (no GPU, no driver, or no kernel launched)"
					    : "no kernel was profiled (see `gpuscope info` for why)");
		fflush(stdout);
		/*
		 * The steps after the run: the first failure is the exit status
		 * when the program itself succeeded; the HTML page follows --force
		 * as the report does.
		 */
		if (o.stats)
			step = cmd_stats(2, (char *[]){ "stats", out, NULL });
		if (o.analyze) {
			int r = cmd_analyze(2, (char *[]){ "analyze", out, NULL });
			step = step ? step : r;
		}
		if (o.html) {
			int r = o.force ? cmd_export(5, (char *[]){ "export", out, "--format", "html",
							      "--force", NULL })
					: cmd_export(4, (char *[]){ "export", out, "--format", "html", NULL });
			step = step ? step : r;
		}
		if (!status && step)
			status = step;
	}
	free(rc.nvtx_seen);
	for (size_t i = 0; i < nparts; i++)
		free(parts[i]);
	free(parts);
	free(out);
	free(lib);
	free(tmp);
	free(nvml_path);
	free(edges_path);
	return status;
}
