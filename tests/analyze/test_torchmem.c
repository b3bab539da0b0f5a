/*
 * test_torchmem.c - the rules on PyTorch's caching allocator (docs/memory.md):
 * out-of-memory, memory-fragmentation, memory-leak and memory-headroom, on
 * synthetic reports written through the real writer, each with a twin that
 * must not fire.
 *
 * Each report: a Python process with one 80 GiB device, 20 steps of 100 ms
 * with one 60 ms kernel each; the hook's samples at every step boundary
 * (kind step) and every 25 ms (periodic); 10 GiB stays allocated between
 * steps (weights, gradients, optimizer state) and each step's activations
 * bring allocated to 20 GiB in its middle.
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "synth.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define MS 1000000ull
#define T0 (1000 * MS)
#define PID 4242
#define NSTEPS 20
#define GIB (1ull << 30)
#define CAP (80 * GIB)

static const struct synth_kernel K = { "sm90_xmma_gemm_bf16bf16_bf16f32", 0, 7, 264, 256, 0 };

enum shape {
	STEADY,        /* the same every step, reserved 24 GiB: headroom */
	LEAK,          /* 1 GiB more allocated at each step boundary */
	LEAK_FREED,    /* as LEAK, everything freed again when the loop ends */
	LEAK_EXIT,     /* as LEAK, then the program's exit sample with nothing allocated */
	FRAG,          /* 60 GiB reserved, 40% of it split free pieces, retries rising */
	FRAG_FIXED,    /* the same with 2 GiB split (expandable segments) */
	OOM_FRAG,      /* OOM of 4 GiB with 20 GiB cached but no free block over 1 GiB */
	OOM_BATCH,     /* OOM of one 10 GiB request, the cache full */
	OOM_ACT,       /* OOM of 1 GiB with the cache full of live allocations */
	OOM_LEAK,      /* LEAK, then an OOM of 2 GiB (more than the 1 GiB cached) */
};

static const char *tmp(const char *name)
{
	static char buf[512];
	snprintf(buf, sizeof(buf), "%s/%s", gstest_tmpdir(), name);
	return buf;
}

static void sample(struct synth *s, uint64_t t, unsigned kind, int step, uint64_t alloc, uint64_t res,
		   uint64_t split, uint32_t retries, uint32_t segments)
{
	struct trace_torch_mem x;

	memset(&x, 0, sizeof(x));
	x.time = t;
	x.allocated = alloc;
	x.reserved = res;
	x.active = alloc;
	x.inactive_split = split;
	x.allocated_peak = alloc;
	x.reserved_peak = res;
	x.alloc_count = 1000 + (uint64_t)step * 50 + (alloc / GIB);
	x.free_count = 1000 + (uint64_t)step * 50;
	x.pid = PID;
	x.tid = PID;
	x.retries = retries;
	x.segments = segments;
	x.step = (uint32_t)step;
	x.kind = (uint16_t)kind;
	x.flags = TRACE_TM_HAS_ACTIVE | TRACE_TM_HAS_COUNTS | TRACE_TM_HAS_PEAKS | TRACE_TM_HAS_RESERVED |
		  TRACE_TM_HAS_STEP;
	trace_builder_add(&s->b, TRACE_EV_TORCH_MEM, &x, sizeof(x));
}

static void oom(struct synth *s, uint64_t t, uint64_t req, uint64_t alloc, uint64_t res, uint64_t largest_free)
{
	struct trace_oom o;

	memset(&o, 0, sizeof(o));
	o.time = t;
	o.requested = req;
	o.device_free = CAP - res - GIB / 2;
	o.device_total = CAP;
	o.allocated = alloc;
	o.reserved = res;
	o.inactive_split = res - alloc;
	o.largest_free = largest_free;
	o.blocks[0] = 6 * GIB;
	o.blocks[1] = 2 * GIB;
	o.nblocks = 2;
	o.pid = PID;
	o.tid = PID;
	o.flags = TRACE_OOM_HAS_DEVICE_FREE | TRACE_OOM_HAS_STATS | TRACE_OOM_HAS_BLOCKS;
	trace_builder_add(&s->b, TRACE_EV_OOM, &o, sizeof(o));
}

