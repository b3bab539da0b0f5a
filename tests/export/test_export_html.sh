#!/usr/bin/env bash
# The HTML report: offline (no external URL), analyze's findings in it, and in
# headless Chromium (html_check.py, over the DevTools pipe) at two widths: the
# timeline of the analysed window with zoom, pan and tooltips, the step bars,
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
timeout 400 python3 "$HERE/html_check.py" "$chrome" "$T" "${pages[@]}" >"$T/check.out" || {
	cat "$T/check.out"; fail "browser checks"; }
cat "$T/check.out"
for png in $(grep '[.]png$' "$T/check.out"); do
	python3 "$HERE/png_check.py" "$png" || fail "$png: blank screenshot"
done
[ "$(grep -c '[.]png$' "$T/check.out")" = $((2 * ${#pages[@]})) ] || fail "not every page was shot at two widths"
echo "ok: $n report(s) offline, ${#pages[@]} in the browser"
