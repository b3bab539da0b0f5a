#!/usr/bin/env bash
# profile --on-demand: a long-running NVTX program triggered twice from
# another process by `gpuscope capture` (by report name, then by pid); both
# captures and the flight recorder's ring before each are in the report,
# and nothing else but the ring at the end.  Then a run never triggered,
# the step_time trigger, and a capture range that never started.
. "$(dirname "$0")/lib.sh"
MS=1000000

# 3 s of 10 ms steps; ring 0.3 s
"$GPUSCOPE" profile --on-demand --ring-s 0.3 -o od -- "$OD_TARGET" 3 10 2>err &
prof=$!
wait_socket 1
pid=$("$GPUSCOPE" capture --list | awk '{ print $2 }')
"$GPUSCOPE" capture --list >list
expect_grep "^pid $pid name od captures 0 state idle steps [0-9]+ step_ns [0-9]+$" list "--list before any capture"
sleep 0.6
"$GPUSCOPE" capture --duration 0.3 od >out1
expect_grep "^capture 1 started in process $pid \(0.3 s\)$" out1 "first capture, by name"
# a second one while the first records is refused
rc=0; "$GPUSCOPE" capture --duration 1 "$pid" 2>busy || rc=$?
expect_eq "$rc" 1 "busy: exit status"
expect_grep "process $pid: busy: capture 1 is still recording" busy "busy: message"
sleep 1.0
"$GPUSCOPE" capture --steps 5 "$pid" >out2
expect_grep "^capture 2 started in process $pid \(5 steps\)$" out2 "second capture, by pid"
# the Prometheus text: two captures, a step time of about 10 ms
sleep 0.3
"$GPUSCOPE" capture --metrics >prom
expect_grep "^# TYPE gpuscope_process_captures_total counter$" prom "metrics: type line"
expect_grep "^gpuscope_process_captures_total\{pid=\"$pid\",report=\"od\"\} 2$" prom "metrics: captures"
expect_grep "^gpuscope_process_capturing\{pid=\"$pid\",report=\"od\"\} 0$" prom "metrics: capturing"
st=$(awk '/^gpuscope_process_step_time_seconds/ { print int($2 * 1000) }' prom)
expect_ge "$st" 9 "metrics: step time (ms)"
expect_le "$st" 500 "metrics: step time (ms)"
wait "$prof"

expect_eq "$(count od.gpuscope 'capture edges')" 4 "capture edges"
"$GPUSCOPE" info od.gpuscope >info
expect_grep "^captures: 2$" info "info: captures"
expect_grep "^  1  command +start .* length .* ring .* processes 1$" info "info: capture 1"
expect_grep "^  2  command +start .* length .* ring .* processes 1$" info "info: capture 2"

edges od.gpuscope >e
expect_eq "$(awk '{ print $1 }' e | tr '\n' ' ')" "start stop start stop " "edge order"
s1=$(awk 'NR == 1 { print $2 }' e); e1=$(awk 'NR == 2 { print $2 }' e)
s2=$(awk 'NR == 3 { print $2 }' e); e2=$(awk 'NR == 4 { print $2 }' e)
# capture 1 lasted its 0.3 s (the writer ends it within its 50 ms period)
expect_ge $(( (e1 - s1) / MS )) 290 "capture 1 length (ms)"
expect_le $(( (e1 - s1) / MS )) 800 "capture 1 length (ms)"
# capture 2: five 10 ms steps
expect_ge $(( (e2 - s2) / MS )) 35 "capture 2 length (ms)"
expect_le $(( (e2 - s2) / MS )) 1000 "capture 2 length (ms)"

