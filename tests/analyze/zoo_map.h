/*
 * zoo_map.h - which finding ids answer each case of the bottleneck zoo
 * (tests/data/zoo/<case>.{broken,fixed}.gpuscope, recorded on the H200).
 * The one place the mapping lives; docs/rules.md shows the same table.
 *
 * A case may list two ids where the report alone cannot tell them apart:
 * a data-loading stall with no read, loader-wait, data-frame or batch-upload
 * evidence (pure CPU work in the training loop) is host code: host-bound.
 */
#ifndef GS_TEST_ZOO_MAP_H
#define GS_TEST_ZOO_MAP_H

struct zoo_case {
	const char *name;          /* case id in the zoo and timings.json */
	const char *ids[3];        /* accepted finding ids, first = the rule's own; NULL-terminated */
};

static const struct zoo_case zoo_cases[] = {
	{ "dataloader", { "data-loading", "host-bound", NULL } },
	{ "launch-bound", { "launch-bound", NULL, NULL } },
	/* Python between every kernel: host code dominates, or dispatch where the host is fast */
	{ "host-bound", { "host-bound", "launch-bound", NULL } },
	{ "sync", { "synchronization", NULL, NULL } },
	{ "pageable", { "pageable-copy", NULL, NULL } },
	{ "serial-copy", { "serial-copy", NULL, NULL } },
	{ "tensor-core", { "tensor-cores-unused", NULL, NULL } },
	{ "underfill", { "under-filled-launch", NULL, NULL } },
	{ "alloc-churn", { "allocation-churn", NULL, NULL } },
	{ "comm-wait", { "exposed-communication", NULL, NULL } },
	/* PyTorch's caching allocator (docs/memory.md): no time gain, see zoo_no_gain_ids */
	{ "mem-leak", { "memory-leak", NULL, NULL } },
	{ "mem-oom", { "out-of-memory", NULL, NULL } },
	{ "mem-fragmentation", { "memory-fragmentation", NULL, NULL } },
	{ NULL, { NULL, NULL, NULL } },
};

/*
 * Finding ids without a time gain (docs/rules.md: fragmentation, a leak and
 * an OOM cost memory, then the run): a case whose first id is one of them is
 * right when its broken report has that finding (of any gain, at any rank)
 * and its fixed twin has none; its step times are not compared with a gain.
 * tests/real/corpus.py's NO_TIME_GAIN_IDS is the same list.
 */
static const char *const zoo_no_gain_ids[] = { "memory-leak", "out-of-memory", "memory-fragmentation", NULL };

#endif
