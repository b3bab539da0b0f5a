# diff and check on every real zoo pair recorded on the H200 (tests/data/zoo):
# the fixed twin is better where the fix acts (a memory case: its finding is
# resolved, its step time need not improve); check fails broken against fixed
# (slower, or a new fatal finding such as an out-of-memory).
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
zoo="$GS_SOURCE_DIR/tests/data/zoo"
n=0
for broken in "$zoo"/*.broken.gpuscope; do
  [ -e "$broken" ] || continue
  case=$(basename "$broken" .broken.gpuscope)
  fixed="$zoo/$case.fixed.gpuscope"
  [ -e "$fixed" ] || fail "$case: no fixed twin"
  "$GPUSCOPE" diff --format json "$broken" "$fixed" >"$T/$case.json"
  "$GPUSCOPE" analyze --format json "$broken" >"$T/$case.an.json"
  kind=$(python3 - "$T/$case.json" "$case" "$GS_SOURCE_DIR/tests/analyze/zoo_map.h" "$T/$case.an.json" <<'PY') ||
import json, re, sys
d = json.load(open(sys.argv[1])); case = sys.argv[2]
an = json.load(open(sys.argv[4]))
# the finding ids that answer this case (the one mapping, tests/analyze/zoo_map.h)
ids = {}
for name, body in re.findall(r'\{ "([a-z-]+)", \{([^}]*)\} \}', open(sys.argv[3]).read()):
    ids[name] = re.findall(r'"([a-z-]+)"', body)
mine = [f for f in an["findings"] if f["id"] in ids[case]]
assert mine, f"broken has none of {ids[case]}"
# a memory case's finding has no time gain: its fix need not make the step faster
# (checkpointing recomputes, expandable segments map pages); a fatal one fails `check`
kind = "fatal" if any(f["fatal"] for f in mine) else ("memory" if all(f["gain"] == 0 for f in mine) else "time")
m = {x["key"]: x for x in d["metrics"]}
key = "step_time_s" if "step_time_s" in m else "wall_s"
v = m[key]["verdict"]
print(f"{case}: {key} {m[key]['before']['value'] if m[key]['before'] else '-'} -> "
      f"{m[key]['after']['value'] if m[key]['after'] else '-'} ({v}); resolved: "
      f"{[f['id'] for f in d['findings']['resolved']]} ({kind})", file=sys.stderr)
assert kind != "time" or v == "better", f"{key} verdict {v}"
resolved = [f["id"] for f in d["findings"]["resolved"]]
assert set(resolved) & set(ids[case]), f"none of {ids[case]} resolved (resolved: {resolved})"
print(kind)
PY
    fail "$case: diff does not show the improvement"
  # check: the broken run against the fixed one as baseline fails (slower, or a new fatal
  # finding); a memory finding that is not fatal is no regression of the gate
  rc=0; "$GPUSCOPE" check --baseline "$fixed" "$broken" >"$T/c.txt" || rc=$?
  want=1; [ "$kind" = memory ] && want=0
  [ $rc = $want ] || { cat "$T/c.txt"; fail "$case: check --baseline fixed broken exited $rc, expected $want"; }
  if [ "$kind" = time ]; then
    "$GPUSCOPE" check --baseline "$broken" "$fixed" >"$T/c.txt" || { cat "$T/c.txt"; fail "$case: check --baseline broken fixed failed"; }
  fi
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
