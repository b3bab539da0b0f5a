/*
 * pmsample.h - GPU counters sampled over time through CUPTI's PM sampling
 * (`gpuscope profile --pm-sampling[=US]`), the hook points cupti.c calls.
 */
#ifndef GS_COLLECT_PMSAMPLE_H
#define GS_COLLECT_PMSAMPLE_H

#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"

/*
 * cl_pmsample_start - read GPUSCOPE_PM_SAMPLING and, when set, start the
 * sampling thread, which waits for the program's first CUDA context.
 * Returns 1 when on, 0 when not asked for, -1 with a reason in @why.
 */
int cl_pmsample_start(const struct cupti_api *cu, char *why, size_t n);

/* A CUDA context was created on @device (the resource callback). */
void cl_pmsample_context(uint32_t device);

/*
 * Stop sampling and write what the hardware buffer still holds (before a
 * context is destroyed, and at exit); safe to call more than once.
 */
void cl_pmsample_final(void);

#endif
#endif
