/*
 * trace.h - the gpuscope report file format: records, writer, streaming reader.
 *
 * A report is a file header followed by chunks (docs/report-format.md is the
 * spec, kept true by tests/trace).  Every chunk has its own header with a
 * type, a stream id (one stream per traced process), sizes and two CRC-32C
 * checksums, so a reader can skip chunk types it does not know and can keep
 * every whole chunk of a truncated or damaged file.
 *
 * Event chunks (TRACE_CHUNK_EVENTS) hold a sequence of entries; each entry is
 * an 8-byte struct trace_entry followed by a fixed record of its type
 * (struct trace_kernel, ...), the whole padded to 8 bytes.  The entry header
 * carries the entry size, so records may grow in later versions: a reader
 * copies the prefix it knows and zero-fills what an older writer left out.
 * Event chunks are normally zstd-compressed; chunks written from a signal
 * handler are stored raw.
 *
 * Times are nanoseconds of CLOCK_MONOTONIC, shared by every process of a host.
 * Strings are interned per stream: a TRACE_EV_STRING entry defines an id,
 * records refer to ids (0 = empty string), and a definition may come after
 * its first use within the same stream.
 *
 * Enumerations that exist in CUPTI (copy kinds, memory kinds, sync types) use
 * CUPTI's codes, which are also the codes of an nsys SQLite export.
 */
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAGIC "GPUSCOPE"
#define TRACE_VERSION 1        /* version this code writes */
#define TRACE_MIN_READER 1     /* oldest reader version that can read what we write */
#define TRACE_HEADER_SIZE 64
#define TRACE_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" little-endian */
#define TRACE_CHUNK_HEADER_SIZE 32
#define TRACE_MAX_CHUNK (256u << 20)   /* readers reject bigger chunks as corrupt */
#define TRACE_FILE_EXT ".gpuscope"

/* Feature bits in the file header (informational; readers ignore unknown ones). */
enum trace_feature {
	TRACE_FEAT_ZSTD = 1u << 0,
	TRACE_FEAT_MERGED = 1u << 1, /* written by the merger from per-process parts */
};

struct trace_file_header {
	char magic[8];            /* "GPUSCOPE" */
	uint16_t version;         /* format version of the writer */
	uint16_t min_reader;      /* oldest reader version able to read this file */
	uint32_t header_size;     /* bytes from file start to the first chunk */
	uint64_t features;        /* enum trace_feature bits */
	uint64_t created_realtime_ns;
	uint8_t reserved[28];
	uint32_t header_crc;      /* CRC-32C of the first 60 bytes */
};

enum trace_chunk_type {
	TRACE_CHUNK_EVENTS = 1,     /* entries, see struct trace_entry */
	TRACE_CHUNK_STREAM_END = 2, /* a stream (process) finished cleanly; no payload */
	TRACE_CHUNK_INDEX = 3,      /* the chunk index, the last chunk of a report (below) */
};

enum trace_chunk_flags {
	TRACE_CHUNK_ZSTD = 1u << 0, /* payload is one zstd frame of raw_size bytes */
};

struct trace_chunk_header {
	uint32_t magic;       /* TRACE_CHUNK_MAGIC */
	uint16_t type;        /* enum trace_chunk_type */
	uint16_t flags;       /* enum trace_chunk_flags */
	uint32_t stream;      /* which process stream this chunk belongs to */
	uint32_t stored_size; /* payload bytes in the file */
	uint32_t raw_size;    /* payload bytes after decompression */
	uint32_t payload_crc; /* CRC-32C of the stored payload */
	uint32_t reserved;
	uint32_t header_crc;  /* CRC-32C of the first 28 bytes of this header */
};

/*
 * The chunk index (docs/report-format.md, "Chunk index"): the last chunk of
 * a report written by trace_builder or the merger, stored raw, so that a
 * reader finds it from the file's last 16 bytes (struct trace_index_tail)
 * without a scan.  Its payload is a trace_index_head, head.count entries
 * of head.entry_size bytes (a longer entry of a newer writer is read by its
 * known prefix) and the tail.  It lists every chunk before it, in file
 * order, with what an events chunk holds, so that a windowed load
 * decompresses only the chunks that can hold rows of its window.  Readers
 * that do not know type 3 skip it; a reader that finds no valid index (an
 * older report, a collector part, a truncated file) reads every chunk.
 */
#define TRACE_INDEX_MAGIC "GSINDEX1"

struct trace_index_head {
	uint32_t entry_size;      /* bytes per entry (64 in version 1) */
	uint32_t count;           /* entries */
	uint64_t reserved;
};

enum trace_index_flags {
	TRACE_IDX_KNOWN = 1u << 0, /* the times and types below were computed; else never skip the chunk */
	TRACE_IDX_OPEN = 1u << 1,  /* holds start/end NVTX ranges recorded open (end 0) */
	TRACE_IDX_WIDE = 1u << 2,  /* holds entry types >= 32, which types cannot name */
};

