/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gate.c - judge gates on the samples of one run, and turn the verdicts into results. */
#include "judge/gate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/rules.h"
#include "util/text.h"

#define GATE_RESAMPLES 4000

/* The median of a[i] / b[i] and its bootstrap interval; -ENOMEM or -EINVAL (a zero). */
static int paired_ratio(const double *a, const double *b, size_t n, uint64_t seed,
			struct gate_figures *f)
{
	double *r = malloc(n * sizeof(*r));
	int ret = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++)
		if (b[i] == 0)
			ret = -EINVAL;
		else
			r[i] = a[i] / b[i];
	if (!ret) {
		f->ratio = stats_median(r, n);
		ret = stats_bootstrap_median_ci(r, n, GATE_RESAMPLES, 0.95, seed, &f->lo, &f->hi);
	}
	free(r);
	return ret;
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

enum gate_verdict gate_judge(enum gate_kind kind, double threshold, bool paired, const double *a,
			     size_t na, const double *b, size_t nb, uint64_t seed,
			     struct gate_figures *f)
{
	struct stats_mwu mwu = {.p = 1};

	memset(f, 0, sizeof(*f));
	if (!all_finite(a, na) || !all_finite(b, nb)) {
		f->ratio = f->lo = f->hi = NAN;
		f->p = 1;
		f->undefined = true;
		return GATE_INCONCLUSIVE;
	}
	f->median_a = stats_median(a, na);
	f->median_b = stats_median(b, nb);
	f->ratio = f->median_a / f->median_b;
	f->p = 1;
	if (kind == GATE_AT_LEAST) {
		f->ratio = f->median_a;
		if (stats_bootstrap_median_ci(a, na, GATE_RESAMPLES, 0.95, seed, &f->lo, &f->hi))
			f->lo = f->hi = f->ratio;
	} else if (paired && na == nb) {
		if (paired_ratio(a, b, na, seed, f))
			f->lo = f->hi = f->ratio;
	} else if (stats_bootstrap_ratio_ci(a, na, b, nb, GATE_RESAMPLES, 0.95, seed, &f->lo,
					    &f->hi)) {
		f->lo = f->hi = f->ratio;
	}
	if (!stats_mann_whitney(a, na, b, nb, &mwu))
		f->p = mwu.p;
	/* A zero divisor or a figure that is not finite leaves no ratio: never a pass (a NaN is
	 * over no threshold). */
	if (!isfinite(f->ratio) || !isfinite(f->lo) || !isfinite(f->hi)) {
		f->undefined = true;
		return GATE_INCONCLUSIVE;
	}
	switch (kind) {
	case GATE_RATIO_AT_MOST:
		if (f->hi <= threshold)
			return GATE_PASS;
		return f->lo > threshold ? GATE_FAIL : GATE_INCONCLUSIVE;
	case GATE_NOT_SLOWER:
		return f->lo > threshold ? GATE_FAIL : GATE_PASS;
	case GATE_AT_LEAST:
		if (f->lo >= threshold)
			return GATE_PASS;
		return f->hi < threshold ? GATE_FAIL : GATE_INCONCLUSIVE;
	case GATE_FASTER:
		/* Slower or equal: fail now. Faster but not surely: sample more. */
		if (f->hi < 1)
			return GATE_PASS;
		return f->ratio < 1 ? GATE_INCONCLUSIVE : GATE_FAIL;
	}
	return GATE_FAIL;
}

/* The one result whose full name matches @glob; NULL for none, and *many counts matches. */
static const struct case_result *find_result(const struct case_result *results, size_t n,
					     const char *glob, size_t *many)
{
	const struct case_result *found = NULL;
	char full[256];

	*many = 0;
	for (size_t i = 0; i < n; i++) {
		if (!text_glob(glob, case_full_name(results[i].inst, full, sizeof(full))))
			continue;
		(*many)++;
		found = &results[i];
	}
	return found;
}

static const char *kind_text(enum gate_kind k)
{
	return k == GATE_RATIO_AT_MOST ? "at most"
	       : k == GATE_NOT_SLOWER  ? "not slower than"
	       : k == GATE_AT_LEAST    ? "at least"
				       : "faster than";
}

