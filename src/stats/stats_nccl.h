/*
 * stats_nccl.h - message sizes and bandwidths of communication kernels
 * (`stats --report nccl_sum`, the per-collective evidence of the
 * exposed-communication rule; docs/distributed.md, "Message sizes and bus
 * bandwidth").
 *
 * Where the sizes come from: PyTorch's profiler writes NCCL's arguments on
 * each NCCL kernel of a Kineto trace ("Collective name", "In msg nelems",
 * "Out msg nelems", "dtype", "Group size", "Process Group Name"); the
 * Kineto importer keeps them as an NVTX range of domain
 * "kineto:collective" over the kernel (same start, end and stream:
 * docs/import.md), whose name is the text
 *   "<collective> <dtype> in=<n> out=<n> group=<n> pg=<name>/<desc>/<ranks>"
 * (each part only when Kineto wrote it).  That range is a report row like
 * any other, so the sizes survive `merge` of several ranks.  Reports
 * recorded by gpuscope's own collector carry no sizes yet (CUPTI does not
 * see NCCL's arguments): their kernels read "unknown", never 0.
 *
 * Bandwidths follow nccl-tests' definitions (its doc/PERFORMANCE.md):
 *  - S, the size: the larger of the input and output messages in bytes
 *    (elements x element size): the reduced buffer of all-reduce, the
 *    gathered buffer of all-gather, the scattered one of reduce-scatter;
 *  - algorithm bandwidth algbw = S / t, t the kernel's time on the GPU;
 *  - bus bandwidth busbw = algbw x factor, with n ranks in the group:
 *    all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all
 *    (n-1)/n, broadcast, reduce and send/recv 1.
 * busbw is what each rank's links carried; it compares with the link's
 * bandwidth whatever n is.  A kernel's time includes its wait for ranks
 * that arrived later (stats_rank.h), so both are lower bounds of what the
 * links achieved while the transfer ran.
 */
#ifndef GS_STATS_NCCL_H
#define GS_STATS_NCCL_H

#include "../model/model.h"

struct nccl_msg {
	size_t kernel;             /* index in m->kernels */
	const char *coll;          /* "all-reduce", ... (kernel_collective()'s names); NULL unknown */
	const char *dtype;         /* PyTorch's name ("BFloat16", static); "" when unknown to nccl_dtype_size() */
	uint64_t in_nelems, out_nelems; /* valid when has_nelems */
	uint32_t elem_size;        /* bytes of one element, 0 unknown dtype */
	int group;                 /* ranks in the group, 0 unknown */
	int has_nelems;
	uint64_t bytes;            /* S above, 0 unknown (has_nelems and elem_size) */
};

struct nccl_msgs {
	struct nccl_msg *v;        /* in kernel order (owned) */
	size_t n;
};

/*
 * nccl_msgs_build - the sizes of every communication kernel of @m that has
 * them (a "kineto:collective" range over it).  Fills @out (released by
 * nccl_msgs_release(), also when empty) and returns out->n.
 */
size_t nccl_msgs_build(const struct model *m, struct nccl_msgs *out);
void nccl_msgs_release(struct nccl_msgs *out);

/*
 * nccl_parse - read one "kineto:collective" range name (the text above)
 * into @x (kernel left as it is).  Returns 0, or -1 when the text is not
 * one (no field found).
 */
int nccl_parse(const char *text, struct nccl_msg *x);

/* Bytes of one element of a PyTorch dtype name ("Float" 4, "BFloat16" 2, ...), 0 unknown. */
uint32_t nccl_dtype_size(const char *dtype);

/* nccl-tests' bus bandwidth factor of collective @coll over @n ranks; 0 when unknown (no n, or a collective it does not define). */
double nccl_bus_factor(const char *coll, int n);

#endif
