/*
 * test_cupti.c - CUPTI records (built from the CUDA 13 header structs) to
 * report records, the default API list on CUPTI's real callback names,
 * kernel naming, NCCL detection, and loading libcupti without a GPU.
 */
#include "gstest.h"
#include "collect/cupti_api.h"
#include "collect/cupti_convert.h"

#include <stdlib.h>
#include <unistd.h>

static void test_kernel(void)
{
	CUpti_ActivityKernel10 k;
	struct trace_kernel t;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 1500;
	k.deviceId = 1;
	k.contextId = 3;
	k.streamId = 7;
	k.correlationId = 42;
	k.gridX = 128; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	CHECK_EQ_I64(cupti_conv_kernel(&k, 77, &t), 0);
	CHECK_EQ_U64(t.start, 1000);
	CHECK_EQ_U64(t.end, 1500);
	CHECK_EQ_U64(t.pid, 77);
	CHECK_EQ_U64(t.device, 1);
	CHECK_EQ_U64(t.context, 3);
	CHECK_EQ_U64(t.stream, 7);
	CHECK_EQ_U64(t.correlation, 42);
	CHECK_EQ_U64(t.grid[0], 128);
	CHECK_EQ_U64(t.grid[1], 2);
	CHECK_EQ_U64(t.block[0], 256);
	CHECK_EQ_U64(t.registers, 32);
	CHECK_EQ_U64(t.static_smem, 1024);
	CHECK_EQ_U64(t.dynamic_smem, 4096);
	CHECK_EQ_U64(t.graph_id, 0);
	CHECK_EQ_U64(t.flags, 0);
	k.graphId = 5;
	CHECK_EQ_I64(cupti_conv_kernel(&k, 77, &t), 0);
	CHECK_EQ_U64(t.graph_id, 5);
	CHECK_EQ_U64(t.flags, TRACE_GPU_GRAPH);
}

static void test_kernel_incomplete(void)
{
	CUpti_ActivityKernel10 k;
	struct trace_kernel t;

	memset(&k, 0, sizeof(k));
	k.start = 1000;        /* end 0: cut off by a forced flush */
	CHECK_EQ_I64(cupti_conv_kernel(&k, 1, &t), -1);
	k.end = 900;           /* end before start */
	CHECK_EQ_I64(cupti_conv_kernel(&k, 1, &t), -1);
	k.start = 0;
	k.end = 900;
	CHECK_EQ_I64(cupti_conv_kernel(&k, 1, &t), -1);
}

static void test_memcpy(void)
{
	CUpti_ActivityMemcpy6 c;
	struct trace_memcpy t;

	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 4 << 20;
	c.start = 10;
	c.end = 20;
	c.streamId = 7;
	c.correlationId = 9;
	CHECK_EQ_I64(cupti_conv_memcpy(&c, 5, &t), 0);
	CHECK_EQ_U64(t.kind, COPY_HTOD);
	CHECK_EQ_U64(t.src_kind, MEM_PAGEABLE);
	CHECK_EQ_U64(t.dst_kind, MEM_DEVICE);
	CHECK_EQ_U64(t.bytes, 4 << 20);
	CHECK_EQ_U64(t.flags & TRACE_GPU_ASYNC, 0);
	CHECK_EQ_U64(t.correlation, 9);
	CHECK_STR(trace_copy_kind_name(t.kind), "HtoD");

	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	CHECK_EQ_I64(cupti_conv_memcpy(&c, 5, &t), 0);
	CHECK_EQ_U64(t.kind, COPY_DTOH);
	CHECK_EQ_U64(t.dst_kind, MEM_PINNED);
	CHECK_EQ_U64(t.flags, TRACE_GPU_ASYNC);

	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	c.flags = 0;
	CHECK_EQ_I64(cupti_conv_memcpy(&c, 5, &t), 0);
	CHECK_EQ_U64(t.kind, COPY_DTOD);
}

