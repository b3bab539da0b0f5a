#!/usr/bin/env python3
"""collect_names.py - gather distinct real kernel names for the classifier test.

Runs `gpuscope stats FILE --report cuda_gpu_kern_sum --format csv` on every
trace in tests/data and in the shared validation corpus, and writes one row
per distinct name to tests/data/kernels/names.tsv with the columns

    name  op  library  precision  tensor_cores  source

The four class columns are left as "?" for new names: they are filled and
reviewed by hand (the test must not take its expectations from the
classifier).  Rows already in the TSV keep their reviewed columns, so the
script can be re-run to add names from new traces.

Usage: tests/model/collect_names.py [--gpuscope build/gpuscope] [--shared DIR]
Standard library only.
"""
import argparse
import csv
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TSV = os.path.join(ROOT, "tests", "data", "kernels", "names.tsv")
EXTS = (".gpuscope", ".json", ".json.gz", ".sqlite", ".sqlite.gz")


def traces(dirs):
    for top, label in dirs:
        if not os.path.isdir(top):
            print("skip %s: not found" % top, file=sys.stderr)
            continue
        for d, _, files in sorted(os.walk(top)):
            for f in sorted(files):
                if f.endswith(EXTS) and "overlaid" not in f:
                    p = os.path.join(d, f)
                    yield p, label + "/" + os.path.relpath(p, top)


def names_of(gpuscope, path, tmp):
    if path.endswith(".sqlite.gz"):  # the importer reads plain SQLite files
        plain = os.path.join(tmp, os.path.basename(path)[:-3])
        with gzip.open(path, "rb") as i, open(plain, "wb") as o:
            shutil.copyfileobj(i, o)
        path = plain
    r = subprocess.run([gpuscope, "stats", path, "--report", "cuda_gpu_kern_sum", "--format", "csv"],
                       capture_output=True, text=True)
    if r.returncode:
        print("skip %s: %s" % (path, r.stderr.strip()[:200]), file=sys.stderr)
        return []
    rows = list(csv.reader(io.StringIO(r.stdout)))
    if not rows:
        return []
    col = rows[0].index("Name") if "Name" in rows[0] else len(rows[0]) - 1
    return [row[col] for row in rows[1:] if len(row) > col]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscope", default=os.path.join(ROOT, "build", "gpuscope"))
    shared = os.environ.get("GS_SHARED_DIR")
    if not shared:  # GS_SHARED_DIR, else shared/ beside the repo (CI), else /work/shared
        beside = os.path.join(os.environ.get("GS_SOURCE_DIR", ROOT), "..", "shared")
        shared = beside if os.path.isdir(beside) else "/work/shared"
    ap.add_argument("--shared", default=shared)
    a = ap.parse_args()
    old = {}
    if os.path.exists(TSV):
        with open(TSV, newline="") as f:
            for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if row and not row[0].startswith("#"):
                    old[row[0]] = row
    dirs = [(os.path.join(ROOT, "tests", "data"), "tests/data"),
            (os.path.join(a.shared, "validation"), "shared/validation")]
    out, seen, shapes = [], set(), set()
    with tempfile.TemporaryDirectory() as tmp:
        for path, label in traces(dirs):
            for n in names_of(a.gpuscope, path, tmp):
                if not n or n in seen or "\t" in n or "\n" in n or n.startswith("[unknown"):
                    continue
                seen.add(n)
                # one name per shape: tile sizes and template numbers make hundreds of
                # near-copies (Tensile, igemm, CatArrayBatchedCopy<..., 1|2|3, ...>) that test
                # nothing new; the shape is the name with digit runs as '#', first 70 chars
                shape = re.sub(r"[0-9]+", "#", n)[:70]
                if shape in shapes and n not in old:
                    continue
                shapes.add(shape)
                out.append(old.get(n, [n, "?", "?", "?", "?", label]))
    for n, row in old.items():  # reviewed rows whose trace is absent here stay
        if n not in seen:
            out.append(row)
    with open(TSV, "w", newline="") as f:
        f.write("# name\top\tlibrary\tprecision\ttensor_cores\tsource\n")
        w = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar=None, lineterminator="\n")
        for row in out:
            w.writerow(row)
    print("%d names (%d new) -> %s" % (len(out), sum(1 for r in out if r[1] == "?"), TSV))


if __name__ == "__main__":
    main()
