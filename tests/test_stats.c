/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_stats.c - the statistics against values worked out independently of the code. */
#include "tests/testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "util/stats.h"
#include "util/util.h"

static void test_median_mad(void **state)
{
	/* By hand: the middle value, or the mean of the two middle values. */
	const double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
	/* Median 3; |x - 3| = {2, 1, 0, 1, 97}, sorted {0, 1, 1, 2, 97}: MAD 1. */
	const double outlier[] = {1, 2, 3, 4, 100};

	(void)state;
	assert_float_equal(stats_median(odd, 3), 2, 1e-12);
	assert_float_equal(stats_median(even, 4), 2.5, 1e-12);
	assert_float_equal(stats_mad(outlier, 5), 1, 1e-12);
	assert_true(isnan(stats_median(odd, 0)));
}

static void test_quantile_type7(void **state)
{
	const double x[] = {1, 2, 3, 4};

	(void)state;
	/* R: quantile(1:4, c(0, .25, .5, .9, 1)) = 1, 1.75, 2.5, 3.7, 4 (h = (n - 1) q). */
	assert_float_equal(stats_quantile_sorted(x, 4, 0), 1, 1e-12);
	assert_float_equal(stats_quantile_sorted(x, 4, 0.25), 1.75, 1e-12);
	assert_float_equal(stats_quantile_sorted(x, 4, 0.5), 2.5, 1e-12);
	assert_float_equal(stats_quantile_sorted(x, 4, 0.9), 3.7, 1e-12);
	assert_float_equal(stats_quantile_sorted(x, 4, 1), 4, 1e-12);
}

static void test_summary(void **state)
{
	/* The textbook set: mean 5, squared deviations add to 32, sd = sqrt(32 / 7). */
	const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
	struct stats_summary s;

	(void)state;
	assert_int_equal(stats_summarise(x, 8, 200, 1, &s), 0);
	assert_int_equal(s.n, 8);
	assert_float_equal(s.mean, 5, 1e-12);
	assert_float_equal(s.sd, sqrt(32.0 / 7), 1e-12);
	assert_float_equal(s.median, 4.5, 1e-12);
	assert_float_equal(s.min, 2, 0);
	assert_float_equal(s.max, 9, 0);
	assert_true(s.ci_lo <= s.median && s.median <= s.ci_hi);
	assert_int_equal(stats_summarise(x, 0, 200, 1, &s), -EINVAL);
}

/* U by its definition: pairs with x > y, ties counting one half. Independent of ranking. */
static double u_by_pairs(const double *x, size_t nx, const double *y, size_t ny)
{
	double u = 0;

	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u += x[i] > y[j] ? 1 : x[i] == y[j] ? 0.5 : 0;
	return u;
}

static void test_mwu_no_ties(void **state)
{
	const double x[] = {1, 2, 3}, y[] = {4, 5, 6};
	struct stats_mwu r;

	(void)state;
	assert_int_equal(stats_mann_whitney(x, 3, y, 3, &r), 0);
	assert_float_equal(r.u, 0, 1e-12);
	/*
	 * By hand: mu = 4.5, sigma^2 = 3 * 3 * 7 / 12 = 5.25, z = (0 - 4.5 + 0.5) / 2.2913 =
	 * -1.7457, p = 2 * Phi(-1.7457) = 0.08086 (R's wilcox.test(1:3, 4:6, exact = FALSE)).
	 */
	assert_float_equal(r.z, -1.74574, 1e-4);
	assert_float_equal(r.p, 0.08086, 1e-4);
	assert_float_equal(r.a12, 0, 1e-12);
}

/* Tie-corrected variance of U, as the variance of U over every split of the pooled values. */
static double u_variance_by_enumeration(const double *pool, size_t n, size_t nx)
{
	double sum = 0, sum2 = 0, count = 0;

	for (unsigned int mask = 0; mask < (1u << n); mask++) {
		double x[16], y[16], u;
		size_t a = 0, b = 0;

		if ((size_t)__builtin_popcount(mask) != nx)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (mask & (1u << i))
				x[a++] = pool[i];
			else
				y[b++] = pool[i];
		}
		u = u_by_pairs(x, a, y, b);
		sum += u;
		sum2 += u * u;
		count++;
	}
	return sum2 / count - (sum / count) * (sum / count);
}

static void test_mwu_ties(void **state)
{
	const double x[] = {1, 2, 2, 3}, y[] = {2, 3, 4, 4};
	const double pool[] = {1, 2, 2, 3, 2, 3, 4, 4};
	double var = u_variance_by_enumeration(pool, 8, 4);
	struct stats_mwu r;
	double z;

	(void)state;
	assert_int_equal(stats_mann_whitney(x, 4, y, 4, &r), 0);
	/* Pairs by hand: 0 + 0.5 + 0.5 + 1.5 = 2.5. */
	assert_float_equal(r.u, u_by_pairs(x, 4, y, 4), 1e-12);
	assert_float_equal(r.u, 2.5, 1e-12);
	/* By hand: 16/12 * (9 - 36/56) = 11.142857; the enumeration over 70 splits agrees. */
	assert_float_equal(var, 11.142857, 1e-5);
	z = (2.5 - 8 + 0.5) / sqrt(var);
	assert_float_equal(r.z, z, 1e-9);
	assert_float_equal(r.p, erfc(fabs(z) / sqrt(2)), 1e-9);
}

