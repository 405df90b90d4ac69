/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_runner.c - isolation, outcomes and reports, on a suite of cases that misbehave on purpose.
 */
#include "tests/testutil.h"

#include <errno.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <regex.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "reports/report.h"
#include "run/runner.h"
#include "util/util.h"

enum { M_VALUE };
static const struct metric_def metrics[] = {{"value", "ms", LOWER_IS_BETTER}};

static void run_pass(struct case_ctx *ctx)
{
	case_counter(ctx, M_VALUE, "clock");
	for (int i = 0; i < 3; i++)
		case_sample(ctx, M_VALUE, 10 + i, NULL);
	case_prop(ctx, "answer", "%d", 42);
}

static void run_fail(struct case_ctx *ctx)
{
	case_fail(ctx, "figure 12.0 ms, reference 10.0 ms, threshold 11.0 ms");
}

static void run_crash(struct case_ctx *ctx)
{
	/* Samples taken before the crash must survive it. */
	case_sample(ctx, M_VALUE, 1, NULL);
	case_sample(ctx, M_VALUE, 2, NULL);
	fprintf(stderr, "about to crash\n");
	/* A NUL and a terminal escape: the tail keeps what follows, and drives no terminal. */
	static const char marked[] = "nul\0after \033[31mred\n";

	fwrite(marked, 1, sizeof(marked) - 1, stderr);
	fflush(stderr);
	raise(SIGSEGV);
}

static void run_hang(struct case_ctx *ctx)
{
	(void)ctx;
	for (;;)
		pause(); /* a hung case: only the runner's timeout ends it */
}

static void run_skip(struct case_ctx *ctx)
{
	case_skip(ctx, "needs a second NUMA node");
}

static void run_noisy(struct case_ctx *ctx)
{
	/* Control characters, an escape sequence, invalid UTF-8 and a lone surrogate. */
	fprintf(stderr,
		"bell\a nul-free \x01\x02 esc \x1b[31mred\x1b[0m bad \xff\xfe \xed\xa0\x80 ok\n");
	case_log(ctx, "log with \x07 and \xc3\x28 inside");
	case_fail(ctx, "message with \x0b vertical tab and \xff byte");
}

static void run_exit(struct case_ctx *ctx)
{
	(void)ctx;
	exit(3);
}

static unsigned int expand_three(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max)
{
	(void)hw;
	(void)opts;
	for (unsigned int i = 0; i < 3 && i < max; i++)
		case_params_add(&out[i], "n", "%u", i + 1);
	return 3;
}

static void run_param(struct case_ctx *ctx)
{
	if (!case_param(ctx, "n") || case_param(ctx, "missing"))
		case_fail(ctx, "parameters not passed to the child");
}

static const struct case_def cases[] = {
    {.name = "pass",
     .group = "basic",
     .kind = CASE_PERF,
     .metrics = metrics,
     .n_metrics = 1,
     .doc = "passes",
     .run = run_pass},
    {.name = "fail", .group = "basic", .kind = CASE_CHECK, .doc = "fails", .run = run_fail},
    {.name = "crash",
     .group = "iso",
     .kind = CASE_PERF,
     .metrics = metrics,
     .n_metrics = 1,
     .doc = "segfaults",
     .run = run_crash},
    {.name = "hang", .group = "iso", .kind = CASE_CHECK, .doc = "hangs", .run = run_hang},
    {.name = "skip", .group = "basic", .kind = CASE_CHECK, .doc = "skips", .run = run_skip},
    {.name = "noisy", .group = "text", .kind = CASE_CHECK, .doc = "bad bytes", .run = run_noisy},
    {.name = "exit", .group = "iso", .kind = CASE_CHECK, .doc = "exits", .run = run_exit},
    {.name = "kvm",
     .group = "basic",
     .kind = CASE_CHECK,
     .needs = NEEDS_KVM,
     .doc = "kvm",
     .run = run_pass},
    {.name = "param",
     .group = "basic",
     .kind = CASE_CHECK,
     .doc = "matrix",
     .expand = expand_three,
     .run = run_param},
};

