/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibration.c - per-metric A/A noise of a host class, kept beside its baselines (jansson). */
#include "judge/calibration.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run/case.h"
#include "util/file.h"
#include "util/json.h"
#include "util/text.h"
#include "util/util.h"

/* A calibration file is a few hundred metrics: a few hundred KiB at most. */
#define CALIB_MAX_BYTES (16u << 20)

void calib_release(struct calibration *c)
{
	free(c->e);
	memset(c, 0, sizeof(*c));
}

/* The string field @field of @o, or @otherwise. */
static const char *str_or(const json_t *o, const char *field, const char *otherwise)
{
	const char *s = json_string_value(json_object_get(o, field));

	return s ? s : otherwise;
}

/* The most a calibration can claim: counts a run could make, a spread of the log of a ratio. */
#define CALIB_MAX_COUNT 1e6
#define CALIB_MAX_SPREAD 10.0

/* A number field of @o that must be there, from 0 to @max. */
static int number(const json_t *o, const char *field, double max, double *out)
{
	const json_t *v = json_object_get(o, field);

	if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= max))
		return -EINVAL;
	*out = json_number_value(v);
	return 0;
}

int calib_parse(struct calibration *c, const char *text, const char *name, struct mg_err *err)
{
	json_t *root = json_doc_parse(text, strlen(text), name, NULL, err), *metrics;
	double runs = 0, rounds = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", name);
	if (!root)
		return -EINVAL;
	metrics = json_object_get(root, "metrics");
	if (json_integer_value(json_object_get(root, "format")) != CALIB_FORMAT ||
	    !json_is_array(metrics) || number(root, "runs", CALIB_MAX_COUNT, &runs) ||
	    number(root, "rounds", CALIB_MAX_COUNT, &rounds)) {
		ret = mg_err_set(err, EINVAL,
				 "%s: expected a memgate calibration (format %d: runs and rounds "
				 "from 0 to %.0f, and a list of metrics)",
				 name, CALIB_FORMAT, CALIB_MAX_COUNT);
		goto out;
	}
	c->runs = (unsigned int)runs;
	c->rounds = (unsigned int)rounds;
	snprintf(c->made, sizeof(c->made), "%s", str_or(root, "made", "?"));
	snprintf(c->when, sizeof(c->when), "%s", c->made);
	c->files = 1;
	snprintf(c->memgate, sizeof(c->memgate), "%s", str_or(root, "memgate", "?"));
	snprintf(c->host_hash, sizeof(c->host_hash), "%s", str_or(root, "host_hash", ""));
	c->e = calloc(json_array_size(metrics) + 1, sizeof(*c->e));
	if (!c->e) {
		ret = mg_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(metrics); i++) {
		const json_t *m = json_array_get(metrics, i);
		const char *key = json_string_value(json_object_get(m, "key"));
		const char *unit = json_string_value(json_object_get(m, "unit"));
		struct calib_entry *e = &c->e[c->n];
		double n_rounds;

		if (!key || strlen(key) >= sizeof(e->key) ||
		    number(m, "sd", CALIB_MAX_SPREAD, &e->noise.sd) ||
		    number(m, "width", CALIB_MAX_SPREAD, &e->noise.width) ||
		    number(m, "rounds", CALIB_MAX_COUNT * CALIB_MAX_COUNT, &n_rounds)) {
			ret = mg_err_set(err, EINVAL,
					 "%s: metric %zu: expected key, rounds (0 to %.0f), sd and "
					 "width (0 to %.0f)",
					 name, i + 1, CALIB_MAX_COUNT * CALIB_MAX_COUNT,
					 CALIB_MAX_SPREAD);
			goto out;
		}
		snprintf(e->key, sizeof(e->key), "%s", key);
		snprintf(e->unit, sizeof(e->unit), "%s", unit ? unit : "");
		e->noise.rounds = (size_t)n_rounds;
		c->n++;
	}
out:
	json_decref(root);
	if (ret)
		calib_release(c);
	return ret;
}

