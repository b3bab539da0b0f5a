/*
 * rule_sync.c - synchronization: blocking device/stream/event syncs and
 * synchronous copies that leave the GPU idle afterwards.
 *
 * A blocking call that returns as the GPU drains empties the queue: the CPU
 * could not run ahead, so the GPU waits for everything the CPU does next.
 * timeline.c charges such a gap to the synchronisation, up to the time the
 * thread spent blocked (that much host work could have been done ahead had
 * it not waited), carrying what is left of the blocked time over to the
 * dispatch gaps that follow.  That idle time selects the finding; its gain
 * is the replay's (replay.c): every synchronise call, and every blocking
 * device-to-host read of at most synchronization.item_bytes, stops
 * waiting for the GPU (an event the host checks later, a read every N
 * steps), so the CPU queues work ahead.  Where one synchronise follows
 * nearly every launch, the finding says so: that is a debugging habit
 * (CUDA_LAUNCH_BLOCKING, a sync after each kernel to check errors).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct sync_xf {
	const struct az_ctx *c;
	uint64_t item_bytes;
	uint64_t tol;              /* engine.sync_tolerance_us: CPU/GPU clock skew */
};

/* Replay hook: synchronise calls and scalar reads no longer wait for the GPU. */
static uint64_t sync_call(void *ctx, const struct az_ctx *c, const struct az_replay *rp, uint32_t node,
			  uint32_t api_row, uint64_t dur, int *nodep)
{
	const struct sync_xf *x = ctx;
	const struct trace_api *a = &c->m->api.v[api_row];
	int cls = (int)c->api_class[a->name_id];

	(void)rp;
	(void)node;
	if (cls == API_SYNC) {
		*nodep = 1;
	} else if (cls == API_COPY_SYNC) {
		/*
		 * A synchronous read-back of a few bytes: the scalar it reads can
		 * wait.  Its copy runs inside the call (give or take the clock
		 * skew): look for it among the copies that start then, not in all.
		 */
		const struct model *m = c->m;
		size_t lo = 0, hi = m->memcpys.n;
		uint64_t from = a->start > x->tol ? a->start - x->tol : 0;
		while (lo < hi) { /* first copy starting at or after from */
			size_t mid = (lo + hi) / 2;
			if (m->memcpys.v[mid].start < from)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < m->memcpys.n && m->memcpys.v[i].start <= a->end + x->tol; i++) {
			const struct trace_memcpy *k = &m->memcpys.v[i];
			if (k->pid != a->pid || k->correlation != a->correlation)
				continue;
			if (k->kind == COPY_DTOH && k->bytes <= x->item_bytes)
				*nodep = 1;
			break;
		}
	}
	return dur;
}

struct upload;

/* What the two scans below keep per launching thread (at most 64 threads are followed). */
struct sync_thread {
	uint32_t pid, tid;
	int pending;               /* a launch not yet followed by a synchronise */
	const struct upload *up;   /* the pageable upload this thread's previous call made */
};

/* The state of (pid, tid) in @th (*n used of 64), added when new; NULL when the table is full. */
static struct sync_thread *sync_thread(struct sync_thread *th, size_t *n, uint32_t pid, uint32_t tid)
{
	size_t k;

	for (k = 0; k < *n && (th[k].pid != pid || th[k].tid != tid); k++)
		;
	if (k == *n) {
		if (*n == 64)
			return NULL;
		memset(&th[k], 0, sizeof(th[k]));
		th[k].pid = pid;
		th[k].tid = tid;
		(*n)++;
	}
	return &th[k];
}

/*
 * Launches followed by a synchronise before the next launch, per thread
 * (counted calls only): *nl launches, *ns of them synchronised at once.
 */
static void sync_after_launch(const struct az_ctx *c, uint64_t *nl, uint64_t *ns)
{
	const struct model *m = c->m;
	struct sync_thread th[64], *t;
	size_t n = 0;

	*nl = *ns = 0;
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = (int)c->api_class[a->name_id];
		if ((cls != API_LAUNCH && cls != API_SYNC) || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		if (!(t = sync_thread(th, &n, a->pid, a->tid)))
			continue;
		if (cls == API_LAUNCH) {
			(*nl)++;
			t->pending = 1;
		} else if (t->pending) {
			(*ns)++;
			t->pending = 0;
		}
	}
}

struct upload {
	uint64_t key;              /* pid << 32 | correlation */
	uint64_t bytes;
};

static int cmp_upload(const void *pa, const void *pb)
{
	uint64_t a = ((const struct upload *)pa)->key, b = ((const struct upload *)pb)->key;
	return (a > b) - (a < b);
}

