#!/usr/bin/env bash
# A shell that tries execve() along $PATH (dash: `exec prog`) leaves one part
# per image, not one per failed try; a failed exec keeps the shell recording.
. "$(dirname "$0")/lib.sh"
dir=$(dirname "$GS_TARGET")
profile -o ex -- env PATH="/nonexistent1:/nonexistent2:/nonexistent3:$dir" /bin/sh -c 'exec gs_target mark x'
expect_eq "$rc" 0 status
expect_eq "$(ndump ex.gpuscope nvtx_mark 'name="x"')" 1 "the exec'd program's mark"
# env, sh, gs_target: one part each (all the same pid but env's exec)
expect_eq "$(count ex.gpuscope 'processes:')" 3 processes
profile -o ex2 -- sh -c 'exec /nonexistent/prog; echo after'
expect_eq "$rc" 127 "status of a failed exec"
expect_eq "$(count ex2.gpuscope 'processes:')" 1 "processes after a failed exec"
echo ok
