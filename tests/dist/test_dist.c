/*
 * test_dist.c - distributed runs: ranks in the model (TRACE_EV_PROC_ATTR,
 * Kineto's distributedInfo), the merge of several ranks with aligned
 * clocks (src/cli/rank_merge.c), the per-rank table (stats_rank.c), the
 * straggler rule and --rank (model_keep_rank).
 *
 * Synthetic runs are written through the real writer (trace_builder): four
 * ranks on two hosts, five steps, each step a compute kernel and an
 * all-reduce.  Every number below follows from the construction:
 *  - true time T; rank r's report clock is T + BASE + skew[r], and its
 *    process records the wall clock at its start with an NTP-like error
 *    err[r] (up to 1 ms): the wall-clock offsets alone are wrong by err[r];
 *  - the all-reduce of step k starts on each rank when its compute ends
 *    (plus 10 us) and ends on all ranks at max(arrivals) + 200 us, plus a
 *    jitter of at most 600 ns per rank and step: so the refinement must
 *    bring rank r to rank 0's clock within 1.2 us (two jitters), whatever
 *    err[r] was;
 *  - the straggler's extra time before each collective (2 ms of host time,
 *    GPU idle, or 2 ms more compute) makes the three others wait 2 ms each
 *    per step: 3 x 5 x 2 ms = 30 ms attributed to it, up to the 10 us
 *    arrival spread and the kernels' lengths.
 *
 * Real traces: the DLRM ranks 0, 1, 2 and 7 of 8 in shared/validation/real
 * (found in env GS_SHARED_DIR, else $GS_SOURCE_DIR/../shared, else
 * /work/shared: shared_dir() below; the test says "skip" and passes that
 * part when none has them).  Their README says rank 1 entered
 * the step first and waits 7.6 ms in its first all-to-all, and rank 7 is
 * "the last rank to arrive (first all-to-all 10 us: everyone else waits for
 * this rank)": the merge must name rank 7.  tests/data/import/nccl_data.json.gz
 * (HTA's nccl parser input, rank 0 of 2) is always there.
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "cli/rank_merge.h"
#include "import/import.h"
#include "model/model.h"
#include "nvml/sampler.h"
#include "stats/stats_nccl.h"
#include "stats/stats_rank.h"
#include "trace/trace.h"
#include "util/util.h"

#include <stdlib.h>
#include <unistd.h>

#define NR 4
#define NSTEPS 5
#define MS 1000000ull
#define US 1000ull
#define BASE (1000ull * 1000 * MS) /* 1000 s: a monotonic clock some time after boot */
#define W0 1700000000000000000ull  /* the wall clock at T = 0 (2023) */

static const int64_t skew[NR] = { 0, 5000123, -3200000, 120000000000 };
static const int64_t err[NR] = { 0, 250000, -400000, 1000000 };

enum straggle { BY_HOST, BY_COMPUTE };

/* Jitter of rank r's collective end in step k: -600..+600 ns. */
static int64_t jitter(int r, int k)
{
	return ((r * 7 + k * 3) % 5 - 2) * 300;
}

static uint64_t lc(int r, uint64_t t)
{
	return (uint64_t)((int64_t)(t + BASE) + skew[r]);
}

