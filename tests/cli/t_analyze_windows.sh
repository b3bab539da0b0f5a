# A report analysed in windows (issue 19: a long run's whole file in bounded memory,
# docs/rules.md "Long reports") finds what a whole analysis finds:
#  1. the H200 zoo recordings (tests/data/zoo, 9-40 steps each) in 2 windows: the same top
#     finding as the whole analysis, its gain within a fifth of the whole's, "windows" in
#     the JSON, no per-rank table;
#  2. a synthetic 1 M-row report through the real writer (bench/stats/gen_report.c):
#     every finding's id and title the same, gains within 0.5 points, in 6 forced windows
#     and in the windows --window-mb 16 picks (the note says why), at under half the
#     whole analysis's peak memory;
#  3. bad uses: --windows 0, with --start, on a Kineto trace.
. "$(dirname "$0")/lib.sh"
D="$GS_SOURCE_DIR/tests/data"
G="$GPUSCOPE"
for c in dataloader launch-bound host-bound sync pageable serial-copy tensor-core underfill \
         alloc-churn comm-wait mem-leak mem-oom mem-fragmentation; do
  r="$D/zoo/$c.broken.gpuscope"
  "$G" analyze -f json "$r" >"$T/whole.json"
  "$G" analyze -f json --windows 2 "$r" >"$T/win.json"
  python3 - "$c" "$T/whole.json" "$T/win.json" <<'PY' || fail "$c: the windows' analysis differs"
import json, sys
c, w, v = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
assert w["summary"]["windows"] == 0, w["summary"]
assert v["summary"]["windows"] >= 1, v["summary"]
assert v["ranks"] is None, v["ranks"]
a, b = w["findings"][0], v["findings"][0]
assert a["id"] == b["id"], (c, a["id"], b["id"])
assert abs(a["gain"] - b["gain"]) <= 0.2 * a["gain"] + 1e-9, (c, a["gain"], b["gain"])
assert a.get("fatal") == b.get("fatal"), (c, a.get("fatal"), b.get("fatal"))
PY
done

# a long synthetic report: 1 M rows, 10,000 steps
"$GS_BUILD_DIR/tests/gs_longrun_gen" "$T/long.gpuscope" 1000000 >/dev/null
rss() {   # rss OUT CMD...: run CMD (stdout to OUT), print its peak RSS in KiB
  local out=$1; shift
  python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as f:
    subprocess.run(sys.argv[2:], stdout=f, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
whole_kb=$(rss "$T/whole.json" "$G" analyze -f json --window-mb 0 "$T/long.gpuscope")
win_kb=$(rss "$T/auto.json" "$G" analyze -f json --window-mb 16 "$T/long.gpuscope")
"$G" analyze -f json --windows 6 "$T/long.gpuscope" >"$T/six.json"
python3 - "$T/whole.json" "$T/auto.json" "$T/six.json" "$whole_kb" "$win_kb" <<'PY' || fail "the long report's windows differ"
import json, sys
w, a, s = (json.load(open(p)) for p in sys.argv[1:4])
whole_kb, win_kb = int(sys.argv[4]), int(sys.argv[5])
assert w["summary"]["windows"] == 0 and s["summary"]["windows"] == 6, (w["summary"], s["summary"])
assert a["summary"]["windows"] >= 5, a["summary"]
assert any("more than --window-mb" in n for n in a["notes"]), a["notes"]
assert w["findings"], "no findings"
for v in (a, s):
    assert [(f["id"], f["title"]) for f in v["findings"]] == [(f["id"], f["title"]) for f in w["findings"]], \
        ([f["title"] for f in v["findings"]], [f["title"] for f in w["findings"]])
    for f, g in zip(v["findings"], w["findings"]):
        assert abs(f["gain"] - g["gain"]) <= 0.005, (f["id"], f["gain"], g["gain"])
    assert abs(v["summary"]["gpu_busy"] - w["summary"]["gpu_busy"]) <= 0.005, (v["summary"], w["summary"])
    # the windows tile the run: its GPU busy is known
    assert v["summary"]["run_gpu_busy"] is not None
assert win_kb * 2 < whole_kb, ("peak RSS in windows", win_kb, "whole", whole_kb)
PY

expect_fail 2 "$G" analyze --windows 0 "$T/long.gpuscope"
expect_fail 2 "$G" analyze --windows 3 --start 1 "$T/long.gpuscope"
expect_fail 2 "$G" analyze --window-mb -1 "$T/long.gpuscope"
expect_fail 2 "$G" analyze --windows 2 "$D/import/simple_add.json.gz"
echo ok
