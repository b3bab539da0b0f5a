"""Launch-bound PyTorch step: 20 x (256x256 matmul + GELU).

usage: torch_step.py [--torch-profiler JSON] [--steps N]
Prints "us_per_step X kernels_per_step 40"; with --torch-profiler the steps
run inside torch.profiler (CPU+CUDA) and the trace is written to JSON ("-": not written).
"""
import argparse
import contextlib
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--torch-profiler", metavar="JSON")
ap.add_argument("--steps", type=int, default=300)
args = ap.parse_args()

x = torch.randn(256, 256, device="cuda")
w = torch.randn(256, 256, device="cuda")


def step():
    y = x
    for _ in range(20):
        y = torch.nn.functional.gelu(y @ w)
    return y


for _ in range(30):
    step()
torch.cuda.synchronize()

prof = contextlib.nullcontext()
if args.torch_profiler:
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
with prof as p:
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
if args.torch_profiler and args.torch_profiler != "-":
    p.export_chrome_trace(args.torch_profiler)
print("us_per_step %.1f" % ((t1 - t0) / args.steps * 1e6))
