#!/usr/bin/env bash
# --delay 1.5 --duration 2: gpu_profiler timed launches its before_kernels
# at start-up (CUDA's initialisation, well under 1.5 s here), pauses 2 s,
# launches the inside_kernels, pauses 2 s more; only the middle part falls
# in the window [1.5 s, 3.5 s].
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=("${PROFILER_KERNELS[@]}")
profile delay --delay 1.5 --duration 2 -- "$GPU_BIN/gpu_profiler" timed
expect_middle_only
finish
