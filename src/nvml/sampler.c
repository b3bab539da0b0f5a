/*
 * sampler.c - NVML sampling inside `gpuscope profile` (see sampler.h).
 *
 * One thread reads every GPU at HZ: FAST-tier metrics every tick, SLOW-tier
 * ones (PCIe link and throughput, ECC, NVLink, processes) once a second, and
 * STATIC ones (maxima) once at the start.  Each valid metric becomes a
 * TRACE_EV_METRIC record named as in docs/monitor.md; an invalid one is not
 * written at all, so a reader never sees an unknown value as 0.  Each GPU
 * is described once by a TRACE_EV_DEVICE record whose id is the NVML index.
 * The NVML calls are held to a CPU budget (nvml_set_budget): expensive reads
 * are made less often than HZ and simply missing from the ticks in between.
 */
#include "sampler.h"
#include "nvml.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SAMPLER_MAX_HZ 100
/*
 * CPU budget of the sampler thread, as a fraction of one core (target: 1 %).
 * NVML calls cost 0.1-15 ms of CPU each on an H200 VM (bench/RESULTS-nvml.md),
 * so at 10 Hz the expensive ones (GPM, energy, NVLink) must be read less
 * often.  Two levels hold the budget:
 *  - the NVML layer shares a budget for its calls among the read groups by
 *    their measured cost (nvml_set_budget, nvml_fair_rates);
 *  - once a second the sampler compares the CPU time its thread really used
 *    since it started (the first tick reads every group at full cost, and
 *    the sampler's own work is not in the groups' costs) with this budget,
 *    and scales the NVML layer's budget by the ratio (at most x2 either way
 *    per second), so that the whole thread stays within it.
 * A budget of 0.8 % for the NVML calls alone measured 1.30 % of a core for
 * the thread on a 2-GPU machine; hence the feedback.
 * GPUSCOPE_GPU_METRICS_BUDGET (percent of a core; 0 = no budget) overrides it.
 */
#define SAMPLER_CPU_BUDGET 0.008
#define SAMPLER_NVML_SHARE 0.6       /* the NVML calls' first share of it */
#define SAMPLER_NVML_MIN 0.0002      /* never below: the cheap groups still run */
#define SAMPLER_FLUSH_NS (5ull * 1000 * 1000 * 1000)

