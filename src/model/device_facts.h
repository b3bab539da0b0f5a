/*
 * device_facts.h - where each fact of a device row came from, and filling
 * the facts an input lacks from the GPU datasheet table (gpu_facts.h).
 *
 * The sources are those of struct model_device_source (model.h): a fact
 * the input had is "recorded", one taken from the table is
 * "table: ROW" (ROW names the table row, "table" alone when several rows
 * agree on the fact), an unknown one is "-: REASON".
 */
#ifndef GS_MODEL_DEVICE_FACTS_H
#define GS_MODEL_DEVICE_FACTS_H

#include "model.h"

/*
 * model_apply_gpu_facts - fill the SM count, compute capability, memory
 * size and name that a device row lacks from the GPU table, by the facts
 * the row has (gpu_facts_lookup(): the name, else compute capability + SM
 * count + memory), and record "table: ROW" as their source in
 * m->device_sources.  Recorded facts are never changed; facts that the
 * table does not settle stay unknown with the reason the importer gave.
 * The name is filled only when exactly one row matched; the memory is the
 * row's nominal size.  Called by load_input() after every importer, so
 * every consumer sees the same facts.  Returns the number of facts filled.
 */
size_t model_apply_gpu_facts(struct model *m);

/*
 * model_fact_source - where fact @f of device row @d came from: the source
 * its importer (or model_apply_gpu_facts()) gave, else "recorded" for a
 * value the row has and "-: not recorded in the input" for none.  A given
 * source that disagrees with the value (a reason for a value that is
 * there, a source for one that is not) is not used: the value wins.
 * Returns a string owned by @m (or a static one).
 */
const char *model_fact_source(const struct model *m, const struct trace_device *d, enum model_fact f);

/* Is fact @f of @d known (non-zero in the row)? */
int model_fact_known(const struct trace_device *d, enum model_fact f);

#endif
