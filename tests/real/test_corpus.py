#!/usr/bin/python3
"""test_corpus.py - the checks of corpus.py on made-up analyze documents and a
fake gpuscope, so that the harness itself is known to be strict.

Standard library only; run it with /usr/bin/python3.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402


def doc(*findings, one_offs=None):
    d = {"schema": "gpuscope-analyze/1",
         "findings": [{"id": i, "gain": g} for i, g in findings]}
    if one_offs is not None:
        d["one_offs"] = one_offs
    return d


def real(accept, must_not=(), share=None, verdict="x"):
    return {"kind": "real", "accept": list(accept), "must_not": list(must_not),
            "share": share, "verdict": verdict}


ONE_OFF = [{"what": "first launch", "start_s": 0.0, "duration_s": 1.2}]


class RealRows(unittest.TestCase):
    def test_healthy(self):
        e = real(["healthy"], verdict="healthy")
        self.assertEqual(corpus.check_real(doc(), e), [])
        self.assertEqual(corpus.check_real(doc(("gpu-starvation", 0.05)), e), [])
        self.assertEqual(corpus.check_real(doc(("gpu-starvation", 0.055)), e),
                         ["gpu-starvation at 5.5% > 5%"])

    def test_one_off_needs_one_offs(self):
        e = real(["one-off"], share=0.98, verdict="other")
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.03), one_offs=ONE_OFF), e), [])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.03)), e), ["no one_offs"])
        self.assertEqual(corpus.check_real(doc(one_offs=[]), e), ["no one_offs"])
        self.assertEqual(corpus.check_real(doc(("data-loading", 0.511), one_offs=ONE_OFF), e),
                         ["data-loading at 51.1% > 5%"])

    def test_top_is_largest_gain_not_first(self):
        e = real(["launch-bound", "host-bound"], share=0.62)
        self.assertEqual(corpus.check_real(doc(("gpu-starvation", 0.1), ("host-bound", 0.6)), e), [])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.3), ("gpu-starvation", 0.6)), e),
                         ["top gpu-starvation not in accept [launch-bound host-bound]"])

    def test_mapping(self):
        self.assertEqual(corpus.check_real(doc(("synchronization", 0.5)), real(["sync"], share=0.5)), [])
        self.assertEqual(corpus.check_real(doc(("host-io", 0.5)), real(["io"], share=0.5)), [])
        self.assertEqual(corpus.check_real(doc(("small-copies", 0.5)), real(["other"], share=0.5)), [])
        self.assertEqual(corpus.check_real(doc(("under-filled-launch", 0.5)),
                                           real(["under-filled"], share=0.5)), [])
        self.assertEqual(corpus.check_real(doc(("under-filled", 0.5)), real(["under-filled"], share=0.5)),
                         ["top under-filled not in accept [under-filled]"])

    def test_must_not(self):
        e = real(["exposed-communication"], ["data-loading", "sync"], share=0.59)
        self.assertEqual(corpus.check_real(doc(("exposed-communication", 0.53), ("data-loading", 0.05)), e), [])
        self.assertEqual(corpus.check_real(doc(("exposed-communication", 0.53), ("data-loading", 0.112),
                                               ("synchronization", 0.2)), e),
                         ["must_not data-loading at 11.2%", "must_not sync at 20.0%"])

    def test_share_tolerance(self):
        # 0.9: 30% of it (0.27) is looser than 10 points
        e = real(["launch-bound"], share=0.9)
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.65)), e), [])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.6)), e), ["gain 0.60 vs share 0.90"])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 1.0)), e), [])
        # 0.2: 10 points is looser than 30% of it (0.06)
        e = real(["launch-bound"], share=0.2)
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.29)), e), [])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.31)), e), ["gain 0.31 vs share 0.20"])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.30)), e), [])
        # no finding at all: gain 0
        self.assertEqual(corpus.check_real(doc(), real(["serial-copy"], share=0.95)),
                         ["no finding; accept [serial-copy]", "gain 0.00 vs share 0.95"])

    def test_share_not_for_healthy_or_one_off(self):
        self.assertFalse(corpus.share_applies(real(["healthy"], share=0.3, verdict="healthy")))
        self.assertFalse(corpus.share_applies(real(["one-off"], share=0.98, verdict="other")))
        self.assertFalse(corpus.share_applies(real(["launch-bound"], share=None)))
        self.assertTrue(corpus.share_applies(real(["io", "data-loading"], share=0.58, verdict="other")))

    def test_unknown_category_fails(self):
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.5)), real(["launch-bound", "gpu"], share=0.5)),
                         ["unknown category gpu"])
        self.assertEqual(corpus.check_real(doc(("launch-bound", 0.5)), real([])),
                         ["expected.json gives no accept"])


class Disagreements(unittest.TestCase):
    DIS = ("synchronization|sync", 0.10, "why")

    def row(self, ok, reasons):
        return {"ok": ok, "reasons": list(reasons)}

    def test_only_the_listed_finding_within_its_bound(self):
        r = self.row(False, ["synchronization at 8.1% > 5%", "must_not sync at 8.1%"])
        corpus.apply_disagreement(r, self.DIS, [("synchronization", 0.081)])
        self.assertTrue(r.get("disagree"))

    def test_above_the_bound_fails(self):
        r = self.row(False, ["synchronization at 12.0% > 5%"])
        corpus.apply_disagreement(r, self.DIS, [("synchronization", 0.12)])
        self.assertFalse(r.get("disagree"))
        self.assertIn("synchronization above the documented 0.10", r["reasons"])

    def test_another_failure_still_fails(self):
        r = self.row(False, ["synchronization at 8.1% > 5%", "must_not data-loading at 7.0%"])
        corpus.apply_disagreement(r, self.DIS, [("synchronization", 0.081), ("data-loading", 0.07)])
        self.assertFalse(r.get("disagree"))

    def test_listed_but_passing_fails(self):
        r = self.row(True, [])
        corpus.apply_disagreement(r, self.DIS, [])
        self.assertFalse(r["ok"])
        self.assertFalse(r.get("disagree"))


class ZooRows(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hdr = os.path.join(self.tmp.name, "zoo_map.h")
        with open(self.hdr, "w") as f:
            f.write('/* { "commented", { "x", NULL } }, */\n'
                    'static const struct zoo_case zoo_cases[] = {\n'
                    '\t{ "loader", { "data-loading", "gpu-starvation", NULL } },\n'
                    '\t{ "sync", { "synchronization", NULL, NULL } },\n'
                    '\t{ NULL, { NULL, NULL, NULL } },\n};\n')

    def tearDown(self):
        self.tmp.cleanup()

    def test_parse(self):
        self.assertEqual(corpus.parse_zoo_map(self.hdr),
                         {"loader": ["data-loading", "gpu-starvation"], "sync": ["synchronization"]})

    def test_repo_header_parses(self):
        cases = corpus.parse_zoo_map(os.path.join(HERE, "..", "analyze", "zoo_map.h"))
        self.assertTrue(cases)
        self.assertTrue(all(ids for ids in cases.values()))

    def test_expectation(self):
        cases = corpus.parse_zoo_map(self.hdr)
        z = os.path.join("tests", "data", "zoo")
        e = corpus.zoo_expectation(os.path.join(z, "loader.broken.gpuscope"), cases)
        self.assertEqual(e, {"kind": "zoo-broken", "case": "loader",
                             "ids": ["data-loading", "gpu-starvation", "host-bound"]})
        e = corpus.zoo_expectation(os.path.join(z, "sync.fixed.gpuscope"), cases)
        self.assertEqual(e["ids"], ["synchronization"])
        self.assertIsNone(corpus.zoo_expectation(os.path.join(z, "other.broken.gpuscope"), cases))
        self.assertIsNone(corpus.zoo_expectation(os.path.join(z, "repeat", "sync.fixed.gpuscope"), cases))

    def test_checks(self):
        b = {"kind": "zoo-broken", "ids": ["data-loading", "gpu-starvation", "host-bound"]}
        self.assertEqual(corpus.check_zoo(doc(("sync", 0.1), ("host-bound", 0.4)), b), [])
        self.assertEqual(corpus.check_zoo(doc(("launch-bound", 0.5), ("host-bound", 0.4)), b),
                         ["top launch-bound not in accept [data-loading gpu-starvation host-bound]"])
        self.assertEqual(corpus.check_zoo(doc(), b), ["no finding; accept [data-loading gpu-starvation host-bound]"])
        f = {"kind": "zoo-fixed", "ids": ["synchronization"]}
        self.assertEqual(corpus.check_zoo(doc(("data-loading", 0.3), ("synchronization", 0.05)), f), [])
        self.assertEqual(corpus.check_zoo(doc(("synchronization", 0.06)), f),
                         ["synchronization at 6.0% on the fixed twin"])


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, name, data, gz=False):
        p = os.path.join(self.tmp.name, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with (gzip.open(p, "wb") if gz else open(p, "wb")) as f:
            f.write(data)
        return p

    def test_json_is_trace(self):
        self.assertTrue(corpus.is_trace(self.put("a.json", b'  [{"ph": "X"}]'))[0])
        late = b'{"pad": "' + b"x" * (3 << 20) + b'", "traceEvents": []}'
        self.assertTrue(corpus.is_trace(self.put("b.json.gz", late, gz=True))[0])
        self.assertEqual(corpus.is_trace(self.put("c.json", b'{"a": 1}')), (False, "JSON without traceEvents"))
        self.assertEqual(corpus.is_trace(self.put("d.txt", b'[]')), (False, "extension"))
        self.assertTrue(corpus.is_trace(self.put("e.sqlite", b'anything'))[0])

    def fake(self, body):
        p = self.put("bin/gpuscope", ("#!/bin/sh\n" + body + "\n").encode())
        os.chmod(p, 0o755)
        return p

    def test_run_analyze_failures(self):
        t = self.put("t.gpuscope", b"")
        cases = [
            ("echo 'gpuscope: error: bad' >&2; exit 2", "exit 2: gpuscope: error: bad"),
            ("echo 'not json'", None),
            ("echo '{\"findings\": 3}'", "no findings array"),
            ("echo '{\"findings\": [{\"id\": \"x\", \"gain\": null}]}'",
             "finding without a string id and a numeric gain"),
            ("echo '{\"findings\": [], \"one_offs\": [{\"what\": \"jit\"}]}'", None),
        ]
        for body, want in cases:
            d, err = corpus.run_analyze(self.fake(body), t, 10, self.tmp.name)
            self.assertIsNone(d)
            if want is None:
                self.assertTrue(err.startswith(("invalid JSON", 'malformed "one_offs"')), err)
            else:
                self.assertEqual(err, want)
        d, err = corpus.run_analyze(self.fake("sleep 5"), t, 1, self.tmp.name)
        self.assertEqual((d, err), (None, "timeout after 1 s"))

    def test_sqlite_gz_is_decompressed(self):
        t = self.put("x.sqlite.gz", b"SQLite format 3\0rest", gz=True)
        # the fake prints the first 15 bytes of the file it was given
        g = self.fake('printf \'{"findings": [], "head": "%s"}\' "$(head -c 15 "$4")"')
        d, err = corpus.run_analyze(g, t, 10, self.tmp.name)
        self.assertIsNone(err)
        self.assertEqual(d["head"], "SQLite format 3")

    def test_main_without_shared(self):
        src = os.path.join(self.tmp.name, "src")
        self.put("src/tests/analyze/zoo_map.h",
                 b'static const struct zoo_case zoo_cases[] = {\n'
                 b'\t{ "sync", { "synchronization", NULL, NULL } },\n\t{ NULL, { NULL } },\n};\n')
        self.put("src/tests/data/zoo/sync.broken.gpuscope", b"")
        self.put("src/tests/data/zoo/sync.fixed.gpuscope", b"")
        self.put("src/tests/data/cuda/a.gpuscope", b"")
        g = self.fake('echo \'{"findings": [{"id": "synchronization", "gain": 0.4}]}\'')
        env = dict(os.environ, GS_SOURCE_DIR=src, GS_SHARED_DIR=os.path.join(self.tmp.name, "none"))
        p = subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), "--gpuscope", g],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        lines = p.stdout.splitlines()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("has no validation/: only tests/data is checked", lines[0])
        self.assertEqual(lines[-1], "2 passed, 1 failed, 0 skipped")
        fixed = [l for l in lines if "sync.fixed" in l]
        self.assertEqual(len(fixed), 1)
        self.assertIn("FAIL", fixed[0])
        self.assertIn("synchronization at 40.0% on the fixed twin", fixed[0])


if __name__ == "__main__":
    unittest.main(verbosity=1)
