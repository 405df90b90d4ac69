/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model.h - the A/B verdicts on modelled rounds: their false-alarm rate and power, rerunnable. */
#ifndef MG_JUDGE_MODEL_H
#define MG_JUDGE_MODEL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each modelled run judges @metrics gated metrics; every side's figure of a round is lognormal
 * around 1 with the per-side spread (sd of its log). Under A/A both sides are the same; under
 * a slowed head one metric's head is @slowdown slower. A run fails when any verdict fails it.
 */
struct model_params {
	size_t metrics;			  /* gated metrics in a run (150 before December 2026) */
	double spread;			  /* per side: the sd of log(figure) */
	double tolerance;		  /* the rule's */
	double slowdown;		  /* of the slowed metric: 0.10 is 10% */
	double alpha;			  /* family-wise */
	unsigned int runs;		  /* modelled runs of each kind */
	unsigned int rounds, more_rounds; /* first look, and the second's addition */
	uint64_t seed;
};

/**
 * model_params_default() - `memgate model`'s defaults: 150 gated metrics, a 5% tolerance, one
 * metric 10% slower, alpha 0.05, 400 runs of 6 rounds and 10 more, seed 1 (no spread).
 */
struct model_params model_params_default(void);

/* What each procedure did, as fractions of the modelled runs. */
struct model_rates {
	double aa_failed;   /* A/A runs with a failed verdict (the false-alarm rate) */
	double aa_unstable; /* A/A runs with an UNSTABLE verdict and none failed */
	double caught;	    /* slowed runs in which the slowed metric failed (the power) */
	double mean_rounds; /* rounds a metric took, on average, A/A */
};

enum model_procedure {
	MODEL_MEDIANS_HOLM, /* until December 2026: medians of 5, flagged, 5 fresh, Holm,
			     * INCONCLUSIVE fails */
	MODEL_OWN_SPREAD,   /* now, no calibration: mean of log ratios, t-test, two looks */
	MODEL_CALIBRATED,   /* now, calibrated: the spread known from >= 40 A/A rounds */
	MODEL_PROCEDURES,
};

/** model_procedure_name() - a few words naming @p for a table. */
const char *model_procedure_name(enum model_procedure p);

/**
 * model_run() - model @p's A/A and slowed runs under @mp into @out. Returns 0, -ENOMEM, or
 * -EINVAL past 64 rounds.
 */
int model_run(const struct model_params *mp, enum model_procedure p, struct model_rates *out);

#endif
