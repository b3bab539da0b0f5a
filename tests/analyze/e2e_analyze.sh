#!/usr/bin/env bash
# e2e_analyze.sh - `gpuscope analyze` as users run it: text and JSON on the
# synthetic pathology reports, exit statuses, bad input, windows, --set.
set -u
G=${GPUSCOPE:-build/gpuscope}
GEN=${GS_BUILD_DIR:-build}/tests/analyze/gs_gen_synth
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fail=1; fi
}
no_nan() { ! grep -Eiq '(^|[^a-z])(nan|inf)([^a-z]|$)' "$1"; }

for c in $("$GEN" list | cut -d' ' -f1); do
  want=$("$GEN" list | awk -v c="$c" '$1 == c { print $2 }')
  "$GEN" "$c" broken "$T/$c.b.gpuscope" && "$GEN" "$c" fixed "$T/$c.f.gpuscope" || { echo "not ok - generate $c"; fail=1; continue; }
  "$G" analyze "$T/$c.b.gpuscope" >"$T/out.txt" 2>"$T/err.txt"; rc=$?
  check "$c: text exit 0" test "$rc" -eq 0
  if [ "$want" = - ]; then  # a case with no finding: only one-offs, each with its size
    check "$c: no finding, a one-off line" bash -c "grep -q '^no problem found' '$T/out.txt' && grep -q '^one-off: ' '$T/out.txt'"
  else
    check "$c: text names '$want' first" grep -q "^1\. .*\[$want, " "$T/out.txt"
  fi
  check "$c: text starts with the summary" grep -q '^wall ' <(head -1 "$T/out.txt")
  check "$c: no NaN in text" no_nan "$T/out.txt"
  "$G" analyze --format json "$T/$c.b.gpuscope" >"$T/out.json"; rc=$?
  check "$c: json exit 0" test "$rc" -eq 0
  check "$c: no NaN in json" no_nan "$T/out.json"
  if command -v python3 >/dev/null; then
    check "$c: json schema" python3 - "$T/out.json" "$want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
for k in ("wall_s", "gpu_busy", "gpu_idle", "step_period_s"):
    assert k in s, k
f = d["findings"]
if sys.argv[2] == "-":
    assert all(x["gain"] <= 0.05 for x in f), f
    assert d["one_offs"] and all(o["duration_s"] > 0 for o in d["one_offs"]), d["one_offs"]
else:
    assert f and f[0]["id"] == sys.argv[2], f[0]["id"] if f else None
for x in f:
    for k in ("id", "title", "severity", "gain", "evidence", "recommendation", "gain_formula", "where"):
        assert k in x, k
    assert 0 <= x["gain"] <= 1
    assert x["severity"] in ("info", "warning", "critical")
assert [x["gain"] for x in f] == sorted([x["gain"] for x in f], reverse=True)
PY
  fi
  "$G" analyze "$T/$c.f.gpuscope" --format=json >"$T/fixed.json"
  check "$c: fixed twin exit 0" test $? -eq 0
done

# every report and trace under tests/data: no crash, no NaN, valid JSON
src=${GS_SOURCE_DIR:-.}
while IFS= read -r f; do
  [ -f "$f" ] || continue
  timeout 120 "$G" analyze "$f" >"$T/d.txt" 2>"$T/d.err"; rc=$?
  case $rc in
    0) check "tests/data $(basename "$f"): analysed, no NaN" no_nan "$T/d.txt" ;;
    2) check "tests/data $(basename "$f"): rejected with one line" test "$(wc -l <"$T/d.err")" -le 1 ;;
    *) check "tests/data $(basename "$f"): exit $rc" false ;;
  esac
  if [ "$rc" -eq 0 ] && command -v python3 >/dev/null; then
    timeout 120 "$G" analyze --format json "$f" >"$T/d.json"
    check "tests/data $(basename "$f"): valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/d.json"
  fi
done < <(find "$src/tests/data" -type f \( -name '*.gpuscope' -o -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite' \) \
           ! -name 'timings.json' 2>/dev/null | sort)

# the rules listing names every rule and threshold
"$G" analyze --rules >"$T/rules.txt"
check "--rules: exit 0" test $? -eq 0
check "--rules: lists engine.min_gap_us" grep -q -- '--set engine.min_gap_us=2' "$T/rules.txt"
# ten rules, and the four of PyTorch's allocator (docs/memory.md)
check "--rules: the engine row and fourteen rules" test "$(grep -c '^[a-z-]*: ' "$T/rules.txt")" -eq 15

# edge cases and bad input
"$GEN" dataloader broken "$T/dl.gpuscope"
"$G" analyze --start 0.5 --end 1s "$T/dl.gpuscope" >"$T/w.txt"
check "window: exit 0" test $? -eq 0
check "window: wall is the window" grep -q '^wall 500.000 ms' "$T/w.txt"
"$G" analyze --set gpu-starvation.min_gain=0.99 "$T/dl.gpuscope" >"$T/s.txt"
check "--set: data-loading gone" bash -c "! grep -q data-loading '$T/s.txt'"
"$G" analyze --set nope.x=1 "$T/dl.gpuscope" >/dev/null 2>"$T/e.txt"
check "--set unknown rule: exit 2" test $? -eq 2
check "--set unknown rule: one-line error" test "$(wc -l <"$T/e.txt")" -eq 1
"$G" analyze "$T/missing.gpuscope" >/dev/null 2>"$T/e.txt"
check "missing input: exit 2" test $? -eq 2
check "missing input: names the file" grep -q "missing.gpuscope" "$T/e.txt"
echo "not a report" >"$T/junk.txt"
"$G" analyze "$T/junk.txt" >/dev/null 2>&1
check "not a report: exit 2" test $? -eq 2
"$G" analyze --format xml "$T/dl.gpuscope" >/dev/null 2>&1
check "bad format: exit 2" test $? -eq 2
"$G" analyze >/dev/null 2>&1
check "no input: exit 2" test $? -eq 2
"$G" analyze --nvtx nosuch "$T/dl.gpuscope" >/dev/null 2>&1
check "unknown NVTX range: exit 2" test $? -eq 2
"$G" analyze "$T/dl.gpuscope" >/dev/full 2>/dev/null
check "full disk: exit 1" test $? -eq 1
exit $fail
