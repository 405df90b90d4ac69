/* SPDX-License-Identifier: GPL-2.0-or-later */
/* result.c - building and freeing case results: outcomes, samples, properties, summaries. */
#include "run/result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

#define BOOTSTRAP_RESAMPLES 2000 /* 95% interval ends stable to ~1% of their width */

int case_result_init(struct case_result *r, const struct case_inst *inst)
{
	time_t t = time(NULL);
	struct tm tm;

	memset(r, 0, sizeof(*r));
	r->inst = inst;
	gmtime_r(&t, &tm);
	strftime(r->timestamp, sizeof(r->timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	r->metrics = calloc(inst->def->n_metrics ? inst->def->n_metrics : 1, sizeof(*r->metrics));
	if (!r->metrics)
		return -ENOMEM;
	for (unsigned int i = 0; i < inst->def->n_metrics; i++)
		r->metrics[i].def = &inst->def->metrics[i];
	return 0;
}

/* @line after what @dst holds, @sep between; out of memory keeps what was there. */
static void append_text(char **dst, const char *line, const char *sep)
{
	char *joined;

	if (!*dst) {
		*dst = strdup(line);
		return;
	}
	if (asprintf(&joined, "%s%s%s", *dst, sep, line) < 0)
		return;
	free(*dst);
	*dst = joined;
}

void case_result_set_outcome(struct case_result *r, enum case_outcome o, const char *msg)
{
	if (o > r->outcome) {
		r->outcome = o;
		free(r->message);
		r->message = NULL;
	}
	if (o == r->outcome)
		append_text(&r->message, msg, "; ");
}

void case_result_log(struct case_result *r, const char *line)
{
	append_text(&r->output, line, "\n");
}

int case_result_add_sample(struct metric_result *m, double v, int stolen)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		double *nv = realloc(m->v, cap * sizeof(*nv));
		unsigned char *ns;

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		ns = realloc(m->stolen, cap);
		if (!ns)
			return -ENOMEM;
		m->stolen = ns;
		m->cap = cap;
	}
	m->v[m->n] = v;
	m->stolen[m->n++] = (unsigned char)stolen;
	return 0;
}

int case_result_add_prop(struct case_result *r, const char *name, const char *value)
{
	struct case_prop *np = realloc(r->props, (r->n_props + 1) * sizeof(*np));
	char *n, *v;

	if (!np)
		return -ENOMEM;
	r->props = np;
	n = strdup(name ? name : "");
	v = strdup(value ? value : "");
	if (!n || !v) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	np[r->n_props].name = n;
	np[r->n_props].value = v;
	r->n_props++;
	return 0;
}

/* "warning", then "warning.2", "warning.3"...: the JSON report keys properties by name. */
int case_result_warn(struct case_result *r, const char *msg)
{
	char name[32] = "warning", line[16 + 4096];
	unsigned int k = 0;

	for (size_t i = 0; i < r->n_props; i++)
		if (case_result_is_warning(r->props[i].name))
			k++;
	if (k)
		snprintf(name, sizeof(name), "warning.%u", k + 1);
	snprintf(line, sizeof(line), "WARN: %.4090s", msg);
	case_result_log(r, line);
	return case_result_add_prop(r, name, msg);
}

bool case_result_is_warning(const char *prop_name)
{
	return !strcmp(prop_name, "warning") || !strncmp(prop_name, "warning.", 8);
}

void case_result_summarise(struct case_result *r, uint64_t seed)
{
	for (unsigned int i = 0; i < r->inst->def->n_metrics; i++) {
		struct metric_result *m = &r->metrics[i];

		if (m->n)
			stats_summarise(m->v, m->n, BOOTSTRAP_RESAMPLES,
					util_fnv1a64(seed, m->def->name), &m->sum);
	}
}

const struct metric_result *case_result_metric(const struct case_result *r, const char *name)
{
	for (unsigned int i = 0; r->metrics && i < r->inst->def->n_metrics; i++)
		if (!strcmp(r->metrics[i].def->name, name))
			return &r->metrics[i];
	return NULL;
}

const struct metric_result *case_result_sampled(const struct case_result *r, unsigned int m)
{
	return r->metrics && m < r->inst->def->n_metrics && r->metrics[m].n ? &r->metrics[m] : NULL;
}

double case_result_median(const struct case_result *r, unsigned int m)
{
	const struct metric_result *mr = case_result_sampled(r, m);

	return mr ? mr->sum.median : 0;
}

const char *case_result_prop(const struct case_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_props; i++)
		if (!strcmp(r->props[i].name, name))
			return r->props[i].value;
	return NULL;
}

void case_result_release(struct case_result *r)
{
	for (unsigned int i = 0; r->metrics && i < r->inst->def->n_metrics; i++) {
		free(r->metrics[i].v);
		free(r->metrics[i].stolen);
	}
	for (size_t i = 0; i < r->n_props; i++) {
		free(r->props[i].name);
		free(r->props[i].value);
	}
	free(r->metrics);
	free(r->props);
	free(r->message);
	free(r->output);
	free(r->stderr_tail);
	memset(r, 0, sizeof(*r));
}

int case_result_add_figure(struct case_result *r, const char *name, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.6g", v);
	return case_result_add_prop(r, name, buf);
}

const char *case_result_label(const struct case_result *r)
{
	return r->outcome == OUTCOME_FAIL && r->unstable ? "UNSTABLE"
							 : case_outcome_name(r->outcome);
}

int result_set_init(struct result_set *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->results = calloc(cap ? cap : 1, sizeof(*s->results));
	s->defs = calloc(cap ? cap : 1, sizeof(*s->defs));
	s->insts = calloc(cap ? cap : 1, sizeof(*s->insts));
	s->suites = calloc(cap ? cap : 1, sizeof(*s->suites));
	if (s->results && s->defs && s->insts && s->suites)
		return 0;
	result_set_release(s);
	return -ENOMEM;
}

struct case_result *result_set_add(struct result_set *s, const struct suite_def *suite,
				   const char *suite_name, const char *name,
				   const struct case_def *def)
{
	size_t k = s->n;
	struct case_inst *inst = &s->insts[k];

	if (k >= s->cap)
		return NULL;
	if (!suite) {
		s->suites[k] = (struct suite_def){.name = suite_name};
		suite = &s->suites[k];
	}
	s->defs[k] = *def;
	*inst = (struct case_inst){.suite = suite, .def = &s->defs[k]};
	/* @name may be the caller's buffer: the instance keeps a copy. */
	snprintf(inst->name, sizeof(inst->name), "%s", name);
	if (!s->defs[k].name)
		s->defs[k].name = inst->name;
	if (case_result_init(&s->results[k], inst))
		return NULL;
	s->n++;
	return &s->results[k];
}

void result_set_release(struct result_set *s)
{
	for (size_t i = 0; s->results && i < s->n; i++)
		case_result_release(&s->results[i]);
	free(s->results);
	free(s->defs);
	free(s->insts);
	free(s->suites);
	memset(s, 0, sizeof(*s));
}

const char *case_result_verdict(const struct case_result *r)
{
	return r->judged.verdict ? r->judged.verdict : case_result_label(r);
}
