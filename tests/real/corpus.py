#!/usr/bin/python3
"""corpus.py - gpuscope analyze on every trace we hold, against what is expected of it.

Runs `gpuscope analyze --format json` on
  - every trace in <shared>/validation/real/, judged by real/expected.json;
  - every other trace under <shared>/validation/ (hta/, pipit/, ...);
  - every report and trace under the repository's tests/data/; the zoo's
    <case>.broken.gpuscope / <case>.fixed.gpuscope are judged by the case's
    finding ids from tests/analyze/zoo_map.h;
and prints one table (file, expected, top finding, its gain, pass/fail, reason)
ending with the line "N passed, N failed".  Exits 1 when any row fails.

Rules (docs/validation.md says the same):
  real/ row:  1. the top finding (largest gain) maps to a category in `accept`;
                 `healthy` in accept: no finding above 5%; `one-off` in accept:
                 no finding above 5% and a non-empty "one_offs" array;
              2. no finding of a `must_not` category above 5%;
              3. `share` a number and the verdict not healthy/one-off: the top
                 finding's gain g has |g - share| <= 0.10 or <= 0.30 * share.
  zoo row:    broken: the top finding's id is one of the case's ids;
              fixed: no finding of the case's ids above 5%.
  other row:  analyze exits 0 and prints JSON with a "findings" array.

Standard library only; run it with /usr/bin/python3.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

# The one category -> finding-id table (docs/validation.md shows the same).
# `healthy` and `one-off` are not findings: they are conditions on all findings.
CATEGORY_IDS = {
    "data-loading": ["data-loading"],
    "launch-bound": ["launch-bound"],
    "host-bound": ["host-bound"],
    "sync": ["synchronization"],
    "pageable-copy": ["pageable-copy"],
    "serial-copy": ["serial-copy"],
    "copy-bound": ["copy-bound"],
    "exposed-communication": ["exposed-communication", "straggler"],
    "tensor-cores-unused": ["tensor-cores-unused"],
    "under-filled": ["under-filled-launch"],
    "allocation": ["allocation-churn"],
    "memory": ["memory-pressure", "out-of-memory", "memory-fragmentation", "memory-leak"],
    "throttling": ["throttling"],
    "io": ["host-io"],
    "other": ["gpu-starvation", "small-copies", "numa-placement", "no-p2p-path", "latency-bound-kernel", "kernel-bound",
              "occupancy-limited"],
}
NO_FINDING_CATEGORIES = ("healthy", "one-off")

# A finding at or under 5% of the analysed time is noise for these checks:
# rules.md's min_gain (2%) hides findings inside run-to-run noise, and the
# expectations (real/expected.json's _about, zoo_map.h's fixed twins) call a
# run free of a problem when no finding of it is above 5%.
SIGNIFICANT_GAIN = 0.05
# Findings without a time gain (docs/rules.md; tests/analyze/zoo_map.h's
# zoo_no_gain_ids): a zoo case of one is right when the broken report has it
# and the fixed twin has not, whatever the gains.
NO_TIME_GAIN_IDS = ("memory-leak", "out-of-memory", "memory-fragmentation")
# The share check: the top gain is right when it is within 10 points of the
# share an engineer measured from the facts, or within 30% of it (relative),
# whichever is looser; the same tolerance test_zoo.c uses for the zoo.
SHARE_ABS_TOL = 0.10
SHARE_REL_TOL = 0.30
# Float slack so that a gain exactly on a bound is inside it.
EPS = 1e-9

DEFAULT_TIMEOUT_S = 60
TRACE_EXTS = (".json", ".json.gz", ".sqlite", ".sqlite.gz", ".gpuscope")
GZIP_MAGIC = b"\x1f\x8b"


def fail(msg):
    sys.stderr.write("corpus.py: error: %s\n" % msg)
    sys.exit(2)


def source_dir():
    env = os.environ.get("GS_SOURCE_DIR")
    if env:
        return os.path.abspath(env)
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def shared_dir(src):
    """GS_SHARED_DIR if set, else $GS_SOURCE_DIR/../shared, else /work/shared."""
    env = os.environ.get("GS_SHARED_DIR")
    if env:
        return env, "GS_SHARED_DIR"
    beside = os.path.join(src, "..", "shared")
    if os.path.isdir(beside):
        return os.path.abspath(beside), "$GS_SOURCE_DIR/../shared"
    return "/work/shared", "/work/shared"


def find_gpuscope(arg, src):
    for cand in (arg, os.environ.get("GPUSCOPE"), os.path.join(src, "build", "gpuscope")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("gpuscope")
    if found:
        return found
    fail("no gpuscope binary: pass --gpuscope PATH or set GPUSCOPE")


def open_maybe_gz(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


def json_is_trace(path):
    """Whether a JSON file is one gpuscope reads (docs/import.md): a bare
    array of events, or an object holding "traceEvents".  Searched as a
    stream, so a large trace is not loaded whole.  Returns (bool, why)."""
    key = b'"traceEvents"'
    try:
        with open_maybe_gz(path) as f:
            first = None
            tail = b""
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                if first is None:
                    stripped = block.lstrip()
                    if not stripped:
                        continue
                    first = stripped[:1]
                    if first == b"[":
                        return True, ""
                    if first != b"{":
                        return False, "not JSON"
                if key in tail + block:
                    return True, ""
                tail = block[-len(key):]
    except (OSError, EOFError) as e:
        # An unreadable gzip stream is for gpuscope to report: run it.
        return True, str(e)
    return False, "JSON without traceEvents"


def is_trace(path):
    name = path.lower()
    if not name.endswith(TRACE_EXTS):
        return False, "extension"
    if name.endswith((".json", ".json.gz")):
        return json_is_trace(path)
    return True, ""


def collect(root, label, exclude=None):
    """All candidate traces under root, as (label/relative path, path), sorted."""
    out = []
    skipped = []
    if not os.path.isdir(root):
        return out, skipped
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if exclude and os.path.abspath(dirpath) == os.path.abspath(exclude):
            dirnames[:] = []
            continue
        for fn in sorted(filenames):
            path = os.path.join(dirpath, fn)
            rel = os.path.join(label, os.path.relpath(path, root))
            ok, why = is_trace(path)
            if ok:
                out.append((rel, path))
            elif why != "extension":
                skipped.append("%s (%s)" % (rel, why))
    return out, skipped


def parse_zoo_map(path):
    """The zoo_cases[] table of tests/analyze/zoo_map.h: {case: [ids]}."""
    with open(path) as f:
        text = f.read()
    # drop comments so a commented-out row does not count
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    m = re.search(r"zoo_cases\s*\[\s*\]\s*=\s*\{(.*)\}\s*;", text, re.S)
    if not m:
        fail("%s: no zoo_cases[] table" % path)
    cases = {}
    for row in re.finditer(r'\{\s*"([^"]*)"\s*,\s*\{([^{}]*)\}\s*\}', m.group(1)):
        cases[row.group(1)] = re.findall(r'"([^"]*)"', row.group(2))
    if not cases:
        fail("%s: zoo_cases[] has no rows" % path)
    return cases


def zoo_expectation(rel, cases):
    """(kind, case, ids) for tests/data/zoo/<case>.{broken,fixed}.gpuscope."""
    parts = rel.split(os.sep)
    if len(parts) != 4 or parts[:3] != ["tests", "data", "zoo"]:
        return None
    m = re.fullmatch(r"(.+)\.(broken|fixed)\.gpuscope", parts[3])
    if not m or m.group(1) not in cases:
        return None
    ids = list(cases[m.group(1)])
    # host-bound is the finding that answers a CPU-bound loop, the same
    # evidence gpu-starvation stands for when no loader evidence exists.
    if "gpu-starvation" in ids and "host-bound" not in ids:
        ids.append("host-bound")
    return {"kind": "zoo-" + m.group(2), "case": m.group(1), "ids": ids}


def pct(g):
    return "%.1f%%" % (100 * g)


def run_analyze(gpuscope, path, timeout, tmpdir):
    """Returns (doc, error).  An nsys export kept gzip-compressed is
    decompressed first: SQLite reads a file it can seek, not a stream."""
    target = path
    if path.lower().endswith(".sqlite.gz"):
        fd, target = tempfile.mkstemp(suffix=".sqlite", dir=tmpdir)
        try:
            with gzip.open(path, "rb") as fi, os.fdopen(fd, "wb") as fo:
                shutil.copyfileobj(fi, fo)
        except (OSError, EOFError) as e:
            return None, "cannot decompress: %s" % e
    try:
        p = subprocess.run([gpuscope, "analyze", "--format", "json", target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout after %d s" % timeout
    finally:
        if target != path:
            os.unlink(target)
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "exit %d: %s" % (p.returncode, err[-1] if err else "no message")
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return None, "invalid JSON: %s" % e
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        return None, "no findings array"
    one_offs = doc.get("one_offs")
    if one_offs is not None and not (isinstance(one_offs, list) and all(
            isinstance(o, dict) and isinstance(o.get("what"), str) and
            all(isinstance(o.get(k), (int, float)) and not isinstance(o.get(k), bool)
                for k in ("start_s", "duration_s")) for o in one_offs)):
        return None, 'malformed "one_offs" (want [{"what": str, "start_s": num, "duration_s": num}])'
    for f in doc["findings"]:
        g = f.get("gain") if isinstance(f, dict) else None
        if not isinstance(f, dict) or not isinstance(f.get("id"), str) or \
                isinstance(g, bool) or not isinstance(g, (int, float)):
            return None, "finding without a string id and a numeric gain"
    return doc, None


def top_finding(findings):
    top = None
    for f in findings:
        if top is None or f["gain"] > top["gain"]:
            top = f
    return top


def share_applies(exp):
    """Whether criterion 3 applies: `share` is a number, the verdict is not
    healthy/one-off, and some accepted category is a finding (a row that
    accepts only healthy/one-off, as a first-launch trace whose verdict is
    "other", has no finding whose gain could stand for the share)."""
    share = exp.get("share")
    return isinstance(share, (int, float)) and not isinstance(share, bool) and \
        exp.get("verdict") not in NO_FINDING_CATEGORIES and \
        any(c in CATEGORY_IDS for c in exp.get("accept") or [])


def check_real(doc, exp):
    """Reasons the row fails (empty: it passes)."""
    reasons = []
    findings = doc["findings"]
    top = top_finding(findings)
    accept = exp.get("accept") or []
    must_not = exp.get("must_not") or []
    big = [f for f in findings if f["gain"] > SIGNIFICANT_GAIN + EPS]

    if not accept:
        reasons.append("expected.json gives no accept")
    for c in accept + must_not:
        if c not in CATEGORY_IDS and c not in NO_FINDING_CATEGORIES:
            reasons.append("unknown category %s" % c)

    # 1. the top finding, or the no-finding conditions
    matched = None                 # how criterion 1 passed
    if top is not None:
        for c in accept:
            if top["id"] in CATEGORY_IDS.get(c, []):
                matched = "finding"
    if matched is None and "healthy" in accept and not big:
        matched = "healthy"
    if matched is None and "one-off" in accept and not big:
        one_offs = doc.get("one_offs")
        if isinstance(one_offs, list) and one_offs:
            matched = "one-off"
    if matched is None:
        acc = "[%s]" % " ".join(accept)
        if any(c in CATEGORY_IDS for c in accept):
            if top is None:
                reasons.append("no finding; accept %s" % acc)
            else:
                reasons.append("top %s not in accept %s" % (top["id"], acc))
        if any(c in NO_FINDING_CATEGORIES for c in accept):
            if big:
                reasons.append("%s at %s > 5%%" % (top["id"], pct(top["gain"])))
            elif "one-off" in accept:
                reasons.append("no one_offs")

    # 2. no contradicted finding above 5%
    for c in must_not:
        for f in big:
            if f["id"] in CATEGORY_IDS.get(c, []):
                reasons.append("must_not %s at %s" % (c, pct(f["gain"])))

    # 3. the size of the top finding.  Not applied where the verdict is
    # healthy/one-off, nor where criterion 1 passed by healthy/one-off
    # (there is then no finding whose gain stands for the share).
    if share_applies(exp) and matched not in NO_FINDING_CATEGORIES:
        share = exp["share"]
        g = top["gain"] if top is not None else 0.0
        d = abs(g - share)
        if not (d <= SHARE_ABS_TOL + EPS or d <= SHARE_REL_TOL * share + EPS):
            reasons.append("gain %.2f vs share %.2f" % (g, share))
    return reasons


def check_zoo(doc, exp):
    findings = doc["findings"]
    ids = exp["ids"]
    if ids and ids[0] in NO_TIME_GAIN_IDS:
        # no time gain (gain 0, ranked after every time gain): judged by presence
        present = [f for f in findings if f["id"] in ids]
        if exp["kind"] == "zoo-broken":
            return [] if present else ["no %s finding" % ids[0]]
        return ["%s on the fixed twin" % f["id"] for f in present]
    if exp["kind"] == "zoo-broken":
        top = top_finding(findings)
        if top is None:
            return ["no finding; accept [%s]" % " ".join(ids)]
        if top["id"] not in ids:
            return ["top %s not in accept [%s]" % (top["id"], " ".join(ids))]
        return []
    return ["%s at %s on the fixed twin" % (f["id"], pct(f["gain"]))
            for f in findings if f["id"] in ids and f["gain"] > SIGNIFICANT_GAIN + EPS]


def expected_text(exp):
    if exp is None:
        return "-"
    if exp["kind"] == "real":
        s = "/".join(exp.get("accept") or [])
        share = exp.get("share")
        if share_applies(exp):
            s += " ~%.2f" % share
        return s
    if exp["kind"] == "zoo-broken":
        return "/".join(exp["ids"])
    return "no %s >5%%" % "/".join(exp["ids"])


def judge(row, gpuscope, timeout, tmpdir):
    exp = row["exp"]
    if row.get("missing"):
        doc, err = None, "file listed in expected.json is missing"
    else:
        doc, err = run_analyze(gpuscope, row["path"], timeout, tmpdir)
    row["expected"] = expected_text(exp)
    row["top"], row["gain"] = "-", None
    if doc is not None:
        top = top_finding(doc["findings"])
        if top is not None:
            row["top"], row["gain"] = top["id"], top["gain"]
        row["one_offs"] = len(doc["one_offs"]) if isinstance(doc.get("one_offs"), list) else None
    if err:
        row["reasons"] = [err]
    elif exp is None:
        row["reasons"] = []
    elif exp["kind"] == "real":
        row["reasons"] = check_real(doc, exp)
    else:
        row["reasons"] = check_zoo(doc, exp)
    row["ok"] = not row["reasons"]
    row["gains"] = [(f.get("id"), f.get("gain")) for f in doc["findings"]] if doc is not None else []
    return row


def load_disagreements(path):
    """file -> (finding id, max gain, why) from tests/real/disagreements.tsv."""
    out = {}
    if not os.path.isfile(path):
        return out
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 4:
                fail("%s: expected 4 tab-separated columns: %r" % (path, line))
            out[cols[0]] = (cols[1], float(cols[2]), cols[3])
    return out


def apply_disagreement(row, dis, doc_gains):
    """A documented disagreement: the row's only failures concern the listed finding, within its bound."""
    finding, max_gain, _ = dis
    words = finding.split("|")          # the finding id, then its category names
    if row["ok"]:
        row["ok"], row["reasons"] = False, ["listed in disagreements.tsv but passes: remove it"]
        return
    if not all(any(w in r for w in words) for r in row["reasons"]):
        return
    if any(i == words[0] and g > max_gain for i, g in doc_gains):
        row["reasons"].append("%s above the documented %.2f" % (words[0], max_gain))
        return
    row["disagree"] = True


