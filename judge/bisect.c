/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bisect.c - the search for a regression's first bad commit, per metric, and its report. */
#include "judge/bisect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/stats.h"

/* How surely a step's figure must lie on one side of the midpoint to be classed (one-sided,
 * t on the pooled spread): a wrong class names a wrong commit, so 1 in 1000 a metric a step. */
#define BISECT_P 0.001

/* The mean of the logs of @v and their sum of squared deviations; false when a figure has no log.
 */
static bool log_stats(const double *v, size_t n, double *mean, double *ss)
{
	double s = 0;

	*ss = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0) || !isfinite(v[i]))
			return false;
		s += log(v[i]);
	}
	*mean = n ? s / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		*ss += (log(v[i]) - *mean) * (log(v[i]) - *mean);
	return n > 0;
}

/*
 * Is @x (a difference of log means whose standard error is sqrt(@var_unit x @scale), @var_unit
 * pooled on @df degrees of freedom) shown to be above 0, one-sided at BISECT_P? Exact figures
 * (no spread at all) show any difference.
 */
static bool shown_above(double x, double var_unit, double scale, double df)
{
	if (var_unit == 0)
		return x > 0;
	if (df < 1)
		return false;
	return x / sqrt(var_unit * scale) > stats_t_quantile(1 - BISECT_P, df);
}

enum bisect_class bisect_classify(const double *g, size_t ng, const double *b, size_t nb,
				  const double *s, size_t ns)
{
	double mg, sg, mb, sb, ms, ss, df, var, scale, x;

	if (!log_stats(g, ng, &mg, &sg) || !log_stats(b, nb, &mb, &sb) ||
	    !log_stats(s, ns, &ms, &ss) || mb == mg)
		return BISECT_UNKNOWN;
	/* One spread for all: builds of one tree measured on one host, round by round. */
	df = (double)(ng - 1) + (double)(nb - 1) + (double)(ns - 1);
	var = df > 0 ? (sg + sb + ss) / df : 0;
	scale = (1 / (double)ng + 1 / (double)nb) / 4 + 1 / (double)ns;
	/* Toward BAD is positive, whichever way BAD lies. */
	x = (ms - (mg + mb) / 2) * (mb > mg ? 1 : -1);
	if (shown_above(x, var, scale, df))
		return BISECT_BAD;
	return shown_above(-x, var, scale, df) ? BISECT_GOOD : BISECT_UNKNOWN;
}

/* Does metric @m regress from GOOD to BAD past its tolerance, and is a change shown? */
static bool changed(const struct bisect *bs, size_t m, bool *shown)
{
	const struct bisect_figures *g = &bs->figs[0], *b = &bs->figs[bs->n - 1];
	double mg, sg, mb, sb, worse, df;

	*shown = false;
	if (!log_stats(g->v[m], g->n[m], &mg, &sg) || !log_stats(b->v[m], b->n[m], &mb, &sb))
		return false;
	worse = bs->metrics[m].better == LOWER_IS_BETTER ? mb - mg : mg - mb;
	df = (double)(g->n[m] - 1) + (double)(b->n[m] - 1);
	*shown = shown_above(fabs(mb - mg), df > 0 ? (sg + sb) / df : 0,
			     1 / (double)g->n[m] + 1 / (double)b->n[m], df);
	return worse > log1p(bs->metrics[m].tolerance);
}

/* One more round of commit @idx; 125 (it does not build) or another stop passed on. */
static int measure(const struct bisect *bs, const struct bisect_ops *ops, size_t idx)
{
	struct bisect_figures *f = &bs->figs[idx];
	int ret = ops->measure(ops->arg, idx, f);

	for (size_t m = 0; !ret && m < bs->n_metrics; m++)
		if (!f->n[m] || f->n[m] > BISECT_MAX_SAMPLES)
			ret = -EPROTO;
	return ret;
}

static const char *class_name(enum bisect_class c)
{
	static const char *const names[] = {"untried", "good", "bad", "unknown", "skip"};

	return names[c];
}

/* The step's line on the log: the commit, its build, each metric it was classed for with its
 * figure (the median of its rounds), the rounds; @label in place of "step N" (GOOD, BAD). */
static void log_step(const struct bisect *bs, const struct bisect_ops *ops, size_t idx,
		     const bool *open, unsigned int rounds, const char *label)
{
	const struct bisect_figures *f = &bs->figs[idx];
	const char *said = ops->describe ? ops->describe(ops->arg, idx) : "";

	if (!ops->log)
		return;
	if (label)
		fprintf(ops->log, "%s", label);
	else
		fprintf(ops->log, "step %zu", bs->steps);
	fprintf(ops->log, ": %s:%s%s", ops->commit_names ? ops->commit_names[idx] : "?",
		*said ? " " : "", said);
	for (size_t m = 0; m < bs->n_metrics; m++) {
		if (!open[m])
			continue;
		const char *c = strchr(bs->metrics[m].case_name, '.');

		/* "memslots[slots=509]:kvm.insert.median": the case without its suite and group. */
		c = c && strchr(c + 1, '.') ? strchr(c + 1, '.') + 1 : bs->metrics[m].case_name;
		if (f->n[m])
			fprintf(ops->log, "; %s:%s %.6g %s", c, bs->metrics[m].name,
				stats_median(f->v[m], f->n[m]), class_name(bs->cls[idx][m]));
		else
			fprintf(ops->log, "; %s:%s %s", c, bs->metrics[m].name,
				class_name(bs->cls[idx][m]));
	}
	fprintf(ops->log, " (%u round%s)\n", rounds, rounds == 1 ? "" : "s");
	fflush(ops->log);
}

