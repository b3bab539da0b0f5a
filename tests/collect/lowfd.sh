#!/usr/bin/env bash
# The collector's own descriptors (part file, CPU sampler) stay out of the
# way: descriptors below 700 are the same as without profiling.
. "$(dirname "$0")/lib.sh"
plain=$("$GS_TARGET" lowfd)
profile -o l -- "$GS_TARGET" lowfd >out
expect_eq "$rc" 0 status
expect_eq "$(cat out)" "$plain" "descriptors below 700"
expect_ge "$(ndump l.gpuscope cpu_sample .)" 1 "CPU samples"
echo ok