/* DIR/HASH/CALIB_FILE for @age 0, or the one @age calibrations before it: calibration.AGE.json */
static void file_path(char *buf, size_t len, const char *dir, const char *host_hash,
		      unsigned int age)
{
	if (age)
		snprintf(buf, len, "%s/%s/calibration.%u.json", dir, host_hash, age);
	else
		snprintf(buf, len, "%s/%s/%s", dir, host_hash, CALIB_FILE);
}

bool calib_is_file(const char *name)
{
	size_t len = strlen(name);

	return !strncmp(name, "calibration.", 12) && len > 5 && !strcmp(name + len - 5, ".json");
}

/* The calibration @age before the newest into @one: 0, -ENOENT when there is none, or -errno. */
static int load_one(struct calibration *one, const char *dir, const char *host_hash,
		    unsigned int age, struct mg_err *err)
{
	char path[1100];
	struct mg_err why;
	char *text;
	int ret;

	file_path(path, sizeof(path), dir, host_hash, age);
	text = text_read_input(path, CALIB_MAX_BYTES, NULL, &why);
	if (!text)
		return why.code == ENOENT ? -ENOENT : mg_err_set(err, why.code, "%s", why.msg);
	ret = calib_parse(one, text, path, err);
	free(text);
	return ret;
}

int calib_load(struct calibration *c, const char *dir, const char *host_hash, struct mg_err *err)
{
	/* Each on its own: the analyzer takes a memset of one array element for all of them. */
	struct calibration *each[CALIB_KEEP] = {NULL};
	unsigned int n;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	for (n = 0; n < CALIB_KEEP; n++) {
		each[n] = calloc(1, sizeof(*each[n]));
		if (!each[n])
			ret = mg_err_set(err, ENOMEM, "out of memory");
		else
			ret = load_one(each[n], dir, host_hash, n, err);
		if (ret)
			break;
	}
	/* None is no calibration; a gap ends the older ones. */
	if (ret == -ENOENT && n)
		ret = 0;
	if (!ret)
		ret = calib_combine(c, (const struct calibration *const *)each, n, err);
	for (unsigned int i = 0; i < CALIB_KEEP; i++) {
		if (each[i])
			calib_release(each[i]);
		free(each[i]);
	}
	return ret;
}

/* The entry of @key in @c, or NULL. */
static const struct calib_entry *entry_of(const struct calibration *c, const char *key)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(c->e[i].key, key))
			return &c->e[i];
	return NULL;
}

/* @first's metric over the @n calibrations @each: the upper median of those that count. */
static struct calib_entry combined(const struct calibration *const *each, size_t n,
				   const struct calib_entry *first)
{
	struct calib_entry m = *first;
	double sd[CALIB_KEEP], width[CALIB_KEEP];
	size_t k = 0, rounds = 0;

	for (size_t i = 0; i < n; i++) {
		const struct calib_entry *e = entry_of(each[i], first->key);

		if (e && e->noise.rounds >= CALIB_MIN_ROUNDS) {
			sd[k] = e->noise.sd;
			width[k] = e->noise.width;
			rounds += e->noise.rounds;
			k++;
		}
	}
	if (k) {
		qsort(sd, k, sizeof(*sd), util_cmp_double);
		qsort(width, k, sizeof(*width), util_cmp_double);
		m.noise.sd = sd[k / 2];
		m.noise.width = width[k / 2];
		m.noise.rounds = rounds;
	}
	return m;
}

int calib_combine(struct calibration *c, const struct calibration *const *each, size_t n,
		  struct mg_err *err)
{
	size_t cap = 0;

