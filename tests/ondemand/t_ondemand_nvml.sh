#!/usr/bin/env bash
# profile --on-demand keeps its NVML samples in a ring of its own
# (docs/always-on.md, "GPU metrics in the flight recorder"): a program of
# 8 s, GPU metrics replayed from a recorded H200 (read as if live), triggered
# once mid-run from another process.  The report holds the samples of the
# ring before the capture and of the capture, and of the last --ring-s
# seconds, none of the run's beginning nor of the idle stretch between;
# the ring held what its bound says, not the run.
. "$(dirname "$0")/lib.sh"
MS=1000000
rec=${GS_SOURCE_DIR:?}/tests/data/nvml/h200.load.jsonl
[ -f "$rec" ] || fail "no $rec"
# 50 recorded ticks a GPU, 5 s at 10 Hz; four after one another (as `cat` joins recordings:
# the replay skips the repeated headers, and the sampler stamps each reading when read)
cat "$rec" "$rec" "$rec" "$rec" >replay.jsonl
export GPUSCOPE_NVML_REPLAY=$T/replay.jsonl

# temps REPORT : the absolute times of the temp_c samples (a fast-tier metric: every tick, every GPU)
temps() { "$GPUSCOPE" dump --absolute --type metric "$1" | awk '$4 == "name=\"temp_c\"" { print $1 }'; }

ring=$((500 * MS)); slack=$((30 * MS))
"$GPUSCOPE" profile --on-demand --ring-s 0.5 -o gm -- "$OD_TARGET" 8 10 2>err &
prof=$!
wait_socket 1
sleep 3
"$GPUSCOPE" capture --duration 0.5 gm >out
expect_grep "^capture 1 started in process [0-9]+ \(0.5 s\)$" out "the capture"
wait "$prof"
expect_grep "^gpuscope: on demand: 1 capture " err "profile's capture line"

"$GPUSCOPE" dump --absolute --type capture gm.gpuscope >e
s1=$(awk '/what=start/ { print $1 }' e); e1=$(awk '/what=stop/ { print $1 }' e)
[ -n "$s1" ] && [ -n "$e1" ] || fail "no capture edges: $(cat e)"
temps gm.gpuscope | sort -n >tm
# the GPUs' description (static maxima) is written once, at the sampler's start: the run's start
t0=$("$GPUSCOPE" dump --absolute --type metric gm.gpuscope | awk '$4 == "name=\"sm_clock_max_mhz\"" && !n++ { print $1 }')
[ -n "$t0" ] || fail "no static metric sm_clock_max_mhz"
last=$(tail -1 tm)
expect_ge $(( (s1 - t0) / MS )) 2500 "the capture came long after the start (ms)"
expect_ge $(( (last - e1) / MS )) 3000 "and long before the end (ms)"

# the run's beginning, up to the capture's ring: no sample
expect_eq "$(between tm 0 $((s1 - ring - slack)))" 0 "temp_c samples before the capture's ring"
# the ring before the capture and the capture (1 s at 10 Hz, 2 GPUs: about 20; at most
# two a tick of that span, and one more tick at each end)
most=$(( 2 * ((e1 - s1 + ring) / (100 * MS) + 2) ))
expect_ge "$(between tm $((s1 - ring)) "$e1")" 10 "temp_c samples of the ring before the capture and of the capture"
expect_le "$(between tm $((s1 - ring)) "$e1")" "$most" "temp_c samples of the ring before the capture and of the capture"
expect_ge "$(between tm $((s1 - ring)) "$s1")" 4 "temp_c samples of the ring before the capture"
expect_ge "$(between tm "$s1" "$e1")" 4 "temp_c samples inside the capture"
# the long idle stretch between the capture and the end's ring: no sample
expect_eq "$(between tm $((e1 + slack)) $((last - ring - slack)))" 0 "temp_c samples between the capture and the end's ring"
# the end's ring: the last 0.5 s
expect_ge "$(between tm $((last - ring)) $((last + 1)))" 4 "temp_c samples of the end's ring"

