/* SPDX-License-Identifier: GPL-2.0-or-later */
/* history.c - read results files (jansson) into runs, cases and samples; find a host's runs. */
#include "judge/history.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "judge/calibration.h"
#include "util/json.h"
#include "util/text.h"

/* A string member, "" when absent or not a string. */
static const char *str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int load_metric(const json_t *jm, struct hist_metric *m)
{
	const json_t *samples = json_object_get(jm, "samples");

	m->name = str_of(jm, "name");
	m->unit = str_of(jm, "unit");
	m->better = strcmp(str_of(jm, "better"), "higher") ? LOWER_IS_BETTER : HIGHER_IS_BETTER;
	m->reference = json_is_true(json_object_get(jm, "reference"));
	m->n = json_array_size(samples);
	/* Judging resamples every sample thousands of times: a bound keeps it to seconds. */
	if (m->n > HIST_MAX_SAMPLES)
		return -E2BIG;
	m->v = calloc(m->n ? m->n : 1, sizeof(*m->v));
	if (!m->v)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		m->v[i] = json_number_value(json_array_get(samples, i));
	return 0;
}

static int load_case(const json_t *jc, struct hist_case *c)
{
	const json_t *metrics = json_object_get(jc, "metrics");

	c->suite = str_of(jc, "suite");
	c->group = str_of(jc, "group");
	c->name = str_of(jc, "name");
	c->kind = str_of(jc, "kind");
	c->outcome = str_of(jc, "outcome");
	c->message = str_of(jc, "message");
	c->time_s = json_number_value(json_object_get(jc, "time_s"));
	snprintf(c->full_name, sizeof(c->full_name), "%s.%s.%s", c->suite, c->group, c->name);
	c->metrics = calloc(json_array_size(metrics) + 1, sizeof(*c->metrics));
	if (!c->metrics)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(metrics); i++) {
		int ret = load_metric(json_array_get(metrics, i), &c->metrics[i]);

		if (ret)
			return ret;
		c->n_metrics++;
	}
	return 0;
}

/* The run's own facts; a file without them is not memgate results of this format. */
static int load_header(struct hist_run *r, struct mg_err *err)
{
	const json_t *format = json_object_get(r->root, "format");
	const json_t *host = json_object_get(r->root, "host_class");

	if (!json_is_object(r->root) || !json_is_array(json_object_get(r->root, "cases")))
		return mg_err_set(err, EINVAL, "%s: not memgate results (no \"cases\" array)",
				  r->path);
	if (!json_is_integer(format) || !json_is_object(host))
		return mg_err_set(err, EPROTO,
				  "%s: results of an older memgate (no \"format\" and "
				  "\"host_class\"): rerun it with this one",
				  r->path);
	if (json_integer_value(format) != HISTORY_FORMAT)
		return mg_err_set(err, EPROTO, "%s: results format %lld, this memgate reads %d",
				  r->path, (long long)json_integer_value(format), HISTORY_FORMAT);
	r->host_class = str_of(host, "class");
	r->host_hash = str_of(host, "hash");
	r->kernel = str_of(r->root, "kernel");
	r->glibc = str_of(r->root, "glibc");
	r->qemu = str_of(r->root, "qemu");
	r->version = str_of(r->root, "memgate_version");
	r->commit = str_of(r->root, "memgate_commit");
	r->label = str_of(r->root, "label");
	r->timestamp = str_of(r->root, "timestamp");
	return 0;
}

/* The run in @r->root (taken over): its header, its cases. */
static int hist_take(struct hist_run *r, const char *path, struct mg_err *err)
{
	const json_t *cases;
	int ret;

	ret = load_header(r, err);
	cases = json_object_get(r->root, "cases");
	r->cases = ret ? NULL : calloc(json_array_size(cases) + 1, sizeof(*r->cases));
	if (!ret && !r->cases) {
		mg_err_set(err, ENOMEM, "out of memory reading %s", path);
		ret = -ENOMEM;
	}
	for (size_t i = 0; !ret && i < json_array_size(cases); i++) {
		int got = load_case(json_array_get(cases, i), &r->cases[i]);

		if (got == -E2BIG)
			ret =
			    mg_err_set(err, E2BIG,
				       "%s: case %s has a metric of more than %d samples (memgate "
				       "run -n takes at most that many)",
				       path, r->cases[i].full_name, HIST_MAX_SAMPLES);
		else if (got)
			ret = mg_err_set(err, ENOMEM, "out of memory reading %s", path);
		r->n_cases++;
	}
	if (ret)
		hist_release(r);
	return ret;
}