static int write_report(const char *path, enum shape shape)
{
	struct synth s;
	int leak = shape == LEAK || shape == LEAK_FREED || shape == LEAK_EXIT || shape == OOM_LEAK;
	uint64_t base_res = shape == FRAG || shape == FRAG_FIXED ? 60 * GIB :
			    shape == OOM_FRAG ? 70 * GIB : shape == OOM_BATCH || shape == OOM_ACT ? 76 * GIB : 24 * GIB;
	uint64_t split = shape == FRAG ? 24 * GIB : 1 * GIB, t_end = T0 + NSTEPS * 100 * MS;

	if (synth_open(&s, path, PID, "python3 train.py") < 0)
		return -1;
	synth_thread(&s, PID, "python3");
	synth_device(&s, 0, 132, CAP, 1980);
	for (int i = 0; i < NSTEPS; i++) {
		uint64_t t = T0 + (uint64_t)i * 100 * MS, kept = 10 * GIB + (leak ? (uint64_t)i * GIB : 0);
		uint64_t res = base_res + (leak ? (uint64_t)i * GIB : 0);
		uint32_t retries = shape == FRAG ? (uint32_t)i : 0;
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", i);
		synth_nvtx(&s, PID, name, t, t + 100 * MS);
		synth_kernel(&s, PID, t + 1 * MS, t + 2 * MS, t + 20 * MS, t + 80 * MS, &K);
		/* periodic samples at 25, 50, 75 ms: activations alive in the middle of the step */
		sample(&s, t + 25 * MS, TRACE_TM_PERIODIC, i, kept + 5 * GIB, res, split, retries, 40);
		sample(&s, t + 50 * MS, TRACE_TM_PERIODIC, i, kept + 10 * GIB, res, split, retries, 40);
		sample(&s, t + 75 * MS, TRACE_TM_PERIODIC, i, kept + 5 * GIB, res, split, retries, 40);
		/* the step boundary (optimizer.step): activations freed */
		sample(&s, t + 99 * MS, TRACE_TM_STEP, i + 1, kept, res, split, retries, 40 + (uint32_t)i);
	}
	switch (shape) {
	case LEAK_FREED:
		/* the loop's end frees the kept buffers: a periodic sample just after the last step */
		sample(&s, t_end + 10 * MS, TRACE_TM_PERIODIC, NSTEPS, 10 * GIB, 43 * GIB, GIB, 0, 40);
		break;
	case LEAK_EXIT:
		sample(&s, t_end + 50 * MS, TRACE_TM_PEAK, NSTEPS, 0, 43 * GIB, 0, 0, 40);
		break;
	case OOM_FRAG:
		oom(&s, t_end, 4 * GIB, 50 * GIB, 70 * GIB, 1 * GIB);
		break;
	case OOM_BATCH:
		oom(&s, t_end, 10 * GIB, 75 * GIB, 76 * GIB, GIB / 4);
		break;
	case OOM_ACT:
		oom(&s, t_end, 1 * GIB, 75 * GIB + GIB / 2, 76 * GIB, GIB / 4);
		break;
	case OOM_LEAK:
		oom(&s, t_end, 2 * GIB, 78 * GIB, 79 * GIB, GIB / 4);
		break;
	default:
		break;
	}
	return synth_close(&s);
}

static const struct finding *find(const struct analyze_result *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->findings[i].id, id))
			return &r->findings[i];
	return NULL;
}

static void run(enum shape shape, struct model *m, struct analyze_result *r)
{
	static const struct analyze_opts none;
	const char *p = tmp("torchmem.gpuscope");

	CHECK_EQ_I64(write_report(p, shape), 0);
	model_init(m);
	CHECK_EQ_I64(model_load_report(m, p), 0);
	CHECK(m->has & MODEL_HAS_TORCH_MEM);
	CHECK_EQ_I64(analyze_run(m, &none, r), 0);
}

