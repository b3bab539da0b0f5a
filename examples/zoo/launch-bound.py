"""launch-bound - a chain of tiny elementwise kernels, launched one by one.

Each step applies 12 layers of the tanh-approximated GELU, written out as
elementwise tensor operations, to a 64 x 1024 activation.

broken: eager PyTorch: every operation is a separate kernel launch that goes
        through Python, the dispatcher and the CUDA driver (several
        microseconds each), while each kernel runs for only a couple of
        microseconds: the GPU mostly waits for the next launch.
fixed:  the same chain is captured once into a CUDA graph and each step
        replays the graph: one launch for the ~100 kernels, so the GPU runs
        them back to back.  The math and the kernels are the same.
"""

import torch

from zoo_common import StepTimer, parse_args, require_gpu

CASE = "launch-bound"
LAYERS = 12
SHAPE = (64, 1024)


def gelu_chain(x):
    # GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one op at a time
    for _ in range(LAYERS):
        x = 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    return x


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=300, default_warmup=5)
    require_gpu(CASE)
    torch.manual_seed(0)
    inputs = [torch.randn(SHAPE, device="cuda") for _ in range(4)]
    static_x = torch.zeros(SHAPE, device="cuda")  # the step's input buffer
    total = torch.zeros((), device="cuda")

    if variant == "fixed":
        # FIXED: record the chain once into a CUDA graph (after a warm-up on
        # a side stream, as torch.cuda.graphs requires), then replay it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                gelu_chain(static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = gelu_chain(static_x)

    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        static_x.copy_(inputs[i % len(inputs)])
        if variant == "broken":
            y = gelu_chain(static_x)  # BROKEN: ~100 separate launches
        else:
            graph.replay()  # FIXED: one launch replays them all
            y = static_y
        total += y[0, 0]
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
