#!/usr/bin/env bash
# The target's exit status passes through `gpuscope profile` unchanged.
. "$(dirname "$0")/lib.sh"
for n in 0 3 77; do
  profile -o "exit$n" -- "$GS_TARGET" exit "$n"
  expect_eq "$rc" "$n" "status of exit($n)"
  profile -o "ret$n" -- "$GS_TARGET" return "$n"
  expect_eq "$rc" "$n" "status of return $n from main"
done
profile -o underscore -- "$GS_TARGET" _exit 4
expect_eq "$rc" 4 "status of _exit(4)"
for sig in 9 15 2; do
  profile -o "kill$sig" -- "$GS_TARGET" kill "$sig"
  expect_eq "$rc" $((128 + sig)) "status of a target killed by signal $sig"
  [ -f "kill$sig.gpuscope" ] || fail "no report after signal $sig"
done
profile -o abrt -- "$GS_TARGET" abort
expect_eq "$rc" 134 "status of abort()"
profile -o segv -- "$GS_TARGET" segv
expect_eq "$rc" 139 "status of SIGSEGV"
echo ok