static const struct suite_def selftest = {
    .name = "selftest", .doc = "misbehaving cases", .cases = cases, .n_cases = ARRAY_SIZE(cases)};
static const struct suite_def *const suites[] = {&selftest};

/* One run shared by the tests: forking the whole table once keeps the program quick. */
static struct hw_info hw;
static struct case_inst *insts;
static size_t n_insts;
static struct case_result results[16];

static int setup(void **state)
{
	struct mg_err err;
	struct run_opts opts = {.samples = 3, .timeout_s = 1, .seed = 1};

	(void)state;
	if (hw_detect(&hw, "synthetic:pack:1 core:1 pu:1", &err))
		return -1;
	hw.kvm = HW_PROBE_NO; /* the kvm case must skip whatever this host has */
	snprintf(hw.kvm_detail, sizeof(hw.kvm_detail), "no /dev/kvm (test)");
	if (runner_expand(suites, 1, &hw, &opts, NULL, &insts, &n_insts, &err) || n_insts > 16)
		return -1;
	return runner_run(insts, n_insts, &hw, &opts, results, &err);
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_insts; i++)
		case_result_release(&results[i]);
	free(insts);
	hw_release(&hw);
	return 0;
}

static const struct case_result *result_of(const char *name)
{
	for (size_t i = 0; i < n_insts; i++)
		if (!strcmp(results[i].inst->name, name))
			return &results[i];
	fail_msg("no result for %s", name);
	return NULL;
}

static void test_outcomes(void **state)
{
	(void)state;
	assert_int_equal(n_insts, 11); /* 8 plain cases + 3 from the matrix */
	assert_int_equal(result_of("pass")->outcome, OUTCOME_PASS);
	assert_int_equal(result_of("fail")->outcome, OUTCOME_FAIL);
	assert_string_equal(result_of("fail")->message,
			    "figure 12.0 ms, reference 10.0 ms, threshold 11.0 ms");
	assert_int_equal(result_of("skip")->outcome, OUTCOME_SKIP);
	assert_string_equal(result_of("skip")->message, "needs a second NUMA node");
	/* A missing capability skips before forking, with the host's reason. */
	assert_int_equal(result_of("kvm")->outcome, OUTCOME_SKIP);
	assert_string_equal(result_of("kvm")->message, "no /dev/kvm (test)");
	for (unsigned int i = 1; i <= 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "param[n=%u]", i);
		assert_int_equal(result_of(name)->outcome, OUTCOME_PASS);
	}
}

static void test_pass_figures(void **state)
{
	const struct case_result *r = result_of("pass");

	(void)state;
	assert_int_equal(r->metrics[0].n, 3);
	assert_string_equal(r->metrics[0].counter, "clock");
	assert_float_equal(r->metrics[0].sum.median, 11, 1e-12);
	assert_int_equal(r->n_props, 1);
	assert_string_equal(r->props[0].name, "answer");
	assert_string_equal(r->props[0].value, "42");
}

static void test_crash_isolated(void **state)
{
	const struct case_result *r = result_of("crash");

	(void)state;
	assert_int_equal(r->outcome, OUTCOME_ERROR);
	assert_int_equal(r->term_signal, SIGSEGV);
	assert_non_null(strstr(r->message, "signal 11 (SIGSEGV"));
	assert_non_null(r->stderr_tail);
	assert_non_null(strstr(r->stderr_tail, "about to crash"));
	assert_non_null(strstr(r->stderr_tail, "nul?after ?[31mred"));
	/* What was measured before the crash is kept. */
	assert_int_equal(r->metrics[0].n, 2);
	/* And the run went on past it. */
	assert_int_equal(result_of("skip")->outcome, OUTCOME_SKIP);
}

