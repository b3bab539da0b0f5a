"""mem-oom - a batch whose activations do not fit in the GPU's memory.

Each step trains a 12-block MLP (width 1024, bf16) on 2M tokens at once: a
block's activations are about 4 GiB each, and autograd keeps three of them
per block for the backward pass, about 150 GiB in all: more than an H200
holds (141 GB).

broken: the plain model: the first step runs out of memory
        (torch.cuda.OutOfMemoryError); the loop catches it, frees the cache
        and trains on from then on with two micro-batches of half the tokens
        and gradient accumulation, so the program still ends with its
        result line (the OOM is what gpuscope must see and diagnose).
fixed:  activation checkpointing (torch.utils.checkpoint) on every block:
        only the blocks' inputs are kept and each block's activations are
        recomputed in the backward pass, about 50 GiB: the whole batch fits
        and no OOM happens.
"""

import torch
import torch.utils.checkpoint

from zoo_common import StepTimer, parse_args, require_gpu

CASE = "mem-oom"
BLOCKS = 12
WIDTH = 1024
TOKENS = 2 * 1024 * 1024


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(WIDTH, WIDTH)
        self.down = torch.nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


def forward(blocks, x, checkpoint):
    for b in blocks:
        if checkpoint:
            x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False)
        else:
            x = b(x)
    return x


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=5, default_warmup=2)
    require_gpu(CASE)
    torch.manual_seed(0)
    blocks = torch.nn.ModuleList(Block() for _ in range(BLOCKS)).to(device="cuda", dtype=torch.bfloat16)
    opt = torch.optim.SGD(blocks.parameters(), lr=1e-4)
    x = torch.randn(TOKENS, WIDTH, device="cuda", dtype=torch.bfloat16)
    micro = 1

    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        opt.zero_grad(set_to_none=True)
        while True:
            try:
                for part in x.chunk(micro):
                    # BROKEN: every activation kept; FIXED: checkpointed blocks
                    out = forward(blocks, part, checkpoint=(variant == "fixed"))
                    (out.float().square().mean() / micro).backward()
                    del out
                break
            except torch.cuda.OutOfMemoryError:
                # the broken variant's first step: smaller micro-batches from now on
                out = None
                opt.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                micro *= 2
                if micro > 64:
                    raise
        opt.step()
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
