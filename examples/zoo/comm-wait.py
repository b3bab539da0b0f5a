"""comm-wait - ranks wait for each other in the gradient all-reduce (2 GPUs).

Two processes, one per GPU, do a data-parallel "backward pass": for each of 8
layers they accumulate a gradient (bf16 4096 x 4096 matrix products, one per
micro-batch of their shard) and then sum the gradients across ranks with an
NCCL all-reduce (8 buckets of 32 MB).

broken: the work is split unevenly (rank 0 gets 2 micro-batches per layer,
        rank 1 gets 4: a straggler), and all buckets are all-reduced only
        after the whole backward pass.  Rank 0 finishes early and waits inside
        the all-reduce for rank 1, and nobody computes while the buckets are
        being sent.
fixed:  the same 6 micro-batches per layer are split 3 / 3, and each layer's
        bucket is all-reduced asynchronously as soon as it is ready
        (async_op=True, as DistributedDataParallel does), so communication
        overlaps the next layers' compute.

Run as: python3 comm-wait.py broken|fixed [STEPS]  (starts its 2 processes,
one per GPU; the step line comes from rank 0).
Exits 77 when fewer than 2 GPUs are visible.
"""

import multiprocessing
import os
import socket
import subprocess
import sys
import time

from zoo_common import StepTimer, parse_args

CASE = "comm-wait"
WORLD = 2
LAYERS = 8
DIM = 4096
MICRO = {"broken": (2, 4), "fixed": (3, 3)}  # micro-batches per layer, per rank


def worker(rank, variant, warmup, steps, port):
    # torch is imported here, in the two ranks only: the launcher does not
    # need it, and importing it there would add seconds to every run.
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=WORLD,
                            device_id=torch.device("cuda", rank))
    torch.manual_seed(rank)
    x = torch.randn(DIM, DIM, device="cuda", dtype=torch.bfloat16) / DIM ** 0.5
    weights = [torch.randn(DIM, DIM, device="cuda", dtype=torch.bfloat16) / DIM ** 0.5
               for _ in range(LAYERS)]
    grads = [torch.zeros(DIM, DIM, device="cuda", dtype=torch.bfloat16)
             for _ in range(LAYERS)]
    micro = MICRO[variant][rank]

    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        pending = []
        for layer in range(LAYERS):
            grads[layer].zero_()
            for _ in range(micro):
                grads[layer].add_(x @ weights[layer])
            if variant == "fixed":
                # FIXED: send this bucket now; the next layers compute meanwhile.
                pending.append(dist.all_reduce(grads[layer], async_op=True))
        if variant == "broken":
            # BROKEN: everything is sent at the end, after the slowest rank.
            for g in grads:
                dist.all_reduce(g)
        for work in pending:
            work.wait()  # makes the current stream wait for the all-reduce
        timer.end(i)
    if rank == 0:
        timer.finish()
    else:
        torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def visible_gpus():
    """GPUs this process may use, from nvidia-smi and CUDA_VISIBLE_DEVICES."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        n = min(n, len([d for d in env.split(",") if d.strip()]))
    return n


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=30, default_warmup=5)
    ngpu = visible_gpus()
    if ngpu < WORLD:
        print(f"zoo: {CASE}: needs {WORLD} GPUs, found {ngpu}", file=sys.stderr)
        sys.exit(77)
    # No NVLink multicast (it can take shared GPUs out of service).
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    ctx = multiprocessing.get_context("spawn")
    port = free_port()
    ranks = [ctx.Process(target=worker, args=(r, variant, warmup, steps, port))
             for r in range(WORLD)]
    for p in ranks:
        p.start()
    # If one rank dies the other would wait in NCCL forever: stop it.
    while any(p.is_alive() for p in ranks):
        if any(p.exitcode not in (None, 0) for p in ranks):
            for p in ranks:
                if p.is_alive():
                    p.terminate()
        time.sleep(0.1)
    codes = [p.exitcode for p in ranks]
    if any(codes):
        sys.exit(f"zoo: {CASE}: a rank failed (exit codes {codes})")


if __name__ == "__main__":
    main()