static void test_memcpy_p2p(void)
{
	CUpti_ActivityMemcpyPtoP4 c;
	struct trace_memcpy t;

	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	c.srcKind = c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.srcDeviceId = 0;
	c.dstDeviceId = 3;
	c.bytes = 1000;
	c.start = 5;
	c.end = 6;
	CHECK_EQ_I64(cupti_conv_memcpy_p2p(&c, 1, &t), 0);
	CHECK_EQ_U64(t.kind, COPY_PTOP);
	CHECK_EQ_U64(t.device, 0);
	CHECK_EQ_U64(t.dst_device, 3);
	CHECK_EQ_U64(t.bytes, 1000);
}

static void test_memset(void)
{
	CUpti_ActivityMemset4 s;
	struct trace_memset t;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 512;
	s.start = 100;
	s.end = 300;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
	CHECK_EQ_I64(cupti_conv_memset(&s, 2, &t), 0);
	CHECK_EQ_U64(t.value, 0xab);
	CHECK_EQ_U64(t.bytes, 512);
	CHECK_EQ_U64(t.mem_kind, MEM_DEVICE);
	CHECK_EQ_U64(t.flags, TRACE_GPU_ASYNC);
}

static void test_sync(void)
{
	CUpti_ActivitySynchronization2 s;
	struct trace_sync t;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	s.start = 50;
	s.end = 80;
	s.contextId = 1;
	s.streamId = 0xffffffffu;  /* as measured for cudaDeviceSynchronize */
	s.correlationId = 12;
	CHECK_EQ_I64(cupti_conv_sync(&s, 9, 0, &t), 0);
	CHECK_EQ_U64(t.type, SYNC_CONTEXT);
	CHECK_EQ_U64(t.stream, 0xffffffffu);
	CHECK_EQ_U64(t.device, 0);
	CHECK_STR(trace_sync_type_name(t.type), trace_sync_type_name(SYNC_CONTEXT));
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
	s.cudaEventId = 4;
	CHECK_EQ_I64(cupti_conv_sync(&s, 9, CUPTI_DEVICE_UNKNOWN, &t), 0);
	CHECK_EQ_U64(t.type, SYNC_EVENT);
	CHECK_EQ_U64(t.event, 4);
	CHECK_EQ_U64(t.device, CUPTI_DEVICE_UNKNOWN);
}

/* a sync record made from the API call itself (callbacks, API activity records) */
static void test_sync_from_api(void)
{
	struct trace_api a;
	struct trace_sync t;
	int per_thread = -1;

	memset(&a, 0, sizeof(a));
	a.start = 100;
	a.end = 250;
	a.pid = 7;
	a.tid = 8;
	a.correlation = 31;
	cupti_sync_from_api(&a, (unsigned)cupti_sync_type("cudaStreamSynchronize_ptsz_v7000", &per_thread), &t);
	CHECK_EQ_I64(per_thread, 1);
	CHECK_EQ_U64(t.type, SYNC_STREAM);
	CHECK_EQ_U64(t.start, 100);
	CHECK_EQ_U64(t.end, 250);
	CHECK_EQ_U64(t.pid, 7);
	CHECK_EQ_U64(t.correlation, 31);
	CHECK_EQ_U64(t.device, CUPTI_DEVICE_UNKNOWN);
	CHECK_EQ_U64(t.stream, 0xffffffffu);
	CHECK_EQ_U64(t.event, 0xffffffffu);
	CHECK_EQ_U64(t.context, 0);
	CHECK_EQ_I64(cupti_sync_type("cudaStreamSynchronizeX", &per_thread), 0);
}

static void test_memory(void)
{
	CUpti_ActivityMemory4 m;
	struct trace_memory t;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.address = 0x7f0000000000ull;
	m.bytes = 1 << 30;
	m.timestamp = 999;
	m.deviceId = 2;
	CHECK_EQ_I64(cupti_conv_memory(&m, 3, &t), 0);
	CHECK_EQ_U64(t.op, TRACE_MEM_ALLOC);
	CHECK_EQ_U64(t.mem_kind, MEM_DEVICE);
	CHECK_EQ_U64(t.bytes, 1 << 30);
	CHECK_EQ_U64(t.time, 999);
	CHECK_EQ_U64(t.device, 2);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	CHECK_EQ_I64(cupti_conv_memory(&m, 3, &t), 0);
	CHECK_EQ_U64(t.op, TRACE_MEM_FREE);
	CHECK_EQ_U64(t.mem_kind, MEM_PINNED);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
	CHECK_EQ_I64(cupti_conv_memory(&m, 3, &t), -1);
}

