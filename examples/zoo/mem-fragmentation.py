"""mem-fragmentation - long-lived and short-lived allocations in one segment.

Each step replaces the oldest of CACHE_ENTRIES 17 MiB entries of a cache
that lives across steps (as a serving loop's per-request KV cache or a
buffer pool does) and runs a kernel over a 32 MiB activation that lives for
the step only.  The caching allocator carves the new entry out of a freed
32 MiB segment (its best fit), which leaves a 15 MiB piece of that segment
free: too small for the next entry or activation.  Once the cache is full,
allocated memory is the same at every step boundary (no leak: the oldest
entry is freed before the new one is made), but every live entry pins a
segment with a 15 MiB hole, so about 8 x 15 of 9 x 32 MiB (42%) of reserved
memory lies free in split blocks, step after step.  The cache fills in the
first CACHE_ENTRIES steps, inside the default warm-up.

The step's compute, about 50 ms of GPU time (so that even a short profiled
run lasts long enough for the hook's samples every 100 ms), is innocuous on
purpose: COMPUTE_OPS in-place additions over a 96 MiB buffer (memory-bound,
about 55 us each at the H200's bandwidth, many blocks, no allocation, far
longer than their launch), so that the allocator is the only problem the
program has.  The buffer is allocated with the driver's cuMemAlloc outside
PyTorch's caching allocator and wrapped with __cuda_array_interface__: in
the cache it would be one more large unsplit segment and dilute the very
fragmentation share the case is about.

broken: the default allocator configuration.
fixed:  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set before CUDA
        starts: one segment per stream that grows in place by mapping more
        pages, so a freed entry leaves one 17 MiB hole that the next entry
        fills exactly, and the activation lives at the segment's growing
        end.  The same allocations, the same kernels.
"""

import os

from zoo_common import StepTimer, parse_args

CASE = "mem-fragmentation"
ENTRY_MIB = 17
ACT_MIB = 32
MiB = 1 << 20
CACHE_ENTRIES = 8
COMPUTE_MIB = 96
COMPUTE_OPS = 900           # about 50 ms: 900 x 192 MiB of traffic at about 3.5 TB/s


class _DriverBuffer:
    """COMPUTE_MIB of device memory from cuMemAlloc, outside the caching
    allocator, seen by torch through __cuda_array_interface__."""

    def __init__(self, nbytes):
        import ctypes
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.ptr = ctypes.c_uint64(0)
        rc = self.cuda.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(nbytes))
        if rc != 0:
            raise SystemExit(f"zoo: {CASE}: cuMemAlloc failed ({rc})")
        self.__cuda_array_interface__ = {
            "shape": (nbytes // 4,), "typestr": "<f4", "data": (self.ptr.value, False),
            "version": 3, "strides": None,
        }

    def free(self):
        self.cuda.cuMemFree_v2(self.ptr)


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=60, default_warmup=CACHE_ENTRIES + 2)
    if variant == "fixed":
        # FIXED: expandable segments (read when CUDA starts, so before any allocation)
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ",".join(x for x in (conf, "expandable_segments:True") if x)
    import torch

    from zoo_common import require_gpu
    require_gpu(CASE)
    cache = []
    total = torch.zeros((), device="cuda")   # also makes CUDA's primary context current here
    torch.cuda.synchronize()
    raw = _DriverBuffer(COMPUTE_MIB * MiB)
    work = torch.as_tensor(raw, device="cuda")
    work.zero_()
    timer = StepTimer(CASE, variant, warmup, steps)
    for i in range(timer.total):
        timer.begin(i)
        # BROKEN: with the default configuration each entry splits a freed 32 MiB segment
        if len(cache) == CACHE_ENTRIES:
            del cache[0]
        cache.append(torch.zeros(ENTRY_MIB * MiB // 4, device="cuda"))
        act = torch.empty(ACT_MIB * MiB // 4, device="cuda").fill_(1.0)
        total += act.sum()
        del act
        # the step's compute: about 50 ms of memory-bound kernels that allocate nothing
        for _ in range(COMPUTE_OPS):
            work.add_(1.0)
        timer.end(i)
    timer.finish()
    del work
    torch.cuda.synchronize()
    raw.free()


if __name__ == "__main__":
    main()
