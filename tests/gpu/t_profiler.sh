#!/usr/bin/env bash
# --capture-range=cudaProfilerApi with --capture-range-end=repeat: only the
# kernels between cudaProfilerStart and cudaProfilerStop (two windows).
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=("${PROFILER_KERNELS[@]}")
profile profiler --capture-range=cudaProfilerApi --capture-range-end=repeat -- "$GPU_BIN/gpu_profiler"
expect_middle_only
c=$(info_get 'j["counts"]["capture edges"]')
[ "$c" -ge 2 ] || fail "capture edges: $c"
finish
