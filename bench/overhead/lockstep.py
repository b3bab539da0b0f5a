#!/usr/bin/env python3
"""Lockstep overhead bench: configurations run side by side, one block at a time.

usage: lockstep.py --config NAME=COMMAND [--config NAME=COMMAND ...]
                   [--after NAME=COMMAND] [--copies K] [--rounds N]
                   [--seconds S] [--skip R] [--seed N] [--no-stop] [--out DIR]

Every configuration's process is started once and runs its warm-up; then,
round after round, each process in turn (in a new random order each round)
is continued, runs one block of steps and is stopped again.  So a round's
blocks ran within milliseconds of each other, on a machine in the same
state: what moves a machine's speed over seconds (a virtual machine's host,
clock changes, other tenants) moves every configuration's block of that
round alike, and the ratio of two blocks of one round keeps what one
configuration adds.  Runs of whole processes one after the other, as
run.sh does, pair blocks seconds or minutes apart.

Each COMMAND is a shell-quoted command line whose last words start the
workload script; " --lockstep PREFIX" is appended to it.  The script runs
its warm-up, then answers turns (turns.py).  The first configuration is the
reference: each other one is reported as its difference to it (below,
"Processes"; "rounds paired" is the same rounds' blocks compared with the
processes pooled, the time pairing alone).  Two configurations with the same
command (an A/A pair) show what the method itself reads when nothing
differs: 0 within its interval.

Stopping: between its turns a process and everything in its process group
(a launcher such as gpuscope profile, and its threads) is stopped with
SIGSTOP, so a configuration's background threads (a collector's writer, a
sampler) run only in its own turns and their cost is counted there, not in
the other configurations' blocks; a thread whose period is longer than a
turn does its work at the start of every turn, so its cost is counted up to
period / turn times over (lockstep.sh, PER).  --no-stop leaves them running.

Processes: two processes of one command differ by a few per cent for as
long as they live (where ASLR put their code and heap, which physical pages
they got: on the build machine two unprofiled processes of the CPU step
differed by 5.2%, 95% interval 5.0% to 5.5%).  Pairing blocks in time does
not remove that; only more processes do.  --copies K starts K processes of
every configuration, all taking turns in every round, and the summary
compares configurations by their processes: each block's log time less the
mean log time of its round's blocks (what moves the machine), averaged over
each process's blocks (that process's effect), averaged over the
configuration's processes, with a 95% bootstrap interval that resamples
processes within each configuration.  "process spread" is the standard
deviation of the process effects within a configuration; "medians" compares
the configurations' median processes instead of their means (with three
copies or more): one process in four or so runs a few per cent slower than
its siblings for its whole life (seen on both machines), and the median is
not moved by it.

The first R rounds (--skip, default 5) are run and left out of the summary
(a capture started by --after switches CUDA tracing on at its collector's
next pass, up to 50 ms after it, not before the first round).
--rounds and --seconds bound the rounds compared.

--after NAME=COMMAND runs COMMAND once each process of NAME is ready, before
the first round (for instance a `gpuscope capture` that keeps it
capturing).  In any COMMAND, {dir} is the output directory and {copy} the
process's own name (NAME.K), to give each one its own report.

SIGTERM (a time limit) ends the rounds early: the summary keeps the rounds
run, and the exit status is 1.  The figures are written before the
processes are told to end (they end side by side; a profile writing its
report takes seconds), and again with their exit statuses once they have.

Writes DIR/lockstep.txt (the summary, also printed), DIR/summary.json (each
configuration's difference to the reference, "time" and "cpu": pct, lo,
hi), DIR/blocks.csv (round, process, configuration, order in the round,
us_per_step, cpu_us_per_step), and each process's output as DIR/NAME.K.log.
"""
import argparse
import json
import math
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time


def parse_pairs(items, what):
    out = []
    for it in items:
        name, sep, cmd = it.partition("=")
        if not sep or not name or not cmd:
            sys.exit("lockstep: --%s wants NAME=COMMAND, not '%s'" % (what, it))
        out.append((name, cmd))
    return out


