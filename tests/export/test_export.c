/*
 * test_export.c - the exporters' own logic: track layout (strict nesting,
 * lanes for overlaps), flows, counters, checked output, paths, SQLite rows,
 * HTML escaping.  Reports are written through trace_builder.
 */
#include "gstest.h"
#include "export/export.h"
#include "export/internal.h"
#include "model/gpu_facts.h"
#include "model/model.h"
#include "trace/trace.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", gstest_tmpdir(), name);
	return buf[k];
}

static void api(struct trace_builder *b, uint64_t s, uint64_t e, uint32_t tid, uint32_t corr, const char *name)
{
	struct trace_api a = { 0 };
	a.start = s;
	a.end = e;
	a.pid = 100;
	a.tid = tid;
	a.correlation = corr;
	a.domain = TRACE_API_RUNTIME;
	a.name_id = trace_builder_str(b, name);
	trace_builder_add(b, TRACE_EV_API, &a, sizeof(a));
}

static void kernel(struct trace_builder *b, uint64_t s, uint64_t e, uint32_t stream, uint32_t corr,
		   const char *name)
{
	struct trace_kernel k = { 0 };
	k.start = s;
	k.end = e;
	k.pid = 100;
	k.stream = stream;
	k.correlation = corr;
	k.name_id = trace_builder_str(b, name);
	k.grid[0] = k.grid[1] = k.grid[2] = 1;
	k.block[0] = 128;
	k.block[1] = k.block[2] = 1;
	trace_builder_add(b, TRACE_EV_KERNEL, &k, sizeof(k));
}

static void nvtx(struct trace_builder *b, uint64_t s, uint64_t e, uint32_t tid, int kind, uint64_t id,
		 const char *name)
{
	struct trace_nvtx_range r = { 0 };
	r.start = s;
	r.end = e;
	r.pid = 100;
	r.tid = tid;
	r.kind = (uint8_t)kind;
	r.range_id = id;
	r.name_id = trace_builder_str(b, name);
	trace_builder_add(b, TRACE_EV_NVTX_RANGE, &r, sizeof(r));
}

/*
 * A run with the cases the layout must handle: nested API/OSRT/NVTX on one
 * thread, two slices with the same start, partially overlapping kernels on
 * one stream, a zero-length kernel, overlapping start/end ranges, an API
 * call with two kernels (a graph launch), counters.
 */
static void write_cases(const char *path)
{
	struct trace_builder b;
	struct trace_process p = { 0 };
	struct trace_osrt o = { 0 };
	struct trace_memory mem = { 0 };
	struct trace_cpu_sample c = { 0 };

	CHECK(trace_builder_open(&b, path, 0, 0) == 0);
	p.pid = 100;
	p.cmdline_id = trace_builder_str(&b, "/opt/app/bin/app --x");
	trace_builder_add(&b, TRACE_EV_PROCESS, &p, sizeof(p));
	{
		struct trace_name n = { 0 };
		n.kind = TRACE_NAME_DOMAIN;
		n.pid = 100;
		n.name_id = trace_builder_str(&b, "my domain");
		n.id = n.name_id;
		trace_builder_add(&b, TRACE_EV_NAME, &n, sizeof(n));
		n.kind = TRACE_NAME_CATEGORY;
		n.domain_id = n.name_id;
		n.id = 3;
		n.name_id = trace_builder_str(&b, "io");
		trace_builder_add(&b, TRACE_EV_NAME, &n, sizeof(n));
	}
	nvtx(&b, 1000, 9000, 100, TRACE_NVTX_PUSHPOP, 0, "outer");
	nvtx(&b, 1000, 5000, 100, TRACE_NVTX_PUSHPOP, 0, "inner same start");
	api(&b, 2000, 3000, 100, 1, "cudaLaunchKernel");
	api(&b, 3500, 4500, 100, 2, "cudaGraphLaunch");
	api(&b, 4800, 6000, 100, 0, "cudaDeviceSynchronize"); /* crosses the end of "inner" */
	o.start = 4900;
	o.end = 5900;
	o.pid = 100;
	o.tid = 100;
	o.func = OSRT_IOCTL;
	trace_builder_add(&b, TRACE_EV_OSRT, &o, sizeof(o));
	kernel(&b, 3100, 4000, 7, 1, "k1");
	kernel(&b, 3900, 4200, 7, 2, "k2 overlaps k1");   /* partial overlap: another lane */
	kernel(&b, 4300, 4300, 7, 2, "k3 zero length <b>"); /* second kernel of the graph launch */
	kernel(&b, 4100, 4150, 7, 99, "k4 no launch");
	nvtx(&b, 1500, 0, 101, TRACE_NVTX_STARTEND, 7, "async a");
	nvtx(&b, 1600, 0, 101, TRACE_NVTX_STARTEND, 8, "async b");
	{
		struct trace_nvtx_end e = { 0 };
		e.range_id = 7;
		e.end = 3000;
		e.tid = 101;
		trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
		e.range_id = 8;
		e.end = 4000;
		trace_builder_add(&b, TRACE_EV_NVTX_END, &e, sizeof(e));
	}
	mem.pid = 100;
	mem.mem_kind = MEM_DEVICE;
	mem.op = TRACE_MEM_ALLOC;
	mem.time = 1000;
	mem.address = 0x1000;
	mem.bytes = 100;
	trace_builder_add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
	mem.time = 1100;
	mem.address = 0x2000;
	mem.bytes = 50;
	trace_builder_add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
	mem.time = 1200;
	mem.address = 0x1000;
	mem.bytes = 0;
	mem.op = TRACE_MEM_FREE;
	trace_builder_add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
	mem.time = 1300;
	mem.mem_kind = MEM_PINNED; /* host memory: not device memory in use */
	mem.op = TRACE_MEM_ALLOC;
	mem.bytes = 1 << 20;
	trace_builder_add(&b, TRACE_EV_MEMORY, &mem, sizeof(mem));
	c.pid = 100;
	c.tid = 100;
	c.time = 1000;
	c.run_ns = 0;
	trace_builder_add(&b, TRACE_EV_CPU_SAMPLE, &c, sizeof(c));
	c.time = 1001000;
	c.run_ns = 500000;
	trace_builder_add(&b, TRACE_EV_CPU_SAMPLE, &c, sizeof(c));
	CHECK(trace_builder_close(&b, 0) == 0);
}

