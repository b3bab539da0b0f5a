/*
 * test_monitor.c - columns, rows, alerts, Prometheus text and health
 * verdicts, on readings recorded on two H200s (tests/data/nvml/).
 */
#include "gstest.h"
#include "monitor/monitor.h"

#include <math.h>
#include <stdlib.h>

#define LOAD "nvml/h200.load.jsonl"
#define IDLE "nvml/h200.idle.jsonl"

static struct nvml *open_replay(const char *rel)
{
	char why[256] = "";
	struct nvml *n = nvml_open(gstest_data(rel), why, sizeof(why));
	if (!n)
		gstest_fail(__FILE__, __LINE__, "nvml_open(%s): %s", rel, why);
	return n;
}

static void test_select(void)
{
	unsigned cols[64];
	size_t nr;
	const struct mon_column *c = mon_columns(&nr);
	int n;

	n = mon_select("p", NULL, cols, 64);
	CHECK_EQ_I64(n, 4);
	CHECK_STR(c[cols[0]].name, "pwr");
	CHECK_STR(c[cols[2]].name, "mtemp");
	CHECK_STR(c[cols[3]].name, "fan");
	n = mon_select("cu", NULL, cols, 64); /* table order, not letter order */
	CHECK_EQ_I64(n, 6);
	CHECK_STR(c[cols[0]].name, "sm");
	CHECK_STR(c[cols[5]].name, "pclk");
	n = mon_select(NULL, "throttle,pwr", cols, 64);
	CHECK_EQ_I64(n, 2);
	CHECK_STR(c[cols[0]].name, "throttle");
	n = mon_select(MON_ALL_GROUPS, NULL, cols, 64);
	CHECK_EQ_I64(n, (int)nr);
	set_error_quiet(1);
	CHECK_EQ_I64(mon_select("pz", NULL, cols, 64), -1);
	CHECK_EQ_I64(mon_select(NULL, "pwr,bogus", cols, 64), -1);
	CHECK_EQ_I64(mon_select("p", "pwr", cols, 64), -1);
	set_error_quiet(0);
}

static void test_rows(void)
{
	struct nvml *n = open_replay(LOAD);
	struct nvml_sample s;
	struct strbuf sb = STRBUF_INIT;
	unsigned cols[64];
	int nc;

	if (!n)
		return;
	nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s);
	nc = mon_select(NULL, "pwr,gtemp,sm,fb,fan,smact,tensor,txpci,pstate,throttle", cols, 64);
	mon_format_header(&sb, MON_CSV, cols, (size_t)nc);
	mon_format_row(&sb, MON_CSV, cols, (size_t)nc, &n->gpu[0], &s);
	CHECK_STR(sb.buf, "time,gpu,pwr,gtemp,sm,fb,fan,smact,tensor,txpci,pstate,throttle\n"
			  "2026-11-30T02:46:59.371Z,0,371,53,99,25971,-,65,63,540,P0,sw_power_cap\n");
	strbuf_reset(&sb);
	mon_format_header(&sb, MON_TABLE, cols, (size_t)nc);
	mon_format_row(&sb, MON_TABLE, cols, (size_t)nc, &n->gpu[0], &s);
	CHECK_STR(sb.buf,
		  "#Time     gpu   pwr gtemp   sm      fb  fan smact tensor  txpci pstate throttle\n"
		  "#HH:MM:SS Idx     W     C    %     MiB    %     %      %   MB/s         reasons\n"
		  " 02:46:59   0   371    53   99   25971    -    65     63    540     P0 sw_power_cap\n");
	strbuf_reset(&sb);
	mon_format_row(&sb, MON_JSON, cols, (size_t)nc, &n->gpu[0], &s);
	CHECK_CONTAINS(sb.buf, "{\"time\":\"2026-11-30T02:46:59.371Z\",\"gpu\":0,"
			       "\"uuid\":\"GPU-eaa14d9f-4cb9-da04-5d7b-190ff1ed3519\",\"name\":\"NVIDIA H200\"");
	CHECK_CONTAINS(sb.buf, "\"power_w\":370.517,");
	CHECK_CONTAINS(sb.buf, "\"fan_pct\":null,");
	CHECK_CONTAINS(sb.buf, "\"throttle\":[\"sw_power_cap\"]");
	CHECK_CONTAINS(sb.buf, "\"processes\":[{\"pid\":2406,\"used_bytes\":27223130112}]}\n");
	strbuf_release(&sb);
	nvml_close(n);
}

