"""Where in its page the heap's next allocation falls, and how far into the heap.

usage: heap_offset.py [--heap-random B]

Prints "heap_offset PAGE_OFFSET FROM_HEAP_START" (hex) for a 2,000-byte
malloc made after the interpreter's start-up.  The kernel puts the heap
([heap] in /proc/self/maps) at a random page, but the allocations before
this one are the same in every process of one configuration, so the page
offset is too: run it a few times unprofiled and under gpuscope profile to
see that each configuration keeps its own offset.  --heap-random B first
takes a random 0..B bytes (a multiple of 16) from malloc, as torch_step.py's
--heap-random does.
"""
import argparse
import ctypes
import random

ap = argparse.ArgumentParser()
ap.add_argument("--heap-random", type=int, default=0)
args = ap.parse_args()
if args.heap_random:
    # above 512 bytes CPython takes it from malloc, not its own small-object arenas
    held = ctypes.create_string_buffer(513 + random.SystemRandom().randrange(0, args.heap_random + 1, 16))
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
p = libc.malloc(2000)
start = [int(line.split("-")[0], 16) for line in open("/proc/self/maps") if "[heap]" in line]
print("heap_offset %#x %#x" % (p & 0xfff, p - start[0] if start else -1))
