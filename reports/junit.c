/* SPDX-License-Identifier: GPL-2.0-or-later */
/* junit.c - JUnit XML through libxml2, in Jenkins' dialect or strict Ant's. */
#include "reports/report.h"

#include <errno.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>
#include <stdlib.h>
#include <string.h>

#include "reports/file.h"
#include "util/text.h"
#include "util/util.h"

/* Every string that reaches the document goes through here: XML 1.0 has no place for most
 * control characters nor for invalid UTF-8, and a child's stderr may hold both. */
static xmlAttrPtr set_prop(xmlNodePtr node, const char *name, const char *value)
{
	char *clean = text_xml_clean(value ? value : "", value ? strlen(value) : 0);
	xmlAttrPtr a = xmlNewProp(node, BAD_CAST name, BAD_CAST(clean ? clean : ""));

	free(clean);
	return a;
}

static xmlNodePtr add_text_child(xmlNodePtr parent, const char *name, const char *text)
{
	char *clean = text_xml_clean(text ? text : "", text ? strlen(text) : 0);
	xmlNodePtr n = xmlNewTextChild(parent, NULL, BAD_CAST name, BAD_CAST(clean ? clean : ""));

	free(clean);
	return n;
}

static void set_seconds(xmlNodePtr node, const char *name, double s)
{
	char buf[64];

	/* The process never calls setlocale(), so %f uses '.' whatever LANG says. */
	snprintf(buf, sizeof(buf), "%.3f", s);
	set_prop(node, name, buf);
}

static void set_count(xmlNodePtr node, const char *name, size_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", v);
	set_prop(node, name, buf);
}

/* The samples and log of a case, as text: the case's system-out. */
static char *case_output(const struct case_result *r)
{
	char *buf = NULL, line[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (r->output)
		fprintf(f, "%s\n", r->output);
	/* Its facts: the properties of the JSON report (only verdicts' figures are JUnit ones). */
	for (size_t k = 0; k < r->n_props; k++)
		fprintf(f, "%s = %s\n", r->props[k].name, r->props[k].value);
	for (unsigned int i = 0; i < r->inst->def->n_metrics; i++) {
		const struct metric_result *m = &r->metrics[i];

		if (!m->n)
			continue;
		fprintf(f, "%s\n  samples:", report_metric_line(m, line, sizeof(line)));
		for (size_t k = 0; k < m->n; k++)
			fprintf(f, " %.6g%s", m->v[k], m->stolen[k] ? "*" : "");
		fprintf(f, "%s\n",
			m->n && memchr(m->stolen, 1, m->n) ? "  (* taken while the VM "
							     "lost a CPU: steal time)"
							   : "");
	}
	fclose(f);
	return buf;
}

static const char *error_type(const struct case_result *r)
{
	return r->timed_out ? "timeout" : r->term_signal ? "crash" : "error";
}

static void add_outcome(xmlNodePtr tc, const struct case_result *r)
{
	xmlNodePtr n;

	switch (r->outcome) {
	case OUTCOME_FAIL:
		n = add_text_child(tc, "failure", r->message);
		set_prop(n, "message", r->message);
		set_prop(n, "type",
			 r->unstable			   ? "unstable"
			 : r->inst->def->kind == CASE_GATE ? "gate"
							   : "check");
		break;
	case OUTCOME_ERROR:
		/* The message says what happened; the body holds the child's last words. */
		n = add_text_child(tc, "error", r->stderr_tail ? r->stderr_tail : r->message);
		set_prop(n, "message", r->message);
		set_prop(n, "type", error_type(r));
		break;
	case OUTCOME_SKIP:
		n = xmlNewChild(tc, NULL, BAD_CAST "skipped", NULL);
		set_prop(n, "message", r->message);
		break;
	case OUTCOME_PASS:
		break;
	}
}

static void add_property(xmlNodePtr props, const char *name, const char *value)
{
	xmlNodePtr p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);

	set_prop(p, "name", name);
	set_prop(p, "value", value);
}

