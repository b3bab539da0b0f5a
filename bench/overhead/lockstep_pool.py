#!/usr/bin/env python3
"""Pool one configuration's difference over several lockstep.py summaries.

usage: lockstep_pool.py CONFIG (LOCKSTEP.TXT | NAME:X:LO:HI)...

Reads the "time per step" line of CONFIG in each summary ("vs REF +X% (95%
LO% to HI%)"), takes each run's standard error as its interval's width over
3.92, and prints every run and their inverse-variance weighted mean with its
95% interval (a fixed-effect pool: it assumes the runs measure one cost; a
run on a noisier machine weighs less).  NAME:X:LO:HI is a run known by its
figures only (its summary lost, its figures noted: r9:+0.66:+0.11:+1.30).
"""
import math
import re
import sys

FIGURES = re.compile(r"^([^:/]+):([+-]?[\d.]+):([+-]?[\d.]+):([+-]?[\d.]+)$")
LINE = re.compile(r"^\s+(\S+)\s+median block .*?; vs (\S+) ([+-][\d.]+)% \(95% ([+-][\d.]+)% to ([+-][\d.]+)%\)")


def first_time_row(path, config):
    with open(path) as f:
        for line in f:
            if line.startswith("launching thread's CPU"):
                break               # the time rows come first
            m = LINE.match(line)
            if m and m.group(1) == config:
                return m.group(2), float(m.group(3)), float(m.group(4)), float(m.group(5))
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    config = sys.argv[1]
    rows = []
    for path in sys.argv[2:]:
        f = FIGURES.match(path)
        if f:
            path = f.group(1)
            r = ("the reference (figures as noted)",) + tuple(float(x) for x in f.groups()[1:])
        else:
            r = first_time_row(path, config)
        if r is None:
            print("%s: no row for %s" % (path, config))
            continue
        ref, est, lo, hi = r
        se = (hi - lo) / 3.92
        rows.append((est, se))
        print("%s: %s vs %s %+.2f%% (95%% %+.2f%% to %+.2f%%)" % (path, config, ref, est, lo, hi))
    rows = [(e, s) for e, s in rows if s > 0]
    if not rows:
        sys.exit("lockstep_pool: nothing to pool")
    w = [1 / s ** 2 for _, s in rows]
    m = sum(wi * e for wi, (e, _) in zip(w, rows)) / sum(w)
    se = 1 / math.sqrt(sum(w))
    print("pooled over %d runs: %+.2f%% (95%% %+.2f%% to %+.2f%%)" % (
        len(rows), m, m - 1.96 * se, m + 1.96 * se))


if __name__ == "__main__":
    main()