marks od.gpuscope >m
end=$(sort -n m | tail -1)
ring=$((300 * MS)); slack=$((30 * MS))
# the ring before each capture reaches back most of its 0.3 s (counts of marks would
# depend on the machine's load: a starved 10 ms step takes longer)
expect_ge "$(between m $((s1 - ring)) "$s1")" 3 "marks in the ring before capture 1"
expect_ge "$(reach m $((s1 - ring - slack)) "$s1")" $((200 * MS)) "the ring's reach before capture 1 (ns)"
expect_ge "$(between m $((s2 - ring)) "$s2")" 3 "marks in the ring before capture 2"
expect_ge "$(reach m $((s2 - ring - slack)) "$s2")" $((200 * MS)) "the ring's reach before capture 2 (ns)"
# nothing older than the ring before capture 1
expect_eq "$(between m 0 $((s1 - ring - slack)))" 0 "marks before capture 1's ring"
# inside the captures
expect_ge "$(between m "$s1" "$e1")" 3 "marks in capture 1"
expect_ge "$(between m "$s2" "$e2")" 3 "marks in capture 2"
# between capture 1 and capture 2's ring: not recorded
expect_eq "$(between m $((e1 + slack)) $((s2 - ring - slack)))" 0 "marks between the captures"
# after capture 2, only the ring written at the end (the last 0.3 s)
expect_eq "$(between m $((e2 + slack)) $((end - ring - slack)))" 0 "marks between capture 2 and the end's ring"
expect_ge "$(between m $((end - ring)) $((end + 1)))" 3 "marks in the end's ring"
expect_ge "$(reach m $((end - ring - slack)) $((end + 1)))" $((200 * MS)) "the end's ring's reach (ns)"

# analyze loads one capture with its ring
"$GPUSCOPE" analyze --no-progress --capture 1 od.gpuscope >a1
expect_grep "^window: " a1 "analyze --capture 1"
rc=0; "$GPUSCOPE" analyze --no-progress --capture 3 od.gpuscope 2>a3 >/dev/null || rc=$?
expect_ge "$rc" 1 "analyze --capture 3: exit status"
expect_grep "has 2 captures, not 3" a3 "analyze --capture 3: message"
# diff compares one capture of each run: its wall time is the capture's length (no ring)
"$GPUSCOPE" diff --format json --capture 2 od.gpuscope od.gpuscope >d2
w2=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(int([x for x in d["metrics"] if x["key"] == "wall_s"][0]["before"]["value"] * 1e9))' d2)
expect_ge "$w2" $(( e2 - s2 - MS )) "diff --capture 2: wall time (ns) against the capture's length"
expect_le "$w2" $(( e2 - s2 + MS )) "diff --capture 2: wall time (ns) against the capture's length"
rc=0; "$GPUSCOPE" diff --capture 3 od.gpuscope od.gpuscope 2>d3 >/dev/null || rc=$?
expect_ge "$rc" 1 "diff --capture 3: exit status"
expect_grep "has 2 captures, not 3" d3 "diff --capture 3: message"
# the socket is gone with the process
expect_eq "$(ls ctl | wc -l)" 0 "sockets left"

# never triggered: only the ring of the last 0.4 s (of 1.5 s) is recorded
"$GPUSCOPE" profile --on-demand --ring-s 0.4 -o idle -- "$OD_TARGET" 1.5 10 2>err
expect_eq "$(count idle.gpuscope 'capture edges')" 0 "idle: capture edges"
"$GPUSCOPE" dump --type nvtx_mark idle.gpuscope | sed -E 's/.*payload=([0-9]+).*/\1/' | sort -n >p
expect_ge "$(wc -l <p)" 3 "idle: marks in the ring"
expect_le "$(wc -l <p)" 45 "idle: marks in the ring (at most one per 10 ms step)"
expect_ge $(( $(tail -1 p) - $(head -1 p) )) 250 "idle: the ring's reach (ms)"
expect_ge "$(head -1 p)" 1000 "idle: first mark (ms after the start)"

# step_time: step 60 takes 10 times as long (4x: above a loaded machine's noise, which may
# still stretch a step now and then: so other captures are allowed, but one must follow step 60)
"$GPUSCOPE" profile --on-demand --ring-s 1 --trigger 'step_time>4x median' -o slow -- \
  "$OD_TARGET" 1.5 10 60 2>err
