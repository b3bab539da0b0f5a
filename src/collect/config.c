/*
 * config.c - the collector's settings, read once from the environment
 * (env.h names every variable) into cl_config by cl_init(), before the
 * program's own code runs; read-only after (collect.h).  Out-of-range
 * values fall back to the defaults, as docs/collector.md says.
 */
#include "internal.h"
#include "env.h"
#include "trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct cl_config cl_config;

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return def;
	return x;
}

/* A number in [@lo, @hi] from @name, else @def (outside the range too). */
static uint64_t env_range(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	uint64_t v = env_u64(name, def);

	return v < lo || v > hi ? def : v;
}

/* The CUDA tracing knobs (docs/cuda.md); cupti.c acts on them at its start. */
static void config_cupti(void)
{
	const char *mode = getenv(GS_ENV_CUPTI_API_MODE), *kinds = getenv(GS_ENV_CUPTI_KINDS);
	const char *sub = getenv(GS_ENV_CUPTI_SUBSCRIBE), *clock = getenv(GS_ENV_CUPTI_CLOCK);

	if (mode)
		snprintf(cl_config.cupti.api_mode, sizeof(cl_config.cupti.api_mode), "%s", mode);
	if (kinds) {
		snprintf(cl_config.cupti.kinds, sizeof(cl_config.cupti.kinds), "%s", kinds);
		cl_config.cupti.kinds_set = 1;
	}
	cl_config.cupti.no_subscribe = sub && !strcmp(sub, "0");
	cl_config.cupti.cupti_clock = clock && !strcmp(clock, "cupti");
	cl_config.cupti.driver = env_range(GS_ENV_CUPTI_DRIVER, 1, 0, 1);
	cl_config.cupti.pool = env_range(GS_ENV_CUPTI_POOL, 1, 0, 1);
	cl_config.cupti.buffer_bytes = (size_t)env_range(GS_ENV_CUPTI_BUFFER_KB, 4096, 64, 1u << 20) << 10;
	cl_config.cupti.flush_ms = (unsigned)env_range(GS_ENV_CUPTI_FLUSH_MS, 1000, 0, 600000);
}

static void config_capture(const char *spec)
{
	if (!spec || !*spec)
		return;
	if (!strcmp(spec, "cudaProfilerApi")) {
		cl_config.capture_mode = CL_CAPTURE_CUDA_PROFILER;
	} else if (!strncmp(spec, "nvtx:", 5)) {
		const char *name = spec + 5, *at = strrchr(name, '@');
		size_t n = at ? (size_t)(at - name) : strlen(name);
		if (n >= sizeof(cl_config.capture_name))
			n = sizeof(cl_config.capture_name) - 1;
		memcpy(cl_config.capture_name, name, n);
		cl_config.capture_name[n] = 0;
		if (at)
			snprintf(cl_config.capture_domain, sizeof(cl_config.capture_domain), "%s", at + 1);
		cl_config.capture_mode = CL_CAPTURE_NVTX;
	}
}

/*
 * On-demand tracing (docs/always-on.md).  The ring keeps 30 s by default:
 * enough to see the steps before a slow one at the step times of training
 * jobs (0.1-10 s); 64 MiB holds that much of NVTX ranges, long OS-runtime
 * calls and 100 Hz CPU samples for a few dozen threads.  1 ms..3600 s and
 * 1..1024 MiB are accepted (a ring segment, an eighth, must fit in one
 * chunk of the crash path: TRACE_MAX_CHUNK); outside, the defaults.
 */
