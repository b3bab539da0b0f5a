"""host-bound - Python work between the kernels of an eager inference step.

Each step runs a small 16-layer MLP on a batch of 8 (256 -> 256 matmul,
bias, GELU per layer).  Between the layers the host does what eager serving
code does: per-layer Python bookkeeping (a routing table rebuilt, a few
hundred dictionary and arithmetic operations, about 0.1-0.2 ms on one core).
The kernels take a few microseconds each, so the GPU mostly waits for the
host's next launch: host-bound, not launch-bound (the launches themselves
are a small part of the host's time).

broken: eager PyTorch, the bookkeeping between every layer on the launching
        thread.
fixed:  the same step captured once into a CUDA graph (torch.cuda.graph) and
        replayed: the bookkeeping ran during capture, each replay is one
        launch for all the kernels.  Same math, same kernels.
"""

import torch

from zoo_common import StepTimer, parse_args, require_gpu

CASE = "host-bound"
LAYERS = 16
WIDTH = 256
BATCH = 8


def bookkeeping(layer):
    # Host work of the kind serving and framework code does between ops.
    table = {f"expert{j}": (layer * 31 + j * 17) % 97 for j in range(200)}
    score = 0
    for k, v in table.items():
        score += v * len(k)
    return score % 7


def forward(x, weights, biases):
    for i in range(LAYERS):
        bookkeeping(i)
        x = torch.nn.functional.gelu(x @ weights[i] + biases[i])
    return x


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=200, default_warmup=5)
    require_gpu(CASE)
    torch.manual_seed(0)
    weights = [torch.randn(WIDTH, WIDTH, device="cuda") * 0.05 for _ in range(LAYERS)]
    biases = [torch.randn(WIDTH, device="cuda") * 0.05 for _ in range(LAYERS)]
    inputs = [torch.randn(BATCH, WIDTH, device="cuda") for _ in range(4)]
    static_x = torch.zeros(BATCH, WIDTH, device="cuda")
    total = torch.zeros((), device="cuda")

    if variant == "fixed":
        # FIXED: capture the step once (after a warm-up on a side stream), replay it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                forward(static_x, weights, biases)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = forward(static_x, weights, biases)

    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        static_x.copy_(inputs[i % len(inputs)])
        if variant == "broken":
            y = forward(static_x, weights, biases)  # BROKEN: Python between every layer's kernels
        else:
            graph.replay()  # FIXED: one launch, no host work between the kernels
            y = static_y
        total += y[0, 0]
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
