/* summary.h - the table a suite prints after its cases (console, JUnit system-out), with
 * the published figures it reproduces beside it. */
#ifndef MG_SUITES_SUMMARY_H
#define MG_SUITES_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/result.h"

struct summary_table {
	const char *header;    /* the first line(s), or NULL */
	const char *published; /* the last line(s): the published figures, or NULL */
	/* which results have a row (a perf case of the suite that measured something) */
	bool (*wanted)(const struct case_result *r);
	void (*row)(FILE *f, const struct case_result *r);
};

/**
 * summary_write() - @t's table over the @n @results: its header, a row for each wanted
 * result, the published figures. Returns the text (the caller frees it), or NULL when no
 * result is wanted or memory is short: then the suite prints no table.
 */
char *summary_write(const struct summary_table *t, const struct case_result *results, size_t n);

#endif