int hist_load(struct hist_run *r, const char *path, struct mg_err *err)
{
	struct mg_err why;
	size_t len = 0;
	char *text = text_read_input(path, HIST_MAX_BYTES, &len, &why);
	int ret;

	if (!text) {
		memset(r, 0, sizeof(*r));
		mg_err_set(err, why.code, "%s", why.msg);
		return why.code == ENOENT ? -ENOENT : -EINVAL;
	}
	ret = hist_parse(r, text, len, path, err);
	free(text);
	return ret;
}

int hist_parse(struct hist_run *r, const char *text, size_t len, const char *name,
	       struct mg_err *err)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", name);
	r->root = json_doc_parse(text, len, name, NULL, err);
	if (!r->root)
		return -EINVAL;
	return hist_take(r, name, err);
}

void hist_release(struct hist_run *r)
{
	for (size_t i = 0; r->cases && i < r->n_cases; i++) {
		for (size_t m = 0; m < r->cases[i].n_metrics; m++)
			free(r->cases[i].metrics[m].v);
		free(r->cases[i].metrics);
	}
	free(r->cases);
	json_decref(r->root);
	memset(r, 0, sizeof(*r));
}

const struct hist_case *hist_case(const struct hist_run *r, const char *full_name)
{
	char want[256], have[256];

	case_key(full_name, want, sizeof(want));
	for (size_t i = 0; i < r->n_cases; i++)
		if (!strcmp(case_key(r->cases[i].full_name, have, sizeof(have)), want))
			return &r->cases[i];
	return NULL;
}

const char *hist_plain_suite(const char *suite)
{
	const char *p = strstr(suite, "].");

	return p ? p + 2 : suite;
}

const char *hist_guest_key(const struct hist_case *hc, char *buf, size_t len)
{
	char full[512];

	snprintf(full, sizeof(full), "%s.%s.%s", hist_plain_suite(hc->suite), hc->group, hc->name);
	return case_key(full, buf, len);
}

const struct hist_case *hist_guest_case(const struct hist_run *r, const char *key)
{
	char want[256], have[256];

	case_key(key, want, sizeof(want));
	for (size_t i = 0; i < r->n_cases; i++)
		if (!strcmp(hist_guest_key(&r->cases[i], have, sizeof(have)), want))
			return &r->cases[i];
	return NULL;
}

const char *hist_vm_prop(const struct hist_run *r, const char *name)
{
	const char *s = json_string_value(json_object_get(json_object_get(r->root, "vm"), name));

	return s ? s : "";
}

const struct hist_metric *hist_metric(const struct hist_case *c, const char *name)
{
	for (size_t i = 0; c && i < c->n_metrics; i++)
		if (!strcmp(c->metrics[i].name, name))
			return &c->metrics[i];
	return NULL;
}

/* A day of clock skew between agents; a run dated later than that would stay newest for ever. */
#define FUTURE_SKEW_S 86400

/*
 * Is @stamp ("YYYY-MM-DDTHH:MM:SS", UTC) a time a run could have been made at: well formed,
 * and not after now (with a day's skew)? The newest runs are the baselines: a date from the
 * future would keep its run among them whatever comes after.
 */
static bool plausible_time(const char *stamp)
{
	struct tm tm = {0};
	const char *end = strptime(stamp, "%Y-%m-%dT%H:%M:%S", &tm);

	return end && !*end && timegm(&tm) <= time(NULL) + FUTURE_SKEW_S;
}

