/*
 * test_reports.c - checks on real reports recorded on an H200
 * (tests/data/cuda): counts, copy kinds, names, and the invariant that no
 * kernel or copy starts before the API call that launched it.
 */
#include "gstest.h"
#include "cuda_check.h"

static int load(struct model *m, const char *name)
{
	model_init(m);
	if (model_load_report(m, gstest_data(name)) < 0) {
		gstest_fail(__FILE__, __LINE__, "cannot load %s", name);
		return -1;
	}
	model_finish(m);
	return 0;
}

static uint64_t total_drops(const struct model *m)
{
	uint64_t d = 0;

	for (unsigned i = 0; i < TRACE_DROP__COUNT; i++)
		d += m->drops[i];
	return d;
}

static void test_basic(void)
{
	struct model m;
	struct cuda_check c;
	size_t mangled = 0, unmangled = 0;

	if (load(&m, "cuda/h200_basic.gpuscope") < 0)
		return;
	cuda_check_run(&m, &c);
	CHECK_EQ_U64(c.kernels, 13);
	CHECK_EQ_U64(c.kernels_matched, 13);
	CHECK_EQ_U64(c.kernels_before_launch, 0);
	CHECK_EQ_U64(c.copies_before_api, 0);
	CHECK_EQ_U64(c.api_corr_shared, 0);
	CHECK_EQ_U64(c.memcpys, 5);
	CHECK_EQ_U64(c.copy_kind[COPY_HTOD], 2);
	CHECK_EQ_U64(c.copy_kind[COPY_DTOH], 2);
	CHECK_EQ_U64(c.copy_kind[COPY_DTOD], 1);
	CHECK_EQ_U64(c.copy_src_pageable, 2);
	CHECK_EQ_U64(c.copy_src_pinned, 2);
	CHECK_EQ_U64(c.copy_async, 2);
	CHECK_EQ_U64(c.memsets, 2);
	CHECK(c.sync_type[SYNC_EVENT] >= 1);
	CHECK(c.sync_type[SYNC_STREAM_WAIT_EVENT] >= 1);
	CHECK(c.sync_type[SYNC_STREAM] >= 1);
	CHECK(c.sync_type[SYNC_CONTEXT] >= 1);
	CHECK_EQ_U64(c.memory, 8);
	CHECK_EQ_U64(cuda_check_kernels_named(&m, "c_kernel"), 1);
	CHECK_EQ_U64(cuda_check_kernels_named(&m, "void tmpl_kernel"), 1);
	CHECK_EQ_U64(cuda_check_kernels_named(&m, "empty_kernel"), 10);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaLaunchKernel"), 13);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaMemcpy"), 3);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGetDevice"), 0);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGetLastError"), 0);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaPeekAtLastError"), 0);
	for (size_t i = 0; i < m.kernels.n; i++) {
		const struct trace_kernel *k = &m.kernels.v[i];
		const char *name = model_str(&m, k->name_id);
		if (!strcmp(name, "c_kernel")) {
			CHECK_EQ_U64(k->mangled_id, 0);   /* extern "C" */
			CHECK_EQ_U64(k->grid[0], 4096);
			CHECK_EQ_U64(k->block[0], 256);
			unmangled++;
		}
		if (!strcmp(name, "void tmpl_kernel<float, 64>(float*, int)")) {
			CHECK_STR(model_str(&m, k->mangled_id), "_Z11tmpl_kernelIfLi64EEvPT_i");
			CHECK_EQ_U64(k->static_smem, 256);
			CHECK_EQ_U64(k->dynamic_smem, 512);
			mangled++;
		}
		if (!strcmp(name, "grid3d_kernel(int*)")) {
			CHECK_EQ_U64(k->grid[2], 2);
			CHECK_EQ_U64(k->block[1], 8);
		}
		CHECK(k->end > k->start);
		CHECK_EQ_U64(k->flags & TRACE_GPU_COMM, 0);
	}
	CHECK_EQ_U64(mangled, 1);
	CHECK_EQ_U64(unmangled, 1);
	CHECK_EQ_U64(m.devices.n, 2);
	if (m.devices.n) {
		const struct trace_device *d = &m.devices.v[0];
		CHECK_STR(model_str(&m, d->name_id), "NVIDIA H200");
		CHECK_EQ_U64(d->sm_count, 132);
		CHECK_EQ_U64(d->cc_major, 9);
		CHECK_EQ_U64(d->cc_minor, 0);
		CHECK_EQ_U64(d->global_mem, 150109880320ull);   /* as CUPTI reports it */
		CHECK(d->pci_bus != 0 || d->pci_device != 0);
	}
	CHECK_EQ_U64(total_drops(&m), 0);
	CHECK_EQ_U64(m.nr_warnings, 0);
	model_release(&m);
}

static void test_graph(void)
{
	struct model m;
	struct cuda_check c;

	if (load(&m, "cuda/h200_graph.gpuscope") < 0)
		return;
	cuda_check_run(&m, &c);
	CHECK_EQ_U64(c.kernels, 15);
	CHECK_EQ_U64(c.graph_kernels, 15);
	CHECK_EQ_U64(c.kernels_matched, 15);
	CHECK_EQ_U64(c.kernels_before_launch, 0);
	CHECK_EQ_U64(c.memsets, 5);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGraphLaunch"), 5);
	for (size_t i = 0; i < m.kernels.n; i++)
		CHECK(m.kernels.v[i].graph_id != 0);
	CHECK_EQ_U64(total_drops(&m), 0);
	model_release(&m);
}

static void test_torch(void)
{
	struct model m;
	struct cuda_check c;

	if (load(&m, "cuda/h200_torch.gpuscope") < 0)
		return;
	cuda_check_run(&m, &c);
	CHECK_EQ_U64(c.kernels, 3004);
	CHECK_EQ_U64(c.kernels_matched, 3004);
	CHECK_EQ_U64(c.kernels_before_launch, 0);
	CHECK_EQ_U64(c.copies_before_api, 0);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaLaunchKernelExC"), 2000);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGetDevice"), 0);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGetLastError"), 0);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaStreamIsCapturing"), 0);
	CHECK(c.memory >= 5);
	CHECK_EQ_U64(total_drops(&m), 0);
	model_release(&m);
}

/*
 * torchvision ResNet-50, 20 training steps at batch 64 plus warm-up,
 * profiled with the defaults (bench/overhead workload c, session 3): the
 * default buffers drop nothing, and every kernel, copy and set has its
 * launching call.
 */
static void test_resnet(void)
{
	struct model m;
	struct cuda_check c;

	if (load(&m, "cuda/h200_resnet50.gpuscope") < 0)
		return;
	cuda_check_run(&m, &c);
	CHECK_EQ_U64(c.kernels, 26736);
	CHECK_EQ_U64(c.kernels_matched, 26736);
	CHECK_EQ_U64(c.kernels_before_launch, 0);
	CHECK_EQ_U64(c.copies_before_api, 0);
	CHECK_EQ_U64(c.memcpys, 481);
	CHECK_EQ_U64(c.memsets, 1236);
	CHECK(c.sync_type[SYNC_STREAM] + c.sync_type[SYNC_CONTEXT] + c.sync_type[SYNC_EVENT] >= 1);
	CHECK_EQ_U64(cuda_check_apis_named(&m, "cudaGetDevice"), 0);
	CHECK_EQ_U64(total_drops(&m), 0);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_basic),
	GSTEST(test_graph),
	GSTEST(test_torch),
	GSTEST(test_resnet),
	{ 0 }
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
