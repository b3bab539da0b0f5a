"""Launch-bound PyTorch step: 20 x (256x256 matmul + GELU).

usage: torch_step.py [--torch-profiler JSON] [--steps N] [--blocks K]
                     [--lockstep PREFIX [--per N] [--warm W] [--pin-cpu C]]
                     [--device cpu|cuda] [--size N] [--idle-thread]
                     [--count-hooks] [--map-kb N,...] [--map-late-kb N,...]
                     [--early-thread] [--faulthandler] [--gil-thread-ms MS]
                     [--map-random-kb N] [--heap-pad B] [--heap-random B]
Prints "us_per_step X"; with --torch-profiler the steps run inside
torch.profiler (CPU+CUDA) and the trace is written to JSON ("-": not written).
With --blocks K the steps run in K blocks, each ended by a synchronize, and
X is the median block's time per step (a transient stall of the machine then
moves one block, not the figure); a second line "blocks_us MIN Q1 MED Q3 MAX"
shows the spread inside the run, to tell it from the spread between runs,
and "cpu_us_per_step Y" the median block's CPU time of the launching thread
per step (time.thread_time: what the thread itself ran, without the time a
virtual machine's host took its CPU away, where the guest kernel accounts
steal time).  With --calibrate each block is preceded by a fixed CPU-only
block (a pure-Python loop that no tracer hooks): "norm_step Z" is the median
over blocks of step time / calibration time (x 1000), which cancels the
machine's speed changes (a virtual machine's host moves its CPUs' speed from
one second to the next) and keeps what a tracer adds to the launches.
With --lockstep the script answers lockstep.py's turns (turns.py) after its
warm-up: each turn runs W untimed steps (default 2: the first steps after
another process ran meet cold caches) and a timed block of N steps (default
20), answering the block's time and the launching thread's CPU time per
step; --pin-cpu pins the launching thread (only it) to CPU C first, so that
the configurations' blocks all run on one CPU.  --device cpu runs the same
step on the CPU (a machine without a GPU: the method's own check), --size
the matrices' side (default 256; 32 on a CPU keeps the step dispatch-bound).
--idle-thread starts one sleeping thread: a process with one thread only
takes glibc's and libstdc++'s single-threaded fast paths (malloc without
atomics, shared_ptr counts without atomics), which any second thread, such
as a collector's, turns off; a CUDA process has threads anyway, a CPU-only
reference run needs this one to be compared with a collector's.
--count-hooks (with bench/overhead/hookcount.so preloaded) runs --steps steps
and prints "hooks_per_step NAME=N ...": the launching thread's calls per
step of the functions gpuscope's collector interposes (hookcount.c).
--map-kb N[,N...] maps private anonymous memory of each size (KiB) before
torch is imported, never touched and kept: every library and buffer mapped
later lands that much lower, as behind a collector's start-up mappings
(its block pool, ring and writer stack), which tells a layout effect from a
collector's own cost.  --early-thread starts the sleeping thread of
--idle-thread before torch is imported (a preloaded collector starts its
writer before the program runs), after the --map-kb mappings and before
the --map-late-kb ones; --faulthandler installs Python's handlers for the
fatal signals on an alternate stack (as a collector does) before it too.
"""
import argparse
import contextlib
import mmap
import os
import random
import time

ap = argparse.ArgumentParser()
ap.add_argument("--torch-profiler", metavar="JSON")
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--blocks", type=int, default=0)
ap.add_argument("--calibrate", action="store_true")
ap.add_argument("--lockstep", metavar="PREFIX")
ap.add_argument("--per", type=int, default=20)
ap.add_argument("--warm", type=int, default=2)
ap.add_argument("--pin-cpu", type=int, default=-1)
ap.add_argument("--device", default="cuda")
ap.add_argument("--size", type=int, default=256)
ap.add_argument("--idle-thread", action="store_true")
ap.add_argument("--count-hooks", action="store_true")
ap.add_argument("--map-kb", default="")
ap.add_argument("--map-late-kb", default="")
ap.add_argument("--early-thread", action="store_true")
ap.add_argument("--faulthandler", action="store_true")
ap.add_argument("--gil-thread-ms", type=float, default=0)
ap.add_argument("--map-random-kb", type=int,
                default=int(os.environ.get("TORCH_STEP_MAP_RANDOM_KB", "0") or 0))
ap.add_argument("--heap-pad", type=int, default=0)
ap.add_argument("--heap-random", type=int,
                default=int(os.environ.get("TORCH_STEP_HEAP_RANDOM_B", "0") or 0))
args = ap.parse_args()


def sleeping_thread():
    """--idle-thread, --early-thread: one more thread, asleep for the whole run."""
    import threading
    threading.Thread(target=time.sleep, args=(1e9,), daemon=True).start()


def gil_thread(ms):
    """--gil-thread-ms: a periodic thread that takes the interpreter lock."""
    import threading

    def run():
        while True:
            time.sleep(ms / 1000.0)
            sum(range(5000))       # about 20 us of bytecode with the lock held

    threading.Thread(target=run, daemon=True).start()


