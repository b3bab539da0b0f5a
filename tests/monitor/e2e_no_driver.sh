#!/usr/bin/env bash
# Without an NVIDIA driver, monitor and health say so in one line and exit 2.
set -u
G=${GPUSCOPE:?}
if [ -e /dev/nvidiactl ] || ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
	echo "SKIP: this machine has an NVIDIA driver"
	exit 77
fi
fails=0
for cmd in monitor health; do
	out=$("$G" $cmd 2>&1 >/dev/null); rc=$?
	[ $rc = 2 ] || { echo "FAIL: $cmd exited $rc, expected 2"; fails=$((fails + 1)); }
	[ "$out" = "gpuscope: error: no NVIDIA driver: libnvidia-ml.so.1 not found" ] ||
		{ echo "FAIL: $cmd said: $out"; fails=$((fails + 1)); }
done
[ $fails = 0 ]