/*
 * One chunk.  Extents (docs/report-format.md): t_lo/t_hi cover the
 * chunk's timed records (an interval record [start, max(start, end)], an
 * open start/end range [start, UINT64_MAX], a point record its time, an
 * nvtx_end its end); span_lo/span_hi the records that count in a report's
 * span (ranges, marks, OS-runtime and API calls, GPU work, allocations,
 * allocator samples, OOMs; lo only from non-zero times); end_hi the latest
 * end of its nvtx_end records.  0/0 when the chunk holds none.
 */
struct trace_index_entry {
	uint64_t offset;          /* of the chunk header */
	uint64_t t_lo, t_hi;
	uint64_t span_lo, span_hi;
	uint64_t end_hi;
	uint32_t stream;          /* as in the chunk header */
	uint32_t types;           /* bit t: holds entries of type t (t < 32) */
	uint16_t chunk_type;      /* as in the chunk header */
	uint16_t flags;           /* enum trace_index_flags */
	uint32_t reserved;
};

struct trace_index_tail {
	uint64_t index_offset;    /* of the index chunk's header */
	char magic[8];            /* TRACE_INDEX_MAGIC */
};

/*
 * trace_chunk_summary - fill @e's times, types and flags from the raw
 * entries of an events chunk (offset, stream and chunk_type are the
 * caller's).  A malformed entry ends the walk and leaves TRACE_IDX_KNOWN
 * clear: such a chunk is never skipped.
 */
void trace_chunk_summary(const unsigned char *data, size_t len, struct trace_index_entry *e);
/* The entry types (bits 1u << TRACE_EV_*) whose times t_lo/t_hi cover. */
unsigned trace_index_timed_types(void);

/* ---- event entries ---- */

enum trace_event_type {
	TRACE_EV_STRING = 1,     /* struct trace_string + bytes */
	TRACE_EV_PROCESS = 2,
	TRACE_EV_THREAD = 3,
	TRACE_EV_NVTX_RANGE = 4,
	TRACE_EV_NVTX_END = 5,   /* end of a start/end range recorded open */
	TRACE_EV_NVTX_MARK = 6,
	TRACE_EV_NAME = 7,       /* names of categories, CUDA resources ... */
	TRACE_EV_OSRT = 8,
	TRACE_EV_CPU_SAMPLE = 9,
	TRACE_EV_API = 10,
	TRACE_EV_KERNEL = 11,
	TRACE_EV_MEMCPY = 12,
	TRACE_EV_MEMSET = 13,
	TRACE_EV_SYNC = 14,
	TRACE_EV_MEMORY = 15,
	TRACE_EV_DEVICE = 16,
	TRACE_EV_METRIC = 17,
	TRACE_EV_DROPS = 18,
	TRACE_EV_CAPTURE = 19,
	TRACE_EV_WARNING = 20,
	TRACE_EV_KMETRIC = 21,   /* a hardware counter of one profiled kernel instance */
	TRACE_EV_TORCH_MEM = 22, /* a sample of PyTorch's caching allocator (struct trace_torch_mem) */
	TRACE_EV_OOM = 23,       /* an out-of-memory of PyTorch's caching allocator (struct trace_oom) */
	TRACE_EV_PROC_ATTR = 24, /* a process's rank, CPU affinity, memory policy, clock alignment */
	TRACE_EV__COUNT
};

struct trace_entry {
	uint16_t type;  /* enum trace_event_type */
	uint16_t size;  /* bytes of header + record + padding; multiple of 8 */
	uint32_t reserved;
};

/* TRACE_EV_STRING: followed by len bytes (no NUL), padded. */
struct trace_string {
	uint32_t id;
	uint32_t len;
};

struct trace_process {
	uint32_t pid, ppid;
	uint64_t start_realtime_ns; /* wall clock at start_mono_ns */
	uint64_t start_mono_ns;
	uint32_t cmdline_id;        /* arguments joined by spaces */
	uint32_t exe_id;
	uint32_t host_id;
	uint32_t flags;
};

enum trace_thread_flags {
	TRACE_THREAD_START = 1u << 0,
	TRACE_THREAD_EXIT = 1u << 1,
	TRACE_THREAD_NAME = 1u << 2, /* name_id is valid */
};

struct trace_thread {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t name_id;
	uint32_t flags;         /* enum trace_thread_flags */
};

enum trace_nvtx_kind {
	TRACE_NVTX_PUSHPOP = 1,
	TRACE_NVTX_STARTEND = 2,
};

enum trace_payload_type {
	TRACE_PAYLOAD_NONE = 0,
	TRACE_PAYLOAD_U64 = 1,
	TRACE_PAYLOAD_I64 = 2,
	TRACE_PAYLOAD_DOUBLE = 3,
	TRACE_PAYLOAD_U32 = 4,
	TRACE_PAYLOAD_I32 = 5,
	TRACE_PAYLOAD_FLOAT = 6, /* stored as double bits */
};

