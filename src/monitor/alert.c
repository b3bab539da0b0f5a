/*
 * alert.c - alert rules: "METRIC OP VALUE[%]" and "throttle:REASON".
 *
 * A rule is evaluated per GPU on every sample.  It starts when its condition
 * held for `hold` consecutive samples and ends when it failed for `hold`
 * consecutive samples (hold = 1: on the first sample either way).  A sample
 * where the value is unknown changes nothing.
 */
#include "monitor.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char mon_alert_usage[] =
	"METRIC OP VALUE[%|KiB|MiB|GiB] with OP one of > >= < <= == != "
	"(temp>85, power>650, mem_used>95%) or throttle:REASON[,REASON] "
	"(throttle:hw_slowdown, throttle:any)";

/* Short names users type, and what a percentage is a percentage of. */
static const struct {
	const char *alias;
	unsigned metric;
	int of;               /* metric for VALUE%, -1 when the metric is a percentage already */
} aliases[] = {
	{ "temp", NVML_M_TEMP, -1 },
	{ "mem_temp", NVML_M_MEM_TEMP, -1 },
	{ "power", NVML_M_POWER, NVML_M_POWER_LIMIT },
	{ "mem_used", NVML_M_MEM_USED, NVML_M_MEM_TOTAL },
	{ "mem_free", NVML_M_MEM_FREE, NVML_M_MEM_TOTAL },
	{ "util", NVML_M_GPU_UTIL, -1 },
	{ "sm", NVML_M_GPU_UTIL, -1 },
	{ "sm_clock", NVML_M_SM_CLOCK, NVML_M_SM_CLOCK_MAX },
	{ "mem_clock", NVML_M_MEM_CLOCK, NVML_M_MEM_CLOCK_MAX },
	{ "fan", NVML_M_FAN, -1 },
	{ "pcie_gen", NVML_M_PCIE_GEN, NVML_M_PCIE_GEN_MAX },
	{ "pcie_width", NVML_M_PCIE_WIDTH, NVML_M_PCIE_WIDTH_MAX },
	{ "ecc_sbe", NVML_M_ECC_SBE_VOL, -1 },
	{ "ecc_dbe", NVML_M_ECC_DBE_VOL, -1 },
	{ "sm_active", NVML_M_GPM_SM, -1 },
	{ "tensor", NVML_M_GPM_TENSOR, -1 },
	{ "dram", NVML_M_GPM_DRAM, -1 },
};

static int bad(const char *expr, const char *why)
{
	return error("bad alert '%s': %s; accepted: %s", expr, why, mon_alert_usage);
}

static void alloc_state(struct mon_alert *a, unsigned ngpus)
{
	a->ngpus = ngpus;
	a->active = xcalloc(ngpus ? ngpus : 1, sizeof(*a->active));
	a->streak = xcalloc(ngpus ? ngpus : 1, sizeof(*a->streak));
	a->since_ns = xcalloc(ngpus ? ngpus : 1, sizeof(*a->since_ns));
}

