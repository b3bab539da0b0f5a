#!/usr/bin/env python3
"""Write the two hand-made topology replays of tests/data/nvml (docs/distributed.md, "Topology").

Not recordings: replay files written from documented facts, so that `gpuscope topo` and the
NUMA findings are tested on the shapes of two common boxes.  Run from this folder:
python3 mk_topo.py.  Readings are [call, arg, ret, [values], "string"] as docs/monitor.md says.

dgx_h100_8gpu.topo.jsonl - an NVIDIA DGX H100 (DGX H100 User Guide, "System Topology"): 8 H100
  SXM5 80GB, each with 18 NVLink 4 links to the four NVSwitch chips, so every pair reads NV18 in
  `nvidia-smi topo -m`; two Xeon Platinum 8480C (56 cores each, 2 threads per core: CPUs 0-55 and
  112-167 on node 0, 56-111 and 168-223 on node 1); GPUs 0-3 on NUMA node 0, 4-7 on node 1
  (PCIe Gen5 x16 each); P2P read and write OK between all.
pcie_4gpu.topo.jsonl - a two-socket PCIe server with four NVIDIA L4 (PCIe Gen4 x16, no NVLink):
  GPUs 0 and 1 under one PCIe switch of socket 0 (PXB), 2 and 3 under one of socket 1; across
  the sockets the path is SYS and P2P reads "IOH topology not supported" (3), as on servers whose
  CPU root complexes do not forward peer traffic; GPU 3's link trained at Gen4 x8 (a riser or
  bifurcation setting), below its Gen4 x16 maximum.  24 cores per socket with 2 threads.
"""
import json

NVML_SUCCESS, NOT_SUPPORTED = 0, 3
LEVEL = {"PIX": 10, "PXB": 20, "PHB": 30, "NODE": 40, "SYS": 50}


def gpu_static(i, name, bus, numa, cpus, gen_max, width_max, links, level_of, p2p_of, nvver):
    r = [["DeviceGetName", 0, 0, [], name],
         ["DeviceGetUUID", 0, 0, [], "GPU-%08d-0000-0000-0000-00000000000%d" % (i, i)],
         ["DeviceGetPciInfo", 0, 0, [0, int(bus.split(":")[1], 16), 0], bus],
         ["DeviceGetMaxPcieLinkGeneration", 0, 0, [gen_max]],
         ["DeviceGetMaxPcieLinkWidth", 0, 0, [width_max]],
         ["DeviceGetNvLinkState.static", 0, 0 if links else NOT_SUPPORTED, [len(links)]]]
    for j in range(ngpus):
        if j == i:
            continue
        r.append(["DeviceGetTopologyCommonAncestor", j, 0, [level_of(i, j)]])
        for cap in range(3):
            r.append(["DeviceGetP2PStatus", j * 16 + cap, 0, [p2p_of(i, j, cap)]])
    for l, (peer_bus, kind) in enumerate(links):
        r.append(["DeviceGetNvLinkRemotePciInfo", l, 0, [], peer_bus])
        r.append(["DeviceGetNvLinkVersion", l, 0, [nvver]])
        r.append(["DeviceGetNvLinkRemoteDeviceType", l, 0, [kind]])
    r.append(["DeviceGetCpuAffinity", 0, 0, [], cpus])
    r.append(["DeviceGetNumaNodeId", 0, 0, [numa]])
    return {"k": "static", "gpu": i, "r": r}


def tick(i, gen, width):
    return {"k": "tick", "gpu": i, "t": 1700000000000000000, "m": 1000000000000, "tiers": 4,
            "r": [["DeviceGetCurrPcieLinkGeneration", 0, 0, [gen]],
                  ["DeviceGetCurrPcieLinkWidth", 0, 0, [width]]]}


def write(path, host, lines):
    with open(path, "w") as f:
        f.write(json.dumps({"format": "gpuscope-nvml-replay", "version": 1, "backend": "handmade"}) + "\n")
        f.write(json.dumps({"k": "system", "r": [["SystemGetDriverVersion", 0, 0, [], "550.54.15"],
                                                ["SystemGetCudaDriverVersion", 0, 0, [12040]],
                                                ["DeviceGetCount", 0, 0, [ngpus]],
                                                ["gethostname", 0, 0, [], host]]}) + "\n")
        for ln in lines:
            f.write(json.dumps(ln, separators=(",", ":")) + "\n")


# DGX H100
ngpus = 8
buses = ["00000000:%02X:00.0" % b for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
switches = ["00000000:%02X:00.0" % b for b in (0x05, 0x06, 0x07, 0x08)]


def dgx_level(i, j):
    return LEVEL["NODE"] if i // 4 == j // 4 else LEVEL["SYS"]


lines = []
for i in range(8):
    links = [(switches[l % 4], 2) for l in range(18)]  # 18 links spread over the 4 NVSwitches
    cpus = "0-55,112-167" if i < 4 else "56-111,168-223"
    lines.append(gpu_static(i, "NVIDIA H100 80GB HBM3", buses[i], i // 4, cpus, 5, 16, links,
                            dgx_level, lambda a, b, c: 0, 4))
for i in range(8):
    lines.append(tick(i, 5, 16))
write("dgx_h100_8gpu.topo.jsonl", "dgx-h100", lines)

# four L4 on PCIe, two sockets
ngpus = 4
buses = ["00000000:%02X:00.0" % b for b in (0x17, 0x18, 0xCA, 0xCB)]


def pcie_level(i, j):
    return LEVEL["PXB"] if i // 2 == j // 2 else LEVEL["SYS"]


def pcie_p2p(i, j, cap):
    if cap == 2:
        return 5  # NVLink: not supported (no NVLink on L4)
    return 0 if i // 2 == j // 2 else 3


lines = []
for i in range(4):
    cpus = "0-23,48-71" if i < 2 else "24-47,72-95"
    lines.append(gpu_static(i, "NVIDIA L4", buses[i], i // 2, cpus, 4, 16, [], pcie_level, pcie_p2p, 0))
for i in range(4):
    lines.append(tick(i, 4, 8 if i == 3 else 16))
write("pcie_4gpu.topo.jsonl", "pcie-4gpu", lines)
