/*
 * rules.c - the one table of analysis rules, and the engine's thresholds.
 *
 * To add a rule (docs/rules.md, "Adding a rule"): write
 * src/analyze/rule_<name>.c with
 * `void rule_<name>(struct az_ctx *c, const struct az_rule *self)`, declare
 * it in internal.h, add a row below with its thresholds (each with the
 * reason for its default) and the finding ids it emits, add the file to
 * src/analyze/CMakeLists.txt, document it in docs/rules.md (test_docs checks
 * every threshold row), map its ids in docs/validation.md and
 * tests/real/corpus.py, and give it a case in tests/analyze/cases.c.  The
 * first row is the engine's (no function).
 */
#include "internal.h"

#define MIN_GAIN { "min_gain", 0.02, "findings under 2% of wall time are within run-to-run noise of real training steps (one ResNet-50 step on an H200 measured 28.7-34.3 ms across runs)" }

/*
 * The engine's own thresholds (timeline.c, replay.c): how gaps are found
 * and attributed, what a one-off is, and the replay's constants.
 */
static const struct az_param p_engine[] = {
	{ "min_gap_us", 2, "gaps under 2 us are the GPU's own spacing between queued kernels (about 1 us on Hopper); longer ones with an empty queue are starvation" },
	{ "sync_tolerance_us", 50, "a blocked thread wakes a few us after the GPU drains; 50 us also covers CPU/GPU clock skew" },
	{ "period_min_gap_us", 200, "step boundaries of training loops leave gaps of hundreds of us or more; shorter ones are launch jitter" },
	{ "max_gap_us", 100, "CPU pauses under 100 us between launches are framework dispatch (PyTorch eager: 10-50 us per op); longer ones are host work" },
	{ "oneoff_min_ms", 20, "a gap before the first run of a kernel (or the first copy of a kind) is a one-off when it lasts 20 ms or more: module loading, JIT compilation (nvrtc, Inductor, nvFuser) and autotuning take tens of ms to seconds, a steady-state loop's pauses before a new kernel far less" },
	{ "batch_bytes", 1048576, "host work that ends in a host-to-device upload of at least 1 MiB prepared a batch (images, token blocks); smaller uploads are indices, scalars and step metadata" },
	{ "gpu_spacing_us", 1, "the replay starts a kernel that waited for its launch at least 1 us after the previous one on its stream ends (Hopper's back-to-back spacing)" },
	{ "launch_latency_us", 3, "the replay lets a queued operation start 3 us after its launch call begins at the earliest (median launch-to-start of an idle H200 stream, tests/data/cuda)" },
	{ NULL, 0, NULL },
};