"$GPUSCOPE" info slow.gpuscope >info
n=$(awk '/^captures: / { print $2 }' info)
expect_ge "${n:-0}" 1 "step_time: captures"
expect_le "${n:-0}" 3 "step_time: captures"
expect_eq "$(grep -cE '^  [0-9]+  step_time ' info)" "$n" "step_time: their trigger"
"$GPUSCOPE" dump --type nvtx_range slow.gpuscope | grep 'name="ProfilerStep#60"' >s60 || true
expect_eq "$(wc -l <s60)" 1 "step_time: the slow step is in the report"
t60=$(awk '{ print $1 }' s60); d60=$(sed -E 's/.*dur=([0-9]+).*/\1/' s60)
expect_ge $((d60 / MS)) 95 "step_time: the slow step's length (ms)"
# a capture starts at its end (the trigger is its end), and lasts its 10 steps
edges slow.gpuscope >e
awk -v t=$((t60 + d60)) '$1 == "start" && $2 >= t && $2 - t <= 2000000 { getline s; split(s, f, " "); print f[2] - $2 }' e >len
expect_eq "$(wc -l <len)" 1 "step_time: a capture at the slow step's end"
expect_ge $(( $(cat len) / MS )) 80 "step_time: its length (ms)"
expect_le $(( $(cat len) / MS )) 2000 "step_time: its length (ms)"

# under --on-demand a capture range repeats: every "work" range is a capture
"$GPUSCOPE" profile --on-demand --ring-s 0.05 -c nvtx -p work -o rep -- "$OD_TARGET" 0.3 10 2>err
"$GPUSCOPE" info rep.gpuscope >info
n=$(awk '/^captures: / { print $2 }' info)
expect_ge "${n:-0}" 20 "repeated nvtx range: captures"
expect_eq "$(grep -cE '^  [0-9]+  nvtx ' info)" "$n" "repeated nvtx range: trigger"
expect_eq "$(count rep.gpuscope 'capture edges')" $((2 * n)) "repeated nvtx range: edges"

# lock waits: by default --on-demand preloads the collector without lock wrappers (none
# recorded, in captures either); with --lock-waits captures record them, and the ring still
# has none (outside a capture a lock wrapper is a jump to the real function); docs/always-on.md
osrt_count() { "$GPUSCOPE" dump --type osrt "$1" | grep -c "func=$2 " || true; }   # REPORT FUNC
OD_LOCK=1 "$GPUSCOPE" profile --on-demand --ring-s 0.05 -c nvtx -p work -o lcap -- "$OD_TARGET" 0.6 10 2>err
expect_eq "$(osrt_count lcap.gpuscope pthread_mutex_lock)" 0 "captures without --lock-waits: lock waits"
expect_ge "$(osrt_count lcap.gpuscope nanosleep)" 10 "captures without --lock-waits: sleeps"
OD_LOCK=1 "$GPUSCOPE" profile --on-demand --lock-waits --ring-s 0.05 -c nvtx -p work -o lcapw -- \
  "$OD_TARGET" 0.6 10 2>err
expect_ge "$(osrt_count lcapw.gpuscope pthread_mutex_lock)" 10 "captures with --lock-waits: lock waits"
OD_LOCK=1 "$GPUSCOPE" profile --on-demand --lock-waits --ring-s 0.5 -o lidle -- "$OD_TARGET" 0.6 10 2>err
expect_eq "$(osrt_count lidle.gpuscope pthread_mutex_lock)" 0 "--lock-waits, never triggered: lock waits in the ring"
expect_ge "$(osrt_count lidle.gpuscope nanosleep)" 10 "--lock-waits, never triggered: sleeps in the ring"
rc=0; "$GPUSCOPE" profile --lock-waits -o bad -- "$OD_TARGET" 0.1 10 2>err || rc=$?
expect_eq "$rc" 2 "--lock-waits without --on-demand: exit status"
expect_grep "need --on-demand" err "--lock-waits without --on-demand: message"

