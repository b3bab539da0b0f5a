/*
 * cmd_topo.c - `gpuscope topo`: the GPUs of this host and how they connect
 * (docs/distributed.md, "Topology").
 *
 * The GPU x GPU matrix of `nvidia-smi topo -m` (NVLink count, else the
 * PCIe path PIX/PXB/PHB/NODE/SYS), P2P read/write status
 * (`nvidia-smi topo -p2p r` / `w`), each GPU's CPU affinity and NUMA node,
 * and its PCIe link generation and width against their maximum; then what
 * is wrong with it:
 *  - a PCIe link that runs below its maximum generation or width;
 *  - two GPUs without a P2P path (their copies and collectives go through
 *    host memory);
 * All from NVML (src/nvml/topo.c), or from a replay file (--replay).
 */
#include "commands.h"
#include "../nvml/nvml.h"
#include "../util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char topo_usage[] = "gpuscope topo [--format text|json] [--replay FILE]";

static const struct cli_opt topo_opts[] = {
	{ "format", 'f', 'f', ARG_REQUIRED, "FMT", "text (default) or json", "text json", OPT_CHOICE },
	{ "replay", 'r', CMD_O_REPLAY, ARG_REQUIRED, "FILE", "read a recorded NVML replay instead of the GPUs", "<file>", 0 },
	{ 0 },
};

const struct cli_cmd cli_topo = {
	.name = "topo",
	.synopsis = topo_usage,
	.summary = "the GPUs of this host: NVLink/PCIe matrix, P2P, CPU and NUMA affinity",
	.description = "Prints the GPU-by-GPU matrix as nvidia-smi topo -m does (NVLink count and "
		       "generation, PCIe path PIX/PXB/PHB/NODE/SYS), P2P read/write support, each GPU's "
		       "CPU and NUMA affinity and its PCIe link against its maximum, with findings "
		       "(docs/distributed.md).",
	.opts = topo_opts,
	.example = "gpuscope topo\ngpuscope topo --format json --replay dgx.topo.jsonl",
};

struct topo_gpu {
	double gen, width, gen_max, width_max;
	int has_gen, has_width, has_gen_max, has_width_max;
};

static void read_pcie(struct nvml *n, unsigned g, struct topo_gpu *t)
{
	struct nvml_sample s;

	memset(t, 0, sizeof(*t));
	if (nvml_sample(n, g, NVML_TIER_SLOW, &s))
		memcpy(&s, &n->gpu[g].statics, sizeof(s)); /* a replay without ticks: the maxima only */
	t->has_gen = s.valid[NVML_M_PCIE_GEN];
	t->gen = s.v[NVML_M_PCIE_GEN];
	t->has_width = s.valid[NVML_M_PCIE_WIDTH];
	t->width = s.v[NVML_M_PCIE_WIDTH];
	t->has_gen_max = s.valid[NVML_M_PCIE_GEN_MAX];
	t->gen_max = s.v[NVML_M_PCIE_GEN_MAX];
	t->has_width_max = s.valid[NVML_M_PCIE_WIDTH_MAX];
	t->width_max = s.v[NVML_M_PCIE_WIDTH_MAX];
}

static void fmt_link(char *buf, size_t len, int has_gen, double gen, int has_width, double width)
{
	char g[16] = "-", w[16] = "-";

	if (has_gen)
		snprintf(g, sizeof(g), "Gen%.0f", gen);
	if (has_width)
		snprintf(w, sizeof(w), "x%.0f", width);
	snprintf(buf, len, "%s %s", g, w);
}

/* The findings, one line each, into @out (strings owned by the caller). */
static void findings(struct nvml *n, const struct topo_gpu *pc, struct strbuf *out, size_t *count)
{
	unsigned ng = n->sys.ngpus;

	for (unsigned g = 0; g < ng; g++) {
		const struct topo_gpu *t = &pc[g];
		if ((t->has_gen && t->has_gen_max && t->gen < t->gen_max) ||
		    (t->has_width && t->has_width_max && t->width < t->width_max)) {
			strbuf_addf(out, "GPU %u: PCIe link at Gen%.0f x%.0f, below its maximum Gen%.0f x%.0f: host copies "
				    "run slower (a riser, slot or BIOS lane setting; an idle GPU may lower its "
				    "generation to save power: read it under load)\n",
				    g, t->gen, t->width, t->gen_max, t->width_max);
			(*count)++;
		}
	}
	for (unsigned a = 0; a < ng; a++)
		for (unsigned b = a + 1; b < ng; b++) {
			struct nvml_pair p;
			nvml_topo_pair(n, a, b, &p);
			if (p.p2p_read > 0 || p.p2p_write > 0) {
				strbuf_addf(out, "GPUs %u and %u have no P2P path (read: %s, write: %s): their copies and "
					    "collectives go through host memory; place ranks that exchange data on GPUs "
					    "with P2P (NVLink, or a shared PCIe switch)\n",
					    a, b, nvml_p2p_status_name(p.p2p_read), nvml_p2p_status_name(p.p2p_write));
				(*count)++;
			}
		}
}

