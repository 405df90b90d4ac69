/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_compare.c - libFuzzer target: results files judged against each other (compare, and a
 * history of base runs as --baseline reads it), and the verdicts written as the reports are:
 * any bytes get a verdict or an error, never a crash, a hang or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/compare.h"
#include "judge/history.h"
#include "judge/rules.h"
#include "reports/report.h"
#include "suites/suites.h"

/* Up to this many runs per input, split at SEP: the base runs, then head last. */
#define MAX_RUNS 4
#define SEP "\n@@\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rules rules;
static struct hw_info hw;
static FILE *sink;

static int setup(void)
{
	struct mg_err err;

	verdict_set_resamples(100);
	if (suites_rules_load(&rules, NULL, &err) ||
	    hw_detect(&hw, "synthetic:pack:1 [numa] core:2 pu:1", &err))
		return -1;
	sink = fopen("/dev/null", "w");
	return sink ? 0 : -1;
}

/* The judged verdicts (taken over) as results, written as `compare` writes them. */
static void report(struct judged *j, size_t n)
{
	struct compare_results res = {0};
	struct report_run run = {
	    .hw = &hw, .version = "fuzz", .commit = "fuzz", .label = "", .qemu = ""};
	struct mg_err err;

	if (compare_results_make(j, n, "baseline", "fuzz", &res))
		return;
	run.results = res.rows.results;
	run.n = res.rows.n;
	report_junit_write(&run, JUNIT_JENKINS, "/dev/null", &err);
	report_junit_write(&run, JUNIT_ANT, "/dev/null", &err);
	report_json_write(&run, "/dev/null", &err);
	report_console(&run, 0, sink);
	compare_results_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct hist_run runs[MAX_RUNS];
	const char *text = (const char *)data, *end = text + size;
	struct judged *j = NULL;
	struct mg_err err;
	size_t n = 0, nj = 0;

	if (!ready)
		ready = setup() ? -1 : 1;
	if (ready < 0)
		return 0;
	while (n < MAX_RUNS && text <= end) {
		const char *sep = memmem(text, (size_t)(end - text), SEP, strlen(SEP));
		size_t len = sep ? (size_t)(sep - text) : (size_t)(end - text);

		if (hist_parse(&runs[n], text, len, "fuzz", &err))
			break;
		n++;
		if (!sep)
			break;
		text = sep + strlen(SEP);
	}
	if (n >= 2 && compare_runs(runs, n - 1, &runs[n - 1], &rules, 1, &j, &nj))
		free(j);
	else if (n >= 2)
		report(j, nj);
	for (size_t i = 0; i < n; i++)
		hist_release(&runs[i]);
	return 0;
}