static void set_message(struct case_result *r, enum case_outcome o, const char *msg)
{
	r->outcome = o;
	r->message = strdup(msg);
}

/* A gate can only judge cases that ran to completion with samples. */
static const struct metric_result *usable(const struct case_result *c, const struct gate_side *s,
					  struct case_result *r)
{
	const struct metric_result *m = case_result_metric(c, s->metric);
	char msg[512];

	if (c->outcome == OUTCOME_SKIP) {
		snprintf(msg, sizeof(msg), "%s was skipped: %s", c->inst->name,
			 c->message ? c->message : "");
		set_message(r, OUTCOME_SKIP, msg);
		return NULL;
	}
	if (c->outcome != OUTCOME_PASS && m && m->n) {
		/* Samples there are; what is missing is a case that ran to its end. */
		snprintf(msg, sizeof(msg),
			 "%s did not complete (%s%s%s): its %zu %s samples are not "
			 "judged",
			 c->inst->name, case_outcome_name(c->outcome), c->message ? ": " : "",
			 c->message ? c->message : "", m->n, s->metric);
		set_message(r, OUTCOME_ERROR, msg);
		return NULL;
	}
	if (c->outcome != OUTCOME_PASS || !m || !m->n) {
		snprintf(msg, sizeof(msg), "%s has no %s samples to judge (%s%s%s)", c->inst->name,
			 s->metric, case_outcome_name(c->outcome), c->message ? ": " : "",
			 c->message ? c->message : "");
		set_message(r, OUTCOME_ERROR, msg);
		return NULL;
	}
	return m;
}

/* Remember a case behind an INCONCLUSIVE gate, so that the caller can sample it again. */
static void involve(struct gate_results *out, size_t index)
{
	for (size_t i = 0; i < out->n_involved; i++)
		if (out->involved[i] == index)
			return;
	out->involved[out->n_involved++] = index;
}

/* The words before an INCONCLUSIVE verdict's figures: why it could not be told. */
static const char *inconclusive(enum gate_verdict v, const struct gate_figures *f)
{
	if (v != GATE_INCONCLUSIVE)
		return "";
	return f->undefined ? "INCONCLUSIVE (no ratio: a median or a sample is zero or not finite) "
			    : "INCONCLUSIVE (too noisy to tell; rerun with more -n) ";
}

static enum gate_verdict judge(const struct gate_def *g, const struct case_result *ca,
			       const struct case_result *cb, const struct run_opts *opts,
			       struct case_result *r)
{
	const struct metric_result *ma = usable(ca, &g->a, r), *mb;
	struct gate_figures f;
	enum gate_verdict v;
	char msg[1024];

	if (!ma || !(mb = usable(cb, &g->b, r)))
		return GATE_FAIL;
	v = gate_judge(g->kind, g->threshold, g->paired, ma->v, ma->n, mb->v, mb->n,
		       opts ? opts->seed : 1, &f);
	case_result_add_figure(r, "ratio", f.ratio);
	case_result_add_figure(r, "ratio_ci95_lo", f.lo);
	case_result_add_figure(r, "ratio_ci95_hi", f.hi);
	case_result_add_figure(r, "p_value", f.p);
	case_result_add_figure(r, "threshold", g->threshold);
	r->judged = (struct judged_figures){
	    .judged = true,
	    .value = f.ratio,
	    .lo = f.lo,
	    .hi = f.hi,
	    .bound = g->threshold,
	    .at_least = g->kind == GATE_AT_LEAST,
	    .unit = g->kind == GATE_AT_LEAST ? ma->def->unit : "x",
	};
	if (g->kind == GATE_AT_LEAST)
		snprintf(msg, sizeof(msg),
			 "%s%s of %s = %.4g (95%% CI %.4g..%.4g over %zu samples); threshold: at "
			 "least %.4g; %s",
			 inconclusive(v, &f), g->a.metric, ca->inst->name, f.ratio, f.lo, f.hi,
			 ma->n, g->threshold, g->why);
	else
		snprintf(
		    msg, sizeof(msg),
		    "%s%s of %s / %s of %s = %.4g (95%% CI %.4g..%.4g%s; medians %.6g vs %.6g %s "
		    "over %zu and %zu samples; Mann-Whitney p = %.2g); threshold: ratio %s %.4g; "
		    "%s",
		    inconclusive(v, &f), g->a.metric, ca->inst->name, g->b.metric, cb->inst->name,
		    f.ratio, f.lo, f.hi, g->paired ? ", paired" : "", f.median_a, f.median_b,
		    ma->def->unit, ma->n, mb->n, f.p,
		    g->kind == GATE_RATIO_AT_MOST ? "at most"
		    : g->kind == GATE_NOT_SLOWER  ? "at most (when significant)"
						  : "under 1, significantly, i.e.",
		    g->kind == GATE_FASTER ? 1.0 : g->threshold, g->why);
	if (v == GATE_PASS)
		r->output = strdup(msg);
	else
		set_message(r, OUTCOME_FAIL, msg);
	return v;
}

