"""Where torch's library lands, measured from libc's.

usage: map_offset.py

Prints "map_offset ANON TORCH" (hex, signed): a 4 KiB anonymous mapping made
after the interpreter's start-up, and libtorch_cpu's first mapping once
torch is imported, each less libc's base.  The kernel places libc at a
random address; these distances say whether what is mapped later lands at
the same place relative to it in every process of one configuration, and
how far a collector's start-up mappings move it.  Run it a few times
unprofiled and under gpuscope profile (lockstep-bcpu-build-2026-12-02/,
session 15).
"""
import ctypes
import mmap


def base(maps, name):
    for line in maps:
        w = line.split()
        if len(w) > 5 and name in w[5]:
            return int(w[0].split("-")[0], 16)
    raise SystemExit("map_offset.py: no %s in /proc/self/maps" % name)


m = mmap.mmap(-1, 4096)
anon = ctypes.addressof(ctypes.c_char.from_buffer(m))
libc = base(open("/proc/self/maps").readlines(), "libc.so.6")
import torch  # noqa: E402,F401 (after the first mapping)
tc = base(open("/proc/self/maps").readlines(), "libtorch_cpu.so")
print("map_offset %s %s" % (hex(anon - libc), hex(tc - libc)))
