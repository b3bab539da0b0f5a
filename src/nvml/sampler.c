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
 *
 * With a ring (profile --on-demand) each tick's samples go into the ring
 * (struct nvml_ring, sampler.h) instead of the part; the thread then reads
 * the capture edges the collectors appended to the edges file since the
 * last tick, closes the captures of processes that are gone, and lets the
 * ring decide its samples older than ring_ns + SAMPLER_EDGE_SLACK_NS.
 */
#include "sampler.h"
#include "nvml.h"
#include "../trace/trace.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
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
/*
 * How late the sampler may learn of a capture's start and still keep the
 * ring_ns of samples before it (nvml_ring's slack_ns).  The collector
 * appends an edge at its writer's next pass (every 50 ms) and the sampler
 * reads the file every tick (at most 1 s at 1 Hz): 2 s covers a writer
 * held up for more than a second by a loaded machine, at the cost of 2 s
 * more of samples in memory.  One tick's period is added to it.
 */
#define SAMPLER_EDGE_SLACK_NS (2ull * 1000 * 1000 * 1000)

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
	int restamp;                    /* a replay: stamp each reading when read */
	int use_ring;                   /* the samples go through ring (profile --on-demand) */
	struct nvml_ring ring;
	int edges_fd;                   /* the capture edges file, read on; -1 none */
	struct strbuf edges;            /* its last line, not yet whole */
	uint64_t samples, kept;         /* metric records taken; written to the part */
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

/* The ring's @emit: a sample it keeps goes to the part. */
static void emit_metric(void *ctx, const struct trace_metric *m)
{
	struct nvml_sampler *s = ctx;

	s->kept++;
	trace_builder_add(&s->b, TRACE_EV_METRIC, m, sizeof(*m));
}

/*
 * One metric record: through the ring when there is one and @ringed, else
 * to the part.  The GPUs' descriptions at the start (static maxima, P2P
 * status, put_devices) are not ringed: they describe the GPU for the whole
 * run, once, whatever the run's length.
 */
static void put_metric_to(struct nvml_sampler *s, int ringed, uint64_t mono, unsigned gpu,
			  uint32_t name_id, uint32_t pid, double v)
{
	struct trace_metric m;

	memset(&m, 0, sizeof(m));
	m.time = mono;
	m.value = v;
	m.device = gpu;
	m.name_id = name_id;
	m.pid = pid;
	s->samples++;
	if (ringed && s->use_ring)
		nvml_ring_push(&s->ring, &m);
	else
		emit_metric(s, &m);
}

static void put_metric(struct nvml_sampler *s, uint64_t mono, unsigned gpu, uint32_t name_id,
		       uint32_t pid, double v)
{
	put_metric_to(s, 1, mono, gpu, name_id, pid, v);
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
		put_metric_to(s, 0, now, i, trace_builder_str(&s->b, name), s->pid, st);
		any = 1;
	}
	if (any)
		put_metric_to(s, 0, now, i, trace_builder_str(&s->b, "nvml_index"), s->pid, i);
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
				put_metric_to(s, 0, now, i, s->name_id[m], s->pid, st->v[m]);
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
		if (s->restamp)
			smp.mono_ns = now_mono_ns();
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

/* ---- the ring (sampler.h) ---- */

void nvml_ring_init(struct nvml_ring *r, uint64_t ring_ns, uint64_t slack_ns, size_t max,
		    void (*emit)(void *ctx, const struct trace_metric *m), void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->ring_ns = ring_ns;
	r->slack_ns = slack_ns;
	r->max = max ? max : 1;
	r->emit = emit;
	r->ctx = ctx;
}

void nvml_ring_release(struct nvml_ring *r)
{
	free(r->v);
	free(r->cap);
	r->v = NULL;
	r->cap = NULL;
	r->n = r->alloc = r->head = r->ncap = r->acap = 0;
}

/* Whether a sample of time @t lies in a capture's reach, [begin - ring_ns, end]. */
static int in_reach(const struct nvml_ring *r, uint64_t t)
{
	for (size_t i = 0; i < r->ncap; i++) {
		const struct nvml_ring_capture *c = &r->cap[i];
		if (t + r->ring_ns >= c->begin && (!c->end || t <= c->end))
			return 1;
	}
	return 0;
}

/* Decide the oldest sample: kept when @keep or in a reach, else forgotten (@early: counted). */
static void decide_oldest(struct nvml_ring *r, int keep, int early)
{
	const struct trace_metric *m = &r->v[r->head];

	if (keep || in_reach(r, m->time)) {
		r->kept++;
		r->emit(r->ctx, m);
	} else if (early) {
		r->evicted++;
	}
	r->head = (r->head + 1) % r->alloc;
	r->n--;
}

