/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ab_verdict.c - the verdict arithmetic of `memgate ab`: the rounds both sides gave, judged
 * (the mean of the log ratios against the tolerance, one-sided at each metric's share of the
 * run's alpha, a second look for what the first left undecided). No process and no file:
 * tests/test_verdict.c gives it made-up rounds.
 */
#include "judge/ab_case.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/calibration.h"
#include "judge/compare.h"
#include "judge/verdict.h"

void ab_case_release(struct ab_case *c)
{
	free(c->cut_base);
	for (size_t m = 0; m < c->n_metrics; m++) {
		free(c->metrics[m].base);
		free(c->metrics[m].head);
	}
	free(c->metrics);
}

/*
 * The rules' tolerances of metric @m of case @c, as this A/B judges it: when the sides
 * differ only in the QEMU or the kernel they run, a reference arm of the suite
 * (memgate's own program, the same on both sides) is context, not a verdict.
 */
struct tolerance ab_tolerance(const struct ab_opts *o, const struct ab_case *c,
			      const struct ab_metric *m)
{
	struct metric_def def = {.name = m->name, .unit = m->unit, .better = m->better};
	struct tolerance t = rules_tolerance(o->rules, c->suite, c->head_name, &def);

	if (m->reference && t.gate && (o->guests || o->qemu_only)) {
		t.gate = false;
		t.line = 0; /* not a rule's: this A/B's */
		t.why = o->guests
			    ? "memgate's own reference, the same program in both guests: they "
			      "differ in their kernel (context, not judged)"
			    : "memgate's own reference, the same program on both sides: they "
			      "differ in their QEMU only (context, not judged)";
	}
	return t;
}

/* What the tolerance and the spread of @x came from, for its message. */
static void judged_how(struct judged *x, size_t n, bool looked_twice, const struct ab_opts *o,
		       const struct verdict_noise *noise, bool simulated, unsigned int samples)
{
	const struct verdict_figures *f = &x->f;
	char spread[200];

	/* Only a calibrated width (@noise) raises the tolerance past the rule's. */
	if (noise && f->tolerance > x->tol.ab)
		snprintf(x->tol_from, sizeof(x->tol_from),
			 "the calibrated width: %.0f x %.3g%% of an A/A run, %.160s of %s, %zu A/A "
			 "rounds; the rule's %.0f%% is less",
			 VERDICT_WIDTH_FACTOR, 100 * noise->width, o->calib->path, o->calib->when,
			 noise->rounds, 100 * x->tol.ab);
	else
		rules_tolerance_from(&x->tol, x->tol_from, sizeof(x->tol_from));
	if (f->exact)
		snprintf(spread, sizeof(spread), "every round the same: the mean is exact%s",
			 simulated && o->guests ? " (instruction counts under icount)"
			 : simulated		? " (simulated counts)"
			 : o->calib		? " (no calibration for this host class and metric)"
						: " (no calibration for this host class)");
	else if (noise && f->calibrated)
		snprintf(
		    spread, sizeof(spread),
		    "z-test with the spread calibrated for this host class (sd %.3g%% a round, "
		    "%zu A/A rounds; these rounds' own: %.3g%%)",
		    100 * f->sd_used, noise->rounds, 100 * f->sd_own);
	else
		snprintf(spread, sizeof(spread),
			 "t-test with these rounds' own spread (sd %.3g%%): no calibration for "
			 "this host class%s, so the rule's tolerance applies",
			 100 * f->sd_own, o->calib ? " and metric" : "");
	snprintf(x->how, sizeof(x->how),
		 "%zu rounds in turn, balanced (base first in half; %u sample%s each)%s; the mean "
		 "of the log ratios, %s; one-sided at alpha %.3g (%.3g over %zu gated metrics and "
		 "%d looks)",
		 n, samples, samples == 1 ? "" : "s",
		 looked_twice ? ", more rounds after an undecided first look" : "", spread,
		 x->p_alpha, o->rules->alpha, x->m_family, o->confirm_rounds ? 2 : 1);
}

/*
 * The judged form of metric @m of @c: the mean of the log ratios of all its rounds (the
 * first look's, or both looks' when it was undecided at the first), at the case's alpha.
 */
static void judge_metric(const struct ab_case *c, const struct ab_metric *m,
			 const struct ab_opts *o, bool final, struct judged *x)
{
	/* A regression shown at the first look stays shown: each look has its share of alpha. */
	size_t n = final && m->shown_first ? m->first_stage : m->n;
	const struct verdict_noise *noise;

	memset(x, 0, sizeof(*x));
	snprintf(x->suite, sizeof(x->suite), "%s", c->suite);
	snprintf(x->case_name, sizeof(x->case_name), "%s", c->head_name);
	snprintf(x->metric, sizeof(x->metric), "%s", m->name);
	snprintf(x->unit, sizeof(x->unit), "%s", m->unit);
	snprintf(x->test_name, sizeof(x->test_name), "%s:%s",
		 strchr(c->key, '.') ? strchr(c->key, '.') + 1 : c->key, m->name);
	x->better = m->better;
	x->tol = ab_tolerance(o, c, m);
	/* A simulated count has no noise to calibrate: its rounds are exact. */
	noise = c->simulated ? NULL : calib_find(o->calib, c->head_name, m->name);
	x->v = verdict_rounds(m->base, m->head, n, m->better, x->tol.ab, noise, c->alpha, &x->f);
	x->tolerance = x->f.tolerance;
	x->p_alpha = c->alpha;
	x->m_family = o->gated_metrics;
	x->rounds_mean = true;
	x->n_v = n < JUDGED_ROUNDS ? n : JUDGED_ROUNDS;
	memcpy(x->base_v, m->base, x->n_v * sizeof(*m->base));
	memcpy(x->head_v, m->head, x->n_v * sizeof(*m->head));
	x->v_test = x->v;
	x->p = x->f.p;
	x->candidate = x->tol.gate;
	x->rejected = x->tol.gate && x->v == VERDICT_REGRESSION;
	/* Undecided at the last look, or noisier than this host class ever was: not a verdict.
	 * Reported as such (Jenkins: unstable), never a pass and never a failed build. */
	x->unstable = x->tol.gate && !x->f.undefined[0] &&
		      (x->v == VERDICT_UNSTABLE || (final && x->v == VERDICT_INCONCLUSIVE));
	judged_how(x, n, m->n > m->first_stage, o, noise, c->simulated,
		   c->simulated ? 1
		   : c->samples ? c->samples
				: o->samples);
	if (c->head_cut && (int)(m - c->metrics) == c->cut) {
		size_t used = strlen(x->how);

		snprintf(
		    x->how + used, sizeof(x->how) - used,
		    "; %u of head's rounds were stopped at %.3g x base's median (%.6g %s, rules "
		    "line %d) and count at that bound",
		    c->head_cut, c->cut_factor, c->cut_ms, m->unit, x->tol.line);
	}
}

/* The first look: flag the gated metrics it left undecided (past the tolerance, not shown). */
bool ab_flag_case(struct ab_case *c, const struct ab_opts *o)
{
	bool any = false;

	for (size_t m = 0; m < c->n_metrics; m++) {
		struct ab_metric *am = &c->metrics[m];
		struct judged x;

		am->first_stage = am->n;
		judge_metric(c, am, o, false, &x);
		am->flagged = x.tol.gate && x.v == VERDICT_INCONCLUSIVE && !x.f.undefined[0];
		am->shown_first = x.tol.gate && x.v == VERDICT_REGRESSION;
		any |= am->flagged;
	}
	return any;
}

/* The run's alpha, split evenly over its gated metrics and the looks at each: Bonferroni,
 * valid whatever the metrics' dependence and however many rounds a look adds. */
void ab_split_alpha(struct ab_case *cases, size_t n, struct ab_opts *o)
{
	for (size_t i = 0; i < n; i++)
		o->gated_metrics += cases[i].n_gated;
	for (size_t i = 0; i < n; i++)
		cases[i].alpha = o->rules->alpha /
				 (double)(o->gated_metrics ? o->gated_metrics : 1) /
				 (o->confirm_rounds ? 2 : 1);
}

/* Judge every metric with rounds (the looks already split alpha), and make the results. */
int ab_conclude_all(struct ab_case *cases, size_t n, const struct ab_opts *o,
		    struct ab_outcome *out)
{
	struct judged *j = NULL;
	size_t nj = 0, total = 0;

	for (size_t i = 0; i < n; i++)
		total += cases[i].n_metrics;
	j = calloc(total + 1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool compared = false;

		/* Compared when any metric has rounds: a stopped boot measures only its time. */
		for (size_t m = 0; m < cases[i].n_metrics; m++)
			if (cases[i].metrics[m].n) {
				judge_metric(&cases[i], &cases[i].metrics[m], o, true, &j[nj++]);
				compared = true;
			}
		out->cases_compared += compared;
	}
	return compare_results_make(j, nj, "ab", o->context ? o->context : "", &out->verdicts);
}

int ab_metric_add(struct ab_case *c, const struct ab_opts *o, const char *name, const char *unit,
		  enum metric_better better, bool reference, unsigned int rounds)
{
	struct ab_metric *m = &c->metrics[c->n_metrics++];

	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->better = better;
	m->reference = reference;
	m->base = calloc(rounds + 1, sizeof(*m->base));
	m->head = calloc(rounds + 1, sizeof(*m->head));
	if (!m->base || !m->head)
		return -ENOMEM;
	c->n_gated += ab_tolerance(o, c, m).gate;
	return 0;
}