static void print_text(struct nvml *n, const struct topo_gpu *pc)
{
	unsigned ng = n->sys.ngpus;
	struct strbuf f = STRBUF_INIT;
	size_t nf = 0;
	char b[32];
	int nvver = -1;

	printf("%-6s", "");
	for (unsigned j = 0; j < ng; j++) {
		snprintf(b, sizeof(b), "GPU%u", j);
		printf(" %-6s", b);
	}
	printf(" %-20s %-5s %-13s %s\n", "CPU Affinity", "NUMA", "PCIe", "PCIe max");
	for (unsigned i = 0; i < ng; i++) {
		const struct nvml_gpu_topo *t = &n->gpu[i].topo;
		char cur[32], max[32], numa[16] = "-";
		snprintf(b, sizeof(b), "GPU%u", i);
		printf("%-6s", b);
		for (unsigned j = 0; j < ng; j++) {
			struct nvml_pair p;
			nvml_topo_pair(n, i, j, &p);
			printf(" %-6s", nvml_link_name(&p, b, sizeof(b)));
		}
		if (t->numa_node >= 0)
			snprintf(numa, sizeof(numa), "%d", t->numa_node);
		fmt_link(cur, sizeof(cur), pc[i].has_gen, pc[i].gen, pc[i].has_width, pc[i].width);
		fmt_link(max, sizeof(max), pc[i].has_gen_max, pc[i].gen_max, pc[i].has_width_max, pc[i].width_max);
		printf(" %-20s %-5s %-13s %s\n", t->cpus[0] ? t->cpus : "-", numa, cur, max);
		if (nvver < 0)
			nvver = t->nvlink_version;
	}
	printf("\nP2P read/write:\n%-6s", "");
	for (unsigned j = 0; j < ng; j++) {
		snprintf(b, sizeof(b), "GPU%u", j);
		printf(" %-7s", b);
	}
	printf("\n");
	for (unsigned i = 0; i < ng; i++) {
		snprintf(b, sizeof(b), "GPU%u", i);
		printf("%-6s", b);
		for (unsigned j = 0; j < ng; j++) {
			struct nvml_pair p;
			char cell[16];
			nvml_topo_pair(n, i, j, &p);
			if (i == j)
				snprintf(cell, sizeof(cell), "X");
			else
				snprintf(cell, sizeof(cell), "%s/%s", p.p2p_read < 0 ? "-" : p.p2p_read ? "NS" : "OK",
					 p.p2p_write < 0 ? "-" : p.p2p_write ? "NS" : "OK");
			printf(" %-7s", cell);
		}
		printf("\n");
	}
	if (nvver >= 0)
		printf("\nNVLink version (as NVML reports it): %d\n", nvver);
	printf("\nLegend: X self; NV# that many NVLinks; PIX at most one PCIe bridge; PXB several PCIe bridges; "
	       "PHB through a PCIe host bridge (the CPU); NODE between host bridges of one NUMA node; SYS across "
	       "NUMA nodes (QPI/UPI, Infinity Fabric); OK P2P supported, NS not supported; - unknown\n");
	findings(n, pc, &f, &nf);
	if (nf) {
		const char *p = f.buf, *e;
		printf("\nfindings:\n");
		for (; *p; p = e + 1) {
			e = strchr(p, '\n');
			printf("  %.*s\n", (int)(e - p), p);
		}
	}
	strbuf_release(&f);
}

static void jopt(struct strbuf *sb, const char *key, int has, double v)
{
	strbuf_addf(sb, ",\"%s\":", key);
	if (has)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addstr(sb, "null");
}

