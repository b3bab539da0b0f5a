#!/usr/bin/env bash
# Every NVTX call variant (ASCII, wide, Ex with colours, categories and
# payloads, domains, registered strings, start/end across threads) as dumped,
# against tests/collect/nvtx_api.expected.
. "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
"$GPUSCOPE" profile -o api -- "$GS_TARGET" nvtx-api >/dev/null 2>&1
for t in nvtx_range nvtx_mark name; do
  "$GPUSCOPE" dump --type "$t" api.gpuscope
done | bash "$here/normalize.sh" >actual
diff -u "$here/nvtx_api.expected" actual || fail "dump differs from nvtx_api.expected"
expect_eq "$(count api.gpuscope 'dropped:')" 1 "the unbalanced pop is counted"
echo ok