/*
 * An NVTX range.  Push/pop ranges are written whole at the pop.  Start/end
 * ranges are written at the start with end == 0, and closed by a
 * TRACE_EV_NVTX_END with the same range_id (possibly from another thread).
 */
struct trace_nvtx_range {
	uint64_t start, end;
	uint32_t pid, tid;
	uint32_t end_tid;
	uint32_t name_id;
	uint32_t domain_id;       /* string id of the domain name; 0 = default domain */
	uint32_t category;
	uint32_t color;           /* ARGB; 0 = none */
	uint8_t kind;             /* enum trace_nvtx_kind */
	uint8_t payload_type;     /* enum trace_payload_type */
	uint16_t level;           /* push/pop nesting depth, 0 = outermost */
	uint64_t payload;         /* bits of the payload value */
	uint64_t range_id;        /* start/end id; 0 for push/pop */
};

struct trace_nvtx_end {
	uint64_t range_id;
	uint64_t end;
	uint32_t tid;
	uint32_t reserved;
};

struct trace_nvtx_mark {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t name_id;
	uint32_t domain_id;
	uint32_t category;
	uint32_t color;
	uint8_t payload_type;
	uint8_t reserved[7];
	uint64_t payload;
};

enum trace_name_kind {
	TRACE_NAME_CATEGORY = 1,   /* id = category number within domain_id */
	TRACE_NAME_CUDA_DEVICE = 2,
	TRACE_NAME_CUDA_CONTEXT = 3,
	TRACE_NAME_CUDA_STREAM = 4,
	TRACE_NAME_DOMAIN = 5,     /* a domain created, id = domain string id */
	TRACE_NAME_NVTX_SEEN = 6,  /* an NVTX range name seen before the capture range started */
};

struct trace_name {
	uint32_t kind;            /* enum trace_name_kind */
	uint32_t domain_id;
	uint64_t id;
	uint32_t pid;
	uint32_t name_id;
};

/* OS-runtime functions; names in trace_osrt_name(). Append only. */
enum trace_osrt_func {
	OSRT_READ = 1, OSRT_WRITE, OSRT_PREAD, OSRT_PWRITE, OSRT_READV, OSRT_WRITEV,
	OSRT_RECV, OSRT_RECVFROM, OSRT_RECVMSG, OSRT_SEND, OSRT_SENDTO, OSRT_SENDMSG,
	OSRT_POLL, OSRT_PPOLL, OSRT_SELECT, OSRT_PSELECT, OSRT_EPOLL_WAIT, OSRT_EPOLL_PWAIT,
	OSRT_NANOSLEEP, OSRT_USLEEP, OSRT_SLEEP, OSRT_CLOCK_NANOSLEEP,
	OSRT_MUTEX_LOCK, OSRT_COND_WAIT, OSRT_COND_TIMEDWAIT, OSRT_JOIN,
	OSRT_SEM_WAIT, OSRT_SEM_TIMEDWAIT, OSRT_OPEN, OSRT_OPENAT, OSRT_FSYNC, OSRT_FDATASYNC,
	OSRT_WAITPID, OSRT_WAIT, OSRT_CONNECT, OSRT_ACCEPT, OSRT_FUTEX, OSRT_RWLOCK_RDLOCK,
	OSRT_RWLOCK_WRLOCK, OSRT_FOPEN, OSRT_FREAD, OSRT_FWRITE, OSRT_IOCTL, OSRT_MMAP,
	OSRT__COUNT
};

struct trace_osrt {
	uint64_t start, end;
	uint32_t pid, tid;
	uint16_t func;            /* enum trace_osrt_func */
	uint16_t flags;
	int32_t err;              /* errno when the call failed, else 0 */
	int64_t result;           /* return value (bytes for read/write) */
	int64_t arg;              /* fd, or the requested size; -1 when none */
};

/* Per-thread CPU time, sampled from /proc/self/task/TID/schedstat. */
struct trace_cpu_sample {
	uint64_t time;
	uint64_t run_ns;          /* cumulative time on a CPU */
	uint64_t wait_ns;         /* cumulative time runnable but waiting */
	uint32_t pid, tid;
};

enum trace_api_domain {
	TRACE_API_RUNTIME = 1,
	TRACE_API_DRIVER = 2,
};

/* A CUDA runtime or driver API call. */
struct trace_api {
	uint64_t start, end;
	uint32_t pid, tid;
	uint32_t correlation;
	uint32_t cbid;            /* CUPTI callback id within domain */
	uint32_t name_id;         /* function name, e.g. "cudaLaunchKernel" */
	uint16_t domain;          /* enum trace_api_domain */
	uint16_t flags;
	int32_t status;           /* return code; 0 = success */
	uint32_t reserved;
};

enum trace_gpu_flags {
	TRACE_GPU_COMM = 1u << 0,   /* communication kernel (NCCL ...) */
	TRACE_GPU_ASYNC = 1u << 1,  /* copies/sets: asynchronous API */
	TRACE_GPU_GRAPH = 1u << 2,  /* launched from a CUDA graph */
};

