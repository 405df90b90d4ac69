/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.h - the rules file: in-run gates and the tolerances of comparisons (libconfig). */
#ifndef MG_JUDGE_RULES_H
#define MG_JUDGE_RULES_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/case.h"
#include "judge/gate.h"
#include "util/err.h"

/* The rules compiled into memgate: ci/rules.conf of the tree it was built from. */
extern const char rules_embedded_text[];

/* A gate as the rules file gives it: the gate, its suite, where it was written. */
struct rules_gate {
	struct gate_def def;
	const char *suite;
	int line;
};

/* What a tolerance rule sets; a field it leaves out is taken from earlier rules. */
struct tolerance_rule {
	const char *suite, *cases, *metric, *unit; /* globs; "*" when left out */
	double ab, baseline; /* fractions (0.05: 5% worse allowed); < 0 when not set */
	double cut; /* ab: head's sample is stopped at cut x base's median; < 0 when not set */
	int gate;   /* 1 or 0; -1 when not set */
	const char *why;
	int line;
};

/* The tolerances in effect for one metric: the last matching rule for each field. */
struct tolerance {
	double ab, baseline;
	double cut;	 /* 0: none; else ab stops head's sample at cut x base's median */
	bool gate;	 /* false: reported, never failed */
	const char *why; /* of the last rule that matched */
	int line;
};

struct rules {
	config_t cfg;	  /* owns every string below */
	char source[512]; /* the file, or "(embedded rules)" */
	char *text;	  /* what was parsed, for `memgate rules` */
	double alpha;	  /* family-wise false-alarm rate of a run's comparisons */
	struct rules_gate *gates;
	size_t n_gates;
	struct tolerance_rule *tols;
	size_t n_tols;
};

/**
 * rules_load() - read the rules in @path, or the embedded ones when @path is NULL.
 * Returns 0, or -errno with @err saying "FILE:LINE: what was expected" (-EINVAL) or why the
 * file cannot be read; on failure @r holds nothing to release.
 */
int rules_load(struct rules *r, const char *path, struct mg_err *err);

/** rules_parse() - the same from @text, named @name in messages (for tests and the embedded). */
int rules_parse(struct rules *r, const char *text, const char *name, struct mg_err *err);

/** rules_release() - free what rules_load() made. */
void rules_release(struct rules *r);

/**
 * rules_tolerance() - the tolerances of metric @m of case @full_name ("suite.group.name[..]")
 * of suite @suite.
 */
struct tolerance rules_tolerance(const struct rules *r, const char *suite, const char *full_name,
				 const struct metric_def *m);

/**
 * rules_warn_unused() - on @out, a warning naming each rule of a suite in @insts that matches
 * none of the @n instances (a typo, or a case this host does not have). Returns how many.
 */
size_t rules_warn_unused(const struct rules *r, const struct case_inst *insts, size_t n, FILE *out);

/** rules_gate_kind_name() - "ratio_at_most", "not_slower", "at_least", "faster". */
const char *rules_gate_kind_name(enum gate_kind k);

#endif
