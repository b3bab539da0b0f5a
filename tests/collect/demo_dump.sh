#!/usr/bin/env bash
# The demo's NVTX ranges, marks, threads and process, as `gpuscope dump`
# prints them after normalize.sh, against tests/collect/demo.expected.
. "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
"$GPUSCOPE" profile -o demo -- "$GS_DEMO" >/dev/null 2>&1
# threads in name order: their order in the report is the order they first
# wrote, which the scheduler decides
{
  "$GPUSCOPE" dump --type process demo.gpuscope | bash "$here/normalize.sh"
  "$GPUSCOPE" dump --type thread demo.gpuscope | bash "$here/normalize.sh" | LC_ALL=C sort
  for t in nvtx_range nvtx_mark; do
    "$GPUSCOPE" dump --type "$t" demo.gpuscope
  done | bash "$here/normalize.sh"
} >actual
diff -u "$here/demo.expected" actual || fail "dump differs from demo.expected"
echo ok