struct trace_kernel {
	uint64_t start, end;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t correlation;
	uint32_t name_id;         /* demangled name */
	uint32_t mangled_id;      /* mangled name, 0 when unknown */
	uint32_t graph_id;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t static_smem, dynamic_smem;
	uint16_t registers;       /* per thread */
	uint16_t flags;           /* enum trace_gpu_flags */
};

/* CUPTI_ACTIVITY_MEMCPY_KIND_* codes. */
enum trace_copy_kind {
	COPY_UNKNOWN = 0, COPY_HTOD = 1, COPY_DTOH = 2, COPY_HTOA = 3, COPY_ATOH = 4,
	COPY_ATOA = 5, COPY_ATOD = 6, COPY_DTOA = 7, COPY_DTOD = 8, COPY_HTOH = 9,
	COPY_PTOP = 10,
};

/* CUPTI_ACTIVITY_MEMORY_KIND_* codes. */
enum trace_mem_kind {
	MEM_UNKNOWN = 0, MEM_PAGEABLE = 1, MEM_PINNED = 2, MEM_DEVICE = 3, MEM_ARRAY = 4,
	MEM_MANAGED = 5, MEM_DEVICE_STATIC = 6, MEM_MANAGED_STATIC = 7,
};

struct trace_memcpy {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t correlation;
	uint8_t kind;             /* enum trace_copy_kind */
	uint8_t src_kind, dst_kind; /* enum trace_mem_kind */
	uint8_t reserved;
	uint16_t flags;           /* enum trace_gpu_flags */
	uint16_t dst_device;      /* peer copies */
	uint32_t graph_id;
};

struct trace_memset {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t correlation;
	uint32_t value;
	uint8_t mem_kind;         /* enum trace_mem_kind */
	uint8_t reserved;
	uint16_t flags;
	uint32_t graph_id;
};

/* CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_* codes. */
enum trace_sync_type {
	SYNC_UNKNOWN = 0, SYNC_EVENT = 1, SYNC_STREAM_WAIT_EVENT = 2,
	SYNC_STREAM = 3, SYNC_CONTEXT = 4,
};

struct trace_sync {
	uint64_t start, end;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t event;
	uint32_t correlation;
	uint16_t type;            /* enum trace_sync_type */
	/*
	 * Event syncs and stream waits (Kineto only, 0 elsewhere): the stream
	 * the awaited CUDA event was recorded on, valid when wait_correlation
	 * is not 0 (Kineto's wait_on_stream; the importer leaves
	 * wait_correlation 0 when the stream does not fit 16 bits), and the
	 * correlation id of the cudaEventRecord call that recorded it
	 * (wait_on_cuda_event_record_corr_id).  Formerly reserved fields.
	 */
	uint16_t wait_stream;
	uint32_t wait_correlation;
};

enum trace_memory_op {
	TRACE_MEM_ALLOC = 1,
	TRACE_MEM_FREE = 2,
};

/* A device (or pinned host) memory allocation or free. */
struct trace_memory {
	uint64_t time;
	uint64_t address;
	uint64_t bytes;
	uint32_t pid;
	uint32_t device, context, stream;
	uint32_t correlation;
	uint8_t op;               /* enum trace_memory_op */
	uint8_t mem_kind;         /* enum trace_mem_kind */
	uint16_t reserved;
};

struct trace_device {
	uint32_t id;              /* CUDA device ordinal */
	uint32_t name_id;
	uint8_t uuid[16];
	uint32_t sm_count;
	uint32_t cc_major, cc_minor;
	uint32_t core_clock_khz;  /* max SM clock */
	uint64_t global_mem;      /* bytes */
	uint32_t mem_clock_khz;
	uint32_t mem_bus_width;
	uint32_t pci_domain, pci_bus, pci_device;
	uint32_t max_threads_per_sm;
	uint32_t pid;             /* process that reported it */
	uint32_t reserved;
};

/*
 * A sample of a numeric counter: GPU metrics from NVML/GPM, imported
 * counters.  name_id names the metric: NVML/GPM metrics ("gpu_util",
 * "sm_clock_mhz", ...) as named in nvml_metric_info() (src/nvml/decode.c)
 * and listed in docs/monitor.md, "Metrics", and the sampler's
 * "process_mem_bytes" (docs/monitor.md, "GPU metrics in profiles"); PM
 * sampling's "pm_*" counters in docs/cuda.md; imported counters in
 * docs/import.md.  device is the GPU index or UINT32_MAX for a host counter.
 */
struct trace_metric {
	uint64_t time;
	double value;
	uint32_t device;
	uint32_t name_id;
	uint32_t pid;
	uint32_t flags;           /* reserved */
};

enum trace_drop_source {
	TRACE_DROP_BUFFER = 1,    /* thread buffer pool exhausted */
	TRACE_DROP_CUPTI = 2,     /* CUPTI reported dropped records */
	TRACE_DROP_NVTX = 3,      /* unmatched pops or similar */
	TRACE_DROP_WRITE = 4,     /* write errors */
	TRACE_DROP_METRIC = 5,
	TRACE_DROP__COUNT
};

