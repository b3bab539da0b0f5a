#!/usr/bin/env bash
# GPUSCOPE_CUPTI_API_MODE=activity and =hybrid: API calls from CUPTI's
# per-function API activity records instead of callbacks, and the
# synchronisation records made from them (activity) or from callbacks on the
# synchronising calls alone (hybrid); the SYNCHRONIZATION kind stays off.
# Every kernel matched to its launch, one sync record per synchronising
# call, no trivial calls, nothing dropped; in hybrid mode the stream
# synchronisation names the stream the program's copies ran on.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel empty_kernel --api cudaLaunchKernel --api __cudaLaunchKernel
	--api cudaStreamSynchronize --api cudaDeviceSynchronize --api cudaGetDevice)
for mode in activity hybrid; do
	echo "== GPUSCOPE_CUPTI_API_MODE=$mode"
	GPUSCOPE_CUPTI_API_MODE=$mode profile "api_$mode" -- "$GPU_BIN/gpu_basic"
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
	if [ "$mode" = hybrid ]; then
		work=$("$GPUSCOPE" dump --type kernel,memcpy "$REPORT" | grep -o ' stream=[0-9]*' | sort -u)
		s=$("$GPUSCOPE" dump --type sync "$REPORT" | grep 'type=stream_sync' | grep -o ' stream=[0-9]*' | head -1)
		[ -n "$s" ] && grep -qx -- "$s" <<<"$work" || fail "hybrid: stream sync names stream '$s', not one the work ran on"
	fi
done
finish