/*
 * Synchronise calls whose thread's previous copy, launch or synchronise
 * call was an asynchronous copy from pageable host memory to the device:
 * *n of them, the largest such upload *max_bytes.  That pair is what a
 * blocking copy of a host tensor to the GPU looks like (PyTorch's
 * tensor.to("cuda"), .cuda(), torch.tensor(x, device="cuda") from Python
 * values: cudaMemcpyAsync, then cudaStreamSynchronize on the current
 * stream), a synchronisation the program never calls by name.
 */
static void upload_then_sync(const struct az_ctx *c, uint64_t *n, uint64_t *max_bytes)
{
	const struct model *m = c->m;
	struct sync_thread th[64];
	struct upload *ups = NULL;
	size_t nu = 0, alloc = 0, nth = 0;

	*n = *max_bytes = 0;
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		if (k->kind != COPY_HTOD || k->src_kind != MEM_PAGEABLE || !az_in_win(c, k->start))
			continue;
		ALLOC_GROW(ups, nu + 1, alloc);
		ups[nu].key = (uint64_t)k->pid << 32 | k->correlation;
		ups[nu++].bytes = k->bytes;
	}
	if (!nu)
		return;
	qsort(ups, nu, sizeof(*ups), cmp_upload);
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = (int)c->api_class[a->name_id];
		struct upload want;
		struct sync_thread *t;
		if ((cls != API_LAUNCH && cls != API_SYNC && cls != API_COPY_ASYNC && cls != API_COPY_SYNC) ||
		    !az_in_win(c, a->start))
			continue;
		if (!(t = sync_thread(th, &nth, a->pid, a->tid)))
			continue;
		if (cls == API_SYNC && t->up) {
			(*n)++;
			if (t->up->bytes > *max_bytes)
				*max_bytes = t->up->bytes;
		}
		t->up = NULL;
		if (cls == API_COPY_ASYNC) {
			want.key = (uint64_t)a->pid << 32 | a->correlation;
			t->up = bsearch(&want, ups, nu, sizeof(*ups), cmp_upload);
		}
	}
	free(ups);
}