/* Cumulative drop count of one source; the last entry of a stream wins. */
struct trace_drops {
	uint32_t pid;
	uint32_t source;          /* enum trace_drop_source */
	uint64_t count;
};

enum trace_capture_what {
	TRACE_CAPTURE_START = 1,
	TRACE_CAPTURE_STOP = 2,
};

/* What opened a capture (docs/always-on.md); 0 in reports older than the field. */
enum trace_capture_trigger {
	TRACE_TRIGGER_UNKNOWN = 0,
	TRACE_TRIGGER_COMMAND = 1,   /* `gpuscope capture` (or a monitor alert calling it) */
	TRACE_TRIGGER_NVTX = 2,      /* the --capture-range=nvtx range */
	TRACE_TRIGGER_PROFILER = 3,  /* cudaProfilerStart */
	TRACE_TRIGGER_TIMED = 4,     /* --delay / --duration */
	TRACE_TRIGGER_STEP_TIME = 5, /* --trigger step_time>...: a slow step */
	TRACE_TRIGGER_GPU = 6,       /* --trigger temp>... / mem_used>...: a GPU reading crossed its line */
	TRACE_TRIGGER__COUNT
};

/*
 * A capture window's edge.  The last three fields came with on-demand
 * tracing; an older 16-byte record reads them as zero (unknown).
 */
struct trace_capture {
	uint64_t time;
	uint32_t pid;
	uint32_t what;            /* enum trace_capture_what */
	uint32_t trigger;         /* enum trace_capture_trigger */
	uint32_t id;              /* the process's capture number, from 1; 0 = not numbered */
	uint64_t ring_from;       /* start: earliest record of the flight recorder's ring written
				   * before it (report clock); 0 = no ring */
};

/* A warning the collector wants users to see ("CUDA tracing off: ..."). */
struct trace_warning {
	uint64_t time;
	uint32_t pid;
	uint32_t message_id;
};

enum trace_kmetric_flags {
	TRACE_KM_VALID = 1u << 0,       /* value holds the counter's value */
	TRACE_KM_UNAVAILABLE = 1u << 1, /* the GPU or driver has none of the metric's names */
	TRACE_KM_FAILED = 1u << 2,      /* profiling this instance failed: value unknown */
};

/*
 * One hardware counter of one profiled kernel instance (`profile
 * --kernel-metrics`, CUPTI's Range Profiler with kernel replay): one record
 * per metric of the set for every profiled instance, valid or not, so that a
 * metric the GPU lacks reads "unavailable", never 0.  Records of one
 * instance share time, correlation and instance.  key_id is gpuscope's name
 * of the metric ("sm_throughput_pct", docs/cuda.md); metric_id the CUPTI
 * metric that was evaluated for it on this GPU (when unavailable: the names
 * that were tried, joined by '|').
 */
struct trace_kmetric {
	uint64_t time;            /* the launch call was entered (report clock) */
	uint64_t cost_ns;         /* host time of the launch with its replay passes and decoding */
	double value;             /* valid when flags & TRACE_KM_VALID */
	uint32_t pid, tid;
	uint32_t correlation;     /* of the launching API call: joins the kernel record */
	uint32_t device;          /* CUDA ordinal */
	uint32_t kernel_id;       /* demangled kernel name */
	uint32_t key_id;          /* gpuscope's metric name */
	uint32_t metric_id;       /* CUPTI metric name(s) */
	uint32_t instance;        /* 0 = the first profiled instance of this kernel */
	uint16_t passes;          /* replay passes the metric set needs (each pass runs the kernel once) */
	uint16_t flags;           /* enum trace_kmetric_flags */
	uint32_t reserved;
};

enum trace_proc_attr_flags {
	TRACE_PA_CLOCK_WALL = 1u << 0,  /* merge: clock_offset_ns from the wall-clock offsets */
	TRACE_PA_CLOCK_COLL = 1u << 1,  /* merge: refined by the ends of shared collectives */
	TRACE_PA_REFERENCE = 1u << 2,   /* merge: this process's clock is the merged clock */
};

/*
 * A process's place in a distributed job and on its host (src/collect/procinfo.c
 * at the start of the process; the importers from Kineto's distributedInfo;
 * the merger adds the clock alignment).  At most one per process is used: a
 * later record of the same pid overrides the fields it knows (rank >= 0,
 * string ids != 0, ...), so the merger can add its alignment to a
 * collector's record.  Unknown is never 0 where 0 is a value: ranks and the
 * memory policy are -1 when unknown; masks are 0 when unknown.
 */
