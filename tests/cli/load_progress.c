/*
 * load_progress.c - load an input through load_input_opts() with a
 * progress callback and print what the callback was told: the number of
 * calls, whether "done" never went back, and the last (done, total).
 * usage: load_progress FILE
 * For t_progress.sh: the importers (Kineto, nsys) report their progress
 * through import_progress() as gpuscope reports do.
 */
#include "import/import.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>

struct seen {
	uint64_t calls, done, total;
	int backwards;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct seen *s = ctx;

	if (s->calls && done < s->done)
		s->backwards = 1;
	s->calls++;
	s->done = done;
	s->total = total;
}

int main(int argc, char **argv)
{
	struct seen s = { 0 };
	struct load_opts o = { .progress = on_progress, .progress_ctx = &s };
	struct model m;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: load_progress FILE\n");
		return 2;
	}
	model_init(&m);
	ret = load_input_opts(&m, argv[1], &o);
	model_release(&m);
	if (ret < 0)
		return 1;
	printf("calls %s, %s, last %" PRIu64 " of %" PRIu64 "\n", s.calls ? "some" : "none",
	       s.backwards ? "backwards" : "forwards", s.done, s.total);
	return 0;
}
