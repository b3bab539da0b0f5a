#!/usr/bin/env python3
"""check_perfetto.py TRACE PROTO [--expect-flows N] [--expect-slices N]

Decodes a Perfetto trace with `protoc --decode=perfetto.protos.Trace PROTO`
(the minimal .proto of the fields gpuscope writes) and checks it:
  - protoc decodes it, and prints no bare field numbers (unknown fields);
  - every track event names a track described by a TrackDescriptor, and
    every parent_uuid exists;
  - per track, SLICE_BEGIN/SLICE_END balance and ENDs never run below zero
    when the events are taken in (timestamp, file order) - the order the
    trace processor uses;
  - every interned name iid is defined before (in file order) its first use,
    after a packet that cleared the incremental state;
  - every flow id leaves exactly one slice and ends in exactly one slice.
Prints a summary line; exits 1 with a message on the first failure.
"""
import re
import subprocess
import sys


def fail(msg):
    print("check_perfetto: FAIL: " + msg)
    sys.exit(1)


def parse(text):
    """protoc text format -> nested lists of (key, value) (messages as lists)."""
    root = []
    stack = [root]
    for ln, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
            continue
        m = re.match(r'^([A-Za-z0-9_]+) \{$', s)
        if m:
            sub = []
            stack[-1].append((m.group(1), sub))
            stack.append(sub)
            continue
        m = re.match(r'^([A-Za-z0-9_]+): (.*)$', s)
        if not m:
            fail("line %d: cannot parse %r" % (ln, s))
        key, val = m.group(1), m.group(2)
        if val.startswith('"'):
            val = bytes(val[1:-1], "utf-8").decode("unicode_escape")
        stack[-1].append((key, val))
    return root


def get(msg, key, default=None):
    for k, v in msg:
        if k == key:
            return v
    return default


def get_all(msg, key):
    return [v for k, v in msg if k == key]


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        sys.exit(2)
    trace, proto = args[0], args[1]
    expect = {}
    i = 2
    while i < len(args):
        expect[args[i]] = int(args[i + 1])
        i += 2
    with open(trace, "rb") as f:
        data = f.read()
    p = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", proto.rsplit("/", 1)[0] or ".",
                        proto], input=data, capture_output=True)
    if p.returncode != 0:
        fail("protoc could not decode: " + p.stderr.decode(errors="replace")[:500])
    text = p.stdout.decode()
    for ln, line in enumerate(text.splitlines(), 1):
        if re.match(r'^\s*[0-9]+(:| \{)', line):
            fail("unknown field at decoded line %d: %s" % (ln, line.strip()))
    packets = [v for k, v in parse(text) if k == "packet"]
    if not packets:
        fail("no packets")

    tracks = {}
    for pk in packets:
        td = get(pk, "track_descriptor")
        if td is not None:
            uuid = int(get(td, "uuid", 0))
            if uuid in tracks:
                fail("track uuid %d described twice" % uuid)
            tracks[uuid] = td
    for uuid, td in tracks.items():
        parent = get(td, "parent_uuid")
        if parent is not None and int(parent) not in tracks:
            fail("track %d has unknown parent %s" % (uuid, parent))

    cleared = False
    names = set()
    cats = set()
    dnames = set()
    events = []  # (ts, order, type, track)
    flows_out, flows_in = {}, {}
    counters = instants = 0
    for order, pk in enumerate(packets):
        flags = int(get(pk, "sequence_flags", 0))
        if flags & 1:
            cleared = True
        interned = get(pk, "interned_data")
        if interned is not None:
            if not cleared:
                fail("interned data before the incremental state was cleared")
            for e in get_all(interned, "event_names"):
                names.add(int(get(e, "iid")))
            for e in get_all(interned, "event_categories"):
                cats.add(int(get(e, "iid")))
            for e in get_all(interned, "debug_annotation_names"):
                dnames.add(int(get(e, "iid")))
        te = get(pk, "track_event")
        if te is None:
            continue
        if get(pk, "trusted_packet_sequence_id") is None:
            fail("track event without a sequence id")
        ts = int(get(pk, "timestamp", -1))
        if ts < 0:
            fail("track event without a timestamp")
        track = int(get(te, "track_uuid", 0))
        if track not in tracks:
            fail("event on undescribed track %d" % track)
        typ = get(te, "type")
        iid = get(te, "name_iid")
        if iid is not None:
            if not flags & 2:
                fail("event uses interned names without SEQ_NEEDS_INCREMENTAL_STATE")
            if int(iid) not in names:
                fail("name iid %s used before it is defined" % iid)
        for c in get_all(te, "category_iids"):
            if int(c) not in cats:
                fail("category iid %s not defined" % c)
        for d in get_all(te, "debug_annotations"):
            if int(get(d, "name_iid")) not in dnames:
                fail("debug annotation name iid not defined")
        for fl in get_all(te, "flow_ids"):
            flows_out[fl] = flows_out.get(fl, 0) + 1
        for fl in get_all(te, "terminating_flow_ids"):
            flows_in[fl] = flows_in.get(fl, 0) + 1
        if typ in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
            if typ == "TYPE_SLICE_BEGIN" and iid is None:
                fail("slice begin without a name")
            events.append((ts, order, typ, track))
        elif typ == "TYPE_COUNTER":
            if get(tracks[track], "counter") is None:
                fail("counter value on a track that is not a counter track")
            counters += 1
        elif typ == "TYPE_INSTANT":
            instants += 1
        else:
            fail("unexpected event type %s" % typ)

    events.sort()
    depth = {}
    slices = 0
    for ts, order, typ, track in events:
        if typ == "TYPE_SLICE_BEGIN":
            depth[track] = depth.get(track, 0) + 1
            slices += 1
        else:
            depth[track] = depth.get(track, 0) - 1
            if depth[track] < 0:
                fail("SLICE_END without an open slice on track %d at %d" % (track, ts))
    for track, d in depth.items():
        if d:
            fail("track %d ends with %d open slices" % (track, d))
    for fl, n in flows_out.items():
        if n != 1 or flows_in.get(fl) != 1:
            fail("flow %s leaves %d slices and ends in %d" % (fl, n, flows_in.get(fl, 0)))
    for fl in flows_in:
        if fl not in flows_out:
            fail("flow %s ends but never starts" % fl)
    got = {"--expect-slices": slices, "--expect-flows": len(flows_out), "--expect-counters": counters,
           "--expect-instants": instants}
    for k, v in expect.items():
        if got.get(k) != v:
            fail("%s: got %s, expected %d" % (k, got.get(k), v))
    print("check_perfetto: ok: %d packets, %d tracks, %d slices, %d flows, %d counter values, %d instants"
          % (len(packets), len(tracks), slices, len(flows_out), counters, instants))


main()
