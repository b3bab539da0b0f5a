#!/usr/bin/env bash
# `gpuscope capture` refusals, each one line: no such process, a process
# not profiled on demand, no run of that name, a trigger directory others
# may enter, another user; and profile's option checks.
. "$(dirname "$0")/lib.sh"

rc=0; "$GPUSCOPE" capture 999999999 2>e || rc=$?
expect_eq "$rc" 1 "no such process: status"
expect_grep "^gpuscope: error: no such process 999999999$" e "no such process"

sleep 5 &
rc=0; "$GPUSCOPE" capture $! 2>e || rc=$?
expect_eq "$rc" 1 "not on demand: status"
expect_grep "process $! is not profiled on demand" e "not on demand"
kill $! 2>/dev/null || true

rc=0; "$GPUSCOPE" capture nosuchrun 2>e || rc=$?
expect_eq "$rc" 1 "no such run: status"
expect_grep "no on-demand run named 'nosuchrun'" e "no such run"

mkdir -m 0755 "$T/open"
rc=0; GPUSCOPE_CTL_DIR=$T/open "$GPUSCOPE" capture 1 2>e || rc=$?
expect_eq "$rc" 1 "open directory: status"
expect_grep "'$T/open' is not a private directory of yours" e "open directory"
# the collector refuses it too: no socket, a warning in the report, the run goes on
GPUSCOPE_CTL_DIR=$T/open "$GPUSCOPE" profile --on-demand -o open -- "$OD_TARGET" 0.2 10 2>/dev/null
expect_eq "$(ls "$T/open" | wc -l)" 0 "open directory: no socket"
"$GPUSCOPE" info open.gpuscope >info
expect_grep "no trigger socket: '$T/open' is not a private directory" info "open directory: warning"

# another user: the directory keeps them out (only testable as root, with setpriv)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  "$GPUSCOPE" profile --on-demand -o other -- "$OD_TARGET" 2 10 2>/dev/null &
  wait_socket 1
  pid=$("$GPUSCOPE" capture --list | awk '{ print $2 }')
  chmod 0755 "$T"
  rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups env GPUSCOPE_CTL_DIR="$T/ctl" \
    "$GPUSCOPE" capture "$pid" 2>e || rc=$?
  expect_eq "$rc" 1 "another user: status"
  expect_grep "is not a private directory of yours" e "another user"
  wait
  expect_eq "$(count other.gpuscope 'capture edges')" 0 "another user: no capture"
else
  echo "skip: another user's refusal needs root and setpriv (the check functions are unit-tested)"
fi

# profile's checks
rc=0; "$GPUSCOPE" profile --ring-s 5 -- true 2>e || rc=$?
expect_eq "$rc" 2 "--ring-s alone: status"
expect_grep "need --on-demand" e "--ring-s alone"
rc=0; "$GPUSCOPE" profile --on-demand --trigger 'temp>85' --no-gpu-metrics -- true 2>e || rc=$?
expect_eq "$rc" 2 "temp trigger without GPU metrics: status"
expect_grep "needs GPU metrics" e "temp trigger without GPU metrics"
rc=0; "$GPUSCOPE" profile --on-demand --trigger 'step_time>0.5x median' -- true 2>e || rc=$?
expect_eq "$rc" 2 "bad trigger: status"
expect_grep "bad --trigger" e "bad trigger"
rc=0; "$GPUSCOPE" profile --on-demand --duration 2 -- true 2>e || rc=$?
expect_eq "$rc" 2 "--on-demand --duration: status"
echo ok
