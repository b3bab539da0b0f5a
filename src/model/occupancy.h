/*
 * occupancy.h - the theoretical occupancy of a kernel launch: how many of
 * an SM's warp slots its blocks can fill, and which resource stops more
 * blocks from fitting (threads, the block slots, registers, shared memory).
 *
 * The arithmetic is the CUDA occupancy calculator's, with the per-SM
 * limits of the CUDA C++ Programming Guide's "Technical Specifications per
 * Compute Capability" table (docs/kernels.md lists them).  Compute
 * capabilities that the table does not hold are unknown, never guessed.
 */
#ifndef GS_MODEL_OCCUPANCY_H
#define GS_MODEL_OCCUPANCY_H

#include <stdint.h>

enum occ_limit {
	OCC_LIMIT_NONE = 0,        /* the full warp slots (occupancy 100%) */
	OCC_LIMIT_THREADS,         /* threads (warps) per SM */
	OCC_LIMIT_BLOCKS,          /* resident blocks per SM */
	OCC_LIMIT_REGISTERS,       /* registers per SM */
	OCC_LIMIT_SMEM,            /* shared memory per SM */
};

struct occ_result {
	uint32_t blocks_per_sm;    /* resident blocks of this launch per SM (0: the block cannot run at all) */
	uint32_t warps_per_sm;     /* resident warps */
	uint32_t max_warps;        /* the SM's warp slots */
	double pct;                /* warps_per_sm / max_warps x 100 */
	enum occ_limit limit;      /* the resource that allows the fewest blocks */
	/* the blocks each resource alone would allow */
	uint32_t by_threads, by_blocks, by_regs, by_smem;
};

/*
 * occupancy_compute - the theoretical occupancy of blocks of @threads
 * threads using @regs registers per thread and @smem bytes of shared
 * memory (static + dynamic) on a GPU of compute capability
 * @cc_major.@cc_minor.  Returns 0, or -1 when the compute capability is not
 * in the table or the launch is unknown (0 threads).
 */
int occupancy_compute(uint32_t cc_major, uint32_t cc_minor, uint32_t threads, uint32_t regs, uint32_t smem,
		      struct occ_result *out);

/* "registers", "shared memory", ... */
const char *occupancy_limit_name(enum occ_limit l);

#endif
