# stats -r REPORT:base and REPORT:mangled, nsys's kernel-name options
# (docs/nsys-options.md): kernels grouped and printed by their base name
# (no return type, scopes, template arguments or parameters) or by their
# mangled name where the report recorded one.
. "$(dirname "$0")/lib.sh"
D=$GS_SOURCE_DIR/tests/data
G=$GPUSCOPE
# a real PyTorch (Kineto) trace: two instantiations of fft2d_r2c_32x32<...>
# (2 instances each, 137000 + 130000 ns) are one base name
K=$D/import/alexnet.json.gz
# a report recorded by gpuscope on an H200, with mangled names
R=$GS_SOURCE_DIR/tests/fuzz/corpus/report/h200_basic.gpuscope

"$G" stats -r cuda_gpu_kern_sum:base --format csv "$K" >"$T/base.csv" 2>/dev/null
expect_cmp "$GS_SOURCE_DIR/tests/cli/expect/kern_sum_base_alexnet.csv" "$T/base.csv"
grep -q '^2.5,267000,4,66750.0,65500.0,63000,73000,4500.0,fft2d_r2c_32x32$' "$T/base.csv" ||
  fail "the two fft2d_r2c_32x32 instantiations are not one row"
# the same kernels as the full names: 16 names, 15 base names, the same total time
"$G" stats -r cuda_gpu_kern_sum --format csv "$K" >"$T/full.csv" 2>/dev/null
[ "$(wc -l <"$T/full.csv")" = 17 ] || fail "expected 16 full names: $(cat "$T/full.csv")"
[ "$(wc -l <"$T/base.csv")" = 16 ] || fail "expected 15 base names"
sum() { awk -F, 'NR > 1 { t += $2; n += $3 } END { print t, n }' "$1"; }
[ "$(sum "$T/full.csv")" = "$(sum "$T/base.csv")" ] || fail "base names changed the totals"
grep -q 'void fft2d_r2c_32x32<float, false, 5u, true>' "$T/full.csv" || fail "the plain report lost its full names"

# :mangled on a report with mangled names; a C kernel (c_kernel) has only its name
"$G" stats -r cuda_gpu_kern_sum:mangled --format csv "$R" 2>/dev/null | cut -d, -f3,9 >"$T/m"
cat >"$T/m.want" <<'X'
Instances,Name
10,_Z12empty_kernelv
1,_Z11tmpl_kernelIfLi64EEvPT_i
1,c_kernel
1,_Z13grid3d_kernelPi
X
expect_cmp "$T/m.want" "$T/m"
# without mangled names (a Kineto trace) :mangled prints the demangled names, as nsys does
"$G" stats -r cuda_gpu_kern_sum:mangled --format csv "$K" 2>/dev/null | cmp -s - "$T/full.csv" ||
  fail ":mangled of a trace without mangled names differs from the plain report"

# the reports that print kernel names take it: the trace, grid/block and launch/exec reports
"$G" stats -r cuda_gpu_trace:base --format csv "$R" 2>/dev/null | awk -F, 'NR > 1 && $4 != "-" { print $NF }' |
  sort | uniq -c | awk '{ print $1, $2 }' >"$T/tr"
printf '1 c_kernel\n10 empty_kernel\n1 grid3d_kernel\n1 tmpl_kernel\n' >"$T/tr.want"
expect_cmp "$T/tr.want" "$T/tr"
"$G" stats -r cuda_gpu_kern_gb_sum:base --format csv "$K" 2>/dev/null | grep -q ',fft2d_r2c_32x32$' ||
  fail "cuda_gpu_kern_gb_sum:base has no base names"
"$G" stats -r cuda_kern_exec_sum:base "$R" >/dev/null 2>&1 || fail "cuda_kern_exec_sum:base failed"
"$G" stats -r nvtx_kern_sum:base "$R" >/dev/null 2>&1 || fail "nvtx_kern_sum:base failed"

# the table names the option; one file a report with CSV to files
"$G" stats -r cuda_gpu_kern_sum:base "$R" 2>/dev/null | grep -q '(cuda_gpu_kern_sum:base):' ||
  fail "the table's heading does not name :base"
"$G" stats -r cuda_gpu_kern_sum,cuda_gpu_kern_sum:base --format csv -o "$T/s" "$K" 2>/dev/null
cmp -s "$T/s_cuda_gpu_kern_sum.csv" "$T/full.csv" || fail "s_cuda_gpu_kern_sum.csv differs"
cmp -s "$T/s_cuda_gpu_kern_sum:base.csv" "$T/base.csv" || fail "s_cuda_gpu_kern_sum:base.csv differs"

# an option a report does not take, or one gpuscope does not know, is bad usage (2)
expect_fail 2 "$G" stats -r cuda_api_sum:base "$R"
grep -q "report 'cuda_api_sum:base': 'cuda_api_sum' takes no option" "$T/err" || fail "$(cat "$T/err")"
expect_fail 2 "$G" stats -r cuda_gpu_kern_sum:nvtx-name "$R"
grep -q "unknown option ':nvtx-name' (':base' or ':mangled')" "$T/err" || fail "$(cat "$T/err")"
echo ok
