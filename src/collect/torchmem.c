/*
 * torchmem.c - the entry points the Python start-up hook calls (through
 * ctypes) to record PyTorch's caching allocator: samples of
 * torch.cuda.memory_stats() (TRACE_EV_TORCH_MEM) and out-of-memory events
 * (TRACE_EV_OOM).  docs/memory.md describes the hook; the hook lives in
 * src/collect/python/gpuscope_site/sitecustomize.py.
 *
 * The hook finds these functions in the process's global symbol scope
 * (ctypes.CDLL(None)): they exist only when the collector is preloaded, so
 * a program run outside `gpuscope profile` finds none and records nothing.
 * Values travel as an array of uint64 in a fixed order (enum tm_field) so
 * that the ctypes side needs no struct layout; a shorter array leaves the
 * remaining fields unknown.  Only the public collector API (collect.h) is
 * used.
 */
#include "collect.h"

#include <string.h>

/* Bump when the order of the value arrays changes; the hook checks it. */
#define TORCHMEM_ABI 1

/* Order of the values of gpuscope_torch_mem_sample(). */
enum tm_field {
	TM_ALLOCATED, TM_RESERVED, TM_ACTIVE, TM_INACTIVE_SPLIT, TM_ALLOCATED_PEAK,
	TM_RESERVED_PEAK, TM_ALLOC_COUNT, TM_FREE_COUNT, TM_RETRIES, TM_OOMS, TM_SEGMENTS,
	TM__N
};

/* Order of the values of gpuscope_torch_oom(). */
enum oom_field {
	OOM_REQUESTED, OOM_DEVICE_FREE, OOM_DEVICE_TOTAL, OOM_ALLOCATED, OOM_RESERVED,
	OOM_INACTIVE_SPLIT, OOM_LARGEST_FREE,
	OOM__N
};

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/**
 * gpuscope_torch_mem_abi - the layout version of the value arrays below.
 *
 * Return: TORCHMEM_ABI.
 */
CL_EXPORT int gpuscope_torch_mem_abi(void)
{
	return TORCHMEM_ABI;
}

/**
 * gpuscope_torch_mem_sample - (body: mem_sample) record one allocator sample of @device.
 * @device: CUDA ordinal
 * @kind: enum trace_torch_mem_kind
 * @step: steps the hook has seen, or -1 when it does not count steps
 * @vals: @n values in the order of enum tm_field
 * @n: how many values @vals holds (fewer leave the rest unknown)
 * @flags: enum trace_torch_mem_flags: which values were measured
 *
 * Return: 1 when recorded, 0 when not recording (no GPUSCOPE_DIR, outside
 * the capture window, or the buffer full), -1 on bad arguments.
 */
static int mem_sample(uint32_t device, uint32_t kind, int64_t step, const uint64_t *vals,
		      uint32_t n, uint32_t flags)
{
	uint64_t v[TM__N] = { 0 };
	struct trace_torch_mem *r;

	if (!vals && n)
		return -1;
	if (cl_init() < 0)
		return 0;
	memcpy(v, vals, (n < TM__N ? n : TM__N) * sizeof(v[0]));
	/* what was not passed is not known */
	if (n < TM__N)
		flags &= ~(unsigned)TRACE_TM_HAS_COUNTS;
	if (n <= TM_RESERVED_PEAK)
		flags &= ~(unsigned)TRACE_TM_HAS_PEAKS;
	if (n <= TM_INACTIVE_SPLIT)
		flags &= ~(unsigned)TRACE_TM_HAS_ACTIVE;
	if (n <= TM_RESERVED)
		flags &= ~(unsigned)TRACE_TM_HAS_RESERVED;
	r = cl_reserve(TRACE_EV_TORCH_MEM, sizeof(*r));
	if (!r)
		return 0;
	memset(r, 0, sizeof(*r));
	r->time = cl_now();
	r->allocated = v[TM_ALLOCATED];
	r->reserved = v[TM_RESERVED];
	r->active = v[TM_ACTIVE];
	r->inactive_split = v[TM_INACTIVE_SPLIT];
	r->allocated_peak = v[TM_ALLOCATED_PEAK];
	r->reserved_peak = v[TM_RESERVED_PEAK];
	r->alloc_count = v[TM_ALLOC_COUNT];
	r->free_count = v[TM_FREE_COUNT];
	r->retries = clamp32(v[TM_RETRIES]);
	r->ooms = clamp32(v[TM_OOMS]);
	r->segments = clamp32(v[TM_SEGMENTS]);
	r->pid = cl_pid();
	r->tid = cl_tid();
	r->device = device;
	r->kind = (uint16_t)kind;
	if (step >= 0) {
		r->step = clamp32((uint64_t)step);
		flags |= TRACE_TM_HAS_STEP;
	} else {
		flags &= ~(unsigned)TRACE_TM_HAS_STEP;
	}
	r->flags = (uint16_t)flags;
	cl_commit();
	return 1;
}

