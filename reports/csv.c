/* SPDX-License-Identifier: GPL-2.0-or-later */
/* csv.c - the figures as Jenkins' Plot plugin reads them: a file per chart, a row of series
 * labels, then a row of values. */
#include "reports/report.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"
#include "util/util.h"

/* One chart holds figures that share a scale: those of one suite in one unit. */
struct chart {
	const char *suite;
	const char *unit;
};

static bool same_chart(const struct chart *a, const struct chart *b)
{
	return !strcmp(a->suite, b->suite) && !strcmp(a->unit, b->unit);
}

/* The chart metric @m of result @r is drawn in: its suite and unit. */
static struct chart chart_of(const struct case_result *r, const struct metric_result *m)
{
	return (struct chart){r->inst->suite->name, m->def->unit};
}

/* A field as RFC 4180 has it: quoted when it holds a comma, a quote or a line break. */
static void put_field(const char *s, FILE *f)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* "memslots-GiB_s.csv": the unit kept to characters every file system and URL takes. */
static void chart_file(const struct chart *c, const char *dir, char *buf, size_t len)
{
	char unit[64];
	size_t i;

	for (i = 0; i < sizeof(unit) - 1 && c->unit[i]; i++)
		unit[i] = isalnum((unsigned char)c->unit[i]) ? c->unit[i] : '_';
	unit[i] = '\0';
	snprintf(buf, len, "%s/%s-%s.csv", dir, c->suite, i ? unit : "none");
}

/* One row of chart @c in @f: the labels (@row 0), or the medians (@row 1). */
static void chart_row(const struct report_run *run, const struct chart *c, int row, FILE *f)
{
	char full[256], label[512];
	const char *sep = "";

	for (size_t i = 0; i < run->n; i++) {
		const struct case_result *r = &run->results[i];

		for (unsigned int k = 0; k < r->inst->def->n_metrics; k++) {
			const struct metric_result *m = &r->metrics[k];
			struct chart mine = chart_of(r, m);

			if (!m->n || !same_chart(&mine, c))
				continue;
			fputs(sep, f);
			sep = ",";
			snprintf(label, sizeof(label), "%s %s",
				 case_full_name(r->inst, full, sizeof(full)), m->def->name);
			if (row == 0)
				put_field(label, f);
			else
				fprintf(f, "%.10g", m->sum.median);
		}
	}
	fputc('\n', f);
}

static int write_chart(const struct report_run *run, const struct chart *c, const char *dir,
		       struct mg_err *err)
{
	struct file_out rf;
	char path[4096];
	int ret;

	chart_file(c, dir, path, sizeof(path));
	ret = file_out_create(&rf, path, err);
	if (ret)
		return ret;
	chart_row(run, c, 0, rf.f);
	chart_row(run, c, 1, rf.f);
	return file_out_commit(&rf, err);
}

int report_csv_check(const char *dir, struct mg_err *err)
{
	char probe[4096];
	struct stat st;

	if (!dir || !*dir)
		return mg_err_set(err, EINVAL, "--csv: an empty path");
	if (mkdir(dir, 0777) && errno != EEXIST)
		return mg_err_set(err, errno, "--csv %s: cannot make the folder: %s", dir,
				  strerror(errno));
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode))
		return mg_err_set(err, ENOTDIR,
				  "--csv %s: not a folder, or a link to one (one file per "
				  "chart goes into it)",
				  dir);
	if (snprintf(probe, sizeof(probe), "%s/suite-unit.csv", dir) >= (int)sizeof(probe))
		return mg_err_set(err, ENAMETOOLONG, "--csv %s: the path is too long", dir);
	return file_path_check(probe, "--csv", err);
}

/* @c added to the @n @charts unless one of them is it. Returns 0 or -E2BIG with @err. */
static int chart_add(struct chart *charts, size_t *n, size_t max, const struct chart *c,
		     struct mg_err *err)
{
	for (size_t j = 0; j < *n; j++)
		if (same_chart(&charts[j], c))
			return 0;
	if (*n == max)
		return mg_err_set(err, E2BIG, "--csv: more than %zu charts", max);
	charts[(*n)++] = *c;
	return 0;
}

int report_csv_write(const struct report_run *run, const char *dir, struct mg_err *err)
{
	struct chart charts[64];
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < run->n; i++) {
		const struct case_result *r = &run->results[i];

		for (unsigned int k = 0; !ret && k < r->inst->def->n_metrics; k++) {
			struct chart c = chart_of(r, &r->metrics[k]);

			if (r->metrics[k].n)
				ret = chart_add(charts, &n, ARRAY_SIZE(charts), &c, err);
		}
	}
	for (size_t j = 0; !ret && j < n; j++)
		ret = write_chart(run, &charts[j], dir, err);
	return ret;
}
