/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gate.h - verdicts across perf cases of one run: ratios, "no slower", "faster". */
#ifndef MG_JUDGE_GATE_H
#define MG_JUDGE_GATE_H

#include "run/result.h"

enum gate_kind {
	/* median(a) / median(b) <= threshold. PASS when the bootstrap 95% interval of the ratio
	 * lies at or under it, FAIL when it lies over it, INCONCLUSIVE when it straddles it. */
	GATE_RATIO_AT_MOST,
	/* a is not slower than b beyond noise: FAIL only when the whole interval of the ratio
	 * lies above threshold (1: any significant slowdown). */
	GATE_NOT_SLOWER,
	/* median(a) >= threshold (b unused): PASS when its bootstrap interval lies at or over
	 * it, FAIL when under, INCONCLUSIVE across. */
	GATE_AT_LEAST,
	/* a beats b: PASS only when the whole interval of the ratio lies under 1; a ratio of 1
	 * or more is FAIL, one under 1 whose interval reaches 1 INCONCLUSIVE. */
	GATE_FASTER,
};

/*
 * Verdicts rest on the bootstrap interval of the ratio of medians, which works from 5
 * samples up; the Mann-Whitney p-value is reported beside it (with 5 against 5 samples it
 * cannot go under 0.012, so it would make quick runs undecidable).
 */

/* INCONCLUSIVE gates get their cases sampled again, this many times at the most. */
#define GATE_RESAMPLE_ROUNDS 2

struct gate_side {
	const char *glob; /* matches exactly one case: "memslots.update.growing[capacity=128,*" */
	const char *metric;
};

/*
 * What a gate is about, shown by its own reference on this host now: the ratio a / b (in the
 * same case) at least @threshold, judged as the gate judges (e.g. the reference's threads
 * against its own one thread). Where it is not shown, a pass would say nothing (a busy host
 * hides any scaling): the gate is UNSTABLE, and its case is not stopped early.
 */
struct gate_effect {
	struct gate_side a, b;
	double threshold; /* 0: the gate has none */
	const char *why;
};

struct gate_def {
	const char *name; /* the test case name in the report */
	enum gate_kind kind;
	struct gate_side a, b; /* the figure is a / b */
	double threshold;
	const char *why; /* the reason for the bound, shown with a failure */
	/* a and b were sampled in turn in one case: judge the per-sample ratios a[i] / b[i],
	 * which cancel the drift both saw (A/B interleaving). */
	bool paired;
	struct gate_effect effect;
};

/* Gate verdicts as results, so that every report writes them like cases. */
struct gate_results {
	struct result_set rows;
	size_t *involved; /* indices of the cases behind INCONCLUSIVE gates, no repeats */
	size_t n_involved;
};

struct rules;

/**
 * gates_evaluate() - judge the gates of @rules on the @n @results of one run; @suites gives
 * the suite_def of each gate's suite (a gate of a suite not among them is left out). A gate whose
 * cases were not run (filtered out) is left out; one whose cases were skipped or broke is
 * SKIP or ERROR. INCONCLUSIVE verdicts are FAIL results whose message says so.
 * Returns 0 with @out filled (release it), or -ENOMEM.
 */
int gates_evaluate(const struct rules *rules, const struct suite_def *const *suites,
		   size_t n_suites, const struct case_result *results, size_t n,
		   const struct run_opts *opts, struct gate_results *out);

/**
 * gates_settled() - may a case stop sampling with the samples @partial holds: every gate of
 * @rules on it passes clearly on them (its interval wholly on the passing side), none of them
 * is judged on this case and another, and, with @baseline, each of its gated metrics has a
 * median known to within a quarter of its baseline tolerance (95% interval, seeded by @seed).
 * A case that feeds no verdict is settled at once. Called in a case's child (run_opts.settled).
 */
bool gates_settled(const struct rules *rules, const struct case_result *partial, bool baseline,
		   uint64_t seed);

/** gates_release() - free what gates_evaluate() made. */
void gates_release(struct gate_results *g);

enum gate_verdict {
	GATE_PASS,
	GATE_FAIL,
	GATE_INCONCLUSIVE, /* too noisy to tell: more samples might decide */
};

struct gate_figures {
	double median_a, median_b;
	double ratio, lo, hi; /* median(a) / median(b) and its bootstrap 95% interval */
	double p;	      /* two-sided Mann-Whitney p-value of a against b */
	bool undefined;	      /* no ratio: a zero divisor or a figure that is not finite */
};

/**
 * gate_judge() - the verdict of a gate of @kind and @threshold on the samples @a and @b, with
 * the figures behind it in @f. With @paired (and as many samples on both sides) the ratio is
 * the median of the per-sample ratios, its interval theirs. @seed fixes the bootstrap. Used by
 * gates_evaluate() and by the tests, which feed it recorded and synthetic samples.
 */
enum gate_verdict gate_judge(enum gate_kind kind, double threshold, bool paired, const double *a,
			     size_t na, const double *b, size_t nb, uint64_t seed,
			     struct gate_figures *f);

#endif
