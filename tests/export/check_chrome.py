#!/usr/bin/env python3
"""check_chrome.py TRACE.json [--expect-slices N] [--expect-flows N] [--expect-counters N]

Checks a Chrome trace-event JSON file the way strict consumers read it:
  - strict JSON (no NaN/Infinity, no duplicate keys), an object with traceEvents;
  - ts/dur are numbers with at most three decimals (ns precision in us), ts >= 0;
  - slices ("X") of one (pid, tid) nest: taken by (ts, longest first), each
    slice ends no later than the slice enclosing it;
  - every (pid, tid) with slices has a thread_name, every pid a process_name;
  - flows (v2: bind_id + flow_out / flow_in): each id leaves exactly one
    slice and enters exactly one;
  - counters ("C") carry numeric args.
"""
import json
import sys
from decimal import Decimal


def fail(msg):
    print("check_chrome: FAIL: " + msg)
    sys.exit(1)


def strict_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            fail("duplicate key %r" % k)
        d[k] = v
    return d


def bad_constant(name):
    fail("non-standard JSON constant %s" % name)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        sys.exit(2)
    expect = {}
    for i in range(1, len(args), 2):
        expect[args[i]] = int(args[i + 1])
    with open(args[0], "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=strict_pairs,
                         parse_float=Decimal, parse_constant=bad_constant)
    except ValueError as e:
        fail("not strict JSON: %s" % e)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
    threads, procs = set(), set()
    slices = {}
    flows_out, flows_in = {}, {}
    counters = instants = 0
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        if ph == "M":
            if ev["name"] == "thread_name":
                threads.add((ev["pid"], ev["tid"]))
            elif ev["name"] == "process_name":
                procs.add(ev["pid"])
            continue
        for k in ("ts", "dur"):
            if k in ev:
                v = ev[k]
                if not isinstance(v, (int, Decimal)) or v < 0:
                    fail("bad %s in %r" % (k, ev))
                if isinstance(v, Decimal) and -v.as_tuple().exponent > 3:
                    fail("%s has more than 3 decimals: %s" % (k, v))
        if ph == "X":
            if "dur" not in ev or "name" not in ev:
                fail("X event without dur or name: %r" % ev)
            slices.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], -ev["dur"], ev["name"]))
            if "bind_id" in ev:
                d = flows_out if ev.get("flow_out") else flows_in if ev.get("flow_in") else None
                if d is None:
                    fail("bind_id without flow_in/flow_out")
                d[ev["bind_id"]] = d.get(ev["bind_id"], 0) + 1
        elif ph == "C":
            if not ev.get("args") or not all(isinstance(v, (int, Decimal)) for v in ev["args"].values()):
                fail("counter without numeric args: %r" % ev)
            counters += 1
        elif ph == "i":
            instants += 1
        else:
            fail("unexpected phase %r" % ph)
    nslices = 0
    for key, lst in slices.items():
        if key not in threads:
            fail("slices on pid %s tid %s without a thread_name" % key)
        if key[0] not in procs:
            fail("pid %s without a process_name" % key[0])
        lst.sort()
        stack = []
        for ts, negdur, name in lst:
            end = ts - negdur
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack and end > stack[-1][0]:
                fail("slice %r [%s, %s] partially overlaps %r (ends %s) on pid %s tid %s"
                     % (name, ts, end, stack[-1][1], stack[-1][0], key[0], key[1]))
            stack.append((end, name))
            nslices += 1
    for fid, n in flows_out.items():
        if n != 1 or flows_in.get(fid) != 1:
            fail("flow %s leaves %d slices and enters %d" % (fid, n, flows_in.get(fid, 0)))
    for fid in flows_in:
        if fid not in flows_out:
            fail("flow %s enters but never leaves" % fid)
    got = {"--expect-slices": nslices, "--expect-flows": len(flows_out), "--expect-counters": counters,
           "--expect-instants": instants}
    for k, v in expect.items():
        if got.get(k) != v:
            fail("%s: got %s, expected %d" % (k, got.get(k), v))
    print("check_chrome: ok: %d tracks, %d slices, %d flows, %d counter values, %d instants"
          % (len(slices), nslices, len(flows_out), counters, instants))


main()