# a monitor alert's --on-alert calls `gpuscope capture` (a recorded H200 replay crossing 600 W)
replay=${GS_SOURCE_DIR:-}/tests/data/nvml/h200.load.jsonl
if [ -f "$replay" ]; then
  "$GPUSCOPE" profile --on-demand --ring-s 0.2 -o alerted -- "$OD_TARGET" 2 10 2>err &
  prof=$!
  wait_socket 1
  "$GPUSCOPE" monitor --replay "$replay" --interval 10 -i 0 -s p --alert 'power>600' \
    --on-alert '[ "$GPUSCOPE_ALERT_STATE" = start ] && "$GPUSCOPE" capture --duration 0.3 alerted >>'"$T/hook" \
    >/dev/null 2>&1
  wait "$prof"
  expect_grep "^capture 1 started in process" "$T/hook" "on-alert: the capture command"
  "$GPUSCOPE" info alerted.gpuscope >info
  expect_grep "^captures: 1$" info "on-alert: one capture"
else
  echo "skip: no $replay (the monitor alert part)"
fi

# --trigger on a GPU reading: profile's own NVML samples (the recorded H200 load: 52 C, memory in use)
if [ -f "$replay" ]; then
  GPUSCOPE_NVML_REPLAY=$replay "$GPUSCOPE" profile --on-demand --ring-s 0.2 --trigger 'temp>30' -o hot -- \
    "$OD_TARGET" 1.5 10 2>hot.err
  expect_grep "^gpuscope: capture 1 started in process [0-9]+ \(10 s, GPU 0 at [0-9.]+ C over 30.0 C\)$" hot.err \
    "temp trigger: the capture"
  "$GPUSCOPE" info hot.gpuscope >info
  expect_grep "^  1  gpu +start " info "temp trigger: capture 1 opened by a GPU reading"
  GPUSCOPE_NVML_REPLAY=$replay "$GPUSCOPE" profile --on-demand --ring-s 0.2 --trigger 'temp>99' -o cool -- \
    "$OD_TARGET" 1 10 2>cool.err
  expect_eq "$(count cool.gpuscope 'capture edges')" 0 "temp trigger under the line: no capture"
  GPUSCOPE_NVML_REPLAY=$replay "$GPUSCOPE" profile --on-demand --ring-s 0.2 --trigger 'mem_used>0.1%' -o full -- \
    "$OD_TARGET" 1.5 10 2>full.err
  expect_grep "^gpuscope: capture 1 started in process [0-9]+ \(10 s, GPU 0 memory used [0-9.]+% over 0.1%\)$" \
    full.err "mem_used trigger: the capture"
fi

# monitor's /metrics serves the on-demand processes' steps beside the GPUs' (an alert rule can trigger)
if [ -f "$replay" ] && command -v curl >/dev/null; then
  "$GPUSCOPE" profile --on-demand --ring-s 0.2 -o promrun -- "$OD_TARGET" 30 10 2>err &
  prof=$!
  wait_socket 1
  "$GPUSCOPE" monitor --replay "$replay" --replay-loop --interval 50 -i 0 -s p --prometheus 127.0.0.1:0 \
    >/dev/null 2>"$T/prom.err" &
  mon=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*serving Prometheus metrics on port \([0-9]*\) at \/metrics$/\1/p' "$T/prom.err")
    [ -n "$port" ] && break
    sleep 0.1
  done
  got=0
  for _ in $(seq 50); do   # the body is rendered at each interval: wait for one with the process in it
    curl -s "http://127.0.0.1:$port/metrics" >"$T/prom.txt" 2>/dev/null || true
    grep -qE '^gpuscope_process_steps_total\{pid="[0-9]+",report="promrun"\} [0-9]+$' "$T/prom.txt" && { got=1; break; }
    sleep 0.1
  done
  kill "$mon" 2>/dev/null || true
  wait "$mon" 2>/dev/null || true
  kill -TERM "$prof" 2>/dev/null || true
  wait "$prof" 2>/dev/null || true
  expect_grep '^DCGM_FI_DEV_POWER_USAGE' "$T/prom.txt" "/metrics: the GPU's power"
  expect_eq "$got" 1 "/metrics: the on-demand process's steps (last body: $(grep -c . "$T/prom.txt") lines)"
