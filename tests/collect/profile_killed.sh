#!/usr/bin/env bash
# `kill -9` of profile (issue 19, item 10): the collector sees profile's
# liveness pipe end, finishes its part file (the end-of-stream chunk is
# there within a second or two) and says how to recover it; `gpuscope merge`
# makes a report of the part; the program runs on, unrecorded.
. "$(dirname "$0")/lib.sh"
mkdir tmp
TMPDIR=$T/tmp "$GPUSCOPE" profile -o k -- "$GS_TARGET" wait "$T/ready" 2>prog.err &
ppid=$!
for _ in $(seq 200); do [ -e ready ] && break; sleep 0.05; done
[ -e ready ] || fail "the program did not start"
sleep 0.3
kill -9 "$ppid"
wait "$ppid" 2>/dev/null || true
part=$(ls tmp/gpuscope-*/*.gpuscope | head -1)
[ -n "$part" ] || fail "no part file"
prog=$(basename "$part" | cut -d- -f1)
done_ms=-1
for i in $(seq 40); do
  if "$GPUSCOPE" info "$part" >info.txt 2>&1 && ! grep -q 'did not finish cleanly' info.txt; then
    done_ms=$((i * 50)); break
  fi
  sleep 0.05
done
kill -0 "$prog" 2>/dev/null || fail "the program did not run on"
kill "$prog" 2>/dev/null || true
expect_ge "$done_ms" 0 "part finished within 2 s ($(cat info.txt))"
grep -q "gpuscope merge -o OUT" prog.err || fail "no recovery message: $(cat prog.err)"
"$GPUSCOPE" merge -o rec.gpuscope tmp/gpuscope-*/*.gpuscope
expect_ge "$(ndump rec.gpuscope nvtx_mark 'name="alive"')" 1 "marks recovered"
echo ok
