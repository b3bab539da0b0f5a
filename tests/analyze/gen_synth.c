/*
 * gen_synth.c - write a synthetic report: one of the pathology cases of
 * cases.c, or a large mixed training-loop report for the benchmark.
 *
 *   gs_gen_synth CASE broken|fixed OUT.gpuscope
 *   gs_gen_synth big EVENTS OUT.gpuscope
 *   gs_gen_synth list
 */
#include "cases.h"
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

/*
 * A training loop of a PyTorch-like program, about @events rows: per step a
 * data read on the main thread, 200 kernels each with its launch call (GEMMs
 * and element-wise kernels of varied names), a pinned input copy, a loss
 * read-back with a stream synchronise, NVTX ranges, OS-runtime calls on a
 * loader thread and CPU samples.  About 480 rows per step.
 */
static int write_big(const char *path, uint64_t events)
{
	static const char *names[] = {
		"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
		"sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_ffma",
		"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
		"void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>",
		"triton_poi_fused_add_mul_0", "triton_red_fused_sum_1", "cutlass_80_tensorop_s1688gemm_64x64",
	};
	struct synth s;
	struct synth_kernel k = { NULL, 0, 7, 264, 256, 0 };
	uint64_t n = 0, t = 1000 * MS, gpu = t;
	char step[32];

	if (synth_open(&s, path, 4242, "python3 train.py --epochs 1") < 0)
		return -1;
	synth_thread(&s, 4242, "python3");
	synth_thread(&s, 4243, "pt_data_worker");
	synth_device(&s, 0, 132, 143771ull << 20, 1980);
	for (uint64_t i = 0; n < events; i++) {
		uint64_t st = t;
		synth_osrt(&s, 4242, OSRT_READ, t, t + 300 * US);
		t += 310 * US;
		synth_copy(&s, 4242, "cudaMemcpyAsync", t, t + 6 * US, gpu > t ? gpu : t + 10 * US,
			   (gpu > t ? gpu : t + 10 * US) + 80 * US, COPY_HTOD, MEM_PINNED, MEM_DEVICE, 2u << 20, 7);
		gpu = (gpu > t ? gpu : t + 10 * US) + 81 * US;
		t += 8 * US;
		n += 3;
		for (int j = 0; j < 200; j++) {
			uint64_t ks = t + 8 * US > gpu ? t + 8 * US : gpu + 1 * US;
			uint64_t d = (j % 8 < 2 ? 60 : 6) * US + (uint64_t)(j % 5) * US;
			k.name = names[j % 8];
			k.grid = j % 3 ? 264 : 64;
			synth_kernel(&s, 4242, t, t + 4 * US, ks, ks + d, &k);
			gpu = ks + d;
			t += 12 * US;
			n += 2;
			if (j % 10 == 0) {
				synth_osrt(&s, 4243, OSRT_PREAD, t, t + 40 * US);
				synth_osrt(&s, 4243, OSRT_FUTEX, t + 40 * US, t + 50 * US);
				n += 2;
			}
			if (j % 20 == 0) {
				struct trace_cpu_sample cs = { t, i * 1000 + (uint64_t)j, 0, 4242, 4242 };
				trace_builder_add(&s.b, TRACE_EV_CPU_SAMPLE, &cs, sizeof(cs));
				synth_nvtx(&s, 4242, j % 40 ? "forward" : "backward", t, t + 100 * US);
				n += 2;
			}
		}
		synth_copy(&s, 4242, "cudaMemcpyAsync", t, t + 5 * US, gpu + 1 * US, gpu + 3 * US, COPY_DTOH,
			   MEM_DEVICE, MEM_PAGEABLE, 4, 7);
		synth_api(&s, 4242, "cudaStreamSynchronize", t + 6 * US, gpu + 5 * US);
		t = (gpu + 5 * US > t + 6 * US ? gpu + 5 * US : t + 6 * US) + 50 * US;
		gpu += 3 * US;
		snprintf(step, sizeof(step), "ProfilerStep#%llu", (unsigned long long)i);
		synth_nvtx(&s, 4242, step, st, t);
		n += 4;
	}
	return synth_close(&s);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (const struct synth_case *c = synth_cases; c->name; c++)
			printf("%s %s %.4f\n", c->name, c->finding ? c->finding : "-", c->gain);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "big")) {
		uint64_t n = strtoull(argv[2], NULL, 10);
		return write_big(argv[3], n) ? 1 : 0;
	}
	if (argc == 4) {
		for (const struct synth_case *c = synth_cases; c->name; c++)
			if (!strcmp(c->name, argv[1]))
				return c->write(argv[3], !strcmp(argv[2], "fixed")) ? 1 : 0;
		fprintf(stderr, "gs_gen_synth: unknown case '%s'\n", argv[1]);
		return 2;
	}
	fprintf(stderr, "usage: gs_gen_synth CASE broken|fixed OUT | big EVENTS OUT | list\n");
	return 2;
}
