#!/usr/bin/env bash
# profile hands the program the signal actions and mask it inherited
# (issue 19, item 4): under nohup the program ignores SIGHUP, as it does
# without profile, and so does profile itself.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh installs it)"
cat >hup.py <<'PY'
import os, signal
print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN)
os.kill(os.getpid(), signal.SIGHUP)
print("alive")
PY
rc=0; nohup python3 hup.py >plain.txt 2>/dev/null </dev/null || rc=$?
expect_eq "$rc" 0 "unprofiled status"
expect_eq "$(cat plain.txt)" "$(printf 'True\nalive')" "unprofiled output"
rc=0; nohup "$GPUSCOPE" profile -o h -- python3 hup.py >prof.txt 2>prof.err </dev/null || rc=$?
expect_eq "$rc" 0 "profiled status"
expect_eq "$(cat prof.txt)" "$(cat plain.txt)" "profiled output"

# SIGHUP to profile itself (the program's parent) under nohup
rc=0; nohup "$GPUSCOPE" profile -o h2 -- /bin/sh -c 'kill -HUP $PPID; sleep 0.3; echo alive' \
  >prof2.txt 2>/dev/null </dev/null || rc=$?
expect_eq "$rc" 0 "status after SIGHUP to profile"
expect_eq "$(cat prof2.txt)" alive "output after SIGHUP to profile"

# the signal mask: a blocked signal stays blocked in the program
cat >mask.py <<'PY'
import signal, subprocess, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGHUP})
subprocess.run(sys.argv[1:] + ["grep", "^SigBlk", "/proc/self/status"], check=True)
PY
python3 mask.py >mplain.txt
python3 mask.py "$GPUSCOPE" profile -o m -- >mprof.txt 2>/dev/null
expect_eq "$(cat mprof.txt)" "$(cat mplain.txt)" "signal mask of the program"
echo ok
