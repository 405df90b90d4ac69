/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.h - robust summaries, bootstrap intervals and the Mann-Whitney U test for samples. */
#ifndef MG_UTIL_STATS_H
#define MG_UTIL_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* xoshiro256** state: small, fast, and the same stream on every host for a given seed. */
struct stats_rng {
	uint64_t s[4];
};

/** stats_rng_seed() - seed @rng from @seed (expanded with splitmix64, so 0 is fine). */
void stats_rng_seed(struct stats_rng *rng, uint64_t seed);

/** stats_rng_next() - the next 64 random bits. */
uint64_t stats_rng_next(struct stats_rng *rng);

/** stats_rng_below() - a uniform integer in [0, @bound), @bound > 0, without modulo bias. */
uint64_t stats_rng_below(struct stats_rng *rng, uint64_t bound);

/** stats_rng_unit() - a uniform double in [0, 1). */
double stats_rng_unit(struct stats_rng *rng);

/**
 * stats_quantile_sorted() - the @q quantile (0..1) of ascending @x by linear interpolation
 * between order statistics (Hyndman and Fan type 7, R's default). @n must be > 0.
 */
double stats_quantile_sorted(const double *x, size_t n, double q);

/** stats_median() - median of @x (not modified). Returns NAN when @n is 0 or out of memory. */
double stats_median(const double *x, size_t n);

/** stats_mad() - median absolute deviation from the median, unscaled. NAN when @n is 0. */
double stats_mad(const double *x, size_t n);

struct stats_summary {
	size_t n;
	double min, max;
	double mean, sd; /* sd with the n - 1 denominator; 0 when n < 2 */
	double median, mad;
	double ci_lo, ci_hi; /* bootstrap 95% interval of the median */
};

/**
 * stats_summarise() - everything above for @x, the interval from @resamples bootstrap
 * resamples drawn with @seed. Returns 0, -EINVAL when @n is 0, -ENOMEM.
 */
int stats_summarise(const double *x, size_t n, unsigned int resamples, uint64_t seed,
		    struct stats_summary *out);

/**
 * stats_bootstrap_median_ci() - percentile bootstrap interval at level @conf (0.95) of the
 * median of @x. Returns 0, -EINVAL or -ENOMEM.
 */
int stats_bootstrap_median_ci(const double *x, size_t n, unsigned int resamples, double conf,
			      uint64_t seed, double *lo, double *hi);

/**
 * stats_bootstrap_ratio_ci() - percentile bootstrap interval of median(@x) / median(@y),
 * resampling both independently. Returns 0, -EINVAL (empty input, a zero median in a
 * resample) or -ENOMEM.
 */
int stats_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			     unsigned int resamples, double conf, uint64_t seed, double *lo,
			     double *hi);

struct stats_mwu {
	double u;   /* U of the first sample: pairs (x, y) with x > y, ties counting 1/2 */
	double z;   /* normal approximation with tie and continuity correction */
	double p;   /* two-sided p-value; 1 when every value ties */
	double a12; /* Vargha-Delaney A: U / (nx * ny), 0.5 means no effect */
};

/**
 * stats_mann_whitney() - two-sided Mann-Whitney U test of @x against @y, as R's
 * wilcox.test(x, y, exact = FALSE, correct = TRUE). Returns 0, -EINVAL, -ENOMEM.
 */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mwu *out);

/**
 * stats_t_greater() - one-sided one-sample t-test that the mean of @d lies above 0: the
 * p-value in @p (as R's t.test(d, alternative = "greater")). Returns 0, or -EINVAL for
 * fewer than 2 values.
 */
int stats_t_greater(const double *d, size_t n, double *p);

/**
 * stats_holm() - Holm-Bonferroni: which of the @n hypotheses with p-values @p are rejected
 * with a family-wise error rate of at most @alpha. Fills @reject.
 */
/**
 * stats_t_sf() - P(T > @t) for Student's t with @df degrees of freedom; @df = INFINITY is the
 * standard normal.
 */
double stats_t_sf(double t, double df);

/** stats_t_quantile() - the t with P(T <= t) = @q (0 < @q < 1), @df as stats_t_sf(). */
double stats_t_quantile(double q, double df);

/** stats_f_sf() - P(F > @f) for Snedecor's F with @d1 and @d2 degrees of freedom. */
double stats_f_sf(double f, double d1, double d2);

/** stats_holm() - Holm's step-down at family-wise @alpha: @reject[i] for each of the @n @p. */
void stats_holm(const double *p, size_t n, double alpha, bool *reject);

#endif