static void write_rank(const char *path, int r, int slow, enum straggle how)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_proc_attr a;
	struct trace_thread th = { 0 };
	struct trace_device d = { 0 };
	uint32_t pid = 1000 + (uint32_t)r % 2; /* two hosts: pids repeat across them */
	char host[32];

	CHECK(trace_builder_open(&b, path, 0, 0) == 0);
	snprintf(host, sizeof(host), "node%d", r / 2);
	p.pid = pid;
	p.start_mono_ns = lc(r, 500 * US);
	p.start_realtime_ns = (uint64_t)((int64_t)(W0 + 500 * US) + err[r]);
	p.host_id = trace_builder_str(&b, host);
	p.cmdline_id = trace_builder_str(&b, "python train.py");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	memset(&a, 0, sizeof(a));
	a.pid = pid;
	a.time = p.start_mono_ns;
	a.rank = r;
	a.local_rank = r % 2;
	a.world_size = NR;
	a.mempolicy = 0;
	a.ncpus = 8;
	a.cpus_id = trace_builder_str(&b, r % 2 ? "8-15" : "0-7");
	a.cpu_nodes = r % 2 ? 2 : 1;
	a.launcher_id = trace_builder_str(&b, "torchrun");
	trace_builder_add(&b, TRACE_EV_PROC_ATTR, &a, sizeof(a));
	th.time = p.start_mono_ns;
	th.pid = pid;
	th.tid = pid;
	th.flags = TRACE_THREAD_START;
	trace_builder_add(&b, TRACE_EV_THREAD, &th, sizeof(th));
	d.id = (uint32_t)r % 2;
	d.pid = pid;
	d.name_id = trace_builder_str(&b, "NVIDIA H100 80GB HBM3");
	d.sm_count = 132;
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	for (int k = 0; k < NSTEPS; k++) {
		uint64_t s0 = 1 * MS + (uint64_t)k * 10 * MS, arrive[NR], last = 0;
		struct trace_kernel kc = { 0 }, kr = { 0 };
		struct trace_nvtx_range st = { 0 };
		/* every rank's arrival, to know when the collective ends */
		for (int q = 0; q < NR; q++) {
			uint64_t c0 = s0 + (uint64_t)q * 2 * US + (q == slow && how == BY_HOST ? 2 * MS : 0);
			uint64_t c1 = c0 + 1 * MS + (q == slow && how == BY_COMPUTE ? 2 * MS : 0);
			arrive[q] = c1 + 10 * US;
			if (arrive[q] > last)
				last = arrive[q];
		}
		st.start = lc(r, s0);
		st.end = lc(r, s0 + 9 * MS);
		st.pid = pid;
		st.tid = pid;
		st.kind = TRACE_NVTX_PUSHPOP;
		st.name_id = trace_builder_str(&b, "ProfilerStep#1");
		trace_builder_add(&b, TRACE_EV_NVTX_RANGE, &st, sizeof(st));
		kc.pid = pid;
		kc.device = (uint32_t)r % 2;
		kc.stream = 7;
		kc.end = lc(r, arrive[r] - 10 * US);
		kc.start = kc.end - (1 + (r == slow && how == BY_COMPUTE ? 2 : 0)) * MS;
		kc.name_id = trace_builder_str(&b, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
		kc.grid[0] = 264;
		kc.block[0] = 128;
		trace_builder_add(&b, TRACE_EV_KERNEL, &kc, sizeof(kc));
		kr.pid = pid;
		kr.device = kc.device;
		kr.stream = 9;
		kr.start = lc(r, arrive[r]);
		kr.end = (uint64_t)((int64_t)lc(r, last + 200 * US) + jitter(r, k));
		kr.name_id = trace_builder_str(&b, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
		kr.grid[0] = 8;
		kr.block[0] = 512;
		trace_builder_add(&b, TRACE_EV_KERNEL, &kr, sizeof(kr));
	}
	CHECK(trace_builder_close(&b, 0) == 0);
}

/* Write the four ranks and merge them into @out; returns 0 or -1. */
static int make_run(const char *out, int slow, enum straggle how)
{
	char *in[NR];
	struct rank_merge_opts o = { 1, 0 };
	int ret;

	for (int r = 0; r < NR; r++) {
		in[r] = xstrfmt("%s/rank%d-%d.gpuscope", gstest_tmpdir(), r, (int)how);
		write_rank(in[r], r, slow, how);
	}
	CHECK(rank_merge_wanted((const char *const *)in, NR) == 1); /* two hosts */
	ret = rank_merge(out, (const char *const *)in, NR, &o);
	for (int r = 0; r < NR; r++)
		free(in[r]);
	return ret;
}

/* GS_SHARED_DIR, else the folder shared beside the source tree (CI), else /work/shared; NULL when none. */
static const char *shared_dir(void)
{
	const char *d = gstest_shared_dir();

	if (d)
		return d;
	return access("/work/shared", R_OK | X_OK) ? NULL : "/work/shared";
}

static const struct model_process *proc_of_rank(const struct model *m, int rank)
{
	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i].has_attr && m->procs.v[i].attr.rank == rank)
			return &m->procs.v[i];
	return NULL;
}