static void test_api(void)
{
	CUpti_ActivityAPI a;
	struct trace_api t;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = 100;
	a.end = 105;
	a.processId = 1234;
	a.threadId = 1240;
	a.correlationId = 77;
	a.returnValue = 2;
	CHECK_EQ_I64(cupti_conv_api(&a, TRACE_API_RUNTIME, 6, &t), 0);
	CHECK_EQ_U64(t.cbid, 211);
	CHECK_EQ_U64(t.pid, 1234);
	CHECK_EQ_U64(t.tid, 1240);
	CHECK_EQ_U64(t.correlation, 77);
	CHECK_EQ_U64(t.domain, TRACE_API_RUNTIME);
	CHECK_EQ_U64(t.name_id, 6);
	CHECK_EQ_I64(t.status, 2);
}

static void test_device(void)
{
	CUpti_ActivityDevice5 d;
	struct trace_device t;

	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 0;
	d.numMultiprocessors = 132;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	d.coreClockRate = 1980000;
	d.globalMemorySize = 150754820096ull;
	d.maxWarpsPerMultiprocessor = 64;
	d.numThreadsPerWarp = 32;
	d.uuid.bytes[0] = 0x12;
	d.uuid.bytes[15] = 0x34;
	cupti_conv_device(&d, 8, 3, &t);
	CHECK_EQ_U64(t.sm_count, 132);
	CHECK_EQ_U64(t.cc_major, 9);
	CHECK_EQ_U64(t.core_clock_khz, 1980000);
	CHECK_EQ_U64(t.global_mem, 150754820096ull);
	CHECK_EQ_U64(t.max_threads_per_sm, 2048);
	CHECK_EQ_U64(t.uuid[0], 0x12);
	CHECK_EQ_U64(t.uuid[15], 0x34);
	CHECK_EQ_U64(t.name_id, 3);
	CHECK_EQ_U64(t.pid, 8);
}

static void test_base_name(void)
{
	char buf[64];

	CHECK_EQ_U64(cupti_api_base_name("cudaLaunchKernel_v7000", buf, sizeof(buf)), 16);
	CHECK_STR(buf, "cudaLaunchKernel");
	cupti_api_base_name("cudaMemcpyAsync_ptsz_v7000", buf, sizeof(buf));
	CHECK_STR(buf, "cudaMemcpyAsync_ptsz");
	cupti_api_base_name("__cudaLaunchKernel_v13000", buf, sizeof(buf));
	CHECK_STR(buf, "__cudaLaunchKernel");
	cupti_api_base_name("cuLaunchKernel", buf, sizeof(buf));
	CHECK_STR(buf, "cuLaunchKernel");
	cupti_api_base_name("cuMemAlloc_v2", buf, sizeof(buf));
	CHECK_STR(buf, "cuMemAlloc");
	cupti_api_base_name("cuMemcpyHtoD_v2", buf, sizeof(buf));
	CHECK_STR(buf, "cuMemcpyHtoD");
	/* "_v" without digits is part of the name; truncation keeps a NUL */
	cupti_api_base_name("cudaFoo_v", buf, sizeof(buf));
	CHECK_STR(buf, "cudaFoo_v");
	CHECK_EQ_U64(cupti_api_base_name("cudaLaunchKernel_v7000", buf, 5), 16);
	CHECK_STR(buf, "cuda");
}

