/*
 * test_zoo.c - the analyzer against the bottleneck zoo recorded on the H200.
 *
 * For every case with both tests/data/zoo/<case>.broken.gpuscope and
 * <case>.fixed.gpuscope (for the PyTorch-allocator cases,
 * tests/data/torchmem/h200_<case>.{broken,fixed}.gpuscope):
 *  - the broken report's top finding is the case's problem (zoo_map.h), for
 *    the memory cases too (tests/data/zoo/mem-*: recorded by record.sh with
 *    CUDA tracing; else tests/data/torchmem/h200_mem-*, recorded with
 *    --trace=nvtx,osrt);
 *  - the fixed twin has no finding of that kind above 5% estimated gain;
 *  - the estimated gain is within +-20% (relative) or +-5 points of the
 *    measured gain 1 - fixed_ms / broken_ms from tests/data/zoo/timings.json.
 * Prints a table of estimated vs measured gain.  Without zoo data it says so
 * and passes.
 *
 * timings.json: any JSON in which each case is an object holding numbers
 * "broken_ms" and "fixed_ms", named by its key ({"sync": {...}}) or by an
 * "id"/"case"/"name" member ([{"id": "sync", ...}]).
 */
#include "gstest.h"
#include "analyze/analyze.h"
#include "zoo_map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

struct timing {
	double broken_ms, fixed_ms;
	int found;
};

static double num(yajl_val v)
{
	if (YAJL_IS_NUMBER(v))
		return YAJL_GET_DOUBLE(v);
	if (YAJL_IS_STRING(v))
		return v->u.string ? atof(v->u.string) : NAN;
	return NAN;
}