/* Room for one more: a larger buffer while under max, else the oldest decided now. */
static void make_room(struct nvml_ring *r)
{
	struct trace_metric *v;
	size_t alloc;

	if (r->n < r->alloc)
		return;
	if (r->alloc >= r->max) {
		decide_oldest(r, 0, 1);
		return;
	}
	alloc = r->alloc ? 2 * r->alloc : 256;
	if (alloc > r->max)
		alloc = r->max;
	v = xcalloc(alloc, sizeof(*v));
	for (size_t i = 0; i < r->n; i++)
		v[i] = r->v[(r->head + i) % r->alloc];
	free(r->v);
	r->v = v;
	r->alloc = alloc;
	r->head = 0;
}

void nvml_ring_push(struct nvml_ring *r, const struct trace_metric *m)
{
	make_room(r);
	r->v[(r->head + r->n) % r->alloc] = *m;
	r->n++;
	r->pushed++;
	if (r->n > r->peak)
		r->peak = r->n;
}

void nvml_ring_edge(struct nvml_ring *r, int start, uint32_t pid, uint32_t id, uint64_t t)
{
	for (size_t i = 0; i < r->ncap; i++) {
		struct nvml_ring_capture *c = &r->cap[i];
		if (c->pid != pid || c->id != id)
			continue;
		if (!start && !c->end)
			c->end = t > c->begin ? t : c->begin;
		return;   /* a start seen twice: the first */
	}
	if (!start)
		return;
	ALLOC_GROW(r->cap, r->ncap + 1, r->acap);
	r->cap[r->ncap].pid = pid;
	r->cap[r->ncap].id = id;
	r->cap[r->ncap].begin = t;
	r->cap[r->ncap].end = 0;
	r->ncap++;
	r->captures++;
}

/* One unsigned decimal number of @p (up to @end) into @v; the position after it, or NULL. */
static const char *edge_num(const char *p, const char *end, uint64_t *v)
{
	const char *q = p;

	*v = 0;
	while (q < end && *q >= '0' && *q <= '9') {
		if (*v > (UINT64_MAX - 9) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t)(*q - '0');
		q++;
	}
	return q > p ? q : NULL;
}

size_t nvml_ring_edges(struct nvml_ring *r, const char *buf, size_t len)
{
	size_t used = 0;

	for (;;) {
		const char *line = buf + used, *nl = memchr(line, '\n', len - used), *p;
		uint64_t pid, id, t;
		int start;

		if (!nl)
			return used;
		used = (size_t)(nl - buf) + 1;
		if (nl - line > 6 && !memcmp(line, "start ", 6)) {
			start = 1;
			p = line + 6;
		} else if (nl - line > 5 && !memcmp(line, "stop ", 5)) {
			start = 0;
			p = line + 5;
		} else {
			continue;
		}
		if (!(p = edge_num(p, nl, &pid)) || p == nl || *p++ != ' ' || !(p = edge_num(p, nl, &id)) ||
		    p == nl || *p++ != ' ' || !(p = edge_num(p, nl, &t)) || p != nl || pid > UINT32_MAX ||
		    id > UINT32_MAX)
			continue;
		nvml_ring_edge(r, start, (uint32_t)pid, (uint32_t)id, t);
	}
}

void nvml_ring_advance(struct nvml_ring *r, uint64_t now)
{
	uint64_t hold = r->ring_ns + r->slack_ns, cut = now > hold ? now - hold : 0;
	size_t k = 0;

	while (r->n && r->v[r->head].time < cut)
		decide_oldest(r, 0, 0);
	/* a capture closed before every sample to come is of no more use */
	for (size_t i = 0; i < r->ncap; i++)
		if (!r->cap[i].end || r->cap[i].end >= cut)
			r->cap[k++] = r->cap[i];
	r->ncap = k;
}

void nvml_ring_finish(struct nvml_ring *r, uint64_t end)
{
	while (r->n) {
		uint64_t t = r->v[r->head].time;
		decide_oldest(r, t + r->ring_ns >= end, 0);
	}
}

/* ---- the sampler's thread ---- */

/*
 * The capture edges appended since the last read (the file only grows),
 * and the end of the open captures of processes that are gone: a process
 * killed during a capture (SIGKILL, a crash) never writes its stop.
 */
