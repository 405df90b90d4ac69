/* SPDX-License-Identifier: GPL-2.0-or-later */
/* result.h - what a run learned about one case: outcome, samples, figures. Reports read this. */
#ifndef MG_RUN_RESULT_H
#define MG_RUN_RESULT_H

#include <stddef.h>

#include "run/case.h"
#include "util/stats.h"

/* What the parent learned about one metric of one case. */
struct metric_result {
	const struct metric_def *def;
	char counter[24]; /* what measured it: "tsc", "perf:cpu-cycles", "clock" */
	/* The definition with the unit its counter gave ("instructions" for a counted case's cycles
	 * under the instruction counters): def points here then. */
	struct metric_def counted_def;
	double *v;	       /* samples in the order taken */
	unsigned char *stolen; /* per sample: the VM lost a CPU meanwhile */
	size_t n, cap;
	struct stats_summary sum; /* valid when n > 0 */
};

/*
 * The figures a verdict was judged on (an in-run gate, a baseline or an A/B comparison): the
 * ratio with its bootstrap 95% interval against its bound. Every report reads these; the
 * verdict's properties carry the same figures, as text, for the readers of the JSON.
 */
struct judged_figures {
	bool judged;	      /* false: no figure was judged (a skipped or broken row) */
	double value, lo, hi; /* what was judged and its 95% interval */
	double bound;	      /* the threshold; a comparison's 1 + tolerance */
	bool at_least;	      /* the value must reach the bound (else: stay at or under it) */
	const char *unit;     /* "x" for a ratio; a static string */
	const char *verdict;  /* a comparison's verdict ("regression"); NULL: the outcome's */
};

struct case_prop {
	char *name;
	char *value;
};

struct case_result {
	const struct case_inst *inst;
	enum case_outcome outcome;
	char *message;	    /* failure, skip or error message; NULL on pass */
	char *output;	    /* the case's log lines */
	char *stderr_tail;  /* last bytes the child wrote to stdout/stderr */
	double time_s;	    /* wall time of the child, fork to reap */
	char timestamp[24]; /* start, UTC, "YYYY-MM-DDTHH:MM:SS" */
	int term_signal;    /* the signal that killed the child, 0 if none */
	int timed_out;
	bool unstable; /* FAIL that is not a verdict (A/B undecided or too noisy): exit 0 */
	struct metric_result *metrics; /* one per metric of the definition */
	struct case_prop *props;
	size_t n_props;
	struct judged_figures judged; /* a verdict's figures; judged false elsewhere */
};

/**
 * case_result_init() - an empty PASS result of @inst, stamped now, with a metric_result per
 * metric of its definition. Returns 0 or -ENOMEM (then @r holds nothing to release).
 */
int case_result_init(struct case_result *r, const struct case_inst *inst);

/**
 * case_result_set_outcome() - the worst outcome wins (ERROR over FAIL over SKIP over PASS);
 * messages of the winning outcome accumulate, separated by "; ".
 */
void case_result_set_outcome(struct case_result *r, enum case_outcome o, const char *msg);

/** case_result_log() - append a line to the case's output. */
void case_result_log(struct case_result *r, const char *line);

/** case_result_add_sample() - append one sample to @m. Returns 0 or -ENOMEM. */
int case_result_add_sample(struct metric_result *m, double v, int stolen);

/** case_result_add_prop() - append a property (copies both strings). Returns 0 or -ENOMEM. */
int case_result_add_prop(struct case_result *r, const char *name, const char *value);

/**
 * case_result_warn() - a host fact the reader should know (see case_warn()): a "WARN: " line in
 * the output and a property "warning" (then "warning.2", ...). Returns 0 or -ENOMEM.
 */
int case_result_warn(struct case_result *r, const char *msg);

/** case_result_is_warning() - is  one that case_result_warn() made? */
bool case_result_is_warning(const char *prop_name);

/** case_result_add_figure() - a number as a property: 6 significant digits, C locale. */
int case_result_add_figure(struct case_result *r, const char *name, double v);

/**
 * case_result_summarise() - the summary of every metric with samples, its bootstrap seeded
 * from @seed and the metric's name, so that a rerun gives the same interval.
 */
void case_result_summarise(struct case_result *r, uint64_t seed);

/**
 * case_result_label() - the outcome as a reader sees it: case_outcome_name(), or "UNSTABLE" for
 * a FAIL that is not a verdict (it fails no build; JUnit marks it type="unstable").
 */
const char *case_result_label(const struct case_result *r);

/**
 * case_result_verdict() - the verdict a report shows of a judged row: a comparison's own word
 * ("regression", ...), else the outcome as case_result_label() says it.
 */
const char *case_result_verdict(const struct case_result *r);

/** case_result_metric() - the metric named @name of @r, or NULL. */
const struct metric_result *case_result_metric(const struct case_result *r, const char *name);

/** case_result_sampled() - metric @m of @r when it has samples, else NULL. */
const struct metric_result *case_result_sampled(const struct case_result *r, unsigned int m);

/** case_result_median() - the median of metric @m of @r, 0 when it has no samples. */
double case_result_median(const struct case_result *r, unsigned int m);

/** case_result_prop() - the value of @r's property @name, or NULL when it has none. */
const char *case_result_prop(const struct case_result *r, const char *name);

/** case_result_release() - free what the case_result_*() calls allocated inside @r. */
void case_result_release(struct case_result *r);

/*
 * The rows memgate makes rather than runs (in-run gates, baseline and A/B verdicts, ab's
 * checks of head): each a result with the definition, the instance and, where the row names
 * a suite of its own, the suite it points at, all owned by the set and released together.
 */
struct result_set {
	struct case_result *results;
	struct case_def *defs;
	struct case_inst *insts;
	struct suite_def *suites;
	size_t n, cap;
};

/** result_set_init() - an empty set with room for @cap rows. Returns 0 or -ENOMEM. */
int result_set_init(struct result_set *s, size_t cap);

/**
 * result_set_add() - the next row of @s: a copy of @def (its name, when NULL, the row's
 * @name), an instance named @name of @suite, or of a suite of its own named @suite_name when
 * @suite is NULL, and its result as case_result_init() makes it. Returns the result, or NULL
 * when the set is full or memory is short.
 */
struct case_result *result_set_add(struct result_set *s, const struct suite_def *suite,
				   const char *suite_name, const char *name,
				   const struct case_def *def);

/** result_set_release() - free every row of @s and the set's arrays. */
void result_set_release(struct result_set *s);

#endif
