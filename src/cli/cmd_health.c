/*
 * cmd_health.c - `gpuscope health`: pass/warn/fail checks of every GPU
 * (docs/monitor.md, "Health checks").  Exit status: 0 all pass, 1 a warning,
 * 3 a failure, 2 bad usage or no GPU/driver.
 */
#include "commands.h"
#include "../monitor/monitor.h"
#include "../util/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char health_usage[] =
	"gpuscope health [--format table|json] [-i GPU] [--replay FILE]\n"
	"  exit status: 0 every check passed, 1 a warning, 3 a failure, 2 usage error or no GPU";

static const struct cli_opt health_opts[] = {
	{ "format", 0, 'f', ARG_REQUIRED, "FMT", "table (default) or json", "table json", OPT_CHOICE },
	{ "gpu", 'i', 'i', ARG_REQUIRED, "GPU", "check only this GPU (an index)", NULL, 0 },
	{ "replay", 0, CMD_O_REPLAY, ARG_REQUIRED, "FILE",
	  "read recorded NVML readings instead of the GPUs (tests, offline demos)", "<file>", 0 },
	CMD_OPT_COLOR,
	{ 0 },
};

const struct cli_cmd cli_health = {
	.name = "health",
	.synopsis = health_usage,
	.summary = "check GPUs for throttling, PCIe, ECC and driver problems",
	.description = "Checks every GPU for throttling, a degraded PCIe link, ECC errors, retired "
		       "pages and driver problems.  Exit status: 0 every check passed, 1 a warning, "
		       "3 a failure, 2 usage error or no GPU.",
	.opts = health_opts,
	.example = "gpuscope health\ngpuscope health --format json -i 0",
	.stop_at_arg = 1,
};

enum { HEALTH_EXIT_WARN = 1, HEALTH_EXIT_FAIL = 3 };

struct health_args {
	int json;
	const char *gpu;   /* -i GPU, or NULL for all */
};

int cmd_health_parse(struct cmd_setup *s, int argc, char **argv)
{
	struct health_args *a = xcalloc(1, sizeof(*a));
	struct opt_iter it;
	int c;

	s->priv = a;
	s->priv_free = free;
	opt_iter_init(&it, &cli_health, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'f': a->json = !strcmp(it.arg, "json"); break;
		case 'i': a->gpu = it.arg; break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (it.ind != argc)
		return usage_error(health_usage, "unexpected argument '%s'", argv[it.ind]);
	return CMD_RUN;
}

int cmd_health_run(struct cmd_setup *setup)
{
	const struct health_args *a = setup->priv;
	const char *gpu_arg = a->gpu;
	struct nvml *n = setup->nvml;
	int json = a->json, ret = EXIT_OK;
	long only = -1;
	struct nvml_sample *s;
	struct mon_checks checks = { 0 };
	enum mon_verdict worst;
	size_t counts[4] = { 0 };

	if (gpu_arg) {
		char *end;
		only = strtol(gpu_arg, &end, 10);
		if (end == gpu_arg || *end || only < 0 || only >= (long)n->sys.ngpus) {
			error("bad -i '%s': this host has GPUs 0..%u", gpu_arg, n->sys.ngpus - 1);
			return EXIT_USAGE;
		}
	}
	s = xcalloc(n->sys.ngpus, sizeof(*s));
	for (unsigned g = 0; g < n->sys.ngpus; g++)
		if (nvml_sample(n, g, NVML_TIER_FAST | NVML_TIER_SLOW, &s[g]))
			memcpy(&s[g], &n->gpu[g].statics, sizeof(s[g])); /* replay without ticks */
	mon_health(n, s, &checks);
	worst = MON_PASS;
	for (size_t i = 0; i < checks.nr; i++) {
		const struct mon_check *ck = &checks.c[i];
		if (only >= 0 && ck->gpu >= 0 && ck->gpu != only)
			continue;
		counts[ck->verdict]++;
		if (ck->verdict != MON_SKIP && ck->verdict > worst)
			worst = ck->verdict;
	}
	if (json) {
		struct strbuf sb = STRBUF_INIT;
		int first = 1;
		strbuf_addstr(&sb, "{\"hostname\":\"");
		strbuf_add_json_str(&sb, n->sys.hostname);
		strbuf_addstr(&sb, "\",\"driver_version\":\"");
		strbuf_add_json_str(&sb, n->sys.driver_version);
		strbuf_addf(&sb, "\",\"cuda_version\":%d,\"result\":\"%s\",\"gpus\":[", n->sys.cuda_version,
			    mon_verdict_name(worst));
		for (unsigned g = 0; g < n->sys.ngpus; g++) {
			strbuf_addf(&sb, "%s{\"gpu\":%u,\"name\":\"", g ? "," : "", g);
			strbuf_add_json_str(&sb, n->gpu[g].name);
			strbuf_addstr(&sb, "\",\"uuid\":\"");
			strbuf_add_json_str(&sb, n->gpu[g].uuid);
			strbuf_addstr(&sb, "\"}");
		}
		strbuf_addstr(&sb, "],\"checks\":[");
		for (size_t i = 0; i < checks.nr; i++) {
			const struct mon_check *ck = &checks.c[i];
			if (only >= 0 && ck->gpu >= 0 && ck->gpu != only)
				continue;
			strbuf_addf(&sb, "%s{\"gpu\":", first ? "" : ",");
			if (ck->gpu < 0)
				strbuf_addstr(&sb, "null");
			else
				strbuf_addf(&sb, "%d", ck->gpu);
			strbuf_addf(&sb, ",\"check\":\"%s\",\"result\":\"%s\",\"reason\":\"", ck->name,
				    mon_verdict_name(ck->verdict));
			strbuf_add_json_str(&sb, ck->reason);
			strbuf_addstr(&sb, "\"}");
			first = 0;
		}
		strbuf_addstr(&sb, "]}\n");
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
	} else {
		printf("%-4s %-14s %-6s %s\n", "GPU", "CHECK", "RESULT", "REASON");
		for (size_t i = 0; i < checks.nr; i++) {
			const struct mon_check *ck = &checks.c[i];
			char gpu[16];
			if (only >= 0 && ck->gpu >= 0 && ck->gpu != only)
				continue;
			if (ck->gpu < 0)
				snprintf(gpu, sizeof(gpu), "-");
			else
				snprintf(gpu, sizeof(gpu), "%d", ck->gpu);
			printf("%-4s %-14s %s%-6s%s %s\n", gpu, ck->name,
			       color_for_word(stdout, mon_verdict_name(ck->verdict)),
			       mon_verdict_name(ck->verdict), color(stdout, COLOR_RESET), ck->reason);
		}
		printf("health: %s (%zu pass, %zu warn, %zu fail, %zu skipped)\n",
		       mon_verdict_name(worst), counts[MON_PASS], counts[MON_WARN], counts[MON_FAIL],
		       counts[MON_SKIP]);
	}
	if (worst == MON_WARN)
		ret = HEALTH_EXIT_WARN;
	else if (worst == MON_FAIL)
		ret = HEALTH_EXIT_FAIL;
	mon_checks_release(&checks);
	free(s);
	return ret;
}
