/*
 * test_import.c - the Kineto JSON and nsys SQLite importers, on the real
 * traces in tests/data/import (SOURCES.md) and on small JSON inputs.
 *
 * The HTA figures checked here come from HTA's own tests and from running
 * HTA on the same files (shared/validation/hta_reference_outputs.json).
 */
#include "gstest.h"
#include "import/import.h"
#include "import/import_int.h"
#include "model/model.h"
#include "util/util.h"

#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", gstest_tmpdir(), name);
	return buf[k];
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		gstest_fail(__FILE__, __LINE__, "cannot write %s", path);
}

/* Decompress a .gz from tests/data into memory. */
static unsigned char *gunzip_data(const char *rel, size_t *len)
{
	gzFile gz = gzopen(gstest_data(rel), "rb");
	unsigned char *buf = NULL;
	size_t n = 0, alloc = 0;
	int r;

	if (!gz) {
		gstest_fail(__FILE__, __LINE__, "cannot open %s", rel);
		return NULL;
	}
	do {
		ALLOC_GROW(buf, n + 65536, alloc);
		r = gzread(gz, buf + n, 65536);
		if (r > 0)
			n += (size_t)r;
	} while (r > 0);
	gzclose(gz);
	*len = n;
	return buf;
}

static int load(struct model *m, const char *rel)
{
	model_init(m);
	return load_input(m, gstest_data(rel));
}

static int load_json(struct model *m, const char *json)
{
	const char *p = tmp("in.json");
	write_file(p, json, strlen(json));
	model_init(m);
	return load_input(m, p);
}

static int has_warning(const struct model *m, const char *needle)
{
	for (size_t i = 0; i < m->nr_warnings; i++)
		if (strstr(m->warnings[i], needle))
			return 1;
	return 0;
}

static size_t count_domain(const struct model *m, const char *domain)
{
	uint32_t id = strtab_find(&m->str, domain);
	size_t n = 0;
	for (size_t i = 0; i < m->nvtx.n; i++)
		n += id != UINT32_MAX && m->nvtx.v[i].domain_id == id;
	return n;
}

/* ---- HTA's temporal breakdown, computed on the model (hta.md section 2) ---- */

struct iv {
	uint64_t s, e;
	int compute;
	uint32_t corr;
};

