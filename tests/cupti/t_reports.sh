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
syncs=$("$GPUSCOPE" dump --type sync "$d/h200_basic.gpuscope")
grep -q 'type=context_sync' <<<"$syncs" || fail "context sync"
# synchronisation records from gpuscope's callbacks: a stream sync and a wait on an event
# name the stream id the program's copies ran on
work_streams=$("$GPUSCOPE" dump --type kernel,memcpy "$d/h200_basic.gpuscope" | grep -o ' stream=[0-9]*' | sort -u)
for t in stream_sync stream_wait_event; do
	s=$(grep "type=$t" <<<"$syncs" | grep -o ' stream=[0-9]*' | head -1)
	[ -n "$s" ] && grep -qx -- "$s" <<<"$work_streams" || fail "$t names stream '$s', not one the work ran on"
done
n=$("$GPUSCOPE" dump --type api "$d/h200_torch.gpuscope" | grep -c 'name="cudaGetDevice"')
[ "$n" = 0 ] || fail "cudaGetDevice recorded $n times by default"
# a real ResNet-50 training run: eager PyTorch at batch 64 keeps the H200 busy about half the
# time, and the diagnosis says the launching thread is what holds it back
ids=$("$GPUSCOPE" analyze --format json "$d/h200_resnet50.gpuscope" |
	python3 -c 'import json, sys; print(" ".join(f["id"] for f in json.load(sys.stdin)["findings"]))') ||
	fail "analyze on h200_resnet50"
case "${ids%% *}" in host-bound|launch-bound) ;; *) fail "h200_resnet50: top finding '${ids%% *}' ($ids), expected host-bound or launch-bound";; esac
# findings name kernels on one line, not with their 3,000-character parameter lists
long=$("$GPUSCOPE" analyze "$d/h200_resnet50.gpuscope" | awk '/evidence:/ && length($0) > 300' | wc -l)
[ "$long" = 0 ] || fail "h200_resnet50: $long evidence lines longer than 300 characters"
echo ok
