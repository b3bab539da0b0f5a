#!/usr/bin/env bash
# The target's output is byte for byte the same with and without profiling.
. "$(dirname "$0")/lib.sh"
"$GS_TARGET" print >plain.out 2>plain.err
"$GPUSCOPE" profile -o p -- "$GS_TARGET" print >prof.out 2>prof.err
cmp plain.out prof.out || fail "stdout differs under profile"
# stderr: the target's lines first, then gpuscope's own one line
grep -v '^gpuscope: ' prof.err >prof.err.target || true
cmp plain.err prof.err.target || fail "stderr differs under profile"
expect_eq "$(grep -c '^gpuscope: wrote' prof.err)" 1 "gpuscope's line on stderr"
# stdin passes through too
printf 'abc\n' | "$GPUSCOPE" profile -o cat -- cat >cat.out 2>/dev/null
expect_eq "$(cat cat.out)" abc "stdin through profile"
echo ok