static int starts_with(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* HTA's COMPUTATION class: not matching its exclusion regex (re.match, anchored). */
static int hta_is_compute(const char *n)
{
	const char *lk;
	if (starts_with(n, "nccl") || strstr(n, "Memcpy") || strstr(n, "Memset") ||
	    strstr(n, "dma") || strstr(n, "Sync") || starts_with(n, "Stream Wait Event") ||
	    starts_with(n, "runFunction") || starts_with(n, "hip") || starts_with(n, "job_exe") ||
	    starts_with(n, "packet") || starts_with(n, "pe_exe") ||
	    starts_with(n, "cpum_exe_subgraph") || starts_with(n, "hccl") ||
	    starts_with(n, "collective_subgraph_execution"))
		return 0;
	lk = starts_with(n, "cuda") ? strstr(n, "LaunchKernel") : NULL;
	return !lk;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Σ|merge| over intervals with (compute or !only_compute); HTA merges touching intervals. */
static uint64_t merged_total(struct iv *v, size_t n, int only_compute, uint64_t *lo, uint64_t *hi)
{
	uint64_t total = 0, cs = 0, ce = 0;
	int open = 0;

	qsort(v, n, sizeof(*v), cmp_iv);
	for (size_t i = 0; i < n; i++) {
		if (only_compute && !v[i].compute)
			continue;
		if (lo && (!open && !total))
			*lo = v[i].s;
		if (open && v[i].s <= ce) {
			if (v[i].e > ce)
				ce = v[i].e;
			continue;
		}
		if (open)
			total += ce - cs;
		cs = v[i].s;
		ce = v[i].e;
		open = 1;
	}
	if (open)
		total += ce - cs;
	if (hi)
		*hi = ce;
	return total;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * HTA's time base: pandas holds "ts" and "dur" as float64 microseconds (epoch
 * microseconds keep only 0.25 us steps), then ts = ceil(ts), end =
 * floor(ts + dur).  Redo that from the model's exact nanoseconds; results
 * are in ns again (whole microseconds).
 */
static void hta_round(uint64_t *s, uint64_t *e)
{
	double ts = (double)(*s / 1000) + (double)(*s % 1000) / 1000.0;
	double dur = (double)(*e - *s) / 1000.0;
	double t0 = ceil(ts), t1 = floor(ts + dur);

	if (t1 < t0)
		t1 = t0;
	*s = (uint64_t)t0 * 1000;
	*e = (uint64_t)t1 * 1000;
}

/*
 * HTA's get_temporal_breakdown() with include_last_profiler_step=False.
 * @us_round: HTA's ns->us rounding (ts = ceil, end = floor), for traces
 * with fractional microseconds.  Percentages out in pct[3] (idle, compute,
 * non-compute); returns the number of GPU events used.
 */
static size_t hta_breakdown(const struct model *m, int us_round, double pct[3])
{
	uint32_t *keep = NULL;
	size_t nkeep = 0, n = 0, nsteps = 0;
	uint64_t last_step = 0, lo = 0, hi = 0, busy, compute, span;
	struct iv *v;
	uint32_t step_names[64];

	/* ProfilerStep#N instances: the last one is dropped when there are >= 2 */
	for (size_t i = 0; i < m->nvtx.n; i++) {
		const char *name = model_str(m, m->nvtx.v[i].name_id);
		int seen = 0;
		if (!m->nvtx.v[i].tid || !starts_with(name, "ProfilerStep#"))
			continue;
		for (size_t j = 0; j < nsteps; j++)
			seen |= step_names[j] == m->nvtx.v[i].name_id;
		if (!seen && nsteps < 64)
			step_names[nsteps++] = m->nvtx.v[i].name_id;
		if (m->nvtx.v[i].start > last_step)
			last_step = m->nvtx.v[i].start;
	}
	if (nsteps >= 2) {
		keep = malloc((m->api.n + 1) * sizeof(*keep));
		for (size_t i = 0; i < m->api.n; i++) {
			uint64_t s = m->api.v[i].start;
			if (us_round)
				s = (s + 999) / 1000 * 1000;
			if (s < (us_round ? (last_step + 999) / 1000 * 1000 : last_step))
				keep[nkeep++] = m->api.v[i].correlation;
		}
		qsort(keep, nkeep, sizeof(*keep), cmp_u32);
	}
	v = malloc((m->kernels.n + m->memcpys.n + m->memsets.n + m->syncs.n + 1) * sizeof(*v));
#define ADD(row, name_str)                                                              \
	do {                                                                            \
		uint32_t c_ = (row).correlation;                                        \
		if (keep && !bsearch(&c_, keep, nkeep, sizeof(*keep), cmp_u32))         \
			break;                                                          \
		v[n].s = (row).start;                                                   \
		v[n].e = (row).end;                                                     \
		if (us_round)                                                           \
			hta_round(&v[n].s, &v[n].e);                                    \
		v[n].compute = hta_is_compute(name_str);                                \
		n++;                                                                    \
	} while (0)
	for (size_t i = 0; i < m->kernels.n; i++)
		ADD(m->kernels.v[i], model_str(m, m->kernels.v[i].name_id));
	for (size_t i = 0; i < m->memcpys.n; i++)
		ADD(m->memcpys.v[i], "Memcpy");
	for (size_t i = 0; i < m->memsets.n; i++)
		ADD(m->memsets.v[i], "Memset");
	/*
	 * HTA's GPU events are those with a stream other than -1: Kineto writes
	 * -1 for "Event Sync" but 4294967295 for "Context Sync", which HTA then
	 * reads as a stream.  Both are "no stream" (UINT32_MAX) in the model.
	 */
	for (size_t i = 0; i < m->syncs.n; i++)
		if (m->syncs.v[i].stream != UINT32_MAX || m->syncs.v[i].type == SYNC_CONTEXT)
			ADD(m->syncs.v[i], "Sync");
#undef ADD
	busy = merged_total(v, n, 0, &lo, &hi);
	compute = merged_total(v, n, 1, NULL, NULL);
	span = hi - lo;
	pct[0] = span ? 100.0 * (double)(span - busy) / (double)span : 0;
	pct[1] = span ? 100.0 * (double)compute / (double)span : 0;
	pct[2] = 100.0 - pct[0] - pct[1];
	free(v);
	free(keep);
	return n;
}

/*
 * @idle, @comp, @noncomp: HTA's percentages (hta_reference_outputs.json),
 * reproduced to HTA's two decimals once HTA's time base is applied.
 * @ns_idle, @ns_comp: the same breakdown on gpuscope's exact nanoseconds,
 * computed independently from the JSON text with Python's Decimal; for
 * integer-microsecond traces they equal HTA's.  docs/import.md explains
 * the difference on ns-resolution traces.
 */
static void check_hta(const char *rel, size_t gpu_events, double idle, double comp,
		      double noncomp, double ns_idle, double ns_comp)
{
	struct model m;
	double rounded[3], exact[3];

	CHECK_EQ_I64(load(&m, rel), 0);
	CHECK_EQ_U64(hta_breakdown(&m, 1, rounded), gpu_events);
	CHECK_NEAR(rounded[0], idle, 0.006);
	CHECK_NEAR(rounded[1], comp, 0.006);
	CHECK_NEAR(rounded[2], noncomp, 0.006);
	CHECK_EQ_U64(hta_breakdown(&m, 0, exact), gpu_events);
	CHECK_NEAR(exact[0], ns_idle, 0.006);
	CHECK_NEAR(exact[1], ns_comp, 0.006);
	model_release(&m);
}

static void test_hta_ns_resolution(void)
{
	check_hta("import/ns_resolution_rank0.json.gz", 4876, 2.63, 96.75, 0.62, 1.6776, 97.4270);
}

static void test_hta_nccl(void)
{
	check_hta("import/nccl_data.json.gz", 2516, 77.78, 17.26, 4.97, 77.2335, 17.6625);
}

static void test_hta_sampled(void)
{
	check_hta("import/sampled_rank-0.json.gz", 602, 53.56, 17.71, 28.74, 53.56, 17.71);
}

static void test_hta_simple_add(void)
{
	check_hta("import/simple_add.json.gz", 139, 99.70, 0.06, 0.24, 99.70, 0.06);
}

static void test_hta_alexnet(void)
{
	check_hta("import/alexnet.json.gz", 139, 99.49, 0.08, 0.43, 99.49, 0.08);
}

static void test_hta_amd(void)
{
	check_hta("import/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 16, 98.53, 1.08, 0.39, 98.3276, 1.2442);
}

/* ---- Kineto: what the model holds ---- */

static void test_nccl_kernels(void)
{
	struct model m;
	size_t nccl = 0, longest = SIZE_MAX, comm = 0;
	uint32_t coll;

	CHECK_EQ_I64(load(&m, "import/nccl_data.json.gz"), 0);
	CHECK_STR(m.format, "kineto");
	CHECK_EQ_U64(m.kernels.n, 2700);
	CHECK_EQ_U64(m.memcpys.n, 960);
	CHECK_EQ_U64(m.memsets.n, 114);
	CHECK_EQ_U64(m.api.n, 8740);
	CHECK_EQ_U64(m.devices.n, 8);
	CHECK_STR(model_str(&m, m.devices.v[0].name_id), "NVIDIA A100-PG509-200");
	CHECK_EQ_U64(m.devices.v[0].sm_count, 108);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_EQ_U64(m.procs.v[0].pid, 2910249);
	for (size_t i = 0; i < m.kernels.n; i++) {
		const struct trace_kernel *k = &m.kernels.v[i];
		if (strstr(model_str(&m, k->name_id), "ncclKernel")) {
			nccl++;
			CHECK(k->flags & TRACE_GPU_COMM);
			if (longest == SIZE_MAX ||
			    k->end - k->start > m.kernels.v[longest].end - m.kernels.v[longest].start)
				longest = i;
		}
		comm += !!(k->flags & TRACE_GPU_COMM);
		CHECK_EQ_U64(k->pid, 2910249);
	}
	/* HTA tests/test_trace_parse.py: 21 ncclKernel, the longest an allreduce of 2049000 */
	CHECK_EQ_U64(nccl, 21);
	CHECK_EQ_U64(comm, 21);
	CHECK_EQ_U64(count_domain(&m, "kineto:collective"), 21);
	coll = strtab_find(&m.str, "kineto:collective");
	for (size_t i = 0; i < m.nvtx.n && longest != SIZE_MAX; i++) {
		const struct trace_nvtx_range *r = &m.nvtx.v[i];
		if (r->domain_id != coll || r->start != m.kernels.v[longest].start)
			continue;
		CHECK_STR(model_str(&m, r->name_id),
			  "allreduce Float in=2049000 out=2049000 group=2 pg=0/default_pg/[0, 1]");
		CHECK_EQ_U64(r->payload, 2049000);
		CHECK_EQ_U64(r->payload_type, TRACE_PAYLOAD_U64);
		CHECK_EQ_U64(r->category, m.kernels.v[longest].stream);
	}
	CHECK(has_warning(&m, "rank 0 of world size 2, backend nccl, nccl 2.17.1"));
	CHECK(has_warning(&m, "no OS-runtime data in this trace"));
	CHECK(m.has & MODEL_HAS_CUDA);
	CHECK(m.has & MODEL_HAS_API);
	CHECK(!(m.has & MODEL_HAS_OSRT));
	CHECK(!(m.has & MODEL_HAS_SYNC));
	/* the first kernel, exactly: ts 4458676983543.183 us, dur 41.407 us, grid 512, block 512 */
	for (size_t i = 0; i < m.kernels.n; i++) {
		const struct trace_kernel *k = &m.kernels.v[i];
		if (k->correlation != 57541)
			continue;
		CHECK_EQ_U64(k->start, 4458676983543183ull);
		CHECK_EQ_U64(k->end - k->start, 41407);
		CHECK_EQ_U64(k->grid[0], 512);
		CHECK_EQ_U64(k->block[0], 512);
		CHECK_EQ_U64(k->registers, 40);
		CHECK_EQ_U64(k->static_smem, 400);
		CHECK_EQ_U64(k->stream, 7);
		CHECK_EQ_U64(k->device, 0);
	}
	model_release(&m);
}

static void test_ns_resolution(void)
{
	struct model m;
	uint32_t anno, names[8];
	size_t nnames = 0, found = 0;

	CHECK_EQ_I64(load(&m, "import/ns_resolution_rank0.json.gz"), 0);
	CHECK_EQ_U64(m.kernels.n, 4350);
	CHECK_EQ_U64(m.memcpys.n, 1600);
	CHECK_EQ_U64(m.memsets.n, 145);
	CHECK_EQ_U64(count_domain(&m, "kineto:gpu_user_annotation"), 15);
	CHECK_EQ_U64(count_domain(&m, "kineto:cpu_op"), 23910);
	CHECK_EQ_U64(count_domain(&m, "kineto:user_annotation"), 70);
	anno = strtab_find(&m.str, "kineto:gpu_user_annotation");
	/* HTA: 3 distinct GPU annotations (get_gpu_user_annotation_breakdown has 3 rows) */
	for (size_t i = 0; i < m.nvtx.n; i++) {
		const struct trace_nvtx_range *r = &m.nvtx.v[i];
		int seen = 0;
		if (r->domain_id != anno)
			continue;
		for (size_t j = 0; j < nnames; j++)
			seen |= names[j] == r->name_id;
		if (!seen && nnames < 8)
			names[nnames++] = r->name_id;
		CHECK_EQ_U64(r->pid, 1102);
		CHECK_EQ_U64(r->tid, 0);
		CHECK_EQ_U64(r->category, 7);
		/* "ts": 1712195495984501.132, "dur": 1111.035 (a double would keep .125) */
		if (r->start == 1712195495984501132ull) {
			found++;
			CHECK_EQ_U64(r->end - r->start, 1111035);
			CHECK_STR(model_str(&m, r->name_id), "Optimizer.step#SGD.step");
		}
	}
	CHECK_EQ_U64(nnames, 3);
	CHECK_EQ_U64(found, 1);
	/* HTA: corr 135139 is "Memcpy DtoD (Device -> Device)", corr 164926 multi_tensor_apply_kernel */
	found = 0;
	for (size_t i = 0; i < m.memcpys.n; i++)
		if (m.memcpys.v[i].correlation == 135139) {
			found++;
			CHECK_EQ_U64(m.memcpys.v[i].kind, COPY_DTOD);
			CHECK_EQ_U64(m.memcpys.v[i].src_kind, MEM_DEVICE);
			CHECK_EQ_U64(m.memcpys.v[i].dst_kind, MEM_DEVICE);
		}
	for (size_t i = 0; i < m.kernels.n; i++)
		if (m.kernels.v[i].correlation == 164926) {
			found++;
			CHECK_CONTAINS(model_str(&m, m.kernels.v[i].name_id), "multi_tensor_apply_kernel");
		}
	CHECK_EQ_U64(found, 2);
	/* CPU ops nest: some have a level above 0, and ProfilerStep ranges are outermost */
	for (size_t i = 0; i < m.nvtx.n; i++)
		if (starts_with(model_str(&m, m.nvtx.v[i].name_id), "ProfilerStep#"))
			CHECK_EQ_U64(m.nvtx.v[i].level, 0);
	model_release(&m);
}

static void test_rocm(void)
{
	struct model m;
	size_t hip = 0;

	CHECK_EQ_I64(load(&m, "import/mi250_minitoy_train_ROCm6_2_kineto.json.gz"), 0);
	CHECK_EQ_U64(m.kernels.n, 14);
	CHECK_EQ_U64(m.memcpys.n, 2);
	CHECK_EQ_U64(m.api.n, 21);
	CHECK_EQ_U64(m.devices.n, 4);
	CHECK_STR(model_str(&m, m.devices.v[0].name_id), "AMD Radeon Graphics");
	for (size_t i = 0; i < m.api.n; i++)
		hip += starts_with(model_str(&m, m.api.v[i].name_id), "hip");
	CHECK_EQ_U64(hip, 21);
	/* "Memcpy HtoD (Host -> Device)": the kind from the name, "Host" is no CUDA memory kind */
	CHECK_EQ_U64(m.memcpys.v[0].kind, COPY_HTOD);
	CHECK_EQ_U64(m.memcpys.v[0].src_kind, MEM_UNKNOWN);
	CHECK_EQ_U64(m.memcpys.v[0].dst_kind, MEM_DEVICE);
	CHECK_EQ_U64(m.memcpys.v[0].device, 2);
	CHECK_EQ_U64(m.memcpys.v[0].correlation, 117);
	model_release(&m);
}

static void test_sync_rows(void)
{
	struct model m;
	size_t types[5] = { 0 };

	CHECK_EQ_I64(load(&m, "import/alexnet.json.gz"), 0);
	CHECK_EQ_U64(m.syncs.n, 41);
	for (size_t i = 0; i < m.syncs.n; i++)
		if (m.syncs.v[i].type < 5)
			types[m.syncs.v[i].type]++;
	CHECK_EQ_U64(types[SYNC_UNKNOWN], 0);
	CHECK_EQ_U64(types[SYNC_STREAM] + types[SYNC_EVENT] + types[SYNC_CONTEXT] +
		     types[SYNC_STREAM_WAIT_EVENT], 41);
	CHECK(types[SYNC_STREAM_WAIT_EVENT] > 0);
	CHECK(m.has & MODEL_HAS_SYNC);
	CHECK(!has_warning(&m, "no cuda_sync events"));
	CHECK(has_warning(&m, "rank 0"));
	model_release(&m);
}

static void test_trace_compare_base(void)
{
	struct model m;
	size_t steps = 0;

	CHECK_EQ_I64(load(&m, "import/trace_compare_base.json.gz"), 0);
	CHECK_EQ_U64(m.kernels.n, 6);
	CHECK_EQ_U64(m.memcpys.n, 6);
	CHECK_EQ_U64(m.memsets.n, 6);
	CHECK_EQ_U64(m.api.n, 5);
	CHECK_EQ_U64(count_domain(&m, "kineto:cpu_op"), 6);
	CHECK_EQ_U64(count_domain(&m, "kineto:user_annotation"), 4);
	for (size_t i = 0; i < m.nvtx.n; i++)
		if (!strcmp(model_str(&m, m.nvtx.v[i].name_id), "ProfilerStep#1010")) {
			steps++;
			CHECK_EQ_U64(m.nvtx.v[i].end - m.nvtx.v[i].start, 122149000);
		}
	CHECK_EQ_U64(steps, 1);
	CHECK(has_warning(&m, "rank 1"));
	model_release(&m);
}

/* ---- Kineto: variants, on small inputs ---- */

static void test_legacy_2021(void)
{
	struct model m;
	/* TensorBoard-plugin era: capitalised categories, "stream 7" tids, "external id" */
	CHECK_EQ_I64(load_json(&m,
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":\"10\","
		" \"ts\":100,\"dur\":50,\"args\":{\"external id\":3}},"
		"{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":10,"
		" \"ts\":110,\"dur\":5,\"args\":{\"correlation\":77,\"external id\":3}},"
		"{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"volta_sgemm\",\"pid\":0,\"tid\":\"stream 7\","
		" \"ts\":120,\"dur\":20,\"args\":{\"correlation\":77,\"device\":0,\"grid\":[4,2,1]}},"
		"{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"pid\":0,"
		" \"tid\":\"stream 7\",\"ts\":141,\"dur\":2,\"args\":{\"bytes\":4096}},"
		"{\"ph\":\"f\",\"cat\":\"async\",\"name\":\"launch\",\"id\":77,\"pid\":0,\"tid\":\"stream 7\",\"ts\":120}"
		"]}"), 0);
	CHECK_EQ_U64(m.kernels.n, 1);
	CHECK_EQ_U64(m.kernels.v[0].stream, 7);
	CHECK_EQ_U64(m.kernels.v[0].pid, 10);
	CHECK_EQ_U64(m.kernels.v[0].grid[1], 2);
	CHECK_EQ_U64(m.kernels.v[0].start, 120000);
	CHECK_EQ_U64(m.api.n, 1);
	CHECK_EQ_U64(m.api.v[0].correlation, 77);
	CHECK_EQ_U64(m.memcpys.n, 1);
	CHECK_EQ_U64(m.memcpys.v[0].kind, COPY_DTOH);
	CHECK_EQ_U64(m.memcpys.v[0].dst_kind, MEM_PINNED);
	CHECK_EQ_U64(m.memcpys.v[0].stream, 7);
	CHECK_EQ_U64(m.memcpys.v[0].bytes, 4096);
	CHECK_EQ_U64(count_domain(&m, "kineto:cpu_op"), 1);
	CHECK(has_warning(&m, "legacy (2021) event categories"));
	model_release(&m);
}

static void test_counters_memory_python(void)
{
	struct model m;
	uint32_t alloc, q, dev_alloc = 0;

	CHECK_EQ_I64(load_json(&m,
		"[{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(12): step\",\"pid\":5,\"tid\":6,"
		"  \"ts\":1e3,\"dur\":100.5},"
		" {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5,\"tid\":6,\"ts\":1010,\"dur\":10},"
		" {\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":5,\"tid\":6,\"ts\":1011,"
		"  \"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1234,\"Bytes\":512,"
		"  \"Total Allocated\":1536,\"Total Reserved\":2097152}},"
		" {\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":5,\"tid\":6,\"ts\":1012,"
		"  \"args\":{\"Device Type\":0,\"Device Id\":-1,\"Addr\":99,\"Bytes\":-64,"
		"  \"Total Allocated\":0,\"Total Reserved\":0}},"
		" {\"ph\":\"C\",\"name\":\"Queue Length\",\"pid\":5,\"ts\":1020,\"args\":{\"stream 7\":3}}"
		"]"), 0);
	CHECK_EQ_U64(count_domain(&m, "kineto:python"), 1);
	CHECK_EQ_U64(count_domain(&m, "kineto:cpu_op"), 1);
	/* the python function encloses the op: levels 0 and 1 */
	CHECK_EQ_U64(m.nvtx.v[0].level, 0);
	CHECK_EQ_U64(m.nvtx.v[1].level, 1);
	CHECK_EQ_U64(m.nvtx.v[0].end - m.nvtx.v[0].start, 100500);
	CHECK_EQ_U64(m.memory.n, 1); /* the CPU free is a metric only */
	CHECK_EQ_U64(m.memory.v[0].bytes, 512);
	CHECK_EQ_U64(m.memory.v[0].op, TRACE_MEM_ALLOC);
	CHECK_EQ_U64(m.memory.v[0].device, 0);
	alloc = strtab_find(&m.str, "torch_allocated_bytes");
	q = strtab_find(&m.str, "Queue Length.stream 7");
	CHECK(alloc != UINT32_MAX);
	CHECK(q != UINT32_MAX);
	for (size_t i = 0; i < m.metrics.n; i++) {
		if (m.metrics.v[i].name_id == alloc && m.metrics.v[i].device == 0) {
			dev_alloc++;
			CHECK_NEAR(m.metrics.v[i].value, 1536, 0);
		}
		if (m.metrics.v[i].name_id == q)
			CHECK_NEAR(m.metrics.v[i].value, 3, 0);
	}
	CHECK_EQ_U64(dev_alloc, 1);
	CHECK_EQ_U64(m.metrics.n, 5);
	CHECK(m.has & MODEL_HAS_MEMORY);
	CHECK(m.has & MODEL_HAS_METRICS);
	model_release(&m);
}

static void test_exact_times(void)
{
	struct model m;
	/* epoch microseconds with fractions would lose ns through a double */
	CHECK_EQ_I64(load_json(&m,
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMalloc\",\"pid\":1,"
		"\"tid\":1,\"ts\":1712195495984501.237,\"dur\":0.0015,\"args\":{\"correlation\":1}}],"
		"\"displayTimeUnit\":\"ns\"}"), 0);
	CHECK_EQ_U64(m.api.n, 1);
	CHECK_EQ_U64(m.api.v[0].start, 1712195495984501237ull);
	CHECK_EQ_U64(m.api.v[0].end - m.api.v[0].start, 2); /* 1.5 ns rounds to 2 */
	model_release(&m);
}

/* ---- bad input ---- */

static void test_bad_json(void)
{
	struct model m;
	unsigned char *data;
	size_t len;
	const char *p;
	gzFile gz;

	set_error_quiet(1);
	CHECK_EQ_I64(load_json(&m, "{\"a\": 1}"), -1);
	model_release(&m);
	CHECK_EQ_I64(load_json(&m, "{\"traceEvents\": [ {\"ph\": \"X\", "), -1);
	model_release(&m);
	CHECK_EQ_I64(load_json(&m, "[1, 2, }"), -1);
	model_release(&m);
	CHECK_EQ_I64(load_json(&m, "   "), -1);
	model_release(&m);

	/* a real trace cut in the middle, plain and gzip */
	data = gunzip_data("import/simple_add.json.gz", &len);
	p = tmp("cut.json");
	write_file(p, data, len / 2);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), -1);
	model_release(&m);
	p = tmp("cut.json.gz");
	gz = gzopen(p, "wb");
	gzwrite(gz, data, (unsigned)len);
	gzclose(gz);
	{
		FILE *f = fopen(p, "rb");
		unsigned char *z = malloc(len);
		size_t zn = fread(z, 1, len, f);
		fclose(f);
		write_file(p, z, zn / 2);
		free(z);
	}
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), -1);
	model_release(&m);
	free(data);
	set_error_quiet(0);
}

