/*
 * format.c - the monitor's columns and its table, CSV and JSON-lines rows.
 * Column names and groups follow `nvidia-smi dmon` where it has them.
 */
#include "monitor.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define MIB (1.0 / (1024.0 * 1024.0))
#define MB (1e-6)

static const struct mon_column columns[] = {
	{ "pwr", 'p', "W", NVML_M_POWER, 1, 5, MON_COL_NUM },
	{ "gtemp", 'p', "C", NVML_M_TEMP, 1, 5, MON_COL_NUM },
	{ "mtemp", 'p', "C", NVML_M_MEM_TEMP, 1, 5, MON_COL_NUM },
	{ "fan", 'p', "%", NVML_M_FAN, 1, 4, MON_COL_NUM },
	{ "sm", 'u', "%", NVML_M_GPU_UTIL, 1, 4, MON_COL_NUM },
	{ "mem", 'u', "%", NVML_M_MEM_UTIL, 1, 4, MON_COL_NUM },
	{ "enc", 'u', "%", NVML_M_ENC_UTIL, 1, 4, MON_COL_NUM },
	{ "dec", 'u', "%", NVML_M_DEC_UTIL, 1, 4, MON_COL_NUM },
	{ "mclk", 'c', "MHz", NVML_M_MEM_CLOCK, 1, 5, MON_COL_NUM },
	{ "pclk", 'c', "MHz", NVML_M_SM_CLOCK, 1, 5, MON_COL_NUM },
	{ "fb", 'm', "MiB", NVML_M_MEM_USED, MIB, 7, MON_COL_NUM },
	{ "fbtot", 'm', "MiB", NVML_M_MEM_TOTAL, MIB, 7, MON_COL_NUM },
	{ "sbecc", 'e', "errs", NVML_M_ECC_SBE_VOL, 1, 5, MON_COL_NUM },
	{ "dbecc", 'e', "errs", NVML_M_ECC_DBE_VOL, 1, 5, MON_COL_NUM },
	{ "pci", 'e', "errs", NVML_M_PCIE_REPLAY, 1, 5, MON_COL_NUM },
	{ "rxpci", 't', "MB/s", NVML_M_PCIE_RX, MB, 6, MON_COL_NUM },
	{ "txpci", 't', "MB/s", NVML_M_PCIE_TX, MB, 6, MON_COL_NUM },
	{ "lgen", 'l', "gen", NVML_M_PCIE_GEN, 1, 4, MON_COL_NUM },
	{ "mxgen", 'l', "gen", NVML_M_PCIE_GEN_MAX, 1, 5, MON_COL_NUM },
	{ "lwid", 'l', "x", NVML_M_PCIE_WIDTH, 1, 4, MON_COL_NUM },
	{ "mxwid", 'l', "x", NVML_M_PCIE_WIDTH_MAX, 1, 5, MON_COL_NUM },
	{ "smact", 'g', "%", NVML_M_GPM_SM, 1, 5, MON_COL_NUM },
	{ "smocc", 'g', "%", NVML_M_GPM_OCC, 1, 5, MON_COL_NUM },
	{ "tensor", 'g', "%", NVML_M_GPM_TENSOR, 1, 6, MON_COL_NUM },
	{ "dram", 'g', "%", NVML_M_GPM_DRAM, 1, 5, MON_COL_NUM },
	{ "fp64", 'g', "%", NVML_M_GPM_FP64, 1, 5, MON_COL_NUM },
	{ "fp32", 'g', "%", NVML_M_GPM_FP32, 1, 5, MON_COL_NUM },
	{ "fp16", 'g', "%", NVML_M_GPM_FP16, 1, 5, MON_COL_NUM },
	{ "nvlup", 'n', "links", NVML_M_NVLINK_UP, 1, 5, MON_COL_NUM },
	{ "nvltx", 'n', "MB/s", NVML_M_NVLINK_TX, MB, 6, MON_COL_NUM },
	{ "nvlrx", 'n', "MB/s", NVML_M_NVLINK_RX, MB, 6, MON_COL_NUM },
	{ "pstate", 'x', "", NVML_M_PSTATE, 1, 6, MON_COL_PSTATE },
	{ "plim", 'x', "W", NVML_M_POWER_LIMIT, 1, 5, MON_COL_NUM },
	{ "throttle", 'x', "reasons", NVML_M_THROTTLE, 1, 8, MON_COL_THROTTLE },
};

const struct mon_column *mon_columns(size_t *nr)
{
	*nr = ARRAY_SIZE(columns);
	return columns;
}

int mon_select(const char *groups, const char *names, unsigned *out, size_t cap)
{
	size_t n = 0;

	if (groups && names)
		return error("choose columns with either -s or --columns, not both");
	if (!groups && !names)
		groups = MON_DEFAULT_GROUPS;
	if (groups) {
		for (const char *g = groups; *g; g++)
			if (!strchr(MON_ALL_GROUPS, *g))
				return error("unknown column group '%c' in '%s': groups are %s",
					     *g, groups, MON_ALL_GROUPS);
		/* table order, whatever the order of the letters */
		for (size_t i = 0; i < ARRAY_SIZE(columns) && n < cap; i++)
			if (strchr(groups, columns[i].group))
				out[n++] = (unsigned)i;
		return (int)n;
	}
	while (*names) {
		size_t len = strcspn(names, ",");
		size_t i;
		for (i = 0; i < ARRAY_SIZE(columns); i++)
			if (strlen(columns[i].name) == len && !strncmp(columns[i].name, names, len))
				break;
		if (i == ARRAY_SIZE(columns) || len == 0) {
			struct strbuf all = STRBUF_INIT;
			for (size_t k = 0; k < ARRAY_SIZE(columns); k++)
				strbuf_addf(&all, "%s%s", k ? "," : "", columns[k].name);
			error("unknown column '%.*s': columns are %s", (int)len, names, all.buf);
			strbuf_release(&all);
			return -1;
		}
		if (n < cap)
			out[n++] = (unsigned)i;
		names += len;
		if (*names == ',')
			names++;
	}
	if (!n)
		return error("no columns chosen");
	return (int)n;
}

