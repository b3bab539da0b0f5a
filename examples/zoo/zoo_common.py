"""What every PyTorch case of the bottleneck zoo shares.

Usage of a case:   python3 <case>.py broken|fixed [STEPS]
STEPS (or the ZOO_STEPS environment variable) is how many steps are measured;
ZOO_WARMUP steps (default 3, some cases more) run first and are not timed.

Each program prints one line (the same format as the CUDA C cases, zoo_line.h):

    zoo: case=<id> variant=<broken|fixed> step_ms=<ms, 4 decimals> steps=<n>

A step's time is the GPU-side interval between CUDA events recorded at the ends
of two consecutive steps: the loop's throughput whether the host waits for the
GPU or runs ahead of it.  Each step is an NVTX range named "step".
"""

import os
import sys

LINE_FORMAT = "zoo: case={case} variant={variant} step_ms={ms:.4f} steps={steps}"


def format_line(case, variant, step_ms, steps):
    """The result line, exactly as zoo_line.h's zoo_format_line writes it."""
    return LINE_FORMAT.format(case=case, variant=variant, ms=step_ms, steps=steps)


def median(values):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return 0.0
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def _count(text, what):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1 or v > 1000000:
        sys.exit(f"zoo: bad {what} '{text}'")
    return v


def parse_args(case, default_steps, default_warmup=3, argv=None):
    """Return (variant, warmup, steps) from 'broken|fixed [STEPS]' and the
    ZOO_STEPS / ZOO_WARMUP environment variables; exit 2 on bad usage."""
    argv = sys.argv if argv is None else argv
    if len(argv) not in (2, 3) or argv[1] not in ("broken", "fixed"):
        print(f"usage: {argv[0]} broken|fixed [STEPS]", file=sys.stderr)
        sys.exit(2)
    steps, warmup = default_steps, default_warmup
    if os.environ.get("ZOO_STEPS"):
        steps = _count(os.environ["ZOO_STEPS"], "ZOO_STEPS")
    if os.environ.get("ZOO_WARMUP"):
        warmup = _count(os.environ["ZOO_WARMUP"], "ZOO_WARMUP")
    if len(argv) == 3:
        steps = _count(argv[2], "step count")
    return argv[1], warmup, steps


class StepTimer:
    """NVTX 'step' ranges and end-of-step CUDA events for warmup + steps."""

    def __init__(self, case, variant, warmup, steps):
        import torch

        self.torch = torch
        self.case, self.variant = case, variant
        self.warmup, self.steps = warmup, steps
        self.total = warmup + steps
        self.ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.total)]

    def begin(self, i):
        self.torch.cuda.nvtx.range_push("step")

    def end(self, i):
        """Mark step i's end on the current stream (all of the step's work
        must be ordered before it there) and close its NVTX range."""
        self.ends[i].record()
        self.torch.cuda.nvtx.range_pop()

    def finish(self):
        self.torch.cuda.synchronize()
        ms = [self.ends[i - 1].elapsed_time(self.ends[i])
              for i in range(self.warmup, self.total)]
        print(format_line(self.case, self.variant, median(ms), len(ms)), flush=True)


def require_gpu(case):
    import torch

    if not torch.cuda.is_available():
        print(f"zoo: {case}: no CUDA device", file=sys.stderr)
        sys.exit(1)