static void test_alignment_recovers_skew(void)
{
	char *out = xstrfmt("%s/run.gpuscope", gstest_tmpdir());
	struct model m;

	CHECK(make_run(out, 3, BY_HOST) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(m.procs.n, NR);
	for (int r = 0; r < NR; r++) {
		const struct model_process *p = proc_of_rank(&m, r);
		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_EQ_I64(p->attr.world_size, NR);
		CHECK_EQ_I64(p->attr.local_rank, r % 2);
		CHECK_STR(model_str(&m, p->attr.launcher_id), "torchrun");
		CHECK_STR(model_str(&m, p->attr.cpus_id), r % 2 ? "8-15" : "0-7");
		if (r == 0) {
			CHECK(p->attr.flags & TRACE_PA_REFERENCE);
			CHECK_EQ_I64(p->attr.clock_offset_ns, 0);
			continue;
		}
		CHECK(p->attr.flags & TRACE_PA_CLOCK_WALL);
		CHECK(p->attr.flags & TRACE_PA_CLOCK_COLL);
		/* onto rank 0's clock: skew[0] - skew[r], whatever the wall-clock error err[r] */
		CHECK_NEAR(p->attr.clock_offset_ns, skew[0] - skew[r], 1200);
		CHECK(p->attr.clock_error_ns <= 2400);
	}
	/* pids 1000 and 1001 repeat on the second host: renumbered, four processes */
	CHECK(proc_of_rank(&m, 0)->pid != proc_of_rank(&m, 2)->pid);
	/* the merge says what it did */
	{
		int said = 0;
		for (size_t i = 0; i < m.nr_warnings; i++)
			said += strstr(m.warnings[i], "aligned on collective ends (residual error at most") != NULL;
		CHECK_EQ_U64(said, 1);
	}
	model_release(&m);
	free(out);
}

static void check_straggler(enum straggle how, int slow, const char *cause)
{
	char *out = xstrfmt("%s/run-%d.gpuscope", gstest_tmpdir(), (int)how);
	struct model m;
	struct rank_stats s;
	struct analyze_result r;
	const struct finding *f = NULL;
	char title[64];

	CHECK(make_run(out, slow, how) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(rank_stats_build(&m, &s), NR);
	CHECK_EQ_U64(s.instances, NSTEPS);
	for (size_t i = 0; i < s.n; i++) {
		const struct rank_row *w = &s.v[i];
		CHECK_EQ_I64(w->rank, (int64_t)i);
		CHECK_EQ_U64(w->colls, NSTEPS);
		CHECK_EQ_U64(w->steps, NSTEPS);
		if (w->rank == slow) {
			CHECK_EQ_U64(w->late, NSTEPS);
			CHECK_NEAR((double)w->blame_ns, 30.0 * MS, 0.2 * MS);
			CHECK(w->wait_ns == 0);
		} else {
			CHECK_EQ_U64(w->late, 0);
			CHECK_NEAR((double)w->wait_ns, 10.0 * MS, 0.1 * MS);
		}
	}
	rank_stats_release(&s);
	CHECK(analyze_run(&m, NULL, &r) == 0);
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.findings[i].id, "straggler"))
			f = &r.findings[i];
	CHECK(f != NULL);
	snprintf(title, sizeof(title), "Rank %d is the straggler", slow);
	if (f) {
		CHECK_CONTAINS(f->title, title);
		CHECK_CONTAINS(f->evidence, cause);
		CHECK(f->gain > 0.05);
	}
	analyze_result_release(&r);
	/* --rank: one rank alone */
	CHECK(model_keep_rank(&m, 2) == 0);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_EQ_U64(m.kernels.n, 2 * NSTEPS);
	CHECK(model_keep_rank(&m, 3) < 0);
	model_release(&m);
	free(out);
}

static void test_straggler_host(void)
{
	check_straggler(BY_HOST, 3, "its top cause is host time between launches");
}

static void test_straggler_compute(void)
{
	check_straggler(BY_COMPUTE, 1, "its top cause is compute");
}

/* A report without PROC_ATTR: ranks unknown (-1), not 0. */
static void test_rank_unknown(void)
{
	char *path = xstrfmt("%s/plain.gpuscope", gstest_tmpdir());
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct model m;
	struct rank_stats s;

	CHECK(trace_builder_open(&b, path, 0, 0) == 0);
	p.pid = 42;
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	CHECK(trace_builder_close(&b, 0) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, path) == 0);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_EQ_I64(m.procs.v[0].attr.rank, -1);
	CHECK_EQ_I64(m.procs.v[0].attr.world_size, -1);
	CHECK_EQ_I64(m.procs.v[0].attr.mempolicy, -1);
	CHECK_EQ_I64(model_proc_rank(&m, 42), -1);
	CHECK_EQ_U64(rank_stats_build(&m, &s), 0);
	rank_stats_release(&s);
	model_release(&m);
	free(path);
}

/* HTA's nccl parser input: distributedInfo says rank 0 of 2. */
static void test_kineto_distributed_info(void)
{
	struct model m;
	int32_t *ranks;

	model_init(&m);
	CHECK(load_input(&m, gstest_data("import/nccl_data.json.gz")) == 0);
	CHECK_EQ_U64(model_ranks(&m, &ranks), 1);
	CHECK_EQ_I64(ranks[0], 0);
	free(ranks);
	for (size_t i = 0; i < m.procs.n; i++)
		if (m.procs.v[i].attr.rank == 0) {
			CHECK_EQ_I64(m.procs.v[i].attr.world_size, 2);
			CHECK_STR(model_str(&m, m.procs.v[i].attr.launcher_id), "kineto");
		}
	model_release(&m);
}

