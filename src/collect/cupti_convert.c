/*
 * cupti_convert.c - CUPTI activity records to report records (cupti_convert.h).
 */
#ifdef GS_HAVE_CUPTI

#include "cupti_convert.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int incomplete(uint64_t start, uint64_t end)
{
	return !start || !end || end < start;
}

static uint32_t clamp_u32(int32_t v)
{
	return v < 0 ? 0 : (uint32_t)v;
}

int cupti_conv_kernel(const CUpti_ActivityKernel10 *k, uint32_t pid, struct trace_kernel *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(k->start, k->end))
		return -1;
	out->start = k->start;
	out->end = k->end;
	out->pid = pid;
	out->device = k->deviceId;
	out->context = k->contextId;
	out->stream = k->streamId;
	out->correlation = k->correlationId;
	out->graph_id = k->graphId;
	out->grid[0] = clamp_u32(k->gridX);
	out->grid[1] = clamp_u32(k->gridY);
	out->grid[2] = clamp_u32(k->gridZ);
	out->block[0] = clamp_u32(k->blockX);
	out->block[1] = clamp_u32(k->blockY);
	out->block[2] = clamp_u32(k->blockZ);
	out->static_smem = clamp_u32(k->staticSharedMemory);
	out->dynamic_smem = clamp_u32(k->dynamicSharedMemory);
	out->registers = k->registersPerThread;
	if (k->graphId)
		out->flags |= TRACE_GPU_GRAPH;
	return 0;
}

int cupti_conv_memcpy(const CUpti_ActivityMemcpy6 *c, uint32_t pid, struct trace_memcpy *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(c->start, c->end))
		return -1;
	out->start = c->start;
	out->end = c->end;
	out->bytes = c->bytes;
	out->pid = pid;
	out->device = c->deviceId;
	out->context = c->contextId;
	out->stream = c->streamId;
	out->correlation = c->correlationId;
	out->kind = c->copyKind;
	out->src_kind = c->srcKind;
	out->dst_kind = c->dstKind;
	out->dst_device = (uint16_t)c->deviceId;
	out->graph_id = c->graphId;
	if (c->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
		out->flags |= TRACE_GPU_ASYNC;
	if (c->graphId)
		out->flags |= TRACE_GPU_GRAPH;
	return 0;
}

int cupti_conv_memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *c, uint32_t pid,
			  struct trace_memcpy *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(c->start, c->end))
		return -1;
	out->start = c->start;
	out->end = c->end;
	out->bytes = c->bytes;
	out->pid = pid;
	out->device = c->srcDeviceId;
	out->context = c->contextId;
	out->stream = c->streamId;
	out->correlation = c->correlationId;
	out->kind = c->copyKind ? c->copyKind : COPY_PTOP;
	out->src_kind = c->srcKind;
	out->dst_kind = c->dstKind;
	out->dst_device = (uint16_t)c->dstDeviceId;
	out->graph_id = c->graphId;
	if (c->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
		out->flags |= TRACE_GPU_ASYNC;
	if (c->graphId)
		out->flags |= TRACE_GPU_GRAPH;
	return 0;
}

int cupti_conv_memset(const CUpti_ActivityMemset4 *s, uint32_t pid, struct trace_memset *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(s->start, s->end))
		return -1;
	out->start = s->start;
	out->end = s->end;
	out->bytes = s->bytes;
	out->pid = pid;
	out->device = s->deviceId;
	out->context = s->contextId;
	out->stream = s->streamId;
	out->correlation = s->correlationId;
	out->value = s->value;
	out->mem_kind = (uint8_t)s->memoryKind;
	out->graph_id = s->graphId;
	if (s->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC)
		out->flags |= TRACE_GPU_ASYNC;
	if (s->graphId)
		out->flags |= TRACE_GPU_GRAPH;
	return 0;
}

int cupti_conv_sync(const CUpti_ActivitySynchronization2 *s, uint32_t pid, uint32_t device,
		    struct trace_sync *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(s->start, s->end))
		return -1;
	out->start = s->start;
	out->end = s->end;
	out->pid = pid;
	out->device = device;
	out->context = s->contextId;
	out->stream = s->streamId;
	out->event = s->cudaEventId;
	out->correlation = s->correlationId;
	out->type = (uint16_t)s->type;
	return 0;
}

