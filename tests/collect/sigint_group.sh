#!/usr/bin/env bash
# Ctrl-C reaches a profiled program once (issue 19, item 2).  The terminal
# sends SIGINT to the whole foreground process group, which holds both
# profile and the program: profile must not forward it again.  Python's
# KeyboardInterrupt cleanup below sleeps 0.3 s; a second SIGINT interrupts it
# with a traceback.  The group is signalled with kill(-PGID), as a terminal
# or a service manager does; a SIGINT sent to profile alone still reaches the
# program, once.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh installs it)"
cat >kbd.py <<'PY'
import sys, time
print("ready", flush=True)
n = 0
try:
    while True:                # busy, as a training step is: the first SIGINT lands at once
        n += 1
except KeyboardInterrupt:
    time.sleep(0.3)            # cleanup that a second SIGINT would cut short
    print("clean", flush=True)
sys.exit(3)
PY
# a process-group leader of its own that execs the command, with SIGINT and
# SIGQUIT at their defaults (a shell without job control ignores them in
# the commands it starts with &)
cat >pgrp.py <<'PY'
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.setpgid(0, 0)
os.execvp(sys.argv[1], sys.argv[1:])
PY

# run_int TARGET OUT CMD... : start CMD as its own group, SIGINT TARGET (group|leader) when ready
run_int() {
  local target=$1 out=$2 pid
  shift 2
  python3 pgrp.py "$@" >"$out" 2>"$out.err" &
  pid=$!
  for _ in $(seq 200); do grep -q ready "$out" 2>/dev/null && break; sleep 0.05; done
  grep -q ready "$out" || fail "$out: the program did not start: $(cat "$out.err")"
  sleep 0.1
  if [ "$target" = group ]; then kill -INT -- "-$pid"; else kill -INT "$pid"; fi
  rc=0
  for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid"; fail "$out: still running 10 s after SIGINT"; }
  wait "$pid" || rc=$?
}

run_int group plain.txt python3 kbd.py
expect_eq "$rc" 3 "unprofiled status"
expect_eq "$(cat plain.txt)" "$(printf 'ready\nclean')" "unprofiled output"
for i in 1 2 3 4 5; do
  run_int group prof$i.txt "$GPUSCOPE" profile -o g$i -- python3 kbd.py
  expect_eq "$rc" 3 "run $i: status after SIGINT to the group"
  expect_eq "$(cat prof$i.txt)" "$(cat plain.txt)" "run $i: output after SIGINT to the group"
  grep -q Traceback prof$i.txt.err && fail "run $i: $(cat prof$i.txt.err)"
done
expect_ge "$(ndump g1.gpuscope process 'python')" 1 "the program's process recorded"

# The program signals its own group (as `kill 0` in a script, or a launcher
# stopping its workers, does): the kernel runs its handler on the way out of
# kill(), before profile can forward its copy, so a forwarded copy cannot
# merge with the first and is counted.  Without the fix about half of the
# runs count 2 on a loaded machine; ten runs must all count 1.
cat >self.py <<'PY'
import os, signal, time
got = []
signal.signal(signal.SIGINT, lambda s, f: got.append(1))
os.killpg(os.getpgrp(), signal.SIGINT)
t = time.time()
while time.time() - t < 0.5:
    time.sleep(0.01)
print(len(got))
PY
expect_eq "$(python3 pgrp.py python3 self.py)" 1 "SIGINTs unprofiled"
for i in $(seq 10); do
  expect_eq "$(python3 pgrp.py "$GPUSCOPE" profile -o s$i -- python3 self.py 2>/dev/null)" 1 \
    "run $i: SIGINTs the program got from its own group's SIGINT"
done

for i in 1 2 3; do
  run_int leader direct$i.txt "$GPUSCOPE" profile -o d$i -- python3 kbd.py
  expect_eq "$rc" 3 "run $i: status after SIGINT to profile alone"
  expect_eq "$(cat direct$i.txt)" "$(cat plain.txt)" "run $i: output after SIGINT to profile alone"
done
echo ok
