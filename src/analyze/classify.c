/*
 * classify.c - the classifiers the engine and the rules share: CUDA API
 * names (launch, sync, copy, allocation, start-up), OS-runtime calls
 * (I/O, waits, locks, sleeps), the framework structure that marks data
 * loading, and kernel names.  Pure functions of a name; callers cache by
 * string id.
 */
#include "internal.h"
#include "../model/kernel_class.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fnmatch.h>

/* ---- API name classes ---- */

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

int az_api_class(const char *n)
{
	if (has_prefix(n, "cuInit") || has_prefix(n, "cuDevicePrimaryCtx") || has_prefix(n, "cuCtxCreate") ||
	    has_prefix(n, "cuModuleLoad") || has_prefix(n, "cuLibraryLoad") ||
	    has_prefix(n, "cuModuleGetFunction") || has_prefix(n, "cuLibraryGetKernel") ||
	    has_prefix(n, "cuKernelGetFunction"))
		return API_INIT;
	if (has_prefix(n, "hip")) /* ROCm traces (Kineto): the same calls, another prefix */
		n += 3;
	if (has_prefix(n, "cudaLaunch") || has_prefix(n, "cuLaunch") ||
	    has_prefix(n, "cudaGraphLaunch") || has_prefix(n, "cuGraphLaunch") ||
	    has_prefix(n, "Launch") || has_prefix(n, "ExtLaunch") || has_prefix(n, "ModuleLaunch") ||
	    has_prefix(n, "GraphLaunch"))
		return API_LAUNCH;
	if (strstr(n, "Synchronize") && !strstr(n, "Set"))
		return API_SYNC;
	if (has_prefix(n, "cudaMemcpy") || has_prefix(n, "cudaMemset") ||
	    has_prefix(n, "cuMemcpy") || has_prefix(n, "cuMemset") || has_prefix(n, "Memcpy") ||
	    has_prefix(n, "Memset"))
		return strstr(n, "Async") || strstr(n, "async") ? API_COPY_ASYNC : API_COPY_SYNC;
	if (has_prefix(n, "cudaFree") || has_prefix(n, "cuMemFree") || has_prefix(n, "Free") ||
	    has_prefix(n, "cuMemRelease") || has_prefix(n, "cuMemUnmap"))
		return strstr(n, "Async") ? API_OTHER : API_FREE;
	if (has_prefix(n, "cudaMalloc") || has_prefix(n, "cuMemAlloc") || has_prefix(n, "Malloc") ||
	    has_prefix(n, "HostMalloc") ||
	    has_prefix(n, "cudaHostAlloc") || has_prefix(n, "cuMemHostAlloc") ||
	    has_prefix(n, "cuMemCreate") || has_prefix(n, "cuMemMap"))
		return strstr(n, "Async") ? API_OTHER : API_ALLOC;
	return API_OTHER;
}

const char *az_cause_name(int cause)
{
	static const char *names[CAUSE__N] = {
		"I/O (reads)", "writing output (I/O)", "waiting on other processes", "waiting on a lock", "sleeping",
		"in a data-loading frame", "host work before a batch upload", "CPU work outside traced calls", "after a synchronisation",
		"copying from/to pageable memory", "allocating/freeing device memory",
		"inside other CUDA API calls", "launching", "CUDA start-up (context, module loading)",
		"unknown (no CPU data)",
	};
	return cause >= 0 && cause < CAUSE__N ? names[cause] : "?";
}

