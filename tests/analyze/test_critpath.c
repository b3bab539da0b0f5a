/*
 * test_critpath.c - the critical-path analysis against HTA's golden values.
 *
 * The traces are HTA's own test data (tests/data/critical_path), copied to
 * shared/validation/hta/critical_path.  shared/ is found as: $GS_SHARED_DIR,
 * else $GS_SOURCE_DIR/../shared, else /work/shared; without it each test
 * says so and passes having checked nothing from it.
 *
 * HTA's tests name events by their index in HTA's dataframe (the position
 * in the trace file).  Here the same events are found by name and start
 * time, read from the trace file: index 286 is aten::relu_ at
 * 1694040009871913 us, 287 aten::clamp_min_ at ...871928, 1005 the
 * cudaLaunchKernel at ...871942, 1051 the fft2d_r2c_32x32 kernel at
 * 1694040010076734, 1067 ampere_gcgemm_64x64_nt at ...076804, 1275 the
 * epilogue::impl::globalKernel at ...096876 and 1281 the
 * cudaDeviceSynchronize at ...097115.
 */
#include "gstest.h"

#include "analyze/critpath.h"
#include "import/import.h"
#include "model/model.h"
#include "util/util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#define SIMPLE_ADD "hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
#define ALEXNET "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
#define GOLDEN "hta/critical_path/end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz"
#define MEASURE "[param|pytorch.model.alex_net|0|0|0|measure|forward]"

static const char *validation_dir(void)
{
	static char path[4096];
	const char *s = getenv("GS_SHARED_DIR"), *src = getenv("GS_SOURCE_DIR");
	struct stat st;

	if (s && *s)
		snprintf(path, sizeof(path), "%s/validation", s);
	else if (src && *src)
		snprintf(path, sizeof(path), "%s/../shared/validation", src);
	else
		path[0] = 0;
	if (!path[0] || stat(path, &st) || !S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "/work/shared/validation");
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	return path;
}

