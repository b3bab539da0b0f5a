"""Summarise bench/overhead/run.sh's runs.txt: per workload and configuration,
the median over runs of each figure a run printed (us_per_step,
cpu_us_per_step, steal_ms, ...), and for each figure the paired overhead: the
median over rounds of the run's ratio to the same round's untraced ("none")
run.

usage: runs_summary.py RUNS.TXT...   (prints a Markdown table)

With several files (rounds of the same measurement), the rounds are pooled
(round r of file k is round "k.r") and each paired figure also gets a 95%
bootstrap interval of its median (10,000 resamples of the rounds' ratios,
seed 1), so that a machine's noise shows beside the figure.
"""
import random
import statistics
import sys

vals = {}   # (workload, config, field) -> {round: value}
for k, path in enumerate(sys.argv[1:]):
    for line in open(path):
        head, _, rest = line.partition(": ")
        words = rest.split()
        parts = head.split()
        if len(parts) != 3 or len(words) < 2:
            continue
        w, c, r = parts
        try:
            v = float(words[1])
        except ValueError:
            continue
        vals.setdefault((w, c, words[0]), {})["%d.%s" % (k, r)] = v
pooled = len(sys.argv) > 2

fields = sorted({f for (_, _, f) in vals if f != "blocks_us"})
print("| workload | config | figure | runs | median | paired vs none |")
print("|---|---|---|---|---|---|")
for (w, c, f) in sorted(vals, key=lambda k: (k[0], k[1] != "none", k[1], k[2])):
    if f == "blocks_us":
        continue
    by_round = vals[(w, c, f)]
    med = statistics.median(by_round.values())
    paired = ""
    base = vals.get((w, "none", f))
    if c != "none" and base and f != "steal_ms":
        ratios = [v / base[k] for k, v in by_round.items() if base.get(k)]
        if ratios:
            paired = "%+.2f%%" % ((statistics.median(ratios) - 1) * 100)
            if pooled and len(ratios) >= 4:
                rnd = random.Random(1)
                meds = sorted(statistics.median(rnd.choices(ratios, k=len(ratios)))
                              for _ in range(10000))
                paired += " (95%%: %+.2f%% to %+.2f%%, %d rounds)" % (
                    (meds[250] - 1) * 100, (meds[9749] - 1) * 100, len(ratios))
    print("| %s | %s | %s | %d | %.1f | %s |" % (w, c, f, len(by_round), med, paired))
