/*
 * test_device_facts.c - filling missing device facts from the GPU table
 * (model_apply_gpu_facts) and the sources `info` shows for them, on
 * synthetic models and on the real nsys exports that lack TARGET_INFO_GPU.
 *
 * The real exports are in shared/validation/real: env GS_SHARED_DIR, else
 * $GS_SOURCE_DIR/../shared, else /work/shared; when none is a folder, or a
 * file is absent, that part says so and is skipped.
 */
#include "gstest.h"
#include "import/import.h"
#include "model/device_facts.h"
#include "model/gpu_facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024ull * 1024 * 1024)

/* Add a device row with the given facts (0 / NULL = unknown). */
static struct trace_device *add_dev(struct model *m, uint32_t id, const char *name, uint32_t sms, uint32_t ccmaj,
				    uint32_t ccmin, uint64_t mem)
{
	struct trace_device *d = MODEL_PUSH(m->devices);

	d->id = id;
	d->pid = 100;
	d->name_id = name ? model_intern(m, name) : 0;
	d->sm_count = sms;
	d->cc_major = ccmaj;
	d->cc_minor = ccmin;
	d->global_mem = mem;
	return d;
}

/* A device row with a name only: SMs, cc and memory come from the table, marked "table: ROW". */
static void test_name_only(void)
{
	struct model m;
	const struct trace_device *d;

	model_init(&m);
	add_dev(&m, 0, "NVIDIA H100 80GB HBM3", 0, 0, 0, 0);
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 3);
	d = &m.devices.v[0];
	CHECK_EQ_U64(d->sm_count, 132);
	CHECK_EQ_U64(d->cc_major, 9);
	CHECK_EQ_U64(d->cc_minor, 0);
	CHECK_EQ_U64(d->global_mem, 80 * GIB);
	CHECK_STR(model_str(&m, d->name_id), "NVIDIA H100 80GB HBM3");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_NAME), "recorded");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_SMS), "table: H100 SXM");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_CC), "table: H100 SXM");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_MEMORY), "table: H100 SXM");
	/* idempotent: nothing left to fill */
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 0);
	CHECK_EQ_U64(m.device_sources.n, 1);
	model_release(&m);
}

/* Recorded facts are never replaced, and a complete row gets no source row. */
static void test_recorded_kept(void)
{
	struct model m;
	const struct trace_device *d;

	model_init(&m);
	/* a MIG slice: the name matches the A100 rows, the recorded SMs and memory stay */
	add_dev(&m, 0, "NVIDIA A100-SXM4-40GB MIG 3g.20gb", 42, 8, 0, 20 * GIB);
	add_dev(&m, 1, "NVIDIA H200", 132, 9, 0, 140 * GIB);
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 0);
	d = &m.devices.v[0];
	CHECK_EQ_U64(d->sm_count, 42);
	CHECK_EQ_U64(d->global_mem, 20 * GIB);
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_SMS), "recorded");
	CHECK_EQ_U64(m.device_sources.n, 0);
	model_release(&m);
}

/* Several rows match the name and no memory tells them apart: only the facts they agree on, source "table". */
static void test_ambiguous_rows(void)
{
	struct model m;
	const struct trace_device *d;

	model_init(&m);
	add_dev(&m, 0, "NVIDIA A100-SXM4", 0, 0, 0, 0);
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 2);
	d = &m.devices.v[0];
	CHECK_EQ_U64(d->sm_count, 108);
	CHECK_EQ_U64(d->cc_major, 8);
	CHECK_EQ_U64(d->global_mem, 0); /* 40 or 80 GB: unknown */
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_SMS), "table");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_MEMORY), "-: not recorded in the input");
	model_release(&m);
}

/* An empty name (AMD Kineto trace): cc + CUs + memory identify one row, whose name is filled in. */
static void test_name_from_cc(void)
{
	struct model m;
	const struct trace_device *d;

	model_init(&m);
	add_dev(&m, 0, "", 304, 9, 4, 192 * GIB);
	/* the same without memory: MI300X and MI325X agree on all but memory, so no name */
	add_dev(&m, 1, NULL, 304, 9, 4, 0);
	/* a memory size that fits no row with that cc and SM count rules them all out */
	add_dev(&m, 2, NULL, 304, 9, 4, 64 * GIB);
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 1); /* only device 0 has something to fill: its name */
	d = &m.devices.v[0];
	CHECK_STR(model_str(&m, d->name_id), "MI300X");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_NAME), "table: MI300X");
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_SMS), "recorded");
	d = &m.devices.v[1];
	CHECK_EQ_U64(d->name_id, 0);
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_NAME), "-: not recorded in the input");
	CHECK_EQ_U64(d->global_mem, 0);
	d = &m.devices.v[2];
	CHECK_EQ_U64(d->name_id, 0);
	model_release(&m);
}

