"""The program's side of lockstep.py: wait for a turn, run one block, answer.

A workload script given --lockstep PREFIX runs its warm-up, then
serve(PREFIX, step, sync, warm, per, cpu): each turn runs `warm` untimed
steps and a timed block of `per` steps, each ended by sync(), and answers
the block's time and the launching thread's CPU time per step (us).

PREFIX.done (written here) and PREFIX.go (read here) are FIFOs the driver
made; both sides open "done" first, then "go", so neither open blocks for
ever.  The first line written is "ready PID" (the PID the driver stops and
continues, whatever launcher, such as gpuscope profile, stands between).
"""
import os
import time


class Turns:
    def __init__(self, prefix):
        self.done = open(prefix + ".done", "w", buffering=1)
        self.go = open(prefix + ".go", "r")
        self.done.write("ready %d\n" % os.getpid())

    def wait(self):
        line = self.go.readline()
        return line.strip() == "run"

    def answer(self, *figures):
        self.done.write(" ".join("%.3f" % f for f in figures) + "\n")


def pin_this_thread(cpu):
    """Pin the calling thread (not the process: threads started before keep
    their CPUs) to one CPU; returns the CPU, or -1 when it cannot be pinned."""
    if cpu < 0:
        return -1
    try:
        os.sched_setaffinity(0, {cpu})
    except (OSError, ValueError):
        return -1
    return cpu


def serve(prefix, step, sync, warm, per, cpu=-1):
    """Answer the driver's turns until it says "quit"; 0 when all went well."""
    pinned = pin_this_thread(cpu)
    t = Turns(prefix)
    n = 0
    while t.wait():
        for _ in range(warm):
            step()
        sync()
        b0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(per):
            step()
        sync()
        t.answer((time.perf_counter() - b0) / per * 1e6, (time.thread_time() - c0) / per * 1e6)
        n += 1
    print("lockstep_blocks %d pinned_cpu %d" % (n, pinned))
    return 0