static void test_keep_list(void)
{
	static const char *const keep[] = {
		"cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "__cudaLaunchKernel_v13000",
		"cudaLaunchKernelExC_v11060", "cudaLaunchCooperativeKernel_v9000",
		"cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch_v10000", "cuGraphLaunch",
		"cudaMemcpy_v3020", "cudaMemcpyAsync_v3020", "cudaMemcpy2DAsync_v3020",
		"cuMemcpyHtoDAsync_v2", "cudaMemset_v3020", "cudaMemsetAsync_v3020", "cuMemsetD32_v2",
		"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020",
		"cudaEventSynchronize_v3020", "cuCtxSynchronize", "cudaStreamQuery_v3020",
		"cudaEventQuery_v3020", "cudaEventRecord_v3020", "cudaStreamWaitEvent_v3020",
		"cudaStreamCreateWithFlags_v5000", "cudaMalloc_v3020", "cudaFree_v3020",
		"cudaMallocHost_v3020", "cudaFreeHost_v3020", "cudaHostAlloc_v3020",
		"cudaMallocManaged_v6000", "cudaMallocAsync_v11020", "cudaFreeAsync_v11020",
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocAsync", "cudaProfilerStart_v4000",
		"cudaProfilerStop_v4000", "cudaGraphInstantiate_v10000", "cudaLaunchHostFunc_v10000",
	};
	static const char *const skip[] = {
		"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaPeekAtLastError_v3020",
		"cudaStreamIsCapturing_v10000", "cudaSetDevice_v3020", "cudaGetDeviceCount_v3020",
		"cudaDeviceGetAttribute_v5000", "cudaFuncGetAttributes_v3020",
		"cudaPointerGetAttributes_v4000", "cudaEventCreateWithFlags_v3020",
		"cudaEventDestroy_v3020", "cudaStreamGetCaptureInfo_v10010",
		"cudaThreadExchangeStreamCaptureMode_v10010", "cudaGraphAddMemcpyNode_v10000",
		"cudaGraphAddKernelNode_v10000", "cuGraphAddMemsetNode", "cuCtxGetCurrent",
		"cuDevicePrimaryCtxGetState", "cuKernelGetAttribute", "cuGetProcAddress_v2",
		"cuDeviceGetAttribute", "cuMemGetAllocationGranularity",
	};

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!cupti_api_keep(keep[i]))
			gstest_fail(__FILE__, __LINE__, "%s is skipped, expected kept", keep[i]);
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (cupti_api_keep(skip[i]))
			gstest_fail(__FILE__, __LINE__, "%s is kept, expected skipped", skip[i]);
}

/* The default list applied to CUPTI's own callback names (libcupti, no GPU needed). */
static void test_keep_list_real_names(void)
{
	struct cupti_api api;
	char why[256];
	const char *name = NULL;
	unsigned kept = 0, total = 0;

	if (cupti_load(&api, why, sizeof(why)) < 0) {
		gstest_fail(__FILE__, __LINE__, "cupti_load: %s", why);
		return;
	}
	CHECK_EQ_I64(api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name), 0);
	CHECK_STR(name, "cudaLaunchKernel_v7000");
	CHECK(cupti_api_keep(name));
	CHECK_EQ_I64(api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					 CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &name), 0);
	CHECK(cupti_api_keep(name));
	CHECK_EQ_I64(api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					 CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, &name), 0);
	CHECK(!cupti_api_keep(name));
	CHECK_EQ_I64(api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
					 CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, &name), 0);
	CHECK(!cupti_api_keep(name));
	CHECK_EQ_I64(api.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
					 CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &name), 0);
	CHECK(cupti_api_keep(name));
	for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++) {
		if (api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) || !name)
			continue;
		total++;
		kept += (unsigned)cupti_api_keep(name);
	}
	/* a minority of the ~520 runtime APIs, but every family above */
	printf("# runtime APIs kept by default: %u of %u\n", kept, total);
	CHECK(total > 400);
	CHECK(kept >= 60 && kept < total / 2);
}

