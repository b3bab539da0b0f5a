"""mem-leak - a training loop that keeps a tensor with its graph every step.

Each step trains a 6-layer MLP (width 4096, batch 4096, bf16) and computes
a monitoring loss on a held-out batch, appended to a list for a report at
the end of the epoch.

broken: the monitoring loss is computed with autograd on and kept as is: the
        tensor holds its graph, and the graph holds every activation of the
        held-out forward pass (about 0.5 GiB a step), so allocated memory at
        the end of each step grows step after step until the GPU is full.
fixed:  the same loss, kept detached (loss.detach()): the graph and its
        activations are freed when the step ends; the list holds 2-byte
        tensors.  The same math, the same kernels.
"""

import torch

from zoo_common import StepTimer, parse_args, require_gpu

CASE = "mem-leak"
LAYERS = 6
WIDTH = 4096
BATCH = 4096


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=40, default_warmup=5)
    require_gpu(CASE)
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(device="cuda", dtype=torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    held_out = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    monitor = []

    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        val = model(held_out).float().square().mean()
        if variant == "broken":
            monitor.append(val)  # BROKEN: keeps the graph and its activations
        else:
            monitor.append(val.detach())  # FIXED: the value only
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