static void print_json(struct nvml *n, const struct topo_gpu *pc)
{
	struct strbuf sb = STRBUF_INIT, f = STRBUF_INIT;
	size_t nf = 0;
	char b[32];

	strbuf_addstr(&sb, "{\"schema\":\"gpuscope-topo/1\",\"hostname\":\"");
	strbuf_add_json_str(&sb, n->sys.hostname);
	strbuf_addstr(&sb, "\",\"gpus\":[");
	for (unsigned i = 0; i < n->sys.ngpus; i++) {
		const struct nvml_gpu_topo *t = &n->gpu[i].topo;
		strbuf_addf(&sb, "%s{\"gpu\":%u,\"name\":\"", i ? "," : "", i);
		strbuf_add_json_str(&sb, n->gpu[i].name);
		strbuf_addstr(&sb, "\",\"bus_id\":\"");
		strbuf_add_json_str(&sb, n->gpu[i].bus_id);
		strbuf_addstr(&sb, "\",\"numa_node\":");
		if (t->numa_node >= 0)
			strbuf_addf(&sb, "%d", t->numa_node);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"cpu_affinity\":");
		if (t->cpus[0]) {
			strbuf_addch(&sb, '"');
			strbuf_add_json_str(&sb, t->cpus);
			strbuf_addch(&sb, '"');
		} else {
			strbuf_addstr(&sb, "null");
		}
		strbuf_addstr(&sb, ",\"nvlink_version\":");
		if (t->nvlink_version >= 0)
			strbuf_addf(&sb, "%d", t->nvlink_version);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ",\"pcie\":{\"gen\":");
		strbuf_addstr(&sb, pc[i].has_gen ? "" : "null");
		if (pc[i].has_gen)
			strbuf_addf(&sb, "%.0f", pc[i].gen);
		jopt(&sb, "width", pc[i].has_width, pc[i].width);
		jopt(&sb, "gen_max", pc[i].has_gen_max, pc[i].gen_max);
		jopt(&sb, "width_max", pc[i].has_width_max, pc[i].width_max);
		strbuf_addstr(&sb, "},\"peers\":[");
		for (unsigned j = 0, k = 0; j < n->sys.ngpus; j++) {
			struct nvml_pair p;
			if (j == i)
				continue;
			nvml_topo_pair(n, i, j, &p);
			strbuf_addf(&sb, "%s{\"gpu\":%u,\"link\":\"%s\",\"nvlinks\":%u,\"p2p_read\":\"%s\",\"p2p_write\":\"%s\"}",
				    k++ ? "," : "", j, nvml_link_name(&p, b, sizeof(b)), p.nvlinks,
				    nvml_p2p_status_name(p.p2p_read), nvml_p2p_status_name(p.p2p_write));
		}
		strbuf_addstr(&sb, "]}");
	}
	strbuf_addstr(&sb, "],\"findings\":[");
	findings(n, pc, &f, &nf);
	for (const char *p = f.buf, *e; nf && *p; p = e + 1) {
		char *line;
		e = strchr(p, '\n');
		line = xstrndup(p, (size_t)(e - p));
		strbuf_addstr(&sb, p == f.buf ? "\"" : ",\"");
		strbuf_add_json_str(&sb, line);
		strbuf_addch(&sb, '"');
		free(line);
	}
	strbuf_addstr(&sb, "]}\n");
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	strbuf_release(&f);
}

int cmd_topo_parse(struct cmd_setup *s, int argc, char **argv)
{
	int *json = xcalloc(1, sizeof(*json));   /* read by cmd_topo_run() */
	struct opt_iter it;
	int c;

	s->priv = json;
	s->priv_free = free;
	opt_iter_init(&it, &cli_topo, argc, argv);
	while ((c = opt_next(&it)) != OPT_END) {
		switch (c) {
		case 'f': *json = !strcmp(it.arg, "json"); break;
		default:
			if ((c = cmd_common_opt(s, &it, c)) != CMD_RUN)
				return c;
		}
	}
	if (it.ind != argc)
		return usage_error(topo_usage, "unexpected argument '%s'", argv[it.ind]);
	return CMD_RUN;
}

int cmd_topo_run(struct cmd_setup *s)
{
	struct nvml *n = s->nvml;
	struct topo_gpu *pc = xcalloc(n->sys.ngpus, sizeof(*pc));

	for (unsigned g = 0; g < n->sys.ngpus; g++)
		read_pcie(n, g, &pc[g]);
	if (*(const int *)s->priv)
		print_json(n, pc);
	else
		print_text(n, pc);
	free(pc);
	if (fflush(stdout) || ferror(stdout))
		return error("cannot write the output"), EXIT_FAIL;
	return EXIT_OK;
}
