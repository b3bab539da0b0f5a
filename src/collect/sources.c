/*
 * sources.c - the collector's event sources behind one table.
 *
 * The core (buffers, strings, writer, exit paths) knows its sources only
 * through cl_sources[]: it starts them once the writer runs, flushes them
 * before a final write, stops them at the process's end and tells them of
 * a fork.  A source records through collect.h (cl_reserve/cl_commit,
 * cl_intern, cl_warning).  A new source is one file and one row here; a
 * NULL operation is one the source does not need.
 *
 * Not in the table: osrt.c (interposers only, nothing to start or stop)
 * and kmetrics.c (driven from cupti.c's callbacks and start).
 */
#include "internal.h"

static const struct cl_source sources[] = {
	/* name        start               stop               atfork_child               flush */
	{ "cpusample", cl_cpusample_start, cl_cpusample_stop, cl_cpusample_atfork_child, NULL },
	{ "nvtx",      NULL,               NULL,              cl_nvtx_atfork_child,      NULL },
	{ "cuda",      NULL,               NULL,              cl_cuda_atfork_child,      cl_cuda_flush },
	/* last: its start opens the trigger socket once the others run */
	{ "ondemand",  cl_od_start,        cl_od_stop,        cl_od_atfork_child,        NULL },
};

void cl_sources_start(void)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i].start)
			sources[i].start();
}

void cl_sources_stop(void)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i].stop)
			sources[i].stop();
}

void cl_sources_atfork_child(void)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i].atfork_child)
			sources[i].atfork_child();
}

void cl_sources_flush(int final)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i].flush)
			sources[i].flush(final);
}