static const char *nsys_sample(void)
{
	size_t len;
	unsigned char *db = gunzip_data("import/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz", &len);
	const char *p = tmp("saxpy.sqlite");
	write_file(p, db, len);
	free(db);
	return p;
}

static void test_nsys_sample(void)
{
	struct model m;
	size_t htod = 0, dtoh = 0, launches = 0, send = 0, saxpy = 0, names = 0;
	uint32_t mpi;

	model_init(&m);
	CHECK_EQ_I64(load_input(&m, nsys_sample()), 0);
	CHECK_STR(m.format, "nsys-sqlite");
	/* pipit's figures: 5 kernels, 15 memcpys, 95 runtime rows, 24 NVTX rows */
	CHECK_EQ_U64(m.kernels.n, 5);
	CHECK_EQ_U64(m.memcpys.n, 15);
	/* 95 rows = 57 calls (56 runtime + 1 driver) + 38 backtrace repeats (eventClass 67) */
	CHECK_EQ_U64(m.api.n, 57);
	CHECK(has_warning(&m, "38 CUDA backtrace rows"));
	/* 24 rows = 22 push/pop ranges + the "MPI" domain + the "MPI Rank 0" thread name */
	CHECK_EQ_U64(m.nvtx.n, 22);
	mpi = strtab_find(&m.str, "MPI");
	CHECK(mpi != UINT32_MAX);
	for (size_t i = 0; i < m.names.n; i++)
		if (m.names.v[i].kind == TRACE_NAME_DOMAIN && m.names.v[i].name_id == mpi)
			names++;
	CHECK_EQ_U64(names, 1);
	CHECK_STR(model_thread_name(&m, 1230493, 1230493), "MPI Rank 0");
	for (size_t i = 0; i < m.nvtx.n; i++) {
		const char *n = model_str(&m, m.nvtx.v[i].name_id);
		if (!strcmp(n, "MPI_Send")) {
			send++;
			CHECK_EQ_U64(m.nvtx.v[i].domain_id, mpi);
		}
		if (!strcmp(n, "saxpy")) {
			saxpy++;
			CHECK_EQ_U64(m.nvtx.v[i].domain_id, 0);
		}
		CHECK_EQ_U64(m.nvtx.v[i].pid, 1230493);
	}
	CHECK_EQ_U64(send, 10);
	CHECK_EQ_U64(saxpy, 5);
	for (size_t i = 0; i < m.memcpys.n; i++) {
		const struct trace_memcpy *c = &m.memcpys.v[i];
		if (c->kind == COPY_HTOD && c->src_kind == MEM_PAGEABLE && c->dst_kind == MEM_DEVICE)
			htod++;
		if (c->kind == COPY_DTOH && c->src_kind == MEM_DEVICE && c->dst_kind == MEM_PAGEABLE)
			dtoh++;
		CHECK_EQ_U64(c->bytes, 262144000);
		CHECK_EQ_U64(c->pid, 1230493);
	}
	CHECK_EQ_U64(htod, 10);
	CHECK_EQ_U64(dtoh, 5);
	for (size_t i = 0; i < m.api.n; i++)
		launches += !strcmp(model_str(&m, m.api.v[i].name_id), "cudaLaunchKernel");
	CHECK_EQ_U64(launches, 5);
	CHECK_EQ_U64(m.kernels.v[0].grid[0], 2);
	CHECK_EQ_U64(m.kernels.v[0].block[0], 512);
	CHECK_EQ_U64(m.kernels.v[0].registers, 26);
	CHECK_EQ_U64(m.kernels.v[0].correlation, 140);
	CHECK_EQ_U64(m.kernels.v[0].start, 924922186);
	CHECK_EQ_U64(m.devices.n, 1);
	CHECK_STR(model_str(&m, m.devices.v[0].name_id), "NVIDIA A100-SXM4-40GB");
	CHECK_EQ_U64(m.devices.v[0].sm_count, 108);
	CHECK_EQ_U64(m.devices.v[0].pci_bus, 3);
	CHECK_EQ_U64(m.devices.v[0].uuid[0], 0x74);
	CHECK_EQ_U64(m.procs.n, 1);
	CHECK_STR(model_str(&m, m.procs.v[0].cmdline_id), "./saxpy-mpi-cuda");
	CHECK(has_warning(&m, "no OS-runtime data in this export"));
	CHECK(!(m.has & MODEL_HAS_OSRT));
	/* CUDA was traced and no synchronisation happened: recorded, none */
	CHECK_EQ_U64(m.syncs.n, 0);
	CHECK(m.has & MODEL_HAS_SYNC);
	model_release(&m);
}

