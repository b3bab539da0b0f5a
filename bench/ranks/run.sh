#!/bin/bash
# bench/ranks/run.sh - many ranks in one report: a synthetic merged report of N ranks built from
# one real rank trace through the real writer (`gpuscope merge --as-ranks`, rank = input index),
# then load + analyse (`analyze`), the per-rank table (`stats --report rank_sum`) and an export,
# each timed with its peak RSS (/usr/bin/time).  Results: bench/RESULTS-ranks.md.
#
#   bash bench/ranks/run.sh [BUILD_DIR] [TRACE] [N...]
#   defaults: build; the DLRM rank 0 of shared/validation/real (GS_SHARED_DIR, else ../shared,
#   else /work/shared), else tests/data/import/nccl_data.json.gz (HTA's rank 0 of 2); N = 64 1024
#
# The trace is converted to a report once (the rank's own report, as `profile` would write it);
# the N inputs are that one report N times: each becomes its own process and rank, so memory and
# time per rank stay those of a real rank.
set -eu
B=${1:-build}
SH=${GS_SHARED_DIR:-}
[ -n "$SH" ] || { [ -d ../shared ] && SH=../shared; } || true
[ -n "$SH" ] || SH=/work/shared
DEF=$SH/validation/real/param__v100_dlrm_8rank_rank0.json.gz
[ -r "$DEF" ] || DEF=tests/data/import/nccl_data.json.gz
TRACE=${2:-$DEF}
shift 2 2>/dev/null || shift $#
NS=${*:-64 1024}
G=$B/gpuscope
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

measure() { # LABEL CMD... -> "LABEL wall_s cpu_s rss_mib" (CPU = user + system: the wall time
  # on a shared machine is mostly waiting for a core)
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" >/dev/null 2>"$T/err" || { cat "$T/err"; exit 1; }
  read -r wall u s kib <"$T/time"
  printf '%-30s wall %7.2f s  cpu %7.2f s  rss %8.1f MiB\n' "$label" "$wall" "$(echo "$u + $s" | bc -l)" \
    "$(echo "$kib / 1024" | bc -l)"
}
echo "trace: $TRACE; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

"$G" merge -o "$T/rank" "$TRACE" 2>/dev/null
echo "rank report: $(stat -c %s "$T/rank.gpuscope") bytes; $("$G" info "$T/rank.gpuscope" | grep '^events')"
for n in $NS; do
  args=()
  for ((i = 0; i < n; i++)); do args+=("$T/rank.gpuscope"); done
  measure "merge $n ranks" "$G" merge --as-ranks -o "$T/m$n" "${args[@]}"
  echo "  report: $(stat -c %s "$T/m$n.gpuscope") bytes; $("$G" info "$T/m$n.gpuscope" | grep '^events')"
  measure "analyze $n ranks" "$G" analyze --format json "$T/m$n.gpuscope"
  measure "stats rank_sum $n ranks" "$G" stats --report rank_sum "$T/m$n.gpuscope"
  measure "analyze --rank 1, $n ranks" "$G" analyze --rank 1 "$T/m$n.gpuscope"
  measure "export perfetto $n ranks" "$G" export --format perfetto --force -o "$T/m$n.pftrace" "$T/m$n.gpuscope"
  rm -f "$T/m$n.pftrace"
done
