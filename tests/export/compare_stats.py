#!/usr/bin/env python3
"""compare_stats.py GPUSCOPE REPORT EXPORT.sqlite QUERIES.sql

Runs the queries of QUERIES.sql (written against the nsys export schema) on
gpuscope's SQLite export of REPORT and compares their totals with what
`gpuscope stats --format json` prints for the same report:
  kernels     <-> cuda_gpu_kern_sum  (Name, Instances, Total Time)
  api         <-> cuda_api_sum       (Name, Num Calls, Total Time)
  memops_time <-> cuda_gpu_mem_time_sum (Operation, Count, Total Time)
                  and cuda_gpu_mem_size_sum (Operation, Total (MB))
  nvtx        <-> nvtx_sum           (Range, Style, Instances, Total Time)
  osrt        <-> osrt_sum           (Name, Num Calls, Total Time)
  api_threads <-> the pid/tid pairs of cuda_api_trace
and checks that every launch with a kernel joins on correlationId.
Exits 1 with the first difference; prints one summary line.
"""
import json
import re
import sqlite3
import subprocess
import sys


def fail(msg):
    print("compare_stats: FAIL: " + msg)
    sys.exit(1)


def queries(path):
    out, name, buf = {}, None, []
    for line in open(path):
        m = re.match(r"^-- name: (\S+)", line)
        if m:
            if name:
                out[name] = "".join(buf)
            name, buf = m.group(1), []
        elif name and not line.startswith("--"):
            buf.append(line)
    if name:
        out[name] = "".join(buf)
    return out


def stats(gpuscope, report, name):
    p = subprocess.run([gpuscope, "stats", "--report", name, "--format", "json", report],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("gpuscope stats --report %s failed: %s" % (name, p.stderr.strip()))
    doc = json.loads(p.stdout)
    tables = doc if isinstance(doc, list) else [doc]
    for t in tables:
        if t.get("report") == name:
            return t.get("rows") or []
    fail("no table %s in stats output" % name)


def compare(what, sql_rows, stat_rows, key, cols):
    """sql_rows: {key: tuple}; stat_rows: list of dicts; cols: stats columns for the tuple."""
    got = {}
    for r in stat_rows:
        k = key(r)
        if k in got:
            fail("%s: stats has %r twice" % (what, k))
        got[k] = tuple(r[c] for c in cols)
    if set(got) != set(sql_rows):
        fail("%s: names differ: only in stats %s, only in sqlite %s"
             % (what, sorted(set(got) - set(sql_rows))[:5], sorted(set(sql_rows) - set(got))[:5]))
    for k, v in sql_rows.items():
        for a, b, c in zip(v, got[k], cols):
            if isinstance(b, float):
                ok = abs(a - b) <= max(1e-6 * abs(b), 0.051)
            else:
                ok = a == b
            if not ok:
                fail("%s %r: %s is %r in sqlite, %r in stats" % (what, k, c, a, b))
    return len(sql_rows)


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    gpuscope, report, db, qfile = sys.argv[1:]
    q = queries(qfile)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = {name: con.execute(sql).fetchall() for name, sql in q.items()}
    n = 0
    n += compare("kernels", {r[0]: (r[1], r[2]) for r in rows["kernels"]},
                 stats(gpuscope, report, "cuda_gpu_kern_sum"), lambda r: r["Name"],
                 ["Instances", "Total Time (ns)"])
    n += compare("api", {r[0]: (r[1], r[2]) for r in rows["api"]},
                 stats(gpuscope, report, "cuda_api_sum"), lambda r: r["Name"],
                 ["Num Calls", "Total Time (ns)"])
    n += compare("memops time", {r[0]: (r[1], r[2]) for r in rows["memops_time"]},
                 stats(gpuscope, report, "cuda_gpu_mem_time_sum"), lambda r: r["Operation"],
                 ["Count", "Total Time (ns)"])
    size_rows = stats(gpuscope, report, "cuda_gpu_mem_size_sum")
    if size_rows:
        mb = "Total (MB)"
        n += compare("memops size", {r[0]: (r[1], r[3] / 1e6) for r in rows["memops_time"]},
                     size_rows, lambda r: r["Operation"], ["Count", mb])
    n += compare("nvtx", {(r[0], r[1]): (r[2], r[3]) for r in rows["nvtx"]},
                 stats(gpuscope, report, "nvtx_sum"), lambda r: (r["Range"], r["Style"]),
                 ["Instances", "Total Time (ns)"])
    n += compare("osrt", {r[0]: (r[1], r[2]) for r in rows["osrt"]},
                 stats(gpuscope, report, "osrt_sum"), lambda r: r["Name"],
                 ["Num Calls", "Total Time (ns)"])
    trace = stats(gpuscope, report, "cuda_api_trace")
    pairs = {(r["Pid"], r["Tid"]) for r in trace}
    if pairs != set(rows["api_threads"]):
        fail("api threads: stats %s, sqlite %s" % (sorted(pairs)[:5], sorted(rows["api_threads"])[:5]))
    print("compare_stats: ok: %d names agree across 6 reports; %d launches join their kernels; memory kinds %s"
          % (n, rows["launches_with_kernels"][0][0], dict(rows["device_memory_kinds"])))


main()