def private_maps(kbs):
    """Private anonymous mappings of each size in the comma list @kbs (KiB), never touched."""
    return [mmap.mmap(-1, int(k) << 10, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            for k in kbs.split(",") if k and int(k) > 0]


# --map-random-kb, --map-kb, --heap-pad, --heap-random, --early-thread,
# --map-late-kb, --faulthandler (the docstring says why): before torch and
# CUDA load
held = private_maps(str(random.SystemRandom().randrange(0, args.map_random_kb + 1, 4))
                    if args.map_random_kb > 0 else "")
held += private_maps(args.map_kb)
pad = args.heap_pad + (random.SystemRandom().randrange(0, args.heap_random + 1, 16)
                       if args.heap_random > 0 else 0)
if args.heap_pad or args.heap_random:
    import ctypes
    # above 512 bytes CPython takes it from malloc, not its own small-object arenas
    held.append(ctypes.create_string_buffer(513 + pad))
if args.early_thread:
    sleeping_thread()
held += private_maps(args.map_late_kb)
if args.faulthandler:
    import faulthandler
    faulthandler.enable()

import torch  # noqa: E402 (after --map-kb's mapping)
if args.idle_thread:
    sleeping_thread()
if args.gil_thread_ms > 0:
    gil_thread(args.gil_thread_ms)

x = torch.randn(args.size, args.size, device=args.device)
w = torch.randn(args.size, args.size, device=args.device)
sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)


def step():
    y = x
    for _ in range(20):
        y = torch.nn.functional.gelu(y @ w)
    return y


for _ in range(30):
    step()
sync()

if args.count_hooks:
    import ctypes
    import sys
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "hookcount_thread"):
        sys.exit("torch_step.py: --count-hooks needs LD_PRELOAD=.../hookcount.so")
    lib.hookcount_reset()
    for _ in range(args.steps):
        step()
    sync()
    buf = ctypes.create_string_buffer(4096)
    lib.hookcount_thread(buf, len(buf))
    counts = [kv.split("=") for kv in buf.value.decode().split()]
    print("hooks_per_step " + " ".join("%s=%.2f" % (k, int(v) / args.steps) for k, v in counts))
    sys.exit(0)

if args.lockstep:
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import turns
    sys.exit(turns.serve(args.lockstep, step, sync, args.warm, args.per, args.pin_cpu))

prof = contextlib.nullcontext()
if args.torch_profiler:
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
blocks, cpu, norm = [], [], []


def calibration():
    """A fixed CPU-only block (about 0.3 ms on the H200 machine's CPUs)."""
    c0 = time.perf_counter()
    x = 0
    for i in range(20000):
        x += i * i & 7
    return time.perf_counter() - c0


with prof as p:
    t0 = time.perf_counter()
    if args.blocks > 0:
        per = max(1, args.steps // args.blocks)
        for _ in range(args.blocks):
            cal = sum(calibration() for _ in range(per // 4 or 1)) if args.calibrate else 0.0
            b0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(per):
                step()
            sync()
            blocks.append((time.perf_counter() - b0) / per * 1e6)
            cpu.append((time.thread_time() - c0) / per * 1e6)
            if cal:
                norm.append((time.perf_counter() - b0) / cal * 1e3)
    else:
        for _ in range(args.steps):
            step()
    sync()
    t1 = time.perf_counter()
if args.torch_profiler and args.torch_profiler != "-":
    p.export_chrome_trace(args.torch_profiler)

def threads_cpu_ms():
    """CPU time (user + system) of this process's threads by kind: those the
    collector started (named gpuscope-*), this launching thread, the rest."""
    import threading
    tick = os.sysconf("SC_CLK_TCK")
    own = str(threading.get_native_id())
    out = {"gpuscope": 0.0, "main": 0.0, "other": 0.0}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                comm = f.read().strip()
            with open("/proc/self/task/%s/stat" % tid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ms = (int(fields[11]) + int(fields[12])) * 1000.0 / tick
        kind = "main" if tid == own else "gpuscope" if comm.startswith("gpuscope") else "other"
        out[kind] += ms
    return out


if blocks:
    blocks.sort()
    cpu.sort()
    n = len(blocks)
    print("us_per_step %.1f" % blocks[n // 2])
    print("blocks_us %.1f %.1f %.1f %.1f %.1f" % (blocks[0], blocks[n // 4], blocks[n // 2],
                                                 blocks[(3 * n) // 4], blocks[-1]))
    print("cpu_us_per_step %.1f" % cpu[n // 2])
    if norm:
        norm.sort()
        print("norm_step %.2f" % norm[len(norm) // 2])
    # the collector's own threads: their CPU time over the timed steps' wall time, in per mille
    # of one CPU (the whole run's, from start-up on, so an upper bound for the steps)
    t = threads_cpu_ms()
    print("collector_cpu_permille %.2f" % (t["gpuscope"] / ((t1 - t0) * 1e3) * 1e3))
    print("threads_cpu_ms gpuscope=%.0f main=%.0f other=%.0f timed_ms=%.0f" % (
        t["gpuscope"], t["main"], t["other"], (t1 - t0) * 1e3))
else:
    print("us_per_step %.1f" % ((t1 - t0) / args.steps * 1e6))