static void load_cases(struct model *m)
{
	const char *path = tmp("cases.gpuscope");
	if (access(path, F_OK))
		write_cases(path);
	model_init(m);
	CHECK(model_load_report(m, path) == 0);
}

static size_t find_row(const struct model *m, int src, const char *name)
{
	for (size_t i = 0;; i++) {
		uint64_t s, e;
		lay_span(m, src, i, &s, &e); /* BUGs past the end: the name must exist */
		if (!strcmp(lay_slice_name(m, src, i), name))
			return i;
	}
}

struct sl {
	uint64_t s, e;
};

static int cmp_sl(const void *pa, const void *pb)
{
	const struct sl *a = pa, *b = pb;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return a->e > b->e ? -1 : a->e < b->e;
}

static void test_layout_nests(void)
{
	struct model m;
	struct lay l;
	struct lay_iter it = { .started = 0 };
	int src;
	size_t row, total = 0;
	uint64_t s, e;

	load_cases(&m);
	CHECK(lay_build(&l, &m) == 0);
	for (size_t t = 0; t < l.ntracks; t++) {
		struct sl v[64], stack[64];
		size_t n = 0, depth = 0;
		memset(&it, 0, sizeof(it));
		while (lay_next(&m, &it, &src, &row, &s, &e))
			if (l.track[src][row] == t && n < 64)
				v[n++] = (struct sl){ s, e };
		qsort(v, n, sizeof(v[0]), cmp_sl);
		for (size_t i = 0; i < n; i++) {
			while (depth && stack[depth - 1].e <= v[i].s)
				depth--;
			if (depth && v[i].e > stack[depth - 1].e)
				gstest_fail(__FILE__, __LINE__, "track %zu: [%llu,%llu] overlaps [%llu,%llu]", t,
					    (unsigned long long)v[i].s, (unsigned long long)v[i].e,
					    (unsigned long long)stack[depth - 1].s, (unsigned long long)stack[depth - 1].e);
			stack[depth++] = v[i];
		}
		total += n;
	}
	CHECK_EQ_U64(total, l.nslices);
	CHECK_EQ_U64(l.nslices, m.api.n + m.osrt.n + m.nvtx.n + m.kernels.n);
	/* k1 and k2 overlap partially: different lanes of stream 7 */
	CHECK(l.track[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k1")] !=
	      l.track[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k2 overlaps k1")]);
	CHECK_STR(l.tracks[l.track[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k2 overlaps k1")]].name, "Stream 7 (2)");
	/* the two start/end ranges overlap partially too */
	CHECK(l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "async a")] !=
	      l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "async b")]);
	/* "inner same start" nests inside "outer" on the thread's own track */
	CHECK_EQ_U64(l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "outer")],
		     l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "inner same start")]);
	CHECK_EQ_U64(l.tracks[l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "outer")]].kind, LT_THREAD);
	/* cudaDeviceSynchronize crosses the end of "inner": not on the same lane */
	CHECK(l.track[SRC_API][find_row(&m, SRC_API, "cudaDeviceSynchronize")] !=
	      l.track[SRC_NVTX][find_row(&m, SRC_NVTX, "inner same start")]);
	/* the ioctl nests in cudaDeviceSynchronize */
	CHECK_EQ_U64(l.track[SRC_OSRT][0], l.track[SRC_API][find_row(&m, SRC_API, "cudaDeviceSynchronize")]);
	lay_release(&l);
	model_release(&m);
}

