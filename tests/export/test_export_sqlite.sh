#!/usr/bin/env bash
# Queries written for nsys exports run on the SQLite export and agree with `gpuscope stats`.
. "$(dirname "$0")/lib.sh"

n=0
while read -r r; do
	"$G" export "$r" --format sqlite -o "$T/t.sqlite" --force 2>/dev/null || fail "sqlite export of $r"
	python3 "$HERE/compare_stats.py" "$G" "$r" "$T/t.sqlite" "$HERE/nsys_queries.sql"
	# every row of the report is in its table
	k=$(count "$r" kernels)
	[ "$(sqlite3 "$T/t.sqlite" 'SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = "$k" ] || fail "kernel rows"
	a=$(count "$r" "cuda api calls")
	[ "$(sqlite3 "$T/t.sqlite" 'SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME')" = "$a" ] || fail "api rows"
	n=$((n + 1))
done < <(test_reports)

db=$T/gen.sqlite
"$G" export "$T/generated.gpuscope" --format sqlite -o "$db" 2>/dev/null
q() { sqlite3 "$db" "$1"; }
# nsys codes: copyKind 1 = HtoD, memKind 2 = device (nsys numbering), syncType 3 = stream sync
[ "$(q 'SELECT DISTINCT copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY')" = 1 ] || fail "copyKind"
[ "$(q 'SELECT DISTINCT dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY')" = 2 ] || fail "dstKind (device = 2)"
[ "$(q 'SELECT DISTINCT srcKind FROM CUPTI_ACTIVITY_KIND_MEMCPY')" = 1 ] || fail "srcKind (pinned = 1)"
[ "$(q 'SELECT DISTINCT syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION')" = 3 ] || fail "syncType"
[ "$(q "SELECT label FROM ENUM_CUDA_MEMCPY_OPER WHERE id = 1")" = "Host-to-Device" ] || fail "enum label"
# globalTid = pid << 24 | tid
[ "$(q 'SELECT DISTINCT globalTid FROM OSRT_API ORDER BY 1' | tr '\n' ' ')" = "71168954514 71168954515 " ] ||
	fail "globalTid layout"
[ "$(q 'SELECT DISTINCT globalPid / 0x1000000 FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 4242 ] || fail "globalPid"
# kernel short names as nsys shows them
[ "$(q "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
       JOIN StringIds d ON d.id = k.demangledName WHERE d.value LIKE 'void gemm_kernel%' LIMIT 1")" = gemm_kernel ] ||
	fail "shortName"
[ "$(q "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 34")" = "$(count "$T/generated.gpuscope" "nvtx marks")" ] ||
	fail "NVTX marks"
[ "$(q "SELECT COUNT(DISTINCT metricId) FROM GPU_METRICS")" = 2 ] || fail "GPU metrics"
[ "$(q "SELECT COUNT(*) FROM GPUSCOPE_FINDINGS")" -ge 1 ] || fail "findings table is empty"
[ "$(q "SELECT COUNT(*) FROM GPUSCOPE_THREAD_CPU WHERE cpuPercent BETWEEN 0 AND 100")" -ge 1 ] || fail "thread CPU"
# an existing output is kept unless --force
if "$G" export "$T/generated.gpuscope" --format sqlite -o "$db" 2>/dev/null; then fail "overwrote without --force"; fi
echo "ok: $n report(s)"
