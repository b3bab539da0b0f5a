/*
 * cuda_check.h - facts and invariants of the CUDA part of a loaded report,
 * shared by the CI tests on recorded reports (test_reports.c) and the GPU
 * test scripts (the cuda_report_check program).
 */
#ifndef GS_CUDA_CHECK_H
#define GS_CUDA_CHECK_H

#include "model/model.h"

struct cuda_check {
	size_t kernels, apis, memcpys, memsets, syncs, memory, devices;
	size_t kernels_matched;        /* kernels whose launch API record is present */
	size_t kernels_before_launch;  /* kernels that start before their launch API: must be 0 */
	size_t copies_before_api;      /* same for copies */
	size_t api_corr_shared;        /* API records sharing a (pid, correlation) with another */
	size_t graph_kernels, comm_kernels;
	size_t copy_kind[16];          /* by enum trace_copy_kind */
	size_t copy_src_pageable, copy_src_pinned, copy_async;
	size_t sync_type[8];           /* by enum trace_sync_type */
	uint64_t max_launch_to_start_ns; /* kernel start - API start, largest */
};

/* Compute the facts of @m into @c. */
void cuda_check_run(const struct model *m, struct cuda_check *c);
/* Kernels whose name equals @name (demangled, or starts with @name followed by '('). */
size_t cuda_check_kernels_named(const struct model *m, const char *name);
/* API records whose name is @name. */
size_t cuda_check_apis_named(const struct model *m, const char *name);

#endif
