/* SPDX-License-Identifier: GPL-2.0-or-later */
/* verdict.h - is head worse than base, beyond a tolerance? The judgement of A/B and baselines. */
#ifndef MG_JUDGE_VERDICT_H
#define MG_JUDGE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/case.h"

/*
 * Every ratio here is direction-aware: "worse" is head / base for a metric where lower is
 * better and base / head where higher is better, so worse > 1 always means head lost. A
 * regression is worse > 1 + tolerance, shown by the data: the 95% interval of worse lies
 * wholly past it, and the one-sided p-value of "worse <= 1 + tolerance" is small enough
 * after the family-wise correction of the whole run (Holm-Bonferroni).
 */
enum verdict {
	VERDICT_PASS,	      /* within the tolerance, or not shown to be past it */
	VERDICT_IMPROVED,     /* better by more than the tolerance, the interval wholly so */
	VERDICT_INCONCLUSIVE, /* the point estimate is past the tolerance, the interval is not */
	VERDICT_REGRESSION,   /* the interval is wholly past the tolerance: a candidate failure */
	VERDICT_UNSTABLE, /* the rounds' own spread is far above the host class's calibrated one */
};

struct verdict_figures {
	double base_median, head_median;
	double worse, worse_lo, worse_hi; /* the direction-aware ratio, its 95% interval */
	double p;			  /* one-sided p of "worse <= 1 + tolerance" */
	double p_mw;	       /* two-sided Mann-Whitney p of head against base, for the reader */
	size_t n_base, n_head; /* rounds when paired; samples otherwise */
	/* Why there is no ratio to judge (a side is zero or not finite), or "" when there is: the
	 * verdict is then INCONCLUSIVE, never a PASS of nothing compared. */
	char undefined[128];
	/* verdict_rounds(): the tolerance applied (the rule's, or the calibrated width's), the
	 * spread the test used and the rounds' own, and whether the spread was calibrated. */
	double tolerance, sd_used, sd_own;
	bool calibrated, exact;
};

/**
 * verdict_paired() - judge @n rounds in which base and head ran in turn: @base[i] and
 * @head[i] are round i's figures (a median of its samples). The ratio is the median of the
 * per-round ratios, its interval a bootstrap one (@seed), its p a one-sided t-test of
 * the log ratios against log(1 + @tolerance). Returns the verdict; figures in @f.
 */
enum verdict verdict_paired(const double *base, const double *head, size_t n,
			    enum metric_better better, double tolerance, uint64_t seed,
			    struct verdict_figures *f);

/**
 * verdict_runs() - judge head's @n_head samples against base runs recorded on other
 * occasions: @base holds their samples one run after another, @run_len[r] of run r. A
 * two-level bootstrap resamples runs, then samples within them, so the differences between
 * runs count, not only the noise within one; its share of resampled ratios at or under
 * 1 + @tolerance is the p-value. Returns the verdict; figures in @f.
 */
enum verdict verdict_runs(const double *base, const size_t *run_len, size_t n_runs,
			  const double *head, size_t n_head, enum metric_better better,
			  double tolerance, uint64_t seed, struct verdict_figures *f);

/* A host class's noise of one metric between processes, from A/A rounds (memgate calibrate). */
struct verdict_noise {
	double sd;     /* of one round's log ratio, head over base, on identical builds */
	double width;  /* of an A/A run's mean log ratio: what a whole run drifts by */
	size_t rounds; /* the A/A rounds it was measured on */
};

/* The calibrated width counts this many times against the rule's tolerance: an A/A run's mean
 * stays within 3 of its standard deviations but for 1 run in 700. */
#define VERDICT_WIDTH_FACTOR 3.0

/* A run's own spread this far above the calibrated one (its F-test's p under this) is an
 * UNSTABLE run, not a verdict. */
#define VERDICT_UNSTABLE_P 0.001

/**
 * verdict_rounds() - judge @n paired rounds (base[i], head[i] ran in turn) by the mean of
 * their log ratios. The tolerance is the larger of @tolerance and, when @noise is given,
 * exp(VERDICT_WIDTH_FACTOR * noise->width) - 1; the spread is @noise->sd when given (a z-test),
 * else the rounds' own (a t-test on n - 1 degrees of freedom). REGRESSION when the one-sided
 * p of "worse <= 1 + tolerance" is at most @alpha (the caller divides the run's alpha among
 * its metrics and looks); INCONCLUSIVE when the mean is past the tolerance but not shown;
 * VERDICT_UNSTABLE when the rounds' own spread is far above @noise's; IMPROVED likewise
 * the other way. Rounds with no spread and no calibration are exact: the mean decides.
 * Figures in @f: each side's geometric mean over the rounds, their ratio, its 95% interval.
 */
enum verdict verdict_rounds(const double *base, const double *head, size_t n,
			    enum metric_better better, double tolerance,
			    const struct verdict_noise *noise, double alpha,
			    struct verdict_figures *f);

/* Bootstrap resamples: the 2.5% and 97.5% points, and p-values down to 1/4001. */
#define VERDICT_DEFAULT_RESAMPLES 4000

/**
 * verdict_set_resamples() - the bootstrap's resamples from now on (4000 by default, at least
 * 40): for a fuzz target, which tests the logic on many inputs, not the precision.
 */
void verdict_set_resamples(unsigned int n);

/** verdict_name() - "pass", "improved", "inconclusive", "regression". */
const char *verdict_name(enum verdict v);

#endif
