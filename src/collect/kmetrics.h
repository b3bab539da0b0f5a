/*
 * kmetrics.h - per-kernel hardware counters through CUPTI's Range Profiler
 * (`gpuscope profile --kernel-metrics`), the hook points cupti.c calls.
 *
 * Settings (environment, read once by cl_kmetrics_start):
 *   GPUSCOPE_KERNEL_METRICS  the metric set: basic, tensor, memory, full
 *                            (unset or empty: off)
 *   GPUSCOPE_KERNEL_FILTER   POSIX extended regex on the kernel name
 *                            (demangled, or mangled); unset: every kernel
 *   GPUSCOPE_KERNEL_COUNT    instances of each matching kernel to profile (1)
 *   GPUSCOPE_KERNEL_MAX      instances to profile in all, per process (1000)
 */
#ifndef GS_COLLECT_KMETRICS_H
#define GS_COLLECT_KMETRICS_H

#ifdef GS_HAVE_CUPTI

#include "cupti_api.h"

/*
 * cl_kmetrics_start - read the settings and, when kernel metrics are asked
 * for, enable the launch callbacks on @sub.  Called from InitializeInjection
 * once CUPTI is subscribed; nothing of the profiler is touched until the
 * first matching launch.  Returns 1 when kernel metrics are on, 0 when not
 * asked for, -1 with a reason in @why (then they are off).
 */
int cl_kmetrics_start(const struct cupti_api *cu, CUpti_SubscriberHandle sub, char *why,
		      size_t n);

/* Whether cl_kmetrics_callback() wants the callbacks of (@domain, @cbid). */
int cl_kmetrics_wants(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/*
 * cl_kmetrics_callback - a runtime or driver API callback (inside the
 * collector's guard).  At the entry of the outermost launch of a selected
 * kernel instance it starts a Range Profiler range (kernel replay); at the
 * exit of that call it stops, decodes and records the counters.
 */
void cl_kmetrics_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			  const CUpti_CallbackData *cb);

/* At exit (atexit, before the final flush): one report line on what was profiled and its cost. */
void cl_kmetrics_final(void);

#endif
#endif
