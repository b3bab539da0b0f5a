#!/usr/bin/env bash
# gpuscope monitor / health on the H200 recordings: table, CSV, JSON lines,
# alerts with --on-alert, --log, --record round trip, usage errors.
set -u
G=${GPUSCOPE:?}
D=${GS_SOURCE_DIR:?}/tests/data/nvml
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export TZ=UTC
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# idle -> load -> cool-down, recorded one after another: one replay
cat "$D/h200.idle.jsonl" "$D/h200.load.jsonl" "$D/h200.cool.jsonl" >"$W/session.jsonl"

# table: header, units, one row per GPU per interval
"$G" monitor --replay "$D/h200.load.jsonl" --interval 10 -c 3 -s pu >"$W/t.out" 2>"$W/t.err" || fail "table exited $?"
cat >"$W/t.exp" <<'X'
#Time     gpu   pwr gtemp mtemp  fan   sm  mem  enc  dec
#HH:MM:SS Idx     W     C     C    %    %    %    %    %
 02:46:59   0   371    53    41    -   99   20    0    0
 02:46:59   1    78    34    38    -    0    0    0    0
 02:46:59   0   545    52    41    -   99   22    0    0
 02:46:59   1    78    34    37    -    0    0    0    0
 02:46:59   0   600    51    41    -   99   22    0    0
 02:46:59   1    78    34    38    -    0    0    0    0
X
diff -u "$W/t.exp" "$W/t.out" || fail "table differs"

# -i and CSV, the whole recording: one line per tick of GPU 1 plus the header
"$G" monitor --replay "$D/h200.load.jsonl" --interval 10 -i 1 --format csv >"$W/c.out" || fail "csv exited $?"
[ "$(wc -l <"$W/c.out")" = 51 ] || fail "csv lines $(wc -l <"$W/c.out"), expected 51"
grep -q '^time,gpu,pwr,gtemp,mtemp,fan,sm,mem,enc,dec,mclk,pclk,fb,fbtot,pstate,plim,throttle$' "$W/c.out" || fail "csv header"
[ "$(cut -d, -f2 "$W/c.out" | sort -u | tr '\n' ' ')" = "1 gpu " ] || fail "csv has other GPUs than 1"

# JSON lines parse, and unsupported metrics are null, never 0
"$G" monitor --replay "$D/h200.idle.jsonl" --interval 10 -c 2 --format json >"$W/j.out" || fail "json exited $?"
python3 - "$W/j.out" <<'PY' || fail "json lines"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 4, len(rows)
assert [r["gpu"] for r in rows] == [0, 1, 0, 1]
for r in rows:
    assert r["metrics"]["fan_pct"] is None
    assert r["metrics"]["temp_c"] > 20
    assert r["throttle"] == ["gpu_idle"], r["throttle"]
    assert r["name"] == "NVIDIA H200"
PY

# alerts: start and end lines in time order, --on-alert gets the alert in env, --log gets all
"$G" monitor --replay "$W/session.jsonl" --interval 10 -i 0 -s p --alert 'power>600' \
	--alert 'throttle:sw_power_cap' --log "$W/log" \
	--on-alert 'echo "$GPUSCOPE_ALERT_STATE $GPUSCOPE_GPU $GPUSCOPE_ALERT $GPUSCOPE_ALERT_VALUE" >>'"$W/hook" \
	>"$W/a.out" 2>"$W/a.err" || fail "alerts exited $?"
