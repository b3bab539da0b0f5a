#!/usr/bin/env bash
# GPUSCOPE_CUPTI_API_MODE=activity: API calls from CUPTI's per-function API
# activity records instead of callbacks, and the synchronisation records
# made from them (the SYNCHRONIZATION kind stays off): every kernel matched
# to its launch, the four kinds of sync, no trivial calls, nothing dropped.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel empty_kernel --api cudaLaunchKernel --api __cudaLaunchKernel
	--api cudaStreamSynchronize --api cudaDeviceSynchronize --api cudaGetDevice)
GPUSCOPE_CUPTI_API_MODE=activity profile api_activity -- "$GPU_BIN/gpu_basic"
expect kernels -eq 13
expect kernels_matched -eq 13
expect "kernel[empty_kernel]" -eq 10
expect_launch_order
l=$(( $(fact "api[cudaLaunchKernel]") + $(fact "api[__cudaLaunchKernel]") ))
[ "$l" = 13 ] || fail "launch API calls: $l, expected 13"
expect "api[cudaStreamSynchronize]" -eq 1
expect "api[cudaDeviceSynchronize]" -eq 1
expect "api[cudaGetDevice]" -eq 0
# one record per synchronising call of gpu_basic, none twice for the driver
# call the runtime makes inside it
expect sync_1 -eq 1     # event synchronize
expect sync_2 -eq 1     # stream wait event
expect sync_3 -eq 1     # stream synchronize
expect sync_4 -eq 1     # context synchronize
expect_no_drops
finish