/* Load shared/validation/@rel into @m; 0 when shared/ is absent (test skipped). */
static int load(struct model *m, const char *rel)
{
	const char *dir = validation_dir();
	char path[4096];

	model_init(m);
	if (!dir) {
		printf("# shared/validation not found (GS_SHARED_DIR, $GS_SOURCE_DIR/../shared, /work/shared): skipped\n");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (load_input(m, path)) {
		gstest_fail(__FILE__, __LINE__, "cannot load '%s'", path);
		return 0;
	}
	return 1;
}

/* The graph event named @name that starts at @ts_us. */
static size_t find_event(const struct model *m, const struct critpath *cp, const char *name,
			 int64_t ts_us)
{
	struct strbuf sb = STRBUF_INIT;
	size_t found = CP_NONE;

	for (size_t i = 0; i < cp->nr_events && found == CP_NONE; i++)
		if (cp->events[i].ts == ts_us && !strncmp(critpath_event_name(m, cp, i, &sb), name, strlen(name)))
			found = i;
	strbuf_release(&sb);
	if (found == CP_NONE)
		gstest_fail(__FILE__, __LINE__, "no event '%s' at %" PRId64, name, ts_us);
	return found;
}

static const struct cp_edge *find_edge(const struct critpath *cp, size_t from, size_t to)
{
	for (size_t i = 0; i < cp->nr_edges; i++)
		if (cp->edges[i].from == from && cp->edges[i].to == to)
			return &cp->edges[i];
	return NULL;
}

/* % of the critical path's time bound by @b, as HTA's summary() */
#define PCT(cp, b) (100.0 * (double)(cp)->bound_ns[b] / (double)(cp)->total_ns)

#define CHECK_EDGE(cp, from, to, type_, weight_us)                                         \
	do {                                                                                \
		const struct cp_edge *e_ = find_edge(cp, from, to);                         \
		CHECK(e_ != NULL);                                                          \
		if (e_) {                                                                   \
			CHECK_EQ_U64(e_->type, type_);                                      \
			CHECK_EQ_I64(e_->weight_ns, (int64_t)(weight_us) * 1000);           \
		}                                                                           \
	} while (0)

/*
 * HTA tests/test_critical_path_analysis.py, test_critical_path_basic_add;
 * that test class sets CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1.
 */
static void test_simple_add(void)
{
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { .annotation = MEASURE, .instance = 1, .zero_weight_launch_edges = 1 };
	size_t relu, clamp, launch, fft, fft_rt, gemm, gemm_rt, epi, dsync;

	if (!load(&m, SIMPLE_ADD))
		return;
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);
	CHECK_EQ_U64(cp.nr_path, 315);
	CHECK_EQ_U64(cp.nr_path - 1, 314);
	CHECK_EQ_U64(cp.nr_critical_events, 159);
	/* HTA-computed summary() of this window (shared/validation/hta_reference_outputs.json) */
	CHECK_NEAR(PCT(&cp, CP_BOUND_CPU), 99.779, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_GPU_COMPUTE), 0.210, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_KERNEL_KERNEL), 0.004, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_LAUNCH), 0.007, 0.001);
	CHECK_EQ_I64(cp.bound_ns[CP_BOUND_NONE], 0);

	relu = find_event(&m, &cp, "aten::relu_", 1694040009871913);
	clamp = find_event(&m, &cp, "aten::clamp_min_", 1694040009871928);
	launch = find_event(&m, &cp, "cudaLaunchKernel", 1694040009871942);
	if (relu == CP_NONE || clamp == CP_NONE || launch == CP_NONE)
		goto out;
	/* HTA's nodes (57,62), (58,61), (59,60): consecutive in time */
	CHECK_EQ_U64(cp.events[clamp].start_node, cp.events[relu].start_node + 1);
	CHECK_EQ_U64(cp.events[launch].start_node, cp.events[relu].start_node + 2);
	CHECK_EQ_U64(cp.events[launch].end_node, cp.events[relu].start_node + 3);
	CHECK_EQ_U64(cp.events[clamp].end_node, cp.events[relu].start_node + 4);
	CHECK_EQ_U64(cp.events[relu].end_node, cp.events[relu].start_node + 5);
	CHECK_EDGE(&cp, cp.events[relu].start_node, cp.events[clamp].start_node, CP_EDGE_OPERATOR, 15);
	CHECK_EDGE(&cp, cp.events[clamp].start_node, cp.events[launch].start_node, CP_EDGE_OPERATOR, 14);
	CHECK_EDGE(&cp, cp.events[launch].start_node, cp.events[launch].end_node, CP_EDGE_OPERATOR, 17);
	CHECK_EDGE(&cp, cp.events[launch].end_node, cp.events[clamp].end_node, CP_EDGE_OPERATOR, 15);
	CHECK_EDGE(&cp, cp.events[clamp].end_node, cp.events[relu].end_node, CP_EDGE_OPERATOR, 32);
	/* attribution: e1, e5 to relu; e2, e4 to clamp_min; e3 to the launch */
	CHECK_EQ_U64(find_edge(&cp, cp.events[relu].start_node, cp.events[clamp].start_node)->event, relu);
	CHECK_EQ_U64(find_edge(&cp, cp.events[launch].end_node, cp.events[clamp].end_node)->event, clamp);
	CHECK_EQ_U64(find_edge(&cp, cp.events[clamp].end_node, cp.events[relu].end_node)->event, relu);

	fft = find_event(&m, &cp, "void fft2d_r2c_32x32", 1694040010076734);
	gemm = find_event(&m, &cp, "ampere_gcgemm_64x64_nt", 1694040010076804);
	epi = find_event(&m, &cp, "void epilogue::impl::globalKernel", 1694040010096876);
	dsync = find_event(&m, &cp, "cudaDeviceSynchronize", 1694040010097115);
	if (fft == CP_NONE || gemm == CP_NONE || epi == CP_NONE || dsync == CP_NONE)
		goto out;
	fft_rt = cp.events[fft].link;
	gemm_rt = cp.events[gemm].link;
	CHECK(fft_rt != CP_NONE && gemm_rt != CP_NONE);
	if (fft_rt == CP_NONE || gemm_rt == CP_NONE)
		goto out;
	CHECK_EDGE(&cp, cp.events[fft_rt].start_node, cp.events[fft].start_node, CP_EDGE_LAUNCH, 27);
	CHECK_EDGE(&cp, cp.events[fft].end_node, cp.events[gemm].start_node, CP_EDGE_KERNEL_KERNEL, 7);
	CHECK_EDGE(&cp, cp.events[gemm_rt].start_node, cp.events[gemm].start_node, CP_EDGE_LAUNCH, 0);
	CHECK_EDGE(&cp, cp.events[epi].end_node, cp.events[dsync].end_node, CP_EDGE_SYNC, 0);
	/* every operator and kernel-kernel edge is attributed to an event, no other edge is */
	for (size_t i = 0; i < cp.nr_edges; i++) {
		const struct cp_edge *e = &cp.edges[i];
		if (e->type == CP_EDGE_OPERATOR || e->type == CP_EDGE_KERNEL_KERNEL)
			CHECK(e->event != CP_NONE);
		else
			CHECK(e->event == CP_NONE);
	}
