# diff, check and baseline on reports written by the real writer.
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
mk="$GS_BUILD_DIR/tests/mk_steps"
$mk "$T/before.gpuscope" 20 10000 4000 4 1
$mk "$T/after.gpuscope" 20 6000 4000 4 0
for s in 1 2 3; do
  $mk "$T/b$s.gpuscope" 20 10000 4000 4 1 2 $s
  $mk "$T/a$s.gpuscope" 20 6000 4000 4 0 2 $((s + 10))
done

"$GPUSCOPE" diff "$T/before.gpuscope" "$T/after.gpuscope" >"$T/d.txt"
grep -E '^time per step +10\.000 ms +6\.000 ms +-40\.0% +better$' "$T/d.txt" >/dev/null ||
  { cat "$T/d.txt"; fail "time per step not shown as better"; }
grep -E '^GPU busy \(analysed window\) +40\.0% +66\.7% +\+26\.7 pt +better$' "$T/d.txt" >/dev/null || fail "GPU busy row"
grep -E '^pageable copy bytes per step .* gone$' "$T/d.txt" >/dev/null || fail "pageable bytes row"

# the same report on both sides: nothing moved
"$GPUSCOPE" diff "$T/before.gpuscope" "$T/before.gpuscope" >"$T/same.txt"
! grep -E ' (better|worse|changed|new|gone)$' "$T/same.txt" || fail "identical runs show a change"

# several runs a side: medians with spread, noise never called a change
"$GPUSCOPE" diff "$T/b1.gpuscope" "$T/b2.gpuscope" "$T/b3.gpuscope" -- "$T/a1.gpuscope" "$T/a2.gpuscope" "$T/a3.gpuscope" >"$T/m.txt"
grep -E '^time per step .* better$' "$T/m.txt" >/dev/null || { cat "$T/m.txt"; fail "multi-run step time"; }
grep -q '(3 runs)' "$T/m.txt" || fail "runs per side not shown"
"$GPUSCOPE" diff "$T/b1.gpuscope" "$T/b2.gpuscope" -- "$T/b3.gpuscope" >"$T/n.txt"
! grep -E ' (better|worse)$' "$T/n.txt" || { cat "$T/n.txt"; fail "runs of one variant judged different"; }

# formats
"$GPUSCOPE" diff --format json "$T/before.gpuscope" "$T/after.gpuscope" | python3 -c '
import json,sys
d=json.load(sys.stdin)
m={x["key"]:x for x in d["metrics"]}
assert m["step_time_s"]["verdict"]=="better", m["step_time_s"]
assert abs(m["step_time_s"]["before"]["value"]-0.010)<1e-9
assert "resolved" in d["findings"]'
"$GPUSCOPE" diff --format csv "$T/before.gpuscope" "$T/after.gpuscope" | head -1 | grep -q '^key,label,before,after,delta,rel,verdict$' || fail "csv header"
"$GPUSCOPE" diff --format html -o "$T/d.html" "$T/before.gpuscope" "$T/after.gpuscope"
grep -q '<table>' "$T/d.html" && ! grep -q 'http' "$T/d.html" || fail "html diff"

# check: exit 0 within bounds, 1 on regression, 2 on bad input
"$GPUSCOPE" check --baseline "$T/before.gpuscope" "$T/after.gpuscope" >"$T/c1.txt" || fail "improvement judged a regression"
rc=0; "$GPUSCOPE" check --baseline "$T/after.gpuscope" "$T/before.gpuscope" >"$T/c2.txt" || rc=$?
[ $rc = 1 ] || fail "regression exit $rc, expected 1"
grep -q 'REGRESSED' "$T/c2.txt" || fail "no REGRESSED row"
grep -E '^time per step .*\+66\.7%  REGRESSED$' "$T/c2.txt" >/dev/null || { cat "$T/c2.txt"; fail "regression row"; }
"$GPUSCOPE" check --baseline "$T/before.gpuscope" --max-regress 80% --metric step_time "$T/before.gpuscope" >/dev/null || fail "same run fails check"
expect_fail 2 "$GPUSCOPE" check --baseline "$T/nope.gpuscope" "$T/after.gpuscope"
expect_fail 2 "$GPUSCOPE" check --baseline "$T/before.gpuscope" --metric no_such_metric "$T/after.gpuscope"
expect_fail 2 "$GPUSCOPE" check --baseline "$T/before.gpuscope" --max-regress lots "$T/after.gpuscope"
expect_fail 2 "$GPUSCOPE" diff "$T/before.gpuscope"
expect_fail 2 "$GPUSCOPE" diff "$T/before.gpuscope" "$T/missing.gpuscope"

# baseline library
export GPUSCOPE_BASELINE_DIR="$T/bl"
"$GPUSCOPE" baseline save fast "$T/a1.gpuscope" "$T/a2.gpuscope" 2>/dev/null
"$GPUSCOPE" baseline list | grep -E "^fast +2 runs +[56]\.[0-9]+ ms$" >/dev/null || { "$GPUSCOPE" baseline list; fail "baseline list"; }
"$GPUSCOPE" baseline show fast | grep -q 'time per step' || fail "baseline show"
expect_fail 2 "$GPUSCOPE" baseline save fast "$T/a1.gpuscope"     # exists
expect_fail 2 "$GPUSCOPE" baseline save ../evil "$T/a1.gpuscope"  # bad name
expect_fail 2 "$GPUSCOPE" baseline show missing
rc=0; "$GPUSCOPE" check --baseline fast "$T/b1.gpuscope" >/dev/null || rc=$?
[ $rc = 1 ] || fail "check against saved baseline: exit $rc, expected 1"
"$GPUSCOPE" check --baseline fast "$T/a3.gpuscope" >/dev/null || fail "check of a similar run against its baseline failed"
echo ok