grep alert "$W/a.out" >"$W/a.lines"
cat >"$W/a.exp" <<'X'
2026-11-30T02:46:59.371Z alert start gpu 0 'throttle:sw_power_cap' value sw_power_cap
2026-11-30T02:46:59.793Z alert start gpu 0 'power>600' value 600.263
2026-11-30T02:47:06.514Z alert end gpu 0 'power>600' value 273.221 after 6.7 s
2026-11-30T02:47:06.514Z alert end gpu 0 'throttle:sw_power_cap' value none after 7.1 s
X
diff -u "$W/a.exp" "$W/a.lines" || fail "alert lines differ"
sort "$W/hook" >"$W/hook.s"
cat >"$W/hook.exp" <<'X'
end 0 power>600 273.221
end 0 throttle:sw_power_cap none
start 0 power>600 600.263
start 0 throttle:sw_power_cap sw_power_cap
X
diff -u "$W/hook.exp" "$W/hook.s" || fail "on-alert environment differs"
[ "$(grep -c alert "$W/log")" = 4 ] || fail "log lacks the alert lines"
[ "$(grep -c '^ ' "$W/log")" = 90 ] || fail "log rows $(grep -c '^ ' "$W/log"), expected 90 (30 idle + 50 load + 10 cool ticks)"

# --alert-hold 3: the 3-sample power spike at the start of the load still counts once
"$G" monitor --replay "$W/session.jsonl" --interval 10 -i 0 -s p --alert 'power>600' --alert-hold 3 >"$W/h.out" || fail "hold exited $?"
[ "$(grep -c 'alert start' "$W/h.out")" = 1 ] || fail "hold: starts"
grep -q "alert start gpu 0 'power>600' value 673.482" "$W/h.out" || fail "hold: start value (third sample over 600)"

# record while replaying, then replay the recording: the same output
"$G" monitor --replay "$D/h200.load.jsonl" --interval 10 -c 5 --format csv -s pucmetlxgn --record "$W/rec.jsonl" >"$W/r1.out" || fail "record exited $?"
"$G" monitor --replay "$W/rec.jsonl" --interval 10 --format csv -s pucmetlxgn >"$W/r2.out" || fail "replay of recording exited $?"
diff -u "$W/r1.out" "$W/r2.out" || fail "replay of the recording differs"

# health on the recording: all pass, JSON agrees, exit 0
"$G" health --replay "$D/h200.idle.jsonl" >"$W/hl.out"; rc=$?
[ $rc = 0 ] || fail "health exited $rc"
grep -q '^health: pass (15 pass, 0 warn, 0 fail, 0 skipped)$' "$W/hl.out" || fail "health summary: $(tail -1 "$W/hl.out")"
grep -q '^0    pcie_link      pass   Gen5 x16, the maximum$' "$W/hl.out" || fail "health pcie line"
"$G" health --replay "$D/h200.idle.jsonl" --format json | python3 -c '
import json, sys
h = json.load(sys.stdin)
assert h["result"] == "pass" and h["driver_version"] == "580.159.04", h
assert len(h["checks"]) == 15 and len(h["gpus"]) == 2
assert {c["check"] for c in h["checks"]} == {"driver", "pcie_link", "throttle", "temperature", "ecc", "remapped_rows", "persistence", "nvlink"}
' || fail "health json"

# usage errors: one line naming the problem and the accepted form, exit 2
"$G" monitor --replay "$D/h200.idle.jsonl" -c 1 --alert 'temp>>85' >/dev/null 2>"$W/e1"; rc=$?
[ $rc = 2 ] || fail "bad alert exited $rc"
grep -q "bad alert 'temp>>85': no number after the operator; accepted: METRIC OP VALUE" "$W/e1" || fail "bad alert message: $(cat "$W/e1")"
[ "$(wc -l <"$W/e1")" = 1 ] || fail "bad alert message is not one line"
"$G" monitor --replay "$D/h200.idle.jsonl" -c 1 -s pq >/dev/null 2>"$W/e2"; [ $? = 2 ] || fail "bad group"
grep -q "unknown column group 'q'" "$W/e2" || fail "bad group message"
"$G" monitor --replay "$D/h200.idle.jsonl" -c 1 -i 5 >/dev/null 2>"$W/e3"; [ $? = 2 ] || fail "bad gpu"
grep -q "no GPU 5: this host has 2" "$W/e3" || fail "bad gpu message"
"$G" monitor --replay "$W/nonexistent" -c 1 >/dev/null 2>"$W/e4"; [ $? = 2 ] || fail "missing replay"
grep -q "cannot open replay" "$W/e4" || fail "missing replay message"
echo "failures: $fails"
[ $fails = 0 ]
