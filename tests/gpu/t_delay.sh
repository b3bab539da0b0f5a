#!/usr/bin/env bash
# --delay 2.5 --duration 3: gpu_profiler timed launches its before_kernels
# at start-up (CUDA start-up took under 1.5 s on the H200 VM), pauses 3 s, launches
# the inside_kernels, pauses 3 s more; only the middle part falls in the
# window [2.5 s, 5.5 s] as long as start-up takes less than 2.5 s.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=("${PROFILER_KERNELS[@]}")
profile delay --delay 2.5 --duration 3 -- "$GPU_BIN/gpu_profiler" timed
expect_middle_only
finish
