/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_verdict.c - the per-commit gate's logic on synthetic samples: verdicts, the one-sided
 * tests, Holm's correction, the rules file, results read back, and A/B case identities. */
#include "tests/testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "judge/ab.h"
#include "judge/ab_case.h"
#include "judge/calibration.h"
#include "judge/compare.h"
#include "judge/gate.h"
#include "judge/history.h"
#include "judge/model.h"
#include "judge/rules.h"
#include "judge/verdict.h"
#include "suites/suites.h"
#include "util/stats.h"
#include "util/util.h"

/* @n figures around @center, spread +-@spread with a fixed pattern (no randomness). */
static void around(double *v, size_t n, double center, double spread, unsigned int phase)
{
	static const double pattern[] = {0.1, -0.7, 0.4, -0.2, 0.9, -0.5, 0.6, -0.9, 0.2, -0.1};

	for (size_t i = 0; i < n; i++)
		v[i] = center * (1 + spread * pattern[(i + phase) % ARRAY_SIZE(pattern)]);
}

static void test_t_and_holm(void **state)
{
	const double up6[] = {1, 2, 3, 4, 5, 6}, mixed[] = {1, -2, 3, -4, 5, -6};
	const double p[] = {0.001, 0.04, 0.03, 0.2}, p_far[] = {0.01, 0.015, 0.03, 0.04};
	bool reject[4];
	double pv;

	(void)state;
	/* t = 4.583 on 5 degrees of freedom: one-sided p = 0.00297 (t tables: 0.0059 two-sided). */
	assert_int_equal(stats_t_greater(up6, 6, &pv), 0);
	assert_true(fabs(pv - 0.00297) < 2e-5);
	assert_int_equal(stats_t_greater(mixed, 6, &pv), 0);
	assert_true(pv > 0.5);
	assert_int_equal(stats_t_greater(up6, 1, &pv), -EINVAL);
	/* Holm at 0.05 over 4: 0.001 <= 0.0125 kept; 0.03 > 0.05/3 stops the descent. */
	stats_holm(p, 4, 0.05, reject);
	assert_true(reject[0] && !reject[1] && !reject[2] && !reject[3]);
	/* 0.01 <= 0.0125, 0.015 <= 0.0167, 0.03 <= 0.025? no: two rejected. */
	stats_holm(p_far, 4, 0.05, reject);
	assert_true(reject[0] && reject[1] && !reject[2] && !reject[3]);
}

