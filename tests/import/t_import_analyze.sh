# gpuscope analyze and stats gpu_util on imported traces, against HTA's figures
# (shared/validation/hta_reference_outputs.json) on the traces where HTA's
# preprocessing changes nothing: integer microseconds, no ProfilerStep to drop.
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
D=$GS_SOURCE_DIR/tests/data/import

# HTA: idle 99.70 % (simple_add), 99.49 % (alexnet); compute 10670 / 10630 us;
# memory kernels (copies + sets) 39088 / 55511 us.
check_hta() { # FILE IDLE_PCT COMPUTE_NS MEMORY_NS
  "$GPUSCOPE" analyze --format json "$D/$1" >"$T/a.json" 2>"$T/err" || fail "analyze $1: $(cat "$T/err")"
  python3 - "$T/a.json" "$2" <<'PY' || fail "analyze $1: GPU idle differs from HTA's by more than 0.5 point"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "kineto", d["format"]
idle = 100 * d["summary"]["gpu_idle"]
sys.exit(0 if abs(idle - float(sys.argv[2])) <= 0.5 else 1)
PY
  "$GPUSCOPE" stats -r gpu_util --format csv "$D/$1" >"$T/u.csv" 2>/dev/null || fail "stats gpu_util $1"
  awk -F, -v c="$3" -v mem="$4" '$2 == "all" { ok = ($7 == c && $8 + $9 == mem) } END { exit !ok }' "$T/u.csv" ||
    fail "gpu_util $1: kernel/copy time differs from HTA's compute/memory time: $(cat "$T/u.csv")"
}
check_hta simple_add.json.gz 99.70 10670000 39088000
check_hta alexnet.json.gz 99.49 10630000 55511000

# NCCL trace: communication not overlapped, from the 21 NCCL kernels
"$GPUSCOPE" analyze "$D/nccl_data.json.gz" >"$T/a.txt" 2>&1 || fail "analyze on nccl_data"
grep -q 'exposed-communication' "$T/a.txt" || fail "no exposed-communication finding"
grep -q '21 communication kernels' "$T/a.txt" || fail "not 21 communication kernels: $(cat "$T/a.txt")"
grep -q 'rank 0 of world size 2' "$T/a.txt" || fail "distributed info not shown"

# nsys export
gzip -dc "$D/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" >"$T/saxpy.sqlite"
"$GPUSCOPE" analyze --format json "$T/saxpy.sqlite" >"$T/a.json" 2>"$T/err" || fail "analyze on nsys: $(cat "$T/err")"
grep -q '"format": *"nsys-sqlite"' "$T/a.json" || fail "analyze json format is not nsys-sqlite"
echo ok
