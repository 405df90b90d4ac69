/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model.c - modelled A/B runs judged by the procedures memgate has had: rates, not anecdotes. */
#include "judge/model.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "judge/verdict.h"
#include "util/stats.h"
#include "util/util.h"

/* Rounds of the procedure before December 2026: 5 to flag, 5 fresh to decide. */
#define MEDIANS_ROUNDS 5
/* What a calibration of the model's host measured: 4 A/A runs of 10 rounds. */
#define MODEL_CAL_RUNS 4
#define MODEL_CAL_ROUNDS 10
/* The old procedure's bootstrap: its interval of a median of 5 is [min, max] anyway. */
#define MODEL_RESAMPLES 400

const char *model_procedure_name(enum model_procedure p)
{
	static const char *const names[] = {
	    "medians of 5, flag, 5 fresh, Holm (until Dec 2026)",
	    "mean of log ratios, own spread (no calibration)",
	    "mean of log ratios, calibrated spread",
	};

	return (size_t)p < ARRAY_SIZE(names) ? names[p] : "?";
}

/* A standard normal deviate (Box-Muller). */
static double normal(struct stats_rng *rng)
{
	double u = stats_rng_unit(rng), v = stats_rng_unit(rng);

	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* @n rounds of one metric: base and head each lognormal, head @shift (a log) slower. */
static void rounds(struct stats_rng *rng, double spread, double shift, double *base, double *head,
		   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		base[i] = exp(spread * normal(rng));
		head[i] = exp(shift + spread * normal(rng));
	}
}

/* What became of one metric in one run. */
enum fate { F_PASS, F_FAIL, F_UNSTABLE };

struct metric_run {
	double base[64], head[64];
	bool candidate;	    /* the medians procedure: flagged */
	enum verdict fresh; /* the medians procedure: its fresh rounds' verdict */
	enum fate fate;
	size_t n;
};

/* The medians procedure's stages for one metric: flag on 5 rounds, 5 fresh ones decide. */
static void medians_metric(struct stats_rng *rng, const struct model_params *mp, double shift,
			   uint64_t seed, struct metric_run *m)
{
	struct verdict_figures f;
	enum verdict v;

	rounds(rng, mp->spread, shift, m->base, m->head, MEDIANS_ROUNDS);
	m->n = MEDIANS_ROUNDS;
	v = verdict_paired(m->base, m->head, MEDIANS_ROUNDS, LOWER_IS_BETTER, mp->tolerance, seed,
			   &f);
	m->candidate = v == VERDICT_REGRESSION || v == VERDICT_INCONCLUSIVE;
	m->fate = F_PASS;
	if (!m->candidate)
		return;
	rounds(rng, mp->spread, shift, m->base, m->head, MEDIANS_ROUNDS);
	m->n += MEDIANS_ROUNDS;
	m->fresh = verdict_paired(m->base, m->head, MEDIANS_ROUNDS, LOWER_IS_BETTER, mp->tolerance,
				  seed + 1, &f);
}

/* The mean-of-log-ratios procedure for one metric: two looks, alpha split over both. */
static void rounds_metric(struct stats_rng *rng, const struct model_params *mp, double shift,
			  const struct verdict_noise *noise, struct metric_run *m)
{
	double alpha = mp->alpha / (double)mp->metrics / 2;
	struct verdict_figures f;
	enum verdict v;

	rounds(rng, mp->spread, shift, m->base, m->head, mp->rounds);
	m->n = mp->rounds;
	v = verdict_rounds(m->base, m->head, m->n, LOWER_IS_BETTER, mp->tolerance, noise, alpha,
			   &f);
	if (v == VERDICT_INCONCLUSIVE) {
		rounds(rng, mp->spread, shift, m->base + m->n, m->head + m->n, mp->more_rounds);
		m->n += mp->more_rounds;
		v = verdict_rounds(m->base, m->head, m->n, LOWER_IS_BETTER, mp->tolerance, noise,
				   alpha, &f);
	}
	m->fate = v == VERDICT_REGRESSION			       ? F_FAIL
		  : v == VERDICT_INCONCLUSIVE || v == VERDICT_UNSTABLE ? F_UNSTABLE
								       : F_PASS;
}

/*
 * The medians procedure's fate of a flagged metric: Holm over the fresh p-values decided what
 * was shown, but a fresh median past the tolerance and not shown failed too ("INCONCLUSIVE:
 * fails until it is"), so every flagged metric whose fresh median of 5 is past it fails.
 */
static void medians_conclude(struct metric_run *ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ms[i].candidate &&
		    (ms[i].fresh == VERDICT_REGRESSION || ms[i].fresh == VERDICT_INCONCLUSIVE))
			ms[i].fate = F_FAIL;
}

struct model_params model_params_default(void)
{
	return (struct model_params){.metrics = 150,
				     .tolerance = 0.05,
				     .slowdown = 0.10,
				     .alpha = 0.05,
				     .runs = 400,
				     .rounds = 6,
				     .more_rounds = 10,
				     .seed = 1};
}

int model_run(const struct model_params *mp, enum model_procedure proc, struct model_rates *out)
{
	struct metric_run *ms = calloc(mp->metrics + 1, sizeof(*ms));
	double log_sd = mp->spread * sqrt(2.0);
	/* A calibration as memgate calibrate makes it: the rounds' sd, a run's mean's sd. */
	struct verdict_noise cal = {.sd = log_sd,
				    .width = log_sd / sqrt((double)MODEL_CAL_ROUNDS),
				    .rounds = MODEL_CAL_RUNS * MODEL_CAL_ROUNDS};
	const struct verdict_noise *noise = proc == MODEL_CALIBRATED ? &cal : NULL;
	struct stats_rng rng;
	size_t failed = 0, unstable = 0, caught = 0, rounds_sum = 0;

	memset(out, 0, sizeof(*out));
	if (!ms || mp->rounds + mp->more_rounds > ARRAY_SIZE(ms->base)) {
		free(ms);
		return ms ? -EINVAL : -ENOMEM;
	}
	verdict_set_resamples(MODEL_RESAMPLES);
	stats_rng_seed(&rng, mp->seed);
	for (unsigned int r = 0; r < 2 * mp->runs; r++) {
		bool slowed = r >= mp->runs, any_fail = false, any_unstable = false;

		for (size_t i = 0; i < mp->metrics; i++) {
			/* Metric 0 of a slowed run is the one its head made slower. */
			double shift = slowed && i == 0 ? log1p(mp->slowdown) : 0;

			if (proc == MODEL_MEDIANS_HOLM)
				medians_metric(&rng, mp, shift, mp->seed + r * mp->metrics + i,
					       &ms[i]);
			else
				rounds_metric(&rng, mp, shift, noise, &ms[i]);
		}
		if (proc == MODEL_MEDIANS_HOLM)
			medians_conclude(ms, mp->metrics);
		for (size_t i = 0; i < mp->metrics; i++) {
			any_fail |= ms[i].fate == F_FAIL;
			any_unstable |= ms[i].fate == F_UNSTABLE;
			if (!slowed)
				rounds_sum += ms[i].n;
		}
		if (!slowed) {
			failed += any_fail;
			unstable += !any_fail && any_unstable;
		} else {
			caught += ms[0].fate == F_FAIL;
		}
	}
	verdict_set_resamples(VERDICT_DEFAULT_RESAMPLES);
	out->aa_failed = (double)failed / mp->runs;
	out->aa_unstable = (double)unstable / mp->runs;
	out->caught = (double)caught / mp->runs;
	out->mean_rounds = (double)rounds_sum / ((double)mp->runs * (double)mp->metrics);
	free(ms);
	return 0;
}
