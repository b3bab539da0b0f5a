#!/usr/bin/env bash
# `export` hands on the findings `analyze` computes with the same options: with
# a window (--start) and a threshold (--set) given to both, the json, sqlite,
# csv and html exports hold the same findings (rule ids, in order, and gains)
# as `analyze --format json`.  The options must change the findings for the
# check to mean anything: that is checked first.
. "$(dirname "$0")/lib.sh"

r=$SRC/tests/data/cuda/h200_torch.gpuscope
[ -f "$r" ] || fail "missing $r"
# the window: the last tenth of the run (times are from the report's start)
span=$("$G" info --format json "$r" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["t_max_ns"] - d["t_min_ns"])')
start=$(python3 -c "print('%.3f' % (float('$span') / 1e9 * 0.9))")
# tensor-cores-unused at 0: the run is launch-bound, so the replay gives faster GEMMs almost
# nothing (0.0%), under the rule's default 2% threshold: only --set shows the finding
opts=(--start "$start" --set tensor-cores-unused.min_gain=0)

findings() { # JSON of analyze -> "id gain" lines
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d = d.get("analysis", d)
for f in d["findings"]:
    print(f["id"], "%.6g" % f["gain"])' "$1"
}

"$G" analyze --format json "$r" >"$T/default.json"
"$G" analyze --format json --start "$start" "$r" >"$T/start.json"
"$G" analyze --format json "${opts[@]}" "$r" >"$T/want.json"
findings "$T/want.json" >"$T/want"
findings "$T/default.json" >"$T/default"
findings "$T/start.json" >"$T/start"
[ -s "$T/want" ] || fail "no finding with ${opts[*]}: the comparison would be empty"
! cmp -s "$T/want" "$T/default" || fail "the window does not change the findings: the test would not see it lost"
! cmp -s "$T/want" "$T/start" || fail "--set does not change the findings: the test would not see it lost"

"$G" export "$r" --format json "${opts[@]}" -o "$T/x.json" 2>/dev/null || fail "json export with ${opts[*]}"
findings "$T/x.json" >"$T/json"
diff -u "$T/want" "$T/json" || fail "json export: not analyze's findings"

"$G" export "$r" --format sqlite "${opts[@]}" -o "$T/x.sqlite" 2>/dev/null || fail "sqlite export"
python3 - "$T/x.sqlite" >"$T/sqlite" <<'PY'
import sqlite3, sys
for rid, gain in sqlite3.connect(sys.argv[1]).execute("SELECT ruleId, gain FROM GPUSCOPE_FINDINGS ORDER BY rank"):
    print(rid, "%.6g" % gain)
PY
diff -u "$T/want" "$T/sqlite" || fail "sqlite export: not analyze's findings"

"$G" export "$r" --format csv "${opts[@]}" -o "$T/x" 2>/dev/null || fail "csv export"
python3 - "$T/x_findings.csv" "$T/want.json" <<'PY' || fail "csv export: not analyze's findings"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = json.load(open(sys.argv[2]))["findings"]
got = [(r["Rule"], round(float(r["Gain (%)"]), 1)) for r in rows]
exp = [(f["id"], round(f["gain"] * 100, 1)) for f in want]
assert got == exp, (got, exp)
PY

"$G" export "$r" --format html "${opts[@]}" -o "$T/x.html" 2>/dev/null || fail "html export"
python3 - "$T/x.html" >"$T/html" <<'PY'
import re, sys
for rid, gain in re.findall(r"data-rule='([^']*)' data-gain='([^']*)'", open(sys.argv[1]).read()):
    print(rid, "%.6g" % float(gain))
PY
diff -u "$T/want" "$T/html" || fail "html export: not analyze's findings"

# a bad option is bad usage, found before anything is written
set +e
"$G" export "$r" --format html --set no-such-rule.x=1 -o "$T/bad.html" 2>"$T/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "unknown threshold: exit $rc, want 2"
[ ! -e "$T/bad.html" ] || fail "unknown threshold: a file was written"
"$G" export "$r" --format json --start 1 --end 0.5 -o "$T/bad.json" 2>/dev/null && fail "--end before --start accepted"
echo "ok: $(wc -l <"$T/want") finding(s) the same in json, sqlite, csv and html"