/* An export from another schema: tables and columns missing, a start/end range, OSRT. */
static void test_nsys_other_schema(void)
{
	const char *p = tmp("mini.sqlite");
	sqlite3 *db;
	struct model m;
	/* globalTid of pid 42 tid 43 */
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES (1,'k1'),(2,'read'),(3,'phase'),(4,'cudaMemcpy_v3020'),(5,'weird_fn');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, shortName INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 1, 13, 704643072, 1);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (50, 90, 704643115, 9, 4);"
		"CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, rangeId INT, text TEXT,"
		"  globalTid INT, endGlobalTid INT, textId INT, domainId INT);"
		"INSERT INTO NVTX_EVENTS VALUES (10, 300, 60, 7, NULL, 704643115, 704643116, 3, 0);"
		"INSERT INTO NVTX_EVENTS VALUES (20, NULL, 60, 8, 'open', 704643115, NULL, NULL, 0);"
		"INSERT INTO NVTX_EVENTS VALUES (25, NULL, 34, NULL, 'mark', 704643115, NULL, NULL, 0);"
		"CREATE TABLE OSRT_API(start INT, end INT, globalTid INT, nameId INT, returnValue INT);"
		"INSERT INTO OSRT_API VALUES (60, 70, 704643115, 2, 4096), (71, 72, 704643115, 5, 0);"
		"CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
		"INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, bytes INT, memKind INT, value INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (210, 220, 1, 13, 704643072, 64, 2, 0);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INT, end INT, deviceId INT,"
		"  streamId INT, globalPid INT, syncType INT, correlationId INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (230, 400, 1, 13, 704643072, 3, 12);"
		"CREATE TABLE TARGET_INFO_GPU_METRICS(typeId INT, sourceId INT, typeName TEXT, metricId INT, metricName TEXT);"
		"INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 1, 'GA100', 7, 'SMs Active');"
		"CREATE TABLE GPU_METRICS(rawTimestamp INT, timestamp INT, typeId INT, metricId INT, value INT);"
		"INSERT INTO GPU_METRICS VALUES (0, 150, 65536, 7, 42), (0, 160, 65536, 7, 43), (0, 170, 65536, 8, 1);";

	CHECK_EQ_I64(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), 0);
	CHECK_EQ_U64(m.kernels.n, 1);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "k1"); /* shortName when no demangledName */
	CHECK_EQ_U64(m.kernels.v[0].pid, 42);
	CHECK_EQ_U64(m.kernels.v[0].stream, 13);
	CHECK_EQ_U64(m.api.n, 1);
	CHECK_EQ_U64(m.api.v[0].tid, 43);
	CHECK_STR(model_str(&m, m.api.v[0].name_id), "cudaMemcpy");
	CHECK_EQ_U64(m.nvtx.n, 2);
	CHECK_EQ_U64(m.nvtx.v[0].kind, TRACE_NVTX_STARTEND);
	CHECK_EQ_U64(m.nvtx.v[0].end_tid, 44);
	CHECK_STR(model_str(&m, m.nvtx.v[0].name_id), "phase");
	CHECK_EQ_U64(m.nvtx_open, 1);
	CHECK_EQ_U64(m.marks.n, 1);
	CHECK_EQ_U64(m.osrt.n, 1);
	CHECK_EQ_U64(m.osrt.v[0].func, OSRT_READ);
	CHECK_EQ_U64(m.osrt.v[0].result, 4096);
	CHECK(m.has & MODEL_HAS_OSRT);
	CHECK(has_warning(&m, "1 OS-runtime calls of functions gpuscope does not model"));
	/* memKind 2 is nsys's DEVICE (ENUM_CUDA_MEM_KIND numbers pageable 0) */
	CHECK_EQ_U64(m.memsets.n, 1);
	CHECK_EQ_U64(m.memsets.v[0].mem_kind, MEM_DEVICE);
	CHECK_EQ_U64(m.memsets.v[0].bytes, 64);
	CHECK_EQ_U64(m.syncs.n, 1);
	CHECK_EQ_U64(m.syncs.v[0].type, SYNC_STREAM);
	CHECK_EQ_U64(m.syncs.v[0].pid, 42);
	CHECK(m.has & MODEL_HAS_SYNC);
	/* two samples of a named metric; the row of an unknown metric id is dropped */
	CHECK_EQ_U64(m.metrics.n, 2);
	CHECK_STR(model_str(&m, m.metrics.v[0].name_id), "nsys:SMs Active");
	CHECK_NEAR(m.metrics.v[1].value, 43, 0);
	CHECK_EQ_U64(m.metrics.v[0].device, 1);
	CHECK(m.has & MODEL_HAS_METRICS);
	CHECK(!has_warning(&m, "no GPU metric samples"));
	model_release(&m);
}

