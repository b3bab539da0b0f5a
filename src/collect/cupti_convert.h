/*
 * cupti_convert.h - CUPTI activity records to report records, as pure
 * functions (no CUPTI calls, no collector state), so CI can test them with
 * records built from the CUDA 13 header structs.
 *
 * Conventions shared by every conversion:
 *  - times are copied as they are: CUPTI already stamps them with the
 *    collector's clock (cuptiActivityRegisterTimestampCallback -> cl_now);
 *  - a record with a zero start or end, or end < start, is incomplete (a
 *    forced flush cut it off, or the device buffer ran out): the
 *    conversion returns -1 and the caller counts it as a CUPTI drop;
 *  - device, context and stream are CUPTI's ids; a device that is not
 *    known is CUPTI_DEVICE_UNKNOWN.
 */
#ifndef GS_CUPTI_CONVERT_H
#define GS_CUPTI_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "../trace/trace.h"

#define CUPTI_DEVICE_UNKNOWN UINT32_MAX

/* Kernels.  Names (name_id, mangled_id) and the NCCL flag are the caller's. */
int cupti_conv_kernel(const CUpti_ActivityKernel10 *k, uint32_t pid, struct trace_kernel *out);
int cupti_conv_memcpy(const CUpti_ActivityMemcpy6 *c, uint32_t pid, struct trace_memcpy *out);
/* Peer-to-peer copies (MEMCPY2): kind PTOP, dst_device set. */
int cupti_conv_memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *c, uint32_t pid,
			  struct trace_memcpy *out);
int cupti_conv_memset(const CUpti_ActivityMemset4 *s, uint32_t pid, struct trace_memset *out);
/* @device: the device of s->contextId (sync records do not carry one). */
int cupti_conv_sync(const CUpti_ActivitySynchronization2 *s, uint32_t pid, uint32_t device,
		    struct trace_sync *out);
/* Allocations and frees (MEMORY2); -1 for other operations (pool events). */
int cupti_conv_memory(const CUpti_ActivityMemory4 *m, uint32_t pid, struct trace_memory *out);
/* Runtime (@domain TRACE_API_RUNTIME) or driver API call; @name_id from the caller. */
int cupti_conv_api(const CUpti_ActivityAPI *a, unsigned domain, uint32_t name_id,
		   struct trace_api *out);
/* A device; PCI fields are the caller's (cupti_info_pci). */
void cupti_conv_device(const CUpti_ActivityDevice5 *d, uint32_t pid, uint32_t name_id,
		       struct trace_device *out);

/*
 * cupti_api_base_name - the function name to show for a CUPTI callback
 * name: the version suffix is dropped ("cudaLaunchKernel_v7000" ->
 * "cudaLaunchKernel", "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync_ptsz").
 * Writes at most @n bytes (NUL included) to @buf; returns the length.
 */
size_t cupti_api_base_name(const char *cupti_name, char *buf, size_t n);

/*
 * cupti_api_keep - whether a runtime or driver API (base or CUPTI name) is
 * recorded by default: launches, copies, sets, synchronisations and polls,
 * event record, stream create/destroy/wait, allocation and free variants,
 * graph instantiate/upload/launch, stream capture begin/end, module and
 * library loads, context creation, profiler start/stop, device reset.
 * Everything else (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing,
 * attribute queries, graph node building ...) is skipped unless
 * --cuda-trace-all-apis.  1 keep, 0 skip.
 */
int cupti_api_keep(const char *name);

/*
 * cupti_sync_type - the synchronisation an API (base or CUPTI name) is, as
 * an enum trace_sync_type: SYNC_CONTEXT (cudaDeviceSynchronize,
 * cudaThreadSynchronize, cuCtxSynchronize), SYNC_STREAM (cudaStreamSynchronize,
 * cuStreamSynchronize), SYNC_EVENT (cudaEventSynchronize, cuEventSynchronize),
 * SYNC_STREAM_WAIT_EVENT (cudaStreamWaitEvent, cuStreamWaitEvent), per-thread
 * stream variants (_ptsz) included; 0 for every other API.  *per_thread is
 * set to 1 for a per-thread default stream variant.
 */
int cupti_sync_type(const char *name, int *per_thread);

/*
 * cupti_sync_from_api - the synchronisation record of the synchronising API
 * call @a, of @type (enum trace_sync_type): its times, process and
 * correlation id; device, stream and event unknown (CUPTI_DEVICE_UNKNOWN,
 * 0xffffffff, as CUPTI's own records for "not applicable") and context 0,
 * for the caller to fill in what it knows.
 */
void cupti_sync_from_api(const struct trace_api *a, unsigned type, struct trace_sync *out);

/*
 * cupti_is_nccl_kernel - whether a kernel name (mangled or demangled) is an
 * NCCL communication kernel: its function identifier starts with
 * "ncclKernel" or "ncclDevKernel" (NCCL's generated kernel names, e.g.
 * ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_SendRecv_...).
 */
int cupti_is_nccl_kernel(const char *name);

/*
 * The names recorded for a kernel.  @raw is CUPTI's name (mangled for C++
 * kernels, plain for extern "C" ones); @demangled what the demangler made
 * of it (NULL when it failed or was not tried).  Sets *name (shown) and
 * *mangled (NULL when the name was not mangled):
 *   "_Z..." demangled   -> name = demangled, mangled = raw
 *   "_Z..." not         -> name = raw,       mangled = raw
 *   plain               -> name = raw,       mangled = NULL
 *   NULL or ""          -> name = "<unknown kernel>", mangled = NULL
 */
void cupti_kernel_names(const char *raw, const char *demangled, const char **name,
			const char **mangled);

/*
 * cupti_demangle - demangle a C++ symbol with the C++ runtime's
 * __cxa_demangle (libstdc++.so.6, opened when the process has not loaded
 * it).  Returns a malloc'ed string, or NULL (not mangled, no demangler,
 * invalid name).  Thread-safe.
 */
char *cupti_demangle(const char *mangled);

/*
 * cupti_info_pci - parse the text of /proc/driver/nvidia/gpus/<bus>/information:
 * when its "GPU UUID" is @uuid, set the PCI domain, bus and device from
 * "Bus Location" and return 0; otherwise -1.
 */
int cupti_info_pci(const char *text, const uint8_t uuid[16], uint32_t *domain, uint32_t *bus,
		   uint32_t *device);

#endif