def print_table(rows, markdown, out):
    head = ["file", "expected", "top finding", "gain", "result", "reason"]
    body = [[r["file"], r["expected"], r["top"], "-" if r["gain"] is None else pct(r["gain"]),
             "pass" if r["ok"] else "disagree" if r.get("disagree") else "FAIL", "; ".join(r["reasons"])]
            for r in rows]
    if markdown:
        esc = lambda s: s.replace("|", "\\|")
        out.write("| " + " | ".join(head) + " |\n")
        out.write("|" + "|".join("---" for _ in head) + "|\n")
        for b in body:
            out.write("| " + " | ".join(esc(c) for c in b) + " |\n")
        return
    width = [max(len(x[i]) for x in [head] + body) for i in range(len(head) - 1)]
    for b in [head] + body:
        cells = [b[i].ljust(width[i]) for i in range(len(width))] + [b[-1]]
        out.write("  ".join(cells).rstrip() + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuscope", help="the gpuscope binary (default: $GPUSCOPE, build/gpuscope, PATH)")
    ap.add_argument("--only", help="only files whose shown path contains SUBSTRING")
    ap.add_argument("--json", metavar="OUT", help="also write the rows as JSON to OUT")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S,
                    help="seconds per analyze run (default %d)" % DEFAULT_TIMEOUT_S)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="analyze runs at once (default: the CPU count)")
    args = ap.parse_args()

    src = source_dir()
    gpuscope = find_gpuscope(args.gpuscope, src)
    shared, how = shared_dir(src)
    validation = os.path.join(shared, "validation")
    real = os.path.join(validation, "real")
    zoo_cases = parse_zoo_map(os.path.join(src, "tests", "analyze", "zoo_map.h"))

    rows, skipped = [], []
    if os.path.isdir(validation):
        print("shared: %s (from %s)" % (shared, how))
        expected = {}
        exp_path = os.path.join(real, "expected.json")
        if os.path.isdir(real):
            if not os.path.isfile(exp_path):
                fail("%s is missing" % exp_path)
            with open(exp_path) as f:
                expected = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
        files, sk = collect(real, "real")
        skipped += sk
        seen = set()
        for rel, path in files:
            name = os.path.relpath(path, real)
            seen.add(name)
            exp = expected.get(name)
            rows.append({"file": rel, "path": path,
                         "exp": dict(exp, kind="real") if exp is not None else None})
        for name in sorted(set(expected) - seen):
            rows.append({"file": os.path.join("real", name), "path": os.path.join(real, name),
                         "exp": dict(expected[name], kind="real"), "missing": True})
        files, sk = collect(validation, "", exclude=real)
        skipped += sk
        rows += [{"file": rel, "path": path, "exp": None} for rel, path in files]
    else:
        print("shared: %s (from %s) has no validation/: only tests/data is checked" % (shared, how))
    files, sk = collect(os.path.join(src, "tests", "data"), os.path.join("tests", "data"))
    skipped += sk
    rows += [{"file": rel, "path": path, "exp": zoo_expectation(rel, zoo_cases)} for rel, path in files]

    if args.only:
        rows = [r for r in rows if args.only in r["file"]]
        skipped = [s for s in skipped if args.only in s]
    if not rows:
        fail("no trace to check")

    with tempfile.TemporaryDirectory(prefix="gs-corpus-") as tmpdir, \
            ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda r: judge(r, gpuscope, args.timeout, tmpdir), rows))

    disagreements = load_disagreements(os.path.join(src, "tests", "real", "disagreements.tsv"))
    for r in rows:
        if r["file"] in disagreements:
            apply_disagreement(r, disagreements[r["file"]], r.get("gains", []))
    print_table(rows, args.markdown, sys.stdout)
    if skipped:
        print("skipped, not a trace gpuscope reads: " + ", ".join(skipped))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: r.get(k) for k in ("file", "expected", "top", "gain", "ok", "reasons", "one_offs")}
                       for r in rows], f, indent=1)
            f.write("\n")
    npass = sum(1 for r in rows if r["ok"])
    ndis = sum(1 for r in rows if r.get("disagree"))
    for r in rows:
        if r.get("disagree"):
            print("disagreement (tests/real/disagreements.tsv): %s: %s" % (r["file"], disagreements[r["file"]][2]))
    print("%d passed, %d failed, %d skipped" % (npass, len(rows) - npass - ndis, ndis))
    sys.stdout.flush()
    return 0 if npass + ndis == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