out:
	critpath_release(&cp);
	model_release(&m);
}

/* ---- the golden overlay ---- */

struct golden {
	int64_t *ts;               /* critical X events: ts (us) */
	char **name;
	size_t n, alloc;
	size_t flows[CP_EDGE__COUNT]; /* critical_path flow pairs per edge type */
};

static char *gz_slurp(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	int n;

	if (!gz)
		return NULL;
	while ((n = gzread(gz, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	gzclose(gz);
	return sb.buf;
}

static int read_golden(const char *path, struct golden *g)
{
	char *text = gz_slurp(path), err[256];
	const char *ev_path[] = { "traceEvents", NULL };
	yajl_val root, events;

	memset(g, 0, sizeof(*g));
	if (!text)
		return -1;
	root = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	if (!root)
		return -1;
	events = yajl_tree_get(root, ev_path, yajl_t_array);
	for (size_t i = 0; events && i < events->u.array.len; i++) {
		yajl_val e = events->u.array.values[i];
		const char *ph_p[] = { "ph", NULL }, *name_p[] = { "name", NULL }, *ts_p[] = { "ts", NULL };
		const char *crit_p[] = { "args", "critical", NULL }, *type_p[] = { "args", "type", NULL };
		yajl_val ph = yajl_tree_get(e, ph_p, yajl_t_string), crit = yajl_tree_get(e, crit_p, yajl_t_any);
		if (!ph)
			continue;
		if (!strcmp(ph->u.string, "X") && crit && YAJL_IS_INTEGER(crit) && YAJL_GET_INTEGER(crit) == 1) {
			yajl_val nm = yajl_tree_get(e, name_p, yajl_t_string);
			yajl_val ts = yajl_tree_get(e, ts_p, yajl_t_number);
			ALLOC_GROW(g->ts, g->n + 1, g->alloc);
			g->name = xrealloc(g->name, g->alloc * sizeof(*g->name));
			g->ts[g->n] = ts ? (int64_t)YAJL_GET_INTEGER(ts) : -1;
			g->name[g->n++] = xstrdup(nm ? nm->u.string : "");
		} else if (!strcmp(ph->u.string, "s") && crit && YAJL_IS_TRUE(crit)) {
			yajl_val ty = yajl_tree_get(e, type_p, yajl_t_string);
			for (unsigned t = 0; ty && t < CP_EDGE__COUNT; t++)
				if (!strcmp(ty->u.string, critpath_edge_type_name(t)))
					g->flows[t]++;
		}
	}
	yajl_tree_free(root);
	return 0;
}

static void golden_release(struct golden *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->name[i]);
	free(g->name);
	free(g->ts);
}

/*
 * HTA's end-to-end test: annotation "" (the whole trace), instance 0,
 * data_load_events ["data_load"]; the overlay marks 624 events critical and
 * draws 192 critical_path flows (158 dependency, 17 sync, 17 launch).  Its
 * test class leaves CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE unset, so
 * there are no zero-weight launch edges (with them, the path takes the
 * sgemm and epilogue kernels at 1694040009799875/974 instead of the
 * cudaLaunchKernel at ...799876: 625 events, 18 sync and 18 launch edges).
 */
static void test_end_to_end_golden(void)
{
	static const char *const dl[] = { "data_load" };
	struct critpath_opts o = { .annotation = "", .instance = 0, .data_load_events = dl,
				   .nr_data_load_events = 1 };
	struct model m;
	struct critpath cp;
	struct golden g;
	struct strbuf sb = STRBUF_INIT;
	char path[4096];
	size_t missing = 0, matched = 0;
	unsigned char *used;

	if (!load(&m, SIMPLE_ADD))
		return;
	snprintf(path, sizeof(path), "%s/%s", validation_dir(), GOLDEN);
	if (read_golden(path, &g)) {
		gstest_fail(__FILE__, __LINE__, "cannot read the golden overlay '%s'", path);
		model_release(&m);
		return;
	}
	CHECK_EQ_U64(g.n, 624);
	CHECK_EQ_U64(g.flows[CP_EDGE_DEPENDENCY], 158);
	CHECK_EQ_U64(g.flows[CP_EDGE_SYNC], 17);
	CHECK_EQ_U64(g.flows[CP_EDGE_LAUNCH], 17);
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);

	/* the set of (name, ts) of our critical events equals the golden set */
	used = xcalloc(g.n + 1, 1);
	for (size_t i = 0; i < cp.nr_events; i++) {
		const char *name;
		int hit = 0;
		if (!cp.events[i].critical)
			continue;
		name = critpath_event_name(&m, &cp, i, &sb);
		for (size_t k = 0; k < g.n && !hit; k++)
			if (!used[k] && g.ts[k] == cp.events[i].ts && !strcmp(g.name[k], name))
				used[k] = hit = 1;
		if (hit) {
			matched++;
		} else {
			missing++;
			gstest_fail(__FILE__, __LINE__, "critical here, not in HTA's overlay: '%s' at %" PRId64,
				    name, cp.events[i].ts);
		}
	}
	for (size_t k = 0; k < g.n; k++)
		if (!used[k])
			gstest_fail(__FILE__, __LINE__, "critical in HTA's overlay, not here: '%s' at %" PRId64,
				    g.name[k], g.ts[k]);
	CHECK_EQ_U64(matched, 624);
	CHECK_EQ_U64(missing, 0);
	CHECK_EQ_U64(cp.nr_critical_events, 624);
	/* the overlay draws the critical dependency, launch and sync edges */
	CHECK_EQ_U64(cp.type_edges[CP_EDGE_DEPENDENCY], g.flows[CP_EDGE_DEPENDENCY]);
	CHECK_EQ_U64(cp.type_edges[CP_EDGE_SYNC], g.flows[CP_EDGE_SYNC]);
	CHECK_EQ_U64(cp.type_edges[CP_EDGE_LAUNCH], g.flows[CP_EDGE_LAUNCH]);
	if (getenv("GS_TEST_VERBOSE"))
		critpath_print_summary(stdout, &m, &cp);
	free(used);
	strbuf_release(&sb);
	golden_release(&g);
	critpath_release(&cp);
	model_release(&m);
}

/* HTA's test_critical_path_inter_stream_sync and ..._breakdown_and_save_restore. */
static void test_alexnet(void)
{
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { .annotation = MEASURE, .instance = 1 };
	size_t syncs = 0, cats = 0;

	if (!load(&m, ALEXNET))
		return;
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);
	/* HTA-computed (shared/validation/hta_reference_outputs.json) */
	CHECK_EQ_U64(cp.nr_path, 149);
	CHECK_EQ_U64(cp.nr_critical_events, 77);
	CHECK_NEAR(PCT(&cp, CP_BOUND_CPU), 89.418, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_GPU_COMPUTE), 10.359, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_KERNEL_KERNEL), 0.140, 0.001);
	CHECK_NEAR(PCT(&cp, CP_BOUND_LAUNCH), 0.084, 0.001);
	for (size_t i = 0; i < cp.nr_edges; i++) {
		if (cp.edges[i].type != CP_EDGE_SYNC)
			continue;
		syncs++;
		CHECK_EQ_I64(cp.edges[i].weight_ns, 0);
	}
	CHECK(syncs >= 1);
	for (unsigned b = 0; b < CP_BOUND__COUNT; b++)
		cats += cp.bound_edges[b] > 0;
	/* "", cpu_bound, gpu_compute_bound, gpu_kernel_kernel_overhead, gpu_kernel_launch_overhead */
	CHECK_EQ_U64(cats, 5);
	CHECK(cp.bound_edges[CP_BOUND_NONE] > 0);
	CHECK(cp.bound_edges[CP_BOUND_CPU] > 0);
	CHECK(cp.bound_edges[CP_BOUND_GPU_COMPUTE] > 0);
	CHECK(cp.bound_edges[CP_BOUND_KERNEL_KERNEL] > 0);
	CHECK(cp.bound_edges[CP_BOUND_LAUNCH] > 0);
	if (getenv("GS_TEST_VERBOSE"))
		critpath_print_summary(stdout, &m, &cp);
	critpath_release(&cp);
	model_release(&m);
}