struct trace_proc_attr {
	uint64_t time;            /* report clock when it was read */
	uint32_t pid;
	int32_t rank;             /* global rank, -1 unknown */
	int32_t local_rank;       /* rank on its host, -1 unknown */
	int32_t world_size;       /* ranks in the job, -1 unknown */
	uint32_t launcher_id;     /* string: where the rank came from ("torchrun", "openmpi", "slurm", "pmi", "kineto"), 0 unknown */
	uint32_t cpus_id;         /* string: the CPU affinity as a list, "0-15,32-47"; 0 unknown */
	uint32_t ncpus;           /* CPUs in the affinity mask, 0 unknown */
	int32_t mempolicy;        /* get_mempolicy mode (MPOL_DEFAULT 0, PREFERRED 1, BIND 2, INTERLEAVE 3, LOCAL 4, ...), -1 unknown */
	uint64_t cpu_nodes;       /* bit n: the affinity holds a CPU of NUMA node n (nodes 0-63), 0 unknown */
	uint64_t mem_nodes;       /* bit n: node n in the memory policy's node mask (nodes 0-63), 0 none or unknown */
	int64_t clock_offset_ns;  /* merge: added to this process's times to put them on the merged clock */
	uint64_t clock_error_ns;  /* merge: residual error of the alignment (TRACE_PA_CLOCK_COLL), else 0 */
	uint32_t flags;           /* enum trace_proc_attr_flags */
	uint32_t reserved;
};

/* What made a TRACE_EV_TORCH_MEM sample. */
enum trace_torch_mem_kind {
	TRACE_TM_PERIODIC = 1,    /* the hook's sampling thread (every GPUSCOPE_TORCH_MEM_MS) */
	TRACE_TM_STEP = 2,        /* a step boundary (optimizer.step, profiler step, NVTX step range) */
	TRACE_TM_PEAK = 3,        /* the program's last sample: peaks since start (at exit) */
	TRACE_TM_ALLOC = 4,       /* imported: after one allocation or free (Kineto's [memory]) */
};

/* Which fields of a TRACE_EV_TORCH_MEM sample were measured (unknown is not zero). */
enum trace_torch_mem_flags {
	TRACE_TM_HAS_ACTIVE = 1u << 0,   /* active and inactive_split */
	TRACE_TM_HAS_COUNTS = 1u << 1,   /* retries, ooms, segments, alloc_count, free_count */
	TRACE_TM_HAS_PEAKS = 1u << 2,    /* allocated_peak, reserved_peak */
	TRACE_TM_HAS_RESERVED = 1u << 3, /* reserved */
	TRACE_TM_HAS_STEP = 1u << 4,     /* step */
};

/*
 * A sample of PyTorch's CUDA caching allocator on one device
 * (torch.cuda.memory_stats(), "all" pools; docs/memory.md), written by the
 * Python start-up hook through gpuscope_torch_mem_sample(), or imported from
 * Kineto's [memory] events (allocated and reserved only, with the size of
 * the allocation (+) or free (-) in delta).  Bytes are the "current" values
 * unless named peak; counts are the allocator's cumulative counters.
 */
struct trace_torch_mem {
	uint64_t time;
	uint64_t allocated;       /* allocated_bytes.all.current: live tensors */
	uint64_t reserved;        /* reserved_bytes.all.current: segments held from cudaMalloc */
	uint64_t active;          /* active_bytes.all.current: allocated + freed but not yet reusable */
	uint64_t inactive_split;  /* inactive_split_bytes.all.current: free pieces of split segments */
	uint64_t allocated_peak;  /* allocated_bytes.all.peak since start (or reset_peak_memory_stats) */
	uint64_t reserved_peak;   /* reserved_bytes.all.peak */
	uint64_t alloc_count;     /* allocation.all.allocated: tensors allocated so far */
	uint64_t free_count;      /* allocation.all.freed: tensors freed so far */
	int64_t delta;            /* Kineto: bytes of this allocation (+) or free (-); 0 elsewhere */
	uint32_t pid, tid;
	uint32_t device;          /* CUDA ordinal */
	uint32_t retries;         /* num_alloc_retries: cudaMalloc failed, cache freed, retried */
	uint32_t ooms;            /* num_ooms */
	uint32_t segments;        /* segment.all.current */
	uint32_t step;            /* steps seen by the hook before this sample (TRACE_TM_HAS_STEP) */
	uint16_t kind;            /* enum trace_torch_mem_kind */
	uint16_t flags;           /* enum trace_torch_mem_flags */
};

#define TRACE_OOM_BLOCKS 8

enum trace_oom_flags {
	TRACE_OOM_HAS_DEVICE_FREE = 1u << 0,  /* device_free and device_total */
	TRACE_OOM_HAS_STATS = 1u << 1,        /* allocated, reserved, inactive_split */
	TRACE_OOM_HAS_BLOCKS = 1u << 2,       /* blocks[], largest_free (memory_snapshot()) */
	TRACE_OOM_HAS_HISTORY = 1u << 3,      /* detail_id names allocations with their stacks */
	/*
	 * Not an out-of-memory: the allocator's state at a new high of
	 * allocated memory, taken by the hook under --torch-memory-history so
	 * that the peak's largest live allocations are named with their
	 * stacks; requested is 0.  Readers that count OOMs skip these.
	 */
	TRACE_OOM_PEAK = 1u << 4,
};