/* Find the timing object of @name anywhere in @v (key or id member). */
static void walk(yajl_val v, const char *key, const char *name, struct timing *t)
{
	if (t->found || !v)
		return;
	if (YAJL_IS_OBJECT(v)) {
		double b = NAN, f = NAN;
		const char *id = key;
		for (size_t i = 0; i < v->u.object.len; i++) {
			const char *k = v->u.object.keys[i];
			yajl_val x = v->u.object.values[i];
			if (!strcmp(k, "broken_ms"))
				b = num(x);
			else if (!strcmp(k, "fixed_ms"))
				f = num(x);
			else if ((!strcmp(k, "id") || !strcmp(k, "case") || !strcmp(k, "name")) && YAJL_IS_STRING(x))
				id = YAJL_GET_STRING(x);
		}
		if (isfinite(b) && isfinite(f) && id && !strcmp(id, name)) {
			t->broken_ms = b;
			t->fixed_ms = f;
			t->found = 1;
			return;
		}
		for (size_t i = 0; i < v->u.object.len; i++)
			walk(v->u.object.values[i], v->u.object.keys[i], name, t);
	} else if (YAJL_IS_ARRAY(v)) {
		for (size_t i = 0; i < v->u.array.len; i++)
			walk(v->u.array.values[i], NULL, name, t);
	}
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int accepted(const struct zoo_case *zc, const char *id)
{
	for (int i = 0; i < 3 && zc->ids[i]; i++)
		if (!strcmp(zc->ids[i], id))
			return 1;
	return 0;
}

/* A case of a finding without a time gain (zoo_map.h): judged by presence, not by gain. */
static int no_gain(const struct zoo_case *zc)
{
	for (size_t i = 0; zoo_no_gain_ids[i]; i++)
		if (!strcmp(zoo_no_gain_ids[i], zc->ids[0]))
			return 1;
	return 0;
}

static int has_accepted(const struct zoo_case *zc, const struct analyze_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (accepted(zc, r->findings[i].id))
			return 1;
	return 0;
}

static int analyze_path(const char *path, struct model *m, struct analyze_result *r)
{
	static const struct analyze_opts none;

	model_init(m);
	if (model_load_report(m, path) < 0)
		return -1;
	return analyze_run(m, &none, r);
}

int main(void)
{
	char bp[4096], fp[4096], tp[4096];
	yajl_val timings = NULL;
	int pairs = 0;

	snprintf(tp, sizeof(tp), "%s", gstest_data("zoo/timings.json"));
	if (exists(tp)) {
		FILE *f = fopen(tp, "r");
		char *buf = NULL, err[256];
		size_t len = 0, cap = 0, n;
		if (f) {
			do {
				ALLOC_GROW(buf, len + 65536 + 1, cap);
				n = fread(buf + len, 1, 65536, f);
				len += n;
			} while (n > 0);
			fclose(f);
			buf[len] = 0;
			timings = yajl_tree_parse(buf, err, sizeof(err));
			if (!timings)
				gstest_fail(__FILE__, __LINE__, "cannot parse '%s': %s", tp, err);
			free(buf);
		}
	}

	printf("%-13s %-24s %-24s %9s %9s %9s  %s\n", "case", "expected", "top finding", "est.gain",
	       "measured", "fixed", "result");
	for (const struct zoo_case *zc = zoo_cases; zc->name; zc++) {
		struct model m;
		struct analyze_result r;
		struct timing t = { 0, 0, 0 };
		double est = 0, meas = NAN, fixed_gain = 0;
		const char *top = "-";
		int ok = 1;
		char why[256] = "";

		snprintf(bp, sizeof(bp), "%s", gstest_data(""));
		snprintf(bp + strlen(bp), sizeof(bp) - strlen(bp), "zoo/%s.broken.gpuscope", zc->name);
		snprintf(fp, sizeof(fp), "%s", gstest_data(""));
		snprintf(fp + strlen(fp), sizeof(fp) - strlen(fp), "zoo/%s.fixed.gpuscope", zc->name);
		if (!exists(bp) || !exists(fp)) {
			/* the PyTorch-allocator cases live with the other torch_mem reports */
			snprintf(bp, sizeof(bp), "%s", gstest_data(""));
			snprintf(bp + strlen(bp), sizeof(bp) - strlen(bp), "torchmem/h200_%s.broken.gpuscope", zc->name);
			snprintf(fp, sizeof(fp), "%s", gstest_data(""));
			snprintf(fp + strlen(fp), sizeof(fp) - strlen(fp), "torchmem/h200_%s.fixed.gpuscope", zc->name);
		}
		if (!exists(bp) || !exists(fp)) {
			printf("%-13s %-24s %-24s %9s %9s %9s  %s\n", zc->name, zc->ids[0], "-", "-", "-", "-",
			       "no reports yet");
			continue;
		}
		pairs++;
		if (analyze_path(bp, &m, &r) < 0) {
			gstest_fail(__FILE__, __LINE__, "cannot analyse '%s'", bp);
			model_release(&m);
			continue;
		}
		if (r.n) {
			/*
			 * The top finding, for the memory cases too: an out-of-memory and
			 * a leak that fills the device within a day are fatal and rank
			 * before every time gain; the fragmentation case's program has no
			 * time problem, so its memory finding must come first on its own.
			 */
			top = xstrdup(r.findings[0].id);
			if (!accepted(zc, r.findings[0].id)) {
				ok = 0;
				snprintf(why, sizeof(why), "top finding is '%s'", r.findings[0].id);
			}
		} else {
			ok = 0;
			snprintf(why, sizeof(why), "no finding");
		}
		/* the accepted ids attribute disjoint idle time: their gains add up */
		for (size_t i = 0; i < r.n; i++)
			if (accepted(zc, r.findings[i].id))
				est += r.findings[i].gain;
		if (!ok || getenv("GS_TEST_VERBOSE")) {
			fprintf(stderr, "---- %s (broken):\n", zc->name);
			analyze_print_text(stderr, &m, &r);
		}
		analyze_result_release(&r);
		model_release(&m);

		if (analyze_path(fp, &m, &r) < 0) {
			gstest_fail(__FILE__, __LINE__, "cannot analyse '%s'", fp);
			model_release(&m);
			continue;
		}
		for (size_t i = 0; i < r.n; i++)
			if (accepted(zc, r.findings[i].id))
				fixed_gain += r.findings[i].gain;
		if (no_gain(zc) && has_accepted(zc, &r)) {
			ok = 0;
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sfixed twin still has %s",
				 *why ? "; " : "", zc->ids[0]);
			fprintf(stderr, "---- %s (fixed):\n", zc->name);
			analyze_print_text(stderr, &m, &r);
		} else if (fixed_gain > 0.05) {
			ok = 0;
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sfixed twin still %.1f%%",
				 *why ? "; " : "", fixed_gain * 100);
			fprintf(stderr, "---- %s (fixed):\n", zc->name);
			analyze_print_text(stderr, &m, &r);
		}
		analyze_result_release(&r);
		model_release(&m);

		if (timings)
			walk(timings, NULL, zc->name, &t);
		if (no_gain(zc)) {
			; /* no time gain to compare with the step times */
		} else if (t.found && t.broken_ms > 0) {
			meas = 1 - t.fixed_ms / t.broken_ms;
			if (!(fabs(est - meas) <= 0.05 || fabs(est - meas) <= 0.20 * fabs(meas))) {
				ok = 0;
				snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sgain off", *why ? "; " : "");
			}
		} else if (timings) {
			ok = 0;
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sno timing", *why ? "; " : "");
		}
		if (isfinite(meas))
			printf("%-13s %-24s %-24s %8.1f%% %8.1f%% %8.1f%%  %s%s%s\n", zc->name, zc->ids[0], top, est * 100,
			       meas * 100, fixed_gain * 100, ok ? "ok" : "FAIL", *why ? ": " : "", why);
		else
			printf("%-13s %-24s %-24s %8.1f%% %9s %8.1f%%  %s%s%s\n", zc->name, zc->ids[0], top, est * 100,
			       timings ? "-" : "(none)", fixed_gain * 100, ok ? "ok" : "FAIL", *why ? ": " : "", why);
		if (!ok)
			gstest_fail(__FILE__, __LINE__, "zoo case '%s': %s", zc->name, why);
		if (strcmp(top, "-"))
			free((char *)top);
	}
	if (!pairs)
		printf("no zoo reports in %s yet: nothing to compare (the lead adds them from the H200)\n",
		       gstest_data("zoo"));
	else if (!timings)
		printf("no %s: gains not compared\n", tp);
	if (timings)
		yajl_tree_free(timings);
	printf("%d zoo pair%s, %d failure%s\n", pairs, pairs == 1 ? "" : "s", gstest_failures,
	       gstest_failures == 1 ? "" : "s");
	return gstest_failures ? 1 : 0;
}