static void read_edges(struct nvml_sampler *s, int check_alive)
{
	char buf[4096];
	ssize_t k;

	if (s->edges_fd < 0)
		return;
	while ((k = read(s->edges_fd, buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR)) {
		size_t used;
		if (k < 0)
			continue;
		strbuf_add(&s->edges, buf, (size_t)k);
		used = nvml_ring_edges(&s->ring, s->edges.buf, s->edges.len);
		memmove(s->edges.buf, s->edges.buf + used, s->edges.len - used + 1);
		s->edges.len -= used;
		if (s->edges.len > sizeof(buf))   /* no line is this long: not an edges file */
			strbuf_reset(&s->edges);
	}
	if (!check_alive)
		return;
	for (size_t i = 0; i < s->ring.ncap; i++) {
		struct nvml_ring_capture *c = &s->ring.cap[i];
		if (!c->end && kill((pid_t)c->pid, 0) < 0 && errno == ESRCH)
			c->end = now_mono_ns();
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
		if (s->use_ring) {
			read_edges(s, s->ticks % s->hz == 0);
			nvml_ring_advance(&s->ring, now);
		}
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
	struct nvml_sampler_opts o;

	memset(&o, 0, sizeof(o));
	o.hz = hz;
	o.watch = watch;
	o.watch_ctx = ctx;
	return nvml_sampler_open(path, &o, why, whylen);
}

static void sampler_free(struct nvml_sampler *s)
{
	if (s->edges_fd >= 0)
		close(s->edges_fd);
	strbuf_release(&s->edges);
	nvml_ring_release(&s->ring);
	nvml_close(s->n);
	free(s);
}

struct nvml_sampler *nvml_sampler_open(const char *path, const struct nvml_sampler_opts *o, char *why,
				       size_t whylen)
{
	struct nvml_sampler *s;
	pthread_condattr_t ca;
	struct nvml *n;
	const char *env, *replay = getenv("GPUSCOPE_NVML_REPLAY");
	double budget;
	unsigned hz = o->hz;

	if (hz == 0 || hz > SAMPLER_MAX_HZ) {
		snprintf(why, whylen, "GPU metric rate %u Hz is outside 1..%d", hz, SAMPLER_MAX_HZ);
		return NULL;
	}
	if (o->ring_ns && !o->edges_path)
		BUG("a GPU metric ring without an edges file");
	n = nvml_open(replay, why, whylen);
	if (!n)
		return NULL;
	budget = SAMPLER_CPU_BUDGET;
	if ((env = getenv("GPUSCOPE_GPU_METRICS_BUDGET")) && *env)
		budget = atof(env) / 100.0;
	s = xcalloc(1, sizeof(*s));
	s->edges_fd = -1;   /* s->edges: zeroed, STRBUF_INIT */
	s->watch = o->watch;
	s->watch_ctx = o->watch_ctx;
	s->n = n;
	s->hz = hz;
	if (replay && *replay)
		s->restamp = 1;   /* a recording stands in for the GPUs: at this run's clock */
	if (o->ring_ns) {
		size_t max = o->ring_bytes / sizeof(struct trace_metric);
		s->use_ring = 1;
		nvml_ring_init(&s->ring, o->ring_ns, SAMPLER_EDGE_SLACK_NS + 1000000000ull / hz, max,
			       emit_metric, s);
		s->edges_fd = open(o->edges_path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		if (s->edges_fd < 0) {
			snprintf(why, whylen, "cannot open '%s': %s", o->edges_path, strerror(errno));
			sampler_free(s);
			return NULL;
		}
	}
	s->budget = budget > 0 ? budget : 0;
	s->nvml_budget = s->budget * SAMPLER_NVML_SHARE;
	nvml_set_budget(n, s->nvml_budget, hz);
	s->pid = (uint32_t)getpid();
	if (trace_builder_open(&s->b, path, 1, 0)) {
		snprintf(why, whylen, "cannot create '%s'", path);
		sampler_free(s);
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
		sampler_free(s);
		return NULL;
	}
	return s;
}

/* The ring's bound cut samples short: say so in the report (info shows its warnings). */
static void put_ring_warning(struct nvml_sampler *s)
{
	struct trace_warning w;
	char *msg;

	msg = xstrfmt("GPU metrics: the ring's bound (%zu MiB) was reached, so %" PRIu64
		      " samples were forgotten before --ring-s had passed: the GPU metrics before "
		      "a capture may reach back less than --ring-s", s->ring.max * sizeof(struct trace_metric) >> 20,
		      s->ring.evicted);
	memset(&w, 0, sizeof(w));
	w.time = now_mono_ns();
	w.pid = s->pid;
	w.message_id = trace_builder_str(&s->b, msg);
	trace_builder_add(&s->b, TRACE_EV_WARNING, &w, sizeof(w));
	free(msg);
}

int nvml_sampler_finish(struct nvml_sampler *s, struct nvml_sampler_stats *st)
{
	int ret;

	if (!s) {
		if (st)
			memset(st, 0, sizeof(*st));
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	sample_once(s, 1); /* the state at the end */
	if (s->use_ring) {
		read_edges(s, 1);
		nvml_ring_finish(&s->ring, now_mono_ns());
		if (s->ring.evicted)
			put_ring_warning(s);
	}
	if (st) {
		memset(st, 0, sizeof(*st));
		st->samples = s->samples;
		st->kept = s->kept;
		st->ring = s->use_ring;
		st->evicted = s->ring.evicted;
		st->peak = s->ring.peak;
		st->peak_bytes = s->ring.alloc * sizeof(struct trace_metric);
		st->max_bytes = s->ring.max * sizeof(struct trace_metric);
		st->captures = s->ring.captures;
	}
	ret = trace_builder_close(&s->b, 0);
	if (s->failed)
		ret = -1;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	sampler_free(s);
	return ret;
}

int nvml_sampler_stop(struct nvml_sampler *s)
{
	return nvml_sampler_finish(s, NULL);
}