void rule_sync(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	uint64_t item_bytes = (uint64_t)az_param(c, self, "item_bytes");
	struct az_tally calls = { 0 }, counts = { 0 };
	uint64_t nsync = 0, sync_ns = 0, ncopy_sync = 0, nitem = 0, nsyncrec = 0;
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain;
	char b1[64], b2[64];
	int t, every;
	uint64_t saved = 0, nlaunch = 0, nafter = 0, nupload = 0, upload_max = 0;
	struct strbuf fix = STRBUF_INIT;
	int uploads_first;
	struct finding *f;

	if (!c->has_gpu)
		return;
	gain = az_div((double)c->cause[CAUSE_SYNC].ns, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	{
		struct sync_xf sx = { c, item_bytes, (uint64_t)(az_engine_param(c, "sync_tolerance_us") * 1e3) };
		struct az_xform x = { 0 };
		x.what = "the synchronisations replaced by events (no host wait)";
		double g;
		x.ctx = &sx;
		x.call = sync_call;
		if ((g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
	}
	if (gain < az_param(c, self, "min_gain"))
		return;
	sync_after_launch(c, &nlaunch, &nafter);
	upload_then_sync(c, &nupload, &upload_max);
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		int cls = c->api_class[a->name_id];
		uint64_t d;
		if ((cls != API_SYNC && cls != API_COPY_SYNC) || !az_in_win(c, a->start) || !az_api_counted(c, a))
			continue;
		d = a->end > a->start ? a->end - a->start : 0;
		nsync++;
		sync_ns += d;
		if (cls == API_COPY_SYNC)
			ncopy_sync++;
		az_tally_add(&calls, a->name_id, d);
		az_tally_add(&counts, a->name_id, 1);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *k = &m->memcpys.v[i];
		if (k->kind == COPY_DTOH && k->bytes <= item_bytes && az_in_win(c, k->start))
			nitem++;
	}
	for (size_t i = 0; i < m->syncs.n; i++)
		if (az_in_win(c, m->syncs.v[i].start))
			nsyncrec++;

	/* nearly every launch synchronised at once: at least 9 in 10, over 10 launches or more */
	every = nlaunch >= 10 && nafter * 10 >= nlaunch * 9;
	if (nafter)
		strbuf_addf(&ev, "%llu of %llu launches are followed by a synchronise before the next launch%s\n",
			    (unsigned long long)nafter, (unsigned long long)nlaunch,
			    every ? ": a synchronisation after every launch" : "");
	strbuf_addstr(&ev, "GPU idle after blocking calls: ");
	az_describe_cause(c, CAUSE_SYNC, &ev);
	strbuf_addch(&ev, '\n');
	if (nsync) {
		strbuf_addf(&ev, "%llu blocking calls in the window (%llu synchronous copies/sets), %s blocked in total",
			    (unsigned long long)nsync, (unsigned long long)ncopy_sync,
			    fmt_duration(b1, sizeof(b1), (double)sync_ns));
		if (c->nsteps)
			strbuf_addf(&ev, ", %.1f per step", (double)nsync / (double)c->nsteps);
		strbuf_addch(&ev, '\n');
	}
	if ((t = az_tally_top(&calls)) >= 0) {
		uint64_t n = 0;
		for (size_t i = 0; i < counts.n; i++)
			if (counts.key[i] == calls.key[t])
				n = counts.ns[i];
		strbuf_addf(&ev, "most time in %s: %llu calls, %s\n", model_str(m, (uint32_t)calls.key[t]),
			    (unsigned long long)n, fmt_duration(b2, sizeof(b2), (double)calls.ns[t]));
	}
	if (nupload)
		strbuf_addf(&ev, "%llu of the synchronise calls follow an asynchronous copy of at most %s from pageable "
			    "host memory to the device on the same thread: a blocking upload%s\n",
			    (unsigned long long)nupload, fmt_bytes(b1, sizeof(b1), (double)upload_max),
			    c->pytorch ? " (tensor.to(\"cuda\") or .cuda() of a CPU tensor, torch.tensor(..., device=\"cuda\") "
			    "from Python values)" : "");
	if (nitem)
		strbuf_addf(&ev, "%llu device-to-host copies of <= %llu bytes (scalar reads such as .item())\n",
			    (unsigned long long)nitem, (unsigned long long)item_bytes);
	if (nsyncrec)
		strbuf_addf(&ev, "%llu CUDA synchronisation records in the window\n", (unsigned long long)nsyncrec);
	{
		static const int cs[] = { CAUSE_SYNC };
		az_steps_line(c, cs, 1, &ev);
	}
	for (int k = 0; k < 3; k++)
		if (c->cause[CAUSE_SYNC].big[k].end > c->cause[CAUSE_SYNC].big[k].start)
			where[nw++] = c->cause[CAUSE_SYNC].big[k];
	/* most of the synchronise calls are blocking uploads: that fix first */
	uploads_first = nsync && nupload * 2 >= nsync;
	if (uploads_first)
		strbuf_addstr(&fix, c->pytorch
			      ? "Most synchronisations are blocking uploads of host values: create them on the GPU without a copy "
				"(torch.full(shape, value, device=\"cuda\") fills on the GPU, while torch.tensor(value, "
				"device=\"cuda\") copies and waits), keep values that change every step on the GPU, or pin them "
				"(.pin_memory()) and copy with non_blocking=True; torch.cuda.set_sync_debug_mode(\"warn\") names "
				"each synchronising call"
			      : "Most synchronisations wait for uploads from pageable memory: allocate the host buffers pinned "
				"(cudaHostAlloc/cudaHostRegister) so cudaMemcpyAsync returns at once, and wait with an event "
				"only where the host reuses the buffer");
	f = az_add(c, "synchronization", az_severity(gain), gain,
	       every ? "A synchronisation after every launch: the GPU never has more than one kernel queued"
	       : nitem ? "Host waits for the GPU (scalar reads / synchronisation) and the GPU then idles"
		     : "Blocking synchronisation empties the GPU queue",
	       "the replay's saving when synchronise calls and scalar read-backs stop waiting for the GPU (the CPU queues "
	       "work ahead), divided by the analysed GPU time; without a graph, the idle time after blocking calls up to "
	       "the time the thread was blocked",
	       ev.buf,
	       uploads_first ? fix.buf
	       : c->pytorch
	       ? "Remove per-step host synchronisation: do not read GPU values every step (.item(), .cpu(), .tolist(), print, "
		 "Python if on a CUDA tensor; accumulate on the GPU and read every N steps), drop torch.cuda.synchronize() from "
		 "the loop, copy with non_blocking=True from pinned memory; torch.cuda.set_sync_debug_mode(\"warn\") finds hidden syncs"
	       : every ? "Remove the synchronise after each launch (error checks belong in debug builds: check cudaGetLastError "
		 "without synchronising, or once per step); launch the whole step, then wait once where the host needs results"
	       : "Wait only where the host needs the result: replace cudaDeviceSynchronize/cudaStreamSynchronize in the loop by "
		 "events (cudaEventRecord + cudaStreamWaitEvent between streams, cudaEventSynchronize only before host use), and "
		 "use cudaMemcpyAsync from pinned memory instead of cudaMemcpy",
	       where, nw);
	az_replay_finding(c, f, "the synchronisations replaced by events (no host wait)", saved);
	strbuf_release(&ev);
	strbuf_release(&fix);
}
