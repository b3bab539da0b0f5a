/*
 * rule_straggler.c - straggler: the rank whose compute, input or host time
 * makes the other ranks wait inside collectives.
 *
 * The ranks' collectives are matched as stats_rank.h says: the n-th
 * communication kernel of a name on each rank's GPU is one instance, which
 * ends on every rank at about the same time; the ranks that started it
 * before the last one to arrive waited for that rank (start_last - start_r,
 * at most their own kernel's duration).  That waiting is attributed to the
 * last arriver.  The straggler is the rank the most waiting is attributed
 * to, when it arrived last at a large enough share of the instances
 * (min_late_share: otherwise the last place moves between ranks, which is
 * jitter, not one slow rank).
 *
 * Its own cause is read from the stretches before its late arrivals (from
 * its previous collective's end to the late one's start), against the
 * other ranks' stretches before the same instance: what it spent there
 * beyond their mean, split into GPU busy (compute: more work, or a slower
 * GPU), GPU idle inside data-loading frames (input) and the rest of the idle
 * time (host work: launch overhead, Python, CPU contention or
 * misplacement).  The largest excess is its top cause.
 *
 * Gain: if the straggler arrived with the others, nobody would wait for it:
 * the waiting attributed to it over the analysed GPU time (the sum over GPUs
 * of the window, as every gain).  It overlaps exposed-communication's
 * "waiting" part: the two findings name the same time from two sides.
 */
#include "internal.h"
#include "../stats/stats_rank.h"

#include <stdlib.h>
#include <string.h>

void rule_straggler(struct az_ctx *c, const struct az_rule *self)
{
	struct rank_stats s;
	const struct rank_row *st = NULL;
	struct strbuf ev = STRBUF_INIT, title = STRBUF_INIT, rec = STRBUF_INIT;
	char b1[64], b2[64], b3[64], b4[64];
	uint64_t host;
	double gain, late_share;
	const char *cause;
	int others = 0;

	if (!c->has_gpu)
		return;
	if (rank_stats_build(c->m, &s) < 2 || !s.instances) {
		rank_stats_release(&s);
		return;
	}
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].colls && (!st || s.v[i].blame_ns > st->blame_ns))
			st = &s.v[i];
	if (!st || !st->blame_ns || !st->colls) {
		rank_stats_release(&s);
		return;
	}
	late_share = (double)st->late / (double)st->colls;
	gain = az_div((double)st->blame_ns, (double)c->unit_wall_ns);
	if (late_share < az_param(c, self, "min_late_share") || gain < az_param(c, self, "min_gain")) {
		rank_stats_release(&s);
		return;
	}
	host = st->pre_ns - st->pre_busy_ns - st->pre_data_ns;
	if (st->excess_ns[0] >= st->excess_ns[2] && st->excess_ns[0] >= st->excess_ns[1])
		cause = "compute";
	else if (st->excess_ns[1] >= st->excess_ns[2])
		cause = "input";
	else
		cause = "host";
	strbuf_addf(&title, "Rank %d is the straggler: the other ranks wait for it in collectives (its %s time)",
		    st->rank, !strcmp(cause, "host") ? "host" : cause);
	strbuf_addf(&ev, "rank %d arrived last at %llu of the %llu collectives it shares with other ranks; "
		    "the others waited %s for it in all\n",
		    st->rank, (unsigned long long)st->late, (unsigned long long)st->colls,
		    fmt_duration(b1, sizeof(b1), (double)st->blame_ns));
	strbuf_addstr(&ev, "waiting in collectives per rank:");
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].colls) {
			strbuf_addf(&ev, "%s rank %d %s", others++ ? "," : "", s.v[i].rank,
				    fmt_duration(b1, sizeof(b1), (double)s.v[i].wait_ns));
		}
	strbuf_addch(&ev, '\n');
	strbuf_addf(&ev, "before its late arrivals (%s in all) rank %d's GPU was busy %s, idle in data loading %s, "
		    "idle while its host worked %s\n",
		    fmt_duration(b1, sizeof(b1), (double)st->pre_ns), st->rank,
		    fmt_duration(b2, sizeof(b2), (double)st->pre_busy_ns),
		    fmt_duration(b3, sizeof(b3), (double)st->pre_data_ns),
		    fmt_duration(b4, sizeof(b4), (double)host));
	strbuf_addf(&ev, "more than the other ranks in the same stretches: GPU busy +%s, data loading +%s, host +%s: "
		    "its top cause is %s\n",
		    fmt_duration(b1, sizeof(b1), (double)st->excess_ns[0]),
		    fmt_duration(b2, sizeof(b2), (double)st->excess_ns[1]),
		    fmt_duration(b3, sizeof(b3), (double)st->excess_ns[2]),
		    !strcmp(cause, "host") ? "host time between launches" : !strcmp(cause, "input") ? "input (data loading)"
		    : "compute (more GPU work than the others, or a slower GPU)");
	if (st->wait_ns * 10 < st->blame_ns)
		strbuf_addf(&ev, "rank %d itself waited only %s in its collectives: no rank came later, recorded or not\n",
			    st->rank, fmt_duration(b1, sizeof(b1), (double)st->wait_ns));
	if (s.world_size > 0 && (size_t)s.world_size > s.n)
		strbuf_addf(&ev, "%zu of %d ranks recorded: the last arriver among those\n", s.n, s.world_size);
	if (!strcmp(cause, "host"))
		strbuf_addf(&rec, "Look at rank %d alone (`gpuscope analyze --rank %d`): its host path between launches is "
			    "slower than the others'. Check its CPU affinity and NUMA placement (`gpuscope info`, `gpuscope "
			    "topo`; bind each rank to the cores of its GPU's node, numactl --cpunodebind=N --membind=N), other "
			    "processes or DataLoader workers on its cores, and rank-specific host work (logging, checkpointing, "
			    "metric syncs on rank %d)",
			    st->rank, st->rank, st->rank);
	else if (!strcmp(cause, "input"))
		strbuf_addf(&rec, "Rank %d waits for its input: give its DataLoader more workers (num_workers), "
			    "pin_memory=True and a larger prefetch_factor, or faster storage on its host; check that its "
			    "shard is not larger than the others'", st->rank);
	else
		strbuf_addf(&rec, "Rank %d computes longer than the others: balance the partition (uneven shards, "
			    "sequence lengths, embedding tables or experts per rank), and check its GPU's clocks and "
			    "health (`gpuscope health`)", st->rank);
	az_add(c, "straggler", az_severity(gain), gain, title.buf,
	       "the time the other ranks waited in collectives for the straggler (each one's start of the instance to "
	       "the straggler's, at most its own kernel) / analysed GPU time: it is what they would gain if it arrived "
	       "with them",
	       ev.buf, rec.buf, NULL, 0);
	strbuf_release(&ev);
	strbuf_release(&title);
	strbuf_release(&rec);
	rank_stats_release(&s);
}
