#!/usr/bin/env bash
# bench/longrun/run.sh - reading a long run's report (issue 19, item 7).
#
#   bash bench/longrun/run.sh [EVENTS] [SMALL]     (default 100000000 10000000)
#
# Writes two synthetic reports through the real writer (trace_builder, via
# bench/stats/gen_report.c: NVTX steps, kernel launches, copies, sets, syncs,
# an OS-runtime read; about 3 µs of run time per event, so 100 M events are
# a 5-minute run) of SMALL and EVENTS events under build/bench-longrun/ (not
# in git), then measures with /usr/bin/time -v (peak RSS, wall):
#   1. `info` of both: streaming, its peak RSS must not grow with the events;
#   2. `stats --start 100s --end 110s` of the big one: a 10 s window;
#   3. `analyze`, `export --format json` and `diff` with `--start 100s --end 110s`
#      of the big one, and `analyze --start 10s --end 20s` of the small one,
#      under an address-space limit (ulimit -v, LIMIT_GB, default 4) so that
#      they cannot take the machine's memory: they load only the window (and
#      1 s around it), so peak RSS follows the window, not the file;
#   4. `analyze` of the whole big report under the same limit and of the whole
#      small report: analysed in windows (--window-mb, default 256 MiB;
#      docs/rules.md "Long reports"), B/event; the small one also at once
#      (--window-mb 0), B/event, and whether both give the same findings;
#   5. `dump` of the small one whole (--slice-events above its events) and in
#      its default slices, and of the big one in slices (DUMP_BIG=0 skips it;
#      each slice decompresses only its chunks, by the chunk index): peak RSS
#      must follow the slice, not the report;
#   6. the same 10 s window of a copy of the big report without its chunk
#      index (the chunks before it: what an older writer wrote), which the
#      reader scans whole: the cost the index saves (NOINDEX=0 skips it);
#   7. model_mem (bench/longrun/model_mem.c) on the small report: the
#      model's tables per event, against `analyze`'s peak RSS in 4.
# Prints one line per measurement; bench/RESULTS.md ("Long runs") has the
# figures of a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
big=${1:-100000000}
small=${2:-10000000}
limit_gb=${LIMIT_GB:-4}
dir=build/bench-longrun
mkdir -p "$dir"
[ -x build/gpuscope ] || bash scripts/build.sh build >/dev/null
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/stats/gen_report.c build/src/trace/libgs_trace.a \
  build/src/util/libgs_util.a -lzstd -lm -o "$dir/gen_report"
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/longrun/model_mem.c build/src/model/libgs_model.a \
  build/src/trace/libgs_trace.a build/src/util/libgs_util.a -lzstd -lm -lpthread -o "$dir/model_mem"
for n in "$small" "$big"; do
  r="$dir/report-$n.gpuscope"
  if [ ! -s "$r" ]; then
    /usr/bin/time -f "%e s %M KB" -o "$dir/gen-$n.time" "$dir/gen_report" "$r" "$n"
    echo "generated $r: $(stat -c %s "$r") bytes in $(cut -d' ' -f1-2 "$dir/gen-$n.time")"
  fi
done
# measure NAME CMD...: peak RSS and wall of CMD (status and first error line too)
measure() {
  local name=$1 rc=0; shift
  /usr/bin/time -v "$@" >"$dir/out.txt" 2>"$dir/time.txt" || rc=$?
  local rss wall
  rss=$(awk '/Maximum resident set size/ {print $NF}' "$dir/time.txt")
  wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$dir/time.txt")
  echo "$name: status $rc, peak RSS $rss KB, wall $wall$(grep -m1 'error:' "$dir/time.txt" | sed 's/^/, /')"
  RSS_KB=$rss
}
S=$dir/report-$small.gpuscope
B=$dir/report-$big.gpuscope
build/gpuscope info "$B" | sed -n '3,4p'
measure "info, $small events" build/gpuscope info "$S"
measure "info, $big events" build/gpuscope info "$B"
measure "stats --start 100s --end 110s, $big events" build/gpuscope stats --start 100s --end 110s "$B"
lim() { echo "ulimit -v $((limit_gb << 20)); exec $*"; }
measure "analyze --start 100s --end 110s, $big events, ulimit -v ${limit_gb} GiB" \
  bash -c "$(lim build/gpuscope analyze --start 100s --end 110s "'$B'")"
measure "analyze --start 10s --end 20s, $small events, ulimit -v ${limit_gb} GiB" \
  bash -c "$(lim build/gpuscope analyze --start 10s --end 20s "'$S'")"
measure "export --format json --start 100s --end 110s, $big events, ulimit -v ${limit_gb} GiB" \
  bash -c "$(lim build/gpuscope export --format json --force --start 100s --end 110s -o "'$dir/window.json'" "'$B'")"
rm -f "$dir/window.json"
measure "diff --start 100s --end 110s, $big events against itself, ulimit -v ${limit_gb} GiB" \
  bash -c "$(lim build/gpuscope diff --start 100s --end 110s "'$B'" "'$B'")"
measure "analyze, whole report in windows, $big events, ulimit -v ${limit_gb} GiB" \
  bash -c "$(lim build/gpuscope analyze --no-progress "'$B'")"
echo "analyze, whole report in windows, $big events: $(awk -v k="$RSS_KB" -v n="$big" 'BEGIN { printf "%.1f", k * 1024 / n }') B/event peak RSS"
measure "analyze, whole report in windows, $small events" build/gpuscope analyze --no-progress "$S"
cp "$dir/out.txt" "$dir/analyze-windows.txt"
echo "analyze, whole report in windows, $small events: $(awk -v k="$RSS_KB" -v n="$small" 'BEGIN { printf "%.1f", k * 1024 / n }') B/event peak RSS"
measure "analyze, whole report at once (--window-mb 0), $small events" build/gpuscope analyze --window-mb 0 "$S"
echo "analyze, whole report at once, $small events: $(awk -v k="$RSS_KB" -v n="$small" 'BEGIN { printf "%.1f", k * 1024 / n }') B/event peak RSS"
if diff <(grep -E '^[0-9]+\. ' "$dir/out.txt") <(grep -E '^[0-9]+\. ' "$dir/analyze-windows.txt") >/dev/null; then
  echo "analyze, $small events: the same findings and gains in windows as at once"
else
  echo "analyze, $small events: the findings in windows differ from those at once"
fi
measure "dump, whole (one slice), $small events" build/gpuscope dump --slice-events 1000000000000 "$S"
measure "dump, slices of 2 M events, $small events" build/gpuscope dump "$S"
if [ "${DUMP_BIG:-1}" != 0 ]; then
  measure "dump, slices of 2 M events, $big events" build/gpuscope dump "$B"
fi
if [ "${NOINDEX:-1}" != 0 ]; then
  # the index chunk's offset is the first 8 bytes of the file's last 16 (docs/report-format.md)
  off=$(tail -c 16 "$B" | od -An -tu8 -N8 | tr -d ' ')
  N=$dir/noindex-$big.gpuscope
  [ -s "$N" ] || head -c "$off" "$B" >"$N"
  measure "analyze --start 100s --end 110s, $big events, no chunk index (scanned)" \
    bash -c "$(lim build/gpuscope analyze --start 100s --end 110s "'$N'")"
  measure "stats --start 100s --end 110s, $big events, no chunk index (scanned)" \
    build/gpuscope stats --start 100s --end 110s "$N"
fi
"$dir/model_mem" "$S"
rm -f "$dir/out.txt"
