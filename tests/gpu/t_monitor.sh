#!/usr/bin/env bash
# t_monitor.sh - `gpuscope monitor` and `gpuscope health` on a real GPU,
# compared with `nvidia-smi --query-gpu` read in the same script.
# Environment: GPUSCOPE (default $GS_BUILD_DIR/gpuscope), WORK (scratch dir).
# Exit 0 pass, 1 a comparison failed, 77 no GPU (skip).
# Tolerances (the two tools read at slightly different moments of an idle GPU):
#   names, UUID, driver, max clocks, memory total, link maxima, power limit,
#   persistence: equal;  memory used: +-64 MiB;  temperature: +-3 C;
#   power: +-25 W or 15%;  SM and memory clock: +-15% ;  utilisation: +-25 points;
#   current PCIe gen/width: equal (re-read once: idle GPUs change link speed).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${GS_BUILD_DIR:=$here/../../build}"
: "${GPUSCOPE:=$GS_BUILD_DIR/gpuscope}"
: "${WORK:=$(mktemp -d)}"
mkdir -p "$WORK"
command -v nvidia-smi >/dev/null || { echo "SKIP: no nvidia-smi"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: nvidia-smi finds no GPU"; exit 77; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

q=index,uuid,name,driver_version,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,pstate,persistence_mode
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits >"$WORK/smi.csv" || { fail "nvidia-smi query"; exit 1; }
"$GPUSCOPE" monitor -c 1 --format json >"$WORK/mon.json" 2>"$WORK/mon.err"
rc=$?
[ $rc = 0 ] || fail "monitor --format json exited $rc: $(cat "$WORK/mon.err")"
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits >"$WORK/smi2.csv"
"$GPUSCOPE" monitor -c 2 --interval 200 -s pucmetlxgn >"$WORK/mon.table" 2>&1 || fail "monitor table"
cat "$WORK/mon.table"
"$GPUSCOPE" health --format json >"$WORK/health.json" 2>&1
hrc=$?
"$GPUSCOPE" health >"$WORK/health.txt" 2>&1
cat "$WORK/health.txt"
case $hrc in 0|1|3) ;; *) fail "health exited $hrc" ;; esac

python3 - "$WORK" "$hrc" <<'PY' || failures=$((failures + 1))
import csv, json, sys
work, hrc = sys.argv[1], int(sys.argv[2])
cols = ("index uuid name driver util mem_used mem_total temp power power_limit sm_clock mem_clock "
        "sm_max mem_max gen gen_max width width_max pstate persistence").split()
def smi(path):
    rows = {}
    for r in csv.reader(open(path), skipinitialspace=True):
        d = dict(zip(cols, [x.strip() for x in r]))
        rows[int(d["index"])] = d
    return rows
a, b = smi(work + "/smi.csv"), smi(work + "/smi2.csv")
mon = [json.loads(l) for l in open(work + "/mon.json")]
bad = 0
def num(s):
    try: return float(s)
    except ValueError: return None
def check(what, ours, theirs, tol, gpu):
    global bad
    if theirs is None:
        print(f"  gpu {gpu} {what}: nvidia-smi n/a, ours {ours}")
        return
    if ours is None:
        print(f"FAIL: gpu {gpu} {what}: ours unknown, nvidia-smi {theirs}"); bad += 1; return
    ok = abs(ours - theirs) <= tol
    print(f"  gpu {gpu} {what}: ours {ours:g} nvidia-smi {theirs:g} tol {tol:g} {'ok' if ok else 'MISMATCH'}")
    if not ok: bad += 1; print(f"FAIL: gpu {gpu} {what}")
def either(what, ours, key, tol, gpu, scale=1.0):
    """pass when ours is within tol of either nvidia-smi read (before/after)"""
    global bad
    vals = [num(x[gpu][key]) for x in (a, b)]
    vals = [v * scale for v in vals if v is not None]
    if not vals: print(f"  gpu {gpu} {what}: nvidia-smi n/a"); return
    if ours is None: print(f"FAIL: gpu {gpu} {what}: ours unknown, nvidia-smi {vals}"); bad += 1; return
    t = tol(vals[0]) if callable(tol) else tol
    ok = any(abs(ours - v) <= t for v in vals)
    print(f"  gpu {gpu} {what}: ours {ours:g} nvidia-smi {vals} tol {t:g} {'ok' if ok else 'MISMATCH'}")
    if not ok: bad += 1; print(f"FAIL: gpu {gpu} {what}")