/* A graph's sync edges: at least one, all of weight 0 (HTA's event-sync tests). */
static void check_sync_edges(const char *rel, const char *annotation, unsigned instance)
{
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { .annotation = annotation, .instance = instance };
	size_t syncs = 0;

	if (!load(&m, rel))
		return;
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);
	CHECK(cp.nr_path >= 2);
	for (size_t i = 0; i < cp.nr_edges; i++)
		if (cp.edges[i].type == CP_EDGE_SYNC) {
			syncs++;
			CHECK_EQ_I64(cp.edges[i].weight_ns, 0);
		}
	CHECK(syncs >= 1);
	critpath_release(&cp);
	model_release(&m);
}

/* HTA's test_critical_path_analysis_event_sync: cudaEventSynchronize, cudaDeviceSynchronize. */
static void test_event_sync(void)
{
	check_sync_edges("hta/critical_path/cuda_event_sync/event_sync_trace.json.gz", "ProfilerStep", 0);
}

/* HTA's ..._event_sync_multistream: cudaStreamWaitEvent across streams 20, 24, 28. */
static void test_event_sync_multi_stream(void)
{
	check_sync_edges("hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", "", 0);
}

/*
 * HTA's test_amd_trace: "ProfilerStep" instance 1 is, in time order, the
 * gpu_user_annotation ProfilerStep#1 (after the host's ProfilerStep#1,
 * before ProfilerStep#2, which holds no op).
 */