static void test_timeout_and_exit(void **state)
{
	const struct case_result *hang = result_of("hang"), *ex = result_of("exit");

	(void)state;
	assert_int_equal(hang->outcome, OUTCOME_ERROR);
	assert_true(hang->timed_out);
	assert_non_null(strstr(hang->message, "timed out after 1 s"));
	/* Killed at the deadline, not left running: well under the 5 s a stuck reap would take. */
	assert_true(hang->time_s >= 1 && hang->time_s < 5);
	assert_int_equal(ex->outcome, OUTCOME_ERROR);
	assert_non_null(strstr(ex->message, "exited with status 3"));
}

static void test_bad_events(void **state)
{
	struct case_result r = {.inst = &insts[0]};
	struct metric_result m = {.def = &metrics[0]};

	(void)state;
	r.metrics = &m;
	assert_int_equal(runner_apply_event(&r, "not json"), -EINVAL);
	assert_int_equal(runner_apply_event(&r, "{\"ev\":\"sample\",\"m\":5,\"v\":1}"), -EINVAL);
	assert_int_equal(runner_apply_event(&r, "{\"ev\":\"sample\",\"m\":0,\"v\":1}"), 0);
	assert_int_equal(m.n, 1);
	free(m.v);
	free(m.stolen);
}

static void test_filters(void **state)
{
	struct runner_filter by_glob = {.glob = "selftest.basic.p*"};
	const char *unknown[] = {"nosuch"};
	struct runner_filter by_suite = {.suites = unknown, .n_suites = 1};
	struct case_inst *sel = NULL;
	size_t n = 0;
	struct mg_err err;

	(void)state;
	assert_int_equal(runner_expand(suites, 1, &hw, NULL, &by_glob, &sel, &n, &err), 0);
	assert_int_equal(n, 4); /* pass and param[n=1..3] */
	free(sel);
	assert_int_equal(runner_expand(suites, 1, &hw, NULL, &by_suite, &sel, &n, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "nosuch"));
}

static void make_report(struct report_run *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->hw = &hw;
	rep->results = results;
	rep->n = n_insts;
	rep->time_s = 1.23456;
	rep->version = "test";
	snprintf(rep->timestamp, sizeof(rep->timestamp), "2026-12-02T10:00:00");
	snprintf(rep->hostname, sizeof(rep->hostname), "testhost");
}

/* xmllint --schema: the validator Jenkins users reach for; exit status 0 means valid. */
static void validate(const char *xml, const char *schema)
{
	char cmd[1024], path[256];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", test_schema_dir(), schema);
	if (access(path, R_OK))
		skip_because("%s not found (MEMGATE_SCHEMAS names the folder of the JUnit schemas)",
			     path);
	if (system("command -v xmllint >/dev/null 2>&1"))
		skip_because("xmllint not installed (ci/install-deps.sh installs libxml2-utils)");
	snprintf(cmd, sizeof(cmd), "xmllint --noout --schema %s %s", path, xml);
	rc = system(cmd);
	assert_int_equal(rc, 0);
}

static char *xpath_string(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
	char *s = (char *)xmlXPathCastToString(o);

	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	return s;
}

static void assert_xpath(xmlDocPtr doc, const char *expr, const char *want)
{
	char *got = xpath_string(doc, expr);

	if (strcmp(got, want))
		fail_msg("%s: got \"%s\", want \"%s\"", expr, got, want);
	xmlFree(got);
}

static void assert_xpath_has(xmlDocPtr doc, const char *expr, const char *part)
{
	char *got = xpath_string(doc, expr);

	if (!strstr(got, part))
		fail_msg("%s: \"%s\" does not contain \"%s\"", expr, got, part);
	xmlFree(got);
}

/* Write the shared run as JUnit in @style to a new file named in @path, and parse it back. */
static xmlDocPtr junit_doc(enum junit_style style, char *path, size_t len)
{
	struct report_run rep;
	struct mg_err err;
	int fd = mkstemp(test_tmp_template(path, len, "junit"));
	xmlDocPtr doc;

	assert_true(fd >= 0);
	close(fd);
	make_report(&rep);
	assert_int_equal(report_junit_write(&rep, style, path, &err), 0);
	doc = xmlReadFile(path, NULL, 0);
	assert_non_null(doc);
	return doc;
}

