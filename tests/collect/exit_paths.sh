#!/usr/bin/env bash
# Records survive every way out: return, exit(), _exit(), and SIGINT or
# SIGTERM sent to `gpuscope profile` (forwarded; the report is finalised).
. "$(dirname "$0")/lib.sh"
for how in return exit _exit; do
  profile -o "$how" -- "$GS_TARGET" "$how" 0
  expect_eq "$rc" 0 "status ($how)"
  expect_eq "$(ndump "$how.gpuscope" nvtx_mark 'name="bye"')" 1 "the mark before $how"
  "$GPUSCOPE" info "$how.gpuscope" | grep -q 'did not finish cleanly' && fail "$how: stream not ended"
done
for sig in INT TERM; do
  rm -f ready
  "$GPUSCOPE" profile -o "sig$sig" -- "$GS_TARGET" wait ready 2>err &
  pid=$!
  for _ in $(seq 100); do [ -f ready ] && break; sleep 0.05; done
  [ -f ready ] || fail "target did not start"
  sleep 0.3
  kill -"$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  num=$(kill -l "$sig")
  expect_eq "$rc" $((128 + num)) "status after SIG$sig to gpuscope profile"
  grep -q "wrote 'sig$sig.gpuscope'" err || fail "no report after SIG$sig: $(cat err)"
  expect_ge "$(ndump "sig$sig.gpuscope" nvtx_mark 'name="alive"')" 10 "marks before SIG$sig"
done
echo ok