int cupti_conv_memory(const CUpti_ActivityMemory4 *m, uint32_t pid, struct trace_memory *out)
{
	memset(out, 0, sizeof(*out));
	if (!m->timestamp)
		return -1;
	switch (m->memoryOperationType) {
	case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION:
		out->op = TRACE_MEM_ALLOC;
		break;
	case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE:
		out->op = TRACE_MEM_FREE;
		break;
	default:
		return -1;
	}
	out->time = m->timestamp;
	out->address = m->address;
	out->bytes = m->bytes;
	out->pid = pid;
	out->device = m->deviceId;
	out->context = m->contextId;
	out->stream = m->streamId;
	out->correlation = m->correlationId;
	out->mem_kind = (uint8_t)m->memoryKind;
	return 0;
}

int cupti_conv_api(const CUpti_ActivityAPI *a, unsigned domain, uint32_t name_id,
		   struct trace_api *out)
{
	memset(out, 0, sizeof(*out));
	if (incomplete(a->start, a->end))
		return -1;
	out->start = a->start;
	out->end = a->end;
	out->pid = a->processId;
	out->tid = a->threadId;
	out->correlation = a->correlationId;
	out->cbid = a->cbid;
	out->name_id = name_id;
	out->domain = (uint16_t)domain;
	out->status = (int32_t)a->returnValue;
	return 0;
}

void cupti_conv_device(const CUpti_ActivityDevice5 *d, uint32_t pid, uint32_t name_id,
		       struct trace_device *out)
{
	memset(out, 0, sizeof(*out));
	out->id = d->id;
	out->name_id = name_id;
	memcpy(out->uuid, d->uuid.bytes, sizeof(out->uuid));
	out->sm_count = d->numMultiprocessors;
	out->cc_major = d->computeCapabilityMajor;
	out->cc_minor = d->computeCapabilityMinor;
	out->core_clock_khz = d->coreClockRate;
	out->global_mem = d->globalMemorySize;
	out->max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
	out->pid = pid;
}

size_t cupti_api_base_name(const char *cupti_name, char *buf, size_t n)
{
	size_t len = strlen(cupti_name), i = len;

	/* a trailing "_v" followed by digits only is the version */
	while (i > 0 && isdigit((unsigned char)cupti_name[i - 1]))
		i--;
	if (i < len && i >= 2 && cupti_name[i - 1] == 'v' && cupti_name[i - 2] == '_')
		len = i - 2;
	if (n) {
		size_t k = len < n - 1 ? len : n - 1;
		memcpy(buf, cupti_name, k);
		buf[k] = '\0';
	}
	return len;
}

int cupti_api_keep(const char *name)
{
	static const char *const keep[] = {
		"Launch", "Memcpy", "Memset", "Synchronize", "StreamQuery", "EventQuery",
		"EventRecord", "StreamWaitEvent", "StreamCreate", "StreamDestroy",
		"Malloc", "Free", "HostAlloc", "HostRegister", "HostUnregister",
		"MemAlloc", "MemHostAlloc", "MemCreate", "MemRelease", "MemMap", "MemUnmap",
		"Prefetch", "ProfilerStart", "ProfilerStop", "DeviceReset",
		"GraphInstantiate", "GraphUpload", "BeginCapture", "EndCapture",
		"ModuleLoad", "LibraryLoad", "CtxCreate", "CtxDestroy", "PrimaryCtxRetain",
		"PrimaryCtxRelease", "PrimaryCtxReset", "StreamWaitValue", "StreamWriteValue",
		"StreamBatchMemOp",
	};
	/* graph building (cudaGraphAddMemcpyNode ...) is not work on the GPU */
	static const char *const graph_keep[] = {
		"GraphLaunch", "GraphInstantiate", "GraphUpload", "GraphExecDestroy",
	};
	const char *base = name;

	while (*base == '_')
		base++;
	if (!strncmp(base, "cudaGraph", 9) || !strncmp(base, "cuGraph", 7)) {
		for (size_t i = 0; i < sizeof(graph_keep) / sizeof(graph_keep[0]); i++)
			if (strstr(base, graph_keep[i]))
				return 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strstr(base, keep[i]))
			return 1;
	return 0;
}

