#!/usr/bin/env bash
# The allocator rules on reports recorded on an H200 (tests/data/torchmem/README.md): each
# broken zoo case has its finding, each fixed twin has none; the OOM of t_torchmem's
# program is the 1 TiB request it made, diagnosed as a batch-sized allocation.
. "$(dirname "$0")/lib.sh"
D="$GS_SOURCE_DIR/tests/data/torchmem"
ids() { "$GPUSCOPE" analyze "$1" 2>/dev/null | sed -n 's/.*\[\([a-z-]*\), [a-z]*\]$/\1/p' | sort | tr '\n' ' '; }
for c in mem-leak:memory-leak mem-oom:out-of-memory mem-fragmentation:memory-fragmentation; do
  case=${c%%:*} id=${c#*:}
  b=$(ids "$D/h200_$case.broken.gpuscope")
  f=$(ids "$D/h200_$case.fixed.gpuscope")
  case " $b" in *" $id "*) ;; *) fail "$case broken: no $id (findings: $b)";; esac
  case " $f" in *" $id "*) fail "$case fixed: still $id";; esac
done
expect_eq "$(ids "$D/h200_mem-oom.fixed.gpuscope")" "" "findings of mem-oom fixed (peak reserved over half the device: no headroom)"
"$GPUSCOPE" analyze "$D/h200_mem-oom.broken.gpuscope" >an 2>/dev/null
grep -q 'a request of 4.0 GiB failed at .* with 3.0 GiB free of 139.8 GiB' an || fail "mem-oom evidence: $(cat an)"
grep -q 'Out of memory: too much alive at once' an || fail "mem-oom diagnosis: $(cat an)"
"$GPUSCOPE" dump --type oom "$D/h200_t_torchmem.gpuscope" | grep -q ' requested=1099511627776 free=[0-9]* total=150109880320 ' ||
  fail "t_torchmem OOM record"
"$GPUSCOPE" analyze "$D/h200_t_torchmem.gpuscope" 2>/dev/null | grep -q 'Out of memory on a batch-sized allocation' ||
  fail "t_torchmem OOM diagnosis"
expect_eq "$("$GPUSCOPE" dump --type torch_mem "$D/h200_t_torchmem.gpuscope" | grep -c ' kind=step ')" 20 "step samples"
echo ok
