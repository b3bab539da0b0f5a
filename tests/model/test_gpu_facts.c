/* test_gpu_facts.c - GPU lookup by recorded name, by compute capability + SMs, and fact sources. */
#include "gstest.h"
#include "model/gpu_facts.h"

#define GIB (1024ull * 1024 * 1024)

static void test_names(void)
{
	static const struct {
		const char *name;
		uint64_t mem;
		const char *model;
	} t[] = {
		{ "NVIDIA H100 80GB HBM3", 0, "H100 SXM" },
		{ "NVIDIA H100 PCIe", 0, "H100 PCIe" },
		{ "NVIDIA H100 NVL", 0, "H100 NVL" },
		{ "NVIDIA H200", 0, "H200" },
		{ "NVIDIA GH200 480GB", 95 * GIB, "GH200 96GB" },
		{ "NVIDIA A100-SXM4-80GB", 79 * GIB, "A100 SXM4 80GB" },
		{ "NVIDIA A100-SXM4-40GB", 39 * GIB, "A100 SXM4 40GB" },
		{ "NVIDIA A100 80GB PCIe", 79 * GIB, "A100 PCIe 80GB" },
		{ "NVIDIA A10", 0, "A10" },
		{ "NVIDIA L40S", 0, "L40S" },
		{ "NVIDIA B200", 178 * GIB, "B200" },
		{ "Tesla V100-SXM2-32GB", 31 * GIB, "V100 SXM2 32GB" },
		{ "GeForce RTX 2080 Ti", 0, "RTX 2080 Ti" },
		{ "NVIDIA GeForce RTX 4090", 0, "RTX 4090" },
		{ "AMD Instinct MI300X", 192 * GIB, "MI300X" },
		{ "AMD Instinct MI250X", 0, "MI250X" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct gpu_facts g;
		CHECK_EQ_I64(gpu_facts_lookup(t[i].name, 0, 0, 0, t[i].mem, &g), 0);
		CHECK_STR(g.model, t[i].model);
	}
}

static void test_sources(void)
{
	struct gpu_facts g;
	char b[32];

	/* name from the table, SMs recorded */
	gpu_facts_lookup("NVIDIA H100 80GB HBM3", 9, 0, 132, 0, &g);
	CHECK_EQ_U64(g.f[GF_SMS].src, GFS_RECORDED);
	CHECK_EQ_U64(g.f[GF_FP32].src, GFS_TABLE);
	CHECK_NEAR(g.f[GF_TF32].v / g.f[GF_FP32].v, 7.38, 0.01);
	CHECK_EQ_U64(g.f[GF_MEM_GB].src, GFS_TABLE);
	/* V100 has no TF32: a known zero, not unknown */
	gpu_facts_lookup("Tesla V100-SXM2-32GB", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.f[GF_TF32].src, GFS_TABLE);
	CHECK_NEAR(g.f[GF_TF32].v, 0, 0);
	/* unknown GPU: nothing known, printed "-" */
	CHECK_EQ_I64(gpu_facts_lookup("Some Future GPU", 0, 0, 0, 0, &g), -1);
	CHECK(g.model == NULL);
	CHECK_EQ_U64(g.f[GF_SMS].src, GFS_UNKNOWN);
	CHECK_STR(gpu_fact_fmt(b, sizeof(b), &g.f[GF_FP32]), "-");
	/* an empty name (AMD trace): compute capability + CUs, memory picks MI300X over MI325X */
	CHECK_EQ_I64(gpu_facts_lookup("", 9, 4, 304, 192 * GIB, &g), 0);
	CHECK_STR(g.model, "MI300X");
	/* cc 8.0 + 108 SMs, no memory: the A100s agree on compute, not on memory bandwidth */
	CHECK_EQ_I64(gpu_facts_lookup(NULL, 8, 0, 108, 0, &g), 0);
	CHECK(g.model == NULL);
	CHECK_EQ_U64(g.f[GF_TF32].src, GFS_TABLE);
	CHECK_NEAR(g.f[GF_TF32].v, 156, 0);
	CHECK_EQ_U64(g.f[GF_MEM_BW].src, GFS_UNKNOWN);
	/* cc 9.0 + 132 SMs: H100 SXM and H100 NVL differ even in FP32 (67 vs 60): unknown */
	gpu_facts_lookup(NULL, 9, 0, 132, 0, &g);
	CHECK_EQ_U64(g.f[GF_FP32].src, GFS_UNKNOWN);
	/* cc 9.0 with an SM count no row has: unknown */
	CHECK_EQ_I64(gpu_facts_lookup(NULL, 9, 0, 120, 0, &g), -1);
	CHECK_EQ_U64(g.f[GF_SMS].src, GFS_RECORDED);
	CHECK_EQ_U64(g.f[GF_FP32].src, GFS_UNKNOWN);
}

/* Exclusion words: a Ti / D / PCIe variant is another GPU, not the row without the word. */
static void test_exclusions(void)
{
	struct gpu_facts g;

	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA GeForce RTX 3090 Ti", 0, 0, 0, 0, &g), -1);
	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA GeForce RTX 4090 D", 0, 0, 0, 0, &g), -1);
	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA GeForce RTX 4070 Ti SUPER", 0, 0, 0, 0, &g), -1);
	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA H800 PCIe", 0, 0, 0, 0, &g), -1);
	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA GeForce RTX 3090", 0, 0, 0, 0, &g), 0);
	CHECK_STR(g.model, "RTX 3090");
	CHECK_EQ_I64(gpu_facts_lookup("NVIDIA H800", 0, 0, 0, 0, &g), 0);
	CHECK_STR(g.model, "H800");
}

/* Compute capability comes from the table when the rows agree, and a recorded one wins. */
static void test_cc(void)
{
	struct gpu_facts g;

	gpu_facts_lookup("NVIDIA B200", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.cc_src, GFS_TABLE);
	CHECK_EQ_U64(g.cc_major, 10);
	CHECK_EQ_U64(g.cc_minor, 0);
	gpu_facts_lookup("NVIDIA GeForce RTX 5090", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.cc_major, 12);
	gpu_facts_lookup("NVIDIA L4", 8, 9, 0, 0, &g);
	CHECK_EQ_U64(g.cc_src, GFS_RECORDED);
	gpu_facts_lookup("Some Future GPU", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.cc_src, GFS_UNKNOWN);
}

/*
 * Values checked against the datasheets (docs/gpus.md): dense figures, the
 * half of a sparse "*" one; facts a datasheet does not give are unknown.
 */
static void test_datasheet_values(void)
{
	struct gpu_facts g;

	/* H100 PCIe: BF16 1,513 TFLOPS* with sparsity -> 756.5 dense; FP8 3,026* -> 1513 */
	gpu_facts_lookup("NVIDIA H100 PCIe", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_BF16].v, 756.5, 0);
	CHECK_NEAR(g.f[GF_FP8].v, 1513, 0);
	CHECK_EQ_U64(g.f[GF_SMS].v, 114);
	/* H100 SXM: TF32 989*, BF16 1,979*, FP8 3,958* */
	gpu_facts_lookup("NVIDIA H100 80GB HBM3", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_TF32].v, 494.5, 0);
	CHECK_NEAR(g.f[GF_BF16].v, 989.5, 0);
	CHECK_NEAR(g.f[GF_FP8].v, 1979, 0);
	CHECK_NEAR(g.f[GF_MEM_BW].v, 3350, 0);
	/* B200 (HGX B200 per GPU): TF32 2.2 PF*, BF16 4.5 PF*, FP8 9 PF*, 180 GB at 7.7 TB/s */
	gpu_facts_lookup("NVIDIA B200", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_TF32].v, 1100, 0);
	CHECK_NEAR(g.f[GF_BF16].v, 2250, 0);
	CHECK_NEAR(g.f[GF_MEM_BW].v, 7700, 0);
	/* GB200: the per-GPU host link is not given (NVLink-C2C is per superchip); SMs not given */
	gpu_facts_lookup("NVIDIA GB200", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.f[GF_PCIE].src, GFS_UNKNOWN);
	CHECK_EQ_U64(g.f[GF_SMS].src, GFS_UNKNOWN);
	CHECK_NEAR(g.f[GF_FP32].v, 80, 0);
	/* MI250: 6 Infinity Fabric links of 100 GB/s (MI250X: 8) */
	gpu_facts_lookup("AMD Instinct MI250", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_NVLINK].v, 600, 0);
	gpu_facts_lookup("AMD Instinct MI250X", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_NVLINK].v, 800, 0);
	/* MI300X: FP16 1307.4 dense, 2614.9 with sparsity; FP8 2614.9 dense */
	gpu_facts_lookup("AMD Instinct MI300X", 0, 0, 0, 0, &g);
	CHECK_NEAR(g.f[GF_BF16].v, 1307.4, 0);
	CHECK_NEAR(g.f[GF_FP8].v, 2614.9, 0);
	/* RTX 4070 SUPER: no tensor-core peaks in NVIDIA's specifications */
	gpu_facts_lookup("NVIDIA GeForce RTX 4070 SUPER", 0, 0, 0, 0, &g);
	CHECK_EQ_U64(g.f[GF_TF32].src, GFS_UNKNOWN);
	CHECK_EQ_U64(g.f[GF_SMS].v, 56);
	/* recorded memory is reported in datasheet GB (2^30 bytes) */
	gpu_facts_lookup("NVIDIA H200", 0, 0, 0, 150094626816ull, &g);
	CHECK_EQ_U64(g.f[GF_MEM_GB].src, GFS_RECORDED);
	CHECK_NEAR(g.f[GF_MEM_GB].v, 139.8, 0.05);
}

static const struct gstest tests[] = {
	GSTEST(test_exclusions),
	GSTEST(test_cc),
	GSTEST(test_datasheet_values),
	GSTEST(test_names),
	GSTEST(test_sources),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
