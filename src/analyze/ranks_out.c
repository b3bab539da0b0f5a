/*
 * ranks_out.c - the per-rank table of `analyze` (text and JSON): the rows
 * of stats_rank.h, printed where the model has processes with known ranks.
 */
#include "analyze.h"
#include "ranks_out.h"
#include "../stats/stats_rank.h"

#include <string.h>

static const char *dur(char *b, size_t n, uint64_t ns, int known)
{
	if (!known)
		return "-";
	return fmt_duration(b, n, (double)ns);
}

int az_print_ranks_text(FILE *f, const struct model *m)
{
	struct rank_stats s;
	char b[10][48];

	/* one rank alone (a single rank's trace, --rank N): the summary line says it all */
	if (rank_stats_build(m, &s) < 2) {
		rank_stats_release(&s);
		return 0;
	}
	fprintf(f, "ranks: %zu", s.n);
	if (s.world_size > 0)
		fprintf(f, " of %d", s.world_size);
	fprintf(f, " recorded; %llu collectives matched across ranks\n", (unsigned long long)s.instances);
	fprintf(f, "  %5s %4s %12s %12s %12s %12s %12s %12s %12s %12s %14s\n", "rank", "gpu", "window", "step",
		"compute", "exposed comm", "waiting", "idle", "data load", "host", "others waited");
	for (size_t i = 0; i < s.n; i++) {
		const struct rank_row *w = &s.v[i];
		int g = w->last != 0;
		char dev[16];
		snprintf(dev, sizeof(dev), "%u", w->device);
		fprintf(f, "  %5d %4s %12s %12s %12s %12s %12s %12s %12s %12s %14s\n", w->rank, g ? dev : "-",
			dur(b[0], 48, w->last - w->first, g), dur(b[1], 48, w->step_med_ns, w->steps != 0),
			dur(b[2], 48, w->compute_ns, g), dur(b[3], 48, w->exposed_ns, g),
			dur(b[4], 48, w->wait_ns, g && s.instances), dur(b[5], 48, w->idle_ns, g),
			dur(b[6], 48, w->data_ns, g), dur(b[7], 48, w->host_ns, g),
			dur(b[8], 48, w->blame_ns, g && s.instances));
	}
	rank_stats_release(&s);
	return ferror(f) ? -1 : 0;
}

static void jsec(struct strbuf *sb, const char *key, uint64_t ns, int known)
{
	strbuf_addf(sb, ",\"%s\":", key);
	if (known)
		strbuf_addf(sb, "%.9g", (double)ns / 1e9);
	else
		strbuf_addstr(sb, "null");
}

void az_ranks_json(struct strbuf *sb, const struct model *m)
{
	struct rank_stats s;

	if (!rank_stats_build(m, &s)) {
		strbuf_addstr(sb, "null");
		rank_stats_release(&s);
		return;
	}
	strbuf_addstr(sb, "{\"world_size\":");
	if (s.world_size > 0)
		strbuf_addf(sb, "%d", s.world_size);
	else
		strbuf_addstr(sb, "null");
	strbuf_addf(sb, ",\"collectives_matched\":%llu,\"rows\":[", (unsigned long long)s.instances);
	for (size_t i = 0; i < s.n; i++) {
		const struct rank_row *w = &s.v[i];
		int g = w->last != 0;
		if (i)
			strbuf_addch(sb, ',');
		strbuf_addf(sb, "{\"rank\":%d,\"pid\":%u,\"device\":", w->rank, w->pid);
		if (g)
			strbuf_addf(sb, "%u", w->device);
		else
			strbuf_addstr(sb, "null");
		jsec(sb, "window_s", w->last - w->first, g);
		strbuf_addf(sb, ",\"steps\":%llu", (unsigned long long)w->steps);
		jsec(sb, "step_median_s", w->step_med_ns, w->steps != 0);
		jsec(sb, "compute_s", w->compute_ns, g);
		jsec(sb, "comm_s", w->comm_ns, g);
		jsec(sb, "exposed_comm_s", w->exposed_ns, g);
		jsec(sb, "waiting_s", w->wait_ns, g && s.instances);
		jsec(sb, "idle_s", w->idle_ns, g);
		jsec(sb, "data_loading_s", w->data_ns, g);
		jsec(sb, "host_s", w->host_ns, g);
		jsec(sb, "others_waited_s", w->blame_ns, g && s.instances);
		strbuf_addf(sb, ",\"arrived_last\":%llu,\"collectives\":%llu}", (unsigned long long)w->late,
			    (unsigned long long)w->colls);
	}
	strbuf_addstr(sb, "]}");
	rank_stats_release(&s);
}
