/*
 * cuda_report_check - print the CUDA facts of a report, one "key value" per
 * line, for the GPU test scripts:
 *   cuda_report_check REPORT [--kernel NAME]... [--api NAME]...
 * Exit status 1 when a kernel or copy starts before its launch API call.
 */
#include "cuda_check.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct model m;
	struct cuda_check c;
	static const char *const copy_names[] = { [COPY_HTOD] = "HtoD", [COPY_DTOH] = "DtoH",
		[COPY_DTOD] = "DtoD", [COPY_HTOH] = "HtoH", [COPY_PTOP] = "PtoP" };

	if (argc < 2) {
		fprintf(stderr, "usage: cuda_report_check REPORT [--kernel NAME] [--api NAME]\n");
		return 2;
	}
	model_init(&m);
	if (model_load_report(&m, argv[1]) < 0)
		return 2;
	model_finish(&m);
	cuda_check_run(&m, &c);
	printf("kernels %zu\napis %zu\nmemcpys %zu\nmemsets %zu\nsyncs %zu\nmemory %zu\n"
	       "devices %zu\nkernels_matched %zu\nkernels_before_launch %zu\n"
	       "copies_before_api %zu\napi_corr_shared %zu\ngraph_kernels %zu\ncomm_kernels %zu\n"
	       "copy_pageable %zu\ncopy_pinned %zu\ncopy_async %zu\nmax_launch_to_start_ns %llu\n",
	       c.kernels, c.apis, c.memcpys, c.memsets, c.syncs, c.memory, c.devices,
	       c.kernels_matched, c.kernels_before_launch, c.copies_before_api, c.api_corr_shared,
	       c.graph_kernels, c.comm_kernels, c.copy_src_pageable, c.copy_src_pinned,
	       c.copy_async, (unsigned long long)c.max_launch_to_start_ns);
	for (unsigned k = 0; k < sizeof(copy_names) / sizeof(copy_names[0]); k++)
		if (copy_names[k])
			printf("copy_%s %zu\n", copy_names[k], c.copy_kind[k]);
	for (unsigned t = 1; t <= SYNC_CONTEXT; t++)
		printf("sync_%u %zu\n", t, c.sync_type[t]);
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--kernel"))
			printf("kernel[%s] %zu\n", argv[i + 1], cuda_check_kernels_named(&m, argv[i + 1]));
		else if (!strcmp(argv[i], "--api"))
			printf("api[%s] %zu\n", argv[i + 1], cuda_check_apis_named(&m, argv[i + 1]));
	}
	model_release(&m);
	return c.kernels_before_launch || c.copies_before_api ? 1 : 0;
}
