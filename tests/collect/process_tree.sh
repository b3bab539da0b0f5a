#!/usr/bin/env bash
# fork, fork+exec, posix_spawn and a python3 subprocess land in one report.
. "$(dirname "$0")/lib.sh"
check() { # REPORT PROCS CHILD_MARK
  if [ "$2" -gt 0 ]; then expect_eq "$(count "$1" 'processes:')" "$2" "$1: processes"; fi
  expect_eq "$(ndump "$1" nvtx_mark "name=\"$3\"")" 1 "$1: the child's mark"
  expect_eq "$(ndump "$1" nvtx_mark 'name="parent"')" 1 "$1: the parent's mark"
  # the child's mark comes from another pid than the parent's
  a=$("$GPUSCOPE" dump --type nvtx_mark "$1" | grep "name=\"$3\"" | sed -E 's/.* pid=([0-9]+).*/\1/')
  b=$("$GPUSCOPE" dump --type nvtx_mark "$1" | grep 'name="parent"' | sed -E 's/.* pid=([0-9]+).*/\1/')
  [ "$a" != "$b" ] || fail "$1: child mark has the parent's pid"
}
profile -o fork -- "$GS_TARGET" fork;          expect_eq "$rc" 0 "fork status"
check fork.gpuscope 2 child
# strings and domains made before fork() are defined in the child's stream too
expect_eq "$(ndump fork.gpuscope nvtx_mark 'name="registered before fork" domain="forkdomain"')" 1 \
  "the child's mark with a string registered before fork"
profile -o forkexec -- "$GS_TARGET" forkexec;  expect_eq "$rc" 0 "forkexec status"
check forkexec.gpuscope 2 exec-child
profile -o spawn -- "$GS_TARGET" spawn;        expect_eq "$rc" 0 "spawn status"
check spawn.gpuscope 2 spawned
command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh installs it)"
profile -o py -- "$GS_TARGET" python;          expect_eq "$rc" 0 "python status"
# python3 may be a launcher script (pyenv) with processes of its own: count
# the three that matter
check py.gpuscope 0 from-python
"$GPUSCOPE" info py.gpuscope >info.txt
expect_ge "$(count py.gpuscope 'processes:')" 3 "py.gpuscope: processes"
grep -qE 'python3? -c import subprocess' info.txt || fail "the python3 process is missing: $(cat info.txt)"
expect_eq "$(grep -c 'gs_target mark from-python' info.txt)" 1 "the program python3 ran"
expect_eq "$(grep -c 'gs_target python$' info.txt)" 1 "the profiled program"
echo ok
