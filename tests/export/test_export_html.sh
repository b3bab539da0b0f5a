#!/usr/bin/env bash
# The HTML report: offline (no external URL), analyze's findings in it, and in
# headless Chromium (html_check.py, over the DevTools pipe) at two widths: the
# timeline of the analysed window with zoom, pan and tooltips, the step bars,
# the per-rank table of merged ranks and PyTorch's allocator in the memory chart,
# findings that zoom the timeline to their interval when clicked, kernel names
# on one line, the memory and metric charts with readable axes, no console
# message and no network request; screenshots that are not blank.
. "$(dirname "$0")/lib.sh"

# every report: an offline page holding every finding analyze prints
n=0
while read -r r; do
	n=$((n + 1))
	html=$T/report$n.html
	"$G" export "$r" --format html -o "$html" 2>/dev/null || fail "html export of $r"
	! grep -Eq '(src|href)=["'"'"']?https?:|url\(https?:|@import' "$html" || fail "$r: the page refers to an external URL"
	"$G" analyze --format json "$r" >"$T/a.json" 2>/dev/null || true
	python3 - "$T/a.json" "$html" <<'PY' || fail "$r: findings missing from the page"
import html, json, sys
a = json.load(open(sys.argv[1]))
page = html.unescape(open(sys.argv[2]).read())  # &#39; and &#x27; are the same apostrophe
for f in a["findings"]:
    if f["title"] not in page:
        print("missing finding: " + f["title"]); sys.exit(1)
PY
	for id in summary timeline steps findings kernels ops memory metrics; do
		grep -q "id='$id'" "$html" || fail "$r: section '$id' missing"
	done
done < <(test_reports)
# the generated run has findings, so the check above was not vacuous
"$G" analyze --format json "$T/generated.gpuscope" >"$T/a.json" 2>/dev/null || true
python3 -c '
import json, sys; assert json.load(open(sys.argv[1]))["findings"], "generated run has no findings"' "$T/a.json" ||
	fail "no findings"

# the per-rank table of a multi-rank report: a Kineto trace merged with itself as ranks 0 and 1
# (the same collectives at the same times: two rows, nobody waits, no straggler)
"$G" merge --as-ranks -o "$T/ranks2.gpuscope" "$SRC/tests/data/import/nccl_data.json.gz" \
	"$SRC/tests/data/import/nccl_data.json.gz" >/dev/null 2>&1 || fail "merge of two ranks"
"$G" export "$T/ranks2.gpuscope" --format html -o "$T/ranks2.html" 2>/dev/null || fail "html of two ranks"
python3 - "$T/ranks2.html" <<'PY' || fail "per-rank table of two ranks"
import re, sys
page = open(sys.argv[1]).read()
assert "<h2 id='ranks'>Ranks</h2>" in page, "no ranks section"
rows = re.findall(r"<tr data-rank='(\d+)'( class='straggler')?>((?:<td[^>]*>[^<]*</td>)+)</tr>", page)
assert [r[0] for r in rows] == ["0", "1"], rows
assert not any(r[1] for r in rows), "a straggler among identical ranks"
for r in rows:
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", r[2])
    assert len(cells) == 8, cells
    assert cells[5] == "0 ns" and cells[6] == "0 ns", cells  # waiting, others waited
PY
# one rank alone has no table
"$G" export "$SRC/tests/data/import/nccl_data.json.gz" --format html -o "$T/rank1.html" 2>/dev/null || fail "html of one rank"
! grep -q "id='ranks-table'" "$T/rank1.html" || fail "a per-rank table for a single rank"
# the DLRM ranks 0, 1, 2, 7 (shared/validation/real, when present): rank 7 is the straggler
# (the traces' README: "the last rank to arrive"; the straggler finding names it)
D=$SRC/../shared/validation/real
pages_extra=()
if [ -f "$D/param__v100_dlrm_8rank_rank7.json.gz" ]; then
	"$G" merge -o "$T/dlrm.gpuscope" "$D"/param__v100_dlrm_8rank_rank{0,1,2,7}.json.gz >/dev/null 2>&1 ||
		fail "merge of the DLRM ranks"
	"$G" export "$T/dlrm.gpuscope" --format html -o "$T/dlrm.html" 2>/dev/null || fail "html of the DLRM ranks"
	python3 - "$T/dlrm.html" <<'PY' || fail "per-rank table of the DLRM ranks"
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r"<tr data-rank='(\d+)'( class='straggler')?>", page)
assert [r[0] for r in rows] == ["0", "1", "2", "7"], rows
assert [r[0] for r in rows if r[1]] == ["7"], rows
PY
	pages_extra+=("$T/dlrm.html")
