# gpuscope info/dump on imported traces: counts, format, and one-line errors for bad files.
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
D=$GS_SOURCE_DIR/tests/data/import
count() { grep -E "^  $1 " "$T/out" | awk '{print $NF}'; }

"$GPUSCOPE" info "$D/nccl_data.json.gz" >"$T/out" || fail "info on a Kineto trace failed"
grep -q '^format:   kineto$' "$T/out" || fail "format is not kineto"
[ "$(count kernels)" = 2700 ] || fail "kernels: $(count kernels), expected 2700"
[ "$(count memcpys)" = 960 ] || fail "memcpys"
grep -q 'rank 0 of world size 2' "$T/out" || fail "distributed info not noted"
"$GPUSCOPE" info --format json "$D/nccl_data.json.gz" | grep -q '"format":"kineto"' || fail "json info"
# the NCCL collectives, through dump
"$GPUSCOPE" dump "$D/nccl_data.json.gz" >"$T/dump" || fail "dump on a Kineto trace failed"
[ "$(grep -c 'allreduce Float in=2049000 out=2049000' "$T/dump")" -ge 1 ] || fail "collective metadata not in dump"

# plain JSON (not compressed) is detected by content, whatever its name
gzip -dc "$D/simple_add.json.gz" >"$T/trace.bin"
"$GPUSCOPE" info "$T/trace.bin" >"$T/out" || fail "plain JSON trace did not load"
[ "$(count syncs)" = 41 ] || fail "syncs: $(count syncs), expected 41"

gzip -dc "$D/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" >"$T/saxpy.sqlite"
"$GPUSCOPE" info "$T/saxpy.sqlite" >"$T/out" || fail "info on an nsys export failed"
grep -q '^format:   nsys-sqlite$' "$T/out" || fail "format is not nsys-sqlite"
[ "$(count kernels)" = 5 ] || fail "nsys kernels"
[ "$(count memcpys)" = 15 ] || fail "nsys memcpys"
[ "$(count 'cuda api calls')" = 57 ] || fail "nsys api calls"
[ "$(count 'nvtx ranges')" = 22 ] || fail "nsys nvtx ranges"
# devices and where their numbers came from (TARGET_INFO_GPU: A100, 108 SMs, cc 8.0)
grep -q '^  gpu 0: NVIDIA A100-SXM4-40GB, 108 SMs, cc 8.0, 39.4 GiB (pid 1230493)$' "$T/out" || fail "nsys device line"
grep -q '^    source of name, SMs, cc, memory: recorded$' "$T/out" || fail "nsys device sources"
"$GPUSCOPE" info --format json "$T/saxpy.sqlite" >"$T/json" || fail "json info on an nsys export"
grep -q '"sm_count":108,"cc_major":8,"cc_minor":0,' "$T/json" || fail "json device facts"
grep -q '"sm_count_source":"recorded"' "$T/json" || fail "json device sources"

# an export cut to a window, without TARGET_INFO_GPU (shared/validation, when present:
# GS_SHARED_DIR, else $GS_SOURCE_DIR/../shared, else /work/shared)
S=${GS_SHARED_DIR:-}
[ -n "$S" ] && [ -d "$S" ] || S=$GS_SOURCE_DIR/../shared
[ -d "$S" ] || S=/work/shared
W=$S/validation/real/nsysai__h100x2_wan_train_300ms.sqlite
if [ -f "$W" ]; then
	"$GPUSCOPE" info "$W" >"$T/out" || fail "info on the sliced export"
	grep -q '^devices:  2$' "$T/out" || fail "sliced export: 2 devices"
	grep -q '^  gpu 1: -, - SMs, cc -, - memory (pid 145)$' "$T/out" || fail "sliced export: unknown device facts"
	grep -q '^    source of name, SMs, cc, memory: -: the export has no TARGET_INFO_GPU table$' "$T/out" ||
		fail "sliced export: the reason"
	! grep -q 'StringIds' "$T/out" || fail "sliced export: names not resolved"
	"$GPUSCOPE" info --format json "$W" >"$T/json" || fail "json info on the sliced export"
	grep -q '"sm_count":null,' "$T/json" || fail "sliced export: json null"
	grep -q '"sm_count_source":"-: the export has no TARGET_INFO_GPU table"' "$T/json" || fail "sliced export: json reason"
else
	echo "skip: $W not found (no shared/validation folder)"
fi

# bad files: one-line error naming the file, exit 2
echo '{"hello": "world"}' >"$T/other.json"
expect_fail 2 "$GPUSCOPE" info "$T/other.json"
grep -q "other.json" "$T/err" || fail "error does not name the file"
head -c 5000 "$T/trace.bin" >"$T/cut.json"
expect_fail 2 "$GPUSCOPE" info "$T/cut.json"
grep -q "cut.json" "$T/err" || fail "error does not name the file"
head -c 100000 "$D/nccl_data.json.gz" >"$T/cut.json.gz"
expect_fail 2 "$GPUSCOPE" info "$T/cut.json.gz"
head -c 200000 "$T/saxpy.sqlite" >"$T/cut.sqlite"
expect_fail 2 "$GPUSCOPE" info "$T/cut.sqlite"
grep -q "cut.sqlite" "$T/err" || fail "error does not name the file"
printf '\037\213garbage' >"$T/bad.gz"
expect_fail 2 "$GPUSCOPE" info "$T/bad.gz"
echo ok
