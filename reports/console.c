/* SPDX-License-Identifier: GPL-2.0-or-later */
/* console.c - the readable summary printed at the end of `memgate run`. */
#include "reports/report.h"

#include <string.h>

char *report_metric_line(const struct metric_result *m, char *buf, size_t len)
{
	const struct stats_summary *s = &m->sum;

	snprintf(buf, len,
		 "%s: median %.6g %s (MAD %.3g, min %.6g, max %.6g, 95%% CI %.6g..%.6g, n %zu, "
		 "%s is better, counter %s)",
		 m->def->name, s->median, m->def->unit, s->mad, s->min, s->max, s->ci_lo, s->ci_hi,
		 s->n, m->def->better == LOWER_IS_BETTER ? "lower" : "higher",
		 m->counter[0] ? m->counter : "n/a");
	return buf;
}

/* @s on a terminal, never driving it: control bytes but newline and tab print as '?'. */
static void put_text(const char *s, FILE *out)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		fputc((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c, out);
	}
}

void report_console_case(const struct case_result *r, FILE *out)
{
	char full[256], line[512];

	fprintf(out, "%-5s %-56s %8.3f s\n", case_result_label(r),
		case_full_name(r->inst, full, sizeof(full)), r->time_s);
	/* A verdict's rounds (base, head) are shown when it failed; a case's figures always. */
	for (unsigned int k = 0; k < r->inst->def->n_metrics; k++)
		if (r->metrics[k].n &&
		    (r->inst->def->kind != CASE_GATE || r->outcome != OUTCOME_PASS))
			fprintf(out, "      %s\n",
				report_metric_line(&r->metrics[k], line, sizeof(line)));
	/* Host facts the reader should know, whatever the outcome: they never fail a case. */
	for (size_t k = 0; k < r->n_props; k++)
		if (case_result_is_warning(r->props[k].name)) {
			fputs("      WARN: ", out);
			put_text(r->props[k].value, out);
			fputc('\n', out);
		}
	if (r->message && r->outcome != OUTCOME_PASS) {
		fputs("      ", out);
		put_text(r->message, out);
		fputc('\n', out);
	}
	if (r->outcome == OUTCOME_ERROR && r->stderr_tail) {
		size_t len = strlen(r->stderr_tail);
		/* The last few lines are usually enough to see why; the reports hold more. */
		const char *tail = len > 600 ? r->stderr_tail + len - 600 : r->stderr_tail;

		fputs("      stderr (tail):\n", out);
		put_text(tail, out);
		if (*tail && tail[strlen(tail) - 1] != '\n')
			fputc('\n', out);
	}
	/* As the case ends, also when stdout is a pipe (a Jenkins console). */
	fflush(out);
}

void report_console(const struct report_run *run, size_t from, FILE *out)
{
	size_t count[4] = {0}, unstable = 0;

	for (size_t i = 0; i < run->n; i++) {
		count[run->results[i].outcome]++;
		unstable += run->results[i].unstable;
		if (i >= from)
			report_console_case(&run->results[i], out);
	}
	fprintf(out, "%zu cases: %zu passed, %zu failed, %zu errors, %zu skipped", run->n,
		count[OUTCOME_PASS], count[OUTCOME_FAIL] - unstable, count[OUTCOME_ERROR],
		count[OUTCOME_SKIP]);
	if (unstable)
		fprintf(out, ", %zu unstable", unstable);
	fprintf(out, " (%.1f s)\n", run->time_s);
}

const char *report_summary_of(const struct report_run *run, const struct suite_def *suite)
{
	for (size_t i = 0; i < run->n_summaries; i++)
		if (run->summaries[i].suite == suite)
			return run->summaries[i].text;
	return NULL;
}

void report_console_summaries(const struct report_run *run, FILE *out)
{
	for (size_t i = 0; i < run->n_summaries; i++)
		fprintf(out, "\n%s", run->summaries[i].text);
}
