/* SPDX-License-Identifier: GPL-2.0-or-later */
/* verdict.c - direction-aware ratios, their intervals and one-sided p-values, per metric. */
#include "judge/verdict.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/stats.h"
#include "util/util.h"

static unsigned int resamples = VERDICT_DEFAULT_RESAMPLES;

void verdict_set_resamples(unsigned int n)
{
	resamples = n >= 40 ? n : 40;
}

const char *verdict_name(enum verdict v)
{
	static const char *const names[] = {"pass", "improved", "inconclusive", "regression",
					    "unstable"};

	return (size_t)v < ARRAY_SIZE(names) ? names[v] : "?";
}

/* Head against base as a worse-is-over-1 ratio. */
static double worse_of(double base, double head, enum metric_better better)
{
	return better == LOWER_IS_BETTER ? head / base : base / head;
}

/*
 * Does base against head give a ratio? Both zero is equal (a count of nothing on both sides);
 * one zero, or a figure that is not finite, has none: say why in @why. Returns true when it does.
 */
static bool has_ratio(double base, double head, char *why, size_t len)
{
	if (!isfinite(base) || !isfinite(head))
		snprintf(why, len, "%s is not a finite number", isfinite(base) ? "head" : "base");
	else if ((base == 0) != (head == 0))
		snprintf(why, len, "%s is 0 and %s is not", base == 0 ? "base" : "head",
			 base == 0 ? "head" : "base");
	else if (base < 0 || head < 0)
		snprintf(why, len, "%s is negative", base < 0 ? "base" : "head");
	else
		return true;
	return false;
}

/* The verdict the figures earn against 1 + @tolerance. */
static enum verdict classify(const struct verdict_figures *f, double tolerance)
{
	double bound = 1 + tolerance;

	if (f->worse_lo > bound)
		return VERDICT_REGRESSION;
	if (f->worse > bound)
		return VERDICT_INCONCLUSIVE;
	if (f->worse_hi < 1 / bound)
		return VERDICT_IMPROVED;
	return VERDICT_PASS;
}

static void mann_whitney(const double *base, size_t nb, const double *head, size_t nh,
			 struct verdict_figures *f)
{
	struct stats_mwu mwu;

	f->p_mw = stats_mann_whitney(head, nh, base, nb, &mwu) ? 1 : mwu.p;
}

enum verdict verdict_paired(const double *base, const double *head, size_t n,
			    enum metric_better better, double tolerance, uint64_t seed,
			    struct verdict_figures *f)
{
	double *r = malloc((n ? n : 1) * sizeof(*r)), *d = malloc((n ? n : 1) * sizeof(*d));
	size_t k = 0;

	memset(f, 0, sizeof(*f));
	f->p = f->p_mw = 1;
	f->n_base = f->n_head = n;
	if (!r || !d || !n)
		goto out;
	f->base_median = stats_median(base, n);
	f->head_median = stats_median(head, n);
	for (size_t i = 0; i < n; i++) {
		char why[64];
		/* Both zero: the same (1). */
		double w = base[i] == 0 && head[i] == 0 ? 1 : worse_of(base[i], head[i], better);

		/* A round without a ratio is no evidence of a pass: the verdict cannot be made. */
		if (!has_ratio(base[i], head[i], why, sizeof(why))) {
			snprintf(f->undefined, sizeof(f->undefined), "round %zu of %zu: %s", i + 1,
				 n, why);
			k = 0;
			goto out;
		}
		r[k] = w;
		d[k++] = log(w) - log1p(tolerance);
	}
	if (!k)
		goto out;
	f->worse = stats_median(r, k);
	if (stats_bootstrap_median_ci(r, k, resamples, 0.95, seed, &f->worse_lo, &f->worse_hi))
		f->worse_lo = f->worse_hi = f->worse;
	if (k < 2 || stats_t_greater(d, k, &f->p))
		f->p = 1;
	mann_whitney(base, n, head, n, f);
out:
	free(r);
	free(d);
	if (f->undefined[0])
		return VERDICT_INCONCLUSIVE;
	return k ? classify(f, tolerance) : VERDICT_PASS;
}

/* One two-level resample of the base runs: runs drawn with replacement, then samples. */
static void resample_runs(const double *base, const size_t *run_len, const size_t *run_off,
			  size_t n_runs, struct stats_rng *rng, double *out, size_t *n_out)
{
	*n_out = 0;
	for (size_t r = 0; r < n_runs; r++) {
		size_t pick = (size_t)stats_rng_below(rng, n_runs);

		for (size_t i = 0; i < run_len[pick]; i++)
			out[(*n_out)++] =
			    base[run_off[pick] + (size_t)stats_rng_below(rng, run_len[pick])];
	}
}

