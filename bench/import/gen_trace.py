#!/usr/bin/env python3
"""Write a large realistic Kineto trace by replicating the real events of a
recorded trace (default: tests/data/import/nccl_data.json.gz) with shifted
timestamps and correlation ids, until the output reaches SIZE_MB of JSON.

usage: gen_trace.py OUT.json SIZE_MB [SOURCE.json.gz]
"""
import gzip, json, sys

out, size_mb = sys.argv[1], float(sys.argv[2])
src = sys.argv[3] if len(sys.argv) > 3 else "tests/data/import/nccl_data.json.gz"
d = json.load(gzip.open(src))
events = [e for e in d["traceEvents"] if e.get("ph") == "X"]
t0 = min(e["ts"] for e in events)
t1 = max(e["ts"] + e.get("dur", 0) for e in events)
span = t1 - t0 + 1000
target = int(size_mb * 1e6)
with open(out, "w") as f:
    head = {k: v for k, v in d.items() if k != "traceEvents"}
    f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
    written, rep, first = 0, 0, True
    while written < target:
        lines = []
        for e in events:
            e2 = dict(e)
            e2["ts"] = round(e["ts"] + rep * span, 3)
            if "args" in e and "correlation" in e["args"]:
                a = dict(e["args"]); a["correlation"] = a["correlation"] + rep * 1000000
                e2["args"] = a
            lines.append(json.dumps(e2))
        chunk = (",\n" if not first else "") + ",\n".join(lines)
        first = False
        f.write(chunk)
        written += len(chunk)
        rep += 1
    f.write("\n]}\n")
print(f"{out}: {rep} copies of {len(events)} events")
