#!/usr/bin/env bash
# `gpuscope info` and `dump` on the real H200 reports in tests/data/cuda.
set -u
: "${GPUSCOPE:?}" "${GS_SOURCE_DIR:?}"
d=$GS_SOURCE_DIR/tests/data/cuda
fail() { echo "FAIL: $*"; exit 1; }
info=$("$GPUSCOPE" info "$d/h200_basic.gpuscope") || fail "info failed"
echo "$info"
grep -q "gpu 0: NVIDIA H200, 132 SMs, cc 9.0" <<<"$info" || fail "device line"
grep -Eq "^  kernels +13$" <<<"$info" || fail "kernel count"
grep -Eq "^  memcpys +5$" <<<"$info" || fail "memcpy count"
grep -Eq "^dropped: +0$" <<<"$info" || fail "drops"
copies=$("$GPUSCOPE" dump --type memcpy "$d/h200_basic.gpuscope") || fail "dump failed"
for want in "kind=HtoD .* src=pageable dst=device async=0" "kind=HtoD .* src=pinned dst=device async=0" \
	"kind=DtoD .* src=device dst=device async=1" "kind=DtoH .* src=device dst=pinned async=1" \
	"kind=DtoH .* src=device dst=pageable async=0"; do
	grep -q -- "$want" <<<"$copies" || fail "no copy matching '$want'"
done
"$GPUSCOPE" dump --type kernel "$d/h200_graph.gpuscope" | grep -c ' graph=' | grep -qx 15 || fail "graph kernels"
"$GPUSCOPE" dump --type sync "$d/h200_basic.gpuscope" | grep -q 'type=context_sync' || fail "context sync"
n=$("$GPUSCOPE" dump --type api "$d/h200_torch.gpuscope" | grep -c 'name="cudaGetDevice"')
[ "$n" = 0 ] || fail "cudaGetDevice recorded $n times by default"
echo ok
