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
	{ NULL, { NULL, NULL, NULL } },
};

#endif
