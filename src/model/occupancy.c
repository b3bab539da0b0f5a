/*
 * occupancy.c - theoretical occupancy of a kernel launch (occupancy.h).
 *
 * Per-SM limits by compute capability, from the CUDA C++ Programming
 * Guide's "Technical Specifications per Compute Capability" table; the
 * allocation rules (registers allocated per warp in units of 256, each of
 * the SM's four sub-partitions holding a quarter of the register file;
 * shared memory in units of 256 bytes before compute capability 8.0 and of
 * 128 bytes from 8.0, plus 1 KB the driver reserves per block from 8.0)
 * are those of the toolkit's occupancy calculator (cuda_occupancy.h).
 * Only the capabilities of data-centre and desktop parts are listed;
 * embedded parts (7.2, 8.7) and capabilities not yet in the guide are
 * unknown.
 */
#include "occupancy.h"

#include <stddef.h>

#define WARP 32
#define REGS_PER_SM 65536       /* every listed capability */
#define REG_UNIT 256            /* registers allocated per warp in units of 256 */
#define SUB_PARTITIONS 4
#define MAX_REGS_PER_THREAD 255

struct cc_limits {
	uint32_t major, minor;
	uint32_t threads;          /* resident threads per SM */
	uint32_t blocks;           /* resident blocks per SM */
	uint32_t smem_kb;          /* shared memory per SM at the largest carve-out */
};

static const struct cc_limits limits[] = {
	{ 7, 0, 2048, 32, 96 },    /* V100 */
	{ 7, 5, 1024, 16, 64 },    /* T4, RTX 20 */
	{ 8, 0, 2048, 32, 164 },   /* A100, A30 */
	{ 8, 6, 1536, 16, 100 },   /* A10, A40, RTX 30 */
	{ 8, 9, 1536, 24, 100 },   /* L4, L40S, RTX 40 */
	{ 9, 0, 2048, 32, 228 },   /* H100, H200, GH200 */
	{ 10, 0, 2048, 32, 228 },  /* B200, GB200 */
};

static const struct cc_limits *find(uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (limits[i].major == major && limits[i].minor == minor)
			return &limits[i];
	return NULL;
}

static uint32_t round_up(uint32_t x, uint32_t unit)
{
	return (x + unit - 1) / unit * unit;
}

int occupancy_compute(uint32_t cc_major, uint32_t cc_minor, uint32_t threads, uint32_t regs, uint32_t smem,
		      struct occ_result *out)
{
	const struct cc_limits *l = find(cc_major, cc_minor);
	uint32_t warps, best;

	*out = (struct occ_result){ 0 };
	if (!l || !threads || threads > 1024)
		return -1;
	warps = (threads + WARP - 1) / WARP;
	out->max_warps = l->threads / WARP;
	out->by_threads = out->max_warps / warps;
	out->by_blocks = l->blocks;
	if (regs > MAX_REGS_PER_THREAD) {
		out->by_regs = 0;
	} else if (!regs) {
		out->by_regs = l->blocks; /* not recorded or none: no limit */
	} else {
		uint32_t per_warp = round_up(regs * WARP, REG_UNIT);
		uint32_t warps_regs = REGS_PER_SM / SUB_PARTITIONS / per_warp * SUB_PARTITIONS;
		out->by_regs = warps_regs / warps;
	}
	{
		uint32_t unit = cc_major >= 8 ? 128 : 256;
		uint32_t reserved = cc_major >= 8 ? 1024 : 0;
		uint32_t per_block = round_up(smem + reserved, unit);
		uint32_t cap = l->smem_kb * 1024;
		out->by_smem = smem ? (per_block <= cap ? cap / per_block : 0) : l->blocks;
	}
	best = out->by_threads;
	out->limit = OCC_LIMIT_THREADS;
	if (out->by_blocks < best) {
		best = out->by_blocks;
		out->limit = OCC_LIMIT_BLOCKS;
	}
	if (out->by_regs < best) {
		best = out->by_regs;
		out->limit = OCC_LIMIT_REGISTERS;
	}
	if (out->by_smem < best) {
		best = out->by_smem;
		out->limit = OCC_LIMIT_SMEM;
	}
	out->blocks_per_sm = best;
	out->warps_per_sm = best * warps;
	if (out->warps_per_sm > out->max_warps)
		out->warps_per_sm = out->max_warps;
	out->pct = 100.0 * out->warps_per_sm / out->max_warps;
	if (out->warps_per_sm == out->max_warps)
		out->limit = OCC_LIMIT_NONE;
	return 0;
}

const char *occupancy_limit_name(enum occ_limit l)
{
	switch (l) {
	case OCC_LIMIT_NONE: return "none";
	case OCC_LIMIT_THREADS: return "threads per SM";
	case OCC_LIMIT_BLOCKS: return "blocks per SM";
	case OCC_LIMIT_REGISTERS: return "registers";
	case OCC_LIMIT_SMEM: return "shared memory";
	}
	return "?";
}