static void test_amd(void)
{
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { .annotation = "ProfilerStep", .instance = 1 };

	if (!load(&m, "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"))
		return;
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);
	CHECK(cp.nr_path >= 2);
	critpath_release(&cp);
	model_release(&m);
}

/*
 * A synthetic step of 100k rows (34k ops, each with a launch call and its
 * kernel, plus a stream sync every 100 ops): the graph covers every event
 * and the path runs through the step.  The time is printed; the speed
 * target is the benchmark's (bench/analyze), not a timed test's.
 */
static void test_performance(void)
{
	enum { OPS = 34000 };
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { 0 };
	struct timespec t0, t1;
	uint32_t op = 0, launch, kern, stream_sync, step;
	double secs;
	uint64_t t = 1000000;

	model_init(&m);
	m.format = "kineto";
	op = model_intern(&m, "aten::add");
	launch = model_intern(&m, "cudaLaunchKernel");
	stream_sync = model_intern(&m, "cudaStreamSynchronize");
	kern = model_intern(&m, "add_kernel");
	step = model_intern(&m, "ProfilerStep#1");
	for (uint32_t i = 0; i < OPS; i++, t += 10000) {
		struct trace_nvtx_range *r = MODEL_PUSH(m.nvtx);
		struct trace_api *a = MODEL_PUSH(m.api);
		struct trace_kernel *k = MODEL_PUSH(m.kernels);
		*r = (struct trace_nvtx_range){ .start = t, .end = t + 8000, .pid = 1, .tid = 1,
						.name_id = op, .kind = TRACE_NVTX_PUSHPOP };
		*a = (struct trace_api){ .start = t + 2000, .end = t + 6000, .pid = 1, .tid = 1,
					 .correlation = 2 * i + 1, .name_id = launch };
		*k = (struct trace_kernel){ .start = t + 5000 + (i % 7) * 3000, .end = t + 9000 + (i % 7) * 3000,
					    .pid = 1, .stream = 7, .correlation = 2 * i + 1, .name_id = kern };
		if (i % 100 == 99) {
			struct trace_api *sa = MODEL_PUSH(m.api);
			struct trace_sync *s = MODEL_PUSH(m.syncs);
			*sa = (struct trace_api){ .start = t + 8500, .end = t + 9900, .pid = 1, .tid = 1,
						  .correlation = 2 * i + 2, .name_id = stream_sync };
			*s = (struct trace_sync){ .start = t + 9000, .end = t + 9800, .pid = 1, .stream = 7,
						  .correlation = 2 * i + 2, .type = SYNC_STREAM };
		}
	}
	{
		struct trace_nvtx_range *r = MODEL_PUSH(m.nvtx);
		*r = (struct trace_nvtx_range){ .start = 999000, .end = t + 100000, .pid = 1, .tid = 1,
						.name_id = step, .kind = TRACE_NVTX_PUSHPOP };
	}
	model_finish(&m);
	o.annotation = "ProfilerStep";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# critical path of %zu events: %.3f s\n", cp.nr_events, secs);
	CHECK(cp.nr_events >= 100000);
	CHECK(cp.nr_path >= 2);
	critpath_release(&cp);
	model_release(&m);
}

static void test_missing_annotation(void)
{
	struct model m;
	struct critpath cp;
	struct critpath_opts o = { .annotation = "__no_such_annotation__" };

	if (!load(&m, SIMPLE_ADD))
		return;
	set_error_quiet(1);
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), -1);
	o.annotation = MEASURE;
	o.instance = 2; /* there are two */
	CHECK_EQ_I64(critpath_run(&m, &o, &cp), -1);
	set_error_quiet(0);
	critpath_release(&cp);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_simple_add),
	GSTEST(test_end_to_end_golden),
	GSTEST(test_alexnet),
	GSTEST(test_event_sync),
	GSTEST(test_event_sync_multi_stream),
	GSTEST(test_amd),
	GSTEST(test_performance),
	GSTEST(test_missing_annotation),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
