#!/usr/bin/env bash
# --delay 1.5 --duration 2: gpu_profiler timed launches its before_kernels
# at start-up (CUDA's initialisation, well under 1.5 s here), pauses 2 s,
# launches the inside_kernels, pauses 2 s more; only the middle part falls
# in the window [1.5 s, 3.5 s].
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel before_kernel --kernel inside_kernel --kernel between_kernel --kernel after_kernel)
profile delay --delay 1.5 --duration 2 -- "$GPU_BIN/gpu_profiler" timed
expect "kernel[inside_kernel]" -eq 20
expect "kernel[before_kernel]" -eq 0
expect "kernel[after_kernel]" -eq 0
expect_launch_order
finish
