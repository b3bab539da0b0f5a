"""ddp_train - a two-rank DistributedDataParallel training loop, for the
multi-GPU cases of docs/distributed.md (the 2-GPU round, scripts/gpu2-round.sh).

Run under a launcher that sets RANK, LOCAL_RANK and WORLD_SIZE:

    torchrun --nproc_per_node 2 ddp_train.py broken|fixed|straggler [STEPS]

Variants (the model, the data and the work per step are the same in all):
  broken     DDP settings that expose the gradient all-reduce: 1 MB buckets
             (many small all-reduces, each with its launch and latency),
             gradient_as_bucket_view=False (a copy of every gradient into
             its bucket) and broadcast_buffers=True (the BatchNorm buffers
             broadcast before every forward);
  fixed      25 MB buckets, gradient_as_bucket_view=True,
             broadcast_buffers=False, static_graph=True;
  straggler  fixed's settings, but rank 1 does DDP_STRAGGLER_MS (default 30)
             of extra CPU work before each backward pass: the other rank
             waits for it in the all-reduce, which analyze must name as
             waiting and rank 1 as the straggler.

On a GPU each rank uses cuda:LOCAL_RANK and NCCL, bf16; without one (CI),
the CPU and gloo, so that the launcher path, the ranks and the merge are
tested without a GPU.  Rank 0 prints the zoo's result line
(examples/zoo/zoo_common.py):

    zoo: case=ddp variant=<variant> step_ms=<median ms> steps=<n>

STEPS (or ZOO_STEPS) steps are measured after ZOO_WARMUP (default 3).
Each step is an NVTX range "step" on a GPU.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
from zoo_common import _count as count, format_line, median  # noqa: E402

VARIANTS = ("broken", "fixed", "straggler")


def usage():
    print(f"usage: {sys.argv[0]} broken|fixed|straggler [STEPS] (under torchrun)", file=sys.stderr)
    sys.exit(2)


def spin(ms):
    """Busy CPU work for ms milliseconds (not a sleep: a real straggler computes)."""
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in VARIANTS:
        usage()
    variant = sys.argv[1]
    steps = count(sys.argv[2], "step count") if len(sys.argv) == 3 else \
        count(os.environ.get("ZOO_STEPS", "20"), "ZOO_STEPS")
    warmup = count(os.environ.get("ZOO_WARMUP", "3"), "ZOO_WARMUP")
    straggle_ms = float(os.environ.get("DDP_STRAGGLER_MS", "30"))
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        if var not in os.environ:
            sys.exit(f"ddp_train: {var} is not set: start it under torchrun (or another launcher)")
    rank, local, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])

    # torch is imported after the argument checks: a usage error costs no import
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    gpu = torch.cuda.is_available()
    if gpu:
        torch.cuda.set_device(local)
        dev, dtype, width, depth, batch = torch.device("cuda", local), torch.bfloat16, 4096, 12, 256
        dist.init_process_group("nccl")
    else:
        dev, dtype, width, depth, batch = torch.device("cpu"), torch.float32, 256, 8, 64
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers += [nn.BatchNorm1d(width)]  # buffers, which broadcast_buffers sends
    model = nn.Sequential(*layers).to(dev, dtype)
    if variant == "broken":
        ddp = DDP(model, device_ids=[local] if gpu else None, bucket_cap_mb=1,
                  gradient_as_bucket_view=False, broadcast_buffers=True)
    else:
        ddp = DDP(model, device_ids=[local] if gpu else None, bucket_cap_mb=25,
                  gradient_as_bucket_view=True, broadcast_buffers=False, static_graph=True)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator(device="cpu").manual_seed(1 + rank)
    x = torch.randn(batch, width, generator=gen).to(dev, dtype)
    y = torch.randn(batch, width, generator=gen).to(dev, dtype)

    total = warmup + steps
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(total)] if gpu else None
    walls = []
    for i in range(total):
        t0 = time.perf_counter()
        if gpu:
            torch.cuda.nvtx.range_push("step")
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(ddp(x), y)
        if variant == "straggler" and rank == 1:
            spin(straggle_ms)
        loss.backward()
        opt.step()
        if gpu:
            ends[i].record()
            torch.cuda.nvtx.range_pop()
        walls.append((time.perf_counter() - t0) * 1e3)
    if gpu:
        torch.cuda.synchronize()
        ms = [ends[i - 1].elapsed_time(ends[i]) for i in range(warmup + 1, total)] or [0.0]
    else:
        ms = walls[warmup:]
    if rank == 0:
        print(format_line("ddp", variant, median(ms), steps), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
