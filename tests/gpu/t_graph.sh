#!/usr/bin/env bash
# A captured CUDA graph of 3 kernels + 1 memset, launched 5 times.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel graph_step --api cudaGraphLaunch --api cudaGraphInstantiate
	--api cudaStreamBeginCapture --api cudaStreamEndCapture)
profile graph -- "$GPU_BIN/gpu_graph"
expect "kernel[graph_step]" -eq 15
expect graph_kernels -eq 15
expect "api[cudaGraphLaunch]" -eq 5
expect "api[cudaGraphInstantiate]" -eq 1
expect "api[cudaStreamBeginCapture]" -eq 1
expect "api[cudaStreamEndCapture]" -eq 1
expect memsets -eq 5
expect kernels_matched -eq 15
expect_launch_order
"$GPUSCOPE" dump --type kernel "$REPORT" | grep -q ' graph=' || fail "graph id in dump"
expect_no_drops
keep graph
finish