static void done(struct model *m, struct analyze_result *r)
{
	analyze_result_release(r);
	model_release(m);
}

/* The model keeps every sample, in time order, with its fields. */
static void test_model_loads(void)
{
	struct model m;
	struct analyze_result r;

	run(OOM_FRAG, &m, &r);
	CHECK_EQ_U64(m.torch_mem.n, 4 * NSTEPS);
	CHECK_EQ_U64(m.ooms.n, 1);
	CHECK_EQ_U64(m.torch_mem.v[0].time, T0 + 25 * MS);
	CHECK_EQ_U64(m.torch_mem.v[3].kind, TRACE_TM_STEP);
	CHECK_EQ_U64(m.torch_mem.v[3].allocated, 10 * GIB);
	CHECK_EQ_U64(m.ooms.v[0].requested, 4 * GIB);
	CHECK_EQ_U64(m.ooms.v[0].largest_free, GIB);
	/* the OOM extends the report's span past the last kernel */
	CHECK_EQ_U64(m.t_max, T0 + NSTEPS * 100 * MS);
	done(&m, &r);
}

/* The same every step: no leak, no fragmentation; headroom from the step samples. */
static void test_steady_headroom(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(STEADY, &m, &r);
	CHECK(find(&r, "memory-leak") == NULL);
	CHECK(find(&r, "memory-fragmentation") == NULL);
	CHECK(find(&r, "out-of-memory") == NULL);
	f = find(&r, "memory-headroom");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_I64(f->severity, SEV_INFO);
		CHECK_EQ_U64(f->gain * 1000, 0);
		CHECK_CONTAINS(f->evidence, "peak reserved 24.0 GiB of 80.0 GiB (30.0%), peak allocated 20.0 GiB");
		CHECK_CONTAINS(f->evidence, "10.0 GiB stays allocated between steps");
		/* 1 + (0.9 x 80 - 24) / (20 - 10) = 5.8 */
		CHECK_CONTAINS(f->evidence, "room for a batch about 5.8x as large before reserved reaches 90%");
	}
	done(&m, &r);
}

/* 1 GiB more at every step boundary: a leak with its rate and the time left. */
static void test_leak(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(LEAK, &m, &r);
	f = find(&r, "memory-leak");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_I64(f->severity, SEV_WARNING);
		/* the first step boundary is warm-up (left out): 19 points, 18 changes */
		CHECK_CONTAINS(f->evidence, "at the boundary of each of 19 steps (steps 2 to 20) grew from 11.0 GiB to "
				"29.0 GiB, rising in 18 of 18");
		/* 18 GiB in 1.8 s: 1 GiB per step, 10 GiB/s; 80 - 29 = 51 GiB left: 5.1 s, 51 steps */
		CHECK_CONTAINS(f->evidence, "rate 1.0 GiB per step, 10.0 GiB/s");
		CHECK_CONTAINS(f->evidence, "full in about 5 s (51 more steps)");
		CHECK_CONTAINS(f->recommendation, "loss.item()");
		/* full within memory-leak.fatal_horizon_s (a day): fatal, ranked before every time gain */
		CHECK(f->fatal);
		CHECK(r.n > 0 && r.findings[0].fatal && !strcmp(r.findings[0].id, "memory-leak"));
	}
	CHECK(find(&r, "memory-headroom") == NULL);
	/* the records of cudaMalloc are not the judge where the allocator's samples exist */
	CHECK(find(&r, "memory-pressure") == NULL);
	done(&m, &r);
}

/* Everything freed before the last sample: frees counted, no leak. */
static void test_leak_freed(void)
{
	struct model m;
	struct analyze_result r;

	run(LEAK_FREED, &m, &r);
	CHECK(find(&r, "memory-leak") == NULL);
	done(&m, &r);
	/* but a program's exit frees everything, leak or not: the exit sample does not count */
	run(LEAK_EXIT, &m, &r);
	CHECK(find(&r, "memory-leak") != NULL);
	done(&m, &r);
}