/*
 * Is gate @g's effect shown in @c (a / b at least its threshold, the 95% interval wholly
 * above it)? Its figures into @f. A gate without an effect has it shown.
 */
static bool effect_shown(const struct gate_def *g, const struct case_result *c, uint64_t seed,
			 struct gate_figures *f)
{
	const struct metric_result *a, *b;

	memset(f, 0, sizeof(*f));
	if (g->effect.threshold <= 0)
		return true;
	a = c ? case_result_metric(c, g->effect.a.metric) : NULL;
	b = c ? case_result_metric(c, g->effect.b.metric) : NULL;
	if (!a || !b || !a->n || !b->n)
		return false;
	/* "At most the threshold" failing is the ratio shown above it. */
	return gate_judge(GATE_RATIO_AT_MOST, g->effect.threshold, g->paired, a->v, a->n, b->v,
			  b->n, seed, f) == GATE_FAIL;
}

/* A PASS of gate @g whose effect @c does not show: UNSTABLE, saying why (it fails no build). */
static void effect_missing(const struct gate_def *g, const struct case_result *c,
			   const struct gate_figures *f, struct case_result *r)
{
	char msg[1400];

	snprintf(msg, sizeof(msg),
		 "UNSTABLE: the reference does not show what this gate is about on this host now: "
		 "%s / %s of %s = %.4g (95%% CI %.4g..%.4g), not surely at least %.4g (%s); a "
		 "pass would mean nothing: rerun on a quieter host. The gate said: %s",
		 g->effect.a.metric, g->effect.b.metric, c ? c->inst->name : g->effect.a.glob,
		 f->ratio, f->lo, f->hi, g->effect.threshold, g->effect.why,
		 r->output ? r->output : "");
	free(r->output);
	r->output = NULL;
	r->unstable = true;
	set_message(r, OUTCOME_FAIL, msg);
	case_result_add_figure(r, "effect", f->ratio);
	case_result_add_figure(r, "effect_ci95_lo", f->lo);
}

static int evaluate_one(const struct suite_def *s, const struct gate_def *g,
			const struct case_result *results, size_t n, const struct run_opts *opts,
			struct gate_results *out)
{
	size_t na, nb, ne = 0;
	const struct case_result *ca = find_result(results, n, g->a.glob, &na);
	const struct case_result *cb = find_result(results, n, g->b.glob, &nb);
	const struct case_result *ce =
	    g->effect.threshold > 0 ? find_result(results, n, g->effect.a.glob, &ne) : NULL;
	struct gate_figures f;
	enum gate_verdict v;
	const struct case_def def = {
	    .name = g->name, .group = "gates", .kind = CASE_GATE, .doc = kind_text(g->kind)};
	struct case_result *r;
	char msg[512];

	if (!na || !nb)
		return 0; /* filtered out: nothing to judge, nothing to report */
	r = result_set_add(&out->rows, s, NULL, g->name, &def);
	if (!r)
		return -ENOMEM;
	snprintf(r->timestamp, sizeof(r->timestamp), "%s", ca->timestamp);
	if (na > 1 || nb > 1) {
		snprintf(msg, sizeof(msg), "gate selector matches %zu and %zu cases, expected 1",
			 na, nb);
		set_message(r, OUTCOME_ERROR, msg);
		return 0;
	}
	v = judge(g, ca, cb, opts, r);
	if (v == GATE_PASS && !effect_shown(g, ce, opts ? opts->seed : 1, &f)) {
		effect_missing(g, ce, &f, r);
		v = GATE_INCONCLUSIVE; /* its case is sampled again */
	}
	if (v == GATE_INCONCLUSIVE) {
		involve(out, (size_t)(ca - results));
		involve(out, (size_t)(cb - results));
	}
	return 0;
}