static void test_alert_parse(void)
{
	struct mon_alert a;

	CHECK_EQ_I64(mon_alert_parse(&a, "temp>85", 2), 0);
	CHECK_EQ_U64(a.metric, NVML_M_TEMP);
	CHECK_EQ_U64(a.op, MON_GT);
	CHECK_NEAR(a.threshold, 85, 0);
	mon_alert_release(&a);
	CHECK_EQ_I64(mon_alert_parse(&a, " mem_used >= 95 % ", 2), 0);
	CHECK_EQ_U64(a.metric, NVML_M_MEM_USED);
	CHECK_EQ_U64(a.op, MON_GE);
	CHECK(a.percent);
	CHECK_EQ_U64(a.of_metric, NVML_M_MEM_TOTAL);
	mon_alert_release(&a);
	CHECK_EQ_I64(mon_alert_parse(&a, "mem_used_bytes>2GiB", 1), 0);
	CHECK_NEAR(a.threshold, 2147483648.0, 0);
	mon_alert_release(&a);
	CHECK_EQ_I64(mon_alert_parse(&a, "throttle:hw_slowdown,sw_power_cap", 1), 0);
	CHECK(a.throttle);
	CHECK_EQ_U64(a.mask, 0xc);
	mon_alert_release(&a);
	CHECK_EQ_I64(mon_alert_parse(&a, "throttle:any", 1), 0);
	CHECK_EQ_U64(a.mask, NVML_THROTTLE_SLOWDOWN_MASK);
	mon_alert_release(&a);
	CHECK_EQ_I64(mon_alert_parse(&a, "gpm_tensor_active<5", 1), 0);
	mon_alert_release(&a);
	set_error_quiet(1);
	CHECK_EQ_I64(mon_alert_parse(&a, "temp", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "temp>", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "tmp>85", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "temp>85%", 1), -1);   /* no maximum */
	CHECK_EQ_I64(mon_alert_parse(&a, "temp>85 C", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "throttle:", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "throttle:hot", 1), -1);
	CHECK_EQ_I64(mon_alert_parse(&a, "power=>600", 1), -1);
	set_error_quiet(0);
}

static struct nvml_sample mk(uint64_t t, unsigned m, double v)
{
	struct nvml_sample s;

	memset(&s, 0, sizeof(s));
	s.time_ns = t;
	s.v[m] = v;
	s.valid[m] = 1;
	return s;
}

static void test_alert_transitions(void)
{
	struct mon_alert a;
	struct nvml_sample s;
	double v;

	CHECK_EQ_I64(mon_alert_parse(&a, "temp>85", 2), 0);
	s = mk(1, NVML_M_TEMP, 80);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 1, &v), MON_ALERT_NONE);
	s = mk(2, NVML_M_TEMP, 86);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 1, &v), MON_ALERT_START);
	CHECK_NEAR(v, 86, 0);
	CHECK_EQ_I64(mon_alert_eval(&a, 1, &s, 1, &v), MON_ALERT_START); /* per GPU */
	s = mk(3, NVML_M_TEMP, 90);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 1, &v), MON_ALERT_NONE);  /* still on */
	s = mk(4, NVML_M_POWER, 90);                                     /* temp unknown */
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 1, &v), MON_ALERT_NONE);
	CHECK(isnan(v));
	s = mk(5, NVML_M_TEMP, 85);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 1, &v), MON_ALERT_END);
	CHECK_EQ_U64(a.since_ns[0], 2);
	mon_alert_release(&a);

	/* hold = 2: a single-sample spike neither starts nor ends an alert */
	CHECK_EQ_I64(mon_alert_parse(&a, "temp>85", 1), 0);
	s = mk(1, NVML_M_TEMP, 90);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(2, NVML_M_TEMP, 80);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(3, NVML_M_TEMP, 90);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(4, NVML_M_TEMP, 91);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_START);
	s = mk(5, NVML_M_TEMP, 80);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(6, NVML_M_TEMP, 88);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(7, NVML_M_TEMP, 80);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_NONE);
	s = mk(8, NVML_M_TEMP, 80);
	CHECK_EQ_I64(mon_alert_eval(&a, 0, &s, 2, &v), MON_ALERT_END);
	mon_alert_release(&a);
}