static void test_flows(void)
{
	struct model m;
	struct lay l;

	load_cases(&m);
	CHECK(lay_build(&l, &m) == 0);
	CHECK_EQ_U64(l.nflows, 2);
	CHECK_EQ_U64(l.flow[SRC_API][find_row(&m, SRC_API, "cudaLaunchKernel")], 1);
	CHECK_EQ_U64(l.flow[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k1")], 2);
	/* a graph launch: only its first GPU operation ends the flow */
	CHECK_EQ_U64(l.flow[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k2 overlaps k1")], 2);
	CHECK_EQ_U64(l.flow[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k3 zero length <b>")], 0);
	CHECK_EQ_U64(l.flow[SRC_KERNEL][find_row(&m, SRC_KERNEL, "k4 no launch")], 0);
	CHECK_EQ_U64(l.flow[SRC_API][find_row(&m, SRC_API, "cudaDeviceSynchronize")], 0);
	lay_release(&l);
	model_release(&m);
}

static void test_counters(void)
{
	struct model m;
	struct lay l;

	load_cases(&m);
	CHECK(lay_build(&l, &m) == 0);
	CHECK_EQ_U64(m.memory.n, 4);
	CHECK_NEAR(l.mem_value[0], 100, 0);
	CHECK_NEAR(l.mem_value[1], 150, 0);
	CHECK_NEAR(l.mem_value[2], 50, 0); /* the free of 0x1000 returns its 100 bytes */
	CHECK_EQ_U64(l.mem_track[3], UINT32_MAX); /* pinned host memory is not counted */
	CHECK_EQ_U64(l.cpu_track[0], UINT32_MAX); /* the first sample has no interval */
	CHECK_NEAR(l.cpu_value[1], 50.0, 1e-9);    /* 0.5 ms on a CPU in 1 ms */
	CHECK_STR(l.tracks[l.mem_track[0]].unit, "bytes");
	lay_release(&l);
	model_release(&m);
}

/* export_write() with the model alone: no findings (the caller did not analyse). */
static int write_as(const struct model *m, int format, const char *path, const struct export_opts *o)
{
	struct export_input in = { .m = m, .o = *o };

	return export_write(&in, format, path);
}

static void test_disk_full(void)
{
	struct model m;
	struct export_opts o = { 0 };

	load_cases(&m);
	CHECK(write_as(&m, EXPORT_PERFETTO, "/dev/full", &o) == -1);
	CHECK(write_as(&m, EXPORT_CHROME, "/dev/full", &o) == -1);
	CHECK(write_as(&m, EXPORT_SQLITE, "/dev/full", &o) == -1);
	model_release(&m);
}

static void test_no_overwrite(void)
{
	struct model m;
	struct export_opts o = { 0 };
	const char *out = tmp("exists.json");
	FILE *f = fopen(out, "w");
	struct stat st;

	fputs("keep", f);
	fclose(f);
	load_cases(&m);
	CHECK(write_as(&m, EXPORT_CHROME, out, &o) == -1);
	CHECK(stat(out, &st) == 0 && st.st_size == 4);
	o.force = 1;
	CHECK(write_as(&m, EXPORT_CHROME, out, &o) == 0);
	CHECK(stat(out, &st) == 0 && st.st_size > 100);
	model_release(&m);
}

static void test_default_path(void)
{
	char *p = export_default_path("dir/run1.gpuscope", EXPORT_PERFETTO);
	CHECK_STR(p, "dir/run1.pftrace");
	free(p);
	p = export_default_path("run1.gpuscope", EXPORT_SQLITE);
	CHECK_STR(p, "run1.sqlite");
	free(p);
	p = export_default_path("trace.json", EXPORT_CHROME);
	CHECK_STR(p, "trace.export.json");
	free(p);
	p = export_default_path("t.pt.trace.json.gz", EXPORT_HTML);
	CHECK_STR(p, "t.html");
	free(p);
	p = export_default_path("x.sqlite", EXPORT_SQLITE);
	CHECK_STR(p, "x.export.sqlite");
	free(p);
	CHECK_EQ_I64(export_format_by_name("perfetto"), EXPORT_PERFETTO);
	CHECK_EQ_I64(export_format_by_name("pdf"), -1);
}

static long long q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_sqlite_rows(void)
{
	struct model m;
	struct export_opts o = { 0 };
	const char *out = tmp("cases.sqlite");
	sqlite3 *db;

	load_cases(&m);
	CHECK(write_as(&m, EXPORT_SQLITE, out, &o) == 0);
	CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4);
	CHECK_EQ_I64(q1(db, "SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 900 + 300 + 0 + 50);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0"), 3);
	CHECK_EQ_I64(q1(db, "SELECT globalTid FROM OSRT_API"), (100ll << 24) | 100);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 60 AND end IS NOT NULL"), 2);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59"), 2);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'my domain'"), 1);
	CHECK_EQ_I64(q1(db, "SELECT category FROM NVTX_EVENTS WHERE eventType = 33 AND text = 'io'"), 3);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(DISTINCT eventId) FROM NVTX_EVENTS"), 6);
	CHECK_EQ_I64(q1(db, "SELECT endGlobalTid FROM NVTX_EVENTS WHERE rangeId = 7"), (100ll << 24) | 101);
	/* memKind in nsys numbering: device = 2, pinned = 1 */
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 2"), 3);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 1"), 1);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 1"), 1);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM StringIds WHERE value = 'ioctl'"), 1);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM PROCESSES WHERE pid = 100 AND name = 'app'"), 1);
	sqlite3_close(db);
	model_release(&m);
}

