#!/usr/bin/env bash
# bench/stats/run.sh - the `gpuscope stats` throughput and memory benchmark.
#
#   bash bench/stats/run.sh [EVENTS] [STREAMS]     (default 10000000 1)
#
# Builds gpuscope (build/), builds the generator against build/'s libraries,
# writes a report of EVENTS events (build/bench-stats/report.gpuscope, not in
# git), then times `gpuscope stats` with the default report set three times
# under /usr/bin/time -v and prints events/s and peak RSS bytes per event.
set -euo pipefail
cd "$(dirname "$0")/../.."
events=${1:-10000000}
streams=${2:-1}
dir=build/bench-stats
mkdir -p "$dir"
bash scripts/build.sh build >/dev/null
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/stats/gen_report.c build/src/trace/libgs_trace.a \
  build/src/util/libgs_util.a -lzstd -lm -o "$dir/gen_report"
report="$dir/report-$events-$streams.gpuscope"
if [ ! -s "$report" ]; then
  echo "generating $report ($events events, $streams streams)"
  "$dir/gen_report" "$report" "$events" "$streams"
fi
ls -l "$report"
build/gpuscope info "$report" | sed -n '1,6p'
for i in 1 2 3; do
  echo "load average before run $i: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -v build/gpuscope stats "$report" >"$dir/out.txt" 2>"$dir/time.txt"
  wall=$(grep 'Elapsed (wall clock)' "$dir/time.txt" | awk '{print $NF}')
  rss=$(grep 'Maximum resident set size' "$dir/time.txt" | awk '{print $NF}')
  user=$(grep 'User time' "$dir/time.txt" | awk '{print $NF}')
  sys=$(grep 'System time' "$dir/time.txt" | awk '{print $NF}')
  python3 - "$events" "$wall" "$rss" "$user" "$sys" <<'PY'
import sys
ev = int(sys.argv[1]); wall = sys.argv[2]; rss_kb = int(sys.argv[3])
parts = [float(p) for p in wall.split(':')]
sec = parts[-1] + (parts[-2] * 60 if len(parts) > 1 else 0) + (parts[-3] * 3600 if len(parts) > 2 else 0)
cpu = float(sys.argv[4]) + float(sys.argv[5])
print(f"run: wall {sec:.2f} s, {ev / sec / 1e6:.2f} M events/s; CPU {cpu:.2f} s "
      f"(user {sys.argv[4]} + sys {sys.argv[5]}), {ev / cpu / 1e6:.2f} M events per CPU-second; "
      f"peak RSS {rss_kb / 1024:.1f} MiB = {rss_kb * 1024 / ev:.1f} bytes/event")
PY
done
