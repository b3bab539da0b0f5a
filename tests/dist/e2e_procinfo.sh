#!/bin/bash
# e2e_procinfo.sh - the collector's proc_attr record (src/collect/procinfo.c): a program profiled
# under each launcher's environment carries that rank; RANK wins over Slurm's ids (srun torchrun:
# Slurm numbers the launchers); the affinity is what taskset gave; without any variable the rank
# is unknown (-1), not 0.  The CPU-node mask must name node 0 when CPU 0 is on it
# (/sys/devices/system/node/node0/cpulist), and the memory policy is the default (0) when
# nothing set one.
set -u
G=${GPUSCOPE:?}
A=${DIST_ATTR:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

run() { # NAME ENV... : profile /bin/sleep under ENV, pinned to CPU 0; print the attr line
  local name=$1; shift
  env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_LOCAL_RANK \
    -u OMPI_COMM_WORLD_SIZE -u SLURM_PROCID -u SLURM_LOCALID -u SLURM_NTASKS -u PMI_RANK -u PMI_SIZE \
    "$@" taskset -c 0 "$G" profile -o "$T/$name" -- /bin/sleep 0.05 >/dev/null 2>"$T/err" ||
    { fail "profile $name: $(cat "$T/err")"; return; }
  "$A" "$T/$name.gpuscope" | grep -v "launcher -.*ncpus 0 " | head -n 1
}

expect() { # WHAT GOT PATTERN
  [[ "$2" =~ $3 ]] || fail "$1: '$2' does not match '$3'"
}

got=$(run torchrun RANK=3 LOCAL_RANK=1 WORLD_SIZE=4)
expect torchrun "$got" "rank 3 local 1 world 4 launcher torchrun cpus 0 ncpus 1 "
got=$(run openmpi OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_LOCAL_RANK=2 OMPI_COMM_WORLD_SIZE=8)
expect openmpi "$got" "rank 5 local 2 world 8 launcher openmpi "
got=$(run pmi PMI_RANK=6 PMI_SIZE=16)
expect pmi "$got" "rank 6 local -1 world 16 launcher pmi "
got=$(run srun_torchrun SLURM_PROCID=1 SLURM_LOCALID=0 SLURM_NTASKS=2 RANK=7 LOCAL_RANK=3 WORLD_SIZE=16)
expect "RANK before Slurm" "$got" "rank 7 local 3 world 16 launcher torchrun "
got=$(run slurm SLURM_PROCID=9 SLURM_LOCALID=1 SLURM_NTASKS=12)
expect slurm "$got" "rank 9 local 1 world 12 launcher slurm "
got=$(run none)
expect "no launcher" "$got" "rank -1 local -1 world -1 launcher - cpus 0 ncpus 1 "
if [ -r /sys/devices/system/node/node0/cpulist ] && grep -qE '(^|,)0(-|,|$)' /sys/devices/system/node/node0/cpulist; then
  expect "cpu nodes" "$got" "cpu_nodes 0x1 mempolicy 0$"
else
  echo "# skip the NUMA node check: CPU 0 is not listed on node 0 here"
fi
[ "$fails" = 0 ] && echo "e2e_procinfo: ok"
exit $((fails > 0))
