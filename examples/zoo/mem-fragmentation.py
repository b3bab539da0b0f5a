"""mem-fragmentation - long-lived and short-lived allocations in one segment.

Each step adds a 17 MiB entry to a cache that lives for the whole run (as a
serving loop's per-request KV cache or a growing buffer pool does) and runs
a kernel over a 32 MiB activation that lives for the step only.  The
caching allocator carves the new entry out of the previous step's freed
activation (its best fit), which leaves a 15 MiB piece of that 32 MiB
segment free: too small for the next entry or activation, so every step
asks cudaMalloc for a new segment and about 47% of reserved memory lies
free in split blocks (measured on an H200: 3.4 GB allocated, 6.4 GB
reserved, 3.0 GB inactive split after 200 steps).  The GPU then spins for
about 50 ms, the step's compute.

broken: the default allocator configuration.
fixed:  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set before CUDA
        starts: one segment per stream that grows in place by mapping more
        pages, so the freed pieces merge with the space mapped next instead
        of staying holes between live entries (measured: reserved 3.44 GB for
        3.40 GB allocated).  The same allocations, the same kernels.
"""

import os

from zoo_common import StepTimer, parse_args

CASE = "mem-fragmentation"
ENTRY_MIB = 17
ACT_MIB = 32
MiB = 1 << 20
SPIN_CYCLES = 100_000_000   # about 50 ms at the H200's 1.98 GHz


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=60, default_warmup=5)
    if variant == "fixed":
        # FIXED: expandable segments (read when CUDA starts, so before any allocation)
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ",".join(x for x in (conf, "expandable_segments:True") if x)
    import torch

    from zoo_common import require_gpu
    require_gpu(CASE)
    cache = []
    total = torch.zeros((), device="cuda")
    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        # BROKEN: with the default configuration each entry splits the freed activation's segment
        cache.append(torch.zeros(ENTRY_MIB * MiB // 4, device="cuda"))
        act = torch.empty(ACT_MIB * MiB // 4, device="cuda").fill_(1.0)
        total += act.sum()
        del act
        # the step's compute: the GPU spins for about 50 ms (the host runs ahead), so that
        # even a short profiled run lasts long enough for the hook's samples every 100 ms
        torch.cuda._sleep(SPIN_CYCLES)
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