static void test_paired_verdicts(void **state)
{
	double base[10], same[10], slow[10], fast[10], noisy[10];
	struct verdict_figures f;

	(void)state;
	around(base, 10, 1000, 0.02, 0);
	around(same, 10, 1000, 0.02, 3);
	around(slow, 10, 1120, 0.02, 5);
	around(fast, 10, 800, 0.02, 1);
	around(noisy, 10, 1080, 0.30, 2);
	assert_int_equal(verdict_paired(base, same, 10, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_PASS);
	assert_int_equal(f.n_base, 10);
	/* 12% slower with a 5% tolerance: the interval lies past 1.05, p is small. */
	assert_int_equal(verdict_paired(base, slow, 10, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_REGRESSION);
	assert_true(f.worse > 1.08 && f.worse_lo > 1.05 && f.p < 0.01);
	/* The same figures where higher is better: head improved. */
	assert_int_equal(verdict_paired(base, slow, 10, HIGHER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_IMPROVED);
	assert_int_equal(verdict_paired(base, fast, 10, HIGHER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_REGRESSION);
	/* 8% slower under 30% noise, 5% tolerance: past it, but not shown. */
	assert_int_equal(verdict_paired(base, noisy, 10, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_INCONCLUSIVE);
	/* Within a tolerance of 15% it passes. */
	assert_int_equal(verdict_paired(base, slow, 10, LOWER_IS_BETTER, 0.15, 1, &f),
			 VERDICT_PASS);
}

static void test_runs_verdicts(void **state)
{
	double base[30], head_same[10], head_slow[10];
	const size_t len[3] = {10, 10, 10};
	struct verdict_figures f;

	(void)state;
	around(base, 10, 1000, 0.03, 0);
	around(base + 10, 10, 1010, 0.03, 4);
	around(base + 20, 10, 990, 0.03, 7);
	around(head_same, 10, 1005, 0.03, 2);
	around(head_slow, 10, 1400, 0.03, 2);
	assert_int_equal(verdict_runs(base, len, 3, head_same, 10, LOWER_IS_BETTER, 0.10, 1, &f),
			 VERDICT_PASS);
	assert_int_equal(f.n_base, 30);
	assert_int_equal(verdict_runs(base, len, 3, head_slow, 10, LOWER_IS_BETTER, 0.10, 1, &f),
			 VERDICT_REGRESSION);
	assert_true(f.p < 0.001 && f.worse > 1.3);
}

static const char good_rules[] =
    "version = 1;\nalpha = 0.01;\n"
    "gates = ( { suite = \"s\"; name = \"g\"; kind = \"faster\"; threshold = 1;\n"
    "  a = { case = \"s.x.a\"; metric = \"m\"; }; b = { case = \"s.x.b\"; metric = \"m\"; };\n"
    "  paired = true; why = \"because\"; } );\n"
    "tolerances = (\n"
    "  { unit = \"*\"; ab = 0.10; baseline = 0.30; why = \"default\"; },\n"
    "  { unit = \"cycles\"; ab = 0.05; why = \"cycles\"; },\n"
    "  { case = \"s.x.noisy*\"; gate = false; why = \"bimodal\"; },\n"
    "  { metric = \"t\"; cut = 5; why = \"stopped at 5x\"; }\n"
    ");\n";

static void expect_bad(const char *text, const char *want)
{
	struct rules r;
	struct mg_err err = {0};

	if (!rules_parse(&r, text, "bad.conf", &err)) {
		rules_release(&r);
		fail_msg("accepted: %s", text);
	}
	if (!strstr(err.msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
}

static void test_rules(void **state)
{
	struct metric_def cyc = {"m", "cycles", LOWER_IS_BETTER}, ms = {"t", "ms", LOWER_IS_BETTER};
	struct rules r;
	struct tolerance t;
	struct mg_err err = {0};

	(void)state;
	assert_int_equal(suites_rules_load(&r, NULL, &err), 0);
	assert_int_equal(r.n_gates, 15);
	assert_string_equal(r.gates[0].def.a.glob, "memslots.update.growing\\[capacity=128,*");
	assert_true(r.gates[14].def.threshold == 0.70 && r.gates[14].def.paired);
	rules_release(&r);
	assert_int_equal(rules_parse(&r, good_rules, "good.conf", &err), 0);
	assert_true(r.alpha == 0.01 && r.gates[0].def.kind == GATE_FASTER);
	/* The last matching rule sets each field; what it leaves out comes from before. */
	t = rules_tolerance(&r, "s", "s.x.a", &cyc);
	assert_true(t.ab == 0.05 && t.baseline == 0.30 && t.gate);
	t = rules_tolerance(&r, "s", "s.x.a", &cyc);
	assert_true(t.cut == 0);
	t = rules_tolerance(&r, "s", "s.x.a", &ms);
	assert_true(t.ab == 0.10 && t.gate && t.cut == 5);
	t = rules_tolerance(&r, "s", "s.x.noisy[k=1]", &cyc);
	assert_false(t.gate);
	assert_string_equal(t.why, "bimodal");
	rules_release(&r);
	/* Bad input: the file, the line, what was expected. */
	expect_bad("version = 1;\ngates = ( { suite = \"s\" } );", "bad.conf:2: 'name' is missing");
	expect_bad("version = 1;\n\ngates = (\n{ suite = \"s\"; name = \"g\"; kind = \"fastest\"; "
		   "threshold = 1; why = \"w\"; a = { case = \"x\"; metric = \"m\"; }; b = { case "
		   "= \"x\"; metric = \"m\"; }; } );",
		   "bad.conf:4: gate kind 'fastest': expected");
	expect_bad("version = 1;\ntolerances = ( { unit = \"ms\"; ab = \"5%\"; why = \"w\"; } );",
		   "bad.conf:2: 'ab' expects a number from 0 to 10");
	expect_bad("version = 1;\ntolerances = ( { unit = \"ms\"; cut = 0.5; why = \"w\"; } );",
		   "bad.conf:2: 'cut' expects a number from 1 to 100");
	expect_bad("version = 1;\ntolerances = ( { unit = \"ms\"; abb = 0.1; why = \"w\"; } );",
		   "unknown setting 'abb' in a tolerance");
	expect_bad("version = 2;", "'version = 1;' expected");
	expect_bad("version = 1;\ngates = ( { suite = \"s\" }", "bad.conf:2: syntax error");
}

/* A suite's file of rules, and --rules over the embedded ones: who wins, what is refused. */
static const char suite_s_rules[] =
    "version = 1;\n"
    "gates = ( { name = \"g\"; kind = \"not_slower\"; threshold = 1.1; why = \"s's gate\";\n"
    "  a = { case = \"s.x.a\"; metric = \"m\"; }; b = { case = \"s.x.b\"; metric = \"m\"; }; } );\n"
    "tolerances = ( { unit = \"cycles\"; ab = 0.20; why = \"s's cycles\"; } );\n";

static void expect_bad_layers(const struct rules_file *files, size_t n, const char *user,
			      const char *want)
{
	struct rules r;
	struct mg_err err = {0};
	const char *path = NULL;

	if (user) {
		path = test_tmp("over.conf");
		test_write_file(path, user);
	}
	if (!rules_load(&r, files, n, path, &err)) {
		rules_release(&r);
		fail_msg("accepted: %s", user ? user : files[n - 1].text);
	}
	if (!strstr(err.msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
}

static void test_rules_layers(void **state)
{
	struct metric_def cyc = {"m", "cycles", LOWER_IS_BETTER};
	struct rules_file files[2] = {{"rules-of-s.conf", suite_s_rules, "s"}};
	const char *over = test_tmp("over.conf");
	struct rules r;
	struct tolerance t;
	struct mg_err err = {0};

	(void)state;
	/* The suite's rule comes after the defaults' (cycles: 5%), and is its suite's alone. */
	assert_int_equal(rules_load(&r, files, 1, NULL, &err), 0);
	assert_int_equal(r.n_files, 2);
	assert_true(rules_tolerance(&r, "s", "s.x.a", &cyc).ab == 0.20);
	t = rules_tolerance(&r, "t", "t.x.a", &cyc);
	assert_true(t.ab == 0.05);
	assert_string_equal(t.source, "judge/rules.conf");
	assert_true(r.n_gates == 1 && !strcmp(r.gates[0].suite, "s"));
	assert_string_equal(r.gates[0].source, "rules-of-s.conf");
	assert_non_null(strstr(r.text, "# ==== rules-of-s.conf\n"));
	rules_release(&r);
	/* --rules holds only what it changes: a tolerance after the suite's, a gate of the same
	 * name in place of the suite's, alpha; its unused rules warned about, not the suite's. */
	test_write_file(
	    over, "version = 1;\nalpha = 0.01;\n"
		  "tolerances = ( { suite = \"s\"; metric = \"m\"; ab = 0.30; why = \"o\"; },\n"
		  "  { suite = \"s\"; case = \"s.nosuch\"; ab = 0.5; why = \"typo\"; } );\n"
		  "gates = ( { suite = \"s\"; name = \"g\"; kind = \"not_slower\"; threshold = "
		  "1.5; why = \"looser\"; a = { case = \"s.x.a\"; metric = \"m\"; }; b = { case "
		  "= \"s.x.b\"; metric = \"m\"; }; } );\n");
	assert_int_equal(rules_load(&r, files, 1, over, &err), 0);
	t = rules_tolerance(&r, "s", "s.x.a", &cyc);
	assert_true(t.ab == 0.30 && r.alpha == 0.01);
	assert_string_equal(t.source, over);
	assert_int_equal(t.line, 3);
	assert_true(r.n_gates == 1 && r.gates[0].def.threshold == 1.5 && r.gates[0].user);
	assert_non_null(strstr(r.source, "the embedded rules and --rules "));
	rules_release(&r);
	/* off = true takes the suite's gate away; a gate that is not there cannot be. */
	test_write_file(
	    over, "version = 1;\ngates = ( { suite = \"s\"; name = \"g\"; off = true; } );\n");
	assert_int_equal(rules_load(&r, files, 1, over, &err), 0);
	assert_int_equal(r.n_gates, 0);
	rules_release(&r);
	expect_bad_layers(
	    files, 1, "version = 1;\ngates = ( { suite = \"s\"; name = \"h\"; off = true; } );\n",
	    "over.conf:2: no gate s.h to turn off");
	/* A suite's file: its own rules alone, no alpha, no gate named twice, no 'off'. */
	files[1] = (struct rules_file){"rules-of-t.conf",
				       "version = 1;\ntolerances = (\n { suite = \"s\"; ab = 0.1; "
				       "why = \"w\"; } );\n",
				       "t"};
	expect_bad_layers(files, 2, NULL,
			  "rules-of-t.conf:3: suite = \"s\" in the t suite's rules");
	files[1].text = "version = 1;\nalpha = 0.1;\n";
	expect_bad_layers(files, 2, NULL,
			  "rules-of-t.conf:2: unknown setting 'alpha' in a suite's rules");
	files[1] = (struct rules_file){"rules-of-s-again.conf", suite_s_rules, "s"};
	expect_bad_layers(files, 2, NULL, "rules-of-s-again.conf:2: gate s.g is given twice");
	files[1].text = "version = 1;\ngates = ( { name = \"g\"; off = true; } );\n";
	expect_bad_layers(files, 2, NULL, "unknown setting 'off' in a gate");
}

/* The shipped rules gate one primary figure a case (one per kernel path in the kvm suite) and
 * report the rest: tails, references, the busy guest's bimodal ioctls. */
static void test_shipped_primary_metrics(void **state)
{
	static const struct {
		const char *suite, *case_name;
		struct metric_def m;
		bool gated;
		double ab; /* 0: not checked */
	} want[] = {
	    {"memslots",
	     "memslots.update.random[capacity=509,impl=shift]",
	     {"impl.update_median", "cycles", LOWER_IS_BETTER},
	     true,
	     0.05},
	    {"memslots",
	     "memslots.update.random[capacity=509,impl=shift]",
	     {"impl.update_p99", "cycles", LOWER_IS_BETTER},
	     false,
	     0},
	    {"kvm",
	     "kvm.perf.memslots[slots=509]",
	     {"kvm.insert.median", "cycles", LOWER_IS_BETTER},
	     true,
	     0.15},
	    {"kvm",
	     "kvm.perf.memslots[slots=32764]",
	     {"kvm.delete_oldest.median", "cycles", LOWER_IS_BETTER},
	     true,
	     0.30},
	    {"kvm",
	     "kvm.perf.memslots[slots=509]",
	     {"kvm.insert.p99", "cycles", LOWER_IS_BETTER},
	     false,
	     0.30},
	    {"kvm",
	     "kvm.perf.memslots[slots=509]",
	     {"ref.move.median", "cycles", LOWER_IS_BETTER},
	     false,
	     0.10},
	    {"kvm",
	     "kvm.perf.busy_guest",
	     {"guest.busy_over_idle", "x", HIGHER_IS_BETTER},
	     true,
	     0.10},
	    {"kvm",
	     "kvm.perf.busy_guest",
	     {"guest.busy_accesses_per_s", "accesses/s", HIGHER_IS_BETTER},
	     false,
	     0},
	    {"kvm",
	     "kvm.perf.busy_guest",
	     {"kvm.insert.median", "cycles", LOWER_IS_BETTER},
	     false,
	     0},
	    /* Timed, the heap sort at 4096 slots is noisy; counted, it is exact (the defaults' 1%);
	     * under icount the dirty-log toggle is the kvm suite's exception to its 1%. */
	    {"memslots",
	     "memslots.update.growing[capacity=4096,impl=shift]",
	     {"heapsort.update_median", "cycles", LOWER_IS_BETTER},
	     false,
	     0.50},
	    {"memslots",
	     "memslots.update.growing[capacity=4096,impl=shift]",
	     {"heapsort.update_median", "instructions", LOWER_IS_BETTER},
	     false,
	     0.01},
	    {"kvm",
	     "kvm.perf.memslots[slots=509]",
	     {"kvm.insert.median", "instructions", LOWER_IS_BETTER},
	     true,
	     0.01},
	    {"kvm",
	     "kvm.perf.memslots[slots=509]",
	     {"kvm.flags.median", "instructions", LOWER_IS_BETTER},
	     true,
	     0.10},
	    /* ... and the ioctls on an empty VM, two-valued between boots by up to 1.5%. */
	    {"kvm",
	     "kvm.perf.memslots[slots=1]",
	     {"kvm.insert.median", "instructions", LOWER_IS_BETTER},
	     true,
	     0.02},
	    {"kvm",
	     "kvm.perf.memslots[slots=1]",
	     {"kvm.delete_newest.median", "instructions", LOWER_IS_BETTER},
	     true,
	     0.02},
	    {"kvm",
	     "kvm.perf.memslots[slots=125]",
	     {"kvm.delete_newest.median", "instructions", LOWER_IS_BETTER},
	     true,
	     0.01},
	};
	struct rules r;
	struct mg_err err = {0};

	(void)state;
	assert_int_equal(suites_rules_load(&r, NULL, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct tolerance t =
		    rules_tolerance(&r, want[i].suite, want[i].case_name, &want[i].m);

		if (t.gate != want[i].gated || (want[i].ab > 0 && t.ab != want[i].ab))
			fail_msg(
			    "%s (%s) of %s: %s at %g, expected %s at %g (%s:%d)", want[i].m.name,
			    want[i].m.unit, want[i].case_name, t.gate ? "gated" : "reported", t.ab,
			    want[i].gated ? "gated" : "reported", want[i].ab, t.source, t.line);
	}
	rules_release(&r);
}

/* A results file of one perf case with samples @v, host @hash. */
static void write_results(const char *path, const char *hash, const double *v, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(
	    f,
	    "{\"format\": 1, \"host_class\": {\"class\": \"x86_64/test\", \"hash\": \"%s\"},"
	    " \"kernel\": \"6.1\", \"glibc\": \"2.36\", \"qemu\": \"\", \"memgate_version\":"
	    " \"0.1.0\", \"memgate_commit\": \"abc\", \"label\": \"\", \"timestamp\":"
	    " \"2026-12-03T00:00:00\", \"cases\": [{\"suite\": \"s\", \"group\": \"x\","
	    " \"name\": \"a[k=1]\", \"kind\": \"perf\", \"outcome\": \"PASS\", \"message\": null,"
	    " \"metrics\": [{\"name\": \"m\", \"unit\": \"cycles\", \"better\": \"lower\","
	    " \"samples\": [",
	    hash);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%g", i ? ", " : "", v[i]);
	fprintf(f, "]}]}]}\n");
	fclose(f);
}

static void test_history_and_compare(void **state)
{
	char dir[128], pa[192], pb[192], pc[192];
	double a[12], b[12], c[12];
	struct hist_run runs[3];
	struct judged *j = NULL;
	struct rules rules;
	struct mg_err err = {0};
	size_t nj = 0;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "test")));
	snprintf(pa, sizeof(pa), "%s/a.json", dir);
	snprintf(pb, sizeof(pb), "%s/b.json", dir);
	snprintf(pc, sizeof(pc), "%s/c.json", dir);
	around(a, 12, 1000, 0.02, 0);
	around(b, 12, 1002, 0.02, 3);
	around(c, 12, 1500, 0.02, 6);
	write_results(pa, "h1", a, 12);
	write_results(pb, "h1", b, 12);
	write_results(pc, "h1", c, 12);
	assert_int_equal(rules_parse(&rules, good_rules, "good.conf", &err), 0);
	assert_int_equal(hist_load(&runs[0], pa, &err), 0);
	assert_int_equal(hist_load(&runs[1], pb, &err), 0);
	assert_int_equal(hist_load(&runs[2], pc, &err), 0);
	assert_string_equal(runs[0].host_hash, "h1");
	assert_non_null(hist_metric(hist_case(&runs[0], "s.x.a[k=1]"), "m"));
	/* The same figures: passes. 1.5x the cycles: a regression the correction keeps. */
	assert_int_equal(compare_runs(&runs[0], 1, &runs[1], &rules, 1, &j, &nj), 0);
	assert_int_equal(nj, 1);
	assert_false(j[0].rejected);
	assert_int_equal(j[0].v, VERDICT_PASS);
	nj = 0;
	assert_int_equal(compare_runs(&runs[0], 2, &runs[2], &rules, 1, &j, &nj), 0);
	assert_true(j[0].candidate && j[0].rejected);
	free(j);
	for (int i = 0; i < 3; i++)
		hist_release(&runs[i]);
	rules_release(&rules);
	/* A file that is not results, and one of an older format: clear errors. */
	write_results(pa, "h1", a, 0);
	assert_int_equal(hist_load(&runs[0], pa, &err), 0);
	hist_release(&runs[0]);
	FILE *f = fopen(pb, "w");

	assert_non_null(f);
	fputs("{\"cases\": []}", f);
	fclose(f);
	assert_int_equal(hist_load(&runs[0], pb, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "older memgate"));
	unlink(pa);
	unlink(pb);
	unlink(pc);
	rmdir(dir);
}

static void test_case_key(void **state)
{
	char buf[256];

	(void)state;
	assert_string_equal(case_key("m.u.growing[capacity=128,impl=shift]", buf, sizeof(buf)),
			    "m.u.growing[capacity=128]");
	assert_string_equal(case_key("m.u.growth[impl=swap]", buf, sizeof(buf)), "m.u.growth");
	assert_string_equal(case_key("r.p.boot[disks=60,impl=idle,x=1]", buf, sizeof(buf)),
			    "r.p.boot[disks=60,x=1]");
	assert_string_equal(case_key("m.c.eq[capacity=125,order=size]", buf, sizeof(buf)),
			    "m.c.eq[capacity=125,order=size]");
	assert_string_equal(case_key("m.c.x[simpl=1]", buf, sizeof(buf)), "m.c.x[simpl=1]");
}

/* A ratio with a zero, infinite or NaN side is never a pass; zeros on both sides are equal. */
static void test_no_ratio_no_pass(void **state)
{
	const double zeros[] = {0, 0, 0, 0, 0, 0}, twos[] = {2, 2, 2, 2, 2, 2};
	double big[6], with_inf[6], with_nan[6];
	const size_t len[] = {6};
	struct verdict_figures f;
	struct gate_figures g;

	(void)state;
	around(big, 6, 1e9, 0.02, 0);
	around(with_inf, 6, 100, 0.02, 0);
	around(with_nan, 6, 100, 0.02, 0);
	with_inf[3] = INFINITY;
	with_nan[2] = NAN;
	/* Paired (ab): base 0 cycles, head 1e9; head 0 threads against 2 (higher is better). */
	assert_int_equal(verdict_paired(zeros, big, 6, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(f.undefined, "base is 0 and head is not"));
	assert_int_equal(verdict_paired(twos, zeros, 6, HIGHER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(f.undefined, "head is 0"));
	assert_int_equal(verdict_paired(big, with_inf, 6, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(f.undefined, "not a finite number"));
	/* Nothing on both sides is the same: a count of zero trims against zero trims. */
	assert_int_equal(verdict_paired(zeros, zeros, 6, LOWER_IS_BETTER, 0.05, 1, &f),
			 VERDICT_PASS);
	assert_string_equal(f.undefined, "");
	/* Against base runs (compare, baselines): the same on the medians. */
	assert_int_equal(verdict_runs(zeros, len, 1, big, 6, LOWER_IS_BETTER, 0.5, 1, &f),
			 VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(f.undefined, "base is 0"));
	assert_int_equal(verdict_runs(twos, len, 1, zeros, 6, HIGHER_IS_BETTER, 0.5, 1, &f),
			 VERDICT_INCONCLUSIVE);
	assert_int_equal(verdict_runs(zeros, len, 1, zeros, 6, LOWER_IS_BETTER, 0.5, 1, &f),
			 VERDICT_PASS);
	/* In-run gates: a zero divisor, or a NaN over no threshold, is no pass either. */
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, true, zeros, 6, zeros, 6, 1, &g),
			 GATE_INCONCLUSIVE);
	assert_true(g.undefined);
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, false, with_nan, 6, with_nan, 6, 1, &g),
			 GATE_INCONCLUSIVE);
	assert_int_equal(gate_judge(GATE_RATIO_AT_MOST, 1.1, true, big, 6, zeros, 6, 1, &g),
			 GATE_INCONCLUSIVE);
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.1, true, big, 6, big, 6, 1, &g), GATE_PASS);
	assert_false(g.undefined);
}

/* The mean of log ratios over balanced rounds: exact, noisy, calibrated, undefined. */
static void test_rounds_verdicts(void **state)
{
	double base[16], same[16], up2[16], noisy_b[16], noisy_h[16];
	struct verdict_noise quiet = {.sd = 0.01, .width = 0.003, .rounds = 40};
	struct verdict_noise wide = {.sd = 0.05, .width = 0.03, .rounds = 40};
	struct verdict_figures f;

	(void)state;
	for (size_t i = 0; i < 16; i++) {
		base[i] = same[i] = 1000;
		up2[i] = 1020;
	}
	/* Simulated counts: every round the same, the mean decides exactly. */
	assert_int_equal(verdict_rounds(base, same, 2, LOWER_IS_BETTER, 0.01, NULL, 0.001, &f),
			 VERDICT_PASS);
	assert_true(f.exact && f.worse == 1);
	assert_int_equal(verdict_rounds(base, up2, 2, LOWER_IS_BETTER, 0.01, NULL, 0.001, &f),
			 VERDICT_REGRESSION);
	assert_true(fabs(f.worse - 1.02) < 1e-12 && fabs(f.head_median - 1020) < 1e-9);
	/* 2% worse where higher is better is base over head. */
	assert_int_equal(verdict_rounds(up2, base, 2, HIGHER_IS_BETTER, 0.01, NULL, 0.001, &f),
			 VERDICT_REGRESSION);
	/* Noise around equality: never a regression, at any alpha. */
	around(noisy_b, 16, 1000, 0.05, 0);
	around(noisy_h, 16, 1000, 0.05, 3);
	assert_int_not_equal(
	    verdict_rounds(noisy_b, noisy_h, 16, LOWER_IS_BETTER, 0.05, NULL, 0.05, &f),
	    VERDICT_REGRESSION);
	assert_false(f.calibrated);
	/* 20% worse with noise: shown at a per-metric alpha of a large family. */
	around(noisy_h, 16, 1200, 0.02, 3);
	assert_int_equal(
	    verdict_rounds(noisy_b, noisy_h, 16, LOWER_IS_BETTER, 0.05, NULL, 1e-4, &f),
	    VERDICT_REGRESSION);
	/* Past the tolerance but not shown: undecided. */
	around(noisy_h, 4, 1080, 0.05, 3);
	assert_int_equal(verdict_rounds(noisy_b, noisy_h, 4, LOWER_IS_BETTER, 0.05, NULL, 1e-4, &f),
			 VERDICT_INCONCLUSIVE);
	/* Calibrated: the host's spread decides; these rounds are far noisier: UNSTABLE. */
	around(noisy_h, 16, 1000, 0.05, 3);
	assert_int_equal(
	    verdict_rounds(noisy_b, noisy_h, 16, LOWER_IS_BETTER, 0.05, &quiet, 0.01, &f),
	    VERDICT_UNSTABLE);
	assert_true(f.calibrated && f.sd_own > f.sd_used);
	/* A wide calibration raises the tolerance past the rule's: 3 x 3% over 5%. */
	verdict_rounds(noisy_b, noisy_h, 16, LOWER_IS_BETTER, 0.05, &wide, 0.01, &f);
	assert_true(fabs(f.tolerance - expm1(VERDICT_WIDTH_FACTOR * 0.03)) < 1e-12);
	/* A calibration of too few rounds is none. */
	wide.rounds = 1;
	verdict_rounds(noisy_b, noisy_h, 16, LOWER_IS_BETTER, 0.05, &wide, 0.01, &f);
	assert_false(f.calibrated);
	/* A zero on one side: no ratio, never a pass. */
	up2[1] = 0;
	assert_int_equal(verdict_rounds(base, up2, 2, LOWER_IS_BETTER, 0.01, NULL, 0.01, &f),
			 VERDICT_INCONCLUSIVE);
	assert_true(f.undefined[0] != '\0');
}

/* A calibration: gathered from A/A rounds, filed, read back, found; bad files refused. */
static void test_calibration(void **state)
{
	char dir[128], path[256], cmd[300];
	const char *name = "memslots.update.growth[impl=shift]";
	double b[10], h[10];
	struct calib_acc *acc = NULL;
	size_t n_acc = 0;
	struct calibration c;
	struct mg_err err = {0};
	const struct verdict_noise *z;
	struct hist_run *runs = NULL;
	size_t n_runs = 99;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "calib")));
	for (unsigned int run = 0; run < 4; run++) {
		around(b, 10, 100, 0.04, run);
		around(h, 10, 100, 0.04, run + 5);
		assert_int_equal(
		    calib_add(&acc, &n_acc, name, "update_median.4096", "cycles", 0, b, h, 10), 0);
		assert_int_equal(
		    calib_add(&acc, &n_acc, name, "update_median.509", "cycles", 0, b, h, 3), 0);
	}
	assert_int_equal(n_acc, 2);
	assert_int_equal(calib_noise(&acc[0]).rounds, 40);
	assert_true(calib_noise(&acc[0]).sd > 0 && calib_noise(&acc[0]).width > 0);
	assert_int_equal(calib_save(acc, n_acc, dir, "0123456789abcdef", "x86_64/test", "memgate t",
				    4, 10, &err),
			 0);
	calib_acc_release(acc, n_acc);
	assert_int_equal(calib_load(&c, dir, "0123456789abcdef", &err), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.runs, 4);
	/* impl= is not part of a case's identity; 12 rounds are too few to be used. */
	z = calib_find(&c, "memslots.update.growth[impl=swap]", "update_median.4096");
	assert_non_null(z);
	assert_int_equal(z->rounds, 40);
	assert_null(calib_find(&c, name, "update_median.509"));
	assert_null(calib_find(&c, name, "nothing"));
	calib_release(&c);
	/* Another host class has none: not an error. */
	assert_int_equal(calib_load(&c, dir, "fedcba9876543210", &err), -ENOENT);
	/* A history's scan passes over the calibration: it is no run. */
	assert_int_equal(hist_dir_runs(dir, "0123456789abcdef", 5, &runs, &n_runs, &err), 0);
	assert_int_equal(n_runs, 0);
	free(runs);
	/* Bad files: what was expected, and where. */
	assert_int_equal(calib_parse(&c, "{\"format\": 1", "x.json", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "x.json:1"));
	assert_int_equal(calib_parse(&c,
				     "{\"format\": 2, \"runs\": 1, \"rounds\": 1, \"metrics\": []}",
				     "y.json", &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "expected a memgate calibration"));
	assert_int_equal(
	    calib_parse(
		&c,
		"{\"format\": 1, \"runs\": 1, \"rounds\": 1, \"metrics\": [{\"key\": \"a:b\", "
		"\"sd\": -1, \"width\": 0, \"rounds\": 40}]}",
		"z.json", &err),
	    -EINVAL);
	assert_non_null(strstr(err.msg, "metric 1"));
	snprintf(path, sizeof(path), "%s/0123456789abcdef/%s", dir, CALIB_FILE);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not json", f);
	fclose(f);
	assert_int_equal(calib_load(&c, dir, "0123456789abcdef", &err), -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* One calibration of a metric, 4 A/A runs of 10 rounds spread by @spread, filed in @dir. */
static void file_calibration(const char *dir, double spread)
{
	struct calib_acc *acc = NULL;
	size_t n_acc = 0;
	struct mg_err err = {0};
	double b[10], h[10];

	for (unsigned int run = 0; run < 4; run++) {
		around(b, 10, 100, spread, run);
		around(h, 10, 100, spread, run + 5);
		assert_int_equal(calib_add(&acc, &n_acc, "memslots.update.growth[impl=shift]",
					   "update_median.4096", "cycles", 0, b, h, 10),
				 0);
	}
	assert_int_equal(calib_save(acc, n_acc, dir, "0123456789abcdef", "x86_64/test", "memgate t",
				    4, 10, &err),
			 0);
	calib_acc_release(acc, n_acc);
}

/*
 * The calibrations before the newest are kept, and each metric's noise is their upper median:
 * one made in a noisy hour does not set the tolerances alone; the oldest goes; a bad one is
 * bad input; none of them is a run of the history.
 */
static void test_calibration_kept(void **state)
{
	const char *name = "memslots.update.growth[impl=shift]", *metric = "update_median.4096";
	/* Quiet, a noisy hour, quiet again, quieter. */
	const double spread[] = {0.02, 0.30, 0.04, 0.01};
	double sd[ARRAY_SIZE(spread)];
	char dir[128], path[256], cmd[300];
	struct calibration c;
	struct mg_err err = {0};
	struct hist_run *runs = NULL;
	size_t n_runs = 99;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "calib-kept")));
	for (size_t i = 0; i < ARRAY_SIZE(spread); i++) {
		const struct verdict_noise *z;

		file_calibration(dir, spread[i]);
		assert_int_equal(calib_load(&c, dir, "0123456789abcdef", &err), 0);
		assert_int_equal(c.files, i < CALIB_KEEP ? i + 1 : CALIB_KEEP);
		z = calib_find(&c, name, metric);
		assert_non_null(z);
		assert_int_equal(z->rounds, 40 * c.files);
		sd[i] = z->sd;
		if (i)
			assert_non_null(strstr(c.when, "the upper median of"));
		calib_release(&c);
	}
	/* Of two, the larger: the noisy hour's. Of three, the middle: the quiet hour after it. */
	assert_true(sd[1] > 5 * sd[0]);
	assert_true(sd[2] > sd[0] && 3 * sd[2] < sd[1]);
	/* The first went with the fourth: 0.30, 0.04 and 0.01 leave the same middle. */
	assert_true(fabs(sd[3] - sd[2]) < 1e-12);
	snprintf(path, sizeof(path), "%s/0123456789abcdef/calibration.2.json", dir);
	assert_int_equal(access(path, R_OK), 0);
	snprintf(path, sizeof(path), "%s/0123456789abcdef/calibration.3.json", dir);
	assert_int_equal(access(path, R_OK), -1);
	assert_true(calib_is_file("calibration.2.json") && calib_is_file(CALIB_FILE));
	assert_false(calib_is_file("results.json") || calib_is_file("calibration.txt"));
	assert_int_equal(hist_dir_runs(dir, "0123456789abcdef", 5, &runs, &n_runs, &err), 0);
	assert_int_equal(n_runs, 0);
	free(runs);
	/* A bad older file is bad input, named. */
	snprintf(path, sizeof(path), "%s/0123456789abcdef/calibration.1.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\": 1}", f);
	fclose(f);
	assert_int_equal(calib_load(&c, dir, "0123456789abcdef", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "calibration.1.json"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The model: rates are fractions, and the procedure of before December 2026 fails A/A runs
 * where the one that replaced it does not (the figure: 77% at a 5% spread). */
static void test_model(void **state)
{
	struct model_params mp = model_params_default();
	struct model_rates old, now;

	(void)state;
	mp.spread = 0.05;
	mp.runs = 20;
	mp.seed = 7;
	assert_int_equal(model_run(&mp, MODEL_MEDIANS_HOLM, &old), 0);
	assert_int_equal(model_run(&mp, MODEL_CALIBRATED, &now), 0);
	assert_true(old.aa_failed > 0.3 && now.aa_failed <= old.aa_failed);
	assert_true(now.caught >= 0 && now.caught <= 1 && now.mean_rounds >= 6);
	mp.rounds = 60;
	assert_int_equal(model_run(&mp, MODEL_OWN_SPREAD, &now), -EINVAL);
}

/* Two sides that differ in their QEMU only (an A/B of QEMUs) are told from all others. */
static void test_sides_differ_in_qemu_only(void **state)
{
	static const struct {
		const char *base, *head;
		bool qemu_only;
	} rows[] = {
	    {"build/memgate", "build/memgate --qemu /q10/qemu-system-x86_64", true},
	    {"build/memgate --qemu /a", "build/memgate --qemu /b", true},
	    {"build/memgate --qemu=/a -s qemu", "build/memgate --qemu /b -s qemu", true},
	    {"build/memgate", "build/memgate --qemu-preload fix.so", true},
	    {"build/memgate --qemu /a", "build/memgate --qemu /a", false},
	    {"build/memgate", "build/memgate", false},
	    {"build/memgate --qemu /a", "other/memgate --qemu /b", false},
	    {"build/memgate --qemu /a", "build/memgate --qemu /b --impl rcu.trim=none", false},
	    {"build/memgate --qemu /a -n 3", "build/memgate -n 4 --qemu /b", false},
	};
	struct mg_err err;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ab_side a, b;

		assert_int_equal(ab_side_parse(&a, "base", rows[i].base, &err), 0);
		assert_int_equal(ab_side_parse(&b, "head", rows[i].head, &err), 0);
		if (ab_sides_differ_in_qemu_only(&a, &b) != rows[i].qemu_only)
			fail_msg("%s | %s: want %d", rows[i].base, rows[i].head, rows[i].qemu_only);
	}
}

/*
 * ab's verdict arithmetic on made-up rounds (judge/ab_verdict.c): a start-up 60% slower in
 * head is a regression at the case's share of alpha; the suite's reference arm, twice as slow,
 * is context when the sides differ in their QEMU only, and a gated metric when they do not.
 */
static void test_ab_rounds(void **state)
{
	double b0[10], h0[10], b1[10], h1[10];
	struct ab_metric m[2] = {
	    {.name = "qemu.startup_ms",
	     .unit = "ms",
	     .better = LOWER_IS_BETTER,
	     .base = b0,
	     .head = h0,
	     .n = 10},
	    {.name = "ref.ms",
	     .unit = "ms",
	     .better = LOWER_IS_BETTER,
	     .reference = true,
	     .base = b1,
	     .head = h1,
	     .n = 10},
	};
	struct ab_case c = {.key = "qemu.perf.prealloc[backend=memfd-hugetlb-2m]",
			    .base_name = "qemu.perf.prealloc[backend=memfd-hugetlb-2m]",
			    .head_name = "qemu.perf.prealloc[backend=memfd-hugetlb-2m]",
			    .suite = "qemu",
			    .metrics = m,
			    .n_metrics = 2,
			    .cut = -1,
			    .confirm = 0};
	struct rules rules;
	struct mg_err err;
	struct ab_opts o = {.rounds = 10, .samples = 5, .qemu_only = true};
	struct ab_outcome out;
	struct tolerance t;
	size_t failed = 0;

	(void)state;
	assert_int_equal(suites_rules_load(&rules, NULL, &err), 0);
	o.rules = &rules;
	around(b0, 10, 100, 0.02, 1);
	around(h0, 10, 160, 0.02, 2);
	around(b1, 10, 50, 0.02, 3);
	around(h1, 10, 100, 0.02, 4);
	/* The reference arm: gated by the rules, context between two QEMUs. */
	o.qemu_only = false;
	assert_true(ab_tolerance(&o, &c, &m[1]).gate);
	o.qemu_only = true;
	t = ab_tolerance(&o, &c, &m[1]);
	assert_false(t.gate);
	assert_non_null(strstr(t.why, "differ in their QEMU only"));
	for (size_t i = 0; i < 2; i++)
		c.n_gated += ab_tolerance(&o, &c, &m[i]).gate;
	assert_int_equal(c.n_gated, 1);
	ab_split_alpha(&c, 1, &o);
	assert_true(fabs(c.alpha - rules.alpha) < 1e-12); /* one gated metric, one look */
	assert_false(ab_flag_case(&c, &o));		  /* 60% is shown at the first look */
	memset(&out, 0, sizeof(out));
	assert_int_equal(ab_conclude_all(&c, 1, &o, &out), 0);
	assert_int_equal(out.cases_compared, 1);
	for (size_t i = 0; i < out.verdicts.rows.n; i++) {
		const struct case_result *r = &out.verdicts.rows.results[i];

		if (!r->judged.judged)
			continue;
		assert_string_equal(r->judged.verdict, "regression"); /* both are, measured */
		if (r->outcome == OUTCOME_FAIL) {
			failed++;
			assert_true(r->judged.value > 1.5 && r->judged.value < 1.7);
			assert_non_null(strstr(r->message, "qemu.startup_ms"));
		} else {
			assert_true(r->judged.value > 1.9 && r->judged.value < 2.1);
		}
	}
	assert_int_equal(failed, 1); /* the start-up only: the reference is context */
	compare_results_release(&out.verdicts);
	rules_release(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_t_and_holm),
	    cmocka_unit_test(test_ab_rounds),
	    cmocka_unit_test(test_paired_verdicts),
	    cmocka_unit_test(test_runs_verdicts),
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_rules_layers),
	    cmocka_unit_test(test_shipped_primary_metrics),
	    cmocka_unit_test(test_history_and_compare),
	    cmocka_unit_test(test_case_key),
	    cmocka_unit_test(test_no_ratio_no_pass),
	    cmocka_unit_test(test_rounds_verdicts),
	    cmocka_unit_test(test_calibration),
	    cmocka_unit_test(test_calibration_kept),
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_sides_differ_in_qemu_only),
	};

	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
