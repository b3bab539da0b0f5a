/*
 * test_kernel_class.c - the kernel classifier against hand-reviewed names.
 *
 * tests/data/kernels/names.tsv holds real kernel names collected from every
 * trace in tests/data and the shared validation corpus
 * (tests/model/collect_names.py) with the op class, library, precision and
 * tensor-core columns reviewed by hand.  Every column of every row must
 * match; the mismatches are printed one per line.
 */
#include "gstest.h"
#include "model/kernel_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int split(char *line, char **col, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = 0;
	col[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == '\t') {
			*p = 0;
			col[n++] = p + 1;
		}
	return n;
}

static void test_names_tsv(void)
{
	static char line[1 << 16];
	FILE *f = fopen(gstest_data("kernels/names.tsv"), "r");
	int rows = 0, bad = 0;

	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *col[8];
		struct kernel_info ki;
		const char *got[4];
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (split(line, col, 8) < 5) {
			gstest_fail(__FILE__, __LINE__, "names.tsv row %d: fewer than 5 columns", rows + 1);
			continue;
		}
		rows++;
		kernel_classify(col[0], NULL, &ki);
		got[0] = kernel_op_name(ki.op);
		got[1] = kernel_lib_name(ki.lib);
		got[2] = kernel_prec_name(ki.prec);
		got[3] = kernel_tc_name(ki.tc);
		for (int c = 0; c < 4; c++)
			if (strcmp(got[c], col[c + 1])) {
				static const char *const what[] = { "op", "library", "precision", "tensor cores" };
				gstest_fail(__FILE__, __LINE__, "%.120s: %s '%s', expected '%s'", col[0], what[c], got[c],
					    col[c + 1]);
				bad++;
			}
	}
	fclose(f);
	printf("# %d names, %d column mismatches\n", rows, bad);
	CHECK(rows >= 300);
}

/* Names the corpus lacks but the issue lists (FlashAttention, DeepEP, NVSHMEM, custom all-reduce ...). */
static void test_listed_families(void)
{
	static const struct {
		const char *name, *op, *lib, *prec, *tc;
	} t[] = {
		{ "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
		  "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, "
		  "false>(Flash_fwd_params)", "attention", "flash-attention", "bf16", "yes" },
		{ "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 128, 4, false, false, cutlass::half_t>>"
		  "(Flash_fwd_params)", "attention", "flash-attention", "fp16", "yes" },
		{ "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", "comm",
		  "expert-parallel", "fp32", "no" }, /* the float* scales */
		{ "void deep_ep::internode_ll::combine<false, 7168>(void*, int*, int)", "comm", "expert-parallel", "-",
		  "no" },
		{ "void nvshmemi_transfer_rma_nbi_kernel(void*)", "comm", "nvshmem", "-", "no" },
		{ "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
		  "vllm::Signal*, __nv_bfloat16*, int, int)", "comm", "vllm", "bf16", "no" },
		{ "ncclDevKernel_AllReduce_Sum_bf16_NVLS(ncclDevKernelArgsStorage<4096ul>)", "comm", "nccl", "bf16", "no" },
		{ "void rccl_kernel_AllReduce(void*)", "comm", "nccl", "-", "no" },
		{ "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT", "gemm", "cublas", "fp16", "yes" },
		{ "volta_h884gemm_64x128_ldg8_nn", "gemm", "cublas", "fp16", "yes" },
		{ "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "gemm", "cublas", "bf16", "yes" },
		{ "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", "gemm", "rocm-blas", "fp16", "yes" },
		{ "Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1", "gemm", "rocm-blas", "fp32", "no" },
		{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
		  "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", "softmax",
		  "pytorch", "fp32", "no" },
		{ "", "other", "other", "-", "-" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct kernel_info ki;
		kernel_classify(t[i].name, NULL, &ki);
		CHECK_STR(kernel_op_name(ki.op), t[i].op);
		CHECK_STR(kernel_lib_name(ki.lib), t[i].lib);
		CHECK_STR(kernel_prec_name(ki.prec), t[i].prec);
		CHECK_STR(kernel_tc_name(ki.tc), t[i].tc);
	}
}

static void test_flags(void)
{
	struct kernel_hints h = { .collective = 1 };
	struct kernel_info ki;

	CHECK_EQ_U64(kernel_class_flags("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), KCF_COMM | KCF_NO_TC);
	CHECK_EQ_U64(kernel_class_flags("volta_sgemm_128x64_nn"), KCF_MATMUL | KCF_NO_TC);
	CHECK_EQ_U64(kernel_class_flags("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT"), KCF_MATMUL | KCF_TC);
	CHECK_EQ_U64(kernel_class_flags("triton_poi_fused_addmm_gelu_view_15"), KCF_NO_TC);
	/* a hint from the input makes an unknown kernel a collective */
	CHECK_EQ_U64(kernel_classify("my_custom_kernel", &h, &ki), KOP_COMM);
	CHECK_EQ_U64(kernel_classify("my_custom_kernel", NULL, &ki), KOP_OTHER);
}

static const struct gstest tests[] = {
	GSTEST(test_names_tsv),
	GSTEST(test_listed_families),
	GSTEST(test_flags),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