int cupti_sync_type(const char *name, int *per_thread)
{
	static const struct { const char *base; int type; } syncs[] = {
		{ "cudaDeviceSynchronize", SYNC_CONTEXT }, { "cudaThreadSynchronize", SYNC_CONTEXT },
		{ "cuCtxSynchronize", SYNC_CONTEXT },
		{ "cudaStreamSynchronize", SYNC_STREAM }, { "cuStreamSynchronize", SYNC_STREAM },
		{ "cudaEventSynchronize", SYNC_EVENT }, { "cuEventSynchronize", SYNC_EVENT },
		{ "cudaStreamWaitEvent", SYNC_STREAM_WAIT_EVENT },
		{ "cuStreamWaitEvent", SYNC_STREAM_WAIT_EVENT },
	};
	const char *base = name;

	*per_thread = 0;
	while (*base == '_')
		base++;
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++) {
		size_t n = strlen(syncs[i].base);
		/* the whole name, or a version/_ptsz suffix after it */
		if (strncmp(base, syncs[i].base, n) || (base[n] && base[n] != '_'))
			continue;
		*per_thread = strstr(base + n, "_ptsz") != NULL;
		return syncs[i].type;
	}
	return 0;
}

void cupti_sync_from_api(const struct trace_api *a, unsigned type, struct trace_sync *out)
{
	memset(out, 0, sizeof(*out));
	out->start = a->start;
	out->end = a->end;
	out->pid = a->pid;
	out->correlation = a->correlation;
	out->type = (uint16_t)type;
	out->device = CUPTI_DEVICE_UNKNOWN;
	out->stream = UINT32_MAX;
	out->event = UINT32_MAX;
}

/* The function identifier of a (possibly demangled) kernel name. */
static const char *kernel_ident(const char *name, size_t *len)
{
	const char *end, *p;

	if (!strncmp(name, "_Z", 2)) {
		/* _Z<len><ident> or _ZN<len><ident>... : the first source name */
		p = name + 2;
		while (*p && !isdigit((unsigned char)*p))
			p++;
		*len = 0;
		while (isdigit((unsigned char)*p))
			*len = *len * 10 + (size_t)(*p++ - '0');
		return p;
	}
	end = name + strcspn(name, "(<");
	p = end;
	while (p > name && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
		p--;
	*len = (size_t)(end - p);
	return p;
}

int cupti_is_nccl_kernel(const char *name)
{
	size_t len;
	const char *id;

	if (!name)
		return 0;
	id = kernel_ident(name, &len);
	return (len >= 10 && !strncmp(id, "ncclKernel", 10)) ||
	       (len >= 13 && !strncmp(id, "ncclDevKernel", 13));
}

void cupti_kernel_names(const char *raw, const char *demangled, const char **name,
			const char **mangled)
{
	if (!raw || !raw[0]) {
		*name = "<unknown kernel>";
		*mangled = NULL;
		return;
	}
	if (!strncmp(raw, "_Z", 2)) {
		*name = demangled && demangled[0] ? demangled : raw;
		*mangled = raw;
		return;
	}
	*name = raw;
	*mangled = NULL;
}

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangler;

static void find_demangler(void)
{
	void *h;

	*(void **)&demangler = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (demangler)
		return;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&demangler = dlsym(h, "__cxa_demangle");
}

char *cupti_demangle(const char *mangled)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int status = 0;
	char *out;

	if (!mangled || strncmp(mangled, "_Z", 2))
		return NULL;
	pthread_once(&once, find_demangler);
	if (!demangler)
		return NULL;
	out = demangler(mangled, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The value after "key:" on a line of @text, or NULL */
static const char *field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			const char *v = line + klen + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int cupti_info_pci(const char *text, const uint8_t uuid[16], uint32_t *domain, uint32_t *bus,
		   uint32_t *device)
{
	const char *u = field(text, "GPU UUID"), *b = field(text, "Bus Location");
	uint8_t got[16];
	unsigned long dom, bu, dev;
	char *end;
	int nb = 0;

	if (!u || !b)
		return -1;
	if (!strncmp(u, "GPU-", 4))
		u += 4;
	while (nb < 16 && *u && *u != '\n') {
		int hi, lo;
		if (*u == '-') {
			u++;
			continue;
		}
		hi = hexval(u[0]);
		lo = hi < 0 ? -1 : hexval(u[1]);
		if (lo < 0)
			return -1;
		got[nb++] = (uint8_t)(hi << 4 | lo);
		u += 2;
	}
	if (nb != 16 || memcmp(got, uuid, 16))
		return -1;
	/* "0000:65:00.0" */
	dom = strtoul(b, &end, 16);
	if (*end != ':')
		return -1;
	bu = strtoul(end + 1, &end, 16);
	if (*end != ':')
		return -1;
	dev = strtoul(end + 1, &end, 16);
	if (*end != '.')
		return -1;
	*domain = (uint32_t)dom;
	*bus = (uint32_t)bu;
	*device = (uint32_t)dev;
	return 0;
}

#endif /* GS_HAVE_CUPTI */