/* 40% of reserved in split free pieces for the whole run, retries rising: critical. */
static void test_fragmentation(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(FRAG, &m, &r);
	f = find(&r, "memory-fragmentation");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_I64(f->severity, SEV_CRITICAL);
		CHECK_EQ_U64(f->gain * 1000, 0);
		CHECK_CONTAINS(f->evidence, "inactive split blocks were at least 30% of reserved memory for 2.0 of 2.0 s "
				"sampled (100%)");
		CHECK_CONTAINS(f->evidence, "worst: 24.0 GiB of 60.0 GiB reserved in split free pieces (40.0%)");
		CHECK_CONTAINS(f->evidence, "allocation retries 19, OOMs 0, segments 40 -> 59");
		CHECK_CONTAINS(f->recommendation, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
	}
	CHECK(find(&r, "memory-headroom") == NULL); /* 60 of 80 GiB reserved */
	done(&m, &r);
	run(FRAG_FIXED, &m, &r);
	CHECK(find(&r, "memory-fragmentation") == NULL);
	done(&m, &r);
}

/* The OOM's fix follows the evidence. */
static void test_oom(void)
{
	struct model m;
	struct analyze_result r;
	const struct finding *f;

	run(OOM_FRAG, &m, &r);
	f = find(&r, "out-of-memory");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_I64(f->severity, SEV_CRITICAL);
		CHECK_STR(f->title, "Out of memory, with the cache fragmented");
		CHECK_CONTAINS(f->evidence, "a request of 4.0 GiB failed at");
		CHECK_CONTAINS(f->evidence, "with 9.5 GiB free of 80.0 GiB");
		CHECK_CONTAINS(f->evidence, "allocated 50.0 GiB, reserved 70.0 GiB of 80.0 GiB: 20.0 GiB cached but not "
				"allocated (28.6% of reserved)");
		CHECK_CONTAINS(f->evidence, "its largest free block was 1.0 GiB");
		CHECK_CONTAINS(f->evidence, "largest allocations: 6.0 GiB, 2.0 GiB");
		CHECK_CONTAINS(f->recommendation, "expandable_segments:True");
	}
	CHECK(find(&r, "memory-headroom") == NULL);
	done(&m, &r);

	run(OOM_BATCH, &m, &r);
	f = find(&r, "out-of-memory");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->title, "Out of memory on a batch-sized allocation");
		CHECK_CONTAINS(f->recommendation, "gradient accumulation");
	}
	done(&m, &r);

	run(OOM_ACT, &m, &r);
	f = find(&r, "out-of-memory");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->title, "Out of memory: too much alive at once");
		CHECK_CONTAINS(f->recommendation, "activation checkpointing");
	}
	done(&m, &r);

	run(OOM_LEAK, &m, &r);
	f = find(&r, "out-of-memory");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->title, "Out of memory after memory grew step after step");
		CHECK_CONTAINS(f->recommendation, "loss.detach()");
	}
	f = find(&r, "memory-leak");
	CHECK(f != NULL);
	if (f)
		CHECK_EQ_I64(f->severity, SEV_CRITICAL);
	done(&m, &r);
}

/* docs/report-format.md's byte layout of the two records. */
static void test_layout(void)
{
	CHECK_EQ_U64(sizeof(struct trace_torch_mem), 112);
	CHECK_EQ_U64(offsetof(struct trace_torch_mem, delta), 72);
	CHECK_EQ_U64(offsetof(struct trace_torch_mem, pid), 80);
	CHECK_EQ_U64(offsetof(struct trace_torch_mem, step), 104);
	CHECK_EQ_U64(offsetof(struct trace_torch_mem, kind), 108);
	CHECK_EQ_U64(offsetof(struct trace_torch_mem, flags), 110);
	CHECK_EQ_U64(sizeof(struct trace_oom), 152);
	CHECK_EQ_U64(offsetof(struct trace_oom, blocks), 64);
	CHECK_EQ_U64(offsetof(struct trace_oom, pid), 128);
	CHECK_EQ_U64(offsetof(struct trace_oom, detail_id), 144);
	CHECK_EQ_U64(offsetof(struct trace_oom, flags), 148);
	CHECK_EQ_U64(trace_record_size(TRACE_EV_TORCH_MEM), 112);
	CHECK_EQ_U64(trace_record_size(TRACE_EV_OOM), 152);
	CHECK_STR(trace_event_name(TRACE_EV_TORCH_MEM), "torch_mem");
	CHECK(trace_event_type_by_name("oom") == TRACE_EV_OOM);
}

