#!/usr/bin/env bash
# bench/export/run.sh [BUILD] [EVENTS] [RUNS] - export throughput on a generated report.
#
# Writes a report of EVENTS (default 10 million) records with the test
# generator (tests/export/gen_report.c, through trace_builder), then runs
# bench_export RUNS times (default 3) for perfetto, sqlite, chrome and html,
# and prints every run.  Outputs go to a temporary folder (about 3 GB).
set -euo pipefail
build=${1:-build}
events=${2:-10000000}
runs=${3:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/gs_export_gen" "$dir/bench.gpuscope" "$events" >/dev/null
ls -l "$dir/bench.gpuscope"
uptime
for i in $(seq "$runs"); do
	"$build/bench_export" "$dir/bench.gpuscope" "$dir" perfetto sqlite chrome html
	rm -f "$dir"/bench.pftrace "$dir"/bench.sqlite "$dir"/bench.json "$dir"/bench.html
done
uptime
