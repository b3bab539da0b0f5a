#!/usr/bin/env bash
# --cuda-trace-all-apis records the trivial calls too.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--api cudaGetDevice --api cudaGetLastError --api cudaPeekAtLastError --kernel empty_kernel)
profile all_apis --cuda-trace-all-apis -- "$GPU_BIN/gpu_basic"
expect "api[cudaGetDevice]" -ge 50
expect "api[cudaGetLastError]" -ge 50
expect "api[cudaPeekAtLastError]" -eq 50
expect "kernel[empty_kernel]" -eq 10
expect_launch_order
expect_no_drops
finish
