/*
 * test_nvml.c - the NVML decoder, replay backend, recorder and profile
 * sampler, against readings recorded on two H200s (tests/data/nvml/,
 * recorded by `gpuscope monitor --record` on the GPU machine).
 */
#include "gstest.h"
#include "nvml/nvml.h"
#include "nvml/sampler.h"
#include "model/model.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define IDLE "nvml/h200.idle.jsonl"
#define LOAD "nvml/h200.load.jsonl"

static struct nvml *open_replay(const char *rel)
{
	char why[256] = "";
	struct nvml *n = nvml_open(gstest_data(rel), why, sizeof(why));
	if (!n)
		gstest_fail(__FILE__, __LINE__, "nvml_open(%s): %s", rel, why);
	return n;
}

static void test_static_facts(void)
{
	struct nvml *n = open_replay(LOAD);
	const struct nvml_gpu_info *g;

	if (!n)
		return;
	CHECK_EQ_U64(n->sys.ngpus, 2);
	CHECK_STR(n->sys.driver_version, "580.159.04");
	CHECK_EQ_U64(n->sys.cuda_version, 13000);
	CHECK_STR(n->sys.hostname, "vm");
	g = &n->gpu[0];
	CHECK_STR(g->name, "NVIDIA H200");
	CHECK_STR(g->uuid, "GPU-eaa14d9f-4cb9-da04-5d7b-190ff1ed3519");
	CHECK_STR(g->bus_id, "00000000:00:06.0");
	CHECK_EQ_U64(g->pci_device, 6);
	CHECK_EQ_I64(g->cc_major, 9);
	CHECK_EQ_I64(g->cc_minor, 0);
	CHECK_EQ_I64(g->bus_width, 6016);
	CHECK_EQ_I64(g->ecc_enabled, 1);
	CHECK_EQ_I64(g->mig_enabled, 0);
	CHECK_EQ_I64(g->gpm_supported, 1);
	CHECK(g->statics.valid[NVML_M_SM_CLOCK_MAX]);
	CHECK_NEAR(g->statics.v[NVML_M_SM_CLOCK_MAX], 1980, 0);
	CHECK_NEAR(g->statics.v[NVML_M_MEM_CLOCK_MAX], 3201, 0);
	CHECK_NEAR(g->statics.v[NVML_M_PCIE_GEN_MAX], 5, 0);
	CHECK_NEAR(g->statics.v[NVML_M_PCIE_WIDTH_MAX], 16, 0);
	CHECK_NEAR(g->statics.v[NVML_M_TEMP_SLOWDOWN], 89, 0);
	CHECK_NEAR(g->statics.v[NVML_M_TEMP_SHUTDOWN], 95, 0);
	CHECK_NEAR(g->statics.v[NVML_M_NVLINK_LINKS], 18, 0);
	CHECK_STR(n->gpu[1].uuid, "GPU-d4097e82-46da-1027-a96b-7040573d50ed");
	nvml_close(n);
}