static void add_host_properties(xmlNodePtr props, const struct report_run *run)
{
	const struct hw_info *hw = run->hw;
	char buf[64];

	add_property(props, "memgate.version", run->version);
	add_property(props, "memgate.commit", run->commit ? run->commit : "unknown");
	if (run->label && *run->label)
		add_property(props, "run.label", run->label);
	add_property(props, "host.fingerprint", hw->fingerprint);
	add_property(props, "host.fingerprint_hash", hw->fingerprint_hash);
	add_property(props, "host.source", hw->source_desc);
	add_property(props, "host.cpu_model", hw->cpu_model);
	add_property(props, "host.kernel", hw->os_release);
	add_property(props, "host.glibc", hw->glibc);
	if (run->qemu && *run->qemu)
		add_property(props, "qemu.version", run->qemu);
	snprintf(buf, sizeof(buf), "%u/%u/%u/%u", hw->n_packages, hw->n_numa, hw->n_cores,
		 hw->n_pus);
	add_property(props, "host.packages/nodes/cores/pus", buf);
	if (hw->tsc_hz > 0) {
		snprintf(buf, sizeof(buf), "%.3f", hw->tsc_hz / 1e6);
		add_property(props, "host.tsc_mhz", buf);
	}
	if (hw->thp_mode[0])
		add_property(props, "host.thp", hw->thp_mode);
}

/*
 * The figures a verdict was judged on, as properties: for each gate, baseline or A/B row of
 * @suite that reached a verdict, its value (the ratio judged), unit, threshold and verdict.
 * Every other figure (each metric's samples and summary, a case's facts) is in the case's
 * system-out and in the JSON report: Jenkins shows properties on every test's page.
 */
static void add_case_properties(xmlNodePtr props, const struct report_run *run,
				const struct suite_def *suite)
{
	char name[512], value[2][32];

	for (size_t i = 0; i < run->n; i++) {
		const struct case_result *r = &run->results[i];
		const struct judged_figures *v = &r->judged;

		if (r->inst->suite != suite || r->inst->def->kind != CASE_GATE || !v->judged)
			continue; /* skipped or broken: no figure was judged */
		snprintf(value[0], sizeof(value[0]), "%.6g", v->value);
		snprintf(value[1], sizeof(value[1]), "%.6g", v->bound);
		const struct {
			const char *what, *v;
		} p[] = {
		    {"value", value[0]},
		    {"unit", v->unit},
		    {"threshold", value[1]},
		    {"verdict", case_result_verdict(r)},
		};
		for (size_t k = 0; k < ARRAY_SIZE(p); k++) {
			snprintf(name, sizeof(name), "%s.%s.%s", case_group(r->inst->def),
				 r->inst->name, p[k].what);
			add_property(props, name, p[k].v);
		}
	}
}

struct suite_totals {
	size_t tests, failures, errors, skipped;
	double time_s;
};

static xmlNodePtr add_testcase(xmlNodePtr ts, const struct case_result *r, enum junit_style style,
			       struct suite_totals *t)
{
	xmlNodePtr tc = xmlNewChild(ts, NULL, BAD_CAST "testcase", NULL);
	char classname[128], *out;

	snprintf(classname, sizeof(classname), "memgate.%s.%s", r->inst->suite->name,
		 case_group(r->inst->def));
	set_prop(tc, "classname", classname);
	set_prop(tc, "name", r->inst->name);
	set_seconds(tc, "time", r->time_s);
	add_outcome(tc, r);
	t->tests++;
	t->failures += r->outcome == OUTCOME_FAIL;
	t->errors += r->outcome == OUTCOME_ERROR;
	t->skipped += r->outcome == OUTCOME_SKIP;
	t->time_s += r->time_s;
	if (style == JUNIT_ANT)
		return tc; /* Ant allows no per-case output: the suite gathers it */
	out = case_output(r);
	if (out && *out)
		add_text_child(tc, "system-out", out);
	free(out);
	if (r->stderr_tail)
		add_text_child(tc, "system-err", r->stderr_tail);
	return tc;
}