static void test_bad_sqlite(void)
{
	const char *p = tmp("other.sqlite"), *q = tmp("broken.sqlite");
	unsigned char junk[4096];
	sqlite3 *db;
	struct model m;

	set_error_quiet(1);
	CHECK_EQ_I64(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES (1);", NULL, NULL,
				  NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), -1); /* a database, but not nsys */
	model_release(&m);
	memset(junk, 0xa5, sizeof(junk));
	memcpy(junk, "SQLite format 3", 16);
	write_file(q, junk, sizeof(junk));
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, q), -1);
	model_release(&m);
	/* the real export cut short */
	{
		size_t len;
		unsigned char *db2 = gunzip_data("import/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz", &len);
		write_file(q, db2, len / 3);
		free(db2);
		model_init(&m);
		CHECK_EQ_I64(load_input(&m, q), -1);
		model_release(&m);
	}
	set_error_quiet(0);
}

/*
 * Numbers at the edges of what JSON can spell: a freed size of -2^63 (its
 * negation overflowed: UBSan stops the ASan build), 1e999 (strtod gives
 * infinity, which no export can write) and times that wrap.
 */
static void test_kineto_extreme_numbers(void)
{
	struct model m;
	uint32_t q;

	CHECK_EQ_I64(load_json(&m,
		"[{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":5,\"tid\":6,"
		"  \"ts\":10,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":-9223372036854775808,"
		"  \"Total Allocated\":1e999,\"Total Reserved\":4096}},"
		" {\"ph\":\"C\",\"name\":\"q\",\"pid\":5,\"ts\":20,\"args\":{\"a\":1e999,\"b\":2}},"
		" {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
		"  \"ts\":9000000000000000,\"dur\":9900000000000000},"
		" {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"late\",\"pid\":0,\"tid\":7,"
		"  \"ts\":99999999999999999,\"dur\":1},"
		" {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg\",\"pid\":0,\"tid\":7,"
		"  \"ts\":30,\"dur\":-5}"
		"]"), 0);
	CHECK_EQ_U64(m.memory.n, 1);
	CHECK_EQ_U64(m.memory.v[0].bytes, 1ull << 63);
	CHECK_EQ_U64(m.memory.v[0].op, TRACE_MEM_FREE);
	/* Total Reserved and q.b only: an infinite sample is not a sample */
	CHECK_EQ_U64(m.metrics.n, 2);
	for (size_t i = 0; i < m.metrics.n; i++)
		CHECK(isfinite(m.metrics.v[i].value));
	q = strtab_find(&m.str, "q.b");
	CHECK(q != UINT32_MAX);
	CHECK(strtab_find(&m.str, "q.a") == UINT32_MAX);
	/* past the year 2286 is not a time (skipped); an end that would wrap is clamped */
	CHECK_EQ_U64(m.kernels.n, 2);
	CHECK_EQ_U64(m.kernels.v[0].start, 30000);
	CHECK_EQ_U64(m.kernels.v[0].end, 30000); /* a negative duration is 0 */
	CHECK_EQ_U64(m.kernels.v[1].start, 9000000000000000000ull);
	CHECK_EQ_U64(m.kernels.v[1].end, UINT64_MAX);
	model_release(&m);
}

