#!/usr/bin/env bash
# PM sampling recorded on the H200 (tests/data/cuda/h200_pmsample.gpuscope, session 6,
# tests/gpu/t_pmsample.sh: gpu_kmetrics 120 rounds, --pm-sampling=100): the readers
# give back the GPU's series: the checker of the GPU test passes on the recorded report,
# stats summarises the pm_* counters, Perfetto and Chrome exports draw them as counter tracks.
set -u
: "${GPUSCOPE:?}" "${GS_SOURCE_DIR:?}"
f=$GS_SOURCE_DIR/tests/data/cuda/h200_pmsample.gpuscope
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$GPUSCOPE" dump --type kernel,metric "$f" >"$T/dump" || fail "dump"
/usr/bin/python3 "$GS_SOURCE_DIR/tests/gpu/pm_check.py" "$T/dump" 100 >"$T/check" || { cat "$T/check"; fail "pm_check"; }
grep -c '^PASS' "$T/check" | grep -qx 7 || { cat "$T/check"; fail "not 7 checks passed"; }
"$GPUSCOPE" stats --report gpu_metrics_sum --format csv "$f" 2>/dev/null >"$T/sum.csv" || fail "stats"
grep -q '^0,pm_dram_throughput_pct,13331,' "$T/sum.csv" || { grep pm_ "$T/sum.csv"; fail "stats: pm_dram_throughput_pct is not 13331 samples"; }
for c in pm_sm_active_pct pm_tensor_pipe_pct pm_gr_active_pct pm_pcie_rx_bytes pm_pcie_tx_bytes; do
	grep -q "^0,$c,13331," "$T/sum.csv" || fail "stats: no $c series of 13331 samples"
done
"$GPUSCOPE" export --format chrome -o "$T/t.json" "$f" 2>/dev/null || fail "chrome export"
n=$(grep -o '"ph":"C","name":"GPU 0 pm_dram_throughput_pct"' "$T/t.json" | wc -l)
[ "$n" = 13331 ] || fail "chrome: $n counter events for pm_dram_throughput_pct, expected 13331"
"$GPUSCOPE" export --format perfetto -o "$T/t.pftrace" "$f" 2>/dev/null || fail "perfetto export"
grep -aq "GPU 0 pm_dram_throughput_pct" "$T/t.pftrace" || fail "perfetto: no pm_dram_throughput_pct track"
echo "t_pmsample_report: ok"
