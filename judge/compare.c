/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare.c - judge every shared metric, correct for the run's many verdicts, make results. */
#include "judge/compare.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/stats.h"
#include "util/util.h"

/* The suite_defs of the verdicts: JUnit classnames memgate.ab.SUITE and memgate.baseline.SUITE. */
static const struct suite_def ab_suite = {.name = "ab", .doc = "head against base, interleaved"};
static const struct suite_def baseline_suite = {
    .name = "baseline", .doc = "this run against earlier ones of this host class"};

size_t compare_correct(struct judged *j, size_t n, double alpha)
{
	double *p = calloc(n ? n : 1, sizeof(*p));
	bool *reject = malloc((n ? n : 1) * sizeof(*reject));
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), k = 0;

	for (size_t i = 0; i < n; i++)
		j[i].rejected = false;
	if (!p || !reject || !idx) {
		/* Out of memory: nothing is shown to regress, and the caller says so. */
		free(p);
		free(reject);
		free(idx);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!j[i].candidate)
			continue;
		idx[k] = i;
		p[k++] = j[i].p;
	}
	stats_holm(p, k, alpha, reject);
	for (size_t i = 0; i < k; i++)
		j[idx[i]].rejected = reject[i] && j[idx[i]].v_test == VERDICT_REGRESSION;
	free(p);
	free(reject);
	free(idx);
	return k;
}

