/*
 * env.h - the names of the environment variables that `gpuscope profile`
 * sets and the injected collector reads: one list, shared by src/cli and
 * src/collect, so that the two sides cannot spell a name differently.
 *
 * Every setting is read once, by cl_init() (config.c) into cl_config,
 * before the program's own code runs; docs/collector.md says what each one
 * means.  Variables that only a developer sets (tuning, tests) are marked so.
 */
#ifndef GS_COLLECT_ENV_H
#define GS_COLLECT_ENV_H

/* set by profile */
#define GS_ENV_DIR              "GPUSCOPE_DIR"             /* directory of the part files */
#define GS_ENV_TRACE            "GPUSCOPE_TRACE"           /* comma list: nvtx,osrt,cuda (or none) */
#define GS_ENV_OSRT_THRESHOLD   "GPUSCOPE_OSRT_THRESHOLD_NS"
#define GS_ENV_CPU_SAMPLE_HZ    "GPUSCOPE_CPU_SAMPLE_HZ"
#define GS_ENV_CAPTURE          "GPUSCOPE_CAPTURE"         /* nvtx:NAME[@DOMAIN] or cudaProfilerApi */
#define GS_ENV_CAPTURE_END      "GPUSCOPE_CAPTURE_END"     /* stop or repeat */
#define GS_ENV_DELAY            "GPUSCOPE_DELAY_NS"
#define GS_ENV_DURATION         "GPUSCOPE_DURATION_NS"
#define GS_ENV_START            "GPUSCOPE_START_NS"        /* profile's clock when the program started */
#define GS_ENV_CUDA_ALL_APIS    "GPUSCOPE_CUDA_ALL_APIS"
#define GS_ENV_KERNEL_METRICS   "GPUSCOPE_KERNEL_METRICS"
#define GS_ENV_KERNEL_FILTER    "GPUSCOPE_KERNEL_FILTER"
#define GS_ENV_KERNEL_COUNT     "GPUSCOPE_KERNEL_COUNT"
#define GS_ENV_WATCH_FD         "GPUSCOPE_WATCH_FD"        /* read end of profile's liveness pipe */
#define GS_ENV_PM_SAMPLING      "GPUSCOPE_PM_SAMPLING"     /* PM sampling interval, microseconds (pmsample.c) */
#define GS_ENV_TORCH_MEM        "GPUSCOPE_TORCH_MEM"       /* 0: no Python allocator hook (docs/memory.md) */
#define GS_ENV_TORCH_HISTORY    "GPUSCOPE_TORCH_MEMORY_HISTORY" /* 1: record the allocation history */
#define GS_ENV_ON_DEMAND        "GPUSCOPE_ON_DEMAND"       /* 1: idle until a capture (docs/always-on.md) */
#define GS_ENV_RING_MS          "GPUSCOPE_RING_MS"         /* flight recorder: milliseconds kept (default 30000) */
#define GS_ENV_RING_MB          "GPUSCOPE_RING_MB"         /* flight recorder: MiB per process (default 64) */
#define GS_ENV_TRIGGER          "GPUSCOPE_TRIGGER"         /* step_time>1.3x median (trigger.h) */
#define GS_ENV_STEP_RANGE       "GPUSCOPE_STEP_RANGE"      /* NVTX name prefix of a step (ProfilerStep) */
#define GS_ENV_REPORT_NAME      "GPUSCOPE_REPORT_NAME"     /* the report's name, for `gpuscope capture NAME` */
#define GS_ENV_CTL_DIR          "GPUSCOPE_CTL_DIR"         /* trigger sockets' directory (tests) */

/* files that profile and the collector share in GS_ENV_DIR (besides the parts) */
#define GS_CAPTURE_EDGES_FILE   "capture-edges"            /* on demand: "start|stop PID ID NS" lines (capture.c) */

/* read by profile only */
#define GS_ENV_COLLECTOR        "GPUSCOPE_COLLECTOR"       /* path of libgpuscope-collect.so */

/* tuning and tests (set by hand) */
#define GS_ENV_BUFFER_KB        "GPUSCOPE_BUFFER_KB"
#define GS_ENV_MAX_BUFFER_MB    "GPUSCOPE_MAX_BUFFER_MB"
#define GS_ENV_FLUSH_MS         "GPUSCOPE_FLUSH_MS"
#define GS_ENV_ZSTD_LEVEL       "GPUSCOPE_ZSTD_LEVEL"
#define GS_ENV_CLOCK            "GPUSCOPE_CLOCK"           /* monotonic: no TSC clock */
#define GS_ENV_KEEP_LAYOUT      "GPUSCOPE_KEEP_LAYOUT"     /* 0: start-up mappings beside the program's (layout.c) */
#define GS_ENV_THREAD_CPU       "GPUSCOPE_THREAD_CPU"
#define GS_ENV_KERNEL_MAX       "GPUSCOPE_KERNEL_MAX"
#define GS_ENV_CUPTI_PATH       "GPUSCOPE_CUPTI_PATH"
#define GS_ENV_CUPTI_API_MODE   "GPUSCOPE_CUPTI_API_MODE"
#define GS_ENV_CUPTI_KINDS      "GPUSCOPE_CUPTI_KINDS"
#define GS_ENV_CUPTI_SUBSCRIBE  "GPUSCOPE_CUPTI_SUBSCRIBE"
#define GS_ENV_CUPTI_CLOCK      "GPUSCOPE_CUPTI_CLOCK"
#define GS_ENV_CUPTI_DRIVER     "GPUSCOPE_CUPTI_DRIVER"
#define GS_ENV_CUPTI_POOL       "GPUSCOPE_CUPTI_POOL"
#define GS_ENV_CUPTI_BUFFER_KB  "GPUSCOPE_CUPTI_BUFFER_KB"
#define GS_ENV_CUPTI_FLUSH_MS   "GPUSCOPE_CUPTI_FLUSH_MS"

#endif
