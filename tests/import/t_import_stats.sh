# gpuscope stats on imported traces; expected figures computed independently
# (sqlite3 on the nsys export, Python's json on the Kineto trace).
. "$GS_SOURCE_DIR/tests/cli/lib.sh"
D=$GS_SOURCE_DIR/tests/data/import
gzip -dc "$D/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" >"$T/saxpy.sqlite"

"$GPUSCOPE" stats -r cuda_gpu_kern_sum --format csv "$T/saxpy.sqlite" >"$T/k.csv" 2>"$T/err" ||
  fail "stats on an nsys export failed: $(cat "$T/err")"
# 5 kernels, 88573480 ns in all (SELECT count(*), sum(end-start) FROM CUPTI_ACTIVITY_KIND_KERNEL)
grep -q '^100.0,88573480,5,.*saxpy(double \*, double \*, double \*, double, int)' "$T/k.csv" ||
  fail "kernel summary: $(cat "$T/k.csv")"
"$GPUSCOPE" stats -r cuda_gpu_mem_time_sum --format csv "$T/saxpy.sqlite" >"$T/m.csv" 2>/dev/null
grep -q ',186001123,10,.*Host-to-Device' "$T/m.csv" || fail "HtoD copies: $(cat "$T/m.csv")"
grep -q ',98698477,5,.*Device-to-Host' "$T/m.csv" || fail "DtoH copies: $(cat "$T/m.csv")"
"$GPUSCOPE" stats -r cuda_api_sum --format csv "$T/saxpy.sqlite" >"$T/a.csv" 2>/dev/null
grep -q ',374336827,15,.*,cudaMemcpy$' "$T/a.csv" || fail "cudaMemcpy calls: $(cat "$T/a.csv")"
"$GPUSCOPE" stats -r nvtx_sum --format csv "$T/saxpy.sqlite" >"$T/n.csv" 2>/dev/null
grep -q ',10,.*MPI:MPI_Send$' "$T/n.csv" || fail "NVTX MPI_Send: $(cat "$T/n.csv")"
# the format's gaps are said, not shown as zero
"$GPUSCOPE" stats -r osrt_sum "$T/saxpy.sqlite" >"$T/o.txt" 2>"$T/err"
grep -q 'not recorded' "$T/o.txt" || fail "osrt_sum does not say OS runtime was not recorded"
grep -q 'no OS-runtime data in this export' "$T/err" || fail "no OS-runtime warning"

# Kineto: ampere_sgemm_32x32_sliced1x4_tn has 6 instances, 2673 us in all; 16 copies (all HtoD), 39080 us
"$GPUSCOPE" stats -r cuda_gpu_kern_sum --format csv "$D/simple_add.json.gz" >"$T/k.csv" 2>/dev/null ||
  fail "stats on a Kineto trace failed"
grep -q ',2673000,6,.*,ampere_sgemm_32x32_sliced1x4_tn$' "$T/k.csv" || fail "Kineto kernel summary"
"$GPUSCOPE" stats -r cuda_gpu_mem_time_sum --format csv "$D/simple_add.json.gz" >"$T/m.csv" 2>/dev/null
grep -q ',39080000,16,.*Host-to-Device' "$T/m.csv" || fail "Kineto copies: $(cat "$T/m.csv")"
echo ok
