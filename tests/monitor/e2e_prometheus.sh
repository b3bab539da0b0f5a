#!/usr/bin/env bash
# The Prometheus endpoint for real: libmicrohttpd on 127.0.0.1 and a free
# port, read with curl while the monitor keeps sampling a looping replay.
set -u
G=${GPUSCOPE:?}
D=${GS_SOURCE_DIR:?}/tests/data/nvml
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }
W=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$G" monitor --replay "$D/h200.load.jsonl" --replay-loop --interval 50 --format csv \
	--prometheus 127.0.0.1:0 >"$W/rows" 2>"$W/err" &
pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving Prometheus metrics on port \([0-9]*\) at \/metrics$/\1/p' "$W/err")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { fail "no port announced: $(cat "$W/err")"; exit 1; }
sleep 0.3
code=$(curl -s -D "$W/h1" -o "$W/m1" -w '%{http_code}' "http://127.0.0.1:$port/metrics")
[ "$code" = 200 ] || fail "/metrics answered $code"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$W/h1" || fail "content type: $(cat "$W/h1")"
grep -q '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "$W/m1" || fail "no GPU_UTIL family"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-d4097e82-46da-1027-a96b-7040573d50ed",pci_bus_id="00000000:00:07.0",device="nvidia1",modelName="NVIDIA H200",hostname="vm",DCGM_FI_DRIVER_VERSION="580.159.04"} [0-9.]*$' "$W/m1" ||
	fail "no POWER_USAGE line for GPU 1"
grep -q '^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",' "$W/m1" || fail "no GPM tensor line"
grep -q 'DCGM_FI_DEV_FAN_SPEED' "$W/m1" && fail "unsupported fan exported"
# every sample line is NAME{labels} NUMBER
bad=$(grep -v '^#' "$W/m1" | grep -cvE '^[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\} -?[0-9.]+(e[-+][0-9]+)?$')
[ "$bad" = 0 ] || fail "$bad malformed sample lines"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")" = 404 ] || fail "/other is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics")" = 405 ] || fail "POST is not 405"
# it keeps sampling while serving: the energy counter moves on
e1=$(sed -n 's/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",[^}]*} //p' "$W/m1")
sleep 0.5
curl -s -o "$W/m2" "http://127.0.0.1:$port/metrics"
e2=$(sed -n 's/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",[^}]*} //p' "$W/m2")
echo "energy $e1 -> $e2 mJ"
awk -v a="$e1" -v b="$e2" 'BEGIN { exit !(a != "" && b + 0 > a + 0) }' || fail "energy did not advance: $e1 -> $e2"
kill $pid
wait $pid
rc=$?
pid=
[ $rc = 0 ] || fail "monitor exited $rc after SIGTERM"
[ "$(wc -l <"$W/rows")" -gt 10 ] || fail "too few rows while serving"
# a port in use: one-line error, exit 2
"$G" monitor --replay "$D/h200.load.jsonl" --replay-loop --prometheus 127.0.0.1:0 -c 1 --interval 10 >/dev/null 2>&1 || fail "port 0 run"
"$G" monitor --replay "$D/h200.load.jsonl" --prometheus 'nohost:x' -c 1 >/dev/null 2>"$W/e"; rc=$?
[ $rc = 2 ] || fail "bad --prometheus exited $rc"
grep -q "bad --prometheus 'nohost:x': expected \[ADDR:\]PORT" "$W/e" || fail "bad --prometheus message: $(cat "$W/e")"
echo "failures: $fails"
[ $fails = 0 ]
