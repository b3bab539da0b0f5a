"""The interrupts a command's run brings to one CPU, and to the others.

usage: irqs.py --cpu C --label NAME -- COMMAND...

Reads /proc/interrupts and /proc/vmstat before and after COMMAND and prints
one line per interrupt kind that moved: its count per second of the run on
CPU C (where the launching thread is pinned) and on all the other CPUs
together, then the vmstat counters that moved (TLB flush counters exist
only on kernels built with CONFIG_DEBUG_TLBFLUSH).  Why: a thread's own CPU
time (time.thread_time) also holds the interrupts its CPU took while it ran
(the kernel charges their handling to whoever was running), so a collector
thread that makes other CPUs send this one inter-processor interrupts (TLB
shootdowns after a munmap or mprotect, function calls, wake-ups) slows a
thread that never calls the collector.
"""
import subprocess
import sys
import time


def interrupts():
    """{name: [count per CPU]} from /proc/interrupts."""
    with open("/proc/interrupts") as f:
        ncpu = len(f.readline().split())
        out = {}
        for line in f:
            name, _, rest = line.partition(":")
            fields = rest.split()
            counts = []
            for x in fields[:ncpu]:
                if not x.isdigit():
                    break
                counts.append(int(x))
            if counts:
                out[name.strip()] = counts
    return out


def vmstat():
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def main(argv):
    cpu, label = 0, "run"
    while argv and argv[0] != "--":
        if argv[0] == "--cpu":
            cpu = int(argv[1])
        elif argv[0] == "--label":
            label = argv[1]
        else:
            sys.exit("irqs.py: unknown option '%s'" % argv[0])
        argv = argv[2:]
    cmd = argv[1:]
    if not cmd:
        sys.exit("usage: irqs.py --cpu C --label NAME -- COMMAND...")
    i0, v0, t0 = interrupts(), vmstat(), time.monotonic()
    rc = subprocess.call(cmd)
    t1, i1, v1 = time.monotonic(), interrupts(), vmstat()
    dt = t1 - t0
    print("irqs %s: %.1f s, exit %d, per second on CPU %d | on the other CPUs" % (label, dt, rc, cpu))
    for name, after in i1.items():
        before = i0.get(name, [0] * len(after))
        d = [a - b for a, b in zip(after, before)]
        if not any(d):
            continue
        here = d[cpu] if cpu < len(d) else 0
        print("  %-6s %10.1f | %10.1f" % (name, here / dt, (sum(d) - here) / dt))
    for k, after in v1.items():
        d = after - v0.get(k, 0)
        if d and ("tlb" in k or "thp" in k or "numa" in k):
            print("  vmstat %s %.1f/s" % (k, d / dt))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
