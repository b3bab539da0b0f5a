/*
 * gpu_facts.h - what a GPU model can do: SM count, peak dense throughput
 * per precision, memory, interconnect, from the vendors' datasheets
 * (docs/gpus.md cites each row).
 *
 * Every fact carries its source: recorded (the input's device row said
 * so), table (the model's datasheet row) or unknown; unknown prints "-",
 * never 0.
 */
#ifndef GS_MODEL_GPU_FACTS_H
#define GS_MODEL_GPU_FACTS_H

#include <stddef.h>
#include <stdint.h>

enum gpu_fact {
	GF_SMS,            /* SMs (NVIDIA) or compute units (AMD) */
	GF_FP32,           /* peak dense FP32 on CUDA cores / vector ALUs, TFLOP/s */
	GF_TF32,           /* peak dense TF32 (AMD: XF32 or FP32 matrix) on tensor/matrix cores, TFLOP/s */
	GF_BF16,           /* peak dense BF16/FP16 tensor-core, FP32 accumulate, TFLOP/s */
	GF_FP8,            /* peak dense FP8 tensor-core, TFLOP/s */
	GF_MEM_GB,         /* memory size, GB as datasheets count them (GPU_GB bytes) */
	GF_MEM_BW,         /* memory bandwidth, GB/s */
	GF_NVLINK,         /* NVLink (AMD: Infinity Fabric) bandwidth per GPU, GB/s, both directions */
	GF_PCIE,           /* host link bandwidth, GB/s, both directions */
	GF__N
};

/* A datasheet "GB" of memory: sizes are binary (80 GB HBM3 = 5 stacks of 16 GiB). */
#define GPU_GB (1024.0 * 1024 * 1024)

enum gpu_fact_src {
	GFS_UNKNOWN = 0,
	GFS_RECORDED,      /* the input's device row */
	GFS_TABLE,         /* the datasheet table */
};

struct gpu_fact_val {
	double v;                  /* valid when src != GFS_UNKNOWN; a value of 0 means "none" (V100 has no TF32) */
	enum gpu_fact_src src;
};

struct gpu_facts {
	const char *model;         /* the table row's name ("H100 SXM"), or NULL unless exactly one row matched */
	struct gpu_fact_val f[GF__N];
	uint32_t cc_major, cc_minor; /* compute capability, valid when cc_src != GFS_UNKNOWN */
	enum gpu_fact_src cc_src;
};

/*
 * gpu_facts_lookup - the facts of the GPU an input describes.
 * @name: the device name as recorded ("NVIDIA H100 80GB HBM3"), or NULL/"".
 * @cc_major, @cc_minor: compute capability (AMD: gfx major.minor, gfx942 = 9.4), 0 when unknown.
 * @sms: recorded SM/CU count, 0 when unknown.  @mem_bytes: recorded memory, 0 when unknown.
 *
 * Matching: the name is split into lower-case words; a table row matches
 * when every one of its words is in the name (so "gh200" is not "h200")
 * and none of its "!word" exclusions is ("3090 !ti": not the 3090 Ti);
 * the row with the most words wins.  With no name match, rows with the
 * same compute capability and SM count are the candidates.  A recorded
 * memory size keeps the candidates whose nominal size fits it within 10%
 * (A100 40 GB vs 80 GB; see MEM_FIT).  A fact (and the compute capability)
 * comes from the table only where all candidates agree on it; @out->model
 * is set only when one row is left.  Recorded values (cc, SMs, memory)
 * override the table.  Returns 0 when a row matched, -1 when only recorded
 * facts (or none) are known.
 */
int gpu_facts_lookup(const char *name, uint32_t cc_major, uint32_t cc_minor, uint32_t sms, uint64_t mem_bytes,
		     struct gpu_facts *out);

/* "sms", "fp32_tflops", ... and their units ("", "TFLOP/s", "GB", "GB/s"). */
const char *gpu_fact_name(enum gpu_fact f);
const char *gpu_fact_unit(enum gpu_fact f);
const char *gpu_fact_src_name(enum gpu_fact_src s);
/* Format a fact into @buf: "67", "494.5", or "-" when unknown.  Returns @buf. */
char *gpu_fact_fmt(char *buf, size_t n, const struct gpu_fact_val *v);

/* Number of table rows and the name of row @i (for docs and tests). */
size_t gpu_table_size(void);
const char *gpu_table_name(size_t i);

#endif