/**
 * gpuscope_torch_oom - (body: oom) record an out-of-memory of @device.
 * @device: CUDA ordinal
 * @vals: @n values in the order of enum oom_field
 * @n: how many values @vals holds
 * @blocks: sizes of the largest allocated blocks, largest first
 * @nblocks: how many (at most TRACE_OOM_BLOCKS are kept)
 * @detail: NUL-terminated text naming large allocations (may be NULL)
 * @flags: enum trace_oom_flags
 *
 * Return: 1 when recorded, 0 when not recording, -1 on bad arguments.
 */
static int oom(uint32_t device, const uint64_t *vals, uint32_t n, const uint64_t *blocks,
	       uint32_t nblocks, const char *detail, uint32_t flags)
{
	uint64_t v[OOM__N] = { 0 };
	struct trace_oom *r;
	uint32_t detail_id = 0;

	if ((!vals && n) || (!blocks && nblocks))
		return -1;
	if (cl_init() < 0)
		return 0;
	memcpy(v, vals, (n < OOM__N ? n : OOM__N) * sizeof(v[0]));
	if (n <= OOM_DEVICE_TOTAL)
		flags &= ~(unsigned)TRACE_OOM_HAS_DEVICE_FREE;
	if (n <= OOM_INACTIVE_SPLIT)
		flags &= ~(unsigned)TRACE_OOM_HAS_STATS;
	if (nblocks > TRACE_OOM_BLOCKS)
		nblocks = TRACE_OOM_BLOCKS;
	/* intern before cl_reserve(): a first use writes a definition record */
	if (detail && *detail)
		detail_id = cl_intern(detail, strlen(detail));
	r = cl_reserve(TRACE_EV_OOM, sizeof(*r));
	if (!r)
		return 0;
	memset(r, 0, sizeof(*r));
	r->time = cl_now();
	r->requested = v[OOM_REQUESTED];
	r->device_free = v[OOM_DEVICE_FREE];
	r->device_total = v[OOM_DEVICE_TOTAL];
	r->allocated = v[OOM_ALLOCATED];
	r->reserved = v[OOM_RESERVED];
	r->inactive_split = v[OOM_INACTIVE_SPLIT];
	r->largest_free = v[OOM_LARGEST_FREE];
	for (uint32_t i = 0; i < nblocks; i++)
		r->blocks[i] = blocks[i];
	r->nblocks = nblocks;
	r->pid = cl_pid();
	r->tid = cl_tid();
	r->device = device;
	r->detail_id = detail_id;
	r->flags = flags;
	cl_commit();
	/* an OOM is often followed by the program's death: keep it on disk now (not a peak's snapshot) */
	if (!(flags & TRACE_OOM_PEAK))
		cl_flush_all();
	return 1;
}

/*
 * The exported wrappers hold the re-entrancy guard, so that what recording
 * does (interning, a flush) is never traced as the program's own work.
 */
CL_EXPORT int gpuscope_torch_mem_sample(uint32_t device, uint32_t kind, int64_t step,
					const uint64_t *vals, uint32_t n, uint32_t flags)
{
	int g = cl_guard_enter(), ret = mem_sample(device, kind, step, vals, n, flags);

	if (g)
		cl_guard_leave();
	return ret;
}

CL_EXPORT int gpuscope_torch_oom(uint32_t device, const uint64_t *vals, uint32_t n,
				 const uint64_t *blocks, uint32_t nblocks, const char *detail,
				 uint32_t flags)
{
	int g = cl_guard_enter(), ret = oom(device, vals, n, blocks, nblocks, detail, flags);

	if (g)
		cl_guard_leave();
	return ret;
}