/* Ant's suite-level system-out and system-err: each case's output under its name. */
static void add_suite_output(xmlNodePtr ts, const struct report_run *run,
			     const struct suite_def *suite)
{
	char *out = NULL, *err = NULL;
	size_t olen = 0, elen = 0;
	FILE *fo = open_memstream(&out, &olen), *fe = open_memstream(&err, &elen);
	const char *summary = report_summary_of(run, suite);

	if (fo && summary)
		fprintf(fo, "%s\n", summary);

	for (size_t i = 0; fo && fe && i < run->n; i++) {
		const struct case_result *r = &run->results[i];
		char *co;

		if (r->inst->suite != suite)
			continue;
		co = case_output(r);
		if (co && *co)
			fprintf(fo, "== %s.%s\n%s", case_group(r->inst->def), r->inst->name, co);
		free(co);
		if (r->stderr_tail)
			fprintf(fe, "== %s.%s\n%s\n", case_group(r->inst->def), r->inst->name,
				r->stderr_tail);
	}
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	add_text_child(ts, "system-out", out ? out : "");
	add_text_child(ts, "system-err", err ? err : "");
	free(out);
	free(err);
}

static void add_testsuite(xmlNodePtr root, const struct report_run *run,
			  const struct suite_def *suite, int id, enum junit_style style,
			  struct suite_totals *all)
{
	xmlNodePtr ts = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
	xmlNodePtr props = xmlNewChild(ts, NULL, BAD_CAST "properties", NULL);
	struct suite_totals t = {0};
	const char *summary = NULL;

	set_prop(ts, "name", suite->name);
	add_host_properties(props, run);
	add_case_properties(props, run, suite);
	for (size_t i = 0; i < run->n; i++)
		if (run->results[i].inst->suite == suite)
			add_testcase(ts, &run->results[i], style, &t);
	if (style == JUNIT_ANT)
		add_suite_output(ts, run, suite);
	else if ((summary = report_summary_of(run, suite)))
		add_text_child(ts, "system-out", summary);
	set_count(ts, "tests", t.tests);
	set_count(ts, "failures", t.failures);
	set_count(ts, "errors", t.errors);
	set_count(ts, "skipped", t.skipped);
	set_seconds(ts, "time", t.time_s);
	set_prop(ts, "timestamp", run->timestamp);
	set_prop(ts, "hostname", run->hostname[0] ? run->hostname : "localhost");
	set_count(ts, "id", (size_t)id);
	set_prop(ts, "package", "memgate");
	all->tests += t.tests;
	all->failures += t.failures;
	all->errors += t.errors;
	all->time_s += t.time_s;
}

int report_junit_write(const struct report_run *run, enum junit_style style, const char *path,
		       struct mg_err *err)
{
	xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
	xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "testsuites");
	struct suite_totals all = {0};
	int id = 0, ret;

	xmlDocSetRootElement(doc, root);
	/* One <testsuite> per suite, in the order the suites ran. */
	for (size_t i = 0; i < run->n; i++) {
		const struct suite_def *s = run->results[i].inst->suite;
		size_t j = 0;

		while (j < i && run->results[j].inst->suite != s)
			j++;
		if (j == i)
			add_testsuite(root, run, s, id++, style, &all);
	}
	/* Strict Ant gives <testsuites> no attributes; Jenkins reads the totals. */
	if (style == JUNIT_JENKINS) {
		set_prop(root, "name", "memgate");
		set_count(root, "tests", all.tests);
		set_count(root, "failures", all.failures);
		set_count(root, "errors", all.errors);
		set_seconds(root, "time", run->time_s);
	}
	ret = report_write_xml(path, doc, err);
	xmlFreeDoc(doc);
	return ret;
}