/* The first tick of GPU 0 under load (a bf16 matmul loop started 0.5 s before). */
static void test_sample_under_load(void)
{
	struct nvml *n = open_replay(LOAD);
	struct nvml_sample s;

	if (!n)
		return;
	CHECK_EQ_I64(nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s), 0);
	CHECK_EQ_U64(s.time_ns, 1796006819371721963ull);
	CHECK_NEAR(s.v[NVML_M_GPU_UTIL], 99, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_UTIL], 20, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_USED], 27232370688.0, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_TOTAL], 150754820096.0, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_RESERVED], 644939776.0, 0);
	CHECK_NEAR(s.v[NVML_M_SM_CLOCK], 1605, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_CLOCK], 3201, 0);
	CHECK_NEAR(s.v[NVML_M_POWER], 370.517, 1e-9);
	CHECK_NEAR(s.v[NVML_M_ENERGY], 26788.638, 1e-6);
	CHECK_NEAR(s.v[NVML_M_TEMP], 53, 0);
	CHECK_NEAR(s.v[NVML_M_MEM_TEMP], 41, 0);
	CHECK_NEAR(s.v[NVML_M_PSTATE], 0, 0);
	CHECK(s.valid[NVML_M_PSTATE]);
	CHECK_NEAR(s.v[NVML_M_THROTTLE], 4, 0); /* sw_power_cap */
	CHECK_NEAR(s.v[NVML_M_GPM_GR], 69.8994132859042, 1e-9);
	CHECK_NEAR(s.v[NVML_M_GPM_SM], 64.60570740961678, 1e-9);
	CHECK_NEAR(s.v[NVML_M_GPM_OCC], 9.547436947449345, 1e-9);
	CHECK(s.v[NVML_M_GPM_TENSOR] > 50);   /* bf16 matmuls: tensor cores busy */
	CHECK_NEAR(s.v[NVML_M_PCIE_TX], 527755.0 * 1024, 0);
	CHECK_NEAR(s.v[NVML_M_PCIE_RX], 7550330.0 * 1024, 0);
	CHECK_NEAR(s.v[NVML_M_PCIE_GEN], 5, 0);
	CHECK_NEAR(s.v[NVML_M_PCIE_WIDTH], 16, 0);
	CHECK_NEAR(s.v[NVML_M_POWER_LIMIT], 700, 0);
	CHECK_NEAR(s.v[NVML_M_PERSISTENCE], 1, 0);
	CHECK_NEAR(s.v[NVML_M_NVLINK_UP], 18, 0);
	CHECK_NEAR(s.v[NVML_M_ECC_DBE_VOL], 0, 0);
	CHECK(s.valid[NVML_M_ECC_DBE_VOL]);
	CHECK_NEAR(s.v[NVML_M_PROCESSES], 1, 0);
	CHECK_EQ_U64(s.nproc, 1);
	CHECK_EQ_U64(s.proc[0].pid, 2406);
	CHECK_EQ_U64(s.proc[0].used_bytes, 27223130112ull);
	/* static metrics ride along in every sample */
	CHECK_NEAR(s.v[NVML_M_SM_CLOCK_MAX], 1980, 0);
	nvml_close(n);
}

/* Unsupported readings are invalid, never 0. */
static void test_unsupported_is_invalid(void)
{
	struct nvml *n = open_replay(IDLE);
	struct nvml_sample s;

	if (!n)
		return;
	CHECK_EQ_I64(nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s), 0);
	CHECK(!s.valid[NVML_M_FAN]);            /* H200: NOT_SUPPORTED (3) */
	CHECK(!s.valid[NVML_M_NVLINK_TX]);      /* a rate needs two readings */
	CHECK(s.valid[NVML_M_ENC_UTIL]);
	CHECK_NEAR(s.v[NVML_M_ENC_UTIL], 0, 0);
	CHECK_EQ_I64(nvml_sample(n, 0, NVML_TIER_FAST | NVML_TIER_SLOW, &s), 0);
	CHECK(s.valid[NVML_M_NVLINK_TX]);       /* second reading: now a rate */
	nvml_close(n);
}

/* Tiers not asked for stay invalid. */
static void test_tiers_filter(void)
{
	struct nvml *n = open_replay(IDLE);
	struct nvml_sample s;

	if (!n)
		return;
	CHECK_EQ_I64(nvml_sample(n, 0, NVML_TIER_FAST, &s), 0);
	CHECK(s.valid[NVML_M_POWER]);
	CHECK(!s.valid[NVML_M_PCIE_GEN]);
	CHECK(!s.valid[NVML_M_POWER_LIMIT]);
	CHECK(s.valid[NVML_M_PCIE_GEN_MAX]);    /* static */
	nvml_close(n);
}

static void test_replay_end_and_loop(void)
{
	struct nvml *n = open_replay(IDLE);
	struct nvml_sample s;
	uint64_t last = 0;
	unsigned ticks = 0;

	if (!n)
		return;
	while (nvml_sample(n, 1, NVML_TIER_FAST, &s) == 0)
		ticks++;
	CHECK_EQ_U64(ticks, 30);
	nvml_close(n);
	n = open_replay(IDLE);
	n->replay_loop = 1;
	for (unsigned i = 0; i < 75; i++) {
		CHECK_EQ_I64(nvml_sample(n, 1, NVML_TIER_FAST, &s), 0);
		CHECK(s.time_ns > last);
		CHECK(s.mono_ns > 0);
		last = s.time_ns;
	}
	nvml_close(n);
}