static void test_dlrm_straggler(void)
{
	const char *dir = shared_dir();
	static const int ranks[] = { 0, 1, 2, 7 };
	char *in[4], *out;
	struct rank_merge_opts o = { 1, 0 };
	struct model m;
	struct rank_stats s;
	struct analyze_result r;
	const struct rank_row *most = NULL, *waited = NULL;
	const struct finding *f = NULL;

	if (!dir) {
		printf("# skip DLRM ranks: no shared folder (GS_SHARED_DIR, $GS_SOURCE_DIR/../shared, /work/shared)\n");
		return;
	}
	for (int i = 0; i < 4; i++) {
		in[i] = xstrfmt("%s/validation/real/param__v100_dlrm_8rank_rank%d.json.gz", dir, ranks[i]);
		if (access(in[i], R_OK)) {
			printf("# skip DLRM ranks: '%s' is not there\n", in[i]);
			for (int k = 0; k <= i; k++)
				free(in[k]);
			return;
		}
	}
	out = xstrfmt("%s/dlrm.gpuscope", gstest_tmpdir());
	CHECK(rank_merge_wanted((const char *const *)in, 4) == 1); /* Kineto traces */
	CHECK(rank_merge(out, (const char *const *)in, 4, &o) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(rank_stats_build(&m, &s), 4);
	CHECK_EQ_I64(s.world_size, 8);
	CHECK_EQ_U64(s.instances, 8); /* 8 NCCL kernels per rank: 5 SendRecv, 3 AllReduce */
	for (size_t i = 0; i < s.n; i++) {
		if (!most || s.v[i].blame_ns > most->blame_ns)
			most = &s.v[i];
		if (!waited || s.v[i].wait_ns > waited->wait_ns)
			waited = &s.v[i];
	}
	CHECK_EQ_I64(most->rank, 7);
	CHECK_EQ_U64(most->late, 8);
	CHECK_EQ_I64(waited->rank, 1);  /* the earliest to enter the step */
	/* the same host's clock: the refinement is a few us at most */
	for (size_t i = 0; i < m.procs.n; i++) {
		int64_t off = m.procs.v[i].attr.clock_offset_ns;
		CHECK(off > -10 * (int64_t)US && off < 10 * (int64_t)US);
	}
	rank_stats_release(&s);
	CHECK(analyze_run(&m, NULL, &r) == 0);
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.findings[i].id, "straggler"))
			f = &r.findings[i];
	CHECK(f != NULL);
	if (f) {
		CHECK_CONTAINS(f->title, "Rank 7 is the straggler");
		/* README: rank 7's idle is launch gaps and host work (sparse_data_dist), not compute */
		CHECK_CONTAINS(f->evidence, "its top cause is host time between launches");
		CHECK_CONTAINS(f->evidence, "4 of 8 ranks recorded");
	}
	analyze_result_release(&r);
	model_release(&m);
	for (int i = 0; i < 4; i++)
		free(in[i]);
	free(out);
}

/*
 * NUMA placement: rank 0 has its CPUs on node 1 (cpu_nodes bit 1) while its
 * GPU's numa_node metric says 0; 10 ms of HtoD copies in a 100 ms window
 * on one GPU: gain 10 x copy_slowdown 0.5 / 100 = 5%.  Rank 1, on its
 * GPU's node, has no finding.
 */
static void write_placed(const char *path, int rank, uint64_t cpu_nodes, int gpu_node)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_proc_attr a;
	struct trace_device d = { 0 };
	struct trace_metric x = { 0 };
	struct trace_kernel k = { 0 };
	struct trace_memcpy c = { 0 };

	CHECK(trace_builder_open(&b, path, 0, 0) == 0);
	p.pid = 500 + (uint32_t)rank;
	p.start_mono_ns = BASE;
	p.start_realtime_ns = W0;
	p.host_id = trace_builder_str(&b, "node0");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	model_proc_attr_unknown(&a);
	a.pid = p.pid;
	a.rank = rank;
	a.world_size = 2;
	a.cpu_nodes = cpu_nodes;
	a.mempolicy = 0;
	a.cpus_id = trace_builder_str(&b, cpu_nodes == 2 ? "24-47" : "0-23");
	trace_builder_add(&b, TRACE_EV_PROC_ATTR, &a, sizeof(a));
	d.id = (uint32_t)rank;
	d.pid = p.pid;
	d.sm_count = 58;
	d.name_id = trace_builder_str(&b, "NVIDIA L4");
	trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
	x.time = BASE + 1 * MS;
	x.device = (uint32_t)rank;
	x.pid = p.pid;
	x.value = gpu_node;
	x.name_id = trace_builder_str(&b, "numa_node");
	trace_builder_add(&b, TRACE_EV_METRIC, &x, sizeof(x));
	k.pid = p.pid;
	k.device = (uint32_t)rank;
	k.start = BASE;
	k.end = BASE + 90 * MS;
	k.name_id = trace_builder_str(&b, "sm89_xmma_gemm_bf16bf16_bf16f32");
	trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
	c.pid = p.pid;
	c.device = (uint32_t)rank;
	c.kind = COPY_HTOD;
	c.src_kind = MEM_PINNED;
	c.dst_kind = MEM_DEVICE;
	c.bytes = 100 << 20;
	c.start = BASE + 90 * MS;
	c.end = BASE + 100 * MS;
	trace_builder_add(&b, TRACE_EV_MEMCPY, &c, sizeof(c));
	CHECK(trace_builder_close(&b, 0) == 0);
}

