#!/usr/bin/env bash
# The HTML report opens in headless Chromium offline: no console errors, no network
# request, the findings in the DOM, a screenshot that is not blank.
. "$(dirname "$0")/lib.sh"

chrome=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null; then chrome=$c; break; fi
done
if [ -z "$chrome" ]; then
	echo "SKIP: chromium is not installed (scripts/install-deps.sh installs it)"
	exit 77
fi

# run_chrome PAGE OUTNAME EXTRA... - load PAGE with a fresh profile; logs, net log and DOM under $T
run_chrome() {
	local page=$1 name=$2; shift 2
	rm -rf "$T/profile"
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$T/profile" --enable-logging=stderr --v=0 \
		--log-net-log="$T/$name.net.json" --window-size=1280,2000 --virtual-time-budget=3000 \
		"$@" "file://$page" >"$T/$name.out" 2>"$T/$name.log" || true
}

# page_requests NAME - network requests made by the page (file:// origin), not by the browser itself
page_requests() {
	python3 - "$T/$1.net.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:  # the browser may end the log without its closing bracket
    txt = open(sys.argv[1]).read().rstrip().rstrip(",")
    d = json.loads(txt + ("]}" if not txt.endswith("}") else ""))
urls = set()
for e in d.get("events", []):
    p = e.get("params", {})
    if "url" in p and "file://" in str(p.get("network_isolation_key", "")) and not p["url"].startswith(("file:", "data:")):
        urls.add(p["url"])
print("\n".join(sorted(urls)))
PY
}

# A negative control first: the checks must catch a page with a console error and a request.
cat >"$T/bad.html" <<'HTML'
<!DOCTYPE html><html><body><p>bad</p><script>console.error("deliberate");</script>
<img src="http://gpuscope-test.invalid/x.png"></body></html>
HTML
run_chrome "$T/bad.html" bad --dump-dom
grep -q 'INFO:CONSOLE.*deliberate' "$T/bad.log" || fail "console errors are not seen by this check"
page_requests bad | grep -q gpuscope-test.invalid || fail "page requests are not seen by this check"

n=0
while read -r r; do
	n=$((n + 1))
	html=$T/report$n.html
	"$G" export "$r" --format html -o "$html" 2>/dev/null || fail "html export of $r"
	! grep -Eq '(src|href)=["'"'"']?https?:|url\(https?:|@import' "$html" || fail "$r: the page refers to an external URL"
	"$G" analyze --format json "$r" >"$T/a.json" 2>/dev/null || true
	run_chrome "$html" dom$n --dump-dom
	grep -q 'window.__reportReady' "$T/dom$n.out" || fail "$r: no DOM dumped"
	! grep -q 'INFO:CONSOLE' "$T/dom$n.log" || fail "$r: console messages: $(grep INFO:CONSOLE "$T/dom$n.log" | head -3)"
	[ -z "$(page_requests dom$n)" ] || fail "$r: network requests: $(page_requests dom$n)"
	# every finding's title is in the DOM (as text, HTML-escaped like the page writes it)
	python3 - "$T/a.json" "$T/dom$n.out" <<'PY' || fail "$r: findings missing from the DOM"
import html, json, sys
a = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
for f in a["findings"]:
    if html.escape(f["title"], quote=True) not in dom and f["title"] not in dom:
        print("missing finding: " + f["title"]); sys.exit(1)
print("findings in DOM: %d" % len(a["findings"]))
PY
	for id in summary findings utilisation timeline kernels copies nvtx metrics; do
		grep -q "id=\"$id\"\|id='$id'" "$T/dom$n.out" || fail "$r: section '$id' missing"
	done
	run_chrome "$html" shot$n --screenshot="$T/shot$n.png"
	[ -s "$T/shot$n.png" ] || fail "$r: no screenshot"
	python3 "$HERE/png_check.py" "$T/shot$n.png" || fail "$r: blank screenshot"
done < <(test_reports)
# the generated run has findings, so the check above was not vacuous
"$G" analyze --format json "$T/generated.gpuscope" >"$T/a.json" 2>/dev/null || true
python3 -c '
import json, sys; assert json.load(open(sys.argv[1]))["findings"], "generated run has no findings"' "$T/a.json" ||
	fail "no findings"
# `gpuscope profile --report-html` writes the page next to the report
"$G" profile --report-html -o "$T/prof" -- /bin/sleep 0.05 >/dev/null 2>&1 || fail "profile --report-html failed"
grep -q '<h1>gpuscope report: ' "$T/prof.html" || fail "profile --report-html wrote no report page"
echo "ok: $n report(s)"