/*
 * An out-of-memory of PyTorch's caching allocator: the failed request and
 * the state around it, written by the hook's OOM observer
 * (torch._C._cuda_attach_out_of_memory_observer) before the program sees
 * the exception.  blocks[] are the sizes of the largest allocated blocks,
 * largest first (nblocks of them); largest_free is the largest free block of
 * any segment (a request up to it would have fitted without cudaMalloc).
 * detail_id is a text, one line per large allocation or segment
 * ("BYTES allocated|segment[ STACK]"), 0 when none.
 */
struct trace_oom {
	uint64_t time;
	uint64_t requested;       /* bytes the failed cudaMalloc asked for */
	uint64_t device_free;     /* cudaMemGetInfo free at the failure */
	uint64_t device_total;    /* device capacity */
	uint64_t allocated;       /* allocated_bytes.all.current */
	uint64_t reserved;        /* reserved_bytes.all.current */
	uint64_t inactive_split;  /* inactive_split_bytes.all.current */
	uint64_t largest_free;    /* largest free block in a segment */
	uint64_t blocks[TRACE_OOM_BLOCKS];
	uint32_t pid, tid;
	uint32_t device;
	uint32_t nblocks;
	uint32_t detail_id;
	uint32_t flags;           /* enum trace_oom_flags */
};

/* Name of an event type ("kernel"), or NULL. Names are used by `dump --type`. */
const char *trace_event_name(unsigned type);
int trace_event_type_by_name(const char *name);
/* Size of the fixed record of @type (without entry header), 0 if unknown. */
size_t trace_record_size(unsigned type);
const char *trace_osrt_name(unsigned func);
const char *trace_copy_kind_name(unsigned kind);   /* "HtoD" ... */
const char *trace_mem_kind_name(unsigned kind);    /* "pageable" ... */
const char *trace_sync_type_name(unsigned type);
const char *trace_drop_source_name(unsigned src);

/* Round a record size up to the entry size used on disk. */
static inline size_t trace_entry_size(size_t record_size)
{
	return (sizeof(struct trace_entry) + record_size + 7) & ~(size_t)7;
}

/*
 * trace_buf - a growable buffer of entries, for writers that are not the
 * injected collector (tests, importers' dumps, the merger, NVML replay).
 */
struct trace_buf {
	unsigned char *data;
	size_t len, alloc;
};
void trace_buf_add(struct trace_buf *b, unsigned type, const void *rec, size_t size);
uint32_t trace_buf_add_string(struct trace_buf *b, uint32_t id, const char *s, size_t len);
void trace_buf_release(struct trace_buf *b);

/* Fill @hdr for a chunk of @payload (already compressed when flags say so). */
void trace_chunk_header_fill(struct trace_chunk_header *hdr, unsigned type, unsigned flags,
			     uint32_t stream, const void *payload, uint32_t stored_size,
			     uint32_t raw_size);
void trace_file_header_fill(struct trace_file_header *hdr, uint64_t features);

/* ---- writer ---- */

struct trace_writer {
	int fd;
	char *path;
	uint64_t offset;
	int level;                /* zstd level */
	void *zctx;
	unsigned char *zbuf;
	size_t zcap;
	int failed;               /* a write failed: said once, not again */
	/* the chunk index kept for trace_writer_index(), when @indexed */
	int indexed;
	struct trace_index_entry *index;
	size_t nr_index, alloc_index;
};

/*
 * trace_writer_open - create @path and write the file header.
 * @excl: fail when the file exists (the no-overwrite rule of `profile`).
 * Returns 0, or -1 after error().
 */
int trace_writer_open(struct trace_writer *w, const char *path, int excl);
/* Wrap an already open fd (takes ownership); writes the header when @header. */
int trace_writer_fdopen(struct trace_writer *w, int fd, const char *path, int header);
/* Write one chunk, compressing with zstd when @compress; 0 or -1. */
int trace_writer_chunk(struct trace_writer *w, unsigned type, uint32_t stream,
		       const void *raw, size_t len, int compress);
/* Write a chunk whose header and payload are already encoded (the merger). */
int trace_writer_raw(struct trace_writer *w, const struct trace_chunk_header *hdr,
		     const void *stored);
/*
 * trace_writer_index - write the chunk index of every chunk written since
 * the writer was opened with w->indexed set; the last chunk of a report
 * (a chunk written after it leaves the report without an index, which
 * readers then scan).  Nothing when not indexed or after a failed write.
 * 0 or -1.
 */
int trace_writer_index(struct trace_writer *w);
/* fsync (when @sync) and close; 0 or -1. */
int trace_writer_close(struct trace_writer *w, int sync);

/* ---- streaming reader ---- */

struct trace_chunk {
	struct trace_chunk_header hdr;
	uint64_t offset;          /* of the chunk header in the file */
	const unsigned char *data; /* raw (decompressed) payload, owned by the reader */
	size_t len;
};