/*
 * allocation-churn with PyTorch's view: 40 steps of cudaMalloc (1 ms), a 5 ms
 * kernel and a cudaFree that waits for it (the GPU idles through the free
 * and the next malloc), and an allocator sample at each step's start and
 * end.  @cause: 0 the cache emptied at each step's end (reserved falls),
 * 1 caching off (reserved equal to allocated), 2 retries rising.
 */
static int write_churn(const char *path, int cause)
{
	struct synth s;
	uint64_t t = T0;

	if (synth_open(&s, path, PID, "python3 train.py") < 0)
		return -1;
	synth_thread(&s, PID, "python3");
	synth_device(&s, 0, 132, CAP, 1980);
	for (int i = 0; i < 40; i++) {
		uint64_t a = 2 * GIB, r = cause == 1 ? a : 4 * GIB;
		uint32_t retries = cause == 2 ? (uint32_t)i : 0;
		synth_api(&s, PID, "cudaMalloc", t, t + 1 * MS);
		synth_memory(&s, t + 1 * MS, TRACE_MEM_ALLOC, 0x7f0000000000ull, 256ull << 20);
		sample(&s, t + 1 * MS + 2000, TRACE_TM_PERIODIC, i, a, r, 0, retries, 4);
		synth_kernel(&s, PID, t + 1 * MS, t + 1 * MS + 5000, t + 1 * MS + 10000, t + 6 * MS + 10000, &K);
		synth_api(&s, PID, "cudaFree", t + 1 * MS + 20000, t + 6 * MS + 30000);
		synth_memory(&s, t + 6 * MS + 30000, TRACE_MEM_FREE, 0x7f0000000000ull, 256ull << 20);
		/* after the free: emptied, the cache is handed back (reserved falls to what stays) */
		sample(&s, t + 6 * MS + 40000, TRACE_TM_PERIODIC, i, cause == 1 ? GIB : a,
		       cause == 0 ? 2 * GIB : cause == 1 ? GIB : r, 0, retries, 4);
		t += 6 * MS + 50000;
	}
	return synth_close(&s);
}

static void test_alloc_churn_torch(void)
{
	static const char *const why[] = { "reserved memory fell", "the cache is off",
					   "allocation retries (cudaMalloc failed" };
	static const char *const fix[] = { "Remove torch.cuda.empty_cache() from the loop",
					   "Unset PYTORCH_NO_CUDA_MEMORY_CACHING", "leave headroom" };
	static const struct analyze_opts none;

	for (int cause = 0; cause < 3; cause++) {
		struct model m;
		struct analyze_result r;
		const struct finding *f;
		const char *p = tmp("churn.gpuscope");

		CHECK_EQ_I64(write_churn(p, cause), 0);
		model_init(&m);
		CHECK_EQ_I64(model_load_report(&m, p), 0);
		CHECK_EQ_I64(analyze_run(&m, &none, &r), 0);
		f = find(&r, "allocation-churn");
		CHECK(f != NULL);
		if (f) {
			CHECK_CONTAINS(f->evidence, "PyTorch's allocator (device 0, pid 4242,");
			CHECK_CONTAINS(f->evidence, why[cause]);
			CHECK_CONTAINS(f->recommendation, fix[cause]);
		}
		done(&m, &r);
	}
}

static const struct gstest tests[] = {
	GSTEST(test_model_loads),
	GSTEST(test_steady_headroom),
	GSTEST(test_leak),
	GSTEST(test_leak_freed),
	GSTEST(test_fragmentation),
	GSTEST(test_oom),
	GSTEST(test_layout),
	GSTEST(test_alloc_churn_torch),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
