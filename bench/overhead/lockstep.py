#!/usr/bin/env python3
"""Lockstep overhead bench: configurations run side by side, one block at a time.

usage: lockstep.py --config NAME=COMMAND [--config NAME=COMMAND ...]
                   [--after NAME=COMMAND] [--copies K] [--rounds N]
                   [--seconds S] [--skip R] [--seed N] [--no-stop] [--out DIR]
                   [--lifetime M [--start-off-cpu C]]
       lockstep.py --reread BLOCKS.CSV[.xz] --configs REF,NAME... [--skip R] [--seed N]
                   [--lifetime M]

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

Turnover (--lifetime M): a process's own offset (its layout) does not
average out over its blocks, only over processes.  With --lifetime, a
process takes M turns past its skipped ones and is then replaced by a new
process of its configuration (NAME.K+1, K+2, ...), started ahead of time
beside the rounds (1.5 times as many rounds ahead as a start has taken at
most so far) and stopped once ready, so that it takes the slot's next
turn.  The first processes' lives are staggered (slot i of S: M (i + 1) / S
turns), so that about S / M processes are replaced a round, not all at
once.  A process's effect is then a mean of M blocks, whose spread (on the
H200 about 8% a block, 1% of them 25% or more either way) averages out
less: the summary adds "blocks trimmed", the same comparison with each
process's blocks trimmed of their lowest and highest 10% (the means remain
the figures lockstep_pool.py reads).  Whether that buys a narrower
interval depends on the machine: it does where processes differ more than
their blocks' noise over a long life does.
--start-off-cpu C starts each process on every CPU but C (the launching
threads' CPU, lockstep.sh's PIN_CPU), so that a starting process's import
and warm-up do not run on the CPU where the turns run; once it is ready,
every thread of the launcher and of the program but the launching one (which
the program pinned to C) gets every CPU back, as a process started before
the rounds has.

The first R rounds (--skip, default 5) are run and left out of the summary
(a capture started by --after switches CUDA tracing on at its collector's
next pass, up to 50 ms after it, not before the first round).
--rounds and --seconds bound the rounds compared.  With --lifetime, R is
each process's first R turns.

--after NAME=COMMAND runs COMMAND once each process of NAME is ready, before
the first round (for instance a `gpuscope capture` that keeps it
capturing).  In any COMMAND, {dir} is the output directory and {copy} the
process's own name (NAME.K), to give each one its own report.

SIGTERM (a time limit) ends the rounds early: the summary keeps the rounds
run, and the exit status is 1.  The figures are written before the
processes are told to end (they end side by side; a profile writing its
report takes seconds), and again with their exit statuses once they have.

--reread compares a run's blocks again (a blocks.csv this script wrote,
or one compressed with xz), with the configurations named by --configs,
the first the reference: another configuration of the same run can be the
reference (an unprofiled one with a random layout, to compare one with the
same), and any of them can be left out.  With the run's own configuration
order and seed it prints the run's summary again, the processes' and
rounds' exit line aside (the blocks keep 3 decimals); a run with --lifetime
wants its M again (the summary's first line and the trimmed comparison).

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
    """One process of a configuration, started at once; it joins the rounds
    once it has run its warm-up and said "ready" (joined())."""
    def __init__(self, config, copy, cmd, fifo_dir, out_dir, stop, life=None, off_cpu=-1):
        self.config = config
        self.copy = copy
        self.name = "%s.%d" % (config, copy)
        prefix = os.path.join(fifo_dir, self.name)
        os.mkfifo(prefix + ".done")
        os.mkfifo(prefix + ".go")
        words = shlex.split(expand(cmd, out_dir, self.name)) + ["--lockstep", prefix]
        self.log_path = os.path.join(out_dir, self.name + ".log")
        self.off_cpu = off_cpu
        cpus = os.sched_getaffinity(0) - {off_cpu}
        pre = (lambda: os.sched_setaffinity(0, cpus)) if off_cpu >= 0 and cpus else None
        with open(self.log_path, "w") as log:
            try:
                self.p = subprocess.Popen(words, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True, preexec_fn=pre)
            except OSError as e:
                sys.exit("lockstep: cannot start %s (%s): %s" % (self.name, words[0], e))
        self.pgid = self.p.pid
        self.prefix = prefix
        self.stop_on = stop
        # "done" is opened without waiting, so that the program's open of it
        # for writing does not wait either; its "go" is opened once the
        # program waits on it (turns.py: "done" first, then "go")
        self.done_fd = os.open(prefix + ".done", os.O_RDONLY | os.O_NONBLOCK)
        self.done = None
        self.go = None
        self.pid = None
        self.life = life          # turns it takes (None: all of the run's)
        self.turns = 0
        self.blocks = {}          # round: figures
        self.rc = None
        self.ready = False        # joined, its --after run, stopped
        self.started = 0          # the round it was started in

    def joined(self):
        """True once the program is ready (then it can take turns)."""
        if self.go:
            return True
        try:
            fd = os.open(self.prefix + ".go", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:           # ENXIO: not waiting on "go" yet
            if self.p.poll() is not None:
                sys.exit("lockstep: %s did not start (see %s)" % (self.name, self.log_path))
            return False
        for f in (fd, self.done_fd):
            os.set_blocking(f, True)
        self.go = os.fdopen(fd, "w", buffering=1)
        self.done = os.fdopen(self.done_fd, "r")
        line = self.done.readline().split()
        if len(line) != 2 or line[0] != "ready":
            sys.exit("lockstep: %s did not start (see %s)" % (self.name, self.log_path))
        self.pid = int(line[1])
        if self.off_cpu >= 0:
            self.every_cpu()
        return True

    def every_cpu(self):
        """Give every thread of the launcher and the program but the launching
        one (pinned by the program) the CPUs a process started on time has."""
        cpus = os.sched_getaffinity(0)
        for pid in {self.pgid, self.pid}:
            try:
                tids = os.listdir("/proc/%d/task" % pid)
            except OSError:
                continue
            for t in tids:
                if int(t) != self.pid:
                    try:
                        os.sched_setaffinity(int(t), cpus)
                    except OSError:
                        pass

    def connect(self):
        while not self.joined():
            time.sleep(0.02)

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
            sys.exit("lockstep: %s ended in a turn (see %s)" % (self.name, self.log_path))
        self.turns += 1
        return [float(x) for x in line]

    def quit(self):
        self.signal(signal.SIGCONT)
        try:
            if self.go:
                self.go.write("quit\n")
                self.go.close()
        except BrokenPipeError:
            pass
        self.go = None
        if self.done:
            self.done.close()
        elif self.done_fd >= 0:
            os.close(self.done_fd)
        self.done, self.done_fd = None, -1

    def abandon(self):
        """End a process that never joined (the rounds ended while it started)."""
        self.signal(signal.SIGTERM)
        self.quit()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.p.wait()

    def reap(self):
        """Its exit status once it has ended (None before)."""
        if self.rc is None:
            self.rc = self.p.poll()
        return self.rc

    def finish(self):
        self.quit()
        try:
            self.rc = self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.rc = self.p.wait()
        return self.rc


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


def trimmed(xs, cut=0.1):
    """The mean of @xs without its lowest and highest @cut."""
    s = sorted(xs)
    k = int(len(s) * cut)
    return mean(s[k:len(s) - k] if len(s) > 2 * k else s)


def deviations(procs, field):
    """Each process's blocks in per cent: a block's log time less its
    round's effect, in the additive model log time = round + process.
    When every process ran in every round, a round's effect is the mean log
    time of its blocks (one pass below); with --lifetime a round lacks the
    processes that were starting, and the passes that follow take each
    round's effect net of the processes present in it (alternating least
    squares), so that a round of slower processes is not read as a slower
    machine."""
    logs = {p.name: {r: math.log(b[field]) for r, b in p.blocks.items()} for p in procs}
    eff = {n: 0.0 for n in logs}
    rounds = {}
    for n, ys in logs.items():
        for r in ys:
            rounds.setdefault(r, []).append(n)
    whole = len({len(v) for v in rounds.values()}) == 1 and len(rounds[next(iter(rounds))]) == len(logs)
    for _ in range(1 if whole else 200):
        beta = {r: mean([logs[n][r] - eff[n] for n in ns]) for r, ns in rounds.items()}
        new = {n: mean([y - beta[r] for r, y in ys.items()]) for n, ys in logs.items()}
        moved = max(abs(new[n] - eff[n]) for n in logs)
        eff = new
        if moved < 1e-12:
            break
    return {n: [100.0 * (y - beta[r]) for r, y in sorted(ys.items())] for n, ys in logs.items()}


def summary(names, procs, rounds, rng, stopped, slots, seed, table, life=None):
    """@procs: each with .config, .name, .copy and .blocks ({round: figures},
    its compared blocks); @slots: processes of a configuration at a time."""
    per = {n: sum(1 for p in procs if p.config == n) for n in names}
    if life:
        what = "%d processes at a time, %d in all, each for %d rounds" % (
            slots, sum(per.values()), life)
    else:
        what = "%d processes" % slots
    lines = ["lockstep: %d rounds, %d configurations x %s, %s, seed %d" % (
        rounds, len(names), what, "stopped between turns" if stopped else "not stopped",
        seed)]
    if rounds == 0 or not all(p.blocks for p in procs):
        return lines
    # the order the processes were started in, copy by copy: the bootstrap
    # draws in it (--reread gives a run's own figures again)
    procs = sorted(procs, key=lambda p: (p.copy, names.index(p.config)))
    by = {n: [p for p in procs if p.config == n] for n in names}
    ref = names[0]
    trim_rng = random.Random(seed + 1)
    for field, what in ((0, "time"), (1, "launching thread's CPU")):
        if any(len(b) <= field for p in procs for b in p.blocks.values()):
            continue
        dev = deviations(procs, field)
        eff = {k: mean(v) for k, v in dev.items()}
        teff = {k: trimmed(v) for k, v in dev.items()}
        lines.append("%s per step:" % what)
        for n in names:
            e = [eff[p.name] for p in by[n]]
            s = "  %-10s median block %.1f us" % (
                n, median([b[field] for p in by[n] for b in p.blocks.values()]))
            if per[n] > 1:
                s += ", process spread %.2f%%" % sd(e)
            if n != ref:
                er = [eff[p.name] for p in by[ref]]
                lo, hi = bootstrap(lambda g: mean(g[0]) - mean(g[1]), [e, er], rng)
                s += "; vs %s %+.2f%% (95%% %+.2f%% to %+.2f%%)" % (ref, mean(e) - mean(er), lo, hi)
                row = {"pct": round(mean(e) - mean(er), 3), "lo": round(lo, 3), "hi": round(hi, 3)}
                if per[n] > 2 and per[ref] > 2:
                    mlo, mhi = bootstrap(lambda g: median(g[0]) - median(g[1]), [e, er], rng)
                    s += ", medians %+.2f%% (%+.2f%% to %+.2f%%)" % (
                        median(e) - median(er), mlo, mhi)
                    row.update(median_pct=round(median(e) - median(er), 3),
                               median_lo=round(mlo, 3), median_hi=round(mhi, 3))
                # the same rounds' blocks paired, processes pooled: the time pairing alone
                d = []
                for r in sorted({r for p in procs for r in p.blocks}):
                    a = [math.log(p.blocks[r][field]) for p in by[n] if r in p.blocks]
                    b = [math.log(p.blocks[r][field]) for p in by[ref] if r in p.blocks]
                    if a and b:
                        d.append(100.0 * (mean(a) - mean(b)))
                s += ", rounds paired %+.2f%%" % mean(d)
                if life:
                    # a process's blocks 10% trimmed each side: a short-lived
                    # process's mean is moved by its few slowest blocks
                    te, tr = [teff[p.name] for p in by[n]], [teff[p.name] for p in by[ref]]
                    tlo, thi = bootstrap(lambda g: mean(g[0]) - mean(g[1]), [te, tr], trim_rng)
                    s += ", blocks trimmed %+.2f%% (%+.2f%% to %+.2f%%)" % (
                        mean(te) - mean(tr), tlo, thi)
                    row.update(trimmed_pct=round(mean(te) - mean(tr), 3),
                               trimmed_lo=round(tlo, 3), trimmed_hi=round(thi, 3))
                table.setdefault(n, {})[("time", "cpu")[field]] = row
            lines.append(s)
        if len(procs) > len(names) and len(procs) <= 200:
            lines.append("  processes: " + " ".join(
                "%s %+.2f" % (p.name, eff[p.name]) for p in procs))
    return lines


class Stopped(Exception):
    """SIGTERM (timeout(1), a device's time limit): end the rounds, keep what was measured."""


def on_term(sig, frame):
    raise Stopped()


class Compared:
    """A process as summary() sees it: its blocks past its first @skip only."""
    def __init__(self, config, name, copy, blocks, skip):
        self.config, self.name, self.copy = config, name, copy
        self.blocks = {r: blocks[r] for r in sorted(blocks)[skip:]}


def results(names, procs, rounds, skip, stop, slots, seed, life=None):
    """The summary's lines (without the exit line) and its table, of the rounds run."""
    table = {}
    kept = [Compared(p.config, p.name, p.copy, p.blocks, skip) for p in procs if p.blocks]
    kept = [p for p in kept if p.blocks]
    if not kept or {p.config for p in kept} != set(names):
        return ["lockstep: no round to compare (%d run, each process's first %d skipped)" % (
            rounds, skip)], table
    compared = len({r for p in kept for r in p.blocks})
    return summary(names, kept, compared, random.Random(seed), stop, slots, seed, table,
                   life), table


def write_blocks(out, rows):
    with open(os.path.join(out, "blocks.csv"), "w") as f:
        f.write("round,process,config,order,us_per_step,cpu_us_per_step\n")
        for r, n, c, k, fig in rows:
            f.write("%d,%s,%s,%d,%s\n" % (r, n, c, k, ",".join("%.3f" % x for x in fig)))


def write_summary(out, names, lines, table, rounds, slots, rcs):
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
        json.dump({"reference": names[0], "rounds": rounds, "copies": slots,
                   "vs_reference": table, "exit": rcs}, f, indent=1, sort_keys=True)
        f.write("\n")
    return text, bad


def reread(path, names, skip, seed, life=None):
    """The summary's lines of the blocks in @path, configurations @names only."""
    import lzma
    by = {}
    nrows = {}
    try:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
            head = f.readline().strip().split(",")
            if head[:5] != ["round", "process", "config", "order", "us_per_step"]:
                sys.exit("lockstep: %s is not a blocks.csv (its first line: %s)" % (
                    path, ",".join(head)))
            for k, line in enumerate(f, 2):
                w = line.strip().split(",")
                if len(w) < 5 or "." not in w[1]:
                    sys.exit("lockstep: %s: line %d is not a block: %s" % (path, k, line.strip()))
                r = int(w[0])
                nrows[r] = nrows.get(r, 0) + 1
                if w[2] in names:
                    by.setdefault(w[1], (w[2], {}))[1][r] = [float(x) for x in w[4:]]
    except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError) as e:
        sys.exit("lockstep: cannot read %s: %s" % (path, e))
    except ValueError as e:
        sys.exit("lockstep: %s: not a number where a block's figures are: %s" % (path, e))
    missing = [n for n in names if not any(c == n for c, _ in by.values())]
    if missing:
        sys.exit("lockstep: %s has no blocks of %s" % (path, ", ".join(missing)))
    # a last round cut short by a time limit (runs before --lifetime wrote
    # it) is not compared: fewer blocks than any round before it
    last = max(nrows)
    if len(nrows) > 1 and nrows[last] < min(v for r, v in nrows.items() if r != last):
        for _, b in by.values():
            b.pop(last, None)
    procs = []
    for name, (config, blocks) in by.items():
        procs.append(Compared(config, name, int(name.rsplit(".", 1)[1]), blocks, skip))
    procs = [p for p in procs if p.blocks]
    rounds = {r for p in procs for r in p.blocks}
    if not rounds or {p.config for p in procs} != set(names):
        return ["lockstep: no round to compare (each process's first %d skipped)" % skip]
    slots = max(sum(1 for p in procs if p.config == n and r in p.blocks)
                for n in names for r in rounds)
    return summary(names, procs, len(rounds), random.Random(seed), True, slots, seed, {}, life)


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
    ap.add_argument("--lifetime", type=int, default=0, metavar="M")
    ap.add_argument("--start-off-cpu", type=int, default=-1, metavar="C")
    ap.add_argument("--out", default="lockstep-out")
    ap.add_argument("--reread", metavar="BLOCKS.CSV")
    ap.add_argument("--configs", metavar="REF,NAME...")
    a = ap.parse_args()
    if a.lifetime < 0:
        sys.exit("lockstep: --lifetime wants 0 (no turnover) or more rounds")
    if a.start_off_cpu >= 0 and (a.start_off_cpu not in os.sched_getaffinity(0) or
                                 len(os.sched_getaffinity(0)) < 2):
        sys.exit("lockstep: --start-off-cpu %d: not one of this process's CPUs, or its only one" %
                 a.start_off_cpu)
    if a.reread:
        names = (a.configs or "").split(",")
        if len(names) < 2 or "" in names or len(set(names)) != len(names):
            sys.exit("lockstep: --reread wants --configs REF,NAME... (two names or more)")
        sys.stdout.write("\n".join(reread(a.reread, names, a.skip, a.seed,
                                          a.lifetime or None)) + "\n")
        return 0
    configs = parse_pairs(a.config, "config")
    after = dict(parse_pairs(a.after, "after"))
    names = [n for n, _ in configs]
    cmds = dict(configs)
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
    life = a.lifetime or None
    nslots = a.copies * len(names)
    copies = {n: a.copies for n in names}

    def joined(p):
        """Run its --after command and stop it: it takes turns from the next round."""
        if p.config in after:
            cmd = expand(after[p.config], out, p.name)
            r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            print("lockstep: after %s: rc %d: %s" % (p.name, r.returncode, r.stdout.strip()))
            if r.returncode:
                sys.exit("lockstep: --after %s failed" % p.name)
        if stop:
            p.signal(signal.SIGSTOP)
        p.ready = True

    slots = []        # a process of the slot's configuration, or None between two
    succ = {}         # slot: the process that takes it next, started ahead
    procs = []        # every process started
    rows = []
    rounds = 0
    # a successor starts this many of its predecessor's turns before the
    # last, so that it is ready when the slot frees: 1.5 times the most
    # rounds a start has taken so far, and 1 more
    lead = a.skip
    stopped = False
    signal.signal(signal.SIGTERM, on_term)
    try:
        for k in range(1, a.copies + 1):
            for n in names:
                # with --lifetime, the first processes' lives are staggered
                # (slot i of S: the skipped rounds and M (i + 1) / S more), so
                # that about S / M of them are replaced each round, not all at once
                i = len(slots)
                first = a.skip + max(1, round(life * (i + 1) / nslots)) if life else None
                slots.append(Proc(n, k, cmds[n], fifo_dir, out, stop, first, a.start_off_cpu))
                procs.append(slots[-1])
        for p in slots:
            p.connect()
            joined(p)
        t_end = time.monotonic() + a.seconds
        while rounds < a.rounds + a.skip and time.monotonic() < t_end:
            for i, q in list(succ.items()):
                if not q.ready and q.joined():
                    joined(q)
                    lead = max(lead, math.ceil(1.5 * (rounds - q.started)) + 1)
                if q.ready and slots[i] is None:
                    slots[i] = q
                    del succ[i]
            order = [p for p in slots if p]
            if not order:       # every slot waits for its successor
                time.sleep(0.02)
                continue
            rng.shuffle(order)
            done = [(p, p.turn()) for p in order]
            # a round's blocks are kept once the round is whole: one cut
            # short by a time limit is neither compared nor written
            for k, (p, fig) in enumerate(done):
                p.blocks[rounds] = fig
                rows.append((rounds, p.name, p.config, k, fig))
            rounds += 1
            for i, p in enumerate(slots):
                if not (p and life):
                    continue
                if p.turns >= p.life - lead and i not in succ:
                    copies[p.config] += 1
                    q = succ[i] = Proc(p.config, copies[p.config], cmds[p.config],
                                       fifo_dir, out, stop, a.skip + life, a.start_off_cpu)
                    q.started = rounds
                    procs.append(q)
                if p.turns >= p.life:
                    p.quit()          # it ends beside the rounds; reaped below
                    slots[i] = None
            for p in procs:
                if p.go is None and p.pid is not None:
                    p.reap()
    except Stopped:
        stopped = True
        print("lockstep: stopped (SIGTERM) after %d rounds: the summary keeps them" % rounds)
    finally:
        # the figures first: the processes' ends (a profile writing its
        # report each) take seconds, and a time limit may fall meanwhile
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        write_blocks(out, rows)
        lines, table = results(names, procs, rounds, a.skip, stop, a.copies, a.seed, life)
        write_summary(out, names, lines, table, rounds, a.copies, None)
        unready = [q for q in succ.values() if not q.ready]
        for p in unready:
            p.abandon()    # measured nothing: no exit status to report
        ended = [p for p in procs if p not in unready]
        for p in ended:
            p.quit()   # all at once: they end side by side
        rcs = {}
        for p in ended:
            rcs[p.name] = p.finish()
        for f in os.listdir(fifo_dir):
            os.unlink(os.path.join(fifo_dir, f))
        os.rmdir(fifo_dir)

    text, bad = write_summary(out, names, lines, table, rounds, a.copies, rcs)
    sys.stdout.write(text)
    return 1 if bad or stopped else 0


if __name__ == "__main__":
    sys.exit(main())
