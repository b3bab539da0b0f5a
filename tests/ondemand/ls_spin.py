#!/usr/bin/env python3
"""A workload for lockstep.py's own tests: each step spins N loop turns.

usage: ls_spin.py N --lockstep PREFIX

A configuration given a larger N is slower by N's ratio (the loop's time is
all of a step's), which the test knows before the run measures it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench", "overhead"))
import turns  # noqa: E402

n = int(sys.argv[1])
if sys.argv[2:3] != ["--lockstep"] or len(sys.argv) != 4:
    sys.exit(__doc__.split("\n\n")[1])


def step():
    x = 0
    for i in range(n):
        x += i
    return x


sys.exit(turns.serve(sys.argv[3], step, lambda: None, 2, 20))
