/*
 * rule_starvation.c - gpu-starvation and its sub-kind data-loading.
 *
 * Reads the gap attribution of timeline.c.  Idle time while the thread that
 * feeds the GPU did data work (I/O, waiting on loader processes, CPU work in
 * an NVTX range named like data work) is a `data-loading` finding; idle time
 * while it computed outside any traced call, waited on a lock or slept is a
 * `gpu-starvation` finding.  Gaps after synchronisations, inside allocation
 * calls and while launching belong to the synchronization, allocation-churn
 * and launch-bound rules, so no idle time is counted twice.
 */
#include "internal.h"

#include <string.h>

static void data_loading(struct az_ctx *c, const struct az_rule *self)
{
	static const int causes[] = { CAUSE_IO, CAUSE_WAIT, CAUSE_DATA_CPU, CAUSE_DATA_PREP };
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT;
	struct interval where[3];
	uint64_t ns = 0;
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
	if (gain < az_param(c, self, "min_gain"))
		return;
	strbuf_addf(&title, "GPU starved by CPU data loading (%s)",
		    dom == CAUSE_IO ? "blocked in I/O" : dom == CAUSE_WAIT ? "waiting on loader processes"
		    : "data preparation on the feeding thread");
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
	az_add(c, "data-loading", az_severity(gain), gain, title.buf,
	       "idle time during which the thread that launches the next GPU work was reading, waiting on "
	       "loader processes or preparing data (NVTX), divided by the analysed GPU time; a loader with "
	       "parallel workers and prefetching hides all of it, because batches are independent",
	       ev.buf,
	       c->pytorch
	       ? "Load batches in parallel with the GPU: torch.utils.data.DataLoader(num_workers=N (start with CPU cores / GPUs), "
		 "pin_memory=True, persistent_workers=True, prefetch_factor>=2); keep decoding and augmentation out of the "
		 "training loop (or on the GPU: DALI, torchvision.transforms.v2 on CUDA tensors); keep the data set on fast local storage"
	       : "Prepare the next batch while the GPU computes the current one: reader threads or processes filling a queue of "
		 "pinned buffers, cudaMemcpyAsync on a separate stream, events to hand batches over (double buffering); read in large "
		 "requests from fast local storage",
	       where, nw);
	strbuf_release(&ev);
	strbuf_release(&title);
}

static void starvation(struct az_ctx *c, const struct az_rule *self)
{
	static const int causes[] = { CAUSE_CPU, CAUSE_LOCK, CAUSE_SLEEP, CAUSE_API, CAUSE_UNKNOWN };
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT, fix = STRBUF_INIT;
	struct interval where[3];
	uint64_t ns;
	int dom = CAUSE_CPU;
	double gain;
	size_t nw;

	for (size_t i = 0; i < ARRAY_SIZE(causes); i++)
		if (c->cause[causes[i]].ns > c->cause[dom].ns)
			dom = causes[i];
	ns = c->cause[CAUSE_CPU].ns + c->cause[CAUSE_LOCK].ns + c->cause[CAUSE_API].ns +
	     c->cause[CAUSE_UNKNOWN].ns + c->cause[CAUSE_SLEEP].ns;
	gain = az_div((double)ns, (double)c->unit_wall_ns);
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
	az_add(c, "gpu-starvation", az_severity(gain), gain, title.buf,
	       "idle time while the thread that launches the next GPU work computed outside CUDA calls, waited on a lock, "
	       "slept, was in other CUDA calls or was not recorded, divided by the analysed GPU time: the most that moving "
	       "that work off the launch path (another thread or process, the GPU, or fewer sleeps) can save",
	       ev.buf, fix.buf, where, nw);
	strbuf_release(&ev);
	strbuf_release(&title);
	strbuf_release(&fix);
}

void rule_starvation(struct az_ctx *c, const struct az_rule *self)
{
	if (!c->has_gpu)
		return;
	data_loading(c, self);
	starvation(c, self);
}