/* GOOD and BAD, measured until each metric's change is shown or the rounds run out. */
static int measure_ends(struct bisect *bs, const struct bisect_ops *ops)
{
	int ret = 0;
	unsigned int rounds = 0;

	for (unsigned int r = 0; !ret && r < ops->max_rounds; r++) {
		bool all_shown = true;

		rounds++;
		ret = measure(bs, ops, 0);
		if (!ret)
			ret = measure(bs, ops, bs->n - 1);
		for (size_t m = 0; !ret && m < bs->n_metrics; m++) {
			bool shown;

			if (changed(bs, m, &shown) && !shown)
				all_shown = false;
		}
		if (!ret && all_shown && r + 1 >= 2)
			break;
	}
	for (size_t m = 0; !ret && m < bs->n_metrics; m++) {
		bool shown, c = changed(bs, m, &shown);

		bs->answer[m] = (struct bisect_answer){.no_change = !c || !shown, .hi = bs->n - 1};
		bs->cls[0][m] = BISECT_GOOD;
		bs->cls[bs->n - 1][m] = BISECT_BAD;
	}
	if (!ret) {
		bool all[BISECT_MAX_METRICS];

		for (size_t m = 0; m < BISECT_MAX_METRICS; m++)
			all[m] = true;
		log_step(bs, ops, 0, all, rounds, "GOOD");
		log_step(bs, ops, bs->n - 1, all, rounds, "BAD");
	}
	return ret;
}

/* The untried commit of metric @m's open range nearest its middle, or 0 when none is left. */
static size_t next_commit(const struct bisect *bs, size_t m)
{
	const struct bisect_answer *a = &bs->answer[m];
	size_t mid = (a->lo + a->hi) / 2;

	if (a->no_change)
		return 0;
	for (size_t d = 0; d < a->hi - a->lo; d++) {
		if (mid + d < a->hi && mid + d > a->lo && bs->cls[mid + d][m] == BISECT_UNTRIED)
			return mid + d;
		if (mid >= d && mid - d > a->lo && bs->cls[mid - d][m] == BISECT_UNTRIED)
			return mid - d;
	}
	return 0;
}

/* Is commit @idx inside metric @m's open range? */
static bool in_range(const struct bisect *bs, size_t m, size_t idx)
{
	return !bs->answer[m].no_change && idx > bs->answer[m].lo && idx < bs->answer[m].hi;
}

/* Class commit @idx for each metric @open (whose range holds it); true when one is unknown. */
static bool classify_step(struct bisect *bs, size_t idx, const bool *open)
{
	const struct bisect_figures *g = &bs->figs[0], *b = &bs->figs[bs->n - 1],
				    *s = &bs->figs[idx];
	bool unknown = false;

	for (size_t m = 0; m < bs->n_metrics; m++) {
		if (!open[m])
			continue;
		bs->cls[idx][m] =
		    bisect_classify(g->v[m], g->n[m], b->v[m], b->n[m], s->v[m], s->n[m]);
		unknown |= bs->cls[idx][m] == BISECT_UNKNOWN;
	}
	return unknown;
}

/* Commit @idx measured until each metric it can narrow is classed, then the ranges narrowed. */
static int step(struct bisect *bs, const struct bisect_ops *ops, size_t idx)
{
	bool open[BISECT_MAX_METRICS] = {false};
	unsigned int rounds = 0;
	int ret;

	for (size_t m = 0; m < bs->n_metrics; m++)
		open[m] = in_range(bs, m, idx);
	do {
		ret = measure(bs, ops, idx);
		rounds++;
	} while (!ret && classify_step(bs, idx, open) && rounds < ops->max_rounds);
	bs->steps++;
	for (size_t m = 0; ret == 125 && m < bs->n_metrics; m++)
		if (open[m])
			bs->cls[idx][m] = BISECT_SKIP;
	if (ret && ret != 125)
		return ret;
	for (size_t m = 0; m < bs->n_metrics; m++) {
		if (open[m] && bs->cls[idx][m] == BISECT_GOOD)
			bs->answer[m].lo = idx;
		else if (open[m] && bs->cls[idx][m] == BISECT_BAD)
			bs->answer[m].hi = idx;
	}
	log_step(bs, ops, idx, open, rounds, NULL);
	return 0;
}

int bisect_run(struct bisect *bs, const struct bisect_ops *ops)
{
	int ret;

	if (bs->n < 2 || !bs->n_metrics || bs->n_metrics > BISECT_MAX_METRICS || !ops->max_rounds)
		return -EINVAL;
	bs->figs = calloc(bs->n, sizeof(*bs->figs));
	bs->cls = calloc(bs->n, sizeof(*bs->cls));
	bs->steps = 0;
	if (!bs->figs || !bs->cls)
		return -ENOMEM;
	ret = measure_ends(bs, ops);
	for (size_t m = 0; !ret && m < bs->n_metrics;) {
		size_t idx = next_commit(bs, m);

		if (!idx) {
			m++;
			continue;
		}
		/* A commit measured for one metric serves every other whose range holds it. */
		ret = step(bs, ops, idx);
		m = 0;
	}
	return ret;
}

void bisect_release(struct bisect *bs)
{
	free(bs->figs);
	free(bs->cls);
	bs->figs = NULL;
	bs->cls = NULL;
}