static void test_mwu_all_tied(void **state)
{
	const double x[] = {5, 5, 5}, y[] = {5, 5};
	struct stats_mwu r;

	(void)state;
	assert_int_equal(stats_mann_whitney(x, 3, y, 2, &r), 0);
	assert_float_equal(r.p, 1, 0);
	assert_float_equal(r.a12, 0.5, 1e-12);
	assert_int_equal(stats_mann_whitney(x, 0, y, 2, &r), -EINVAL);
}

static void test_bootstrap_degenerate_and_seeded(void **state)
{
	const double c[] = {7, 7, 7, 7, 7};
	const double x[] = {1, 9, 2, 8, 3, 7, 4, 6, 5, 10, 11, 0};
	double lo, hi, lo2, hi2;

	(void)state;
	assert_int_equal(stats_bootstrap_median_ci(c, 5, 500, 0.95, 3, &lo, &hi), 0);
	assert_float_equal(lo, 7, 0);
	assert_float_equal(hi, 7, 0);
	/* The same seed draws the same resamples: identical intervals, on any host. */
	assert_int_equal(stats_bootstrap_median_ci(x, 12, 500, 0.95, 42, &lo, &hi), 0);
	assert_int_equal(stats_bootstrap_median_ci(x, 12, 500, 0.95, 42, &lo2, &hi2), 0);
	assert_float_equal(lo, lo2, 0);
	assert_float_equal(hi, hi2, 0);
	assert_true(lo <= stats_median(x, 12) && stats_median(x, 12) <= hi);
	assert_int_equal(stats_bootstrap_median_ci(x, 0, 500, 0.95, 42, &lo, &hi), -EINVAL);
}

/*
 * Coverage: for samples of a known distribution (uniform on [0, 1), median 0.5) the 95%
 * interval must contain the true median in about 95% of the samples. 200 samples put the
 * binomial standard error near 1.5%, so [0.88, 0.99] fails only for a broken interval.
 */
static void test_bootstrap_coverage(void **state)
{
	struct stats_rng rng;
	int covered = 0;

	(void)state;
	stats_rng_seed(&rng, 2026);
	for (int t = 0; t < 200; t++) {
		double x[41], lo, hi;

		for (int i = 0; i < 41; i++)
			x[i] = stats_rng_unit(&rng);
		assert_int_equal(stats_bootstrap_median_ci(x, 41, 400, 0.95, (uint64_t)t, &lo, &hi),
				 0);
		covered += lo <= 0.5 && 0.5 <= hi;
	}
	printf("# bootstrap coverage %d/200\n", covered);
	assert_in_range(covered, 176, 198);
}

static void test_bootstrap_ratio(void **state)
{
	struct stats_rng rng;
	double x[30], y[30], lo, hi;

	(void)state;
	stats_rng_seed(&rng, 7);
	for (int i = 0; i < 30; i++) {
		y[i] = 100 + 10 * stats_rng_unit(&rng);
		x[i] = 2 * y[i];
	}
	assert_int_equal(stats_bootstrap_ratio_ci(x, 30, y, 30, 1000, 0.95, 1, &lo, &hi), 0);
	assert_true(lo <= 2 && 2 <= hi);
	assert_true(lo > 1.8 && hi < 2.2);
	y[0] = 0;
	for (int i = 1; i < 30; i++)
		y[i] = 0;
	assert_int_equal(stats_bootstrap_ratio_ci(x, 30, y, 30, 100, 0.95, 1, &lo, &hi), -EINVAL);
}

static void test_rng_uniform(void **state)
{
	struct stats_rng rng;
	int count[10] = {0};

	(void)state;
	stats_rng_seed(&rng, 99);
	for (int i = 0; i < 100000; i++)
		count[stats_rng_below(&rng, 10)]++;
	/* Each bin expects 10,000 with sd 95: +-500 is more than 5 sd. */
	for (int i = 0; i < 10; i++)
		assert_in_range(count[i], 9500, 10500);
}

/* A NaN equals nothing: the tie runs must still advance (this loop once spun for ever). */
static void test_mwu_nan_terminates(void **state)
{
	const double x[] = {1, NAN, 3}, y[] = {NAN, 2, 4};
	struct stats_mwu m;

	(void)state;
	assert_int_equal(stats_mann_whitney(x, 3, y, 3, &m), 0);
	assert_true(m.p >= 0 && m.p <= 1);
}

/* The median by selection equals the sorted one's, to the bit, with ties and both parities. */
static void test_median_by_selection(void **state)
{
	struct stats_rng rng;
	double x[301] = {0}, s[301];

	(void)state;
	stats_rng_seed(&rng, 7);
	for (size_t n = 1; n <= 301; n += 7) {
		for (size_t i = 0; i < n; i++)
			x[i] = (double)stats_rng_below(&rng, n / 3 + 1) + 0.25 * (double)(i % 3);
		memcpy(s, x, n * sizeof(*x));
		qsort(s, n, sizeof(*s), util_cmp_double);
		assert_true(stats_median(x, n) == stats_quantile_sorted(s, n, 0.5));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_median_mad),
	    cmocka_unit_test(test_quantile_type7),
	    cmocka_unit_test(test_summary),
	    cmocka_unit_test(test_mwu_no_ties),
	    cmocka_unit_test(test_mwu_ties),
	    cmocka_unit_test(test_mwu_all_tied),
	    cmocka_unit_test(test_median_by_selection),
	    cmocka_unit_test(test_mwu_nan_terminates),
	    cmocka_unit_test(test_bootstrap_degenerate_and_seeded),
	    cmocka_unit_test(test_bootstrap_coverage),
	    cmocka_unit_test(test_bootstrap_ratio),
	    cmocka_unit_test(test_rng_uniform),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