static void test_junit_jenkins(void **state)
{
	char path[128];
	xmlDocPtr doc = junit_doc(JUNIT_JENKINS, path, sizeof(path));

	(void)state;
	assert_xpath(doc, "string(//testsuite/@tests)", "11");
	assert_xpath(doc, "string(//testsuite/@failures)", "2");
	assert_xpath(doc, "string(//testsuite/@errors)", "3");
	assert_xpath(doc, "string(//testsuite/@skipped)", "2");
	assert_xpath(doc, "string(//testcase[@name='crash']/@classname)", "memgate.selftest.iso");
	assert_xpath(doc, "string(//testcase[@name='crash']/error/@type)", "crash");
	assert_xpath_has(doc, "string(//testcase[@name='crash']/error)", "about to crash");
	assert_xpath(doc, "string(//testcase[@name='hang']/error/@type)", "timeout");
	assert_xpath(doc, "string(//testcase[@name='skip']/skipped/@message)",
		     "needs a second NUMA node");
	assert_xpath_has(doc, "string(//testcase[@name='fail']/failure/@message)",
			 "threshold 11.0 ms");
	assert_xpath_has(doc, "string(//testcase[@name='pass']/system-out)", "samples: 10 11 12");
	/* A case's facts are in its output; properties are only the figures verdicts judged. */
	assert_xpath_has(doc, "string(//testcase[@name='pass']/system-out)", "answer = 42");
	assert_xpath(doc, "string(count(//property[starts-with(@name, 'basic.')]))", "0");
	/* Bad bytes arrive as U+FFFD; the text around them survives. */
	assert_xpath_has(doc, "string(//testcase[@name='noisy']/system-err)", "bad \xEF\xBF\xBD");
	assert_xpath_has(doc, "string(//testcase[@name='noisy']/failure/@message)",
			 "message with \xEF\xBF\xBD vertical tab");
	assert_xpath(doc, "string(/testsuites/@time)", "1.235");
	xmlFreeDoc(doc);
	validate(path, "jenkins-xunit-junit-10.xsd");
	unlink(path);
}

static void test_junit_ant(void **state)
{
	char path[128];
	xmlDocPtr doc = junit_doc(JUNIT_ANT, path, sizeof(path));

	(void)state;
	/* Ant has no per-case output: it moves to the suite, under each case's name. */
	assert_xpath(doc, "count(//testcase/system-out)", "0");
	assert_xpath_has(doc, "string(//testsuite/system-out)", "== basic.pass");
	assert_xpath_has(doc, "string(//testsuite/system-err)", "about to crash");
	assert_xpath(doc, "count(/testsuites/@*)", "0");
	xmlFreeDoc(doc);
	validate(path, "windyroad-JUnit.xsd");
	unlink(path);
}

static void test_time_format(void **state)
{
	regex_t re;
	char path[128];
	xmlDocPtr doc = junit_doc(JUNIT_JENKINS, path, sizeof(path));
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr o;

	(void)state;
	o = xmlXPathEvalExpression(BAD_CAST "//@time", ctx);
	/* C-locale decimals, at most three of them: what Jenkins' SUREFIRE_TIME accepts. */
	assert_int_equal(regcomp(&re, "^[0-9]+\\.[0-9]{3}$", REG_EXTENDED), 0);
	assert_true(o->nodesetval->nodeNr > 10);
	for (int i = 0; i < o->nodesetval->nodeNr; i++) {
		xmlChar *v = xmlNodeGetContent(o->nodesetval->nodeTab[i]);

		if (regexec(&re, (const char *)v, 0, NULL, 0))
			fail_msg("time=\"%s\" is not C-locale with 3 decimals", v);
		xmlFree(v);
	}
	regfree(&re);
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	unlink(path);
}

