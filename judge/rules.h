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

/* The most files one set of rules is read from: the defaults, the suites', --rules. */
#define RULES_MAX_FILES 16

/* One file of rules: its name in messages, its text, and whose rules it holds. */
struct rules_file {
	const char *name;  /* "suites/kvm/rules.conf", or the --rules path */
	const char *text;  /* NUL-terminated */
	const char *suite; /* a suite's own file: every rule in it is that suite's; else NULL */
};

/* The judge's defaults, compiled in: judge/rules.conf (alpha, the tolerances by unit). */
extern const struct rules_file rules_defaults;

/* A gate as a rules file gives it: the gate, its suite, where it was written. */
struct rules_gate {
	struct gate_def def;
	const char *suite;
	const char *source; /* the file's name */
	int line;
	bool user; /* from --rules: warned about when it matches nothing */
};

/* What a tolerance rule sets; a field it leaves out is taken from earlier rules. */
struct tolerance_rule {
	const char *suite, *cases, *metric, *unit; /* globs; "*" when left out */
	double ab, baseline; /* fractions (0.05: 5% worse allowed); < 0 when not set */
	double cut; /* ab: head's sample is stopped at cut x base's median; < 0 when not set */
	int gate;   /* 1 or 0; -1 when not set */
	const char *why;
	const char *source; /* the file's name */
	int line;
	bool user; /* from --rules */
};

/* The tolerances in effect for one metric: the last matching rule for each field. */
struct tolerance {
	double ab, baseline;
	double cut;	    /* 0: none; else ab stops head's sample at cut x base's median */
	bool gate;	    /* false: reported, never failed */
	const char *why;    /* of the last rule that matched */
	const char *source; /* its file ("" when no rule matched) */
	int line;
};

/*
 * The rules in effect: the files read in order (the defaults, each suite's, --rules), their
 * gates and tolerance rules one list each. A later file's tolerance rules come after an
 * earlier one's, so they win where both match; a --rules gate replaces the suite's gate of
 * its name (or, with `off = true`, removes it).
 */
struct rules {
	config_t cfg[RULES_MAX_FILES]; /* own every string below */
	char *names[RULES_MAX_FILES];  /* the files' names, as messages give them */
	size_t n_files;
	char source[600]; /* "the embedded rules", "... and --rules FILE", or the one file */
	char *text;	  /* every file read, each after a "# ==== NAME" line: `memgate rules` */
	double alpha;	  /* family-wise false-alarm rate of a run's comparisons */
	struct rules_gate *gates;
	size_t n_gates;
	struct tolerance_rule *tols;
	size_t n_tols;
};

/**
 * rules_load() - the rules in effect: rules_defaults, then the @n suite files in @suites, then
 * the file at @path over them (NULL: none). Returns 0, or -errno with @err saying
 * "FILE:LINE: what was expected" (-EINVAL) or why a file cannot be read; on failure @r holds
 * nothing to release.
 */
int rules_load(struct rules *r, const struct rules_file *suites, size_t n, const char *path,
	       struct mg_err *err);

/** rules_parse() - one file alone, @text named @name in messages (tests, fuzzing). */
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
 * rules_tolerance_from() - where @t came from, into @buf: "FILE:LINE: why" when a rule gave it,
 * else its why (the default, or what the caller set in place of a rule's).
 */
void rules_tolerance_from(const struct tolerance *t, char *buf, size_t len);

/**
 * rules_warn_unused() - on @out, a warning naming each --rules rule of a suite in @insts that
 * matches none of the @n instances (a typo, or a case this host does not have). Returns how
 * many.
 */
size_t rules_warn_unused(const struct rules *r, const struct case_inst *insts, size_t n, FILE *out);

/** rules_gate_kind_name() - "ratio_at_most", "not_slower", "at_least", "faster". */
const char *rules_gate_kind_name(enum gate_kind k);

#endif
