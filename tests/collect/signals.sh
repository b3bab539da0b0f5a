#!/usr/bin/env bash
# The collector's signal handlers are invisible to the program: it sees the
# default action (Python then installs KeyboardInterrupt and can restore the
# handlers it saved, as multiprocessing's forkserver does), and a program that
# restores the default and raises the signal again ends its stream cleanly.
. "$(dirname "$0")/lib.sh"
"$GS_TARGET" sigquery >plain.txt
profile -o q -- "$GS_TARGET" sigquery >prof.txt
expect_eq "$rc" 0 "sigquery status"
expect_eq "$(cat prof.txt)" "$(cat plain.txt)" "signal actions seen by the program"
expect_eq "$(grep -c 'dfl dfl' prof.txt)" 6 "default actions seen"

profile -o pipe -- "$GS_TARGET" sigpipe
expect_eq "$rc" 141 "status after SIGPIPE"
expect_eq "$(ndump pipe.gpuscope nvtx_mark 'name="before"')" 20 "marks before SIGPIPE"
"$GPUSCOPE" info pipe.gpuscope | grep -q 'did not finish cleanly' && fail "SIGPIPE: stream not ended"

command -v python3 >/dev/null || fail "python3 is needed (scripts/install-deps.sh installs it)"
cat >kbd.py <<'PY'
import os, signal
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
PY
profile -o kbd -- python3 kbd.py >kbd.txt
expect_eq "$rc" 0 "python SIGINT status"
expect_eq "$(cat kbd.txt)" "$(printf 'True True\nKeyboardInterrupt')" "python's signal handlers"

cat >fs.py <<'PY'
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    mp.set_start_method("forkserver")
    with mp.Pool(2) as p:
        print(sum(p.map(sq, range(10))))
PY
rc=0; timeout 60 "$GPUSCOPE" profile -o fs -- python3 fs.py >fs.txt 2>fs.err || rc=$?
expect_eq "$rc" 0 "forkserver status"
expect_eq "$(cat fs.txt)" 285 "forkserver output"
grep -q Traceback fs.err && fail "forkserver: $(head -5 fs.err)"
echo ok