else
  echo "skip: no replay or no curl (monitor's /metrics)"
fi

# several processes of one run: a capture by name reaches each, and is one capture of the report
"$GPUSCOPE" profile --on-demand --ring-s 0.3 -o multi -- sh -c "\"$OD_TARGET\" 2 10 & \"$OD_TARGET\" 2 10; wait" 2>err &
prof=$!
wait_socket 3
sleep 0.5
"$GPUSCOPE" capture --duration 0.3 multi >out
wait "$prof"
expect_ge "$(grep -c '^capture 1 started in process' out)" 3 "multi: processes triggered"
"$GPUSCOPE" info multi.gpuscope >info
expect_grep "^captures: 1$" info "multi: one capture"
expect_grep "^  1  command .* processes [3-9]$" info "multi: its processes"

# SIGTERM (systemctl stop) during a capture: its stop edge and the ring are written
"$GPUSCOPE" profile --on-demand --ring-s 0.3 -o term -- "$OD_TARGET" 5 10 2>err &
prof=$!
wait_socket 1
pid=$("$GPUSCOPE" capture --list | awk '{ print $2 }')
sleep 0.8
"$GPUSCOPE" capture --duration 10 "$pid" >/dev/null
sleep 0.3
kill -TERM "$pid"
wait "$prof" || true
expect_eq "$(count term.gpuscope 'capture edges')" 2 "SIGTERM: capture edges"
marks term.gpuscope >m
edges term.gpuscope >e
s1=$(awk 'NR == 1 { print $2 }' e)
expect_ge "$(between m $((s1 - 300 * MS)) "$s1")" 3 "SIGTERM: marks in the ring before the capture"
expect_ge "$(reach m $((s1 - 330 * MS)) "$s1")" $((200 * MS)) "SIGTERM: the ring's reach (ns)"
expect_ge "$(between m "$s1" $((s1 + 10000 * MS)))" 3 "SIGTERM: marks in the capture"

# SIGTERM while idle: the ring (the last 0.3 s, by whole segments) is written
"$GPUSCOPE" profile --on-demand --ring-s 0.3 -o termidle -- "$OD_TARGET" 5 10 2>err &
prof=$!
wait_socket 1
pid=$("$GPUSCOPE" capture --list | awk '{ print $2 }')
sleep 1.2
kill -TERM "$pid"
wait "$prof" || true
expect_eq "$(count termidle.gpuscope 'capture edges')" 0 "SIGTERM idle: capture edges"
"$GPUSCOPE" dump --type nvtx_mark termidle.gpuscope | sed -E 's/.*payload=([0-9]+).*/\1/' | sort -n >p
expect_ge "$(wc -l <p)" 3 "SIGTERM idle: marks of the ring"
expect_ge $(( $(tail -1 p) - $(head -1 p) )) 200 "SIGTERM idle: the ring's reach (ms)"
expect_ge "$(tail -1 p)" 1000 "SIGTERM idle: the last mark (ms after the start)"

# --capture-range=nvtx whose range never starts: profile names the ranges it saw
"$GPUSCOPE" profile -c nvtx -p nosuch -o never -- "$OD_TARGET" 0.2 10 2>err || true
expect_grep "never started" err "never started: message"
expect_grep "'work'" err "never started: the ranges seen"
echo ok