void mon_format_time(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ns % 1000000000ull / 1000000ull));
}

static void cell(char *buf, size_t len, const struct mon_column *c, const struct nvml_sample *s,
		 const char *throttle_sep)
{
	double v = s->v[c->metric];

	if (!s->valid[c->metric]) {
		snprintf(buf, len, "-");
		return;
	}
	switch (c->kind) {
	case MON_COL_PSTATE:
		snprintf(buf, len, "P%d", (int)v);
		break;
	case MON_COL_THROTTLE:
		nvml_throttle_format((uint64_t)v, throttle_sep, buf, len);
		break;
	default:
		snprintf(buf, len, "%.0f", round(v * c->scale));
		break;
	}
}

void mon_format_header(struct strbuf *sb, enum mon_format f, const unsigned *cols, size_t n)
{
	if (f == MON_JSON)
		return;
	if (f == MON_CSV) {
		strbuf_addstr(sb, "time,gpu");
		for (size_t i = 0; i < n; i++)
			strbuf_addf(sb, ",%s", columns[cols[i]].name);
		strbuf_addch(sb, '\n');
		return;
	}
	strbuf_addf(sb, "#%-8s %3s", "Time", "gpu");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, " %*s", columns[cols[i]].width, columns[cols[i]].name);
	strbuf_addf(sb, "\n#%-8s %3s", "HH:MM:SS", "Idx");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, " %*s", columns[cols[i]].width, columns[cols[i]].unit);
	strbuf_addch(sb, '\n');
}

static void json_number(struct strbuf *sb, double v)
{
	if (!isfinite(v))
		strbuf_addstr(sb, "null");
	else if (v == floor(v) && fabs(v) < 9.0e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.10g", v);
}

void mon_format_row(struct strbuf *sb, enum mon_format f, const unsigned *cols, size_t n,
		    const struct nvml_gpu_info *g, const struct nvml_sample *s)
{
	char buf[256], ts[40];

	mon_format_time(ts, sizeof(ts), s->time_ns);
	if (f == MON_CSV) {
		strbuf_addf(sb, "%s,%u", ts, g->index);
		for (size_t i = 0; i < n; i++) {
			cell(buf, sizeof(buf), &columns[cols[i]], s, "|");
			strbuf_addf(sb, ",%s", buf);
		}
		strbuf_addch(sb, '\n');
		return;
	}
	if (f == MON_TABLE) {
		/* HH:MM:SS of the ISO time: UTC, as CSV and JSON */
		strbuf_addf(sb, " %.8s %3u", ts + 11, g->index);
		for (size_t i = 0; i < n; i++) {
			cell(buf, sizeof(buf), &columns[cols[i]], s, ",");
			strbuf_addf(sb, " %*s", columns[cols[i]].width, buf);
		}
		strbuf_addch(sb, '\n');
		return;
	}
	/* JSON lines: every metric, null when unknown */
	strbuf_addf(sb, "{\"time\":\"%s\",\"gpu\":%u,\"uuid\":\"", ts, g->index);
	strbuf_add_json_str(sb, g->uuid);
	strbuf_addstr(sb, "\",\"name\":\"");
	strbuf_add_json_str(sb, g->name);
	strbuf_addstr(sb, "\",\"metrics\":{");
	for (unsigned m = 0; m < NVML_M__COUNT; m++) {
		strbuf_addf(sb, "%s\"%s\":", m ? "," : "", nvml_metric_info(m)->name);
		if (s->valid[m])
			json_number(sb, s->v[m]);
		else
			strbuf_addstr(sb, "null");
	}
	strbuf_addstr(sb, "},\"throttle\":");
	if (s->valid[NVML_M_THROTTLE]) {
		uint64_t mask = (uint64_t)s->v[NVML_M_THROTTLE];
		int first = 1;
		strbuf_addch(sb, '[');
		for (unsigned b = 0; b < 64; b++) {
			if (!(mask & (1ull << b)))
				continue;
			if (nvml_throttle_name(b))
				strbuf_addf(sb, "%s\"%s\"", first ? "" : ",", nvml_throttle_name(b));
			else
				strbuf_addf(sb, "%s\"bit%u\"", first ? "" : ",", b);
			first = 0;
		}
		strbuf_addch(sb, ']');
	} else {
		strbuf_addstr(sb, "null");
	}
	strbuf_addstr(sb, ",\"processes\":");
	if (s->valid[NVML_M_PROCESSES]) {
		strbuf_addch(sb, '[');
		for (unsigned k = 0; k < s->nproc; k++) {
			strbuf_addf(sb, "%s{\"pid\":%u,\"used_bytes\":", k ? "," : "", s->proc[k].pid);
			if (s->proc[k].used_bytes == UINT64_MAX)
				strbuf_addstr(sb, "null}");
			else
				strbuf_addf(sb, "%llu}", (unsigned long long)s->proc[k].used_bytes);
		}
		strbuf_addch(sb, ']');
	} else {
		strbuf_addstr(sb, "null");
	}
	strbuf_addstr(sb, "}\n");
}
