#!/usr/bin/env bash
# normalize.sh - make `gpuscope dump` output comparable between runs: strip
# times, durations, pids, tids, addresses, host names and build paths.
# Usage: gpuscope dump R | normalize.sh
sed -E \
  -e 's/^[0-9]+ /T /' \
  -e 's/(dur|run_ns|wait_ns)=[0-9]+/\1=N/g' \
  -e 's/\b(pid|ppid|tid|end_tid)=[0-9]+/\1=N/g' \
  -e 's/\bid=[0-9]+ (pid=N kind|pid=N)/id=N \1/g' \
  -e 's/0x[0-9a-f]{9,}/0xADDR/g' \
  -e 's/host="[^"]*"/host="H"/' \
  -e 's/cmdline="[^" ]*\/([^"\/ ]*)/cmdline="\1/' \
  -e 's/name="tid [0-9]+"/name="tid N"/'