class Proc:
    def __init__(self, config, copy, cmd, fifo_dir, out_dir, stop):
        self.config = config
        self.name = "%s.%d" % (config, copy)
        prefix = os.path.join(fifo_dir, self.name)
        os.mkfifo(prefix + ".done")
        os.mkfifo(prefix + ".go")
        words = shlex.split(expand(cmd, out_dir, self.name)) + ["--lockstep", prefix]
        self.log = open(os.path.join(out_dir, self.name + ".log"), "w")
        self.p = subprocess.Popen(words, stdout=self.log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        self.pgid = self.p.pid
        self.prefix = prefix
        self.stop_on = stop
        self.done = None
        self.go = None
        self.pid = None
        self.blocks = []

    def connect(self):
        # the same order as turns.py: "done" first, then "go"
        self.done = open(self.prefix + ".done", "r")
        self.go = open(self.prefix + ".go", "w", buffering=1)
        line = self.done.readline().split()
        if len(line) != 2 or line[0] != "ready":
            sys.exit("lockstep: %s did not start (see %s)" % (self.name, self.log.name))
        self.pid = int(line[1])

    def signal(self, sig):
        for f in (lambda: os.killpg(self.pgid, sig), lambda: os.kill(self.pid, sig)):
            try:
                f()
            except (ProcessLookupError, TypeError):
                pass

    def turn(self):
        if self.stop_on:
            self.signal(signal.SIGCONT)
        self.go.write("run\n")
        line = self.done.readline().split()
        if self.stop_on:
            self.signal(signal.SIGSTOP)
        if len(line) < 1:
            sys.exit("lockstep: %s ended in a turn (see %s)" % (self.name, self.log.name))
        fig = [float(x) for x in line]
        self.blocks.append(fig)
        return fig

    def quit(self):
        self.signal(signal.SIGCONT)
        try:
            if self.go:
                self.go.write("quit\n")
                self.go.close()
        except BrokenPipeError:
            pass
        self.go = None

    def finish(self):
        self.quit()
        try:
            rc = self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.log.close()
        return rc


def expand(cmd, out_dir, copy):
    return cmd.replace("{dir}", out_dir).replace("{copy}", copy)


def bootstrap(stat, groups, rng, n=2000):
    """95% interval of stat(groups) with each group resampled on its own."""
    vals = []
    for _ in range(n):
        vals.append(stat([[g[rng.randrange(len(g))] for _ in g] for g in groups]))
    vals.sort()
    return vals[int(0.025 * n)], vals[int(0.975 * n) - 1]


def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def sd(xs):
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def effects(procs, rounds, field):
    """Each process's effect in per cent: its blocks' log time less their
    round's mean log time, averaged over its blocks."""
    grand = []
    for r in range(rounds):
        grand.append(mean([math.log(p.blocks[r][field]) for p in procs]))
    return {p.name: 100.0 * mean([math.log(p.blocks[r][field]) - grand[r]
                                  for r in range(rounds)]) for p in procs}


def summary(names, procs, rounds, rng, stopped, copies, seed, table):
    lines = ["lockstep: %d rounds, %d configurations x %d processes, %s, seed %d" % (
        rounds, len(names), copies, "stopped between turns" if stopped else "not stopped",
        seed)]
    if rounds == 0:
        return lines
    by = {n: [p for p in procs if p.config == n] for n in names}
    ref = names[0]
    for field, what in ((0, "time"), (1, "launching thread's CPU")):
        if any(len(p.blocks[0]) <= field for p in procs):
            continue
        eff = effects(procs, rounds, field)
        lines.append("%s per step:" % what)
        for n in names:
            e = [eff[p.name] for p in by[n]]
            s = "  %-10s median block %.1f us" % (
                n, median([b[field] for p in by[n] for b in p.blocks]))
            if copies > 1:
                s += ", process spread %.2f%%" % sd(e)
            if n != ref:
                er = [eff[p.name] for p in by[ref]]
                lo, hi = bootstrap(lambda g: mean(g[0]) - mean(g[1]), [e, er], rng)
                s += "; vs %s %+.2f%% (95%% %+.2f%% to %+.2f%%)" % (ref, mean(e) - mean(er), lo, hi)
                row = {"pct": round(mean(e) - mean(er), 3), "lo": round(lo, 3), "hi": round(hi, 3)}
                if copies > 2:
                    mlo, mhi = bootstrap(lambda g: median(g[0]) - median(g[1]), [e, er], rng)
                    s += ", medians %+.2f%% (%+.2f%% to %+.2f%%)" % (
                        median(e) - median(er), mlo, mhi)
                    row.update(median_pct=round(median(e) - median(er), 3),
                               median_lo=round(mlo, 3), median_hi=round(mhi, 3))
                table.setdefault(n, {})[("time", "cpu")[field]] = row
                # the same rounds' blocks paired, processes pooled: the time pairing alone
                d = [100.0 * (mean([math.log(p.blocks[r][field]) for p in by[n]]) -
                              mean([math.log(p.blocks[r][field]) for p in by[ref]]))
                     for r in range(rounds)]
                s += ", rounds paired %+.2f%%" % mean(d)
            lines.append(s)
        if copies > 1:
            lines.append("  processes: " + " ".join(
                "%s %+.2f" % (p.name, eff[p.name]) for p in procs))
    return lines


class Stopped(Exception):
    """SIGTERM (timeout(1), a device's time limit): end the rounds, keep what was measured."""


def on_term(sig, frame):
    raise Stopped()


class Compared:
    """A process as summary() sees it: its blocks of the compared rounds only."""
    def __init__(self, p, blocks):
        self.config, self.name, self.blocks = p.config, p.name, blocks


def results(names, procs, rounds, skip, stop, copies, seed):
    """The summary's lines (without the exit line) and its table, of the rounds run."""
    table = {}
    if rounds <= skip:
        return ["lockstep: no round to compare (%d run, the first %d skipped)" % (rounds, skip)], table
    # a round cut short is not compared, nor the skipped ones
    kept = [Compared(p, p.blocks[skip:rounds]) for p in procs]
    return summary(names, kept, rounds - skip, random.Random(seed), stop, copies, seed, table), table


def write_blocks(out, rows):
    with open(os.path.join(out, "blocks.csv"), "w") as f:
        f.write("round,process,config,order,us_per_step,cpu_us_per_step\n")
        for r, n, c, k, fig in rows:
            f.write("%d,%s,%s,%d,%s\n" % (r, n, c, k, ",".join("%.3f" % x for x in fig)))


def write_summary(out, names, lines, table, rounds, copies, rcs):
    """lockstep.txt and summary.json; @rcs None: the processes have not ended yet."""
    if rcs is None:
        bad, end = [], "exit: (the processes are ending)"
    else:
        bad = ["%s %d" % (n, rc) for n, rc in rcs.items() if rc]
        end = "exit: " + (", ".join(bad) if bad else "all 0")
    text = "\n".join(lines + [end]) + "\n"
    with open(os.path.join(out, "lockstep.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"reference": names[0], "rounds": rounds, "copies": copies,
                   "vs_reference": table, "exit": rcs}, f, indent=1, sort_keys=True)
        f.write("\n")
    return text, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", action="append", default=[], metavar="NAME=COMMAND")
    ap.add_argument("--after", action="append", default=[], metavar="NAME=COMMAND")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--skip", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-stop", action="store_true")
    ap.add_argument("--out", default="lockstep-out")
    a = ap.parse_args()
    configs = parse_pairs(a.config, "config")
    after = dict(parse_pairs(a.after, "after"))
    names = [n for n, _ in configs]
    if len(configs) < 2 or len(set(names)) != len(names) or any("." in n for n in names):
        sys.exit("lockstep: give two configurations or more, each with its own name (no '.')")
    if a.copies < 1:
        sys.exit("lockstep: --copies wants 1 or more")
    for n in after:
        if n not in names:
            sys.exit("lockstep: --after names no configuration '%s'" % n)
    os.makedirs(a.out, exist_ok=True)
    out = os.path.abspath(a.out)
    fifo_dir = tempfile.mkdtemp(prefix="lockstep.")
    rng = random.Random(a.seed)
    stop = not a.no_stop

    procs = []
    rows = []
    rounds = 0
    rcs = {}
    stopped = False
    signal.signal(signal.SIGTERM, on_term)
    try:
        for k in range(1, a.copies + 1):
            for n, c in configs:
                procs.append(Proc(n, k, c, fifo_dir, out, stop))
        for p in procs:
            p.connect()
            if p.config in after:
                cmd = expand(after[p.config], out, p.name)
                r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                print("lockstep: after %s: rc %d: %s" % (p.name, r.returncode, r.stdout.strip()))
                if r.returncode:
                    sys.exit("lockstep: --after %s failed" % p.name)
            if stop:
                p.signal(signal.SIGSTOP)
        t_end = time.monotonic() + a.seconds
        while rounds < a.rounds + a.skip and time.monotonic() < t_end:
            order = procs[:]
            rng.shuffle(order)
            for k, p in enumerate(order):
                rows.append((rounds, p.name, p.config, k, p.turn()))
            rounds += 1
    except Stopped:
        stopped = True
        print("lockstep: stopped (SIGTERM) after %d rounds: the summary keeps them" % rounds)
    finally:
        # the figures first: the processes' ends (a profile writing its
        # report each) take seconds, and a time limit may fall meanwhile
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        write_blocks(out, rows)
        lines, table = results(names, procs, rounds, a.skip, stop, a.copies, a.seed)
        compared = max(0, rounds - a.skip)
        write_summary(out, names, lines, table, compared, a.copies, None)
        for p in procs:
            p.quit()   # all at once: they end side by side
        for p in procs:
            rcs[p.name] = p.finish()
        for f in os.listdir(fifo_dir):
            os.unlink(os.path.join(fifo_dir, f))
        os.rmdir(fifo_dir)

    text, bad = write_summary(out, names, lines, table, compared, a.copies, rcs)
    sys.stdout.write(text)
    return 1 if bad or stopped else 0


if __name__ == "__main__":
    sys.exit(main())