	memset(c, 0, sizeof(*c));
	if (n > CALIB_KEEP)
		n = CALIB_KEEP;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		cap += each[i]->n;
	c->e = calloc(cap + 1, sizeof(*c->e));
	if (!c->e)
		return mg_err_set(err, ENOMEM, "out of memory");
	snprintf(c->path, sizeof(c->path), "%s", each[0]->path);
	snprintf(c->made, sizeof(c->made), "%s", each[0]->made);
	snprintf(c->memgate, sizeof(c->memgate), "%s", each[0]->memgate);
	snprintf(c->host_hash, sizeof(c->host_hash), "%s", each[0]->host_hash);
	c->runs = each[0]->runs;
	c->rounds = each[0]->rounds;
	c->files = (unsigned int)n;
	if (n == 1)
		snprintf(c->when, sizeof(c->when), "%s", each[0]->made);
	else
		snprintf(c->when, sizeof(c->when), "%.31s to %.31s, the upper median of %zu",
			 each[n - 1]->made, each[0]->made, n);
	/* Every metric any of them calibrated, once: the newest's first. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < each[i]->n; j++)
			if (!entry_of(c, each[i]->e[j].key))
				c->e[c->n++] = combined(each, n, &each[i]->e[j]);
	return 0;
}

/* "CASE_KEY:METRIC" of a metric of the case named @full_name. */
static void key_of(const char *full_name, const char *metric, char *buf, size_t len)
{
	char k[256];

	snprintf(buf, len, "%s:%s", case_key(full_name, k, sizeof(k)), metric);
}

const struct verdict_noise *calib_find_key(const struct calibration *c, const char *key)
{
	const struct calib_entry *e = entry_of(c, key);

	return e ? &e->noise : NULL;
}

const struct verdict_noise *calib_find(const struct calibration *c, const char *full_name,
				       const char *metric)
{
	char key[320];
	const struct calib_entry *e;

	key_of(full_name, metric, key, sizeof(key));
	e = entry_of(c, key);
	return e && e->noise.rounds >= CALIB_MIN_ROUNDS ? &e->noise : NULL;
}

static int push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		double *g = realloc(*v, c * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

int calib_add(struct calib_acc **acc, size_t *n_acc, const char *full_name, const char *metric,
	      const char *unit, int higher_is_better, const double *base, const double *head,
	      size_t n)
{
	char key[320];
	struct calib_acc *a = NULL;
	double sum = 0;
	size_t used = 0;

	key_of(full_name, metric, key, sizeof(key));
	for (size_t i = 0; i < *n_acc && !a; i++)
		if (!strcmp((*acc)[i].key, key))
			a = &(*acc)[i];
	if (!a) {
		struct calib_acc *g = realloc(*acc, (*n_acc + 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*acc = g;
		a = &g[(*n_acc)++];
		memset(a, 0, sizeof(*a));
		snprintf(a->key, sizeof(a->key), "%s", key);
		snprintf(a->unit, sizeof(a->unit), "%s", unit);
	}
	for (size_t i = 0; i < n; i++) {
		double d;

		/* A round without a ratio (a zero, a NaN) says nothing of the noise. */
		if (!(base[i] > 0) || !(head[i] > 0) || !isfinite(base[i]) || !isfinite(head[i]))
			continue;
		d = higher_is_better ? log(base[i] / head[i]) : log(head[i] / base[i]);
		if (push(&a->d, &a->n, &a->cap, d))
			return -ENOMEM;
		sum += d;
		used++;
	}
	if (used && push(&a->run_mean, &a->runs, &a->cap_runs, sum / (double)used))
		return -ENOMEM;
	return 0;
}

/* The sample standard deviation of @n values, 0 for fewer than 2. */
static double sd_of(const double *v, size_t n)
{
	double mean = 0, ss = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

struct verdict_noise calib_noise(const struct calib_acc *acc)
{
	struct verdict_noise z = {.rounds = acc->n, .sd = sd_of(acc->d, acc->n)};
	double per_run = acc->runs ? (double)acc->n / (double)acc->runs : 1;

	/*
	 * What a run's mean drifts by: the spread of the runs' means, but never less than the
	 * rounds' spread alone predicts for a run of this length (a handful of runs can agree by
	 * chance).
	 */
	z.width = fmax(sd_of(acc->run_mean, acc->runs), z.sd / sqrt(per_run));
	return z;
}

/*
 * Room for a new calibration: each older one moves up an age and the oldest goes. The newest is
 * linked as calibration.1.json, so that CALIB_FILE is there until the new one replaces it.
 */
static int rotate(const char *dir, const char *host_hash, struct mg_err *err)
{
	char from[1100], to[1100];

	for (unsigned int age = CALIB_KEEP - 1; age > 0; age--) {
		int r;

		file_path(from, sizeof(from), dir, host_hash, age - 1);
		file_path(to, sizeof(to), dir, host_hash, age);
		if (age == 1) {
			r = unlink(to) && errno != ENOENT ? -1 : link(from, to);
			/* A file system without hard links: the newest is gone for a moment. */
			if (r && errno != ENOENT)
				r = rename(from, to);
		} else {
			r = rename(from, to);
		}
		if (r && errno != ENOENT)
			return mg_err_set(err, errno, "%s: %s", to, strerror(errno));
	}
	return 0;
}

int calib_save(const struct calib_acc *acc, size_t n_acc, const char *dir, const char *host_hash,
	       const char *host_class, const char *memgate, unsigned int runs, unsigned int rounds,
	       struct mg_err *err)
{
	char sub[1100], path[1200], made[32];
	struct file_out out;
	json_t *root = json_object(), *metrics = json_array();
	struct stat st = {0};
	time_t t = time(NULL);
	struct tm tm;
	int ret = 0;

	gmtime_r(&t, &tm);
	strftime(made, sizeof(made), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(sub, sizeof(sub), "%s/%s", dir, host_hash);
	snprintf(path, sizeof(path), "%s/%s", sub, CALIB_FILE);
	for (size_t i = 0; metrics && i < n_acc; i++) {
		struct verdict_noise z = calib_noise(&acc[i]);

		json_array_append_new(metrics,
				      json_pack("{s:s, s:s, s:I, s:f, s:f}", "key", acc[i].key,
						"unit", acc[i].unit, "rounds", (json_int_t)z.rounds,
						"sd", z.sd, "width", z.width));
	}
	json_object_set_new(root, "format", json_integer(CALIB_FORMAT));
	json_object_set_new(root, "host_class", json_string(host_class));
	json_object_set_new(root, "host_hash", json_string(host_hash));
	json_object_set_new(root, "made", json_string(made));
	json_object_set_new(root, "memgate", json_string(memgate));
	json_object_set_new(root, "runs", json_integer(runs));
	json_object_set_new(root, "rounds", json_integer(rounds));
	json_object_set_new(root, "metrics", metrics);
	/* Folders of its own: never through a link planted in the history. */
	if ((ret = util_make_dir(dir, 0755, &st)))
		ret = mg_err_set(err, -ret, "%s: %s", dir, util_make_dir_error(ret));
	else if ((ret = util_make_dir(sub, 0755, &st)))
		ret = mg_err_set(err, -ret, "%s: %s", sub, util_make_dir_error(ret));
	/* Written whole, the older ones moved up, then renamed over the old one: a reader never
	 * sees half of it. */
	else if (!(ret = file_out_create(&out, path, err))) {
		out.failed = json_dumpf(root, out.f, JSON_INDENT(1) | JSON_SORT_KEYS) != 0;
		if ((ret = rotate(dir, host_hash, err)))
			file_out_abort(&out);
		else
			ret = file_out_commit(&out, err);
	}
	json_decref(root);
	return ret;
}

void calib_acc_release(struct calib_acc *acc, size_t n_acc)
{
	for (size_t i = 0; i < n_acc; i++) {
		free(acc[i].d);
		free(acc[i].run_mean);
	}
	free(acc);
}
