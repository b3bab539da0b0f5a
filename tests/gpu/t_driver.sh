#!/usr/bin/env bash
# Driver-API launches (cuLaunchKernel, cuLaunchKernelEx) next to runtime ones.
. "$(dirname "$0")/lib.sh"
CHECK_ARGS=(--kernel rt_kernel --kernel drv_kernel --api cuLaunchKernel --api cuLaunchKernelEx
	--api cudaLaunchKernel)
profile driver -- "$GPU_BIN/gpu_driver"
expect "kernel[rt_kernel]" -eq 6
expect "kernel[drv_kernel]" -eq 8
expect "api[cuLaunchKernel]" -eq 5
expect "api[cuLaunchKernelEx]" -eq 3
expect kernels_matched -eq 14
# a runtime launch must not also appear as a driver call
expect api_corr_shared -eq 0
expect_launch_order
expect_no_drops
finish
