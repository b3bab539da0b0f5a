#!/usr/bin/env python3
"""kmetrics_check.py - checks of `profile --kernel-metrics` on the GPU (t_kmetrics.sh).

usage: kmetrics_check.py WHAT STATS.json [PROGRAM-OUTPUT] [NCU.csv]
  WHAT: kernels (gpu_kmetrics), cublas-bf16, cublas-fp32
Reads `gpuscope stats --report cuda_kern_metrics --format json`, prints every
profiled instance's values and one PASS or FAIL line per expectation.  The
thresholds and why they are what they are are written beside each check.
"""
import csv
import json
import sys

fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1


def load(path):
    tables = json.load(open(path))
    t = [x for x in tables if x.get("report") == "cuda_kern_metrics"][0]
    if t.get("note"):
        print("note: " + t["note"])
    return t.get("rows", [])


def val(row, col):
    v = row.get(col)
    return v if isinstance(v, (int, float)) else None


def show(rows):
    for r in rows:
        cells = ", ".join("%s=%s" % (k, "-" if v is None else v) for k, v in r.items() if k != "Kernel")
        print("  %s: %s" % (r.get("Kernel"), cells))


def instances(rows, name):
    return [r for r in rows if name in (r.get("Kernel") or "")]


def tensor(row):
    """The busiest tensor pipe of an instance (HMMA, GMMA or the generic one), None if none known."""
    v = [val(row, c) for c in ("Tensor HMMA Pipe (%)", "Tensor GMMA Pipe (%)", "Tensor Pipe (%)")]
    v = [x for x in v if x is not None]
    return max(v) if v else None


def ncu_values(path):
    """{kernel substring: {metric: value}} for the first instance of each kernel in an ncu CSV."""
    out = {}
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    for r in rows:
        name = r.get("Kernel Name") or r.get("Function Name") or ""
        if "Metric Name" in r:   # --page details: one row per metric
            try:
                v = float(r["Metric Value"].replace(",", ""))
            except ValueError:
                continue
            out.setdefault(name, {}).setdefault(r["Metric Name"], v)
        else:                    # --page raw: one row per kernel, a column per metric
            d = out.setdefault(name, {})
            for k, x in r.items():
                try:
                    d.setdefault(k, float(x.replace(",", "")))
                except (ValueError, AttributeError):
                    pass
    return out


