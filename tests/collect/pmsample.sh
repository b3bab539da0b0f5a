#!/usr/bin/env bash
# --pm-sampling without a GPU: the program is profiled as usual (its output and
# status are its own); the interval reaches the collector's environment (default
# 1000 us) and nothing of it otherwise; bad options fail before the program runs.
. "$(dirname "$0")/lib.sh"

profile -o cpu --pm-sampling=200 -- "$GS_TARGET" print >out 2>err
expect_eq "$rc" 0 "status of a CPU program under --pm-sampling"
"$GS_TARGET" print >plain
cmp -s out plain || fail "the program's output changed under --pm-sampling"
expect_eq "$(ndump cpu.gpuscope metric 'name="pm_')" 0 "PM samples without a GPU"

profile -o env --pm-sampling -- /bin/sh -c 'echo "$GPUSCOPE_PM_SAMPLING"' >out 2>/dev/null
expect_eq "$(cat out)" "1000" "default interval"
profile -o env2 --pm-sampling=250 -- /bin/sh -c 'echo "$GPUSCOPE_PM_SAMPLING"' >out 2>/dev/null
expect_eq "$(cat out)" "250" "interval"
GPUSCOPE_PM_SAMPLING=100 profile -o env3 -- /bin/sh -c 'echo "[${GPUSCOPE_PM_SAMPLING-unset}]"' >out 2>/dev/null
expect_eq "$(cat out)" "[unset]" "GPUSCOPE_PM_SAMPLING without --pm-sampling"

for bad in "--pm-sampling=150" "--pm-sampling=x" "--pm-sampling=0" "--trace=nvtx --pm-sampling" \
    "--pm-sampling --kernel-metrics"; do
  # shellcheck disable=SC2086
  profile -o bad $bad -- /bin/sh -c 'echo ran' >out 2>err
  expect_eq "$rc" 2 "status of 'profile $bad'"
  [ ! -s out ] || fail "the program ran despite '$bad'"
  grep -q 'error: ' err || fail "no error line for '$bad': $(cat err)"
done
echo ok
