#!/usr/bin/env bash
# 64 threads x 100,000 NVTX push/pop ranges: nothing dropped at the default
# buffer sizes.
. "$(dirname "$0")/lib.sh"
profile -o big -- "$GS_TARGET" nvtx 64 100000
expect_eq "$rc" 0 "status"
expect_eq "$(count big.gpuscope 'nvtx ranges')" 6400000 "nvtx ranges"
expect_eq "$(count big.gpuscope 'dropped:')" 0 "dropped"
echo ok