/* Alerts over the recorded idle -> load -> cool-down of GPU 0. */
static void test_alerts_on_recording(void)
{
	const char *files[] = { IDLE, LOAD, "nvml/h200.cool.jsonl" };
	struct mon_alert power, thr, mem;
	unsigned starts[3] = { 0 }, ends[3] = { 0 };
	uint64_t power_start = 0, power_end = 0;

	CHECK_EQ_I64(mon_alert_parse(&power, "power>600", 2), 0);
	CHECK_EQ_I64(mon_alert_parse(&thr, "throttle:sw_power_cap", 2), 0);
	CHECK_EQ_I64(mon_alert_parse(&mem, "mem_used>15%", 2), 0);
	for (size_t f = 0; f < 3; f++) {
		struct nvml *n = open_replay(files[f]);
		struct nvml_sample s;
		if (!n)
			return;
		while (nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s) == 0) {
			struct mon_alert *al[3] = { &power, &thr, &mem };
			for (int k = 0; k < 3; k++) {
				double v;
				enum mon_alert_event ev = mon_alert_eval(al[k], 0, &s, 1, &v);
				starts[k] += ev == MON_ALERT_START;
				ends[k] += ev == MON_ALERT_END;
				if (k == 0 && ev == MON_ALERT_START) {
					power_start = s.time_ns;
					CHECK_NEAR(v, 600.263, 1e-9);
				}
				if (k == 0 && ev == MON_ALERT_END) {
					power_end = s.time_ns;
					CHECK_NEAR(v, 273.221, 1e-9);
				}
			}
		}
		nvml_close(n);
	}
	for (int k = 0; k < 3; k++) {
		CHECK_EQ_U64(starts[k], 1);
		CHECK_EQ_U64(ends[k], 1);
	}
	CHECK_EQ_U64(power_start, 1796006819793839720ull);
	CHECK(power_end > power_start);
	mon_alert_release(&power);
	mon_alert_release(&thr);
	mon_alert_release(&mem);
}

static void test_prometheus_text(void)
{
	struct nvml *n = open_replay(LOAD);
	struct nvml_sample s[2];
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	size_t helps = 0;

	if (!n)
		return;
	nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s[0]);
	nvml_sample(n, 1, NVML_TIER_FAST | NVML_TIER_SLOW, &s[1]);
	mon_prom_render(&sb, n, s);
	CHECK_CONTAINS(sb.buf, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
			       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-eaa14d9f-4cb9-da04-5d7b-190ff1ed3519\","
			       "pci_bus_id=\"00000000:00:06.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\","
			       "hostname=\"vm\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 99\n");
	CHECK_CONTAINS(sb.buf, "DCGM_FI_DEV_FB_USED{gpu=\"0\",");
	CHECK_CONTAINS(sb.buf, "} 25971\n");             /* whole MiB, as DCGM */
	CHECK_CONTAINS(sb.buf, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n");
	CHECK_CONTAINS(sb.buf, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\"");
	CHECK_CONTAINS(sb.buf, "gpuscope_clocks_event_reason{gpu=\"0\"");
	CHECK_CONTAINS(sb.buf, ",reason=\"sw_power_cap\"} 1\n");
	CHECK_CONTAINS(sb.buf, ",pid=\"2406\"} 27223130112\n");
	CHECK(strstr(sb.buf, "DCGM_FI_DEV_FAN_SPEED") == NULL); /* unsupported: no family */
	CHECK(sb.buf[sb.len - 1] == '\n');
	/* one HELP per family, each line a comment or NAME{labels} VALUE */
	for (p = sb.buf; *p; p = strchr(p, '\n') + 1) {
		if (!strncmp(p, "# HELP DCGM_FI_DEV_GPU_UTIL ", 28))
			helps++;
		CHECK(p[0] == '#' || strstr(p, "} ") < strchr(p, '\n'));
	}
	CHECK_EQ_U64(helps, 1);
	strbuf_release(&sb);
	nvml_close(n);
}

static enum mon_verdict verdict(const struct mon_checks *c, int gpu, const char *name)
{
	for (size_t i = 0; i < c->nr; i++)
		if (c->c[i].gpu == gpu && !strcmp(c->c[i].name, name))
			return c->c[i].verdict;
	return (enum mon_verdict)-1;
}