/*
 * A StringIds id of 2^28 (a map indexed by id would cost 1 GiB: the sparse
 * map costs one entry per row, and the name resolves), a reference to an id
 * StringIds does not have (unnamed, counted) and infinite metric values.
 */
static void test_nsys_hostile_values(void)
{
	const char *p = tmp("hostile.sqlite");
	sqlite3 *db;
	struct model m;
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES (1,'k1'),(268435456,'bomb');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, shortName INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 1, 13, 704643072, 1),"
		"  (300, 400, 1, 13, 704643072, 268435456), (500, 600, 1, 13, 704643072, 77),"
		"  (700, 800, 1, 13, 704643072, NULL);"
		"CREATE TABLE TARGET_INFO_GPU_METRICS(typeId INT, sourceId INT, typeName TEXT, metricId INT, metricName TEXT);"
		"INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 1, 'GA100', 7, 'SMs Active');"
		"CREATE TABLE GPU_METRICS(rawTimestamp INT, timestamp INT, typeId INT, metricId INT, value REAL);"
		"INSERT INTO GPU_METRICS VALUES (0, 150, 65536, 7, 9e999), (0, 160, 65536, 7, -9e999),"
		"  (0, 170, 65536, 7, 43);";

	CHECK_EQ_I64(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), 0);
	CHECK_EQ_U64(m.kernels.n, 4);
	CHECK_STR(model_str(&m, m.kernels.v[0].name_id), "k1");
	CHECK_STR(model_str(&m, m.kernels.v[1].name_id), "bomb");
	CHECK_STR(model_str(&m, m.kernels.v[2].name_id), ""); /* id 77: not in StringIds */
	CHECK_STR(model_str(&m, m.kernels.v[3].name_id), ""); /* NULL: no name, not counted */
	CHECK(has_warning(&m, "nsys: 1 references to string ids that StringIds does not have were left unnamed"));
	CHECK_EQ_U64(m.metrics.n, 1);
	CHECK_NEAR(m.metrics.v[0].value, 43, 0);
	CHECK(has_warning(&m, "nsys: 2 GPU_METRICS samples that are not finite numbers were skipped"));
	model_release(&m);
}

/* A device id listed twice in deviceProperties is one GPU, not two. */
static void test_kineto_duplicate_device(void)
{
	struct model m;
	const struct trace_device *d;

	CHECK_EQ_I64(load_json(&m,
		"{\"deviceProperties\":[{\"id\":0,\"name\":\"A\",\"numSms\":10},"
		" {\"id\":1,\"name\":\"B\",\"numSms\":20},{\"id\":0,\"name\":\"C\",\"numSms\":132}],"
		" \"traceEvents\":[]}"), 0);
	CHECK_EQ_U64(m.devices.n, 2);
	d = model_device(&m, 0);
	CHECK(d != NULL);
	if (d) {
		CHECK_STR(model_str(&m, d->name_id), "C");
		CHECK_EQ_U64(d->sm_count, 132);
	}
	CHECK(has_warning(&m, "kineto: deviceProperties repeats a device id 1 times"));
	model_release(&m);
}

/* The value of an empty key is not the value of the key before it. */
static void test_kineto_empty_key(void)
{
	struct model m;

	CHECK_EQ_I64(load_json(&m,
		"[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":10,"
		"  \"dur\":5,\"\":99,\"args\":{\"stream\":3,\"\":8}}]"), 0);
	CHECK_EQ_U64(m.kernels.n, 1);
	CHECK_EQ_U64(m.kernels.v[0].end - m.kernels.v[0].start, 5000);
	CHECK_EQ_U64(m.kernels.v[0].stream, 3);
	model_release(&m);
}