int mon_alert_parse(struct mon_alert *a, const char *expr, unsigned ngpus)
{
	char name[64];
	const char *p = expr, *q;
	size_t len;
	int metric = -1, of = -1;
	char *end;

	memset(a, 0, sizeof(*a));
	while (isspace((unsigned char)*p))
		p++;
	if (!strncmp(p, "throttle:", 9)) {
		p += 9;
		if (!*p)
			return bad(expr, "no throttle reason");
		while (*p) {
			char reason[64];
			uint64_t bit;
			len = strcspn(p, ",");
			if (len == 0 || len >= sizeof(reason))
				return bad(expr, "empty or long throttle reason");
			memcpy(reason, p, len);
			reason[len] = '\0';
			if (!strcmp(reason, "any"))
				bit = NVML_THROTTLE_SLOWDOWN_MASK;
			else if (!(bit = nvml_throttle_by_name(reason))) {
				struct strbuf names = STRBUF_INIT;
				int ret;
				for (unsigned b = 0; nvml_throttle_name(b); b++)
					strbuf_addf(&names, "%s ", nvml_throttle_name(b));
				strbuf_addstr(&names, "any");
				ret = error("bad alert '%s': unknown throttle reason '%s' (reasons: %s); "
					    "accepted: %s", expr, reason, names.buf, mon_alert_usage);
				strbuf_release(&names);
				return ret;
			}
			a->mask |= bit;
			p += len;
			if (*p == ',')
				p++;
		}
		a->throttle = 1;
		a->metric = NVML_M_THROTTLE;
		a->expr = xstrdup(expr);
		alloc_state(a, ngpus);
		return 0;
	}
	for (q = p; isalnum((unsigned char)*q) || *q == '_'; q++)
		;
	len = (size_t)(q - p);
	if (len == 0 || len >= sizeof(name))
		return bad(expr, "no metric name");
	memcpy(name, p, len);
	name[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(aliases[i].alias, name)) {
			metric = (int)aliases[i].metric;
			of = aliases[i].of;
		}
	if (metric < 0 && (metric = nvml_metric_by_name(name)) >= 0) {
		for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
			if (aliases[i].metric == (unsigned)metric)
				of = aliases[i].of;
	}
	if (metric < 0) {
		char msg[128];
		snprintf(msg, sizeof(msg), "unknown metric '%s'", name);
		return bad(expr, msg);
	}
	while (isspace((unsigned char)*q))
		q++;
	if (q[0] == '>' && q[1] == '=') a->op = MON_GE, q += 2;
	else if (q[0] == '<' && q[1] == '=') a->op = MON_LE, q += 2;
	else if (q[0] == '=' && q[1] == '=') a->op = MON_EQ, q += 2;
	else if (q[0] == '!' && q[1] == '=') a->op = MON_NE, q += 2;
	else if (q[0] == '>') a->op = MON_GT, q += 1;
	else if (q[0] == '<') a->op = MON_LT, q += 1;
	else
		return bad(expr, "no comparison operator");
	while (isspace((unsigned char)*q))
		q++;
	a->threshold = strtod(q, &end);
	if (end == q || !isfinite(a->threshold))
		return bad(expr, "no number after the operator");
	q = end;
	while (isspace((unsigned char)*q))
		q++;
	if (*q == '%') {
		if (of < 0 && strcmp(nvml_metric_info((unsigned)metric)->unit, "%"))
			return bad(expr, "this metric has no maximum to take a percentage of");
		if (of >= 0) {
			a->percent = 1;
			a->of_metric = (unsigned)of;
		}
		q++;
	} else if (*q) {
		static const struct { const char *unit; double mult; } units[] = {
			{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
			{ "TiB", 1099511627776.0 },
		};
		size_t i;
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!strncmp(q, units[i].unit, 3))
				break;
		if (i == ARRAY_SIZE(units) || strcmp(nvml_metric_info((unsigned)metric)->unit, "bytes"))
			return bad(expr, "unexpected text after the number");
		a->threshold *= units[i].mult;
		q += 3;
	}
	while (isspace((unsigned char)*q))
		q++;
	if (*q)
		return bad(expr, "unexpected text at the end");
	a->metric = (unsigned)metric;
	a->expr = xstrdup(expr);
	alloc_state(a, ngpus);
	return 0;
}

void mon_alert_release(struct mon_alert *a)
{
	free(a->expr);
	free(a->active);
	free(a->streak);
	free(a->since_ns);
	memset(a, 0, sizeof(*a));
}

static int compare(enum mon_op op, double v, double t)
{
	switch (op) {
	case MON_GT: return v > t;
	case MON_GE: return v >= t;
	case MON_LT: return v < t;
	case MON_LE: return v <= t;
	case MON_EQ: return v == t;
	case MON_NE: return v != t;
	}
	return 0;
}

enum mon_alert_event mon_alert_eval(struct mon_alert *a, unsigned gpu, const struct nvml_sample *s,
				    unsigned hold, double *value)
{
	int cond;

	*value = NAN;
	if (gpu >= a->ngpus || !s->valid[a->metric])
		return MON_ALERT_NONE;
	if (a->throttle) {
		uint64_t hit = (uint64_t)s->v[a->metric] & a->mask;
		*value = (double)hit;
		cond = hit != 0;
	} else if (a->percent) {
		if (!s->valid[a->of_metric] || s->v[a->of_metric] <= 0)
			return MON_ALERT_NONE;
		*value = 100.0 * s->v[a->metric] / s->v[a->of_metric];
		cond = compare(a->op, *value, a->threshold);
	} else {
		*value = s->v[a->metric];
		cond = compare(a->op, *value, a->threshold);
	}
	if (hold == 0)
		hold = 1;
	if (cond == a->active[gpu]) {
		a->streak[gpu] = 0;
		return MON_ALERT_NONE;
	}
	if (++a->streak[gpu] < hold)
		return MON_ALERT_NONE;
	a->streak[gpu] = 0;
	a->active[gpu] = (uint8_t)cond;
	if (cond) {
		a->since_ns[gpu] = s->time_ns;
		return MON_ALERT_START;
	}
	return MON_ALERT_END;
}