struct nvml_sampler {
	struct nvml *n;
	struct trace_builder b;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	unsigned hz;
	uint32_t pid;
	uint32_t name_id[NVML_M__COUNT];
	uint32_t proc_mem_id;
	uint64_t ticks;
	double budget;                  /* whole thread, fraction of a core; 0 none */
	double nvml_budget;             /* what the NVML layer is given */
	int failed;
	void (*watch)(void *ctx, unsigned gpu, const struct nvml_sample *s);
	void *watch_ctx;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Once a second: scale the NVML layer's budget by how far the thread's CPU
 * share since @start is from the budget.  @used_ns CPU over @wall_ns.
 */
static void steer_budget(struct nvml_sampler *s, uint64_t used_ns, uint64_t wall_ns)
{
	if (s->budget <= 0 || !wall_ns)
		return;
	s->nvml_budget = nvml_steer_budget(s->nvml_budget, s->budget, (double)used_ns / (double)wall_ns,
					   SAMPLER_NVML_MIN);
	nvml_set_budget(s->n, s->nvml_budget, s->hz);
}

static void put_metric(struct nvml_sampler *s, uint64_t mono, unsigned gpu, uint32_t name_id,
		       uint32_t pid, double v)
{
	struct trace_metric m;

	memset(&m, 0, sizeof(m));
	m.time = mono;
	m.value = v;
	m.device = gpu;
	m.name_id = name_id;
	m.pid = pid;
	trace_builder_add(&s->b, TRACE_EV_METRIC, &m, sizeof(m));
}

static void parse_uuid(const char *s, uint8_t out[16])
{
	unsigned k = 0;

	memset(out, 0, 16);
	if (!strncmp(s, "GPU-", 4))
		s += 4;
	for (; *s && k < 32; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			continue;
		out[k / 2] = (uint8_t)(out[k / 2] | (k % 2 ? d : d << 4));
		k++;
	}
}

/*
 * The P2P status of GPU @i with each other GPU (topo.c, from
 * nvmlDeviceGetP2PStatus), as metrics "p2p_status.<peer>" of GPU @i, the
 * peer by NVML index: 0 when reads and writes both work (or the one known
 * does), else the first nvmlGpuP2PStatus_t reason; a pair whose status NVML
 * did not give is not written.  With them "nvml_index" (the value @i): the
 * model moves metrics onto CUDA ordinals (model.c, unify_devices), and this
 * one says which ordinal an NVML index became.  analyze's no-p2p-path rule
 * reads both (docs/rules.md).
 */
static void put_p2p(struct nvml_sampler *s, uint64_t now, unsigned i)
{
	int any = 0;

	for (unsigned j = 0; j < s->n->sys.ngpus && j < NVML_TOPO_MAX; j++) {
		struct nvml_pair pr;
		char name[32];
		int st;
		if (j == i)
			continue;
		nvml_topo_pair(s->n, i, j, &pr);
		if (pr.p2p_read > 0)
			st = pr.p2p_read;
		else if (pr.p2p_write > 0)
			st = pr.p2p_write;
		else if (pr.p2p_read == 0 || pr.p2p_write == 0)
			st = 0;
		else
			continue;
		snprintf(name, sizeof(name), "p2p_status.%u", j);
		put_metric(s, now, i, trace_builder_str(&s->b, name), s->pid, st);
		any = 1;
	}
	if (any)
		put_metric(s, now, i, trace_builder_str(&s->b, "nvml_index"), s->pid, i);
}

static void put_devices(struct nvml_sampler *s)
{
	uint64_t now = now_mono_ns();

	for (unsigned i = 0; i < s->n->sys.ngpus; i++) {
		const struct nvml_gpu_info *g = &s->n->gpu[i];
		const struct nvml_sample *st = &g->statics;
		struct trace_device d;

		memset(&d, 0, sizeof(d));
		d.id = i;
		d.name_id = trace_builder_str(&s->b, g->name);
		parse_uuid(g->uuid, d.uuid);
		d.cc_major = g->cc_major > 0 ? (uint32_t)g->cc_major : 0;
		d.cc_minor = g->cc_minor > 0 ? (uint32_t)g->cc_minor : 0;
		if (st->valid[NVML_M_SM_CLOCK_MAX])
			d.core_clock_khz = dbl_u32(st->v[NVML_M_SM_CLOCK_MAX] * 1000);
		if (st->valid[NVML_M_MEM_CLOCK_MAX])
			d.mem_clock_khz = dbl_u32(st->v[NVML_M_MEM_CLOCK_MAX] * 1000);
		d.mem_bus_width = g->bus_width > 0 ? (uint32_t)g->bus_width : 0;
		d.pci_domain = g->pci_domain;
		d.pci_bus = g->pci_bus;
		d.pci_device = g->pci_device;
		d.pid = s->pid;
		trace_builder_add(&s->b, TRACE_EV_DEVICE, &d, sizeof(d));
		for (unsigned m = 0; m < NVML_M__COUNT; m++)
			if (st->valid[m])
				put_metric(s, now, i, s->name_id[m], s->pid, st->v[m]);
		put_p2p(s, now, i);
	}
}

/* One tick: every GPU, FAST tier, and SLOW tier when @slow. */
static void sample_once(struct nvml_sampler *s, int slow)
{
	unsigned tiers = NVML_TIER_FAST | (slow ? NVML_TIER_SLOW : 0);
	struct nvml_sample smp;

	for (unsigned i = 0; i < s->n->sys.ngpus; i++) {
		if (nvml_sample(s->n, i, tiers, &smp))
			continue;
		if (s->watch)
			s->watch(s->watch_ctx, i, &smp);
		for (unsigned m = 0; m < NVML_M__COUNT; m++) {
			if (!smp.valid[m] || !(nvml_metric_info(m)->tier & tiers))
				continue;
			put_metric(s, smp.mono_ns, i, s->name_id[m], s->pid, smp.v[m]);
		}
		if (smp.valid[NVML_M_PROCESSES])
			for (unsigned k = 0; k < smp.nproc; k++)
				if (smp.proc[k].used_bytes != UINT64_MAX)
					put_metric(s, smp.mono_ns, i, s->proc_mem_id, smp.proc[k].pid,
						   (double)smp.proc[k].used_bytes);
	}
}

static void *sampler_main(void *arg)
{
	struct nvml_sampler *s = arg;
	uint64_t period = 1000000000ull / s->hz;
	uint64_t next = now_mono_ns(), last_flush = next, start = next;
	uint64_t cpu0 = thread_cpu_ns();

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		uint64_t now;

		pthread_mutex_unlock(&s->lock);
		sample_once(s, s->ticks % s->hz == 0);
		s->ticks++;
		now = now_mono_ns();
		if (s->ticks % s->hz == 0)
			steer_budget(s, thread_cpu_ns() - cpu0, now - start);
		if (now - last_flush >= SAMPLER_FLUSH_NS) {
			if (trace_builder_flush(&s->b))
				s->failed = 1;
			last_flush = now;
		}
		next += period;
		if (next < now) /* fell behind (a slow call): skip, do not burst */
			next = now + period;
		pthread_mutex_lock(&s->lock);
		while (!s->stop) {
			struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
			int rc = pthread_cond_timedwait(&s->cond, &s->lock, &ts);
			if (rc == ETIMEDOUT)
				break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct nvml_sampler *nvml_sampler_start(const char *path, unsigned hz, char *why, size_t whylen)
{
	return nvml_sampler_start_watch(path, hz, NULL, NULL, why, whylen);
}

struct nvml_sampler *nvml_sampler_start_watch(const char *path, unsigned hz,
					      void (*watch)(void *ctx, unsigned gpu, const struct nvml_sample *s),
					      void *ctx, char *why, size_t whylen)
{
	struct nvml_sampler *s;
	pthread_condattr_t ca;
	struct nvml *n;
	const char *env;
	double budget;

	if (hz == 0 || hz > SAMPLER_MAX_HZ) {
		snprintf(why, whylen, "GPU metric rate %u Hz is outside 1..%d", hz, SAMPLER_MAX_HZ);
		return NULL;
	}
	n = nvml_open(getenv("GPUSCOPE_NVML_REPLAY"), why, whylen);
	if (!n)
		return NULL;
	budget = SAMPLER_CPU_BUDGET;
	if ((env = getenv("GPUSCOPE_GPU_METRICS_BUDGET")) && *env)
		budget = atof(env) / 100.0;
	s = xcalloc(1, sizeof(*s));
	s->watch = watch;
	s->watch_ctx = ctx;
	s->n = n;
	s->hz = hz;
	s->budget = budget > 0 ? budget : 0;
	s->nvml_budget = s->budget * SAMPLER_NVML_SHARE;
	nvml_set_budget(n, s->nvml_budget, hz);
	s->pid = (uint32_t)getpid();
	if (trace_builder_open(&s->b, path, 1, 0)) {
		snprintf(why, whylen, "cannot create '%s'", path);
		nvml_close(n);
		free(s);
		return NULL;
	}
	for (unsigned m = 0; m < NVML_M__COUNT; m++)
		s->name_id[m] = trace_builder_str(&s->b, nvml_metric_info(m)->name);
	s->proc_mem_id = trace_builder_str(&s->b, "process_mem_bytes");
	put_devices(s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, sampler_main, s)) {
		snprintf(why, whylen, "cannot start the GPU metric thread");
		trace_builder_close(&s->b, 0);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		nvml_close(n);
		free(s);
		return NULL;
	}
	return s;
}

int nvml_sampler_stop(struct nvml_sampler *s)
{
	int ret;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	sample_once(s, 1); /* the state at the end */
	ret = trace_builder_close(&s->b, 0);
	if (s->failed)
		ret = -1;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	nvml_close(s->n);
	free(s);
	return ret;
}