static void config_on_demand(void)
{
	const char *step = getenv(GS_ENV_STEP_RANGE), *name = getenv(GS_ENV_REPORT_NAME);
	const char *ctl = getenv(GS_ENV_CTL_DIR), *trig = getenv(GS_ENV_TRIGGER);

	cl_config.on_demand = env_u64(GS_ENV_ON_DEMAND, 0) == 1;
	cl_config.ring_ns = env_range(GS_ENV_RING_MS, 30000, 1, 3600000) * 1000000u;
	cl_config.ring_bytes = (size_t)env_range(GS_ENV_RING_MB, 64, 1, 1024) << 20;
	snprintf(cl_config.step_range, sizeof(cl_config.step_range), "%s",
		 step && *step ? step : "ProfilerStep");
	if (name)
		snprintf(cl_config.report_name, sizeof(cl_config.report_name), "%s", name);
	if (ctl)
		snprintf(cl_config.ctl_dir, sizeof(cl_config.ctl_dir), "%s", ctl);
	if (trig && *trig)
		cl_config.trigger = trigger_parse(trig, &cl_config.trigger_value);
}

void cl_config_read(void)
{
	const char *dir = getenv(GS_ENV_DIR), *tr = getenv(GS_ENV_TRACE);
	const char *end = getenv(GS_ENV_CAPTURE_END);

	memset(&cl_config, 0, sizeof(cl_config));
	if (dir)
		snprintf(cl_config.dir, sizeof(cl_config.dir), "%s", dir);
	if (!tr) {
		cl_config.trace = CL_TRACE_NVTX | CL_TRACE_OSRT | CL_TRACE_CUDA;
	} else {
		if (strstr(tr, "nvtx"))
			cl_config.trace |= CL_TRACE_NVTX;
		if (strstr(tr, "osrt"))
			cl_config.trace |= CL_TRACE_OSRT;
		if (strstr(tr, "cuda"))
			cl_config.trace |= CL_TRACE_CUDA;
	}
	cl_config.osrt_threshold_ns = env_u64(GS_ENV_OSRT_THRESHOLD, 1000);
	cl_config.cpu_sample_hz = (unsigned)env_u64(GS_ENV_CPU_SAMPLE_HZ, 100);
	if (cl_config.cpu_sample_hz > 10000)
		cl_config.cpu_sample_hz = 10000;
	config_capture(getenv(GS_ENV_CAPTURE));
	cl_config.capture_repeat = end && !strcmp(end, "repeat");
	cl_config.delay_ns = env_u64(GS_ENV_DELAY, 0);
	cl_config.duration_ns = env_u64(GS_ENV_DURATION, 0);
	cl_config.cuda_all_apis = env_u64(GS_ENV_CUDA_ALL_APIS, 0) != 0;
	cl_config.flush_ns = env_u64(GS_ENV_FLUSH_MS, 50) * 1000000u;
	if (cl_config.flush_ns < 1000000u)
		cl_config.flush_ns = 1000000u;
	{
		const char *z = getenv(GS_ENV_ZSTD_LEVEL);
		cl_config.zstd_level = z && *z ? atoi(z) : 1;
	}
	{
		const char *c = getenv(GS_ENV_CLOCK);
		cl_config.clock_monotonic = c && !strcmp(c, "monotonic");
	}
	cl_config.keep_layout = env_u64(GS_ENV_KEEP_LAYOUT, 1) != 0;
	cl_config.start_ns = env_u64(GS_ENV_START, 0);
	config_cupti();
	cl_config.buffer_bytes = (size_t)env_u64(GS_ENV_BUFFER_KB, 1024) << 10;
	if (cl_config.buffer_bytes < (64u << 10))
		cl_config.buffer_bytes = 64u << 10;
	if (cl_config.buffer_bytes > (64u << 20))
		cl_config.buffer_bytes = 64u << 20;
	cl_config.watch_fd = -1;
	{
		/* profile's liveness pipe: only a pipe's read end is taken for it */
		uint64_t fd = env_u64(GS_ENV_WATCH_FD, UINT64_MAX);
		struct stat st;
		if (fd < 65536 && fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
		    (fcntl((int)fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
			cl_config.watch_fd = (int)fd;
	}
	config_on_demand();
	cl_config.max_buffer_bytes = (size_t)env_u64(GS_ENV_MAX_BUFFER_MB, 2048) << 20;
	if (cl_config.max_buffer_bytes < 2 * cl_config.buffer_bytes)
		cl_config.max_buffer_bytes = 2 * cl_config.buffer_bytes;
}
