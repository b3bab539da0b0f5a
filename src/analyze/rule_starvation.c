/*
 * rule_starvation.c - the GPU starved by CPU work that is not the launch
 * path: data-loading, host-io and gpu-starvation.
 *
 * Reads the gap attribution of timeline.c, whose evidence is, strongest
 * first: OS-runtime calls, the CUDA call that blocked, CPU samples, the
 * framework's structure (DataLoader frames), the user's --data-range.
 *  - data-loading: reads, waits on loader processes, time in DataLoader
 *    frames or --data-range ranges, host work that ends in a batch upload;
 *  - host-io: writes (results, checkpoints, logs) on the launching thread;
 *  - gpu-starvation: locks, sleeps, other CUDA calls, no CPU record.
 * Host code between launches is launch-bound's (rule_launch.c); gaps after
 * synchronisations and inside allocation calls belong to their rules, so no
 * idle time is counted twice.  Gains are the replay's, with the time of
 * those causes removed from the launching thread.
 */
#include "internal.h"

#include <string.h>

static void data_loading(struct az_ctx *c, const struct az_rule *self)
{
	static const int causes[] = { CAUSE_IO, CAUSE_WAIT, CAUSE_DATA_CPU, CAUSE_DATA_PREP };
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT;
	struct interval where[3];
	uint64_t ns = 0, saved = 0;
	struct finding *f;
	int dom = CAUSE_IO;
	double gain;
	size_t nw;
	char b[64];

	for (size_t i = 0; i < ARRAY_SIZE(causes); i++) {
		ns += c->cause[causes[i]].ns;
		if (c->cause[causes[i]].ns > c->cause[dom].ns)
			dom = causes[i];
	}
	gain = az_div((double)ns, (double)c->unit_wall_ns);
	if (gain >= az_param(c, self, "min_gain")) {
		struct az_xform x = { 0 };
		double g;
		for (size_t i = 0; i < ARRAY_SIZE(causes); i++)
			x.causes |= 1u << causes[i];
		if ((g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
	}
	if (gain < az_param(c, self, "min_gain"))
		return;
	strbuf_addf(&title, "GPU starved by CPU data loading (%s)",
		    dom == CAUSE_IO ? "blocked in reads" : dom == CAUSE_WAIT ? "waiting on loader processes"
		    : dom == CAUSE_DATA_CPU ? "in the data loader's frames on the feeding thread"
		    : "data preparation before each batch upload on the feeding thread");
	az_idle_line(c, &ev);
	strbuf_addf(&ev, "idle while the feeding thread did data work: %s\n", fmt_duration(b, sizeof(b), (double)ns));
	for (size_t i = 0; i < ARRAY_SIZE(causes); i++) {
		if (!c->cause[causes[i]].ns)
			continue;
		az_describe_cause(c, causes[i], &ev);
		strbuf_addch(&ev, '\n');
	}
	az_cpu_line(c, &ev);
	az_steps_line(c, causes, ARRAY_SIZE(causes), &ev);
	nw = az_where_of(c, causes, ARRAY_SIZE(causes), where);
	f = az_add(c, "data-loading", az_severity(gain), gain, title.buf,
	       "the replay's saving when the launching thread's reads, loader waits, data-frame and batch "
	       "preparation time inside idle gaps move off it (a loader with parallel workers and prefetching "
	       "overlaps them with the GPU: batches are independent), divided by the analysed GPU time; without "
	       "a graph, that idle time itself",
	       ev.buf,
	       c->pytorch
	       ? "Load batches in parallel with the GPU: torch.utils.data.DataLoader(num_workers=N (start with CPU cores / GPUs), "
		 "pin_memory=True, persistent_workers=True, prefetch_factor>=2); keep decoding and augmentation out of the "
		 "training loop (or on the GPU: DALI, torchvision.transforms.v2 on CUDA tensors); keep the data set on fast local storage"
	       : "Prepare the next batch while the GPU computes the current one: reader threads or processes filling a queue of "
		 "pinned buffers, cudaMemcpyAsync on a separate stream, events to hand batches over (double buffering); read in large "
		 "requests from fast local storage",
	       where, nw);
	az_replay_finding(c, f, "the data work moved off the launching thread (overlapped with the GPU)", saved);
	strbuf_release(&ev);
	strbuf_release(&title);
}

/* Output written on the launching thread while the GPU waits. */
static void host_io(struct az_ctx *c, const struct az_rule *self)
{
	static const int causes[] = { CAUSE_IO_WRITE };
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	struct finding *f;
	uint64_t saved = 0;
	double gain = az_div((double)c->cause[CAUSE_IO_WRITE].ns, (double)c->unit_wall_ns), g;
	size_t nw;

	if (gain < az_param(c, self, "min_gain"))
		return;
	{
		struct az_xform x = { 0 };
		x.causes = 1u << CAUSE_IO_WRITE;
		if ((g = az_replay_gain(c, &x, &saved)) >= 0)
			gain = g;
	}
	if (gain < az_param(c, self, "min_gain"))
		return;
	az_idle_line(c, &ev);
	az_describe_cause(c, CAUSE_IO_WRITE, &ev);
	strbuf_addch(&ev, '\n');
	az_steps_line(c, causes, 1, &ev);
	nw = az_where_of(c, causes, 1, where);
	f = az_add(c, "host-io", az_severity(gain), gain,
		   "GPU idle while the launching thread writes output (file or socket I/O)",
		   "the replay's saving when the launching thread's writes inside idle gaps move to a background thread, "
		   "divided by the analysed GPU time", ev.buf,
		   "Write results, checkpoints and logs from a background thread or process (a queue of finished buffers), "
		   "or asynchronously (io_uring, aio, torch.distributed.checkpoint's async save); batch small writes; keep the "
		   "thread that launches GPU work free of file and socket output",
		   where, nw);
	az_replay_finding(c, f, "the writes moved to a background thread", saved);
	strbuf_release(&ev);
}

static void starvation(struct az_ctx *c, const struct az_rule *self)
{
	static const int causes[] = { CAUSE_LOCK, CAUSE_SLEEP, CAUSE_API, CAUSE_UNKNOWN };
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT, fix = STRBUF_INIT;
	struct interval where[3];
	uint64_t ns;
	int dom = CAUSE_LOCK;
	double gain, g;
	size_t nw;
	uint64_t saved = 0;
	struct finding *f;
	struct az_xform x = { 0 };

	ns = 0;
	for (size_t i = 0; i < ARRAY_SIZE(causes); i++) {
		if (c->cause[causes[i]].ns > c->cause[dom].ns)
			dom = causes[i];
		ns += c->cause[causes[i]].ns;
		x.causes |= 1u << causes[i];
	}
	gain = az_div((double)ns, (double)c->unit_wall_ns);
	if (gain < az_param(c, self, "min_gain"))
		return;
	if ((g = az_replay_gain(c, &x, &saved)) >= 0)
		gain = g;
	if (gain < az_param(c, self, "min_gain"))
		return;
	switch (dom) {
	case CAUSE_LOCK:
		strbuf_addstr(&title, "GPU starved while the feeding thread waited on a lock");
		strbuf_addstr(&fix, c->pytorch
			? "The thread that launches GPU work waits on a lock: in Python this is usually the GIL held by another "
			  "thread (a loader, logger or metrics thread). Move that work to processes (DataLoader workers), "
			  "make it release the GIL, or shorten its critical sections"
			: "The thread that launches GPU work waits on a lock: shorten the critical section, give the launching "
			  "thread its own queue, or hand results over without a shared lock");
		break;
	case CAUSE_SLEEP:
		strbuf_addstr(&title, "GPU starved while the feeding thread slept");
		strbuf_addstr(&fix, "Remove sleeps from the loop that feeds the GPU (time.sleep/usleep or polling with sleeps): "
				    "wait on an event, condition or queue instead");
		break;
	case CAUSE_UNKNOWN:
		strbuf_addstr(&title, "GPU idle between launches, cause not recorded");
		strbuf_addstr(&fix, "Record CPU activity too (gpuscope profile --trace=cuda,nvtx,osrt) to see what the CPU did "
				    "during the gaps; add NVTX ranges around the phases of the loop");
		break;
	default:
		strbuf_addstr(&title, "GPU starved by host work between launches");
		strbuf_addstr(&fix, c->pytorch
			? "The launching thread computes on the CPU between GPU steps (see the windows below): move per-step Python "
			  "work off the critical path (metrics, logging, .cpu()/.numpy() conversions, Python-side preprocessing), "
			  "do it on the GPU or every N steps, and reduce Python overhead with torch.compile; NVTX ranges "
			  "(torch.cuda.nvtx.range) around loop phases name the work"
			: "The launching thread computes on the CPU between GPU launches (see the windows below): overlap that work with "
			  "GPU execution (launch first, compute while the GPU runs; or a second thread), move it to the GPU, or make it "
			  "cheaper; NVTX ranges around the phases name the work");
		break;
	}
	az_idle_line(c, &ev);
	for (size_t i = 0; i < ARRAY_SIZE(causes); i++) {
		if (!c->cause[causes[i]].ns)
			continue;
		az_describe_cause(c, causes[i], &ev);
		strbuf_addch(&ev, '\n');
	}
	az_cpu_line(c, &ev);
	az_steps_line(c, causes, ARRAY_SIZE(causes), &ev);
	nw = az_where_of(c, causes, ARRAY_SIZE(causes), where);
	f = az_add(c, "gpu-starvation", az_severity(gain), gain, title.buf,
		   "the replay's saving when the launching thread's idle-time waits on locks, sleeps, other CUDA calls "
		   "and unrecorded time are removed, divided by the analysed GPU time: the most that moving that work off "
		   "the launch path (another thread or process, or fewer sleeps) can save",
		   ev.buf, fix.buf, where, nw);
	az_replay_finding(c, f, "the launching thread's waits on locks, sleeps and other CUDA calls removed", saved);
	strbuf_release(&ev);
	strbuf_release(&title);
	strbuf_release(&fix);
}

void rule_starvation(struct az_ctx *c, const struct az_rule *self)
{
	if (!c->has_gpu)
		return;
	data_loading(c, self);
	host_io(c, self);
	starvation(c, self);
}
