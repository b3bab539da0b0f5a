"""ResNet-50 training step (torchvision), batch 64, synthetic data, bf16
autocast, cudnn.benchmark off.

usage: resnet_step.py [--torch-profiler JSON|-] [--steps N]
Prints "ms_per_step X".  With --torch-profiler the timed steps run inside
torch.profiler (CPU+CUDA); "-" skips writing the trace.
"""
import argparse
import contextlib
import time

import torch
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--torch-profiler", metavar="JSON")
ap.add_argument("--steps", type=int, default=20)
args = ap.parse_args()

torch.backends.cudnn.benchmark = False
model = torchvision.models.resnet50().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
data = torch.randn(64, 3, 224, 224, device="cuda")
target = torch.randint(0, 1000, (64,), device="cuda")
loss_fn = torch.nn.CrossEntropyLoss()


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(data), target)
    loss.backward()
    opt.step()


for _ in range(8):
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
print("ms_per_step %.2f" % ((t1 - t0) / args.steps * 1e3))
