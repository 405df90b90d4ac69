/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare.c - `memgate compare` from start to end, and the report of any comparison. */
#include "session/compare.h"
#include "session/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* The report of a comparison: console, JUnit, JSON; the exit status of its verdicts. */
int session_report_comparison(const struct session *ss, const struct case_result *results, size_t n)
{
	struct report_run rep;
	int ret;

	session_report_init(ss, &rep, results, n);
	rep.time_s = (double)(util_now_ns() - ss->t0) / 1e9;
	report_console(&rep, 0, stdout);
	ret = session_write_reports(ss->cfg, &rep) ? EXIT_HARNESS : session_status(results, n);
	session_report_release(&rep);
	return ret;
}

/* The @n results @files into @runs; 0 or an exit status (nothing loaded then). */
static int load_runs(struct hist_run *runs, const char *const *files, int n)
{
	struct mg_err err = {0};

	for (int i = 0; i < n; i++) {
		if (!hist_load(&runs[i], files[i], &err))
			continue;
		fprintf(stderr, "memgate: %s\n", err.msg);
		for (int k = 0; k < i; k++)
			hist_release(&runs[k]);
		return err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	return 0;
}

/* Base runs of head's host class only: another is no baseline. 0 or EXIT_USAGE, said. */
static int same_host_class(const struct hist_run *runs, const char *const *files, int n)
{
	const struct hist_run *head = &runs[n - 1];

	for (int i = 0; i + 1 < n; i++) {
		if (!strcmp(runs[i].host_hash, head->host_hash))
			continue;
		fprintf(stderr,
			"memgate: %s is of host class %s (%s), %s of %s (%s): runs of another host "
			"class are no baseline (--any-host to compare anyway)\n",
			files[i], runs[i].host_hash, runs[i].host_class, files[n - 1],
			head->host_hash, head->host_class);
		return EXIT_USAGE;
	}
	return 0;
}

/* Head (the last of the @n @runs) judged against the others, reported; the exit status. */
static int judge_runs(const struct session *ss, struct hist_run *runs, const char *const *files,
		      int n)
{
	struct compare_results res = {0};
	struct judged *j = NULL;
	size_t nj = 0;
	char context[1024];
	int ret = 0;

	if (compare_runs(runs, (size_t)n - 1, &runs[n - 1], &ss->rules, ss->cfg->opts.seed, &j,
			 &nj))
		return EXIT_HARNESS;
	compare_context(&runs[0], &runs[n - 1], context, sizeof(context));
	if (compare_results_make(j, nj, "baseline", context, &res))
		ret = EXIT_HARNESS;
	if (!ret)
		ret = session_report_comparison(ss, res.rows.results, res.rows.n);
	/* No metric of head met one of the base runs': a comparison of nothing never passes. */
	if (!ret && !nj) {
		fprintf(
		    stderr,
		    "memgate: compare: nothing compared: no perf case that passed in %s has a "
		    "metric that passed in the base runs (case names, outcomes and host classes "
		    "decide what is compared)\n",
		    files[n - 1]);
		ret = EXIT_FAILED;
	}
	compare_results_release(&res);
	return ret;
}

int session_compare(struct session_config *cfg, const char *const *files, int n, bool any_host)
{
	struct hist_run *runs;
	struct session ss;
	int ret;

	if ((ret = session_check_reports(cfg)) || (ret = session_open(&ss, cfg)))
		return ret;
	runs = calloc((size_t)n, sizeof(*runs));
	ret = runs ? load_runs(runs, files, n) : EXIT_HARNESS;
	if (!ret) {
		ret = any_host ? 0 : same_host_class(runs, files, n);
		if (!ret)
			ret = judge_runs(&ss, runs, files, n);
		for (int i = 0; i < n; i++)
			hist_release(&runs[i]);
	}
	free(runs);
	session_close(&ss);
	return ret;
}
