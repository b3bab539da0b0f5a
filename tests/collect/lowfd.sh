#!/usr/bin/env bash
# The collector's own descriptors (part file, CPU sampler) stay out of the
# way: descriptors below 700 are the same as without profiling.
. "$(dirname "$0")/lib.sh"
plain=$("$GS_TARGET" lowfd)
profile -o l -- "$GS_TARGET" lowfd >out
expect_eq "$rc" 0 status
expect_eq "$(cat out)" "$plain" "descriptors below 700"
expect_ge "$(ndump l.gpuscope cpu_sample .)" 1 "CPU samples"
# ... not even for a moment: the CPU sampler, at 1 kHz here, never takes the
# lowest free descriptor while the program opens and closes one for 300 ms
profile -o lowest --cpu-sample-hz 1000 -- "$GS_TARGET" lowest >out
expect_eq "$rc" 0 "status ($(cat out))"
expect_ge "$(ndump lowest.gpuscope cpu_sample .)" 30 "CPU samples at 1 kHz"
echo ok
