/* SPDX-License-Identifier: GPL-2.0-or-later */
/* list.c - a session's plan shown: the cases with their metrics and units, and the gates that
 * will judge them; as JSON, what `memgate ab` reads of a side. */
#include "session/internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "suites/suites.h"
#include "util/text.h"

/* "metric of case-glob", without the glob's escapes. */
static void print_side(const struct gate_side *s, FILE *out)
{
	fprintf(out, "%s of ", s->metric);
	for (const char *p = s->glob; *p; p++)
		if (*p != '\\')
			fputc(*p, out);
}

/* The gates of the suites whose cases are listed: they judge those cases after a run. */
static void list_gates(const struct session_config *cfg, const struct rules *rules,
		       const struct case_inst *insts, size_t n, FILE *out)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		size_t k = 0;

		while (k < n && insts[k].suite != suites[i])
			k++;
		for (size_t g = 0; k < n && g < rules->n_gates; g++) {
			const struct gate_def *gd = &rules->gates[g].def;
			char full[256];

			if (strcmp(rules->gates[g].suite, suites[i]->name))
				continue;
			snprintf(full, sizeof(full), "%s.gates.%s", suites[i]->name, gd->name);
			if (cfg->glob && !text_glob(cfg->glob, full))
				continue;
			/* Listed only where its cases are planned (a host without 1 GiB pages has
			 * no 1 GiB gate), so a shard lists the gates of the cases it runs. */
			if (!case_any_matches(insts, n, gd->a.glob) ||
			    !case_any_matches(insts, n, gd->b.glob))
				continue;
			fprintf(out, "%-50s gate  ", full);
			print_side(&gd->a, out);
			fprintf(out, " / ");
			print_side(&gd->b, out);
			fprintf(out, " %s %.3g\n",
				gd->kind == GATE_NOT_SLOWER ? "not significantly over"
				: gd->kind == GATE_FASTER   ? "surely under"
							    : "at most",
				gd->kind == GATE_FASTER ? 1.0 : gd->threshold);
		}
	}
}

/* A metric as `list --json` gives it: its name, unit and direction, and what judges it. */
static json_t *metric_json(const struct rules *rules, const struct case_inst *inst,
			   const char *full, unsigned int m, enum counter_kind k)
{
	const struct metric_def *md = &inst->def->metrics[m];
	struct metric_def as_run = {md->name, case_metric_unit(inst->def, m, k), md->better};
	struct tolerance t = rules_tolerance(rules, inst->suite->name, full, &as_run);
	json_t *j =
	    json_pack("{s:s, s:s, s:s, s:b, s:b, s:f, s:f}", "name", md->name, "unit", as_run.unit,
		      "better", md->better == LOWER_IS_BETTER ? "lower" : "higher", "reference",
		      suite_is_reference(inst->suite, md->name), "gated", t.gate, "ab", t.ab,
		      "baseline", t.baseline);

	if (j && t.cut > 0)
		json_object_set_new(j, "cut", json_real(t.cut));
	if (j && t.line > 0)
		json_object_set_new(j, "rule", json_sprintf("%s:%d", t.source, t.line));
	return j;
}

/*
 * `list --json`: what `memgate ab` reads of a side: names, kinds, suites, metrics, and for
 * each metric the tolerances the rules give it and the rule that gave them.
 */
static int list_json(const struct rules *rules, const struct case_inst *insts, size_t n,
		     enum counter_kind k, FILE *out)
{
	json_t *arr = json_array();
	int ret;

	for (size_t i = 0; arr && i < n; i++) {
		const struct case_def *d = insts[i].def;
		json_t *metrics = json_array();
		char full[256];

		case_full_name(&insts[i], full, sizeof(full));
		for (unsigned int m = 0; m < d->n_metrics; m++)
			json_array_append_new(metrics, metric_json(rules, &insts[i], full, m, k));
		json_t *c =
		    json_pack("{s:s, s:s, s:s, s:o}", "name", full, "suite", insts[i].suite->name,
			      "kind", d->kind == CASE_PERF ? "perf" : "check", "metrics", metrics);

		/* What a counted case counts with: ab runs a simulated one twice, one sample. */
		if (c && d->counted)
			json_object_set_new(c, "counter", json_string(counter_name(k)));
		if (c && d->ab_samples)
			json_object_set_new(c, "ab_samples", json_integer(d->ab_samples));
		if (c && d->ab_confirm_rounds)
			json_object_set_new(c, "ab_confirm_rounds",
					    json_integer(d->ab_confirm_rounds));
		if (c && d->cut_metric)
			json_object_set_new(c, "cut_metric", json_string(d->cut_metric));
		json_array_append_new(arr, c);
	}
	ret = arr && !json_dumpf(arr, out, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) ? EXIT_PASSED
										    : EXIT_HARNESS;
	fputc('\n', out);
	json_decref(arr);
	return ret;
}

int session_list(const struct session *p, bool json, FILE *out)
{
	if (json)
		return list_json(&p->rules, p->insts, p->n, p->cfg->opts.counter, out);
	for (size_t i = 0; i < p->n; i++) {
		const struct case_def *d = p->insts[i].def;
		char full[256];

		fprintf(out, "%-50s %-5s %s", case_full_name(&p->insts[i], full, sizeof(full)),
			d->kind == CASE_PERF ? "perf" : "check", d->doc);
		/* Each metric with its own unit and the way it is better: "impl.ms (ms, lower)". */
		for (unsigned int m = 0; m < d->n_metrics; m++)
			fprintf(out, "%s%s (%s, %s)", m ? ", " : " [", d->metrics[m].name,
				case_metric_unit(d, m, p->cfg->opts.counter),
				d->metrics[m].better == LOWER_IS_BETTER ? "lower" : "higher");
		if (d->n_metrics)
			fputc(']', out);
		fputc('\n', out);
	}
	list_gates(p->cfg, &p->rules, p->insts, p->n, out);
	return 0;
}
