# diff and check on every real zoo pair recorded on the H200 (tests/data/zoo):
# the fixed twin is better where the fix acts; check fails broken against fixed.
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
zoo="$GS_SOURCE_DIR/tests/data/zoo"
n=0
for broken in "$zoo"/*.broken.gpuscope; do
  [ -e "$broken" ] || continue
  case=$(basename "$broken" .broken.gpuscope)
  fixed="$zoo/$case.fixed.gpuscope"
  [ -e "$fixed" ] || fail "$case: no fixed twin"
  "$GPUSCOPE" diff --format json "$broken" "$fixed" >"$T/$case.json"
  python3 - "$T/$case.json" "$case" "$GS_SOURCE_DIR/tests/analyze/zoo_map.h" <<'PY' || fail "$case: diff does not show the improvement"
import json, re, sys
d = json.load(open(sys.argv[1])); case = sys.argv[2]
# the finding ids that answer this case (the one mapping, tests/analyze/zoo_map.h)
ids = {}
for name, body in re.findall(r'\{ "([a-z-]+)", \{([^}]*)\} \}', open(sys.argv[3]).read()):
    ids[name] = re.findall(r'"([a-z-]+)"', body)
m = {x["key"]: x for x in d["metrics"]}
key = "step_time_s" if "step_time_s" in m else "wall_s"
v = m[key]["verdict"]
print(f"{case}: {key} {m[key]['before']['value'] if m[key]['before'] else '-'} -> "
      f"{m[key]['after']['value'] if m[key]['after'] else '-'} ({v}); resolved: "
      f"{[f['id'] for f in d['findings']['resolved']]}")
assert v == "better", f"{key} verdict {v}"
resolved = [f["id"] for f in d["findings"]["resolved"]]
assert set(resolved) & set(ids[case]), f"none of {ids[case]} resolved (resolved: {resolved})"
PY
  rc=0; "$GPUSCOPE" check --baseline "$fixed" "$broken" >"$T/c.txt" || rc=$?
  [ $rc = 1 ] || { cat "$T/c.txt"; fail "$case: check --baseline fixed broken exited $rc, expected 1"; }
  "$GPUSCOPE" check --baseline "$broken" "$fixed" >"$T/c.txt" || { cat "$T/c.txt"; fail "$case: check --baseline broken fixed failed"; }
  n=$((n + 1))
done
echo "checked $n zoo pairs"

# two real profiles of the same variant (comm-wait fixed, 2 ranks, recorded
# one after the other): the same diagnosis, nothing resolved and nothing new
rep="$GS_SOURCE_DIR/tests/data/zoo/repeat/comm-wait.fixed.run2.gpuscope"
if [ -e "$rep" ]; then
  "$GPUSCOPE" diff --format json "$zoo/comm-wait.fixed.gpuscope" "$rep" >"$T/rep.json" || fail "repeat: diff failed"
  python3 - "$T/rep.json" <<'PY' || fail "repeat: same variant diagnosed differently"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"]
m = {x["key"]: x for x in d["metrics"]}
print("repeat: steps", m["steps"]["before"]["value"], m["steps"]["after"]["value"],
      "resolved", [x["id"] for x in f["resolved"]], "new", [x["id"] for x in f["new"]])
assert not f["resolved"] and not f["new"], "findings changed between runs of one variant"
assert m["steps"]["verdict"] == "within noise", m["steps"]
# the step times of these 10-step profiles differ by a third (5.9 and 7.9 ms) while each
# run's steps spread wider: within noise by the single-run interval rule
assert m["step_time_s"]["verdict"] == "within noise", m["step_time_s"]
PY
fi
