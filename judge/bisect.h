/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bisect.h - the first bad commit of a regression, per metric: the search over a range of
 * commits, each step classed good, bad or unknown against GOOD's and BAD's figures, and the
 * report a maintainer can paste. Pure: what builds and measures a commit is the caller's
 * (bisect_ops), so the search is tested on made-up figures.
 */
#ifndef MG_JUDGE_BISECT_H
#define MG_JUDGE_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/case.h"

/* The most metrics one bisect follows, and the most samples a commit's figure may hold. */
#define BISECT_MAX_METRICS 32
#define BISECT_MAX_SAMPLES 64

/* A step's standing for one metric, and what ends a metric's search. */
enum bisect_class {
	BISECT_UNTRIED,
	BISECT_GOOD,	/* on GOOD's side of the midpoint, shown by the figures */
	BISECT_BAD,	/* on BAD's side */
	BISECT_UNKNOWN, /* neither shown after the most rounds allowed: never a guess */
	BISECT_SKIP,	/* the commit does not build (git bisect's 125) */
};

/* One metric followed: what it is and how it is judged. */
struct bisect_metric {
	const char *case_name; /* "kvm.perf.memslots[slots=509]" */
	const char *name;      /* "kvm.insert.median" */
	const char *unit;
	enum metric_better better;
	double tolerance; /* the rules' A/B tolerance: a GOOD-BAD change under it is nothing */
};

/* A commit's figures of every metric: samples (rounds) so far. */
struct bisect_figures {
	double v[BISECT_MAX_METRICS][BISECT_MAX_SAMPLES];
	size_t n[BISECT_MAX_METRICS];
};

/* What measures for the search; every call may be answered from a cache (a resumed run). */
struct bisect_ops {
	/*
	 * More rounds of commit @idx: append at least one sample of each metric to @f (which
	 * holds what was measured of it before). Returns 0; 125 when it does not build; another
	 * value stops the bisect (that value is returned).
	 */
	int (*measure)(void *arg, size_t idx, struct bisect_figures *f);
	void *arg;
	unsigned int max_rounds; /* a step's most calls of measure(): then it is unknown */
	/* One line a step on @log (NULL: none): commit, class per metric, rounds. */
	FILE *log;
	const char *const *commit_names; /* for the log: short hash and subject, per index */
	/* What the log says of commit @idx besides its figures (its build), "" for nothing. */
	const char *(*describe)(void *arg, size_t idx);
};

/* A metric's answer. */
struct bisect_answer {
	bool no_change; /* GOOD and BAD do not differ in it past its tolerance: nothing to bisect */
	size_t lo, hi;	/* the last good and the first bad commit's indices: hi = lo + 1 names
			 * the culprit; a wider range holds only skipped and unknown commits */
};

/* The search of @n commits: index 0 is GOOD, @n - 1 is BAD, in order (a first-parent path). */
struct bisect {
	const struct bisect_metric *metrics;
	size_t n_metrics, n;
	struct bisect_figures *figs;		      /* a commit's, [n] */
	enum bisect_class (*cls)[BISECT_MAX_METRICS]; /* [n][n_metrics] */
	struct bisect_answer answer[BISECT_MAX_METRICS];
	size_t steps; /* commits measured besides GOOD and BAD */
};

/**
 * bisect_classify() - where a commit's samples @s (@ns) lie between GOOD's @g (@ng) and BAD's
 * @b (@nb) for a metric: the mean of their logs against the midpoint of GOOD's and BAD's,
 * on BAD's side or GOOD's, shown one-sided at 1 in 1000 by a t-test on the spread the three
 * share (exact figures: any difference at all). BISECT_UNKNOWN when neither is shown.
 */
enum bisect_class bisect_classify(const double *g, size_t ng, const double *b, size_t nb,
				  const double *s, size_t ns);

/**
 * bisect_run() - search @bs (metrics, n set; the rest is made) with @ops: GOOD and BAD are
 * measured first (until each metric's change is shown or not, up to max_rounds), then
 * commits in the middle of each metric's open range. Returns 0, -ENOMEM, or what measure()
 * returned to stop. Release with bisect_release().
 */
int bisect_run(struct bisect *bs, const struct bisect_ops *ops);

/** bisect_release() - free what bisect_run() made. */
void bisect_release(struct bisect *bs);

/* A commit as the report names it. */
struct bisect_commit {
	const char *hash, *subject, *author;
};

/**
 * bisect_report() - the plain-text report of metric answers on @out, on the 0-day robot's
 * model: per culprit its hash, subject and author, then a row a metric (the parent's figure
 * +- its spread, the change, the culprit's figure +- its spread); ranges said as ranges;
 * @host and the two sides' command lines @base_cmd and @head_cmd to reproduce it.
 */
void bisect_report(const struct bisect *bs, const struct bisect_commit *commits, const char *host,
		   const char *base_cmd, const char *head_cmd, FILE *out);

#endif
