#!/usr/bin/env bash
# Kernels, copies, sets, syncs, memory and API calls of gpu_basic (static cudart).
. "$(dirname "$0")/lib.sh"
prog=${PROG:-gpu_basic}
CHECK_ARGS=(--kernel c_kernel --kernel "void tmpl_kernel" --kernel "grid3d_kernel"
	--kernel "empty_kernel" --api cudaLaunchKernel --api __cudaLaunchKernel
	--api cudaMemcpy --api cudaMemcpyAsync --api cudaMemset --api cudaMemsetAsync
	--api cudaMalloc --api cudaFree --api cudaMallocHost --api cudaHostAlloc --api cudaFreeHost
	--api cudaEventRecord --api cudaEventSynchronize --api cudaEventQuery
	--api cudaStreamWaitEvent --api cudaStreamSynchronize --api cudaDeviceSynchronize
	--api cudaStreamCreate --api cudaStreamCreateWithFlags
	--api cudaGetDevice --api cudaGetLastError --api cudaPeekAtLastError)
profile "$prog" --trace=cuda,nvtx,osrt -- "$GPU_BIN/$prog"
grep -q "gpu_basic: ok" "$WORK/$prog.out" || fail "program output"
expect kernels -eq 13
expect "kernel[c_kernel]" -eq 1
expect "kernel[void tmpl_kernel]" -eq 1
expect "kernel[grid3d_kernel]" -eq 1
expect "kernel[empty_kernel]" -eq 10
expect kernels_matched -eq 13
expect_launch_order
l=$(( $(fact "api[cudaLaunchKernel]") + $(fact "api[__cudaLaunchKernel]") ))
[ "$l" = 13 ] || fail "launch API calls: $l, expected 13"
expect memcpys -eq 5
expect copy_HtoD -eq 2
expect copy_DtoH -eq 2
expect copy_DtoD -eq 1
expect copy_pageable -eq 2
expect copy_pinned -eq 2
expect copy_async -eq 2
expect memsets -eq 2
expect "api[cudaMemcpy]" -eq 3
expect "api[cudaMemcpyAsync]" -eq 2
expect "api[cudaMemset]" -eq 1
expect "api[cudaMemsetAsync]" -eq 1
expect "api[cudaMalloc]" -eq 3
expect "api[cudaFree]" -eq 3
# CUPTI reports cudaMallocHost as cudaHostAlloc (measured on the H200)
h=$(( $(fact "api[cudaMallocHost]") + $(fact "api[cudaHostAlloc]") ))
[ "$h" = 1 ] || fail "cudaMallocHost/cudaHostAlloc calls: $h, expected 1"
expect "api[cudaFreeHost]" -eq 1
expect "api[cudaEventRecord]" -eq 1
expect "api[cudaEventSynchronize]" -eq 1
expect "api[cudaEventQuery]" -eq 1
expect "api[cudaStreamWaitEvent]" -eq 1
expect "api[cudaStreamSynchronize]" -eq 1
expect "api[cudaDeviceSynchronize]" -eq 1
expect "api[cudaStreamCreate]" -eq 1
expect "api[cudaStreamCreateWithFlags]" -eq 1
# trivial calls are not recorded by default
expect "api[cudaGetDevice]" -eq 0
expect "api[cudaGetLastError]" -eq 0
expect "api[cudaPeekAtLastError]" -eq 0
expect sync_1 -ge 1     # event synchronize
expect sync_2 -ge 1     # stream wait event
expect sync_3 -ge 1     # stream synchronize
expect sync_4 -ge 1     # context synchronize
expect memory -ge 8
expect devices -ge 1
"$GPUSCOPE" dump --type memory "$REPORT" >"$WORK/$prog.memory"
[ "$(grep -c 'op=alloc.*mem=device' "$WORK/$prog.memory")" -ge 3 ] || fail "device allocations"
[ "$(grep -c 'op=free.*mem=device' "$WORK/$prog.memory")" -ge 3 ] || fail "device frees"
grep -q 'op=alloc.*mem=pinned' "$WORK/$prog.memory" || fail "pinned allocation"
"$GPUSCOPE" dump --type kernel "$REPORT" >"$WORK/$prog.kernels"
grep -q 'grid=4,4,2 block=8,8,1.*name="grid3d_kernel(int\*)"' "$WORK/$prog.kernels" || fail "grid3d kernel geometry"
grep -q 'grid=4096,1,1 block=256,1,1 .*name="c_kernel"' "$WORK/$prog.kernels" || fail "c_kernel geometry"
grep -q 'smem=256+512 .*name="void tmpl_kernel<float, 64>(float\*, int)"' "$WORK/$prog.kernels" ||
	fail "template kernel shared memory or name"
"$GPUSCOPE" dump --type device "$REPORT" | grep -q 'name="NVIDIA' || fail "device name"
"$GPUSCOPE" info "$REPORT" | grep -q 'SMs, cc' || fail "device in info"
expect_no_drops
expect_no_cuda_warning
keep "$prog"
finish