/* Which APIs are synchronisations (their sync records come from our callbacks). */
static void test_sync_type(void)
{
	static const struct { const char *name; int type, per_thread; } cases[] = {
		{ "cudaDeviceSynchronize_v3020", SYNC_CONTEXT, 0 },
		{ "cudaThreadSynchronize_v3020", SYNC_CONTEXT, 0 },
		{ "cuCtxSynchronize", SYNC_CONTEXT, 0 },
		{ "cudaStreamSynchronize_v3020", SYNC_STREAM, 0 },
		{ "cudaStreamSynchronize_ptsz_v7000", SYNC_STREAM, 1 },
		{ "cuStreamSynchronize_ptsz", SYNC_STREAM, 1 },
		{ "cuStreamSynchronize", SYNC_STREAM, 0 },
		{ "cudaEventSynchronize_v3020", SYNC_EVENT, 0 },
		{ "cuEventSynchronize", SYNC_EVENT, 0 },
		{ "cudaStreamWaitEvent_v3020", SYNC_STREAM_WAIT_EVENT, 0 },
		{ "cudaStreamWaitEvent_ptsz_v7000", SYNC_STREAM_WAIT_EVENT, 1 },
		{ "cuStreamWaitEvent", SYNC_STREAM_WAIT_EVENT, 0 },
		{ "cudaStreamWaitEventExternal", 0, 0 },   /* not a prefix match */
		{ "cudaStreamQuery_v3020", 0, 0 },
		{ "cudaEventRecord_v3020", 0, 0 },
		{ "cudaLaunchKernel_v7000", 0, 0 },
		{ "cuCtxSynchronize_v2", SYNC_CONTEXT, 0 },
	};
	struct cupti_api api;
	char why[256];
	const char *name = NULL;
	int seen[5] = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int pt = -1, t = cupti_sync_type(cases[i].name, &pt);
		if (t != cases[i].type || pt != cases[i].per_thread)
			gstest_fail(__FILE__, __LINE__, "%s: type %d per-thread %d, expected %d %d",
				    cases[i].name, t, pt, cases[i].type, cases[i].per_thread);
	}
	if (cupti_load(&api, why, sizeof(why)) < 0) {
		printf("# skipped the real names: %s\n", why);
		return;
	}
	/* every synchronisation CUPTI names is one we keep (its callback is on) */
	for (unsigned dom = 0; dom < 2; dom++) {
		uint32_t size = dom ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;
		for (uint32_t cbid = 1; cbid < size; cbid++) {
			int pt, t;
			if (api.GetCallbackName(dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
						cbid, &name) || !name)
				continue;
			t = cupti_sync_type(name, &pt);
			if (!t)
				continue;
			seen[t]++;
			if (!cupti_api_keep(name))
				gstest_fail(__FILE__, __LINE__, "%s is a sync but not kept", name);
		}
	}
	CHECK(seen[SYNC_CONTEXT] >= 3);
	CHECK(seen[SYNC_STREAM] >= 4);
	CHECK(seen[SYNC_EVENT] >= 2);
	CHECK(seen[SYNC_STREAM_WAIT_EVENT] >= 4);
}

