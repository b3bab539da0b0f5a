/*
 * summary.c - one run's metrics (see diff.h).
 */
#include "diff.h"
#include "../analyze/analyze.h"
#include "../import/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void diff_opts_init(struct diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->noise = 0.05;
	o->noise_points = 0.02;
	o->finding_min_gain = 0.05;
}

static struct run_metric *add_metric(struct run_summary *s, const char *key, const char *label,
				     double v, int dir, int kind)
{
	struct run_metric *m;

	if (!isfinite(v))
		return NULL;
	ALLOC_GROW(s->m, s->n + 1, s->alloc);
	m = &s->m[s->n++];
	memset(m, 0, sizeof(*m));
	snprintf(m->key, sizeof(m->key), "%s", key);
	snprintf(m->label, sizeof(m->label), "%s", label);
	m->value = m->lo = m->hi = v;
	m->n = 1;
	m->dir = dir;
	m->kind = kind;
	return m;
}

const struct run_metric *run_metric_find(const struct run_summary *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->m[i].key, key))
			return &s->m[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The distribution-free 95% confidence interval of the median of @v[0..n):
 * the order statistics of ranks n/2 -+ 0.98 sqrt(n) (normal approximation
 * of the binomial).  The first value (the first step, warm-up) is left
 * out.  Sets *n_out to the values used, 0 when fewer than 5.
 */
static void median_ci(const double *v, size_t n, double *lo, double *hi, int *n_out)
{
	double *x, r;
	size_t k, a, b;

	*lo = *hi = 0;
	*n_out = 0;
	if (n < 6)
		return;
	k = n - 1;
	x = xmalloc(k * sizeof(*x));
	memcpy(x, v + 1, k * sizeof(*x));
	qsort(x, k, sizeof(*x), cmp_double);
	r = 0.98 * sqrt((double)k);
	a = (double)k / 2 - r > 1 ? (size_t)((double)k / 2 - r) : 1;          /* 1-based ranks */
	b = (size_t)ceil(1 + (double)k / 2 + r);
	if (b > k)
		b = k;
	*lo = x[a - 1];
	*hi = x[b - 1];
	*n_out = (int)k;
	free(x);
}

struct windows {
	struct model_steps step;   /* the step ranges, in order and disjoint (model_find_steps) */
	struct interval_set set;   /* their union, for membership (merges touching steps) */
	double step_median_s;
	double step_ci_lo, step_ci_hi;   /* 95% CI of that median over the steps */
	int step_ci_n;
};

/* The steps of the run's loop (model_find_steps(): what a step is, for analyze too). */
static void find_steps(const struct model *m, const char *want, struct windows *w,
		       char **source)
{
	model_find_steps(m, want, NULL, &w->step);
	for (size_t i = 0; i < w->step.n; i++)
		ivset_add(&w->set, w->step.v[i].start, w->step.v[i].end);
	if (w->step.n)
		*source = xstrfmt("nvtx range '%s'", want ? want : model_str(m, w->step.name_id));
}

static int in_windows(struct windows *w, uint64_t t)
{
	return !w->step.n || ivset_overlap(&w->set, t, t + 1) > 0;
}

/*
 * GPU work belongs to the step whose thread launched it, not to the step
 * during which it happens to run: an asynchronous loop runs ahead of the GPU.
 * launch_time() maps a GPU record to the start of its launching API call
 * (by process and correlation id, model_corr_find()), or to its own start
 * without API data.
 */
/* Extend the completion time of the step window holding @launched to @end. */
static void step_done(struct windows *w, uint64_t *done, uint64_t launched, uint64_t end)
{
	size_t lo = 0, hi = w->step.n;

	while (lo < hi) { /* last window starting at or before @launched */
		size_t mid = (lo + hi) / 2;
		if (w->step.v[mid].start <= launched)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || launched >= w->step.v[lo - 1].end)
		return;
	if (end > done[lo - 1])
		done[lo - 1] = end;
}

static uint64_t launch_time(struct model_corr *h, const struct model *m, uint32_t pid,
			    uint32_t corr, uint64_t start)
{
	const struct trace_api *a = model_corr_find(h, m, pid, corr);

	return a ? a->start : start;
}

struct kernel_total {
	uint32_t name_id;
	uint64_t total;
	uint64_t count;
};

static int cmp_kt(const void *a, const void *b)
{
	const struct kernel_total *x = a, *y = b;
	return (x->total < y->total) - (x->total > y->total);
}

/*
 * A kernel row's name: the base name (kernel_base_name()) and the template
 * arguments that follow it, which tell a template's instances apart
 * ("vectorized_elementwise_kernel<4, FillFunctor<float>>"); arguments
 * beyond @n - 1 bytes are cut with "..." and their brackets closed, so the
 * name stays balanced.  diff's table shows the base name alone where it is
 * unique (compare.c).  Returns @buf.
 */
static const char *kernel_row_name(char *buf, size_t n, const char *name)
{
	size_t len, k, out = 0;
	const char *base = kernel_base_name(name, &len);
	int depth = 0;

	if (n < 16)
		BUG("kernel_row_name: buffer too small");
	if (base == name && len == strlen(name)) {
		return kernel_label(buf, n, name, n - 1); /* not a C++ name: as people read it */
	}
	if (len > n - 8)
		len = n - 8;
	memcpy(buf, base, len);
	out = len;
	for (k = len; base[k] == '<' || (depth && base[k]); k++) {
		if (out + 5 + (size_t)depth >= n - 1) {
			memcpy(buf + out, "...", 3);
			out += 3;
			while (depth-- > 0)
				buf[out++] = '>';
			break;
		}
		depth += base[k] == '<' ? 1 : base[k] == '>' ? -1 : 0;
		buf[out++] = base[k];
		if (!depth)
			break;
	}
	buf[out] = 0;
	return buf;
}

static int cmp_kt_name(const void *a, const void *b)
{
	const struct kernel_total *x = a, *y = b;
	return (x->name_id > y->name_id) - (x->name_id < y->name_id);
}

int run_summarize_model(const struct model *m, const char *source, const struct diff_opts *o,
			struct run_summary *s)
{
	struct windows w = { 0 };
	struct interval_set comm = { 0 }, compute = { 0 };
	struct analyze_opts ao = { 0 };
	struct analyze_result ar;
	double wall = m->t_max > m->t_min ? (double)(m->t_max - m->t_min) / 1e9 : 0;
	double per;
	size_t launches = 0, syncs = 0, allocs = 0, kernels = 0;
	uint64_t ktime = 0, copy_t[16] = { 0 }, copy_b[16] = { 0 }, pageable_b = 0;
	struct kernel_total *kt;
	struct model_corr ln;
	size_t nkt = 0;

	memset(s, 0, sizeof(*s));
	s->source = xstrdup(source);
	s->runs = 1;
	find_steps(m, o->step, &w, &s->step_source);
	if (o->step && !w.step.n)
		warning("'%s': no NVTX range named '%s'; steps are detected instead", source, o->step);

	ao.step = w.step.n ? NULL : o->step;
	if (analyze_run(m, &ao, &ar) < 0) {
		ivset_release(&w.set);
		model_steps_release(&w.step);
		return -1;
	}
	if (!w.step.n && ar.summary.step_period_s > 0 && wall > 0) {
		w.step_median_s = ar.summary.step_period_s;
		s->step_source = xstrfmt("%s", ar.summary.step_source ? ar.summary.step_source
								   : "periodic GPU idle gaps");
	}
	model_corr_build(&ln, m);
	if (w.step.n) {
		/* the steps span from the first one's start to the end of the work they launched */
		size_t ns = w.step.n;
		uint64_t *done = xmalloc(ns * sizeof(*done));

		for (size_t i = 0; i < ns; i++)
			done[i] = w.step.v[i].end;
		for (size_t i = 0; i < m->kernels.n; i++) {
			const struct trace_kernel *k = &m->kernels.v[i];
			step_done(&w, done, launch_time(&ln, m, k->pid, k->correlation, k->start), k->end);
		}
		for (size_t i = 0; i < m->memcpys.n; i++) {
			const struct trace_memcpy *c = &m->memcpys.v[i];
			step_done(&w, done, launch_time(&ln, m, c->pid, c->correlation, c->start), c->end);
		}
		for (size_t i = 0; i < m->memsets.n; i++) {
			const struct trace_memset *c = &m->memsets.v[i];
			step_done(&w, done, launch_time(&ln, m, c->pid, c->correlation, c->start), c->end);
		}
		/*
		 * A step is done when its range has ended and the GPU work it
		 * launched has finished.  Time per step is the median interval
		 * between completions (the first from its start): the loop's
		 * throughput, also when the CPU runs ahead of the GPU, and robust
		 * to a slow first step.
		 */
		{
			double *d = xmalloc(ns * sizeof(*d)), *issue = xmalloc(ns * sizeof(*issue));
			double by_done, by_issue;
			for (size_t i = 0; i < ns; i++) {
				if (i && done[i] < done[i - 1])
					done[i] = done[i - 1];
				d[i] = (double)(done[i] - (i ? done[i - 1] : w.step.v[0].start)) / 1e9;
				issue[i] = (double)((i + 1 < ns ? w.step.v[i + 1].start : w.step.v[i].end) -
						    w.step.v[i].start) / 1e9;
			}
			/*
			 * Completions can bunch up when the GPU was held back and then
			 * drains several steps at once; a loop can never be faster
			 * than it issues steps, so the step time is the larger of the
			 * two medians.
			 */
			double dlo, dhi, ilo, ihi;
			int dn, in;
			median_ci(d, ns, &dlo, &dhi, &dn);   /* before median() sorts them */
			median_ci(issue, ns, &ilo, &ihi, &in);
			by_done = median(d, ns);
			by_issue = median(issue, ns);
			w.step_median_s = by_done > by_issue ? by_done : by_issue;
			w.step_ci_lo = by_done > by_issue ? dlo : ilo;
			w.step_ci_hi = by_done > by_issue ? dhi : ihi;
			w.step_ci_n = by_done > by_issue ? dn : in;
			free(d);
			free(issue);
		}
		free(done);
	}
	/* the number of steps the per-step values divide by */
	per = w.step.n ? (double)w.step.n
		      : (w.step_median_s > 0 && wall > 0 ? wall / w.step_median_s : 0);

	add_metric(s, "wall_s", "wall time", wall, DIR_LOWER, MK_TIME);
	if (w.step_median_s > 0) {
		struct run_metric *st = add_metric(s, "step_time_s", "time per step", w.step_median_s,
						   DIR_LOWER, MK_TIME);
		if (st && w.step_ci_n) {
			st->ci_lo = w.step_ci_lo;
			st->ci_hi = w.step_ci_hi;
			st->ci_n = w.step_ci_n;
		}
	}
	if (w.step.n)
		add_metric(s, "steps", "steps recorded", (double)w.step.n, DIR_NEUTRAL, MK_COUNT);

	for (size_t i = 0; i < m->kernels.n; i++) {
		const struct trace_kernel *k = &m->kernels.v[i];
		if (!in_windows(&w, launch_time(&ln, m, k->pid, k->correlation, k->start)))
			continue;
		kernels++;
		ktime += k->end > k->start ? k->end - k->start : 0;
		if (k->flags & TRACE_GPU_COMM)
			ivset_add(&comm, k->start, k->end);
		else
			ivset_add(&compute, k->start, k->end);
	}
	for (size_t i = 0; i < m->memcpys.n; i++) {
		const struct trace_memcpy *c = &m->memcpys.v[i];
		if (!in_windows(&w, launch_time(&ln, m, c->pid, c->correlation, c->start)))
			continue;
		copy_t[c->kind & 15] += c->end > c->start ? c->end - c->start : 0;
		copy_b[c->kind & 15] += c->bytes;
		if (c->src_kind == MEM_PAGEABLE || c->dst_kind == MEM_PAGEABLE)
			pageable_b += c->bytes;
	}
	for (size_t i = 0; i < m->api.n; i++) {
		const struct trace_api *a = &m->api.v[i];
		const char *name = model_str(m, a->name_id);
		if (!in_windows(&w, a->start))
			continue;
		if (strstr(name, "Launch") || strstr(name, "launch"))
			launches++;
		else if (strstr(name, "Synchronize") || strstr(name, "synchronize"))
			syncs++;
		else if (strstr(name, "Malloc") || strstr(name, "MemAlloc"))
			allocs++;
	}
	if (!(m->has & MODEL_HAS_API)) /* no API records: count sync records instead */
		for (size_t i = 0; i < m->syncs.n; i++)
			syncs += in_windows(&w, m->syncs.v[i].start);
	if (!allocs)
		for (size_t i = 0; i < m->memory.n; i++)
			allocs += m->memory.v[i].op == TRACE_MEM_ALLOC && in_windows(&w, m->memory.v[i].time);

	if (m->has & MODEL_HAS_CUDA) {
		/*
		 * GPU busy as analyze defines and prints it, over the window it
		 * analyses (the steps after the first): one number, one meaning
		 * (docs/rules.md, "GPU busy").
		 */
		if (ar.summary.gpu_busy >= 0) {
			double b = ar.summary.gpu_busy;
			add_metric(s, "gpu_busy", "GPU busy (analysed window)", b, DIR_HIGHER, MK_FRACTION);
			add_metric(s, "gpu_idle", "GPU idle (analysed window)", 1 - b, DIR_LOWER, MK_FRACTION);
		}
		if (per > 0) {
			add_metric(s, "kernels_per_step", "kernels per step", kernels / per, DIR_LOWER, MK_COUNT);
			add_metric(s, "kernel_time_per_step_s", "kernel time per step",
				   (double)ktime / 1e9 / per, DIR_LOWER, MK_TIME);
			if (m->has & MODEL_HAS_API)
				add_metric(s, "launches_per_step", "launches per step", launches / per,
					   DIR_LOWER, MK_COUNT);
			if (m->has & (MODEL_HAS_API | MODEL_HAS_SYNC))
				add_metric(s, "syncs_per_step", "syncs per step", syncs / per, DIR_LOWER,
					   MK_COUNT);
			if (m->has & (MODEL_HAS_API | MODEL_HAS_MEMORY))
				add_metric(s, "allocs_per_step", "device allocations per step",
					   allocs / per, DIR_LOWER, MK_COUNT);
		} else {
			add_metric(s, "kernels", "kernels", (double)kernels, DIR_NEUTRAL, MK_COUNT);
			add_metric(s, "kernel_time_s", "kernel time", (double)ktime / 1e9, DIR_LOWER,
				   MK_TIME);
		}
		for (unsigned kind = 1; kind < 16; kind++) {
			char key[64], label[96];
			const char *kn = trace_copy_kind_name(kind);
			if (!copy_b[kind] && !copy_t[kind])
				continue;
			snprintf(key, sizeof(key), "copy_%s_s%s", kn, per > 0 ? "_per_step" : "");
			snprintf(label, sizeof(label), "%s copy time%s", kn, per > 0 ? " per step" : "");
			add_metric(s, key, label, (double)copy_t[kind] / 1e9 / (per > 0 ? per : 1),
				   DIR_LOWER, MK_TIME);
			snprintf(key, sizeof(key), "copy_%s_bytes%s", kn, per > 0 ? "_per_step" : "");
			snprintf(label, sizeof(label), "%s bytes%s", kn, per > 0 ? " per step" : "");
			add_metric(s, key, label, (double)copy_b[kind] / (per > 0 ? per : 1),
				   DIR_NEUTRAL, MK_BYTES);
		}
		if (pageable_b)
			add_metric(s, per > 0 ? "pageable_bytes_per_step" : "pageable_bytes",
				   per > 0 ? "pageable copy bytes per step" : "pageable copy bytes",
				   (double)pageable_b / (per > 0 ? per : 1), DIR_LOWER, MK_BYTES);
		if (comm.n) {
			uint64_t exposed = ivset_total(&comm) - ivset_intersect_total(&comm, &compute);
			add_metric(s, per > 0 ? "exposed_comm_per_step_s" : "exposed_comm_s",
				   per > 0 ? "exposed communication per step" : "exposed communication",
				   (double)exposed / 1e9 / (per > 0 ? per : 1), DIR_LOWER, MK_TIME);
		}
	}

	/* top kernels by total time */
	kt = xcalloc(m->kernels.n + 1, sizeof(*kt));
	for (size_t i = 0; i < m->kernels.n; i++) {
		if (!in_windows(&w, launch_time(&ln, m, m->kernels.v[i].pid, m->kernels.v[i].correlation,
						    m->kernels.v[i].start)))
			continue;
		kt[nkt].name_id = m->kernels.v[i].name_id;
		kt[nkt].total = m->kernels.v[i].end - m->kernels.v[i].start;
		kt[nkt].count = 1;
		nkt++;
	}
	qsort(kt, nkt, sizeof(*kt), cmp_kt_name);
	{
		size_t out = 0;
		for (size_t i = 0; i < nkt; i++) {
			if (out && kt[out - 1].name_id == kt[i].name_id) {
				kt[out - 1].total += kt[i].total;
				kt[out - 1].count += kt[i].count;
			} else {
				kt[out++] = kt[i];
			}
		}
		nkt = out;
	}
	qsort(kt, nkt, sizeof(*kt), cmp_kt);
	for (size_t i = 0; i < nkt && i < 8; i++) {
		char key[96], label[128], short_name[104];
		const char *name = model_str(m, kt[i].name_id);
		snprintf(key, sizeof(key), "kernel_s:%.80s", name);
		snprintf(label, sizeof(label), "kernel %s%s", kernel_row_name(short_name, sizeof(short_name), name),
			 per > 0 ? " per step" : "");
		add_metric(s, key, label, (double)kt[i].total / 1e9 / (per > 0 ? per : 1), DIR_LOWER,
			   MK_TIME);
	}
	free(kt);
	model_corr_release(&ln);

	for (size_t i = 0; i < ar.n; i++) {
		struct run_finding *f;
		ALLOC_GROW(s->f, s->nf + 1, s->allocf);
		f = &s->f[s->nf++];
		snprintf(f->id, sizeof(f->id), "%s", ar.findings[i].id);
		snprintf(f->title, sizeof(f->title), "%s", ar.findings[i].title ? ar.findings[i].title : "");
		f->gain = ar.findings[i].gain;
		f->flags = (ar.findings[i].fatal ? FINDING_FATAL : 0) |
			   (ar.findings[i].gain <= 0 && ar.findings[i].severity >= SEV_WARNING ? FINDING_NO_TIME : 0);
	}
	analyze_result_release(&ar);
	ivset_release(&w.set);
	model_steps_release(&w.step);
	ivset_release(&comm);
	ivset_release(&compute);
	return 0;
}

int run_summarize_path(const char *path, const struct diff_opts *o, struct run_summary *s)
{
	struct model m;
	int ret;

	struct load_opts lo = { 0 };

	model_init(&m);
	if (o->windowed) {
		/* issue 19: a long run's window is loaded alone, then clipped exactly */
		lo.windowed = 1;
		lo.win_start = o->start;
		lo.win_end = o->end;
		lo.win_margin = LOAD_WINDOW_MARGIN_NS;
		lo.win_keep = 1u << TRACE_EV_MEMORY;
	}
	if (load_input_opts(&m, path, &lo) < 0) {
		model_release(&m);
		return -1;
	}
	if (o->windowed) {
		uint64_t lo_t = m.t_min + o->start, hi_t = o->end ? m.t_min + o->end : m.t_max;
		if (hi_t < lo_t)
			hi_t = lo_t;
		model_clip(&m, lo_t, hi_t);
		/* the run's span is the window's (rows that straddle its edges stick out) */
		if (m.t_min < lo_t)
			m.t_min = lo_t;
		if (m.t_max > hi_t)
			m.t_max = hi_t;
	}
	if (o->capture && o->keep_capture && o->keep_capture(&m, o->capture) < 0) {
		model_release(&m);
		return -1;
	}
	/* a damaged report is compared on what loaded; say so (load_report words it "report '...'") */
	for (size_t i = 0; i < m.nr_warnings; i++)
		if (!strncmp(m.warnings[i], "report '", 8))
			warning("%s", m.warnings[i]);
	ret = run_summarize_model(&m, path, o, s);
	model_release(&m);
	return ret;
}

int run_summarize_paths(char *const *paths, size_t n, const struct diff_opts *o,
			struct run_summary *out)
{
	struct run_summary *runs = xcalloc(n, sizeof(*runs));
	size_t done = 0;
	int ret = 0;

	for (; done < n; done++) {
		if (run_summarize_path(paths[done], o, &runs[done]) < 0) {
			ret = -1;
			break;
		}
	}
	if (!ret)
		run_summary_combine(runs, n, out);
	for (size_t i = 0; i < done; i++)
		run_summary_release(&runs[i]);
	free(runs);
	return ret;
}

void run_summary_combine(const struct run_summary *runs, size_t n, struct run_summary *out)
{
	double *vals = xmalloc((n + 1) * sizeof(*vals));

	memset(out, 0, sizeof(*out));
	out->runs = (int)n;
	out->source = n == 1 ? xstrdup(runs[0].source)
			     : xstrfmt("%s (+%zu more)", runs[0].source, n - 1);
	if (n && runs[0].step_source)
		out->step_source = xstrdup(runs[0].step_source);
	/* metrics: every key seen in any run, in first-seen order */
	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i < runs[r].n; i++) {
			const struct run_metric *src = &runs[r].m[i];
			struct run_metric *dst;
			size_t k = 0;
			if (run_metric_find(out, src->key))
				continue;
			for (size_t q = 0; q < n; q++) {
				const struct run_metric *x = run_metric_find(&runs[q], src->key);
				if (x)
					vals[k++] = x->value;
			}
			dst = add_metric(out, src->key, src->label, median(vals, k), src->dir, src->kind);
			if (dst) {
				dst->lo = vals[0];
				dst->hi = vals[k - 1];
				dst->n = (int)k;
				if (k == 1) {   /* one run: keep its own uncertainty */
					dst->ci_lo = src->ci_lo;
					dst->ci_hi = src->ci_hi;
					dst->ci_n = src->ci_n;
				}
			}
		}
	}
	/* findings: by id, median gain over the runs (absent = 0) */
	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i < runs[r].nf; i++) {
			const struct run_finding *src = &runs[r].f[i];
			struct run_finding *dst;
			size_t k = 0, seen = 0;
			for (size_t j = 0; j < out->nf; j++)
				seen |= !strcmp(out->f[j].id, src->id);
			if (seen)
				continue;
			for (size_t q = 0; q < n; q++) {
				double g = 0;
				for (size_t j = 0; j < runs[q].nf; j++)
					if (!strcmp(runs[q].f[j].id, src->id) && runs[q].f[j].gain > g)
						g = runs[q].f[j].gain;
				vals[k++] = g;
			}
			ALLOC_GROW(out->f, out->nf + 1, out->allocf);
			dst = &out->f[out->nf++];
			*dst = *src;
			dst->gain = median(vals, k);
		}
	}
	free(vals);
}

void run_summary_release(struct run_summary *s)
{
	free(s->source);
	free(s->step_source);
	free(s->m);
	free(s->f);
	memset(s, 0, sizeof(*s));
}