/* A GPU the table does not know, or a device row with no facts at all: nothing filled, reasons kept. */
static void test_unknown(void)
{
	struct model m;
	struct model_device_source *s;
	const struct trace_device *d;

	model_init(&m);
	add_dev(&m, 0, "Some Future GPU", 0, 0, 0, 0);
	add_dev(&m, 1, "NVIDIA GeForce RTX 3090 Ti", 0, 0, 0, 0); /* not the RTX 3090 row */
	add_dev(&m, 2, NULL, 0, 0, 0, 0);
	s = MODEL_PUSH(m.device_sources);
	s->device = 2;
	s->pid = 100;
	for (int f = 0; f < MODEL_FACT__COUNT; f++)
		s->src[f] = model_intern(&m, "-: the export has no TARGET_INFO_GPU table");
	CHECK_EQ_U64(model_apply_gpu_facts(&m), 0);
	d = &m.devices.v[0];
	CHECK_EQ_U64(d->sm_count, 0);
	CHECK_STR(model_fact_source(&m, d, MODEL_FACT_SMS), "-: not recorded in the input");
	CHECK_EQ_U64(m.devices.v[1].sm_count, 0);
	d = &m.devices.v[2];
	for (int f = 0; f < MODEL_FACT__COUNT; f++)
		CHECK_STR(model_fact_source(&m, d, f), "-: the export has no TARGET_INFO_GPU table");
	model_release(&m);
}

/*
 * The nsys-ai exports (2x H100, cut to a window) have no TARGET_INFO_GPU
 * and name their GPUs nowhere (no TARGET_INFO_GPU or TARGET_INFO_CUDA_DEVICE
 * row, an empty GpuInfo in TARGET_INFO_SYSTEM_ENV): the table has nothing
 * to look up, so every fact stays "-" with the importer's reason (a
 * device row with the name "NVIDIA H100 80GB HBM3" and nothing else gets
 * the H100 SXM row's facts: test_name_only).
 */
static void test_nsys_without_target_info(void)
{
	static const char *const files[] = {
		"nsysai__h100x2_wan_t2v_sp2_1s.sqlite",
		"nsysai__h100x2_wan_train_300ms.sqlite",
	};
	const char *dir = gstest_shared_dir();

	if (!dir) {
		printf("# skip nsys exports: no shared folder (GS_SHARED_DIR, $GS_SOURCE_DIR/../shared, /work/shared)\n");
		return;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[1200];
		struct model m;
		snprintf(path, sizeof(path), "%s/validation/real/%s", dir, files[i]);
		if (access(path, R_OK)) {
			printf("# skip %s: not in %s/validation/real\n", files[i], dir);
			continue;
		}
		model_init(&m);
		CHECK_EQ_I64(load_input(&m, path), 0);
		CHECK_EQ_U64(m.devices.n, 2); /* two GPUs ran work */
		for (size_t k = 0; k < m.devices.n; k++) {
			const struct trace_device *d = &m.devices.v[k];
			CHECK_EQ_U64(d->name_id, 0); /* the export names the GPU nowhere */
			CHECK_EQ_U64(d->sm_count, 0);
			CHECK_EQ_U64(d->cc_major, 0);
			CHECK_EQ_U64(d->global_mem, 0);
			for (int f = 0; f < MODEL_FACT__COUNT; f++)
				CHECK_STR(model_fact_source(&m, d, f), "-: the export has no TARGET_INFO_GPU table");
		}
		model_release(&m);
	}
}

static const struct gstest tests[] = {
	GSTEST(test_name_only),
	GSTEST(test_recorded_kept),
	GSTEST(test_ambiguous_rows),
	GSTEST(test_name_from_cc),
	GSTEST(test_unknown),
	GSTEST(test_nsys_without_target_info),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