static void test_throttle_names(void)
{
	char buf[256];

	nvml_throttle_format(0, ",", buf, sizeof(buf));
	CHECK_STR(buf, "none");
	nvml_throttle_format(0x4, ",", buf, sizeof(buf));
	CHECK_STR(buf, "sw_power_cap");
	nvml_throttle_format(0x1 | 0x8 | 0x40 | 0x1000, "|", buf, sizeof(buf));
	CHECK_STR(buf, "gpu_idle|hw_slowdown|hw_thermal_slowdown|bit12");
	CHECK_EQ_U64(nvml_throttle_by_name("hw_power_brake_slowdown"), 0x80);
	CHECK_EQ_U64(nvml_throttle_by_name("nope"), 0);
}

static void test_metric_table(void)
{
	for (unsigned m = 0; m < NVML_M__COUNT; m++) {
		const struct nvml_metric_info *mi = nvml_metric_info(m);
		CHECK(mi->name && mi->help && mi->unit && mi->tier);
		CHECK_EQ_I64(nvml_metric_by_name(mi->name), m);
	}
	CHECK_EQ_I64(nvml_metric_by_name("gpm_tensor_active"), NVML_M_GPM_TENSOR);
	CHECK_EQ_I64(nvml_call_by_name("DeviceGetPowerUsage"), NVC_POWER);
	CHECK_EQ_I64(nvml_call_by_name("nvmlBogus"), -1);
}

static void test_fair_rates(void)
{
	/* 3 cheap calls (0.1 ms) and GPM (15 ms) wanted at 10 Hz, budget 8 ms/s */
	double cost[4] = { 1e-4, 1e-4, 1e-4, 15e-3 }, base[4] = { 10, 10, 10, 10 }, rate[4];

	nvml_fair_rates(cost, base, rate, 4, 0.008);
	CHECK_NEAR(rate[0], 10, 0);
	CHECK_NEAR(rate[1], 10, 0);
	CHECK_NEAR(rate[2], 10, 0);
	/* what is left (8 - 3 ms/s) goes to GPM: 5 ms/s / 15 ms = 1/3 Hz */
	CHECK_NEAR(rate[3], 0.005 / 15e-3, 1e-9);
	/* a budget that covers everything leaves every base rate */
	nvml_fair_rates(cost, base, rate, 4, 1.0);
	CHECK_NEAR(rate[3], 10, 0);
	/* two expensive calls split what is left equally in CPU */
	{
		double c2[3] = { 1e-3, 4e-3, 1e-4 }, b2[3] = { 10, 10, 1 }, r2[3];
		nvml_fair_rates(c2, b2, r2, 3, 0.01);
		/* 0.1 ms/s to the slow call, 9.9 ms/s split: 4.95 ms/s each */
		CHECK_NEAR(r2[2], 1, 0);
		CHECK_NEAR(r2[0], 4.95, 1e-9);
		CHECK_NEAR(r2[1], 0.00495 / 4e-3, 1e-9);
	}
}

/* The sampler's feedback on its NVML budget (whole thread held to 0.8%). */
static void test_steer_budget(void)
{
	/* the thread used twice its budget: the calls get half */
	CHECK_NEAR(nvml_steer_budget(0.004, 0.008, 0.016, 0.0002), 0.002, 1e-12);
	/* ten times over: still only halved per step */
	CHECK_NEAR(nvml_steer_budget(0.004, 0.008, 0.08, 0.0002), 0.002, 1e-12);
	/* under budget: raised by the ratio, at most doubled, never above the budget */
	CHECK_NEAR(nvml_steer_budget(0.004, 0.008, 0.0064, 0.0002), 0.005, 1e-12);
	CHECK_NEAR(nvml_steer_budget(0.001, 0.008, 0.001, 0.0002), 0.002, 1e-12);
	CHECK_NEAR(nvml_steer_budget(0.006, 0.008, 0.002, 0.0002), 0.008, 1e-12);
	/* nothing used yet: doubled */
	CHECK_NEAR(nvml_steer_budget(0.001, 0.008, 0, 0.0002), 0.002, 1e-12);
	/* the floor keeps the cheap groups running */
	CHECK_NEAR(nvml_steer_budget(0.0003, 0.008, 0.05, 0.0002), 0.0002, 1e-12);
	/* repeated: a thread stuck at 1.6x its budget drives the calls to the floor */
	{
		double b = 0.0048;
		for (int i = 0; i < 20; i++)
			b = nvml_steer_budget(b, 0.008, 0.0128, 0.0002);
		CHECK_NEAR(b, 0.0002, 1e-12);
	}
}

