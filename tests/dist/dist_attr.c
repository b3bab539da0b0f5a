/*
 * dist_attr.c - print the proc_attr facts of each process of a report, one
 * line each, for e2e_procinfo.sh: "pid P rank R local L world W launcher X
 * cpus C ncpus N cpu_nodes 0xM mempolicy P".
 */
#include "model/model.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct model m;

	if (argc != 2) {
		fprintf(stderr, "usage: dist_attr REPORT\n");
		return 2;
	}
	model_init(&m);
	if (model_load_report(&m, argv[1]) < 0)
		return 2;
	for (size_t i = 0; i < m.procs.n; i++) {
		const struct trace_proc_attr *a = &m.procs.v[i].attr;
		printf("pid %u rank %d local %d world %d launcher %s cpus %s ncpus %u cpu_nodes 0x%" PRIx64
		       " mempolicy %d\n", m.procs.v[i].pid, a->rank, a->local_rank, a->world_size,
		       a->launcher_id ? model_str(&m, a->launcher_id) : "-", a->cpus_id ? model_str(&m, a->cpus_id) : "-",
		       a->ncpus, a->cpu_nodes, a->mempolicy);
	}
	model_release(&m);
	return 0;
}