static void test_sqlite_huge_metric_values(void)
{
	/* whole values beyond int64 are stored as REAL, never through an undefined cast */
	struct model m;
	struct export_opts o = { 0 };
	const char *out = tmp("huge.sqlite");
	double values[3] = { 1e300, 5, -9.3e18 };
	sqlite3 *db;

	model_init(&m);
	for (int i = 0; i < 3; i++) {
		struct trace_metric *x = MODEL_PUSH(m.metrics);
		x->time = 100 + (uint64_t)i;
		x->value = values[i];
		x->name_id = model_intern(&m, "power_w");
	}
	model_finish(&m);
	CHECK(write_as(&m, EXPORT_SQLITE, out, &o) == 0);
	CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM GPU_METRICS"), 3);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM GPU_METRICS WHERE typeof(value) = 'real'"), 2);
	CHECK_EQ_I64(q1(db, "SELECT value FROM GPU_METRICS WHERE typeof(value) = 'integer'"), 5);
	sqlite3_close(db);
	model_release(&m);
}

static void test_kernel_base_name(void)
{
	static const struct {
		const char *name, *base;
	} cases[] = {
		{ "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, "
		  "long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
		  "max_pool_forward_nchw" },
		{ "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, 4>, float>"
		  "(long, int volatile*, TensorListMetadata<4>, AdamFunctor<float, 4>, float)",
		  "multi_tensor_apply_kernel" },
		{ "multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float, 2> >", "multi_tensor_apply_kernel" },
		{ "void (anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, "
		  "float*, float const*, long const*, float const*, bool, long, long, long, long)",
		  "nll_loss_forward_reduce_cuda_kernel_2d" },
		{ "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::(anonymous "
		  "namespace)::launch()::{lambda(float)#1}>(at::TensorIteratorBase&)::{lambda(int)#1}>(int, T3)",
		  "elementwise_kernel" },
		{ "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn" },
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		  "ncclDevKernel_AllReduce_Sum_f32_RING_LL" },
		{ "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_"
		  "s1688gemm_128x128_16x4_nn_align4::Params)",
		  "Kernel2" },
		{ "broken<unbalanced(int", "broken<unbalanced(int" },
		{ "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len;
		const char *b = kernel_base_name(cases[i].name, &len);
		char *got = xstrndup(b, len);
		CHECK_STR(got, cases[i].base);
		free(got);
	}
}

/* A kernel with @name on device 0 at @t. */
static void push_kernel(struct model *m, uint64_t t, const char *name)
{
	struct trace_kernel *k = MODEL_PUSH(m->kernels);
	memset(k, 0, sizeof(*k));
	k->start = t;
	k->end = t + 10;
	k->pid = 100;
	k->stream = 7;
	k->name_id = model_intern(m, name);
	k->grid[0] = k->grid[1] = k->grid[2] = 1;
	k->block[0] = k->block[1] = k->block[2] = 1;
}