MiB = 1024.0 * 1024.0
for row in mon:
    g = row["gpu"]; m = row["metrics"]; s = a[g]
    if row["uuid"] != s["uuid"]: print(f"FAIL: gpu {g} uuid {row['uuid']} != {s['uuid']}"); bad += 1
    if row["name"] != s["name"]: print(f"FAIL: gpu {g} name {row['name']} != {s['name']}"); bad += 1
    mb = lambda k: None if m[k] is None else m[k] / MiB
    either("memory used MiB", mb("mem_used_bytes"), "mem_used", 64, g)
    check("memory total MiB", mb("mem_total_bytes"), num(s["mem_total"]), 1, g)
    either("temperature C", m["temp_c"], "temp", 3, g)
    either("power W", m["power_w"], "power", lambda v: max(25, 0.15 * v), g)
    check("power limit W", m["power_limit_w"], num(s["power_limit"]), 1, g)
    either("SM clock MHz", m["sm_clock_mhz"], "sm_clock", lambda v: max(50, 0.15 * v), g)
    either("memory clock MHz", m["mem_clock_mhz"], "mem_clock", lambda v: max(50, 0.15 * v), g)
    check("max SM clock MHz", m["sm_clock_max_mhz"], num(s["sm_max"]), 0, g)
    check("max memory clock MHz", m["mem_clock_max_mhz"], num(s["mem_max"]), 0, g)
    either("GPU utilisation %", m["gpu_util"], "util", 25, g)
    either("PCIe gen", m["pcie_link_gen"], "gen", 0, g)
    check("PCIe max gen", m["pcie_link_gen_max"], num(s["gen_max"]), 0, g)
    either("PCIe width", m["pcie_link_width"], "width", 0, g)
    check("PCIe max width", m["pcie_link_width_max"], num(s["width_max"]), 0, g)
    for x in (a, b):
        x[g]["pstate_n"] = x[g]["pstate"][1:] if x[g]["pstate"].startswith("P") else ""
    either("P-state", m["pstate"], "pstate_n", 0, g)
    pm = {"Enabled": 1.0, "Disabled": 0.0}.get(s["persistence"])
    check("persistence mode", m["persistence_mode"], pm, 0, g)
h = json.load(open(work + "/health.json"))
if h["driver_version"] != a[0]["driver"]:
    print(f"FAIL: health driver {h['driver_version']} != nvidia-smi {a[0]['driver']}"); bad += 1
want = {"pass": 0, "warn": 1, "fail": 3}[h["result"]]
if want != hrc: print(f"FAIL: health result {h['result']} but exit {hrc}"); bad += 1
for c in h["checks"]:
    if c["check"] == "persistence" and c["gpu"] is not None:
        pm = a[c["gpu"]]["persistence"]
        exp = "pass" if pm == "Enabled" else "warn"
        if c["result"] != exp: print(f"FAIL: persistence check {c['result']}, nvidia-smi says {pm}"); bad += 1
    print(f"  health gpu {c['gpu']} {c['check']}: {c['result']} ({c['reason']})")
print(f"{bad} mismatches")
sys.exit(1 if bad else 0)
PY

# Prometheus endpoint for real: serve, read with curl (or python), compare FB_USED
"$GPUSCOPE" monitor --prometheus 127.0.0.1:0 --interval 200 -c 25 --format csv >"$WORK/prom.csv" 2>"$WORK/prom.err" &
mpid=$!
port=
for _ in $(seq 50); do
	port=$(sed -n 's/.*serving Prometheus metrics on port \([0-9]*\).*/\1/p' "$WORK/prom.err")
	[ -n "$port" ] && break
	sleep 0.1
done
if [ -z "$port" ]; then
	fail "no Prometheus port announced: $(cat "$WORK/prom.err")"
else
	sleep 0.5
	if command -v curl >/dev/null; then
		curl -s -o "$WORK/metrics.txt" -w '%{http_code}' "http://127.0.0.1:$port/metrics" >"$WORK/code"
		curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other" >"$WORK/code404"
	else
		python3 -c "import urllib.request as u,sys; r=u.urlopen(sys.argv[1]); open(sys.argv[2],'wb').write(r.read()); print(r.status)" \
			"http://127.0.0.1:$port/metrics" "$WORK/metrics.txt" >"$WORK/code"
		python3 -c "import urllib.request as u,urllib.error as e,sys
try: u.urlopen(sys.argv[1]); print(200)
except e.HTTPError as x: print(x.code)" "http://127.0.0.1:$port/other" >"$WORK/code404"
	fi
	[ "$(cat "$WORK/code")" = 200 ] || fail "/metrics answered $(cat "$WORK/code")"
	[ "$(cat "$WORK/code404")" = 404 ] || fail "/other answered $(cat "$WORK/code404"), expected 404"
	fb=$(sed -n 's/^DCGM_FI_DEV_FB_USED{gpu="0",[^}]*} \([0-9.]*\)$/\1/p' "$WORK/metrics.txt")
	smi_fb=$(nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader,nounits | tr -d ' ')
	echo "  prometheus DCGM_FI_DEV_FB_USED $fb, nvidia-smi memory.used $smi_fb"
	awk -v a="$fb" -v b="$smi_fb" 'BEGIN { d = a - b; if (a == "" || d > 64 || d < -64) exit 1 }' ||
		fail "DCGM_FI_DEV_FB_USED $fb vs nvidia-smi $smi_fb (tolerance 64 MiB)"
	grep -c '^DCGM_FI' "$WORK/metrics.txt" | sed 's/^/  DCGM lines: /'
fi
wait $mpid || fail "monitor --prometheus exited $?"
echo "failures: $failures"
[ $failures = 0 ]