enum verdict verdict_runs(const double *base, const size_t *run_len, size_t n_runs,
			  const double *head, size_t n_head, enum metric_better better,
			  double tolerance, uint64_t seed, struct verdict_figures *f)
{
	size_t n_base = 0, longest = 0, at_or_under = 0, nb;
	size_t *off = calloc(n_runs ? n_runs : 1, sizeof(*off));
	double *rb = NULL, *rh = NULL, *ws = NULL;
	struct stats_rng rng;

	memset(f, 0, sizeof(*f));
	f->p = f->p_mw = 1;
	for (size_t r = 0; r < n_runs; r++) {
		if (off)
			off[r] = n_base;
		n_base += run_len[r];
		longest = run_len[r] > longest ? run_len[r] : longest;
	}
	f->n_base = n_base;
	f->n_head = n_head;
	rb = malloc((n_runs * longest + 1) * sizeof(*rb));
	rh = malloc((n_head + 1) * sizeof(*rh));
	ws = malloc(resamples * sizeof(*ws));
	if (!off || !rb || !rh || !ws || !n_base || !n_head)
		goto out;
	f->base_median = stats_median(base, n_base);
	f->head_median = stats_median(head, n_head);
	if (!has_ratio(f->base_median, f->head_median, f->undefined, sizeof(f->undefined)))
		goto out;
	f->worse = f->base_median == 0 ? 1 : worse_of(f->base_median, f->head_median, better);
	stats_rng_seed(&rng, seed);
	for (size_t b = 0; b < resamples; b++) {
		resample_runs(base, run_len, off, n_runs, &rng, rb, &nb);
		for (size_t i = 0; i < n_head; i++)
			rh[i] = head[stats_rng_below(&rng, n_head)];
		double mb = stats_median(rb, nb), mh = stats_median(rh, n_head);

		/* A resample of zeros on both sides is as equal as the medians were. */
		ws[b] = mb == 0 && mh == 0 ? 1 : worse_of(mb, mh, better);
		at_or_under += ws[b] <= 1 + tolerance;
	}
	qsort(ws, resamples, sizeof(*ws), util_cmp_double);
	f->worse_lo = stats_quantile_sorted(ws, resamples, 0.025);
	f->worse_hi = stats_quantile_sorted(ws, resamples, 0.975);
	/* The +1s keep a p-value from being 0 on a finite number of resamples. */
	f->p = (double)(at_or_under + 1) / (resamples + 1);
	mann_whitney(base, n_base, head, n_head, f);
out:
	free(off);
	free(rb);
	free(rh);
	free(ws);
	if (f->undefined[0])
		return VERDICT_INCONCLUSIVE;
	return n_base && n_head ? classify(f, tolerance) : VERDICT_PASS;
}

enum verdict verdict_rounds(const double *base, const double *head, size_t n,
			    enum metric_better better, double tolerance,
			    const struct verdict_noise *noise, double alpha,
			    struct verdict_figures *f)
{
	double sum = 0, ss = 0, lb = 0, lh = 0, mean, bound, se, df, q;
	bool zero_b = false, zero_h = false;

	memset(f, 0, sizeof(*f));
	f->p = f->p_mw = 1;
	f->n_base = f->n_head = n;
	f->tolerance = tolerance;
	if (!n)
		return VERDICT_PASS;
	for (size_t i = 0; i < n; i++) {
		char why[64];

		/* A round without a ratio is no evidence of a pass: the verdict cannot be made. */
		if (!has_ratio(base[i], head[i], why, sizeof(why))) {
			snprintf(f->undefined, sizeof(f->undefined), "round %zu of %zu: %s", i + 1,
				 n, why);
			return VERDICT_INCONCLUSIVE;
		}
	}
	for (size_t i = 0; i < n; i++) {
		/* Both zero: the same (a log ratio of 0), and no geometric mean to take. */
		double d = base[i] == 0 ? 0 : log(worse_of(base[i], head[i], better));

		sum += d;
		lb += base[i] > 0 ? log(base[i]) : 0;
		lh += head[i] > 0 ? log(head[i]) : 0;
		zero_b |= base[i] == 0;
		zero_h |= head[i] == 0;
	}
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = base[i] == 0 ? 0 : log(worse_of(base[i], head[i], better)) - mean;

		ss += d * d;
	}
	/* A geometric mean of figures with a zero among them is 0. */
	f->base_median = zero_b ? 0 : exp(lb / (double)n);
	f->head_median = zero_h ? 0 : exp(lh / (double)n);
	f->worse = exp(mean);
	f->sd_own = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	f->calibrated = noise && noise->rounds > 1;
	if (f->calibrated)
		f->tolerance = fmax(tolerance, expm1(VERDICT_WIDTH_FACTOR * noise->width));
	bound = log1p(f->tolerance);
	f->sd_used = f->calibrated ? noise->sd : f->sd_own;
	df = f->calibrated ? INFINITY : (double)n - 1;
	mann_whitney(base, n, head, n, f);
	/* Identical rounds and nothing calibrated (a simulated count): the mean is exact. */
	if (f->sd_used == 0 || (!f->calibrated && n < 2)) {
		f->exact = true;
		f->worse_lo = f->worse_hi = f->worse;
		f->p = mean > bound ? 0 : 1;
		return mean > bound    ? VERDICT_REGRESSION
		       : mean < -bound ? VERDICT_IMPROVED
				       : VERDICT_PASS;
	}
	se = f->sd_used / sqrt((double)n);
	q = stats_t_quantile(0.975, df);
	f->worse_lo = exp(mean - q * se);
	f->worse_hi = exp(mean + q * se);
	f->p = stats_t_sf((mean - bound) / se, df);
	/* The spread of these rounds against the host's: an F-test of their variances. */
	if (f->calibrated && n > 2 && f->sd_own > f->sd_used &&
	    stats_f_sf(f->sd_own * f->sd_own / (f->sd_used * f->sd_used), (double)n - 1,
		       (double)noise->rounds - 1) < VERDICT_UNSTABLE_P)
		return VERDICT_UNSTABLE;
	if (f->p <= alpha)
		return VERDICT_REGRESSION;
	if (mean > bound)
		return VERDICT_INCONCLUSIVE;
	if (mean < -bound && stats_t_sf((-bound - mean) / se, df) <= alpha)
		return VERDICT_IMPROVED;
	return VERDICT_PASS;
}
