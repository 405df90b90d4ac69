/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ab_case.h - inside `memgate ab`: the cases both sides run, with their rounds' figures, and
 * what the three parts of it share. ab.c runs two memgate binaries round by round,
 * ab_guest.c two guests boot by boot; ab_verdict.c judges the rounds either gathered (no
 * process, no file: arithmetic on made-up rounds is unit-tested).
 */
#ifndef MG_JUDGE_AB_CASE_H
#define MG_JUDGE_AB_CASE_H

#include <stdbool.h>
#include <stddef.h>

#include "judge/ab.h"
#include "judge/ab_side.h"
#include "judge/rules.h"

/* A shared perf case: its name on each side, and per metric the round figures. */
struct ab_metric {
	char name[64], unit[16];
	enum metric_better better;
	bool reference;	     /* a reference arm of its suite (suite_def.reference) */
	double *base, *head; /* per round: the median of that round's samples */
	size_t n;	     /* rounds with a figure on both sides */
	size_t first_stage;  /* rounds of the first stage among them */
	bool flagged;	     /* the first look left it undecided: its case gets more rounds */
	bool shown_first;    /* the first look showed a regression: that look decides it */
};

struct ab_case {
	char key[256];
	const char *base_name, *head_name;
	const char *suite;
	struct ab_metric *metrics;
	size_t n_metrics;
	bool gated;	/* some metric is gated: worth running */
	bool simulated; /* counted under callgrind: the same count every round */
	unsigned int
	    samples; /* a side's samples a round when the case asks for its own (0: ab's) */
	unsigned int confirm; /* more rounds after an undecided first look: ab's, or fewer when
			       * the case asks (each of its rounds is a guest boot a side) */
	size_t n_gated;	      /* its gated metrics */
	double alpha;	      /* each gated metric's share of the run's alpha, at each look */
	/* The metric head's side can stop a sample of (list --json: cut_metric), -1: none; its
	 * rules' cut factor, and base's figures of it so far, whose median the bound multiplies. */
	int cut;
	double cut_factor, *cut_base, cut_ms;
	size_t n_cut_base;
	unsigned int head_cut; /* head's rounds whose figure is the bound: they were stopped */
};

/* ---- the verdict arithmetic (ab_verdict.c) ------------------------------------------------ */

/** ab_case_release() - what @c holds: its metrics' rounds. */
void ab_case_release(struct ab_case *c);

/**
 * ab_tolerance() - the rules' tolerances of metric @m of case @c as this A/B judges it: when
 * the sides differ only in the QEMU or the kernel they run (@o's qemu_only, guests), a
 * reference arm of the suite is context, not a verdict.
 */
struct tolerance ab_tolerance(const struct ab_opts *o, const struct ab_case *c,
			      const struct ab_metric *m);

/**
 * ab_metric_add() - the next metric of @c (its metrics array has room): @name, @unit, which
 * way is @better, a @reference arm or not; room for @rounds rounds of each side; counted in
 * @c->n_gated when @o gates it. Returns 0 or -ENOMEM.
 */
int ab_metric_add(struct ab_case *c, const struct ab_opts *o, const char *name, const char *unit,
		  enum metric_better better, bool reference, unsigned int rounds);

/**
 * ab_flag_case() - the first look at @c's rounds: flags the gated metrics it left undecided
 * (past the tolerance, not shown) and notes those it showed regressed. True when any is
 * flagged: the case gets @c->confirm more rounds.
 */
bool ab_flag_case(struct ab_case *c, const struct ab_opts *o);

/** ab_split_alpha() - @o's alpha split evenly over the @n @cases' gated metrics and looks. */
void ab_split_alpha(struct ab_case *cases, size_t n, struct ab_opts *o);

/**
 * ab_conclude_all() - every metric of the @n @cases with rounds judged (the mean of the log
 * ratios at its share of alpha), as @out's verdicts; @out->cases_compared counted. Returns 0
 * or -ENOMEM.
 */
int ab_conclude_all(struct ab_case *cases, size_t n, const struct ab_opts *o,
		    struct ab_outcome *out);

/* ---- rows of the outcome, shared by both drivers (ab.c) ----------------------------------- */

/** ab_in_suite() - @key without its "suite." prefix: the suite is the JUnit class already. */
const char *ab_in_suite(const char *key);

/** ab_extra_add() - a row of @suite's group @group named @name, @outcome with @msg. */
void ab_extra_add(struct ab_outcome *out, const char *suite, const char *group, const char *name,
		  enum case_outcome outcome, const char *msg, double time_s);

/** ab_outcome_of() - a result file's outcome word ("PASS", ...) as the result model's. */
enum case_outcome ab_outcome_of(const char *word);

/**
 * ab_keep_gated() - @c just made (@made: 0, or it failed) kept as the *@n-th case when some
 * metric of it is gated, else released as a SKIP saying why. Returns 0 or -ENOMEM.
 */
int ab_keep_gated(struct ab_case *c, int made, const char *key, size_t *n, struct ab_outcome *out);

/* ---- guests (ab_guest.c) ------------------------------------------------------------------ */

/**
 * ab_run_guests() - the A/B of two guest sides (memgate vm ...): each round a boot of each,
 * every selected case run in it; their figures judged as ab_run()'s. Returns as ab_run().
 */
int ab_run_guests(struct ab_side *base, struct ab_side *head, struct ab_opts *o,
		  struct ab_outcome *out, struct mg_err *err);

#endif
