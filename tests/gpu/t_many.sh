#!/usr/bin/env bash
# 50,000 launches: every kernel and launch recorded, nothing dropped.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel empty_kernel)
profile many -- "$GPU_BIN/gpu_many" 50000
expect "kernel[empty_kernel]" -eq 50000
expect kernels_matched -eq 50000
expect_launch_order
expect_no_drops
finish
