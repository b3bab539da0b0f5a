#!/usr/bin/env bash
# --capture-range=cudaProfilerApi with --capture-range-end=repeat: only the
# kernels between cudaProfilerStart and cudaProfilerStop (two windows).
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel before_kernel --kernel inside_kernel --kernel between_kernel --kernel after_kernel)
profile profiler --capture-range=cudaProfilerApi --capture-range-end=repeat -- "$GPU_BIN/gpu_profiler"
expect "kernel[inside_kernel]" -eq 20
expect "kernel[before_kernel]" -eq 0
expect "kernel[between_kernel]" -eq 0
expect "kernel[after_kernel]" -eq 0
expect_launch_order
c=$(info_get 'j["counts"]["capture edges"]')
[ "$c" -ge 2 ] || fail "capture edges: $c"
finish