static void test_health_recorded(void)
{
	struct nvml *n = open_replay(IDLE);
	struct nvml_sample s[2];
	struct mon_checks c = { 0 };

	if (!n)
		return;
	nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s[0]);
	nvml_sample(n, 1, NVML_TIER_FAST | NVML_TIER_SLOW, &s[1]);
	CHECK_EQ_I64(mon_health(n, s, &c), MON_PASS);
	CHECK_EQ_I64(verdict(&c, -1, "driver"), MON_PASS);
	CHECK_EQ_I64(verdict(&c, 0, "pcie_link"), MON_PASS);
	CHECK_EQ_I64(verdict(&c, 1, "nvlink"), MON_PASS);
	CHECK_EQ_I64(verdict(&c, 1, "remapped_rows"), MON_PASS);
	CHECK_EQ_U64(c.nr, 15);
	mon_checks_release(&c);
	nvml_close(n);
}

/* Each check's verdict when one real reading is changed to a faulty value. */
static void test_health_faults(void)
{
	static const struct {
		const char *check;
		unsigned metric;
		double value;
		enum mon_verdict want;
	} cases[] = {
		{ "pcie_link", NVML_M_PCIE_WIDTH, 8, MON_WARN },
		{ "pcie_link", NVML_M_PCIE_GEN, 4, MON_PASS },        /* idle (gpu_idle): power saving */
		{ "throttle", NVML_M_THROTTLE, 0x8, MON_FAIL },
		{ "throttle", NVML_M_THROTTLE, 0x4, MON_WARN },
		{ "throttle", NVML_M_THROTTLE, 0x1, MON_PASS },
		{ "temperature", NVML_M_TEMP, 89, MON_FAIL },
		{ "temperature", NVML_M_TEMP, 85, MON_WARN },
		{ "ecc", NVML_M_ECC_DBE_VOL, 1, MON_FAIL },
		{ "ecc", NVML_M_ECC_DBE_AGG, 2, MON_WARN },
		{ "ecc", NVML_M_ECC_SBE_VOL, 7, MON_PASS },
		{ "remapped_rows", NVML_M_REMAP_PENDING, 1, MON_WARN },
		{ "remapped_rows", NVML_M_REMAP_FAILED, 1, MON_FAIL },
		{ "persistence", NVML_M_PERSISTENCE, 0, MON_WARN },
		{ "nvlink", NVML_M_NVLINK_UP, 17, MON_FAIL },
	};
	struct nvml *n = open_replay(IDLE);
	struct nvml_sample base[2];

	if (!n)
		return;
	nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &base[0]);
	nvml_sample(n, 1, NVML_TIER_FAST | NVML_TIER_SLOW, &base[1]);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct nvml_sample s[2];
		struct mon_checks c = { 0 };
		enum mon_verdict worst, want = cases[i].want;
		memcpy(s, base, sizeof(s));
		s[1].v[cases[i].metric] = cases[i].value;
		worst = mon_health(n, s, &c);
		if (verdict(&c, 1, cases[i].check) != want)
			gstest_fail(__FILE__, __LINE__, "case %zu %s: %s, expected %s", i, cases[i].check,
				    mon_verdict_name(verdict(&c, 1, cases[i].check)), mon_verdict_name(want));
		CHECK_EQ_I64(worst, want);
		CHECK_EQ_I64(verdict(&c, 0, cases[i].check), MON_PASS); /* the other GPU */
		mon_checks_release(&c);
	}
	{
		/* a driver too old for CUDA 13 */
		struct mon_checks c = { 0 };
		n->sys.cuda_version = 12080;
		CHECK_EQ_I64(mon_health(n, base, &c), MON_WARN);
		CHECK_EQ_I64(verdict(&c, -1, "driver"), MON_WARN);
		CHECK_CONTAINS(c.c[0].reason, "CUDA 12.8");
		mon_checks_release(&c);
	}
	nvml_close(n);
}

static const struct gstest tests[] = {
	GSTEST(test_select),
	GSTEST(test_rows),
	GSTEST(test_alert_parse),
	GSTEST(test_alert_transitions),
	GSTEST(test_alerts_on_recording),
	GSTEST(test_prometheus_text),
	GSTEST(test_health_recorded),
	GSTEST(test_health_faults),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
