/*
 * monitor.h - live GPU monitoring on top of nvml.h: the dmon-like table,
 * CSV and JSON lines, alert rules, the Prometheus endpoint and health checks.
 * User-facing behaviour is documented in docs/monitor.md.
 */
#ifndef GS_MONITOR_H
#define GS_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "../nvml/nvml.h"
#include "../util/util.h"

/* ---- columns and rows ---- */

struct mon_column {
	const char *name;     /* column key for --columns ("pwr") */
	char group;           /* -s letter ('p') */
	const char *unit;     /* units line ("W") */
	unsigned metric;      /* enum nvml_metric */
	double scale;         /* shown value = metric value * scale */
	int width;
	int kind;             /* MON_COL_* */
};
enum { MON_COL_NUM = 0, MON_COL_PSTATE = 1, MON_COL_THROTTLE = 2 };

/* All columns, in display order. */
const struct mon_column *mon_columns(size_t *nr);
/* The default groups ("pucm" ...). */
#define MON_DEFAULT_GROUPS "pucmx"
#define MON_ALL_GROUPS "pucmetlxgn"

/*
 * mon_select - choose columns by -s groups (@groups, e.g. "pucvmet") or by a
 * comma-separated list of column names (@names); exactly one may be
 * non-NULL (both NULL = default groups).  Fills @out (indices into
 * mon_columns(), capacity @cap) and returns the count, or -1 after error().
 */
int mon_select(const char *groups, const char *names, unsigned *out, size_t cap);

enum mon_format { MON_TABLE, MON_CSV, MON_JSON };

/* Header lines for a table (two lines: names, units) or CSV (one line). */
void mon_format_header(struct strbuf *sb, enum mon_format f, const unsigned *cols, size_t n);
/* One row: GPU @gpu's sample @s, for the table, CSV or a JSON line. */
void mon_format_row(struct strbuf *sb, enum mon_format f, const unsigned *cols, size_t n,
		    const struct nvml_gpu_info *g, const struct nvml_sample *s);
/* "2026-11-30T03:04:05.123Z" for a CLOCK_REALTIME @ns. */
void mon_format_time(char *buf, size_t len, uint64_t ns);

/* ---- alerts ---- */

enum mon_op { MON_GT, MON_GE, MON_LT, MON_LE, MON_EQ, MON_NE };

struct mon_alert {
	char *expr;           /* as given */
	int throttle;         /* "throttle:NAME" rule */
	uint64_t mask;        /* throttle bits */
	unsigned metric;      /* metric compared */
	enum mon_op op;
	double threshold;     /* in the metric's unit, or percent of @of_metric */
	int percent;          /* threshold is a percentage of @of_metric */
	unsigned of_metric;
	/* state per GPU */
	unsigned ngpus;
	uint8_t *active;
	unsigned *streak;     /* consecutive samples disagreeing with active */
	uint64_t *since_ns;
};

/* The accepted form, quoted in error messages and --help. */
extern const char mon_alert_usage[];

/*
 * mon_alert_parse - parse "temp>85", "power>=650", "mem_used>95%",
 * "throttle:hw_slowdown" ... into @a for @ngpus GPUs.  0, or -1 after an
 * error() that quotes the expression and the accepted form.
 */
int mon_alert_parse(struct mon_alert *a, const char *expr, unsigned ngpus);
void mon_alert_release(struct mon_alert *a);

enum mon_alert_event { MON_ALERT_NONE = 0, MON_ALERT_START = 1, MON_ALERT_END = 2 };

/*
 * mon_alert_eval - feed GPU @gpu's sample; returns START when the condition
 * has held for @hold consecutive samples while inactive, END when it has
 * not held for @hold consecutive samples while active, else NONE.  An
 * unknown value neither starts nor ends an alert.  *value gets the value
 * compared (NAN when unknown).
 */
enum mon_alert_event mon_alert_eval(struct mon_alert *a, unsigned gpu, const struct nvml_sample *s,
				    unsigned hold, double *value);

/* ---- Prometheus ---- */

/*
 * mon_prom_render - the /metrics body (text format 0.0.4) for the latest
 * samples of every GPU: dcgm-exporter names and labels (gpu, UUID,
 * pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION), plus
 * gpuscope_* families for metrics DCGM has no name for.  @s[i] may be a
 * sample with nothing valid; invalid metrics are left out.
 */
void mon_prom_render(struct strbuf *sb, const struct nvml *n, const struct nvml_sample *s);

struct mon_prom;
/*
 * mon_prom_start - serve /metrics on "[ADDR:]PORT" (default address: all).
 * Port 0 picks a free port; *port gets the port bound.  NULL after error().
 */
struct mon_prom *mon_prom_start(const char *listen, unsigned *port);
/* Replace the body served (copied). */
void mon_prom_update(struct mon_prom *p, const char *body, size_t len);
void mon_prom_stop(struct mon_prom *p);

/* ---- health ---- */

enum mon_verdict { MON_PASS = 0, MON_WARN = 1, MON_FAIL = 2, MON_SKIP = 3 };
const char *mon_verdict_name(enum mon_verdict v);

struct mon_check {
	int gpu;              /* -1 = system */
	const char *name;     /* "pcie_link" */
	enum mon_verdict verdict;
	char reason[256];
};

struct mon_checks {
	struct mon_check *c;
	size_t nr, alloc;
};

/*
 * mon_health - run every check on the system facts and one sample per GPU
 * (@s[i], read with all tiers).  Thresholds are documented in
 * docs/monitor.md.  Returns the worst verdict (SKIP counts as PASS).
 */
enum mon_verdict mon_health(const struct nvml *n, const struct nvml_sample *s,
			    struct mon_checks *out);
void mon_checks_release(struct mon_checks *c);

#endif
