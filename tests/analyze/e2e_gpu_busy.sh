#!/usr/bin/env bash
# e2e_gpu_busy.sh - one number, one meaning: GPU busy is the share of a window
# during which a kernel, copy or memset ran on the GPU.  On real H200 zoo reports,
# analyze prints the window it analysed and the whole run beside it; stats gpu_util
# over the same window and diff give the same figure as analyze.
set -u
G=${GPUSCOPE:-build/gpuscope}
src=${GS_SOURCE_DIR:-.}
fail=0
check() { local name=$1; shift; if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fail=1; fi; }
py=/usr/bin/python3
for c in dataloader sync launch-bound; do
  f=$src/tests/data/zoo/$c.broken.gpuscope
  [ -f "$f" ] || { echo "not ok - $f missing"; fail=1; continue; }
  j=$("$G" analyze --format json "$f" 2>/dev/null)
  read -r ws we busy run runbusy < <($py -c 'import json,sys; s=json.load(sys.stdin)["summary"]
print(s["window_start_s"], s["window_end_s"], s["gpu_busy"], s["run_s"], s["run_gpu_busy"])' <<<"$j")
  txt=$("$G" analyze "$f" 2>/dev/null)
  check "$c: the text names the window and the whole run" \
    grep -qE "^window: [0-9.]+-[0-9.]+ s of the .* run; GPU busy [0-9.]+% over the whole run$" <<<"$txt"
  check "$c: the window lies in the run" $py -c "import sys; sys.exit(0 if 0 <= $ws < $we <= $run + 1e-9 else 1)"
  check "$c: the whole run is not busier than its busiest window can make it" \
    $py -c "import sys; sys.exit(0 if $runbusy * $run + 1e-6 >= $busy * ($we - $ws) else 1)"
  # stats over the same window: the device row's busy % (the zoo runs on one GPU)
  sb=$("$G" stats -r gpu_util --format csv --start "${ws}s" --end "${we}s" "$f" 2>/dev/null |
    awk -F, '$2 == "all" { print $5; exit }')
  check "$c: stats gpu_util over analyze's window ($sb%) = analyze ($busy)" \
    $py -c "import sys; sys.exit(0 if abs(float('$sb') - 100 * $busy) <= 0.15 else 1)"
  db=$("$G" diff "$f" "$f" 2>/dev/null | awk '/^GPU busy \(analysed window\)/ { print $5; exit }' | tr -d %)
  check "$c: diff's GPU busy ($db%) = analyze ($busy)" \
    $py -c "import sys; sys.exit(0 if abs(float('$db') - 100 * $busy) <= 0.051 else 1)"
done
exit $fail