# profile's account: the samples kept are the report's, and the ring held at most
# rate x (ring-s + 2 s of slack + one tick), the bound of sampler.c, plus 0.5 s for the
# rate's unevenness (the slow tier's metrics come once a second): not the run
"$GPUSCOPE" info gm.gpuscope >info
inrep=$(count gm.gpuscope 'gpu metric samples')
read -r kept taken peak < <(sed -nE 's/^gpuscope: on demand: GPU metrics: ([0-9]+) of ([0-9]+) samples kept; the ring held ([0-9]+) at most .*/\1 \2 \3/p' err)
[ -n "${peak:-}" ] || { cat err >&2; fail "no GPU metric ring line"; }
expect_eq "$inrep" "$kept" "samples in the report against profile's count"
span_ms=$(( (last - t0) / MS ))
rate=$(( taken * 1000 / span_ms ))          # samples a second, all metrics and GPUs
expect_le "$peak" $(( rate * (500 + 2000 + 100 + 500) / 1000 )) "the ring's most samples (bound)"
expect_le $(( peak * 2 )) "$taken" "the ring held less than half the run's samples"
expect_le "$kept" $(( taken / 2 )) "samples kept: less than half of those taken"

# a process killed (SIGKILL) during its capture never writes the capture's stop: profile sees
# it is gone (checked once a second) and closes its capture, so the samples stop within about
# a second (plus the 0.3 s of the collector's edges and ticks), while the run goes on 4 s more
"$GPUSCOPE" profile --on-demand --ring-s 0.3 -o killed -- \
  sh -c "\"$OD_TARGET\" 7 10 & \"$OD_TARGET\" 3 10; wait" 2>err &
prof=$!
wait_socket 3
victim=
for p in $("$GPUSCOPE" capture --list | awk '{ print $2 }'); do   # the one of 3 s (sh and the other run on)
  case "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)" in *od_target\ 3\ 10\ ) victim=$p ;; esac
done
[ -n "$victim" ] || fail "killed: no 'od_target 3 10' among $("$GPUSCOPE" capture --list)"
sleep 1
"$GPUSCOPE" capture --duration 30 "$victim" >out
expect_grep "^capture 1 started in process $victim \(30 s\)$" out "killed: the capture"
sleep 0.5
kill -KILL "$victim"
wait "$prof" || true
temps killed.gpuscope | sort -n >tm
# the longest stretch without a sample: from the capture's close to the end's ring
gap=$(awk 'NR > 1 && $1 - p > g { g = $1 - p } { p = $1 } END { print int(g / 1000000) }' tm)
expect_ge "$gap" 2000 "killed: the idle stretch after the capture's close (ms)"
first=$(head -1 tm)
# before the gap: the ring (0.3 s), the capture until the kill (0.5 s), up to 1 s to see it gone
before=$(awk -v f="$first" 'NR > 1 && $1 - p > 2000000000 { exit } { p = $1; print $1 - f }' tm | tail -1)
expect_le $(( before / MS )) 2300 "killed: the samples of the capture reach (ms)"
expect_ge $(( before / MS )) 600 "killed: the samples of the capture reach (ms)"

# never triggered, an explicit rate: only the last --ring-s seconds of samples
"$GPUSCOPE" profile --on-demand --ring-s 0.4 --gpu-metrics=20 -o idle -- "$OD_TARGET" 3 10 2>err
temps idle.gpuscope | sort -n >tm
last=$(tail -1 tm); first=$(head -1 tm)
expect_le $(( (last - first) / MS )) 430 "idle: the samples' reach (ms)"
expect_ge $(( (last - first) / MS )) 250 "idle: the samples' reach (ms)"
expect_ge "$(wc -l <tm)" 8 "idle: temp_c samples of the end's ring (20 Hz, 2 GPUs, 0.4 s)"

# --no-gpu-metrics: none at all
"$GPUSCOPE" profile --on-demand --ring-s 0.4 --no-gpu-metrics -o none -- "$OD_TARGET" 0.5 10 2>err
expect_eq "$(count none.gpuscope 'gpu metric samples')" 0 "--no-gpu-metrics: samples"
if grep -q "GPU metrics:" err; then fail "--no-gpu-metrics: a GPU metric ring line"; fi
echo ok
