/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats.c - medians, MAD, bootstrap intervals, Mann-Whitney U. Samples are small (< 10^4). */
#include "util/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stats_rng_seed(struct stats_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t stats_rng_below(struct stats_rng *rng, uint64_t bound)
{
	/* Reject the top partial block so every residue is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
	uint64_t r;

	do {
		r = stats_rng_next(rng);
	} while (r >= limit);
	return r % bound;
}

double stats_rng_unit(struct stats_rng *rng)
{
	return (double)(stats_rng_next(rng) >> 11) * 0x1.0p-53;
}

double stats_quantile_sorted(const double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return x[n - 1];
	return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (c) {
		memcpy(c, x, n * sizeof(*c));
		qsort(c, n, sizeof(*c), util_cmp_double);
	}
	return c;
}

static int cmp_at(const double *a, size_t i, size_t j)
{
	return util_cmp_double(&a[i], &a[j]);
}

static void swap_at(double *a, size_t i, size_t j)
{
	double t = a[i];

	a[i] = a[j];
	a[j] = t;
}

/*
 * Put the @k-th smallest of @a[0..n) at a[k], the smaller before it and the larger after
 * (quickselect: linear on average). The bootstrap takes thousands of medians of pooled
 * histories; sorting each made a long history take tens of seconds. A bad run of pivots falls
 * back to sorting, so the worst case stays n log n. The order is util_cmp_double's.
 */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	unsigned int budget = 64;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, store = lo;

		if (!budget--) {
			qsort(a + lo, hi - lo + 1, sizeof(*a), util_cmp_double);
			return;
		}
		swap_at(a, mid, hi); /* the middle element as the pivot, parked at the end */
		for (size_t i = lo; i < hi; i++)
			if (cmp_at(a, i, hi) < 0)
				swap_at(a, i, store++);
		swap_at(a, store, hi);
		if (store == k)
			return;
		if (store < k)
			lo = store + 1;
		else
			hi = store - 1;
	}
}

double stats_median(const double *x, size_t n)
{
	double *c, m;
	size_t lo = (n - 1) / 2;

	if (n == 0 || !(c = malloc(n * sizeof(*c))))
		return NAN;
	memcpy(c, x, n * sizeof(*c));
	select_kth(c, n, lo);
	m = c[lo];
	/* An even count: the mean of the two middle ones, as stats_quantile_sorted() at 0.5. */
	if (n % 2 == 0) {
		double next = c[lo + 1];

		for (size_t i = lo + 2; i < n; i++)
			if (util_cmp_double(&c[i], &next) < 0)
				next = c[i];
		m = m + 0.5 * (next - m);
	}
	free(c);
	return m;
}

double stats_mad(const double *x, size_t n)
{
	double med = stats_median(x, n), m;
	double *dev;

	if (isnan(med) || !(dev = malloc(n * sizeof(*dev))))
		return NAN;
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - med);
	m = stats_median(dev, n);
	free(dev);
	return m;
}

/* Medians of @resamples bootstrap resamples of @x, in draw order, into @out. */
static int bootstrap_medians(const double *x, size_t n, unsigned int resamples,
			     struct stats_rng *rng, double *out)
{
	double *r = malloc(n * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (unsigned int b = 0; b < resamples; b++) {
		for (size_t i = 0; i < n; i++)
			r[i] = x[stats_rng_below(rng, n)];
		qsort(r, n, sizeof(*r), util_cmp_double);
		out[b] = stats_quantile_sorted(r, n, 0.5);
	}
	free(r);
	return 0;
}

int stats_bootstrap_median_ci(const double *x, size_t n, unsigned int resamples, double conf,
			      uint64_t seed, double *lo, double *hi)
{
	struct stats_rng rng;
	double *meds;
	int ret;

	if (n == 0 || resamples == 0 || conf <= 0 || conf >= 1)
		return -EINVAL;
	meds = malloc(resamples * sizeof(*meds));
	if (!meds)
		return -ENOMEM;
	stats_rng_seed(&rng, seed);
	ret = bootstrap_medians(x, n, resamples, &rng, meds);
	if (!ret) {
		qsort(meds, resamples, sizeof(*meds), util_cmp_double);
		*lo = stats_quantile_sorted(meds, resamples, (1 - conf) / 2);
		*hi = stats_quantile_sorted(meds, resamples, (1 + conf) / 2);
	}
	free(meds);
	return ret;
}

int stats_bootstrap_ratio_ci(const double *x, size_t nx, const double *y, size_t ny,
			     unsigned int resamples, double conf, uint64_t seed, double *lo,
			     double *hi)
{
	struct stats_rng rng;
	double *mx, *my;
	int ret = -ENOMEM;

	if (nx == 0 || ny == 0 || resamples == 0 || conf <= 0 || conf >= 1)
		return -EINVAL;
	mx = malloc(resamples * sizeof(*mx));
	my = malloc(resamples * sizeof(*my));
	if (!mx || !my)
		goto out;
	stats_rng_seed(&rng, seed);
	ret = bootstrap_medians(x, nx, resamples, &rng, mx);
	if (!ret)
		ret = bootstrap_medians(y, ny, resamples, &rng, my);
	if (ret)
		goto out;
	/* The two resample streams are independent draws: pair them in draw order. */
	for (unsigned int b = 0; b < resamples; b++) {
		double d = my[b];

		if (d == 0) {
			ret = -EINVAL;
			goto out;
		}
		mx[b] = mx[b] / d;
	}
	qsort(mx, resamples, sizeof(*mx), util_cmp_double);
	*lo = stats_quantile_sorted(mx, resamples, (1 - conf) / 2);
	*hi = stats_quantile_sorted(mx, resamples, (1 + conf) / 2);
out:
	free(mx);
	free(my);
	return ret;
}

int stats_summarise(const double *x, size_t n, unsigned int resamples, uint64_t seed,
		    struct stats_summary *out)
{
	double sum = 0, ss = 0;
	double *c;

