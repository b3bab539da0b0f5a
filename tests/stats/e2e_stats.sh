#!/usr/bin/env bash
# e2e_stats.sh - `gpuscope stats` from the command line: default set, formats,
# -o, --timeunit, filters, errors, unknown report, empty report, write errors.
set -u
GPUSCOPE=${GPUSCOPE:-build/gpuscope}
MK=${STATS_MKFIXTURE:-build/tests/stats/stats_mkfixture}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }
expect_status() { # name want cmd...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" -eq "$want" ]; then ok "$name (exit $got)"; else bad "$name: exit $got, want $want"; cat "$tmp/err"; fi
}
contains() { # name file text
  if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: '$3' not in $2"; sed 's/^/    /' "$2" | head -20; fi
}

"$MK" "$tmp/r.gpuscope" || { echo "cannot write fixture"; exit 1; }
"$MK" "$tmp/empty.gpuscope" empty || { echo "cannot write empty fixture"; exit 1; }

# default set: the six nsys defaults, in order
expect_status "default set" 0 "$GPUSCOPE" stats "$tmp/r.gpuscope"
order=$(grep -o '^ \*\* .*(\([a-z_]*\)):' "$tmp/out" | sed 's/.*(\(.*\)):/\1/' | tr '\n' ' ')
[ "$order" = "nvtx_sum osrt_sum cuda_api_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum " ] \
  && ok "default order" || bad "default order: $order"
contains "kernel row" "$tmp/out" "      42.9               90          3      30.0      20.0        10        60         26.5  A"
contains "memcpy row" "$tmp/out" "[CUDA memcpy Host-to-Device]"
contains "open range note" "$tmp/out" "note: 1 NVTX ranges were never ended and are not counted"

# csv, one report, exact
expect_status "csv" 0 "$GPUSCOPE" stats --report cuda_gpu_kern_sum --format csv "$tmp/r.gpuscope"
printf '%s\n' 'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name' \
  '42.9,90,3,30.0,20.0,10,60,26.5,A' '38.1,80,2,40.0,40.0,30,50,14.1,B' '19.0,40,1,40.0,40.0,40,40,0.0,C' >"$tmp/want"
cmp -s "$tmp/out" "$tmp/want" && ok "csv exact" || { bad "csv exact"; diff "$tmp/want" "$tmp/out"; }

# --timeunit changes labels and values
expect_status "timeunit us" 0 "$GPUSCOPE" stats -r cuda_gpu_kern_sum -f csv --timeunit us "$tmp/r.gpuscope"
contains "us label" "$tmp/out" "Total Time (us)"
contains "us value" "$tmp/out" "42.9,0.090,3,0.030,0.020,0.010,0.060,0.026,A"

# json: an array of report objects, parseable
expect_status "json" 0 "$GPUSCOPE" stats -r cuda_api_sum,osrt_sum --format=json "$tmp/r.gpuscope"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [r["report"] for r in d]==["cuda_api_sum","osrt_sum"], d; assert d[0]["rows"][0]["Name"]=="cudaDeviceSynchronize"' "$tmp/out" \
    && ok "json parses" || bad "json parses"
fi

# -o FILE
expect_status "-o" 0 "$GPUSCOPE" stats -r cuda_gpu_trace -o "$tmp/trace.txt" "$tmp/r.gpuscope"
[ ! -s "$tmp/out" ] && ok "-o leaves stdout empty" || bad "-o leaves stdout empty"
contains "-o content" "$tmp/trace.txt" "[CUDA memset]"
# several reports as CSV to a file: one file per report, as nsys does
expect_status "-o csv several" 0 "$GPUSCOPE" stats -r cuda_api_sum -r osrt_sum -f csv -o "$tmp/base.csv" "$tmp/r.gpuscope"
[ -s "$tmp/base_cuda_api_sum.csv" ] && [ -s "$tmp/base_osrt_sum.csv" ] && ok "csv files per report" || bad "csv files per report"

# filters
expect_status "window" 0 "$GPUSCOPE" stats -r cuda_gpu_kern_sum -f csv --start 1000ns --end 1300ns "$tmp/r.gpuscope"
[ "$(wc -l <"$tmp/out")" -eq 3 ] && ok "window rows" || bad "window rows: $(cat "$tmp/out")"
expect_status "nvtx filter" 0 "$GPUSCOPE" stats -r cuda_gpu_kern_sum --nvtx load@io "$tmp/r.gpuscope"
contains "nvtx filter empty" "$tmp/out" "cuda_gpu_kern_sum: no CUDA kernels in the selected time range"
expect_status "nvtx no such range" 2 "$GPUSCOPE" stats --nvtx nope "$tmp/r.gpuscope"
contains "nvtx error" "$tmp/err" "no closed NVTX range 'nope'"