static void test_nccl(void)
{
	CHECK(cupti_is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
	CHECK(cupti_is_nccl_kernel("void ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
	CHECK(cupti_is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
	CHECK(cupti_is_nccl_kernel("_Z38ncclDevKernel_AllGather_RING_LL128ILi4EEv24ncclDevKernelArgsStorage"));
	CHECK(cupti_is_nccl_kernel("ncclDevKernel_SendRecv"));
	CHECK(!cupti_is_nccl_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int)"));
	CHECK(!cupti_is_nccl_kernel("my_nccl_helper_kernel(float*)"));
	CHECK(!cupti_is_nccl_kernel("nccl_pack(float*)"));
	CHECK(!cupti_is_nccl_kernel("_Z6squarePfi"));
	CHECK(!cupti_is_nccl_kernel(""));
	CHECK(!cupti_is_nccl_kernel(NULL));
}

static void test_kernel_names(void)
{
	const char *name, *mangled;
	char *d;

	d = cupti_demangle("_Z6squarePfi");
	CHECK_STR(d, "square(float*, int)");
	cupti_kernel_names("_Z6squarePfi", d, &name, &mangled);
	CHECK_STR(name, "square(float*, int)");
	CHECK_STR(mangled, "_Z6squarePfi");
	free(d);

	/* extern "C" kernels are not mangled: one name, no mangled id */
	CHECK(cupti_demangle("saxpy") == NULL);
	cupti_kernel_names("saxpy", NULL, &name, &mangled);
	CHECK_STR(name, "saxpy");
	CHECK(mangled == NULL);

	/* an invalid mangled name stays as it is */
	CHECK(cupti_demangle("_Z%%%") == NULL);
	cupti_kernel_names("_Z%%%", NULL, &name, &mangled);
	CHECK_STR(name, "_Z%%%");
	CHECK_STR(mangled, "_Z%%%");

	cupti_kernel_names(NULL, NULL, &name, &mangled);
	CHECK_STR(name, "<unknown kernel>");
	CHECK(mangled == NULL);

	d = cupti_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
	CHECK(d != NULL);
	if (d)
		CHECK(!strncmp(d, "void at::native::vectorized_elementwise_kernel<4, ", 50));
	free(d);
}

static void test_info_pci(void)
{
	static const char text[] =
		"Model: \t\t NVIDIA H200\n"
		"IRQ:   \t\t 32\n"
		"GPU UUID: \t GPU-9f6b5bd2-0c3a-4e1f-8d2b-1a2b3c4d5e6f\n"
		"Video BIOS: \t 96.00.a5.00.01\n"
		"Bus Type: \t PCIe\n"
		"Bus Location: \t 0000:c6:00.0\n"
		"Device Minor: \t 0\n";
	uint8_t uuid[16] = { 0x9f, 0x6b, 0x5b, 0xd2, 0x0c, 0x3a, 0x4e, 0x1f,
			     0x8d, 0x2b, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f };
	uint32_t dom = 99, bus = 99, dev = 99;

	CHECK_EQ_I64(cupti_info_pci(text, uuid, &dom, &bus, &dev), 0);
	CHECK_EQ_U64(dom, 0);
	CHECK_EQ_U64(bus, 0xc6);
	CHECK_EQ_U64(dev, 0);
	uuid[3] ^= 1;   /* another GPU */
	CHECK_EQ_I64(cupti_info_pci(text, uuid, &dom, &bus, &dev), -1);
	CHECK_EQ_I64(cupti_info_pci("Model: x\n", uuid, &dom, &bus, &dev), -1);
}

/*
 * Without a driver (CI) libcupti loads but cannot start: the first call
 * that needs the driver fails, which cupti.c turns into its one-line
 * "CUDA tracing off" warning.  On a GPU machine this call succeeds.
 */
static uint64_t CUPTIAPI zero_clock(void)
{
	return 0;
}

static void test_load_without_driver(void)
{
	struct cupti_api api;
	char why[256];
	uint32_t version = 0;

	CHECK_EQ_I64(cupti_load(&api, why, sizeof(why)), 0);
	CHECK_CONTAINS(api.path, "libcupti.so.13");
	CHECK_EQ_I64(api.GetVersion(&version), 0);
	CHECK(version >= 130000 || version >= 13);
	CHECK_STR(cupti_result_name(&api, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
	if (access("/dev/nvidiactl", F_OK) != 0) {
		CUptiResult r = api.ActivityRegisterTimestampCallback(zero_clock);
		CHECK(r != CUPTI_SUCCESS);
	}
}

static const struct gstest tests[] = {
	GSTEST(test_kernel),
	GSTEST(test_kernel_incomplete),
	GSTEST(test_memcpy),
	GSTEST(test_memcpy_p2p),
	GSTEST(test_memset),
	GSTEST(test_sync),
	GSTEST(test_sync_from_api),
	GSTEST(test_memory),
	GSTEST(test_api),
	GSTEST(test_device),
	GSTEST(test_base_name),
	GSTEST(test_keep_list),
	GSTEST(test_keep_list_real_names),
	GSTEST(test_sync_type),
	GSTEST(test_nccl),
	GSTEST(test_kernel_names),
	GSTEST(test_info_pci),
	GSTEST(test_load_without_driver),
	{ 0 }
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
