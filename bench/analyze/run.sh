#!/usr/bin/env bash
# bench/analyze/run.sh - analysis throughput on a generated report.
#
#   bench/analyze/run.sh [BUILD_DIR] [EVENTS]     (defaults: build, 10000000)
#
# Generates (once) a PyTorch-like training-loop report of EVENTS rows with
# build/tests/analyze/gs_gen_synth, then:
#  - gs_bench_analyze: load and analysis timed apart, wall and CPU (3 rounds);
#  - `gpuscope analyze REPORT` itself, 3 times, with /usr/bin/time.
# The target (issue 7): >= 2 million events per second on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
N=${2:-10000000}
report=${TMPDIR:-/tmp}/gs-bench-analyze-$N.gpuscope
if [ ! -f "$report" ]; then
  echo "generating $report ($N events)"
  "$B/tests/analyze/gs_gen_synth" big "$N" "$report"
fi
echo "report: $(stat -c %s "$report") bytes; cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/tests/analyze/gs_bench_analyze" "$report" 3
for i in 1 2 3; do
  /usr/bin/time -f "gpuscope analyze: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
    "$B/gpuscope" analyze "$report" >/dev/null
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