int az_osrt_cause(unsigned f)
{
	switch (f) {
	case OSRT_READ: case OSRT_PREAD: case OSRT_READV: case OSRT_RECV: case OSRT_RECVFROM:
	case OSRT_RECVMSG: case OSRT_OPEN: case OSRT_OPENAT: case OSRT_CONNECT: case OSRT_ACCEPT:
	case OSRT_FOPEN: case OSRT_FREAD: case OSRT_MMAP:
		return CAUSE_IO;
	case OSRT_WRITE: case OSRT_PWRITE: case OSRT_WRITEV: case OSRT_SEND: case OSRT_SENDTO:
	case OSRT_SENDMSG: case OSRT_FSYNC: case OSRT_FDATASYNC: case OSRT_FWRITE:
		return CAUSE_IO_WRITE;
	case OSRT_POLL: case OSRT_PPOLL: case OSRT_SELECT: case OSRT_PSELECT: case OSRT_EPOLL_WAIT:
	case OSRT_EPOLL_PWAIT: case OSRT_WAITPID: case OSRT_WAIT:
		return CAUSE_WAIT;
	case OSRT_MUTEX_LOCK: case OSRT_COND_WAIT: case OSRT_COND_TIMEDWAIT: case OSRT_JOIN:
	case OSRT_SEM_WAIT: case OSRT_SEM_TIMEDWAIT: case OSRT_FUTEX: case OSRT_RWLOCK_RDLOCK:
	case OSRT_RWLOCK_WRLOCK:
		return CAUSE_LOCK;
	case OSRT_NANOSLEEP: case OSRT_USLEEP: case OSRT_SLEEP: case OSRT_CLOCK_NANOSLEEP:
		return CAUSE_SLEEP;
	default:
		return -1; /* ioctl and the like: driver work, counted as CPU */
	}
}

/*
 * Data-loading frames: evidence from the framework's own structure or the
 * user's word, never from a word that happens to be in a name.
 *  - PyTorch wraps each fetch of a batch in a record_function named
 *    "enumerate(DataLoader)#<iterator class>.__next__" (and DataPipes in
 *    "enumerate(DataPipe)#..."): the time inside is the loader's by
 *    construction (torch/utils/data/dataloader.py, _BaseDataLoaderIter);
 *  - the ranges named with --data-range (shell patterns, fnmatch), for
 *    programs whose NVTX ranges mark their input pipeline.
 */
int az_is_data_frame(const char *name, const char *const *data_ranges)
{
	if (!strncmp(name, "enumerate(DataLoader)", 21) || !strncmp(name, "enumerate(DataPipe)", 19))
		return 1;
	for (const char *const *p = data_ranges; p && *p; p++)
		if (!fnmatch(*p, name, 0))
			return 1;
	return 0;
}

/* Is API class @cls a call that blocks until the GPU's work is done (synchronise, synchronous copy, free)? */
int az_api_blocks(int cls)
{
	return cls == API_SYNC || cls == API_COPY_SYNC || cls == API_FREE;
}

int az_is_data_id(struct az_ctx *c, uint32_t id)
{
	if (id >= c->m->str.nr)
		return 0;
	if (!c->data_frame)
		c->data_frame = xcalloc(c->m->str.nr + 1, 1);
	if (!c->data_frame[id])
		c->data_frame[id] = az_is_data_frame(model_str(c->m, id), c->o ? c->o->data_ranges : NULL) ? 2 : 1;
	return c->data_frame[id] == 2;
}

/* ---- kernel classes ---- */

/* The one kernel classification (src/model/kernel_class.c, docs/kernels.md). */
static unsigned classify_kernel(const char *name)
{
	unsigned f = kernel_class_flags(name);

	return (f & KCF_COMM ? KC_COMM : 0) | (f & KCF_MATMUL ? KC_GEMM : 0) | (f & KCF_TC ? KC_TC : 0);
}

unsigned az_kernel_class(struct az_ctx *c, uint32_t id)
{
	if (id >= c->m->str.nr)
		return 0;
	if (!c->kclass)
		c->kclass = xcalloc(c->m->str.nr + 1, 1);
	if (!(c->kclass[id] & 0x80))
		c->kclass[id] = (uint8_t)(0x80 | classify_kernel(model_str(c->m, id)));
	return c->kclass[id] & 0x7f;
}

int az_is_comm(struct az_ctx *c, const struct trace_kernel *k)
{
	return (k->flags & TRACE_GPU_COMM) || (az_kernel_class(c, k->name_id) & KC_COMM);
}