static void test_numa_placement(void)
{
	char *path = xstrfmt("%s/placed.gpuscope", gstest_tmpdir());
	struct model m;
	struct analyze_result r;
	const struct finding *f = NULL;
	size_t n = 0;

	for (int rank = 0; rank < 2; rank++) {
		write_placed(path, rank, rank == 0 ? 2 : 1, 0);
		model_init(&m);
		CHECK(model_load_report(&m, path) == 0);
		CHECK(analyze_run(&m, NULL, &r) == 0);
		f = NULL;
		n = 0;
		for (size_t i = 0; i < r.n; i++)
			if (!strcmp(r.findings[i].id, "numa-placement")) {
				f = &r.findings[i];
				n++;
			}
		if (rank == 0) {
			CHECK_EQ_U64(n, 1);
			if (f) {
				CHECK_STR(f->title, "Rank 0 runs on NUMA node 1 while its GPU 0 is attached to node 0");
				CHECK_NEAR(f->gain, 0.05, 0.001);
				CHECK(f->severity >= SEV_WARNING);
				CHECK_CONTAINS(f->recommendation, "numactl --cpunodebind=0 --membind=0");
			}
		} else {
			CHECK_EQ_U64(n, 0);
		}
		analyze_result_release(&r);
		model_release(&m);
		unlink(path);
	}
	free(path);
}


/*
 * A merged report keeps every record type of its inputs: two real H200
 * reports of PyTorch's allocator (tests/data/torchmem: t_torchmem's 20
 * steps with a caught 1 TiB request, and mem-oom's OOM on a 4 GiB request),
 * merged as ranks 0 and 1.  Their allocator samples, OOM events (with their
 * detail text), NVML metrics and process attributes must all survive, and
 * the second input's GPU, which both call 0, is renumbered in its
 * allocator rows as in the rest.
 */
