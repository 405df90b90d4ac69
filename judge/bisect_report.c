/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bisect_report.c - a bisect's answer as text a maintainer can paste: on the 0-day robot's
 * model, the first bad commit, then a row a metric with both sides' figures and the change. */
#include <math.h>
#include <stdio.h>

#include "judge/bisect.h"

/* @s as one word of a POSIX shell: in single quotes, each of its own as '\\''. */
static void quoted(const char *s, FILE *out)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* A commit's figure of metric @m: the geometric mean of its rounds, their spread in percent. */
static void figure(const struct bisect_figures *f, size_t m, double *mean, double *sd_pct)
{
	double s = 0, ss = 0;
	size_t n = f->n[m];

	for (size_t i = 0; i < n; i++)
		s += log(f->v[m][i]);
	*mean = n ? exp(s / (double)n) : NAN;
	for (size_t i = 0; i < n; i++)
		ss += (f->v[m][i] - *mean) * (f->v[m][i] - *mean);
	*sd_pct = n > 1 ? 100 * sqrt(ss / (double)(n - 1)) / *mean : 0;
}

/* The row of metric @m between commits @lo and @hi. */
static void row(const struct bisect *bs, size_t m, size_t lo, size_t hi, FILE *out)
{
	const struct bisect_metric *mt = &bs->metrics[m];
	double a, a_sd, b, b_sd;

	figure(&bs->figs[lo], m, &a, &a_sd);
	figure(&bs->figs[hi], m, &b, &b_sd);
	fprintf(
	    out,
	    "  %12.6g \xc2\xb1%5.1f%% %+9.1f%% %12.6g \xc2\xb1%5.1f%%  %s %s (%s, %s is better)\n",
	    a, a_sd, 100 * (b / a - 1), b, b_sd, mt->case_name, mt->name, mt->unit,
	    mt->better == LOWER_IS_BETTER ? "lower" : "higher");
}

/* The commits of @lo + 1 to @hi, each with what the search made of it. */
static void range(const struct bisect *bs, size_t m, const struct bisect_commit *c, FILE *out)
{
	static const char *const why[] = {"not measured", "good", "bad", "unknown",
					  "does not build"};

	for (size_t i = bs->answer[m].lo + 1; i <= bs->answer[m].hi; i++)
		fprintf(out, "  %.12s %s (%s)\n", c[i].hash, c[i].subject,
			i == bs->answer[m].hi ? "bad" : why[bs->cls[i][m]]);
}

void bisect_report(const struct bisect *bs, const struct bisect_commit *commits, const char *host,
		   const char *base_cmd, const char *head_cmd, FILE *out)
{
	bool told[BISECT_MAX_METRICS] = {false};

	for (size_t m = 0; m < bs->n_metrics; m++) {
		const struct bisect_answer *a = &bs->answer[m];

		if (told[m] || a->no_change)
			continue;
		if (a->hi != a->lo + 1) {
			fprintf(out,
				"%s %s: the first bad commit is one of these %zu (the others "
				"did not build or could not be told apart):\n",
				bs->metrics[m].case_name, bs->metrics[m].name, a->hi - a->lo);
			range(bs, m, commits, out);
			fputc('\n', out);
			told[m] = true;
			continue;
		}
		fprintf(out, "The first bad commit:\n\ncommit %s\nAuthor: %s\n\n    %s\n\n",
			commits[a->hi].hash, commits[a->hi].author, commits[a->hi].subject);
		fprintf(out, "  %12s %8s %10s %12s %8s\n", "parent", "\xc2\xb1sd", "%change",
			"commit", "\xc2\xb1sd");
		/* Every metric with this culprit, in one table. */
		for (size_t k = m; k < bs->n_metrics; k++) {
			if (told[k] || bs->answer[k].no_change || bs->answer[k].lo != a->lo ||
			    bs->answer[k].hi != a->hi)
				continue;
			row(bs, k, a->lo, a->hi, out);
			told[k] = true;
		}
		fputc('\n', out);
	}
	for (size_t m = 0; m < bs->n_metrics; m++)
		if (bs->answer[m].no_change)
			fprintf(out,
				"%s %s: GOOD and BAD do not differ past its tolerance (%.3g%%): "
				"nothing to bisect\n",
				bs->metrics[m].case_name, bs->metrics[m].name,
				100 * bs->metrics[m].tolerance);
	fprintf(out, "host: %s\n", host);
	/* The sides, when there is a culprit or a range to reproduce. */
	for (size_t m = 0; m < bs->n_metrics; m++) {
		if (bs->answer[m].no_change)
			continue;
		fputs("to reproduce, memgate ab of the culprit against its parent:\n  --base ",
		      out);
		quoted(base_cmd, out);
		fputs("\n  --head ", out);
		quoted(head_cmd, out);
		fputc('\n', out);
		break;
	}
}
