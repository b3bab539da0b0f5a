/*
 * procinfo.c - the process's place in a distributed job and on its host,
 * written once at the start of its stream as a TRACE_EV_PROC_ATTR record.
 *
 * Rank, local rank and world size come from the launcher's environment, in
 * this order (the first family that gives a rank wins, and it names the
 * launcher in the record):
 *  - torchrun / torch.distributed: RANK, LOCAL_RANK, WORLD_SIZE ("torchrun";
 *    DeepSpeed, Accelerate and Lightning set the same names);
 *  - Open MPI: OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE ("openmpi");
 *  - MPICH, Intel MPI, Cray PMI: PMI_RANK, PMI_SIZE, and MPI_LOCALRANKID
 *    where set ("pmi");
 *  - Slurm: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS ("slurm").  Last,
 *    because under `srun torchrun ...` Slurm's ids number the launchers,
 *    not the ranks.
 *
 * The CPU affinity is sched_getaffinity(); the NUMA nodes it touches are
 * read from /sys/devices/system/node/nodeN/cpulist; the memory policy is
 * get_mempolicy(2) called through syscall() (no libnuma).  All of this runs
 * once, from cl_init(), inside the collector's guard: the file reads are not
 * traced.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "collect.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PI_MAX_CPUS 8192
#define PI_MAX_NODES 64      /* nodes kept in the record's masks */
#define PI_MEMPOLICY_NODES 1024 /* get_mempolicy's maxnode: must cover the kernel's nr_node_ids */

/* A decimal environment variable >= 0, or -1 when unset or not a number. */
static int env_int(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 0x7fffffff)
		return -1;
	return (int)v;
}

struct rank_env {
	const char *launcher, *rank, *local, *size;
};

static const struct rank_env rank_envs[] = {
	{ "torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE" },
	{ "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE" },
	{ "pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },
	{ "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
};

/* Append "a-b" or "a" to @buf (of @cap bytes, at *len), with a comma before all but the first. */
static void add_range(char *buf, size_t cap, size_t *len, int a, int b)
{
	int k;

	if (*len >= cap)
		return;
	if (a == b)
		k = snprintf(buf + *len, cap - *len, "%s%d", *len ? "," : "", a);
	else
		k = snprintf(buf + *len, cap - *len, "%s%d-%d", *len ? "," : "", a, b);
	if (k > 0)
		*len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
}

/*
 * Does the kernel's CPU list @s ("0-15,32-47\n") hold a CPU of @set?
 * Returns 1 or 0.
 */
static int list_meets(const char *s, const cpu_set_t *set, size_t setsize)
{
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s)
			return 0;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (long c = a; c <= b && c < PI_MAX_CPUS; c++)
			if (CPU_ISSET_S((size_t)c, setsize, set))
				return 1;
		if (*s == ',')
			s++;
		else
			break;
	}
	return 0;
}

static uint64_t cpu_nodes(const cpu_set_t *set, size_t setsize)
{
	uint64_t mask = 0;

	for (int n = 0; n < PI_MAX_NODES; n++) {
		char path[96], buf[4096];
		ssize_t k;
		int fd;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* node ids may be sparse */
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = 0;
		if (list_meets(buf, set, setsize))
			mask |= 1ull << n;
	}
	return mask;
}

/**
 * cl_procinfo_emit - write this process's TRACE_EV_PROC_ATTR record.
 *
 * Called once per process image from cl_init(), after the stream has
 * started.  Fields that cannot be read stay unknown (-1 or 0).
 */
void cl_procinfo_emit(void)
{
	struct trace_proc_attr a, *rec;
	size_t setsize = CPU_ALLOC_SIZE(PI_MAX_CPUS);
	cpu_set_t *set = CPU_ALLOC(PI_MAX_CPUS);
	static char cpus[4096];
	size_t len = 0;
	const char *launcher = NULL;
	uint32_t launcher_id = 0, cpus_id = 0;

	memset(&a, 0, sizeof(a));
	a.rank = a.local_rank = a.world_size = -1;
	a.mempolicy = -1;
	for (size_t i = 0; i < sizeof(rank_envs) / sizeof(rank_envs[0]); i++) {
		int r = env_int(rank_envs[i].rank);
		if (r < 0)
			continue;
		a.rank = r;
		a.local_rank = env_int(rank_envs[i].local);
		a.world_size = env_int(rank_envs[i].size);
		launcher = rank_envs[i].launcher;
		break;
	}
	if (set && sched_getaffinity(0, setsize, set) == 0) {
		int first = -1, prev = -2;
		for (int c = 0; c < PI_MAX_CPUS; c++) {
			if (!CPU_ISSET_S((size_t)c, setsize, set))
				continue;
			a.ncpus++;
			if (c != prev + 1) {
				if (first >= 0)
					add_range(cpus, sizeof(cpus), &len, first, prev);
				first = c;
			}
			prev = c;
		}
		if (first >= 0)
			add_range(cpus, sizeof(cpus), &len, first, prev);
		a.cpu_nodes = cpu_nodes(set, setsize);
	}
	{
		int mode;
		unsigned long nodes[PI_MEMPOLICY_NODES / (8 * sizeof(unsigned long))];
		memset(nodes, 0, sizeof(nodes));
		if (syscall(SYS_get_mempolicy, &mode, nodes, (unsigned long)PI_MEMPOLICY_NODES,
			    (void *)0, 0UL) == 0) {
			/* the mode without MPOL_F_STATIC_NODES / MPOL_F_RELATIVE_NODES */
			a.mempolicy = mode & ~((1 << 15) | (1 << 14));
			for (unsigned n = 0; n < PI_MAX_NODES; n++)
				if (nodes[n / (8 * sizeof(unsigned long))] &
				    (1ul << (n % (8 * sizeof(unsigned long)))))
					a.mem_nodes |= 1ull << n;
		}
	}
	if (set)
		CPU_FREE(set);
	/* strings first: a first use writes a definition record */
	if (launcher)
		launcher_id = cl_intern(launcher, strlen(launcher));
	if (len)
		cpus_id = cl_intern(cpus, len);
	a.launcher_id = launcher_id;
	a.cpus_id = cpus_id;
	a.pid = cl_pid();
	a.time = cl_now();
	rec = cl_reserve(TRACE_EV_PROC_ATTR, sizeof(a));
	if (!rec)
		return;
	memcpy(rec, &a, sizeof(a));
	cl_commit();
}
