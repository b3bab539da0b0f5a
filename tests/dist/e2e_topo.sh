#!/bin/bash
# e2e_topo.sh - `gpuscope topo` on the hand-made replays of tests/data/nvml (mk_topo.py says
# what each box is and where its facts come from): the text against tests/dist/expect, and the
# facts in the JSON.  Every expected value follows from the box's documented layout:
#  - DGX H100: 18 NVLinks per GPU to NVSwitches -> NV18 between every pair; GPUs 0-3 on node 0,
#    4-7 on node 1; P2P OK everywhere; no finding;
#  - 4 x L4 on PCIe: PXB within a socket, SYS across; P2P not supported across sockets (4 pairs);
#    GPU 3 at Gen4 x8 of x16: 5 findings.
set -u
G=${GPUSCOPE:?}
S=${GS_SOURCE_DIR:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for box in dgx_h100:dgx_h100_8gpu pcie_4gpu:pcie_4gpu; do
  name=${box%%:*} file=${box#*:}
  "$G" topo --replay "$S/tests/data/nvml/$file.topo.jsonl" >"$T/$name.txt" 2>"$T/err" || fail "topo $name exited $?: $(cat "$T/err")"
  diff -u "$S/tests/dist/expect/topo_$name.txt" "$T/$name.txt" || fail "topo $name: text differs"
done

"$G" topo --format json --replay "$S/tests/data/nvml/dgx_h100_8gpu.topo.jsonl" >"$T/dgx.json" || fail "topo json"
python3 - "$T/dgx.json" <<'PY' || fail "dgx json"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"]
assert len(g) == 8, len(g)
assert [x["numa_node"] for x in g] == [0, 0, 0, 0, 1, 1, 1, 1], [x["numa_node"] for x in g]
assert all(p["link"] == "NV18" and p["nvlinks"] == 18 and p["p2p_read"] == "OK" for x in g for p in x["peers"])
assert g[0]["cpu_affinity"] == "0-55,112-167" and g[7]["cpu_affinity"] == "56-111,168-223"
assert g[3]["pcie"] == {"gen": 5, "width": 16, "gen_max": 5, "width_max": 16}, g[3]["pcie"]
assert d["findings"] == [], d["findings"]
PY
"$G" topo --format json --replay "$S/tests/data/nvml/pcie_4gpu.topo.jsonl" >"$T/pcie.json" || fail "topo json"
python3 - "$T/pcie.json" <<'PY' || fail "pcie json"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"]
links = {(x["gpu"], p["gpu"]): p for x in g for p in x["peers"]}
assert links[(0, 1)]["link"] == "PXB" and links[(0, 1)]["p2p_read"] == "OK"
assert links[(0, 2)]["link"] == "SYS" and links[(0, 2)]["p2p_read"] == "not supported by the IOH topology"
assert g[3]["pcie"]["width"] == 8 and g[3]["pcie"]["width_max"] == 16
f = d["findings"]
assert len(f) == 5, f
assert f[0].startswith("GPU 3: PCIe link at Gen4 x8, below its maximum Gen4 x16"), f[0]
assert sum("have no P2P path" in x for x in f) == 4, f
PY
# a replay that is not there: one error line, usage status
"$G" topo --replay "$T/none.jsonl" >"$T/out" 2>"$T/err" && fail "topo on a missing replay succeeded"
grep -q "^gpuscope: error: cannot open replay" "$T/err" || fail "missing replay: $(cat "$T/err")"
[ "$fails" = 0 ] && echo "e2e_topo: ok"
exit $((fails > 0))