/* The suite named @name among @suites, or NULL. */
static const struct suite_def *suite_named(const struct suite_def *const *suites, size_t n,
					   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(suites[i]->name, name))
			return suites[i];
	return NULL;
}

int gates_evaluate(const struct rules *rules, const struct suite_def *const *suites,
		   size_t n_suites, const struct case_result *results, size_t n,
		   const struct run_opts *opts, struct gate_results *out)
{
	size_t total = rules->n_gates;

	memset(out, 0, sizeof(*out));
	out->involved = calloc(2 * total + 1, sizeof(*out->involved));
	if (!out->involved || result_set_init(&out->rows, total)) {
		gates_release(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rules->n_gates; i++) {
		const struct suite_def *s = suite_named(suites, n_suites, rules->gates[i].suite);

		if (s && evaluate_one(s, &rules->gates[i].def, results, n, opts, out)) {
			gates_release(out);
			return -ENOMEM;
		}
	}
	return 0;
}

void gates_release(struct gate_results *g)
{
	result_set_release(&g->rows);
	free(g->involved);
	memset(g, 0, sizeof(*g));
}

/* The gate's verdict on @r's own samples is a clear pass: its interval lies wholly on the
 * passing side of the threshold (a not_slower gate passes on an undecided interval too, which
 * is no reason to stop sampling). */
static bool clear_pass(const struct gate_def *g, const struct case_result *r, uint64_t seed)
{
	const struct metric_result *a = case_result_metric(r, g->a.metric);
	const struct metric_result *b = case_result_metric(r, g->b.metric);
	struct gate_figures f, e;

	if (!a || !a->n || (g->kind != GATE_AT_LEAST && (!b || !b->n)))
		return false;
	if (gate_judge(g->kind, g->threshold, g->paired, a->v, a->n, b ? b->v : NULL, b ? b->n : 0,
		       seed, &f) != GATE_PASS)
		return false;
	/* Sampling stops early only where the reference shows the gate's effect. */
	if (!effect_shown(g, r, seed, &e))
		return false;
	return g->kind != GATE_NOT_SLOWER || f.hi <= g->threshold;
}

/* A gated metric's median is known to within a quarter of its baseline tolerance. */
static bool precise(const struct metric_result *m, double tolerance, uint64_t seed)
{
	double med, lo, hi;

	if (tolerance <= 0)
		return true;
	med = stats_median(m->v, m->n);
	if (stats_bootstrap_median_ci(m->v, m->n, GATE_RESAMPLES, 0.95, seed, &lo, &hi))
		return false;
	return isfinite(med) && (hi - lo) / 2 <= tolerance / 4 * fabs(med);
}

bool gates_settled(const struct rules *rules, const struct case_result *partial, bool baseline,
		   uint64_t seed)
{
	const char *suite = partial->inst->suite->name;
	char full[256];

	case_full_name(partial->inst, full, sizeof(full));
	for (size_t i = 0; i < rules->n_gates; i++) {
		const struct gate_def *g = &rules->gates[i].def;
		bool a = text_glob(g->a.glob, full);
		bool b = g->kind != GATE_AT_LEAST && text_glob(g->b.glob, full);

		if (strcmp(rules->gates[i].suite, suite) || (!a && !b))
			continue;
		/* A gate across two cases is judged on both: this one samples in full. */
		if (!a || (g->kind != GATE_AT_LEAST && !b))
			return false;
		if (!clear_pass(g, partial, seed))
			return false;
	}
	for (unsigned int m = 0; baseline && m < partial->inst->def->n_metrics; m++) {
		const struct metric_result *mr = &partial->metrics[m];
		struct tolerance t;

		if (!mr->n)
			continue;
		t = rules_tolerance(rules, suite, full, mr->def);
		if (t.gate && !precise(mr, t.baseline, seed))
			return false;
	}
	return true;
}