static void test_sqlite_nsys_habits(void)
{
	struct model m;
	struct export_opts o = { 0 };
	const char *out = tmp("habits.sqlite");
	struct trace_device *d;
	struct model_process *p;
	struct gpu_facts facts;
	sqlite3 *db;

	model_init(&m);
	/* two instantiations of one kernel and one of another: GROUP BY shortName merges the first two */
	push_kernel(&m, 1000, "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float*)");
	push_kernel(&m, 2000, "void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::Half, float>(int, "
			      "c10::Half*)");
	push_kernel(&m, 3000, "multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float, 2> >");
	d = MODEL_PUSH(m.devices);
	memset(d, 0, sizeof(*d));
	d->name_id = model_intern(&m, "NVIDIA H200");
	d->sm_count = 132;
	d->cc_major = 9;
	d = MODEL_PUSH(m.devices); /* a second GPU nobody knows, with no clocks: bandwidth unknown */
	memset(d, 0, sizeof(*d));
	d->id = 1;
	d->name_id = model_intern(&m, "Mystery Accelerator 9000");
	p = MODEL_PUSH(m.procs);
	memset(p, 0, sizeof(*p));
	p->pid = 100;
	p->start_mono_ns = 1500;
	p->start_realtime_ns = 1700000000000000000ull;
	model_finish(&m);
	CHECK(write_as(&m, EXPORT_SQLITE, out, &o) == 0);
	CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(DISTINCT shortName) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
			    "WHERE s.value = 'max_pool_forward_nchw'"), 2);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
			    "WHERE s.value = 'multi_tensor_apply_kernel'"), 1);
	/* demangledName keeps the full signature */
	CHECK_EQ_I64(q1(db, "SELECT COUNT(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3);
	/* the datasheet's bandwidth where no clock was recorded; NULL where unknown */
	CHECK(gpu_facts_lookup("NVIDIA H200", 9, 0, 132, 0, &facts) == 0);
	CHECK(facts.f[GF_MEM_BW].src != GFS_UNKNOWN);
	CHECK_EQ_I64(q1(db, "SELECT memoryBandwidth FROM TARGET_INFO_GPU WHERE id = 0"),
		     (long long)(facts.f[GF_MEM_BW].v * 1e9));
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM TARGET_INFO_GPU WHERE id = 1 AND memoryBandwidth IS NULL"), 1);
	/* the session's wall clock at the report's first timestamp (t_min 1000, 500 ns before the process start) */
	CHECK_EQ_I64(q1(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"), 1700000000000000000ll - 500);
	CHECK_EQ_I64(q1(db, "SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME"), 1000);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM TARGET_INFO_SESSION_START_TIME WHERE utcTime LIKE '2023-11-14 %'"), 1);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION' AND "
			    "value LIKE '%.%.%'"), 1);
	CHECK_EQ_I64(q1(db, "SELECT COUNT(*) FROM EXPORT_SCHEMA_VERSION WHERE major > 0"), 1);
	sqlite3_close(db);
	model_release(&m);
}

static void test_html_escapes(void)
{
	struct model m;
	struct export_opts o = { 0 };
	const char *out = tmp("cases.html");
	static char buf[1 << 20];
	size_t n;
	FILE *f;

	load_cases(&m);
	if (write_as(&m, EXPORT_HTML, out, &o)) {
		/* a build without stats/analyze refuses html with an error */
		model_release(&m);
		return;
	}
	f = fopen(out, "r");
	CHECK(f != NULL);
	if (!f) {
		model_release(&m);
		return;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	CHECK(fgetc(f) == EOF); /* the whole page was read */
	fclose(f);
	CHECK(strstr(buf, "<b>") == NULL || strstr(buf, "zero length <b>") == NULL);
	/*
	 * No URL but the SVG namespace's name, which the script passes to
	 * createElementNS (an identifier, never fetched): blank it, then none.
	 */
	for (char *p = buf; (p = strstr(p, "http://www.w3.org/2000/svg"));)
		memset(p, '_', strlen("http://www.w3.org/2000/svg"));
	CHECK(strstr(buf, "http://") == NULL && strstr(buf, "https://") == NULL);
	CHECK_CONTAINS(buf, "<!DOCTYPE html>");
	CHECK_CONTAINS(buf, "window.__reportReady = true");
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_layout_nests), GSTEST(test_flows), GSTEST(test_counters), GSTEST(test_disk_full),
	GSTEST(test_no_overwrite), GSTEST(test_default_path), GSTEST(test_sqlite_rows),
	GSTEST(test_sqlite_huge_metric_values), GSTEST(test_kernel_base_name), GSTEST(test_sqlite_nsys_habits),
	GSTEST(test_html_escapes), { 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
