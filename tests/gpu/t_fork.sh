#!/usr/bin/env bash
# A traced process forks after CUDA is up: children (exit and _exit) do not
# hang, their CPU side is recorded, the parent's kernels are all there.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel parent_kernel)
start=$(date +%s)
profile fork -- "$GPU_BIN/gpu_fork"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "took over a minute"
grep -q "gpu_fork: ok" "$WORK/fork.out" || fail "program output"
expect "kernel[parent_kernel]" -eq 8
expect_launch_order
n=$(info_get 'len(j["processes"])')
[ "$n" -eq 3 ] || fail "processes: $n, expected 3"
finish
