#!/usr/bin/env bash
# launch.sh - start N ranks of a program as torchrun does (RANK, LOCAL_RANK,
# WORLD_SIZE, MASTER_ADDR, MASTER_PORT set for each), wait for all, and exit
# with the first failure's status.  For machines where torchrun itself does
# not run (Debian 12's PyTorch 1.13 under Python 3.11 fails in its elastic
# agent) and for tests that wrap each rank, e.g. one gpuscope per rank:
#
#   launch.sh 2 python3 ddp_train.py fixed
#   launch.sh 2 gpuscope profile -o 'run_%q{RANK}' -- python3 ddp_train.py fixed
#
# MASTER_PORT defaults to a free port chosen here.
set -u
[ $# -ge 2 ] || { echo "usage: launch.sh NRANKS PROGRAM [ARGS...]" >&2; exit 2; }
n=$1; shift
case $n in ''|*[!0-9]*) echo "launch.sh: bad rank count '$n'" >&2; exit 2 ;; esac
port=${MASTER_PORT:-$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
pids=()
for ((r = 0; r < n; r++)); do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || { s=$?; [ "$rc" = 0 ] && rc=$s; }
done
exit "$rc"