/* Recording a replay and replaying the recording gives the same samples. */
static void test_record_roundtrip(void)
{
	char path[512];
	struct nvml *a = open_replay(LOAD), *b;
	struct nvml_sample sa, sb;
	char why[256];

	if (!a)
		return;
	snprintf(path, sizeof(path), "%s/rec.jsonl", gstest_tmpdir());
	CHECK_EQ_I64(nvml_record(a, path), 0);
	for (unsigned i = 0; i < 10; i++)
		for (unsigned g = 0; g < 2; g++)
			nvml_sample(a, g, NVML_TIER_FAST | NVML_TIER_SLOW, &sa);
	CHECK_EQ_I64(nvml_record_stop(a), 0);
	nvml_close(a);
	a = open_replay(LOAD);
	b = nvml_open(path, why, sizeof(why));
	CHECK(b != NULL);
	if (!a || !b)
		return;
	CHECK_STR(b->gpu[1].name, a->gpu[1].name);
	for (unsigned i = 0; i < 10; i++)
		for (unsigned g = 0; g < 2; g++) {
			CHECK_EQ_I64(nvml_sample(a, g, NVML_TIER_FAST | NVML_TIER_SLOW, &sa), 0);
			CHECK_EQ_I64(nvml_sample(b, g, NVML_TIER_FAST | NVML_TIER_SLOW, &sb), 0);
			CHECK_EQ_U64(sa.time_ns, sb.time_ns);
			for (unsigned m = 0; m < NVML_M__COUNT; m++) {
				CHECK_EQ_U64(sa.valid[m], sb.valid[m]);
				if (sa.valid[m] && sa.v[m] != sb.v[m])
					gstest_fail(__FILE__, __LINE__, "metric %s: %.17g != %.17g",
						    nvml_metric_info(m)->name, sa.v[m], sb.v[m]);
			}
		}
	CHECK_EQ_I64(nvml_sample(b, 0, NVML_TIER_FAST, &sb), -1); /* only 10 ticks recorded */
	nvml_close(a);
	nvml_close(b);
}