	if (n == 0)
		return -EINVAL;
	c = sorted_copy(x, n);
	if (!c)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->min = c[0];
	out->max = c[n - 1];
	out->median = stats_quantile_sorted(c, n, 0.5);
	out->mad = stats_mad(x, n);
	free(c);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	out->mean = sum / (double)n;
	/* Two passes: the one-pass formula loses digits when the spread is tiny. */
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	if (resamples)
		return stats_bootstrap_median_ci(x, n, resamples, 0.95, seed, &out->ci_lo,
						 &out->ci_hi);
	out->ci_lo = out->ci_hi = out->median;
	return 0;
}

struct ranked {
	double v;
	int from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	return util_cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mwu *out)
{
	size_t n = nx + ny;
	struct ranked *all;
	double rank_sum_x = 0, tie_term = 0, mu, sigma2, d;

	if (nx == 0 || ny == 0)
		return -EINVAL;
	all = malloc(n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		all[i] = (struct ranked){i < nx ? x[i] : y[i - nx], i < nx};
	qsort(all, n, sizeof(*all), cmp_ranked);
	/* Ranks are 1-based; a run of t equal values shares the average rank of the run. */
	for (size_t i = 0; i < n;) {
		size_t j = i;

		/* A NaN equals nothing, not even itself: each is a run of one. */
		while (j < n && (j == i || all[j].v == all[i].v))
			j++;
		for (size_t k = i; k < j; k++)
			if (all[k].from_x)
				rank_sum_x += (double)(i + 1 + j) / 2;
		tie_term += pow((double)(j - i), 3) - (double)(j - i);
		i = j;
	}
	free(all);
	out->u = rank_sum_x - (double)nx * (double)(nx + 1) / 2;
	out->a12 = out->u / ((double)nx * (double)ny);
	mu = (double)nx * (double)ny / 2;
	/* Variance of U under H0 with ties: nx ny / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))). */
	sigma2 = (double)nx * (double)ny / 12 *
		 ((double)(n + 1) - (n > 1 ? tie_term / ((double)n * (double)(n - 1)) : 0));
	if (sigma2 <= 0) {
		out->z = 0;
		out->p = 1;
		return 0;
	}
	d = out->u - mu;
	/* Continuity correction towards the mean, as R's correct = TRUE. */
	d -= d > 0 ? 0.5 : d < 0 ? -0.5 : 0;
	out->z = d / sqrt(sigma2);
	out->p = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
	return 0;
}

/*
 * The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated
 * with the modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
 */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-14;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		/* Even step, then odd step, of the fraction's terms. */
		double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), del;

		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* I_x(a, b), the regularized incomplete beta function. */
static double incomplete_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

int stats_t_greater(const double *d, size_t n, double *p)
{
	double mean = 0, ss = 0, t, df;

	if (n < 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		mean += d[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (d[i] - mean) * (d[i] - mean);
	if (ss == 0) {
		/* No spread: the sign of the mean decides it outright. */
		*p = mean > 0 ? 0 : 1;
		return 0;
	}
	df = (double)n - 1;
	t = mean / sqrt(ss / df / (double)n);
	/* P(T > t) for Student's t with df degrees of freedom. */
	*p = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
	if (t < 0)
		*p = 1 - *p;
	return 0;
}

void stats_holm(const double *p, size_t n, double alpha, bool *reject)
{
	bool *done = calloc(n ? n : 1, sizeof(*done));

	for (size_t i = 0; i < n; i++)
		reject[i] = false;
	if (!done) {
		/* Out of memory: Bonferroni, which Holm only ever improves on. */
		for (size_t i = 0; i < n; i++)
			reject[i] = p[i] <= alpha / (double)n;
		return;
	}
	/* Step down through the p-values in ascending order; stop at the first kept. */
	for (size_t k = 0; k < n; k++) {
		size_t best = n;

		for (size_t i = 0; i < n; i++)
			if (!done[i] && (best == n || p[i] < p[best]))
				best = i;
		done[best] = true;
		if (!(p[best] <= alpha / (double)(n - k)))
			break;
		reject[best] = true;
	}
	free(done);
}

double stats_t_sf(double t, double df)
{
	double p;

	if (!isfinite(df))
		return 0.5 * erfc(t / sqrt(2.0));
	p = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
	return t < 0 ? 1 - p : p;
}

double stats_t_quantile(double q, double df)
{
	double lo = -1e3, hi = 1e3;

	/* stats_t_sf() falls as t grows: bisect for the t whose upper tail is 1 - q. */
	for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
		double mid = (lo + hi) / 2;

		if (stats_t_sf(mid, df) > 1 - q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double stats_f_sf(double f, double d1, double d2)
{
	if (f <= 0)
		return 1;
	return incomplete_beta(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}
