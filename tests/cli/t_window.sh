# Long runs in bounded memory (issue 19, item 7): dump in time slices prints what a
# whole load prints; export's findings of a window are analyze's of that window.
. "$(dirname "$0")/lib.sh"
D="$GS_SOURCE_DIR/tests/data"
G="$GPUSCOPE"
for f in cuda/h200_resnet50.gpuscope zoo/comm-wait.broken.gpuscope torchmem/h200_mem-oom.broken.gpuscope; do
  r="$D/$f"
  # one whole load (the report is below the default slice) against slices of 1000 and 50,000 events
  "$G" dump "$r" >"$T/whole"
  [ "$(wc -l <"$T/whole")" -gt 5000 ] || fail "$f: dump printed $(wc -l <"$T/whole") lines"
  for n in 1000 50000; do
    "$G" dump --slice-events $n "$r" >"$T/sliced"
    cmp -s "$T/whole" "$T/sliced" || { diff "$T/whole" "$T/sliced" | head -5; fail "$f: dump in slices of $n differs"; }
  done
  "$G" dump --absolute --type kernel,thread,cpu_sample "$r" >"$T/whole"
  "$G" dump --absolute --type kernel,thread,cpu_sample --slice-events 700 "$r" >"$T/sliced"
  cmp -s "$T/whole" "$T/sliced" || fail "$f: dump --absolute --type in slices differs"
done
# a truncated report: the same lines and the same one warning, whole or in slices
head -c 300000 "$D/zoo/comm-wait.broken.gpuscope" >"$T/cut.gpuscope"
"$G" dump "$T/cut.gpuscope" >"$T/whole" 2>"$T/whole.err"
"$G" dump --slice-events 500 "$T/cut.gpuscope" >"$T/sliced" 2>"$T/sliced.err"
grep -q "is damaged" "$T/whole.err" || fail "no damage warning for a truncated report"
cmp -s "$T/whole" "$T/sliced" && cmp -s "$T/whole.err" "$T/sliced.err" || fail "dump of a truncated report in slices differs"
expect_fail 2 "$G" dump --slice-events 0 "$D/cuda/h200_torch.gpuscope"
expect_fail 2 "$G" dump --slice-events -5 "$D/cuda/h200_torch.gpuscope"

# export --start/--end loads the window as analyze does: the same findings
r="$D/cuda/h200_resnet50.gpuscope"
"$G" analyze -f json --start 7 --end 7.5 "$r" >"$T/a.json"
"$G" export --format json --start 7 --end 7.5 -o "$T/e.json" "$r" 2>/dev/null
python3 - "$T/a.json" "$T/e.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))["analysis"]
assert a["findings"], "no findings in the window"
assert e["findings"] == a["findings"], "export's findings differ from analyze's"
assert a["summary"]["run_gpu_busy"] is None, a["summary"]   # the whole run was not loaded
assert a["summary"]["window_start_s"] == 7 and a["summary"]["window_end_s"] == 7.5, a["summary"]
PY
# export --nvtx RANGE loads the instances' extent as analyze --nvtx does
r="$D/zoo/dataloader.broken.gpuscope"
"$G" analyze -f json --nvtx step "$r" >"$T/a.json"
"$G" export --format json --nvtx step -o "$T/e2.json" "$r" 2>/dev/null
python3 - "$T/a.json" "$T/e2.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))["analysis"]
assert a["findings"] and e["findings"] == a["findings"], "export --nvtx: findings differ from analyze's"
PY
# diff --start/--end: every run's window; the wall time is the window's
"$G" diff -f json --start 5 --end 5.9 "$D/zoo/comm-wait.broken.gpuscope" "$D/zoo/comm-wait.fixed.gpuscope" >"$T/d.json"
python3 - "$T/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = [m for m in d["metrics"] if m["key"] == "wall_s"][0]
assert abs(w["before"]["value"] - 0.9) < 1e-9 and abs(w["after"]["value"] - 0.9) < 1e-9, w
PY
expect_fail 2 "$G" diff --start 2 --end 1 "$D/zoo/comm-wait.broken.gpuscope" "$D/zoo/comm-wait.fixed.gpuscope"
echo ok
