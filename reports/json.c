/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json.c - the run as JSON: every sample and summary, the input of baselines and comparisons. */
#include "reports/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/file.h"
#include "judge/history.h"
#include "util/text.h"

/* A string JSON can carry: the child's stderr may hold bytes that are not UTF-8. */
static json_t *jstr(const char *s)
{
	char *u;
	json_t *j;

	if (!s)
		return json_null();
	u = text_utf8_clean(s, strlen(s));
	j = u ? json_string(u) : json_null();
	free(u);
	return j;
}

static json_t *metric_json(const struct metric_result *m, bool reference)
{
	json_t *samples = json_array(), *stolen = json_array();
	const struct stats_summary *s = &m->sum;

	for (size_t i = 0; i < m->n; i++) {
		json_array_append_new(samples, json_real(m->v[i]));
		json_array_append_new(stolen, json_boolean(m->stolen[i]));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o, s:{s:I, s:f, s:f, s:f, s:f, s:f, "
			 "s:f, s:f, s:f}}",
			 "name", m->def->name, "unit", m->def->unit, "better",
			 m->def->better == LOWER_IS_BETTER ? "lower" : "higher", "counter",
			 m->counter[0] ? m->counter : "none", "reference", reference, "samples",
			 samples, "stolen", stolen, "summary", "n", (json_int_t)s->n, "median",
			 s->median, "mad", s->mad, "min", s->min, "max", s->max, "mean", s->mean,
			 "sd", s->sd, "ci95_lo", s->ci_lo, "ci95_hi", s->ci_hi);
}

/* A number JSON can carry: NaN and the infinities (a ratio over zero) are null. */
static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A verdict's figures (gates, baseline and A/B rows), as numbers: null elsewhere. */
static json_t *figures_json(const struct case_result *r)
{
	const struct judged_figures *v = &r->judged;

	if (!v->judged)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:s, s:s, s:s}", "value", jnum(v->value), "ci95_lo",
			 jnum(v->lo), "ci95_hi", jnum(v->hi), "bound", jnum(v->bound), "unit",
			 v->unit, "direction", v->at_least ? "at least" : "at most", "verdict",
			 case_result_verdict(r));
}

static json_t *case_json(const struct case_result *r)
{
	json_t *params = json_object(), *metrics = json_array(), *props = json_object();
	const struct case_inst *in = r->inst;

	for (unsigned int i = 0; i < in->params.n; i++)
		json_object_set_new(params, in->params.p[i].name,
				    json_string(in->params.p[i].value));
	for (unsigned int i = 0; i < in->def->n_metrics; i++)
		if (r->metrics[i].n)
			json_array_append_new(
			    metrics,
			    metric_json(&r->metrics[i],
					suite_is_reference(in->suite, r->metrics[i].def->name)));
	for (size_t i = 0; i < r->n_props; i++)
		json_object_set_new(props, r->props[i].name, jstr(r->props[i].value));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:o, s:f, s:s, s:o, s:o, s:o}",
			 "suite", in->suite->name, "group", case_group(in->def), "case",
			 in->def->name, "name", in->name, "params", params, "kind",
			 in->def->kind == CASE_PERF   ? "perf"
			 : in->def->kind == CASE_GATE ? "gate"
						      : "check",
			 "outcome", case_result_label(r), "message", jstr(r->message), "figures",
			 figures_json(r), "time_s", r->time_s, "timestamp", r->timestamp, "metrics",
			 metrics, "properties", props, "stderr_tail", jstr(r->stderr_tail));
}

int report_json_write(const struct report_run *run, const char *path, struct mg_err *err)
{
	json_t *cases = json_array(), *root;
	int ret;

	for (size_t i = 0; i < run->n; i++)
		json_array_append_new(cases, case_json(&run->results[i]));
	/* The unit of history: the host class keys baselines; kernel, glibc and QEMU are what
	 * users change between runs, so every comparison shows them. */
	root = json_pack(
	    "{s:i, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:o, s:o}", "format",
	    HISTORY_FORMAT, "host_class", "class", run->hw->fingerprint, "hash",
	    run->hw->fingerprint_hash, "kernel", run->hw->os_release, "glibc", run->hw->glibc,
	    "qemu", run->qemu ? run->qemu : "", "memgate_version", run->version, "memgate_commit",
	    run->commit ? run->commit : "unknown", "label", run->label ? run->label : "",
	    "timestamp", run->timestamp, "hostname", run->hostname, "time_s", run->time_s, "host",
	    hw_to_json(run->hw), "cases", cases);
	if (!root)
		return mg_err_set(err, ENOMEM, "cannot build the JSON report");
	ret = report_write_json(path, root, err);
	json_decref(root);
	return ret;
}