/*
 * Many distinct pids (each row looked its pid up in a list: 100000 pids took
 * 20 s of CPU, a million hours) and a domain created twice (the later name wins).
 */
static void test_nsys_many_pids(void)
{
	const char *p = tmp("pids.sqlite");
	sqlite3 *db;
	struct model m;
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES (1,'k'),(2,'worker');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, shortName INT);"
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)"
		"  INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 10, i * 10 + 5, 0, 1, i << 24, 1 FROM c;"
		"CREATE TABLE PROCESSES(globalPid INT, pid INT, name TEXT);"
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)"
		"  INSERT INTO PROCESSES SELECT i << 24, i, 'proc' || i FROM c;"
		"CREATE TABLE ThreadNames(nameId INT, priority INT, globalTid INT);"
		"INSERT INTO ThreadNames VALUES (2, 0, (4321 << 24) + 77), (2, 0, (9999 << 24) + 5);"
		"CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, rangeId INT, text TEXT,"
		"  globalTid INT, domainId INT);"
		"INSERT INTO NVTX_EVENTS VALUES (1, NULL, 75, NULL, 'first', 16777217, 3),"
		"  (2, NULL, 75, NULL, 'second', 16777217, 3), (5, 9, 59, NULL, 'r', 16777217, 3);";
	uint32_t second;

	CHECK_EQ_I64(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), 0);
	CHECK_EQ_U64(m.kernels.n, 5000);
	CHECK_EQ_U64(m.procs.n, 5000);
	for (size_t i = 0; i < m.procs.n; i++) {
		char want[32];
		snprintf(want, sizeof(want), "proc%u", m.procs.v[i].pid);
		CHECK_STR(model_str(&m, m.procs.v[i].cmdline_id), want);
	}
	/* a thread of a pid we saw is named; one of a pid we did not see is not */
	CHECK_STR(model_thread_name(&m, 4321, 77), "worker");
	CHECK_STR(model_thread_name(&m, 9999, 5), "tid 5");
	second = strtab_find(&m.str, "second");
	CHECK_EQ_U64(m.nvtx.n, 1);
	CHECK_EQ_U64(m.nvtx.v[0].domain_id, second);
	model_release(&m);
}

/*
 * The folder of traces recorded by others (shared/validation): env
 * GS_SHARED_DIR, else $GS_SOURCE_DIR/../shared, else /work/shared; NULL
 * (the test says so and skips that part) when none of them is a folder.
 */
/* Kernels of @path whose demangledName (else shortName) resolves in StringIds, by sqlite3 itself. */
static uint64_t sqlite_named_kernels(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	uint64_t n = UINT64_MAX;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return n;
	}
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
			       "JOIN StringIds s ON s.id = k.demangledName", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n;
}

/*
 * Every nsys export we have: names, devices, SM counts and compute
 * capabilities.  The expected values were read from each file by hand with
 * sqlite3:
 *   kernels:   SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
 *   names:     SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
 *              ON s.id = k.demangledName WHERE s.value LIKE 'PREFIX%'
 *              (facts.py in shared/validation/real reads names the same way)
 *   devices:   SELECT * FROM TARGET_INFO_GPU / TARGET_INFO_CUDA_DEVICE (id, smCount,
 *              computeMajor, computeMinor; gpuId -> cudaId), else the distinct
 *              deviceId of the KERNEL and MEMCPY tables when the export has no
 *              TARGET_INFO_GPU table (the two nsysai files, cut to a window).
 */
struct nsys_case {
	const char *file;          /* under tests/data/import (.gz) or shared/validation/real */
	int in_shared;
	uint64_t kernels;
	size_t ndev;
	struct { uint32_t id, pid, sms, cc_major, cc_minor; const char *src; } dev[2];
	struct { const char *prefix; uint64_t n; } names[3];
};

static const char no_gpu_table[] = "-: the export has no TARGET_INFO_GPU table";

static const struct nsys_case nsys_cases[] = {
	{ "import/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz", 0, 5, 1,
	  { { 0, 1230493, 108, 8, 0, "recorded" } },
	  { { "saxpy(double *", 5 } } },
	{ "iconc__rtx4070_graupel_stdpar.sqlite", 1, 7, 1,
	  /* TARGET_INFO_CUDA_DEVICE: gpuId 0 -> cudaId 0 in pid 349138 */
	  { { 0, 349138, 56, 8, 9, "recorded" } },
	  { { "void thrust::", 3 } } },
	{ "nvfuser__h200_cross_entropy_bench.sqlite", 1, 18, 1,
	  /* gpuId 0 -> cudaId 0 in pids 50556 and 50922: one GPU, the lower pid */
	  { { 0, 50556, 132, 9, 0, "recorded" } },
	  { { "nvjet_tst", 3 }, { "<unnamed>::nvfuser_", 6 } } },
	{ "nsysai__h100x2_wan_train_300ms.sqlite", 1, 4010, 2,
	  /* pid 144 ran on device 0, pid 145 on device 1 */
	  { { 0, 144, 0, 0, 0, no_gpu_table }, { 1, 145, 0, 0, 0, no_gpu_table } },
	  { { "ncclDevKernel_SendRecv", 66 }, { "nvjet", 337 }, { "void flash::flash_fwd_kernel", 68 } } },
	{ "nsysai__h100x2_wan_t2v_sp2_1s.sqlite", 1, 3442, 2,
	  { { 0, 111, 0, 0, 0, no_gpu_table }, { 1, 112, 0, 0, 0, no_gpu_table } },
	  { { "sm80_xmma_gemm_f32f32", 640 }, { "void <unnamed>::softmax_warp_forward", 56 } } },
};

static void check_nsys_case(const struct nsys_case *c, const char *path)
{
	struct model m;
	uint64_t unnamed = 0;

	model_init(&m);
	CHECK_EQ_I64(load_input(&m, path), 0);
	CHECK_EQ_U64(m.kernels.n, c->kernels);
	for (size_t i = 0; i < m.kernels.n; i++)
		unnamed += !m.kernels.v[i].name_id;
	CHECK_EQ_U64(unnamed, 0);
	CHECK_EQ_U64(m.kernels.n - unnamed, sqlite_named_kernels(path));
	CHECK(!has_warning(&m, "StringIds"));
	for (size_t k = 0; k < 3 && c->names[k].prefix; k++) {
		uint64_t n = 0;
		size_t len = strlen(c->names[k].prefix);
		for (size_t i = 0; i < m.kernels.n; i++)
			n += !strncmp(model_str(&m, m.kernels.v[i].name_id), c->names[k].prefix, len);
		if (n != c->names[k].n)
			gstest_fail(__FILE__, __LINE__, "%s: %" PRIu64 " kernels named %s..., expected %" PRIu64,
				    c->file, n, c->names[k].prefix, c->names[k].n);
	}
	CHECK_EQ_U64(m.devices.n, c->ndev);
	for (size_t i = 0; i < c->ndev && i < m.devices.n; i++) {
		const struct trace_device *d = &m.devices.v[i];
		const struct model_device_source *s = model_device_source(&m, d);
		CHECK_EQ_U64(d->id, c->dev[i].id);
		CHECK_EQ_U64(d->pid, c->dev[i].pid);
		CHECK_EQ_U64(d->sm_count, c->dev[i].sms);
		CHECK_EQ_U64(d->cc_major, c->dev[i].cc_major);
		CHECK_EQ_U64(d->cc_minor, c->dev[i].cc_minor);
		CHECK(s != NULL);
		if (s) {
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_SMS]), c->dev[i].src);
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_CC]), c->dev[i].src);
		}
	}
	model_release(&m);
}

