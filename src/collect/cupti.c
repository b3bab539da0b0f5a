/*
 * cupti.c - CUDA tracing through CUPTI (CUDA_INJECTION64_PATH).
 * Not yet written: CUDA tracing arrives with issue 3.
 */
#include "collect.h"

void cl_cuda_flush(int final)
{
	(void)final;
}

void cl_cuda_atfork_child(void)
{
}