static int grow(struct judged **j, size_t n, size_t *cap)
{
	struct judged *g;

	if (n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 64;
	g = realloc(*j, *cap * sizeof(*g));
	if (!g)
		return -ENOMEM;
	*j = g;
	return 0;
}

/* "group.name[params]:metric" from the case's full name (the suite is the JUnit class). */
static void test_name(struct judged *x)
{
	const char *dot = strchr(x->case_name, '.');

	snprintf(x->test_name, sizeof(x->test_name), "%s:%s", dot ? dot + 1 : x->case_name,
		 x->metric);
}

/* Judge one metric of head against the same metric of every base run that has it. */
/* The metric @name of base run @r's case like @full_name, when that case passed: a case that
 * failed or broke there measured something else, or nothing, and is no baseline. */
static const struct hist_metric *base_metric(const struct hist_run *r, const char *full_name,
					     const char *name)
{
	const struct hist_case *c = hist_case(r, full_name);

	return c && !strcmp(c->outcome, "PASS") ? hist_metric(c, name) : NULL;
}

static int judge_runs(const struct hist_run *base, size_t n_base, const struct hist_case *hc,
		      const struct hist_metric *hm, const struct rules *rules, uint64_t seed,
		      struct judged *x)
{
	size_t total = 0, runs = 0, *len = calloc(n_base + 1, sizeof(*len));
	double *pool = NULL;
	struct metric_def def = {.name = hm->name, .unit = hm->unit, .better = hm->better};

	for (size_t r = 0; r < n_base; r++) {
		const struct hist_metric *bm = base_metric(&base[r], hc->full_name, hm->name);

		total += bm ? bm->n : 0;
	}
	pool = malloc((total + 1) * sizeof(*pool));
	if (!len || !pool) {
		free(len);
		free(pool);
		return -ENOMEM;
	}
	total = 0;
	for (size_t r = 0; r < n_base; r++) {
		const struct hist_metric *bm = base_metric(&base[r], hc->full_name, hm->name);

		if (!bm || !bm->n)
			continue;
		memcpy(pool + total, bm->v, bm->n * sizeof(*pool));
		total += bm->n;
		len[runs++] = bm->n;
	}
	memset(x, 0, sizeof(*x));
	snprintf(x->suite, sizeof(x->suite), "%s", hc->suite);
	snprintf(x->case_name, sizeof(x->case_name), "%s", hc->full_name);
	snprintf(x->metric, sizeof(x->metric), "%s", hm->name);
	snprintf(x->unit, sizeof(x->unit), "%s", hm->unit);
	test_name(x);
	x->better = hm->better;
	x->tol = rules_tolerance(rules, hc->suite, hc->full_name, &def);
	x->tolerance = x->tol.baseline;
	x->v = runs ? verdict_runs(pool, len, runs, hm->v, hm->n, hm->better, x->tolerance,
				   util_fnv1a64(seed, x->test_name), &x->f)
		    : VERDICT_PASS;
	x->v_test = x->v;
	x->p = x->f.p;
	x->candidate =
	    runs && x->tol.gate && (x->v == VERDICT_REGRESSION || x->v == VERDICT_INCONCLUSIVE);
	snprintf(x->how, sizeof(x->how),
		 "%zu samples against %zu of %zu base runs, two-level "
		 "bootstrap",
		 hm->n, total, runs);
	free(len);
	free(pool);
	return runs ? 1 : 0;
}

int compare_runs(const struct hist_run *base, size_t n_base, const struct hist_run *head,
		 const struct rules *rules, uint64_t seed, struct judged **j, size_t *n)
{
	size_t cap = *n;

	for (size_t c = 0; c < head->n_cases; c++) {
		const struct hist_case *hc = &head->cases[c];

		if (strcmp(hc->kind, "perf") || strcmp(hc->outcome, "PASS"))
			continue;
		for (size_t m = 0; m < hc->n_metrics; m++) {
			int got;

			if (!hc->metrics[m].n || grow(j, *n, &cap))
				continue;
			got = judge_runs(base, n_base, hc, &hc->metrics[m], rules, seed, &(*j)[*n]);
			if (got < 0)
				return got;
			*n += (size_t)got;
		}
	}
	compare_correct(*j, *n, rules->alpha);
	return 0;
}

char *compare_context(const struct hist_run *base, const struct hist_run *head, char *buf,
		      size_t len)
{
	snprintf(buf, len,
		 "base: memgate %s (%s)%s%s on kernel %s, glibc %s%s%s; head: memgate "
		 "%s (%s)%s%s on kernel %s, glibc %s%s%s",
		 base->version, base->commit, base->label[0] ? ", " : "", base->label, base->kernel,
		 base->glibc, base->qemu[0] ? ", QEMU " : "", base->qemu, head->version,
		 head->commit, head->label[0] ? ", " : "", head->label, head->kernel, head->glibc,
		 head->qemu[0] ? ", QEMU " : "", head->qemu);
	return buf;
}

/* The outcome of @x (@r marked unstable when it is not a verdict) and the words before its
 * figures (@buf holds them when they are made). */
static enum case_outcome outcome_of(const struct judged *x, struct case_result *r,
				    const char **what, char *buf, size_t len)
{
	if (!x->tol.gate) {
		*what = "reported, not gated";
		return OUTCOME_SKIP;
	}
	if (x->f.undefined[0]) {
		/* Nothing was compared: never a pass. */
		snprintf(buf, len, "INCONCLUSIVE (no ratio to judge: %s)", x->f.undefined);
		*what = buf;
		return OUTCOME_FAIL;
	}
	if (x->rejected) {
		*what = "REGRESSION";
		return OUTCOME_FAIL;
	}
	if (x->unstable) {
		/* Not a verdict: a JUnit failure Jenkins shows as unstable, never a failed build.
		 */
		r->unstable = true;
		*what =
		    x->v == VERDICT_UNSTABLE
			? "UNSTABLE (these rounds are far noisier than this host class's "
			  "calibration: not judged; rerun on a quiet agent)"
			: "UNSTABLE (undecided after every round: past the tolerance, not shown "
			  "at its alpha; not failed: rerun, or calibrate this host class)";
		return OUTCOME_FAIL;
	}
	if (x->candidate && !x->rounds_mean &&
	    (x->v_test == VERDICT_REGRESSION || x->v_test == VERDICT_INCONCLUSIVE)) {
		*what = "INCONCLUSIVE (past the tolerance where it was tested, but not shown after "
			"the family-wise correction: fails until it is)";
		return OUTCOME_FAIL;
	}
	*what = x->v == VERDICT_IMPROVED ? "improved"
		: x->candidate		 ? "within the tolerance on the confirming data"
					 : "within the tolerance";
	return OUTCOME_PASS;
}

/* The message a reader acts on: @what, then the figures of @x, their tolerance and test. */
static void verdict_message(const struct judged *x, const char *what, const char *context,
			    char *msg, size_t len)
{
	const struct verdict_figures *f = &x->f;
	char from[400], tol[460], figures[160];

	if (x->tol_from[0]) {
		snprintf(tol, sizeof(tol), "%.3g%% (%s)", 100 * x->tolerance, x->tol_from);
	} else {
		rules_tolerance_from(&x->tol, from, sizeof(from));
		snprintf(tol, sizeof(tol), "%.0f%% (%s)", 100 * x->tolerance, from);
	}
	/* What the ratio is the ratio of: the deciding rounds' geometric means (A/B), which it
	 * equals, or the medians of all samples (baselines). */
	if (x->rounds_mean)
		snprintf(figures, sizeof(figures), "geometric means of the %zu deciding rounds",
			 f->n_base);
	else
		snprintf(figures, sizeof(figures), "medians");
	snprintf(msg, len,
		 "%s: %s of %s: head %.6g vs base %.6g %s (%s), %.4gx %s (95%% CI %.4g..%.4g), "
		 "tolerance %s; p = %.3g that it is within the tolerance (%s), Mann-Whitney p = "
		 "%.3g; %s",
		 what, x->metric, x->case_name, f->head_median, f->base_median, x->unit, figures,
		 f->worse,
		 x->better == LOWER_IS_BETTER ? "as slow or large (lower is better)"
					      : "as low (higher is better)",
		 f->worse_lo, f->worse_hi, tol, f->p, x->how, f->p_mw, context);
}

/* @x's figures on @r: as numbers for the reports, and as properties for the JSON's readers. */
static void verdict_figures_of(const struct judged *x, struct case_result *r)
{
	const struct verdict_figures *f = &x->f;
	const struct {
		const char *name;
		double value;
	} figs[] = {
	    {"base_median", f->base_median}, {"head_median", f->head_median},
	    {"worse_ratio", f->worse},	     {"worse_ci95_lo", f->worse_lo},
	    {"worse_ci95_hi", f->worse_hi},  {"p_value", f->p},
	    {"p_mann_whitney", f->p_mw},     {"tolerance", x->tolerance},
	    {"n_base", (double)f->n_base},   {"n_head", (double)f->n_head},
	};

	for (size_t i = 0; i < ARRAY_SIZE(figs); i++)
		case_result_add_figure(r, figs[i].name, figs[i].value);
	case_result_add_prop(r, "verdict", verdict_name(x->v));
	case_result_add_prop(r, "judged", x->how);
	r->judged = (struct judged_figures){
	    .judged = true,
	    .value = f->worse,
	    .lo = f->worse_lo,
	    .hi = f->worse_hi,
	    .bound = 1 + x->tolerance,
	    .unit = "x (head / base, the worse way)",
	    .verdict = verdict_name(x->v),
	};
}

/* The outcome and the message a reader acts on, and the figures of @x on @r. */
static void conclude(const struct judged *x, const char *context, struct case_result *r)
{
	char undefined[200], msg[2400];
	const char *what;
	enum case_outcome o = outcome_of(x, r, &what, undefined, sizeof(undefined));

	verdict_message(x, what, context, msg, sizeof(msg));
	if (o == OUTCOME_PASS)
		r->output = strdup(msg);
	else
		case_result_set_outcome(r, o, msg);
	verdict_figures_of(x, r);
}

int compare_results_make(struct judged *j, size_t n, const char *mode, const char *context,
			 struct compare_results *out)
{
	const struct suite_def *suite = strcmp(mode, "ab") ? &baseline_suite : &ab_suite;

	memset(out, 0, sizeof(*out));
	out->judged = j;
	out->metric_defs = calloc(2 * n + 1, sizeof(*out->metric_defs));
	if (!out->metric_defs || result_set_init(&out->rows, n + 1)) {
		compare_results_release(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct metric_def *md = &out->metric_defs[2 * i];
		const struct case_def def = {.name = j[i].test_name,
					     .group = j[i].suite,
					     .kind = CASE_GATE,
					     .doc = "head against base",
					     .metrics = j[i].n_v ? md : NULL,
					     .n_metrics = j[i].n_v ? 2 : 0};
		struct case_result *r;

		/* A/B verdicts carry the rounds of both sides, as two metrics of the verdict. */
		md[0] = (struct metric_def){"base", j[i].unit, j[i].better};
		md[1] = (struct metric_def){"head", j[i].unit, j[i].better};
		r = result_set_add(&out->rows, suite, NULL, j[i].test_name, &def);
		if (!r) {
			compare_results_release(out);
			return -ENOMEM;
		}
		for (size_t k = 0; k < j[i].n_v; k++) {
			case_result_add_sample(&r->metrics[0], j[i].base_v[k], 0);
			case_result_add_sample(&r->metrics[1], j[i].head_v[k], 0);
		}
		if (j[i].n_v)
			case_result_summarise(r, util_fnv1a64(UTIL_FNV1A64_INIT, j[i].test_name));
		conclude(&j[i], context, r);
	}
	return 0;
}

void compare_results_release(struct compare_results *out)
{
	result_set_release(&out->rows);
	free(out->metric_defs);
	free(out->judged);
	memset(out, 0, sizeof(*out));
}

int compare_results_skip(const char *mode, const char *group, const char *why,
			 struct compare_results *out)
{
	const struct case_def def = {
	    .name = "gates", .group = group, .kind = CASE_GATE, .doc = "nothing to compare with"};
	struct case_result *r;
	int ret = compare_results_make(NULL, 0, mode, "", out);

	if (ret)
		return ret;
	/* compare_results_make() left room for one more: the SKIP that says why none ran. */
	r = result_set_add(&out->rows, strcmp(mode, "ab") ? &baseline_suite : &ab_suite, NULL,
			   "gates", &def);
	if (!r) {
		compare_results_release(out);
		return -ENOMEM;
	}
	case_result_set_outcome(r, OUTCOME_SKIP, why);
	return 0;
}