static void test_nsys_exports(void)
{
	const char *shared = gstest_shared_dir();
	size_t ran = 0;

	for (size_t i = 0; i < sizeof(nsys_cases) / sizeof(nsys_cases[0]); i++) {
		const struct nsys_case *c = &nsys_cases[i];
		char path[2200];
		if (!c->in_shared) {
			size_t len;
			unsigned char *db = gunzip_data(c->file, &len);
			snprintf(path, sizeof(path), "%s", tmp("case.sqlite"));
			write_file(path, db, len);
			free(db);
		} else if (!shared) {
			printf("# skip %s: no shared/validation folder (GS_SHARED_DIR, $GS_SOURCE_DIR/../shared, /work/shared)\n",
			       c->file);
			continue;
		} else {
			snprintf(path, sizeof(path), "%s/validation/real/%s", shared, c->file);
			if (access(path, R_OK)) {
				printf("# skip %s: not in %s/validation/real\n", c->file, shared);
				continue;
			}
		}
		check_nsys_case(c, path);
		ran++;
	}
	printf("# %zu nsys exports checked\n", ran);
	CHECK(ran >= 1);
}

/*
 * Device ids across schemas: TARGET_INFO_CUDA_DEVICE maps nsys's GPU ids to
 * each process's CUDA ordinal (two ranks each seeing their own GPU as 0 are
 * two rows), a GPU row without smCount/computeMajor columns has those facts
 * unknown with the reason, and a device with work but no GPU row is still a
 * device.
 */
static void test_nsys_device_schemas(void)
{
	const char *p = tmp("devs.sqlite"), *q = tmp("olddevs.sqlite");
	sqlite3 *db;
	struct model m;
	const struct model_device_source *s;
	/* pid 7 (globalPid 7 << 24 = 117440512) and pid 8 (134217728) */
	const char *sql =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES (1,'k');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, shortName INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 117440512, 1),"
		"  (100, 200, 0, 7, 134217728, 1);"
		"CREATE TABLE TARGET_INFO_GPU(id INT, name TEXT, smCount INT, computeMajor INT,"
		"  computeMinor INT, totalMemory INT, cuDevice INT);"
		"INSERT INTO TARGET_INFO_GPU VALUES (2, 'G2', 132, 9, 0, 1000, 2), (3, 'G3', 114, 9, 0, 1000, 3),"
		"  (4, 'unused', 10, 8, 0, 1000, 4);"
		"CREATE TABLE TARGET_INFO_CUDA_DEVICE(gpuId INT, cudaId INT, pid INT);"
		"INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (2, 0, 7), (3, 0, 8);";
	const char *old =
		"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
		"INSERT INTO StringIds VALUES (1,'k');"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT,"
		"  globalPid INT, shortName INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 117440512, 1),"
		"  (300, 400, 5, 7, 117440512, 1);"
		"CREATE TABLE TARGET_INFO_GPU(id INT, name TEXT, totalMemory INT);"
		"INSERT INTO TARGET_INFO_GPU VALUES (0, 'Old GPU', 1000);";

	CHECK_EQ_I64(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, p), 0);
	CHECK_EQ_U64(m.devices.n, 2);
	if (m.devices.n == 2) {
		CHECK_EQ_U64(m.devices.v[0].id, 0);
		CHECK_EQ_U64(m.devices.v[0].pid, 7);
		CHECK_STR(model_str(&m, m.devices.v[0].name_id), "G2");
		CHECK_EQ_U64(m.devices.v[0].sm_count, 132);
		CHECK_EQ_U64(m.devices.v[1].id, 0);
		CHECK_EQ_U64(m.devices.v[1].pid, 8);
		CHECK_STR(model_str(&m, m.devices.v[1].name_id), "G3");
		CHECK_EQ_U64(m.devices.v[1].sm_count, 114);
	}
	model_release(&m);

	CHECK_EQ_I64(sqlite3_open(q, &db), SQLITE_OK);
	CHECK_EQ_I64(sqlite3_exec(db, old, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	model_init(&m);
	CHECK_EQ_I64(load_input(&m, q), 0);
	CHECK_EQ_U64(m.devices.n, 2);
	if (m.devices.n == 2) {
		CHECK_EQ_U64(m.devices.v[0].id, 0);
		CHECK_EQ_U64(m.devices.v[0].pid, 7);
		CHECK_STR(model_str(&m, m.devices.v[0].name_id), "Old GPU");
		CHECK_EQ_U64(m.devices.v[0].sm_count, 0);
		s = model_device_source(&m, &m.devices.v[0]);
		CHECK(s != NULL);
		if (s) {
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_NAME]), "recorded");
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_SMS]), "-: TARGET_INFO_GPU has no smCount column");
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_CC]), "-: TARGET_INFO_GPU has no computeMajor column");
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_MEMORY]), "recorded");
		}
		CHECK_EQ_U64(m.devices.v[1].id, 5);
		s = model_device_source(&m, &m.devices.v[1]);
		CHECK(s != NULL);
		if (s)
			CHECK_STR(model_str(&m, s->src[MODEL_FACT_SMS]),
				  "-: TARGET_INFO_GPU has no row for CUDA device 5");
	}
	model_release(&m);
}

static void test_sniff(void)
{
	CHECK(import_sniff_json((const unsigned char *)"  \n{", 4));
	CHECK(import_sniff_json((const unsigned char *)"\xef\xbb\xbf[", 4));
	CHECK(!import_sniff_json((const unsigned char *)"GPUSCOPE", 8));
	CHECK(import_sniff_sqlite((const unsigned char *)"SQLite format 3\0xxxx", 20));
	CHECK(!import_sniff_sqlite((const unsigned char *)"SQLite", 6));
}

static const struct gstest tests[] = {
	GSTEST(test_hta_ns_resolution),
	GSTEST(test_hta_nccl),
	GSTEST(test_hta_sampled),
	GSTEST(test_hta_simple_add),
	GSTEST(test_hta_alexnet),
	GSTEST(test_hta_amd),
	GSTEST(test_nccl_kernels),
	GSTEST(test_ns_resolution),
	GSTEST(test_rocm),
	GSTEST(test_sync_rows),
	GSTEST(test_trace_compare_base),
	GSTEST(test_legacy_2021),
	GSTEST(test_counters_memory_python),
	GSTEST(test_exact_times),
	GSTEST(test_bad_json),
	GSTEST(test_nsys_sample),
	GSTEST(test_nsys_other_schema),
	GSTEST(test_bad_sqlite),
	GSTEST(test_kineto_extreme_numbers),
	GSTEST(test_nsys_hostile_values),
	GSTEST(test_kineto_duplicate_device),
	GSTEST(test_kineto_empty_key),
	GSTEST(test_nsys_many_pids),
	GSTEST(test_nsys_exports),
	GSTEST(test_nsys_device_schemas),
	GSTEST(test_sniff),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