else
	echo "note: no shared/validation/real beside the source: the DLRM ranks' table is not checked"
fi
# PyTorch's allocator in the memory chart: allocated and reserved of the real H200 report
"$G" export "$SRC/tests/data/torchmem/h200_t_torchmem.gpuscope" --format html -o "$T/torchmem.html" 2>/dev/null ||
	fail "html of the allocator report"
python3 - "$T/torchmem.html" <<'PY' || fail "allocator series"
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r"<script type='application/json' id='gs-data'>(.*?)</script>", page, re.S).group(1))
names = [s["name"] for s in d["mem"]]
assert "GPU 0 allocated (PyTorch allocator)" in names and "GPU 0 reserved (PyTorch allocator)" in names, names
for s in d["mem"]:
    if "PyTorch" in s["name"]:
        assert s["unit"] == "B" and len(s["pts"]) > 1, s["name"]
# the program's 8 x Linear 2048 with AdamW holds some hundreds of MB: values in bytes, not MB
alloc = [p[1] for s in d["mem"] if s["name"].startswith("GPU 0 allocated") for p in s["pts"]]
assert max(alloc) > 100e6, max(alloc)
PY
pages_extra+=("$T/ranks2.html" "$T/torchmem.html")

# `gpuscope profile --report-html` writes the page next to the report, and replaces it with --force
"$G" profile --report-html -o "$T/prof" -- /bin/sleep 0.05 >/dev/null 2>&1 || fail "profile --report-html failed"
grep -q '<h1>gpuscope report: ' "$T/prof.html" || fail "profile --report-html wrote no report page"
"$G" profile --force --report-html -o "$T/prof" -- /bin/sleep 0.05 >/dev/null 2>&1 ||
	fail "profile --force --report-html failed on a second run"

chrome=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null; then chrome=$(command -v "$c"); break; fi
done
if [ -z "$chrome" ]; then
	echo "SKIP: chromium is not installed (scripts/setup.sh installs it): the browser checks did not run"
	exit 77
fi

# a negative control first: the checks must see a page's console error and its request
cat >"$T/bad.html" <<'HTML'
<!DOCTYPE html><html><body><p>bad</p><script>console.error("deliberate");</script>
<img src="http://gpuscope-test.invalid/x.png"></body></html>
HTML
timeout 120 python3 "$HERE/html_check.py" --control "$chrome" "$T" "$T/bad.html" ||
	fail "console messages or requests are not seen by html_check.py"

# the browser checks: the generated run (steps, metrics, memory, findings), and the real
# reports in tests/data that have findings, kernel counters, and a Kineto trace
pages=()
for r in "$T/generated.gpuscope" "$SRC/tests/data/cuda/h200_torch.gpuscope" \
	"$SRC/tests/data/cuda/h200_kmetrics.gpuscope" "$SRC/tests/data/import/ns_resolution_rank0.json.gz"; do
	[ -f "$r" ] || { echo "note: $r is not here, not checked in the browser"; continue; }
	p=$T/$(basename "$r" | sed 's/[.].*//').html
	"$G" export "$r" --format html -o "$p" 2>/dev/null || fail "html export of $r"
	pages+=("$p")
done
pages+=("${pages_extra[@]}")
timeout 400 python3 "$HERE/html_check.py" "$chrome" "$T" "${pages[@]}" >"$T/check.out" || {
	cat "$T/check.out"; fail "browser checks"; }
cat "$T/check.out"
for png in $(grep '[.]png$' "$T/check.out"); do
	python3 "$HERE/png_check.py" "$png" || fail "$png: blank screenshot"
done
[ "$(grep -c '[.]png$' "$T/check.out")" = $((2 * ${#pages[@]})) ] || fail "not every page was shot at two widths"
echo "ok: $n report(s) offline, ${#pages[@]} in the browser"
