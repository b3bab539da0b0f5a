"""Where torch's libraries land, measured from libc's.

usage: map_offset.py [--cuda]

Prints "map_offset ANON TORCH" (hex, signed): a 4 KiB anonymous mapping made
after the interpreter's start-up, and libtorch_cpu's first mapping once
torch is imported, each less libc's base.  With --cuda, CUDA is initialised
and one matmul run first, and a line "map_offset_cuda NAME OFFSET ..." adds
libtorch_cuda, libcudart, libcublas and libcuda (each that is mapped).  The
kernel places libc at a random address; these distances say whether what is
mapped later lands at the same place relative to it in every process of one
configuration, and how far a collector's start-up mappings move it (the
collector's layout.c keeps them where they would be unprofiled;
tests/collect/layout.sh).  Run it a few times unprofiled and under
gpuscope profile (lockstep-bcpu-build-2026-12-02/, sessions 15 and 16).
"""
import ctypes
import mmap
import sys


def base(maps, name):
    for line in maps:
        w = line.split()
        if len(w) > 5 and name in w[5]:
            return int(w[0].split("-")[0], 16)
    return None


def need(maps, name):
    b = base(maps, name)
    if b is None:
        raise SystemExit("map_offset.py: no %s in /proc/self/maps" % name)
    return b


m = mmap.mmap(-1, 4096)
anon = ctypes.addressof(ctypes.c_char.from_buffer(m))
libc = need(open("/proc/self/maps").readlines(), "libc.so.6")
import torch  # noqa: E402 (after the first mapping)
tc = need(open("/proc/self/maps").readlines(), "libtorch_cpu.so")
print("map_offset %s %s" % (hex(anon - libc), hex(tc - libc)))
if "--cuda" in sys.argv[1:]:
    x = torch.ones(256, 256, device="cuda")
    (x @ x).sum().item()
    maps = open("/proc/self/maps").readlines()
    out = []
    for name in ("libtorch_cuda.so", "libcudart.so", "libcublas.so", "libcuda.so"):
        b = base(maps, name)
        if b is not None:
            out.append("%s %s" % (name, hex(b - libc)))
    print("map_offset_cuda " + " ".join(out))