# empty report: every report says so in one line, exit 0
expect_status "empty report" 0 "$GPUSCOPE" stats -r cuda_gpu_kern_sum -r osrt_sum "$tmp/empty.gpuscope"
contains "empty says so" "$tmp/out" "cuda_gpu_kern_sum: no CUDA kernels were recorded in this report"
contains "empty osrt" "$tmp/out" "osrt_sum: no OS runtime calls were recorded in this report"

# errors
expect_status "unknown report" 2 "$GPUSCOPE" stats -r nope "$tmp/r.gpuscope"
contains "lists known" "$tmp/err" "unknown report 'nope'; known reports: cuda_api_sum"
expect_status "no input" 2 "$GPUSCOPE" stats
expect_status "missing file" 2 "$GPUSCOPE" stats "$tmp/missing.gpuscope"
contains "names file" "$tmp/err" "missing.gpuscope"
echo "not a report" >"$tmp/junk.txt"
expect_status "not a report" 2 "$GPUSCOPE" stats "$tmp/junk.txt"
expect_status "bad format" 2 "$GPUSCOPE" stats -f xml "$tmp/r.gpuscope"
expect_status "bad timeunit" 2 "$GPUSCOPE" stats --timeunit min "$tmp/r.gpuscope"
expect_status "bad option" 2 "$GPUSCOPE" stats --frobnicate "$tmp/r.gpuscope"
expect_status "help" 0 "$GPUSCOPE" stats --help
contains "help lists reports" "$tmp/out" "nvtx_gpu_proj_sum"
if [ -w /dev/full ]; then
  "$GPUSCOPE" stats -r cuda_gpu_trace "$tmp/r.gpuscope" >/dev/full 2>"$tmp/err"; st=$?
  [ "$st" -eq 1 ] && ok "stdout full -> exit 1" || bad "stdout full -> exit $st"
  expect_status "write error to -o" 1 "$GPUSCOPE" stats -r cuda_gpu_trace -o /dev/full "$tmp/r.gpuscope"
fi
# every report, every format, on every real report under tests/data
all=$("$GPUSCOPE" stats --help | awk '/^Reports:/{on=1;next} /^$/{on=0} on{print $1}' | paste -sd, -)
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  for fmt in table csv json; do
    expect_status "all reports, $fmt: ${f#${GS_SOURCE_DIR:-.}/}" 0 "$GPUSCOPE" stats -r "$all" -f "$fmt" "$f"
  done
  if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) == int(sys.argv[2]), len(d)' \
      "$tmp/out" "$(echo "$all" | tr ',' '\n' | wc -l)" && ok "json of all reports parses" || bad "json of all reports parses"
  fi
done < <(find "${GS_SOURCE_DIR:-.}/tests/data" -name '*.gpuscope' -print0 2>/dev/null)
[ "$n" -gt 0 ] || echo "note: no *.gpuscope under tests/data; real-report runs skipped"

# kernel efficiency on a Kineto trace with shapes: FLOPs of a GEMM row, classes summing to 100 %
k="${GS_SOURCE_DIR:-.}/tests/data/import/sampled_rank-0.json.gz"
expect_status "cuda_kern_eff json" 0 "$GPUSCOPE" stats -r cuda_kern_eff,cuda_kern_class_sum -f json "$k"
python3 -c '
import json, sys
eff, cls = json.load(open(sys.argv[1]))
assert eff["report"] == "cuda_kern_eff" and cls["report"] == "cuda_kern_class_sum"
# 2 x aten::bmm [[2048,160,20],[2048,20,606]]: 2 * 2 * 2048 * 160 * 606 * 20 = 15885926400 FLOPs
row = [r for r in eff["rows"] if r["Name"] == "ampere_sgemm_128x128_tn" and r["Op"] == "aten::bmm"][0]
assert abs(row["GFLOP"] - 15.8859264) < 0.005, row   # printed with 2 decimals
assert row["Peak TFLOP/s"] is None, row          # no deviceProperties: unknown, not 0
assert abs(sum(r["Time (%)"] for r in cls["rows"]) - 100) < 0.5
' "$tmp/out" && ok "cuda_kern_eff json values" || bad "cuda_kern_eff json values"
expect_status "cuda_kern_eff table" 0 "$GPUSCOPE" stats -r cuda_kern_eff "$k"
contains "cuda_kern_eff note" "$tmp/out" "kernels linked to an operator with shapes"

mkdir -p "$tmp/ro"; chmod 500 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
  expect_status "cannot create -o" 1 "$GPUSCOPE" stats -o "$tmp/ro/x.txt" "$tmp/r.gpuscope"
fi
exit $fail
