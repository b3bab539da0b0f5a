#!/usr/bin/env bash
# bench/overhead/cpus.sh N - print a taskset CPU list of N logical CPUs, one
# on each of N different physical cores, leaving out CPU 0's core (interrupts
# and housekeeping land there).  Threads pinned to such a set never share a
# core with each other's SMT sibling, and every configuration's runs use the
# same CPUs.  The H200 VM shows no SMT to the guest (one thread per core,
# bench/results/topology-h200-vm.txt), where this is simply CPUs 1..N; its
# run-to-run noise did not depend on placement inside the guest
# (bench/overhead/topo.sh, bench/RESULTS-cupti.md, session 3).
n=${1:-4}
sys=/sys/devices/system/cpu
seen=" "
out=()
c0=$(cat "$sys/cpu0/topology/core_id" 2>/dev/null)-$(cat "$sys/cpu0/topology/physical_package_id" 2>/dev/null)
for d in $(ls -d "$sys"/cpu[0-9]* | sort -V); do
	cpu=${d##*/cpu}
	[ "$(cat "$d/online" 2>/dev/null || echo 1)" = 1 ] || continue
	key=$(cat "$d/topology/core_id" 2>/dev/null)-$(cat "$d/topology/physical_package_id" 2>/dev/null)
	[ "$key" = "$c0" ] && continue
	[[ "$seen" == *" $key "* ]] && continue
	seen+="$key "
	out+=("$cpu")
	[ ${#out[@]} -ge "$n" ] && break
done
(IFS=,; echo "${out[*]}")