/* Append the run in @path to @runs when it is of @host_hash. */
static int consider(const char *path, const char *host_hash, struct hist_run **runs, size_t *n,
		    size_t *cap)
{
	struct hist_run r;
	struct mg_err e;

	if (hist_load(&r, path, &e)) {
		fprintf(stderr, "memgate: warning: skipping %s\n", e.msg);
		return 0;
	}
	if (strcmp(r.host_hash, host_hash)) {
		hist_release(&r);
		return 0;
	}
	if (!plausible_time(r.timestamp)) {
		fprintf(stderr,
			"memgate: warning: skipping %s: its timestamp \"%s\" is not a time it "
			"could have "
			"been made at (YYYY-MM-DDTHH:MM:SS, UTC, not in the future)\n",
			path, r.timestamp);
		hist_release(&r);
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct hist_run *grown = realloc(*runs, c * sizeof(*grown));

		if (!grown) {
			hist_release(&r);
			return -ENOMEM;
		}
		*runs = grown;
		*cap = c;
	}
	(*runs)[(*n)++] = r;
	return 0;
}

/* Every *.json in @dir, and one level of subfolders. */
static int scan(const char *dir, int depth, const char *host_hash, struct hist_run **runs,
		size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		char path[1024];
		struct stat st;
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		/* lstat: a link in a history leads out of it, and is passed over. */
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth == 0)
			ret = scan(path, 1, host_hash, runs, n, cap);
		else if (S_ISREG(st.st_mode) && len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
			 !calib_is_file(e->d_name))
			ret = consider(path, host_hash, runs, n, cap);
	}
	closedir(d);
	return ret == -ENOENT || ret == -EACCES ? 0 : ret;
}

static int newest_first(const void *a, const void *b)
{
	const struct hist_run *x = a, *y = b;
	int c = strcmp(y->timestamp, x->timestamp);

	return c ? c : strcmp(y->path, x->path);
}

int hist_dir_runs(const char *dir, const char *host_hash, size_t max, struct hist_run **runs,
		  size_t *n, struct mg_err *err)
{
	size_t cap = 0;
	int ret;

	*runs = NULL;
	*n = 0;
	ret = scan(dir, 0, host_hash, runs, n, &cap);
	/* No history yet (the first build of a job): no runs, not an error. */
	if (ret == -ENOENT)
		ret = 0;
	if (ret) {
		for (size_t i = 0; i < *n; i++)
			hist_release(&(*runs)[i]);
		free(*runs);
		*runs = NULL;
		*n = 0;
		return mg_err_set(err, -ret, "--baseline %s: %s", dir, strerror(-ret));
	}
	if (*n)
		qsort(*runs, *n, sizeof(**runs), newest_first);
	while (*n > max)
		hist_release(&(*runs)[--*n]);
	return 0;
}

int hist_from_results(struct hist_run *r, const struct case_result *res, size_t n,
		      const struct hw_info *hw)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "(this run)");
	r->host_class = hw->fingerprint;
	r->host_hash = hw->fingerprint_hash;
	r->kernel = hw->os_release;
	r->glibc = hw->glibc;
	r->qemu = r->version = r->commit = r->label = r->timestamp = "";
	r->cases = calloc(n + 1, sizeof(*r->cases));
	if (!r->cases)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, r->n_cases++) {
		const struct case_inst *in = res[i].inst;
		struct hist_case *c = &r->cases[i];

		c->suite = in->suite->name;
		c->group = case_group(in->def);
		c->name = in->name;
		c->message = res[i].message ? res[i].message : "";
		c->time_s = res[i].time_s;
		c->kind = in->def->kind == CASE_PERF ? "perf" : "check";
		c->outcome = case_outcome_name(res[i].outcome);
		case_full_name(in, c->full_name, sizeof(c->full_name));
		c->metrics = calloc(in->def->n_metrics + 1, sizeof(*c->metrics));
		if (!c->metrics)
			return -ENOMEM; /* hist_release_shared() frees what was made */
		for (unsigned int m = 0; m < in->def->n_metrics; m++, c->n_metrics++)
			c->metrics[m] = (struct hist_metric){.name = in->def->metrics[m].name,
							     .unit = res[i].metrics[m].def->unit,
							     .better = in->def->metrics[m].better,
							     .v = res[i].metrics[m].v,
							     .n = res[i].metrics[m].n};
	}
	return 0;
}

void hist_release_shared(struct hist_run *r)
{
	for (size_t i = 0; r->cases && i < r->n_cases; i++)
		free(r->cases[i].metrics);
	free(r->cases);
	memset(r, 0, sizeof(*r));
}
