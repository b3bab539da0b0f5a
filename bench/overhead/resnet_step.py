"""ResNet-50 training step (torchvision), batch 64, synthetic data, bf16
autocast, cudnn.benchmark off.

usage: resnet_step.py [--torch-profiler JSON|-] [--steps N]
                      [--lockstep PREFIX [--per N] [--warm W] [--pin-cpu C]]
Prints "ms_per_step X".  With --torch-profiler the timed steps run inside
torch.profiler (CPU+CUDA); "-" skips writing the trace.  With --lockstep it
answers lockstep.py's turns after its warm-up, as torch_step.py does: W
untimed steps (default 1), then a timed block of N steps (default 2).
"""
import argparse
import contextlib
import time

import torch
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--torch-profiler", metavar="JSON")
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--lockstep", metavar="PREFIX")
ap.add_argument("--per", type=int, default=2)
ap.add_argument("--warm", type=int, default=1)
ap.add_argument("--pin-cpu", type=int, default=-1)
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

if args.lockstep:
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import turns
    sys.exit(turns.serve(args.lockstep, step, torch.cuda.synchronize, args.warm, args.per, args.pin_cpu))

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