static void test_replay_errors(void)
{
	char path[512], why[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.jsonl", gstest_tmpdir());
	f = fopen(path, "w");
	fputs("{\"format\":\"gpuscope-nvml-replay\",\"version\":1}\n{\"k\":\"tick\",\"gpu\":0}\n", f);
	fclose(f);
	CHECK(nvml_open(path, why, sizeof(why)) == NULL);
	CHECK_CONTAINS(why, "line 2");
	CHECK_CONTAINS(why, "bad.jsonl");
	f = fopen(path, "w");
	fputs("not json\n", f);
	fclose(f);
	CHECK(nvml_open(path, why, sizeof(why)) == NULL);
	CHECK_CONTAINS(why, "line 1: not a JSON object");
	CHECK(nvml_open("/nonexistent/x.jsonl", why, sizeof(why)) == NULL);
	CHECK_CONTAINS(why, "cannot open replay");
}

/*
 * Values out of an integer's range in a replay file (the replay fuzz target
 * found 9e15 as a PCI device number): clamped, never a cast out of range,
 * which is undefined behaviour (the ASan+UBSan run makes it fatal).
 */
static void test_replay_out_of_range(void)
{
	char path[512], why[256];
	struct nvml *n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/range.jsonl", gstest_tmpdir());
	f = fopen(path, "w");
	fputs("{\"format\":\"gpuscope-nvml-replay\",\"version\":1,\"backend\":\"nvml\"}\n"
	      "{\"k\":\"system\",\"r\":[[\"SystemGetCudaDriverVersion\",0,0,[1e300]],"
	      "[\"DeviceGetCount\",0,0,[1]]]}\n"
	      "{\"k\":\"static\",\"gpu\":0,\"r\":[[\"DeviceGetPciInfo\",0,0,[-5,1e20,9.04956e15],\"x\"],"
	      "[\"DeviceGetCudaComputeCapability\",0,0,[-1e300,3e9]],"
	      "[\"DeviceGetMemoryBusWidth\",0,0,[-7e12]]]}\n", f);
	fclose(f);
	n = nvml_open(path, why, sizeof(why));
	CHECK(n != NULL);
	if (!n)
		return;
	CHECK_EQ_U64(n->sys.cuda_version, 2147483647);
	CHECK_EQ_U64(n->gpu[0].pci_domain, 0);
	CHECK_EQ_U64(n->gpu[0].pci_bus, 4294967295u);
	CHECK_EQ_U64(n->gpu[0].pci_device, 4294967295u);
	CHECK_EQ_I64(n->gpu[0].cc_major, -2147483647 - 1);
	CHECK_EQ_I64(n->gpu[0].cc_minor, 2147483647);
	CHECK_EQ_I64(n->gpu[0].bus_width, -2147483647 - 1);
	nvml_close(n);
}

/* No driver on the CI machine: a reason, not a crash. */
static void test_no_driver(void)
{
	char why[256] = "";
	struct nvml *n;

	if (access("/dev/nvidiactl", F_OK) == 0)
		return; /* a GPU machine: tests/gpu covers it */
	n = nvml_open(NULL, why, sizeof(why));
	CHECK(n == NULL);
	CHECK(why[0] != '\0');
	CHECK(strchr(why, '\n') == NULL);
	if (n)
		nvml_close(n);
}

/* The profile sampler writes devices and metric samples through trace_builder. */
static void test_sampler_report(void)
{
	char path[512], why[256] = "";
	struct nvml_sampler *s;
	struct model m;
	size_t power = 0, fan = 0, procmem = 0, tensor = 0;
	uint32_t power_id, fan_id, proc_id, tensor_id;

	snprintf(path, sizeof(path), "%s/gpu.gpuscope", gstest_tmpdir());
	setenv("GPUSCOPE_NVML_REPLAY", gstest_data(LOAD), 1);
	s = nvml_sampler_start(path, 100, why, sizeof(why));
	unsetenv("GPUSCOPE_NVML_REPLAY");
	CHECK(s != NULL);
	if (!s) {
		fprintf(stderr, "sampler: %s\n", why);
		return;
	}
	usleep(1500 * 1000); /* 50 recorded ticks at 100 Hz (0.5 s), then the replay ends */
	CHECK_EQ_I64(nvml_sampler_stop(s), 0);
	model_init(&m);
	CHECK_EQ_I64(model_load_report(&m, path), 0);
	CHECK_EQ_U64(m.devices.n, 2);
	CHECK_STR(model_str(&m, m.devices.v[0].name_id), "NVIDIA H200");
	CHECK_EQ_U64(m.devices.v[0].core_clock_khz, 1980000);
	CHECK_EQ_U64(m.devices.v[0].uuid[0], 0xea);
	CHECK_EQ_U64(m.devices.v[0].uuid[15], 0x19);
	power_id = strtab_find(&m.str, "power_w");
	fan_id = strtab_find(&m.str, "fan_pct");
	proc_id = strtab_find(&m.str, "process_mem_bytes");
	tensor_id = strtab_find(&m.str, "gpm_tensor_active");
	for (size_t i = 0; i < m.metrics.n; i++) {
		const struct trace_metric *t = &m.metrics.v[i];
		if (t->name_id == power_id && t->device == 0) {
			power++;
			CHECK(t->value > 300 && t->value < 700);
		}
		fan += t->name_id == fan_id;
		if (t->name_id == proc_id) {
			procmem++;
			CHECK_EQ_U64(t->pid, 2406);
			CHECK_NEAR(t->value, 27223130112.0, 0);
		}
		tensor += t->name_id == tensor_id && t->device == 0;
	}
	CHECK_EQ_U64(power, 50);   /* every recorded tick of GPU 0 */
	CHECK_EQ_U64(fan, 0);      /* unsupported: never written */
	CHECK(procmem >= 1);       /* SLOW tier, once a second of ticks */
	CHECK(tensor >= 1);
	model_release(&m);
}

static const struct gstest tests[] = {
	GSTEST(test_static_facts),
	GSTEST(test_sample_under_load),
	GSTEST(test_unsupported_is_invalid),
	GSTEST(test_tiers_filter),
	GSTEST(test_replay_end_and_loop),
	GSTEST(test_throttle_names),
	GSTEST(test_metric_table),
	GSTEST(test_fair_rates),
	GSTEST(test_steer_budget),
	GSTEST(test_record_roundtrip),
	GSTEST(test_replay_errors),
	GSTEST(test_replay_out_of_range),
	GSTEST(test_no_driver),
	GSTEST(test_sampler_report),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