static void test_json_report(void **state)
{
	struct report_run rep;
	struct mg_err err;
	char path[128];
	int fd = mkstemp(test_tmp_template(path, sizeof(path), "json"));
	json_t *root, *arr;
	json_error_t jerr;
	size_t i;
	json_t *c;

	(void)state;
	close(fd);
	make_report(&rep);
	assert_int_equal(report_json_write(&rep, path, &err), 0);
	root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	arr = json_object_get(root, "cases");
	assert_int_equal(json_array_size(arr), 11);
	json_array_foreach(arr, i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "name")), "crash"))
			continue;
		assert_string_equal(json_string_value(json_object_get(c, "outcome")), "ERROR");
		c = json_array_get(json_object_get(c, "metrics"), 0);
		assert_int_equal(json_array_size(json_object_get(c, "samples")), 2);
	}
	json_decref(root);
	unlink(path);
}

/*
 * A gate's figures reach the reports as numbers: JUnit's properties and the JSON's "figures"
 * are made from them, never from a property's text (here a false "ratio" no report may read),
 * and a suite's tables, rendered once, are what JUnit shows of the suite.
 */
static void test_verdict_figures(void **state)
{
	const struct case_def def = {.name = "a_vs_b", .group = "gates", .kind = CASE_GATE};
	struct report_summary summary = {.suite = NULL, .text = "the suite's table"};
	struct result_set set;
	struct report_run rep;
	struct case_result *r;
	struct mg_err err;
	char xml[128], js[128];
	xmlDocPtr doc;
	json_t *root, *f;

	(void)state;
	close(mkstemp(test_tmp_template(xml, sizeof(xml), "fig")));
	close(mkstemp(test_tmp_template(js, sizeof(js), "fig")));
	assert_int_equal(result_set_init(&set, 1), 0);
	r = result_set_add(&set, &selftest, NULL, "a_vs_b", &def);
	assert_non_null(r);
	case_result_add_prop(r, "ratio", "999");
	r->judged = (struct judged_figures){
	    .judged = true, .value = 0.5, .lo = 0.25, .hi = 0.75, .bound = 1, .unit = "x"};
	make_report(&rep);
	rep.results = set.results;
	rep.n = set.n;
	summary.suite = &selftest;
	rep.summaries = &summary;
	rep.n_summaries = 1;
	assert_int_equal(report_junit_write(&rep, JUNIT_JENKINS, xml, &err), 0);
	doc = xmlReadFile(xml, NULL, 0);
	assert_non_null(doc);
	assert_xpath(doc, "string(//property[@name='gates.a_vs_b.value']/@value)", "0.5");
	assert_xpath(doc, "string(//property[@name='gates.a_vs_b.threshold']/@value)", "1");
	assert_xpath(doc, "string(//property[@name='gates.a_vs_b.verdict']/@value)", "PASS");
	assert_xpath(doc, "string(//testsuite/system-out)", "the suite's table");
	xmlFreeDoc(doc);
	assert_int_equal(report_json_write(&rep, js, &err), 0);
	root = json_load_file(js, 0, NULL);
	assert_non_null(root);
	f = json_object_get(json_array_get(json_object_get(root, "cases"), 0), "figures");
	assert_true(json_real_value(json_object_get(f, "value")) == 0.5);
	assert_true(json_real_value(json_object_get(f, "ci95_hi")) == 0.75);
	assert_string_equal(json_string_value(json_object_get(f, "direction")), "at most");
	json_decref(root);
	result_set_release(&set);
	unlink(xml);
	unlink(js);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outcomes),	    cmocka_unit_test(test_pass_figures),
	    cmocka_unit_test(test_crash_isolated),  cmocka_unit_test(test_timeout_and_exit),
	    cmocka_unit_test(test_bad_events),	    cmocka_unit_test(test_filters),
	    cmocka_unit_test(test_junit_jenkins),   cmocka_unit_test(test_junit_ant),
	    cmocka_unit_test(test_time_format),	    cmocka_unit_test(test_json_report),
	    cmocka_unit_test(test_verdict_figures),
	};

	return cmocka_run_group_tests_name("runner", tests, setup, teardown);
}
