#!/usr/bin/env python3
"""pm_check.py DUMP INTERVAL_US - check PM sampling against the kernels it sampled.

DUMP is `gpuscope dump --type kernel,metric REPORT`.  A sample is stamped at
its end and covers the INTERVAL before it; a sample that lies wholly inside
one kernel is that kernel's.  Prints per kernel the mean of each pm_* counter
and PASS/FAIL lines for the expectations (tests/gpu/t_pmsample.sh).
"""
import bisect
import re
import sys
from collections import defaultdict

line_re = re.compile(r'^(\d+) (kernel|metric) (.*)$')
kv_re = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def parse(path):
    kernels, samples = [], []
    with open(path) as f:
        for line in f:
            m = line_re.match(line.strip())
            if not m:
                continue
            t, kind, rest = int(m.group(1)), m.group(2), m.group(3)
            kv = {k: v.strip('"') for k, v in kv_re.findall(rest)}
            if kind == 'kernel':
                name = kv.get('name', '').split('(')[0]
                kernels.append((t, t + int(kv['dur']), name))
            elif kv.get('name', '').startswith('pm_'):
                samples.append((t, kv['name'], float(kv['value'])))
    kernels.sort()
    return kernels, samples


def main():
    kernels, samples = parse(sys.argv[1])
    interval = int(sys.argv[2]) * 1000
    fails = 0
    names = sorted({s[1] for s in samples})
    print(f"{len(samples)} PM samples of {len(names)} counters: {', '.join(names)}; {len(kernels)} kernels")
    if not samples or not kernels:
        print("FAIL: no PM samples or no kernels")
        return 1
    starts = [k[0] for k in kernels]
    acc = defaultdict(list)
    inside = 0
    for t, name, v in samples:
        i = bisect.bisect_right(starts, t - interval) - 1
        if i >= 0 and kernels[i][0] <= t - interval and t <= kernels[i][1]:
            acc[(kernels[i][2], name)].append(v)
            inside += 1
    first_k, first_s = kernels[0][0], min(s[0] for s in samples)
    print(f"first kernel at {first_k} ns, first sample at {first_s} ns; {inside} samples wholly inside a kernel")
    for (k, n), vs in sorted(acc.items()):
        print(f"  {k:16s} {n:24s} n={len(vs):5d} mean={sum(vs) / len(vs):8.2f}")
    per = len(samples) / max(len(names), 1)
    span = max(s[0] for s in samples) - first_s
    expect = span / interval
    print(f"samples per counter {per:.0f} over {span / 1e6:.1f} ms; expected about {expect:.0f}")

    def check(what, ok):
        nonlocal fails
        print(("PASS: " if ok else "FAIL: ") + what)
        if not ok:
            fails += 1

    def mean(k, n):
        vs = acc.get((k, n), [])
        return sum(vs) / len(vs) if vs else None

    check("samples land inside kernels (timestamps on the report clock)", inside >= 20)
    check("one sample per interval (within 50%)", 0.5 * expect <= per <= 1.5 * expect)
    d = mean('copy_f4', 'pm_dram_throughput_pct')
    check(f"copy_f4 DRAM throughput {d} >= 60% of peak", d is not None and d >= 60)
    s = mean('sgemm_fp32', 'pm_dram_throughput_pct')
    check(f"sgemm_fp32 (compute, data in cache) DRAM throughput {s} under 10%", s is not None and s < 10)
    a = mean('axpy_f32', 'pm_dram_throughput_pct')
    check(f"axpy_f32 DRAM throughput {a} >= 60% of peak", a is not None and a >= 60)
    c = mean('copy_f4', 'pm_tensor_pipe_pct')
    check(f"copy_f4 tensor pipe {c} under 1%", c is None or c < 1)
    tp = mean('wmma_peak_bf16', 'pm_tensor_pipe_pct')
    if tp is None:
        print("SKIP: no tensor-pipe PM counter on this chip (or no sample inside wmma_peak_bf16)")
    else:
        check(f"wmma_peak_bf16 tensor pipe {tp} >= 30%", tp >= 30)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