struct trace_reader {
	FILE *f;
	char *path;
	struct trace_file_header hdr;
	uint64_t offset, file_size;
	unsigned char *stored, *raw;
	size_t stored_cap, raw_cap;
	void *dctx;
	/* what was skipped, for `info` and warnings */
	uint64_t chunks_read, chunks_bad, chunks_unknown, bytes_skipped;
	uint64_t bytes_read;      /* read from the file so far (holes and skipped chunks are not read) */
	int truncated;
	char first_problem[256];
	/*
	 * The chunk index, after trace_reader_index() found a valid one: then
	 * trace_reader_next() reads the chunks it lists, in order, and skips
	 * those for which want() (when set) returns 0, without reading them.
	 */
	struct trace_index_entry *index;
	size_t nr_index, index_pos;
	uint64_t index_offset;
	int (*want)(void *ctx, const struct trace_index_entry *e);
	void *want_ctx;
	uint64_t chunks_skipped;  /* by want() */
};

/*
 * trace_reader_open - open @path and check its header.  A file that is not
 * a report or needs a newer reader fails with a one-line error naming the
 * file.  Returns 0 or -1.
 */
int trace_reader_open(struct trace_reader *r, const char *path);
/* Probe only: does @path start with the report magic?  1, 0, or -1 (I/O error, quiet). */
int trace_is_report(const char *path);
/*
 * trace_reader_next - read the next whole, valid chunk into @c.
 * Damaged chunks are skipped (resynchronising on the next chunk header) and
 * counted; a truncated tail sets r->truncated.  Returns 1, 0 at end, -1 on
 * an I/O error.
 */
int trace_reader_next(struct trace_reader *r, struct trace_chunk *c);
/*
 * trace_reader_index - find and check the report's chunk index, before the
 * first trace_reader_next().  Checked: the tail, the index chunk's header
 * and payload checksums, its sizes, and every entry against the chunk
 * header at its offset (valid, same type and stream, each chunk ending where
 * the next begins, the last where the index begins), so a trusted index
 * lists every chunk of the file.  Returns 1 with r->index set, 0 when the
 * report has none, or a damaged one: that is ignored with a warning
 * (warning() unless @quiet) and the report is read by scanning.
 */
int trace_reader_index(struct trace_reader *r, int quiet);
void trace_reader_close(struct trace_reader *r);

/*
 * trace_reader_sizes - walk the chunk headers from the reader's position to
 * the end, seeking over every payload (nothing is read or decompressed but
 * 32 bytes a chunk), and add up the decompressed bytes of the event chunks
 * in *raw_bytes and their count in *chunks.  Stops at the first header that
 * is not valid (a damaged file is estimated from its valid prefix).  For
 * memory estimates before a load; the reader is left at its position.
 */
void trace_reader_sizes(struct trace_reader *r, uint64_t *raw_bytes, uint64_t *chunks);

/*
 * trace_entry_next - walk the entries of an EVENTS chunk.
 * @pos: in/out offset into @data.  Sets *type, *rec (the record, zero-padded
 * to the size this version knows, in @scratch when needed) and *size (the
 * on-disk record size).  Returns 1, 0 at the end, -1 on a malformed entry.
 */
int trace_entry_next(const unsigned char *data, size_t len, size_t *pos, unsigned *type,
		     const void **rec, size_t *size, void *scratch, size_t scratch_size);


/*
 * trace_merge - write the chunks of @n reports into one new report @out,
 * renumbering streams so that every input stream stays its own stream.
 * Damaged inputs contribute their whole chunks (with a warning); an input
 * that is not a report is an error.  @excl as for trace_writer_open().
 * The report is written to "@out.tmp-PID" and renamed to @out only when
 * whole, so a failure (a full disk, a file-size limit) leaves no file at
 * @out.  Returns 0, or -1 after error() (the temporary is removed).
 */
int trace_merge(const char *out, const char *const *inputs, size_t n, int excl);

/*
 * trace_builder - write a whole report from ordinary code (tests, the NVML
 * sampler, converters): strings are interned and defined on first use, and
 * entries are written in compressed chunks of about 1 MiB.
 */
struct trace_builder {
	struct trace_writer w;
	struct trace_buf buf;
	void *strings;            /* struct strtab */
	uint32_t stream;
	int failed;
};

int trace_builder_open(struct trace_builder *b, const char *path, int excl, uint32_t stream);
/* The stream-local id of @s, defining it in the report on first use. */
uint32_t trace_builder_str(struct trace_builder *b, const char *s);
void trace_builder_add(struct trace_builder *b, unsigned type, const void *rec, size_t size);
/* Write pending entries now (for a long-running writer); 0 or -1. */
int trace_builder_flush(struct trace_builder *b);
/* Flush, mark the stream ended (unless @crashed), close; 0 or -1. */
int trace_builder_close(struct trace_builder *b, int crashed);

#endif