static void test_merge_keeps_torch_mem(void)
{
	char *in[2];
	char *out = xstrfmt("%s/mem.gpuscope", gstest_tmpdir());
	struct rank_merge_opts o = { 0, 1 };
	struct model a[2], m;
	size_t tm = 0, oom = 0, met = 0, km = 0, procs = 0;
	uint64_t req[2] = { 0, 0 };

	in[0] = xstrdup(gstest_data("torchmem/h200_t_torchmem.gpuscope")); /* gstest_data's buffer is reused */
	in[1] = xstrdup(gstest_data("torchmem/h200_mem-oom.broken.gpuscope"));
	for (int i = 0; i < 2; i++) {
		model_init(&a[i]);
		CHECK(model_load_report(&a[i], in[i]) == 0);
		tm += a[i].torch_mem.n;
		oom += a[i].ooms.n;
		met += a[i].metrics.n;
		km += a[i].kmetrics.n;
		procs += a[i].procs.n;
		CHECK_EQ_U64(a[i].ooms.n, 1);
		if (a[i].ooms.n)
			req[i] = a[i].ooms.v[0].requested;
	}
	/* the inputs as recorded (tests/data/torchmem/README.md) */
	CHECK_EQ_U64(req[0], 1ull << 40);
	CHECK_EQ_U64(req[1], 4ull << 30);
	CHECK_EQ_U64(a[0].torch_mem.n, 65) /* `gpuscope dump` of the file: 65 torch_mem rows */;
	CHECK_EQ_U64(a[1].torch_mem.n, 89);
	CHECK(rank_merge(out, (const char *const *)in, 2, &o) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(m.torch_mem.n, tm);
	CHECK_EQ_U64(m.ooms.n, oom);
	CHECK_EQ_U64(m.metrics.n, met);
	CHECK_EQ_U64(m.kmetrics.n, km);
	CHECK_EQ_U64(m.procs.n, procs);
	CHECK(m.has & MODEL_HAS_TORCH_MEM);
	for (size_t i = 0; i < m.ooms.n; i++) {
		const struct trace_oom *x = &m.ooms.v[i];
		int r = model_proc_rank(&m, x->pid);
		const struct trace_oom *y = r == 0 || r == 1 ? &a[r].ooms.v[0] : NULL;
		CHECK(y != NULL);
		if (!y)
			continue;
		CHECK_EQ_U64(x->requested, y->requested);
		CHECK_EQ_U64(x->nblocks, y->nblocks);
		CHECK_EQ_U64(x->device, (uint32_t)r); /* both inputs used their device 0 */
		CHECK_STR(model_str(&m, x->detail_id), model_str(&a[r], y->detail_id));
	}
	for (size_t i = 0; i < m.torch_mem.n; i++)
		CHECK_EQ_U64(m.torch_mem.v[i].device, (uint32_t)model_proc_rank(&m, m.torch_mem.v[i].pid));
	model_release(&m);
	for (int i = 0; i < 2; i++) {
		model_release(&a[i]);
		free(in[i]);
	}
	free(out);
}

/*
 * NCCL message sizes and bus bandwidth (stats_nccl.h).  The expected
 * values were computed once by an independent script reading the Kineto
 * JSON directly (python: for each "kernel" event with "In msg nelems",
 * S = max(In, Out msg nelems) x dtype size, t = (ts + dur) - ts in ns from
 * the decimal microseconds, summed by (Collective name, dtype, Group size,
 * S)); its output for tests/data/import/nccl_data.json.gz:
 *   ('allreduce', 'Float', 2, 8196000) 3 kernels 11820962 ns algbw 2.0800
 *   ('broadcast', 'Long', 2, 424) 3 kernels 23327 ns algbw 0.0545
 *   21 kernels with sizes
 * and for shared/validation/real/tracelens__mi300_ddp8_resnet_act_ckpt_rank0
 * (8 ranks, BFloat16):
 *   ('allreduce', 'BFloat16', 8, 17632384) 3 kernels 26798240 ns algbw 1.9739 busbw 3.4543
 *   12 kernels with sizes
 */
struct nccl_key_sum {
	uint64_t count, ns;
};

static struct nccl_key_sum nccl_sum_of(const struct model *m, const struct nccl_msgs *s,
				       const char *coll, uint64_t bytes, int group)
{
	struct nccl_key_sum r = { 0, 0 };

	for (size_t i = 0; i < s->n; i++) {
		const struct nccl_msg *x = &s->v[i];
		const struct trace_kernel *k = &m->kernels.v[x->kernel];
		if (x->coll && !strcmp(x->coll, coll) && x->bytes == bytes && x->group == group) {
			r.count++;
			r.ns += k->end - k->start;
		}
	}
	return r;
}

static void test_nccl_sizes(void)
{
	struct model m;
	struct nccl_msgs s;
	struct nccl_msg x;
	struct nccl_key_sum ks;
	const char *dir = shared_dir();
	char *in[2], *out = xstrfmt("%s/nccl2.gpuscope", gstest_tmpdir());
	struct rank_merge_opts o = { 0, 1 };

	/* nccl-tests' factors (doc/PERFORMANCE.md) */
	CHECK_NEAR(nccl_bus_factor("all-reduce", 8) * 1000, 1750, 1e-6);
	CHECK_NEAR(nccl_bus_factor("all-gather", 8) * 1000, 875, 1e-6);
	CHECK_NEAR(nccl_bus_factor("reduce-scatter", 4) * 1000, 750, 1e-6);
	CHECK_NEAR(nccl_bus_factor("all-to-all", 2) * 1000, 500, 1e-6);
	CHECK_NEAR(nccl_bus_factor("broadcast", 8), 1, 1e-9);
	CHECK_NEAR(nccl_bus_factor("all-reduce", 0), 0, 1e-9); /* group unknown */
	CHECK_NEAR(nccl_bus_factor(NULL, 8), 0, 1e-9);
	/* the importer's text (docs/import.md) */
	CHECK(nccl_parse("_allgather_base BFloat16 in=25136 out=201088 group=8 pg=3/undefined/[0, 1, 2, 3, 4, 5, 6, 7]", &x) == 0);
	CHECK_STR(x.coll, "all-gather");
	CHECK_STR(x.dtype, "BFloat16");
	CHECK_EQ_U64(x.elem_size, 2);
	CHECK_EQ_U64(x.in_nelems, 25136);
	CHECK_EQ_U64(x.out_nelems, 201088);
	CHECK_EQ_I64(x.group, 8);
	CHECK(nccl_parse("allreduce Complex32 in=4", &x) == 0);
	CHECK_EQ_U64(x.elem_size, 0); /* an unknown dtype: no bytes, never a guess */
	CHECK_STR(x.dtype, "");
	CHECK(nccl_parse("", &x) < 0);

	model_init(&m);
	CHECK(load_input(&m, gstest_data("import/nccl_data.json.gz")) == 0);
	CHECK_EQ_U64(nccl_msgs_build(&m, &s), 21);
	ks = nccl_sum_of(&m, &s, "all-reduce", 8196000, 2);
	CHECK_EQ_U64(ks.count, 3);
	CHECK_EQ_U64(ks.ns, 11820962);
	CHECK_NEAR(8196000.0 * 3 / (double)ks.ns * nccl_bus_factor("all-reduce", 2), 2.0800, 0.0001);
	ks = nccl_sum_of(&m, &s, "broadcast", 424, 2);
	CHECK_EQ_U64(ks.count, 3);
	CHECK_EQ_U64(ks.ns, 23327);
	nccl_msgs_release(&s);
	/*
	 * exposed-communication's evidence: the script's all-reduce rows summed,
	 * 3 x (8196000 + 31502336 + 26255360 + 26550272 + 9724160) = 306684384 B
	 * (292.5 MiB) in 46762159 ns: algbw 6.56 GB/s, busbw the same (n = 2)
	 */
	{
		struct analyze_result r;
		const struct finding *f = NULL;
		CHECK(analyze_run(&m, NULL, &r) == 0);
		for (size_t i = 0; i < r.n; i++)
			if (!strcmp(r.findings[i].id, "exposed-communication"))
				f = &r.findings[i];
		CHECK(f != NULL);
		if (f)
			CHECK_CONTAINS(f->evidence, "(15 kernels; 292.5 MiB moved, algbw 6.56 GB/s, busbw 6.56 GB/s)");
		analyze_result_release(&r);
	}
	model_release(&m);

	/* the sizes survive a merge of ranks (the trace twice, as ranks 0 and 1) */
	in[0] = xstrdup(gstest_data("import/nccl_data.json.gz"));
	in[1] = xstrdup(in[0]);
	CHECK(rank_merge(out, (const char *const *)in, 2, &o) == 0);
	model_init(&m);
	CHECK(model_load_report(&m, out) == 0);
	CHECK_EQ_U64(nccl_msgs_build(&m, &s), 42);
	ks = nccl_sum_of(&m, &s, "all-reduce", 8196000, 2);
	CHECK_EQ_U64(ks.count, 6);
	CHECK_EQ_U64(ks.ns, 2 * 11820962ull);
	nccl_msgs_release(&s);
	model_release(&m);
	free(in[0]);
	free(in[1]);
	free(out);

	if (!dir) {
		printf("# skip MI300 DDP: no shared folder\n");
		return;
	}
	out = xstrfmt("%s/validation/real/tracelens__mi300_ddp8_resnet_act_ckpt_rank0.json.gz", dir);
	if (access(out, R_OK)) {
		printf("# skip MI300 DDP: '%s' is not there\n", out);
		free(out);
		return;
	}
	model_init(&m);
	CHECK(load_input(&m, out) == 0);
	CHECK_EQ_U64(nccl_msgs_build(&m, &s), 12);
	ks = nccl_sum_of(&m, &s, "all-reduce", 17632384, 8);
	CHECK_EQ_U64(ks.count, 3);
	CHECK_EQ_U64(ks.ns, 26798240);
	CHECK_NEAR(17632384.0 * 3 / (double)ks.ns, 1.9739, 0.0001);
	CHECK_NEAR(17632384.0 * 3 / (double)ks.ns * nccl_bus_factor("all-reduce", 8), 3.4543, 0.0001);
	nccl_msgs_release(&s);
	model_release(&m);
	free(out);
}

/*
 * no-p2p-path: the NVML sampler of `profile`, run on the replay of the
 * two-socket PCIe server with four L4 (tests/data/nvml/mk_topo.py: GPUs 0, 1
 * on socket 0, 2, 3 on socket 1; P2P across the sockets "not supported by
 * the IOH topology", status 3), records the P2P status of every pair; a run
 * of two ranks that all-reduce on GPUs @g0 and @g1 is merged with it (its
 * CUDA device rows carry the replay's UUIDs, so the model maps NVML indexes
 * onto them; GPU 0's UUID in the replay is all zeros, which maps to
 * nothing, so the pairs tested are 1-2, 2-3 and 1-3).  Each
 * rank: 10 x (1 ms GEMM, then a 1 ms all-reduce) from the sampler's time:
 * 20 ms on each GPU, 10 ms of it communication.  Across the sockets the
 * rule must say so with gain staged_share 0.5 x (10 + 10 ms) / (2 GPUs x
 * 20 ms) = 0.25; within a socket, or without collectives, nothing.
 */
static const struct finding *p2p_finding(int g0, int g1, int comm, struct analyze_result *r, struct model *m)
{
	char *nv = xstrfmt("%s/nvml-%d%d%d.gpuscope", gstest_tmpdir(), g0, g1, comm);
	char *run = xstrfmt("%s/p2prun-%d%d%d.gpuscope", gstest_tmpdir(), g0, g1, comm);
	char *out = xstrfmt("%s/p2p-%d%d%d.gpuscope", gstest_tmpdir(), g0, g1, comm);
	const char *parts[2] = { nv, run };
	struct nvml_sampler *smp;
	struct trace_builder b;
	struct trace_device d;
	char why[256];
	uint64_t t0 = 0;
	const struct finding *f = NULL;

	setenv("GPUSCOPE_NVML_REPLAY", gstest_data("nvml/pcie_4gpu.topo.jsonl"), 1);
	smp = nvml_sampler_start(nv, 1, why, sizeof(why));
	CHECK(smp != NULL);
	if (!smp) {
		printf("# sampler: %s\n", why);
		goto done;
	}
	CHECK(nvml_sampler_stop(smp) == 0);
	unsetenv("GPUSCOPE_NVML_REPLAY");
	model_init(m);
	CHECK(model_load_report(m, nv) == 0);
	{
		uint32_t id = strtab_find(&m->str, "p2p_status.2");
		size_t n02 = 0;
		for (size_t i = 0; i < m->metrics.n; i++) {
			const struct trace_metric *x = &m->metrics.v[i];
			if (id != UINT32_MAX && x->name_id == id && x->device == 0) {
				CHECK_NEAR(x->value, 3, 1e-9); /* NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED */
				n02++;
			}
			if (!t0 || x->time < t0)
				t0 = x->time;
		}
		CHECK_EQ_U64(n02, 1);
	}
	model_release(m);
	CHECK(trace_builder_open(&b, run, 0, 0) == 0);
	for (int rk = 0; rk < 2; rk++) {
		struct trace_process p = { 0 };
		p.pid = 600 + (uint32_t)rk;
		p.start_mono_ns = t0;
		trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
		/* CUDA's row of the GPU: the replay's UUID GPU-0000000N-0000-0000-0000-00000000000N */
		memset(&d, 0, sizeof(d));
		d.id = (uint32_t)(rk ? g1 : g0);
		d.pid = p.pid;
		d.sm_count = 58;
		d.uuid[3] = d.uuid[15] = (uint8_t)d.id;
		d.name_id = trace_builder_str(&b, "NVIDIA L4");
		trace_builder_add(&b, TRACE_EV_DEVICE, &d, sizeof(d));
		for (int step = 0; step < 10; step++) {
			struct trace_kernel k = { 0 };
			k.pid = p.pid;
			k.device = (uint32_t)(rk ? g1 : g0);
			k.start = t0 + (uint64_t)step * 2 * MS;
			k.end = k.start + MS;
			k.name_id = trace_builder_str(&b, "sm89_xmma_gemm_bf16bf16_bf16f32");
			trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
			k.start = k.end;
			k.end = k.start + MS;
			k.stream = 1;
			k.name_id = trace_builder_str(&b, comm ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
							      : "elementwise_kernel");
			trace_builder_add(&b, TRACE_EV_KERNEL, &k, sizeof(k));
		}
	}
	CHECK(trace_builder_close(&b, 0) == 0);
	CHECK(trace_merge(out, parts, 2, 0) == 0);
	model_init(m);
	CHECK(model_load_report(m, out) == 0);
	CHECK(analyze_run(m, NULL, r) == 0);
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->findings[i].id, "no-p2p-path"))
			f = &r->findings[i];
