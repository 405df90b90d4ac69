/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report.h - what a run produced, and the writers that turn it into JUnit, JSON, CSV, HTML
 * and the console's text. */
#ifndef MG_REPORTS_REPORT_H
#define MG_REPORTS_REPORT_H

#include <stdio.h>

#include "hw/hw.h"
#include "judge/history.h"
#include "run/result.h"
#include "util/err.h"

/* A suite's tables (its figures beside the published ones), rendered once for every report. */
struct report_summary {
	const struct suite_def *suite;
	char *text;
};

struct report_run {
	const struct hw_info *hw;
	const struct case_result *results;
	size_t n;
	char timestamp[24]; /* run start, UTC, "YYYY-MM-DDTHH:MM:SS" */
	double time_s;
	char hostname[256];
	const char *version;
	const char *commit; /* of the source memgate was built from: git describe, or "unknown" */
	const char *label;  /* --label, "" when none */
	const char *qemu;   /* the QEMU version the run used, "" when none */
	const struct hist_run *history; /* --baseline's runs, newest first: the HTML's trends */
	size_t n_history;
	struct report_summary *summaries; /* each suite's that has a table; none: NULL */
	size_t n_summaries;
};

enum junit_style {
	JUNIT_JENKINS, /* jenkins-xunit-junit-10.xsd: per-case output, Jenkins' own reader */
	JUNIT_ANT,     /* windyroad-JUnit.xsd: strict Ant, case output moves to the suite */
};

/**
 * report_junit_write() - write @run as JUnit XML in @style to @path (replaced atomically).
 * Text that is not valid XML 1.0 is replaced with U+FFFD. Returns 0 or -errno with @err.
 */
int report_junit_write(const struct report_run *run, enum junit_style style, const char *path,
		       struct mg_err *err);

/** report_json_write() - write @run as JSON (the input of baselines) to @path. 0 or -errno. */
int report_json_write(const struct report_run *run, const char *path, struct mg_err *err);

/**
 * report_csv_check() - before a run: make folder @dir if it is missing, and see that report
 * files can be written in it. Returns 0 or -errno with @err.
 */
int report_csv_check(const char *dir, struct mg_err *err);

/**
 * report_csv_write() - @run's medians as Jenkins' Plot plugin reads them: for each suite and
 * unit, @dir/SUITE-UNIT.csv holds a row of labels ("CASE METRIC") and a row of values.
 */
int report_csv_write(const struct report_run *run, const char *dir, struct mg_err *err);

/**
 * report_html_write() - @run as a page a person reads: @path, and beside it NAME-files/ with
 * the stylesheet and an SVG chart per perf case, per suite's gates or verdicts and, with
 * history, per case's trend. No script and no inline style (Jenkins' default CSP blocks
 * both). Returns 0 or -errno with @err.
 */
int report_html_write(const struct report_run *run, const char *path, struct mg_err *err);

/**
 * report_html_check() - before a run: can the page @path and its NAME-files/ folder be written
 * (the folder is made; a link or a file there is refused)? Returns 0 or -errno with @err.
 */
int report_html_check(const char *path, struct mg_err *err);

/**
 * report_console_case() - one result as a person reads it: outcome, name, time, the figures
 * of a perf case, the message and the stderr tail of a failure; flushed at once.
 */
void report_console_case(const struct case_result *r, FILE *out);

/**
 * report_console() - every result from index @from on (the ones before were shown as they
 * ended), then the line that counts them all.
 */
void report_console(const struct report_run *run, size_t from, FILE *out);

/** report_summary_of() - @suite's tables in @run, or NULL when it has none. */
const char *report_summary_of(const struct report_run *run, const struct suite_def *suite);

/** report_console_summaries() - each suite's tables, after the line that counts the cases. */
void report_console_summaries(const struct report_run *run, FILE *out);

/** report_metric_line() - "name: median U (MAD .., n ..)" for metric @m into @buf. */
char *report_metric_line(const struct metric_result *m, char *buf, size_t len);

#endif