def main():
    what, stats = sys.argv[1], sys.argv[2]
    prog_out = sys.argv[3] if len(sys.argv) > 3 else None
    ncu = sys.argv[4] if len(sys.argv) > 4 else None
    rows = load(stats)
    show(rows)
    check(len(rows) > 0, "%s: profiled instances recorded (%d)" % (what, len(rows)))
    for r in rows:
        # basic metrics exist on every GPU the Range Profiler supports (Turing and later)
        for c in ("SM Throughput (%)", "DRAM Throughput (%)", "Achieved Occupancy (%)"):
            if c in r:
                check(val(r, c) is not None, "%s: %s is available for %s" % (what, c, r["Kernel"]))
        if val(r, "Cost (x)") is not None:
            print("  cost: %s instance %s: replay took %.1fx the kernel's time"
                  % (r["Kernel"], r["Instance"], r["Cost (x)"]))
    if what == "kernels":
        expect = {"wmma_gemm_bf16": 2, "wmma_peak_bf16": 2, "sgemm_fp32": 2, "copy_f4": 2, "axpy_f32": 2}
        for k, n in expect.items():
            # --kernel-count 2: exactly the first two instances of each kernel
            check(len(instances(rows, k)) == n, "%s: %d instances profiled (%d)"
                  % (k, n, len(instances(rows, k))))
        for r in instances(rows, "wmma_peak_bf16"):
            # nothing but mma.sync on registers, 32 warps per SM: the HMMA pipe is busy most
            # cycles; 40% leaves room for Hopper issuing mma.sync below the pipe's peak
            t = tensor(r)
            check(t is not None and t >= 40, "wmma_peak_bf16: tensor pipe %s%% >= 40%%" % t)
        for r in instances(rows, "wmma_gemm_bf16"):
            # a simple tiled WMMA GEMM (no double buffering, global loads it waits on): its tensor
            # pipe is busy a few per cent of cycles (2.9% on the H200, session 5, long-scoreboard
            # stalls dominate), well above the FP32 GEMM's 0: 1% tells the two apart
            t = tensor(r)
            check(t is not None and t >= 1, "wmma_gemm_bf16: tensor pipe %s%% >= 1%%" % t)
        for r in instances(rows, "sgemm_fp32"):
            # FP32 FMA only: the tensor pipes must be idle (1% allows counter noise)
            t = tensor(r)
            check(t is not None and t <= 1, "sgemm_fp32: tensor pipe %s%% <= 1%%" % t)
        bw = nbytes = None
        for line in open(prog_out) if prog_out else []:
            if line.startswith("copy_bw_gbs "):
                bw = float(line.split()[1])
            if line.startswith("copy_bytes "):
                nbytes = float(line.split()[1])
        for k in ("copy_f4", "axpy_f32"):
            for r in instances(rows, k):
                # a streaming kernel over 1-2 GiB: DRAM-bound; 60% of peak is what any such
                # kernel reaches on HBM (the H200's measured copy rate is ~80% of its peak)
                d = val(r, "DRAM Throughput (%)")
                check(d is not None and d >= 60, "%s: DRAM throughput %s%% >= 60%%" % (k, d))
        for r in instances(rows, "copy_f4")[:1]:
            rd, wr, dur = val(r, "DRAM Read (MB)"), val(r, "DRAM Written (MB)"), val(r, "Duration (ns)")
            if rd is not None and wr is not None:   # the report shows megabytes (10^6 bytes)
                rd, wr = rd * 1e6, wr * 1e6
            if nbytes and rd is not None and wr is not None:
                # the copy reads and writes each byte once: the counters must see that (10%)
                check(abs(rd - nbytes) <= 0.1 * nbytes and abs(wr - nbytes) <= 0.1 * nbytes,
                      "copy_f4: DRAM read %.0f and written %.0f bytes, expected %.0f each"
                      % (rd, wr, nbytes))
                if bw and dur:
                    cbw = (rd + wr) / dur   # bytes per ns = GB/s
                    # the counters' bandwidth against the same copy timed with events
                    # (unprofiled); 15%: the profiled instance is a single, cold launch
                    check(abs(cbw - bw) <= 0.15 * bw,
                          "copy_f4: counter bandwidth %.0f GB/s within 15%% of the measured %.0f GB/s"
                          % (cbw, bw))
    elif what == "cublas-bf16":
        big = max(rows, key=lambda r: val(r, "Duration (ns)") or 0) if rows else None
        if big:
            # cuBLAS's bf16 GEMM kernel (wgmma on Hopper) runs the tensor cores near peak
            t = tensor(big)
            check(t is not None and t >= 40, "cuBLAS bf16 GEMM (%s): tensor pipe %s%% >= 40%%"
                  % (big["Kernel"], t))
    elif what == "cublas-fp32":
        for r in rows:
            # cublasSgemm with TF32 off: no kernel may use the tensor cores
            t = tensor(r)
            check(t is not None and t <= 1, "cuBLAS FP32 GEMM (%s): tensor pipe %s%% <= 1%%"
                  % (r["Kernel"], t))
    if ncu:
        # the same kernels under `ncu --clock-control none`: agree within 10% (or 2 points
        # of a percentage near 0), the acceptance of issue 24
        nv = ncu_values(ncu)
        pairs = [("SM Throughput (%)", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                 ("DRAM Throughput (%)", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                 ("Tensor HMMA Pipe (%)",
                  "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
                 ("Achieved Occupancy (%)", "sm__warps_active.avg.pct_of_peak_sustained_active")]
        for name, d in nv.items():
            mine = [r for r in rows if r.get("Instance") == 0 and (r.get("Kernel") or "").split("(")[0]
                    in name]
            if not mine:
                continue
            for col, metric in pairs:
                a, b = val(mine[0], col), d.get(metric)
                if a is None or b is None:
                    continue
                ok = abs(a - b) <= max(0.1 * abs(b), 2.0)
                check(ok, "ncu: %s %s = %.2f, gpuscope %.2f" % (name[:40], metric, b, a))
    print("%d check(s) failed" % fails if fails else "all checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