static const struct az_param p_starvation[] = {
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_launch[] = {
	{ "short_kernel_us", 10, "a kernel shorter than the 5-10 us a CPU thread needs to launch one cannot keep the GPU busy" },
	{ "graph_gap_us", 0.1, "kernels inside one CUDA graph start about 0.1 us after the previous one ends (H200, tests/data/cuda/h200_graph.gpuscope): the part of each gap a graph cannot remove" },
	{ "min_short_share", 0.5, "launch-bound needs most kernels to be short (or launch time >= kernel time)" },
	{ "tracing_cost_us", 1.3, "what gpuscope's CUDA tracing adds to a launch, for the note on its own cost: the median of what it measured per launch on an H200 VM, +0.93 and +1.28 us per empty launch, +1.32, +1.82 and +2.10 us per launch of a launch-bound PyTorch step (60 launches a step; bench/RESULTS-cupti.md, sessions 3 and 4)" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_sync[] = {
	{ "item_bytes", 1024, "a device-to-host copy of at most 1 KiB followed by a wait is a scalar read (.item(), a loss or a flag)" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_copies[] = {
	{ "pinned_gbps", 0, "0 = the report's own pinned copies of the same direction; without any, what PCIe gives in practice: 50 GB/s for Hopper and later (PCIe 5 x16), 25 GB/s before (PCIe 4 x16)" },
	{ "small_bytes", 65536, "under 64 KiB a PCIe copy costs mostly its fixed ~5-10 us; nsys's sync-copy rule also ignores small host-to-device copies" },
	{ "min_small_count", 100, "a few small copies are normal; hundreds in the window are a pattern worth batching" },
	{ "min_copy_bytes", 1048576, "copies of at least 1 MiB are worth overlapping with compute" },
	{ "copy_bound_share", 0.8, "a GPU whose busy time is at least 80% host<->device copies with no kernel beside them is copy-bound: overlapping them with the compute hides at most a quarter of them, so the data must stay on the device or move faster" },
	{ "duplex", 0.35, "an upload and a download at the same time reach 1.2-1.5x one direction's throughput on PCIe servers (separate copy engines, shared host memory and PCIe flow control): 1.35x" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_comm[] = {
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_straggler[] = {
	{ "min_late_share", 0.5, "a straggler arrives last at most of the collectives it shares: under half, the last place moves between ranks, which is jitter rather than one slow rank" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_placement[] = {
	{ "copy_slowdown", 0.5, "host<->device copies from memory on the other socket reach about half the bandwidth (the seed guides: NUMA misbinding halves it; the socket link is narrower than PCIe x16 Gen5): half of their time is the cost" },
	{ NULL, 0, NULL },
};

static const struct az_param p_p2p[] = {
	{ "staged_share", 0.5, "a transfer between GPUs without a P2P path is staged through host memory: it crosses PCIe twice (GPU to host, host to GPU) where a direct path crosses once, so at least half of its time is the cost" },
	{ NULL, 0, NULL },
};
static const struct az_param p_tensor[] = {
	{ "speedup", 0, "0 = by device, from the GPU table (docs/gpus.md): the dense TF32/FP32 peak ratio where TF32 is at least 1.5x FP32 (A100 8, H100 SXM/H200 7.4, B200 14.7, A10/L4/L40S 2, MI300X 4), else BF16-or-FP16/FP32 (V100 8, RTX 2080 Ti 4, RTX 3090/4090/5090 2); 4 when the GPU is not in the table" },
	{ "min_share", 0.05, "non-tensor-core GEMM/convolution kernels must take at least 5% of GPU time to matter" },
	{ "counter_pct", 1, "with hardware counters (profile --kernel-metrics), a matrix kernel whose tensor pipes are busy under 1% of its cycles runs on the CUDA cores: FP32 SIMT GEMMs measured 0.0%, tensor-core GEMMs 2.9-96.6% on the H200 (session 5)" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_underfill[] = {
	{ "hot_share", 0.05, "only kernels that take at least 5% of GPU time are worth reshaping" },
	{ "min_kernel_us", 10, "launches shorter than 10 us are dominated by launch and ramp-up costs (launch-bound's business), not by how many SMs they fill" },
	{ "target_warps_per_sm", 16, "about 16 resident warps per SM (25% occupancy) hide most arithmetic and memory latency; fewer leave the SM's pipelines waiting" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_alloc[] = {
	{ "min_count", 10, "a few allocations after warm-up happen in any program; ten or more are churn" },
	{ "warmup_share", 0.1, "without NVTX steps, the first 10% of the window is warm-up, where allocations are expected" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_memory[] = {
	{ "near_full", 0.9, "above 90% of device memory an allocator starts to fail or to free its cache and retry" },
	{ "growth_share", 0.1, "live memory growing by 10% of its peak across the steady state, step after step, is a leak" },
	{ NULL, 0, NULL },
};

static const struct az_param p_kernel_limits[] = {
	{ "min_share", 0.05, "a kernel under 5% of GPU busy time cannot change the run much however it is tuned" },
	{ "sol_pct", 60, "Nsight Compute's speed-of-light rule: a kernel whose compute and memory throughput both stay under 60% of peak is latency-bound" },
	{ "occ_low_pct", 25, "under a quarter of the warp slots each SM scheduler has too few warps to hide a global load's latency without instruction-level parallelism" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

static const struct az_param p_oom[] = {
	{ "big_request_share", 0.1, "one failed request of at least 10% of the device is a batch-sized tensor (a whole batch's activations, a logits or attention matrix): a smaller micro-batch shrinks it, checkpointing does not" },
	{ NULL, 0, NULL },
};

static const struct az_param p_frag[] = {
	{ "frag_share", 0.3, "with 30% or more of reserved memory in free pieces of split blocks, a request larger than the pieces needs a new segment although the memory is there; services that died of fragmentation showed 40% and more" },
	{ "sustained_share", 0.5, "fragmentation for half of the sampled time is the program's steady state, not one step's transient" },
	{ NULL, 0, NULL },
};

static const struct az_param p_leak[] = {
	{ "growth_share", 0.1, "allocated memory at the same point of each step growing by 10% of its peak, step after step, is a leak; a warmed-up loop allocates the same each step" },
	{ "fatal_horizon_s", 86400, "a leak that fills the device within a day at its measured rate ends a training job or a service before a routine restart does: it ranks with out-of-memory, before every time gain; a slower one ranks with the other memory findings" },
	{ NULL, 0, NULL },
};

static const struct az_param p_headroom[] = {
	{ "headroom_share", 0.5, "peak reserved under half of the device leaves room to raise the batch by a useful factor; nearer the top, fragmentation and peaks of other steps eat the margin" },
	{ "target_share", 0.9, "raise the batch until reserved memory reaches 90% of the device: the margin memory-pressure.near_full keeps" },
	{ NULL, 0, NULL },
};

static const struct az_param p_throttle[] = {
	{ "temp_c", 85, "NVIDIA data-centre GPUs start to slow their clocks for heat near 85-90 C" },
	{ "clock_ratio", 0.9, "an SM clock under 90% of the maximum while the GPU is busy is a throttled clock, not power saving" },
	MIN_GAIN,
	{ NULL, 0, NULL },
};

const struct az_rule az_rules[] = {
	{ "engine", "The engine: gaps, their attribution, one-offs, the replay", NULL, p_engine, "", AZ_SCOPE_WINDOW },
	{ "gpu-starvation", "GPU starved by the CPU: data loading, output I/O, locks, sleeps", rule_starvation,
	  p_starvation, "data-loading,host-io,gpu-starvation", AZ_SCOPE_WINDOW },
	{ "launch-bound", "The host path between launches: launch calls, dispatch, framework code", rule_launch,
	  p_launch, "launch-bound,host-bound", AZ_SCOPE_WINDOW },
	{ "synchronization", "Blocking synchronisation followed by GPU idle time", rule_sync, p_sync,
	  "synchronization", AZ_SCOPE_WINDOW },
	{ "copies", "Slow or serialised memory copies", rule_copies, p_copies,
	  "pageable-copy,serial-copy,small-copies,copy-bound", AZ_SCOPE_WINDOW },
	{ "exposed-communication", "Communication not overlapped with compute", rule_comm, p_comm,
	  "exposed-communication", AZ_SCOPE_WINDOW },
	{ "straggler", "One rank makes the others wait in collectives", rule_straggler, p_straggler,
	  "straggler", AZ_SCOPE_WINDOW },
	{ "numa-placement", "A process runs off its GPU's NUMA node", rule_placement, p_placement,
	  "numa-placement", AZ_SCOPE_WINDOW },
	{ "no-p2p-path", "GPUs that communicate have no peer-to-peer path", rule_p2p, p_p2p,
	  "no-p2p-path", AZ_SCOPE_WINDOW },
	{ "tensor-cores-unused", "GEMM/convolution kernels not using tensor cores", rule_tensor_cores,
	  p_tensor, "tensor-cores-unused", AZ_SCOPE_WINDOW },
	{ "under-filled-launch", "Hot kernels with fewer blocks than SMs", rule_underfill, p_underfill,
	  "under-filled-launch", AZ_SCOPE_WINDOW },
	{ "allocation-churn", "Device memory allocated and freed in the steady state", rule_alloc,
	  p_alloc, "allocation-churn", AZ_SCOPE_WINDOW },
	{ "memory-pressure", "Device memory near capacity or growing", rule_memory, p_memory,
	  "memory-pressure", AZ_SCOPE_RUN },
	{ "kernel-limits", "What limits the hot kernels: compute, memory or latency; occupancy", rule_kernel_limits,
	  p_kernel_limits, "latency-bound-kernel,kernel-bound,occupancy-limited", AZ_SCOPE_WINDOW },
	{ "out-of-memory", "PyTorch ran out of device memory", rule_oom, p_oom, "out-of-memory",
	  AZ_SCOPE_RUN },
	{ "memory-fragmentation", "PyTorch's cached memory fragmented", rule_fragmentation, p_frag,
	  "memory-fragmentation", AZ_SCOPE_RUN },
	{ "memory-leak", "Allocated memory growing step after step (PyTorch's allocator)", rule_leak, p_leak,
	  "memory-leak", AZ_SCOPE_RUN },
	{ "memory-headroom", "Device memory left for a larger batch", rule_headroom, p_headroom,
	  "memory-headroom", AZ_SCOPE_RUN },
	{ "throttling", "GPU clocks throttled", rule_throttle, p_throttle, "throttling", AZ_SCOPE_WINDOW },
};
const size_t az_nrules = ARRAY_SIZE(az_rules);
