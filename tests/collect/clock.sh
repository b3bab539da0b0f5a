#!/usr/bin/env bash
# The collector's clock is CLOCK_MONOTONIC (on x86-64 a TSC line fitted to
# it): a mark's time is never before the CLOCK_MONOTONIC value the target
# read just before the mark, and typically within a few microseconds after.
. "$(dirname "$0")/lib.sh"
for clock in tsc monotonic; do
  if [ $clock = monotonic ]; then export GPUSCOPE_CLOCK=monotonic; fi
  profile -o "c$clock" -- "$GS_TARGET" clock
  expect_eq "$rc" 0 status
  "$GPUSCOPE" dump --absolute --type nvtx_mark "c$clock.gpuscope" |
    sed -E 's/^([0-9]+) .*payload=([0-9]+).*/\1 \2/' | awk '{ print $1 - $2 }' | sort -n >d
  n=$(wc -l <d)
  expect_ge "$n" 100 "$clock: marks"
  expect_ge "$(head -1 d)" -2000 "$clock: earliest mark minus its clock reading (ns)"
  expect_le "$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' d)" 5000 \
    "$clock: median mark minus its clock reading (ns)"
done
echo ok