done:
	free(nv);
	free(run);
	free(out);
	return f;
}

static void test_no_p2p_path(void)
{
	struct analyze_result r;
	struct model m;
	const struct finding *f;

	f = p2p_finding(1, 2, 1, &r, &m);
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(f->title, "GPUs 1 and 2 have no P2P path while the run communicates between them");
		CHECK_CONTAINS(f->evidence, "GPU 1 - GPU 2: not supported by the IOH topology, communication kernels on both (10.000 ms and 10.000 ms)");
		CHECK_NEAR(f->gain, 0.25, 1e-3);
	}
	analyze_result_release(&r);
	model_release(&m);
	/* one socket: P2P works */
	CHECK(p2p_finding(2, 3, 1, &r, &m) == NULL);
	analyze_result_release(&r);
	model_release(&m);
	/* no collectives: nothing crosses */
	CHECK(p2p_finding(1, 3, 0, &r, &m) == NULL);
	analyze_result_release(&r);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_alignment_recovers_skew),
	GSTEST(test_straggler_host),
	GSTEST(test_straggler_compute),
	GSTEST(test_rank_unknown),
	GSTEST(test_kineto_distributed_info),
	GSTEST(test_dlrm_straggler),
	GSTEST(test_numa_placement),
	GSTEST(test_merge_keeps_torch_mem),
	GSTEST(test_nccl_sizes),
	GSTEST(test_no_p2p_path),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
