#!/usr/bin/env bash
# --capture-range=nvtx:capture with --capture-range-end=repeat: the GPU
# records kept are those that ran inside the two NVTX ranges, judged by the
# kernels' own start times, whenever CUPTI hands them over.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=("${PROFILER_KERNELS[@]}")
profile nvtx_capture --capture-range=nvtx:capture --capture-range-end=repeat -- "$GPU_BIN/gpu_profiler" nvtx
expect_middle_only
c=$(info_get 'j["counts"]["capture edges"]')
[ "$c" -ge 2 ] || fail "capture edges: $c"
finish
