/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare.h - verdicts of head against base for every shared metric, as results for reports. */
#ifndef MG_JUDGE_COMPARE_H
#define MG_JUDGE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "judge/history.h"
#include "run/result.h"
#include "judge/rules.h"
#include "judge/verdict.h"

/* One metric of one case, judged; the run-wide correction decides what fails. */
#define JUDGED_ROUNDS 64

struct judged {
	char suite[32];
	char case_name[256]; /* "suite.group.name[params]" */
	char test_name[320]; /* "group.name[params]:metric", the JUnit test case */
	char metric[64], unit[16];
	enum metric_better better;
	struct tolerance tol;
	double tolerance;	  /* the one that applies here: tol.ab or tol.baseline */
	enum verdict v;		  /* of all the data: what the reader is shown */
	struct verdict_figures f; /* the figures shown: all rounds or samples */
	enum verdict v_test;	  /* of the data the correction reads (A/B: the fresh rounds) */
	double p;		  /* its one-sided p-value */
	bool candidate;	    /* past the tolerance where flagged: takes part in the correction */
	bool rejected;	    /* the correction kept it: a regression shown */
	char how[600];	    /* how it was judged: rounds, pairing, confirmation */
	char tol_from[400]; /* where the tolerance applied came from (A/B: a rule or the
			       calibration) */
	double p_alpha;	    /* A/B: the alpha this metric was tested at, each look */
	size_t m_family;    /* A/B: the gated metrics the run's alpha was split over */
	bool rounds_mean;   /* A/B: the figures are geometric means of the deciding rounds */
	bool unstable;	    /* A/B: undecided at the last look, or noisier than calibrated */
	/* A/B: the rounds' figures of each side, for the report's chart (the first
	 * JUDGED_ROUNDS of them); 0 for baselines. */
	double base_v[JUDGED_ROUNDS], head_v[JUDGED_ROUNDS];
	size_t n_v;
};

/* The verdicts as results: suite "ab" or "baseline", group the suite, so that JUnit shows
 * them as memgate.ab.SUITE. */
struct compare_results {
	struct judged *judged;
	struct metric_def *metric_defs; /* "base" and "head" of each verdict with rounds */
	struct result_set rows;
};

/**
 * compare_correct() - Holm-Bonferroni at @alpha over the p-values of the candidates among
 * the @n @j: sets ->rejected. Returns how many candidates there were.
 */
size_t compare_correct(struct judged *j, size_t n, double alpha);

/**
 * compare_runs() - judge @head against the @n_base @base runs (pooled per run) for every perf
 * metric both have, with the baseline tolerances of @rules, corrected at @rules->alpha.
 * Appends to @j (grown with realloc; *@n counts). Returns 0 or -ENOMEM.
 */
int compare_runs(const struct hist_run *base, size_t n_base, const struct hist_run *head,
		 const struct rules *rules, uint64_t seed, struct judged **j, size_t *n);

/**
 * compare_results_make() - the @n judged metrics (taken over: freed with @out) as results
 * of suite @mode ("ab" or "baseline"), with @context (what was compared: builds, kernels,
 * glibc) in each message. Returns 0 or -ENOMEM.
 */
int compare_results_make(struct judged *j, size_t n, const char *mode, const char *context,
			 struct compare_results *out);

/**
 * compare_results_skip() - one SKIP result of suite @mode, group @group, saying @why: the
 * comparison had nothing to judge against. Returns 0 or -ENOMEM.
 */
int compare_results_skip(const char *mode, const char *group, const char *why,
			 struct compare_results *out);

/** compare_results_release() - free what compare_results_make() made. */
void compare_results_release(struct compare_results *out);

/** compare_context() - "base: memgate V (commit) on kernel K, glibc G; head: ..." into @buf. */
char *compare_context(const struct hist_run *base, const struct hist_run *head, char *buf,
		      size_t len);

#endif
