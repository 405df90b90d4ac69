/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_gate.c - gate verdicts on samples recorded on the CI machine and on synthetic ones. */
#include "tests/testutil.h"

#include <string.h>

#include "judge/gate.h"
#include "judge/rules.h"
#include "util/util.h"

/*
 * Recorded 2026-12-02 on the CI machine kind (2 vCPUs, Intel Xeon under KVM) with
 * `memgate run -s memslots --json`: update_max of 128 growing creates, TSC cycles, and
 * hit_uniform lookups at 117 slots, impl and linear sampled in turn in one case.
 */
static const double shift_max_128[] = {1292, 1440, 1582, 1466, 1464, 1538, 1512, 1522,
				       1492, 1570, 1498, 1628, 1588, 1408, 1520};
static const double heapsort_max_128[] = {115926, 115072, 116286, 115260, 111512,
					  117636, 113696, 116740, 116424, 111388,
					  115010, 119370, 113410, 114922, 120618};
static const double shift_median_128[] = {700, 776, 748, 919, 831, 742, 918, 811,
					  761, 925, 899, 925, 857, 900, 868};
static const double swap_median_128[] = {1127, 1288, 1336, 1279, 1173, 1319, 1176, 1262,
					 1317, 1220, 1332, 1279, 1257, 1345, 1327};
static const double impl_find_117[] = {190.5, 185,   186.6, 221.1, 181.5, 178.7, 174.9, 208.1,
				       175.5, 183.4, 191.1, 189,   221.3, 176.4, 173.9};
static const double linear_find_117[] = {238.9, 250.3, 315.7, 240,   196,   265.8, 208.4, 221.2,
					 225.1, 213.5, 229.9, 223.9, 241.3, 212.2, 203.2};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_recorded_default_passes(void **state)
{
	struct gate_figures f;

	(void)state;
	/* shift / heapsort = 1/77: under 1/20 with its whole interval. */
	assert_int_equal(gate_judge(GATE_RATIO_AT_MOST, 0.05, false, shift_max_128,
				    N(shift_max_128), heapsort_max_128, N(heapsort_max_128), 1, &f),
			 GATE_PASS);
	assert_true(f.ratio > 0.01 && f.ratio < 0.02 && f.hi < 0.05);
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, false, shift_median_128,
				    N(shift_median_128), swap_median_128, N(swap_median_128), 1,
				    &f),
			 GATE_PASS);
	assert_int_equal(gate_judge(GATE_FASTER, 1.0, true, impl_find_117, N(impl_find_117),
				    linear_find_117, N(linear_find_117), 1, &f),
			 GATE_PASS);
	assert_true(f.hi < 1);
}

/* `--impl memslots.update=heapsort` puts heap sort on both sides: ratio 1, far over 1/20. */
static void test_recorded_heapsort_fails(void **state)
{
	struct gate_figures f;

	(void)state;
	assert_int_equal(gate_judge(GATE_RATIO_AT_MOST, 0.05, false, heapsort_max_128,
				    N(heapsort_max_128), heapsort_max_128, N(heapsort_max_128), 1,
				    &f),
			 GATE_FAIL);
	assert_true(f.lo > 0.9 && f.hi < 1.1);
	/* ... and heap sort is slower than swap, beyond noise. */
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, false, heapsort_max_128,
				    N(heapsort_max_128), swap_median_128, N(swap_median_128), 1,
				    &f),
			 GATE_FAIL);
}

/* `--impl memslots.lookup=linear`: linear against itself is not faster. */
static void test_recorded_linear_fails(void **state)
{
	struct gate_figures f;

	(void)state;
	assert_int_equal(gate_judge(GATE_FASTER, 1.0, true, linear_find_117, N(linear_find_117),
				    linear_find_117, N(linear_find_117), 1, &f),
			 GATE_FAIL);
	/* Swapped sides: the reference is faster, so "impl faster" is false. */
	assert_int_equal(gate_judge(GATE_FASTER, 1.0, true, linear_find_117, N(linear_find_117),
				    impl_find_117, N(impl_find_117), 1, &f),
			 GATE_FAIL);
}

static void test_synthetic_verdicts(void **state)
{
	/* Ratio around 0.05 with a wide spread: the interval straddles the bound. */
	const double a[] = {4, 6, 5, 3, 7, 5, 4, 6};
	const double b[] = {100, 100, 100, 100, 100, 100, 100, 100};
	/* Equal within noise: not slower, whatever the order. */
	const double c[] = {10, 11, 9, 10, 10, 11, 9, 10};
	const double d[] = {10, 9, 11, 10, 11, 10, 9, 10};
	/* 10% slower, every sample. */
	const double e[] = {11, 11.1, 10.9, 11, 11.05, 10.95, 11, 11};
	/* Median 9.5 against 10, overlapping. */
	const double g[] = {9, 10, 8, 11, 9, 10, 9, 10};
	struct gate_figures f;

	(void)state;
	assert_int_equal(gate_judge(GATE_RATIO_AT_MOST, 0.05, false, a, 8, b, 8, 1, &f),
			 GATE_INCONCLUSIVE);
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, false, c, 8, d, 8, 1, &f), GATE_PASS);
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.0, false, e, 8, c, 8, 1, &f), GATE_FAIL);
	/* A tolerance of 15% lets the 10% slowdown through. */
	assert_int_equal(gate_judge(GATE_NOT_SLOWER, 1.15, false, e, 8, c, 8, 1, &f), GATE_PASS);
	/* Equal medians are not faster; a little faster with this spread is not sure yet. */
	assert_int_equal(gate_judge(GATE_FASTER, 1.0, false, d, 8, c, 8, 1, &f), GATE_FAIL);
	assert_int_equal(gate_judge(GATE_FASTER, 1.0, false, g, 8, d, 8, 1, &f), GATE_INCONCLUSIVE);
}

/* gates_evaluate() on hand-made results: selection by glob, SKIP passed on, filtered out. */
static const struct metric_def one_metric[] = {{"t", "cycles", LOWER_IS_BETTER}};
static void no_run(struct case_ctx *ctx)
{
	(void)ctx;
}
static const struct case_def fake_cases[] = {
    {.name = "a",
     .group = "g",
     .kind = CASE_PERF,
     .metrics = one_metric,
     .n_metrics = 1,
     .run = no_run},
    {.name = "b",
     .group = "g",
     .kind = CASE_PERF,
     .metrics = one_metric,
     .n_metrics = 1,
     .run = no_run},
};
/* The gates come from a rules file, as memgate's own do. */
static const char fake_rules[] =
    "version = 1;\n"
    "gates = (\n"
    "  { suite = \"fake\"; name = \"a_vs_b\"; kind = \"ratio_at_most\"; threshold = 0.5;\n"
    "    a = { case = \"fake.g.a\"; metric = \"t\"; }; b = { case = \"fake.g.b\"; metric = \"t\"; "
    "};\n"
    "    why = \"a test\"; },\n"
    "  { suite = \"fake\"; name = \"a_vs_c\"; kind = \"ratio_at_most\"; threshold = 0.5;\n"
    "    a = { case = \"fake.g.a\"; metric = \"t\"; }; b = { case = \"fake.g.c\"; metric = \"t\"; "
    "};\n"
    "    why = \"c is never run\"; }\n"
    ");\n";
static const struct suite_def fake = {.name = "fake", .cases = fake_cases, .n_cases = 2};

static void fill(struct case_result *r, struct case_inst *in, struct metric_result *m,
		 const struct case_def *d, double *v, unsigned char *stolen, size_t n)
{
	memset(r, 0, sizeof(*r));
	memset(in, 0, sizeof(*in));
	in->suite = &fake;
	in->def = d;
	snprintf(in->name, sizeof(in->name), "%s", d->name);
	*m = (struct metric_result){.def = &one_metric[0], .v = v, .stolen = stolen, .n = n};
	stats_summarise(v, n, 0, 1, &m->sum);
	r->inst = in;
	r->metrics = m;
}

/* A reference that did not finish: what the gate makes of it, and what it says. */
static const struct {
	enum case_outcome outcome;
	char *message; /* as the result holds it */
	enum case_outcome gate;
	const char *says[2];
} unfinished[] = {
    /* killed after some samples: the gate says it did not complete, not "no samples" */
    {OUTCOME_ERROR,
     "crashed: killed by signal 9",
     OUTCOME_ERROR,
     {"b did not complete (ERROR: crashed", "its 5 t samples are not judged"}},
    /* a skipped reference skips the gate, with the reason */
    {OUTCOME_SKIP, "needs a second NUMA node", OUTCOME_SKIP, {"needs a second NUMA node"}},
};

static void test_evaluate(void **state)
{
	double va[] = {10, 11, 10, 12, 10}, vb[] = {100, 101, 99, 100, 100};
	unsigned char st[5] = {0};
	struct case_inst ia, ib;
	struct metric_result ma, mb;
	struct case_result rs[2];
	const struct suite_def *suites[] = {&fake};
	struct gate_results g;
	struct rules rules;
	struct mg_err err;

	(void)state;
	if (rules_parse(&rules, fake_rules, "fake", &err))
		fail_msg("%s", err.msg);
	fill(&rs[0], &ia, &ma, &fake_cases[0], va, st, 5);
	fill(&rs[1], &ib, &mb, &fake_cases[1], vb, st, 5);
	assert_int_equal(gates_evaluate(&rules, suites, 1, rs, 2, NULL, &g), 0);
	/* a_vs_c names a case that did not run: left out, not failed. */
	assert_int_equal(g.rows.n, 1);
	assert_string_equal(g.rows.results[0].inst->name, "a_vs_b");
	assert_int_equal(g.rows.results[0].outcome, OUTCOME_PASS);
	assert_int_equal(g.rows.results[0].inst->def->kind, CASE_GATE);
	gates_release(&g);
	for (size_t i = 0; i < ARRAY_SIZE(unfinished); i++) {
		rs[1].outcome = unfinished[i].outcome;
		rs[1].message = unfinished[i].message;
		assert_int_equal(gates_evaluate(&rules, suites, 1, rs, 2, NULL, &g), 0);
		assert_int_equal(g.rows.results[0].outcome, unfinished[i].gate);
		for (size_t j = 0; j < ARRAY_SIZE(unfinished[i].says) && unfinished[i].says[j]; j++)
			assert_non_null(strstr(g.rows.results[0].message, unfinished[i].says[j]));
		gates_release(&g);
	}
	/* a / b at 1.0: the failure states figure, interval, medians and threshold. */
	rs[1].outcome = OUTCOME_PASS;
	rs[1].message = NULL;
	fill(&rs[1], &ib, &mb, &fake_cases[1], va, st, 5);
	assert_int_equal(gates_evaluate(&rules, suites, 1, rs, 2, NULL, &g), 0);
	assert_int_equal(g.rows.results[0].outcome, OUTCOME_FAIL);
	assert_non_null(strstr(g.rows.results[0].message, "t of a / t of b = 1 (95% CI"));
	assert_non_null(strstr(g.rows.results[0].message, "threshold: ratio at most 0.5"));
	gates_release(&g);
	rules_release(&rules);
}

/*
 * A gate with an effect (the prealloc scaling gate's shape): the one-thread implementation
 * fails it where the reference's threads are faster than its one thread, is UNSTABLE (not a
 * PASS) where a busy host hides that speedup, and a scaling one passes; a case whose reference
 * shows no effect does not stop sampling early.
 */
static const struct metric_def three_metrics[] = {{"impl", "ms", LOWER_IS_BETTER},
						  {"ref", "ms", LOWER_IS_BETTER},
						  {"one", "ms", LOWER_IS_BETTER}};
static const struct case_def scaling_case[] = {{.name = "s",
						.group = "g",
						.kind = CASE_PERF,
						.metrics = three_metrics,
						.n_metrics = 3,
						.run = no_run}};
static const struct suite_def scaling_suite = {.name = "fake", .cases = scaling_case, .n_cases = 1};
static const char scaling_rules[] =
    "version = 1;\n"
    "gates = ({ suite = \"fake\"; name = \"scaling\"; kind = \"not_slower\"; threshold = 1.1;\n"
    "  paired = true; why = \"scales as the reference\";\n"
    "  a = { case = \"fake.g.s\"; metric = \"impl\"; }; b = { case = \"fake.g.s\"; metric = "
    "\"ref\"; };\n"
    "  effect = { a = { case = \"fake.g.s\"; metric = \"one\"; }; b = { case = \"fake.g.s\"; "
    "metric = \"ref\"; }; threshold = 1.2; why = \"threads must help\"; }; });\n";

/* The scaling gate on one case of 8 samples a metric at about @impl, @ref and @one ms. */
static enum case_outcome scaling(const struct rules *rules, double impl, double ref, double one,
				 bool *unstable, bool *settled, char *msg, size_t len)
{
	static const double wobble[8] = {1, 1.01, 0.99, 1.02, 0.98, 1, 1.01, 0.99};
	double v[3][8];
	const double at[3] = {impl, ref, one};
	struct metric_result m[3];
	struct case_inst in = {.suite = &scaling_suite, .def = &scaling_case[0]};
	struct case_result r = {.inst = &in, .metrics = m, .outcome = OUTCOME_PASS};
	const struct suite_def *suites[] = {&scaling_suite};
	struct gate_results g;
	enum case_outcome o;

	snprintf(in.name, sizeof(in.name), "s");
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 8; i++)
			v[k][i] = at[k] * wobble[(i + 3 * k) % 8];
		m[k] = (struct metric_result){.def = &three_metrics[k], .v = v[k], .n = 8};
	}
	assert_int_equal(gates_evaluate(rules, suites, 1, &r, 1, NULL, &g), 0);
	assert_int_equal(g.rows.n, 1);
	o = g.rows.results[0].outcome;
	*unstable = g.rows.results[0].unstable;
	snprintf(msg, len, "%s", g.rows.results[0].message ? g.rows.results[0].message : "");
	*settled = gates_settled(rules, &r, false, 1);
	gates_release(&g);
	return o;
}

static void test_effect(void **state)
{
	struct rules rules;
	struct mg_err err;
	bool unstable, settled;
	char msg[1500];

	(void)state;
	if (rules_parse(&rules, scaling_rules, "fake", &err))
		fail_msg("%s", err.msg);
	/* Quiet: the reference 1.75x as fast as its one thread; a one-thread impl fails. */
	assert_int_equal(scaling(&rules, 175, 100, 175, &unstable, &settled, msg, sizeof(msg)),
			 OUTCOME_FAIL);
	assert_false(unstable);
	/* Busy (the measured 142 ms against 96): no speedup to lack; UNSTABLE, never PASS. */
	assert_int_equal(scaling(&rules, 96, 142, 140, &unstable, &settled, msg, sizeof(msg)),
			 OUTCOME_FAIL);
	assert_true(unstable);
	assert_false(settled);
	assert_non_null(strstr(msg, "UNSTABLE: the reference does not show"));
	assert_non_null(strstr(msg, "one / ref of s = 0.98"));
	assert_non_null(strstr(msg, "threads must help"));
	/* Quiet and scaling as the reference does: PASS, and the case may stop early. */
	assert_int_equal(scaling(&rules, 100, 100, 175, &unstable, &settled, msg, sizeof(msg)),
			 OUTCOME_PASS);
	assert_false(unstable);
	assert_true(settled);
	rules_release(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_recorded_default_passes),
	    cmocka_unit_test(test_recorded_heapsort_fails),
	    cmocka_unit_test(test_recorded_linear_fails),
	    cmocka_unit_test(test_synthetic_verdicts),
	    cmocka_unit_test(test_evaluate),
	    cmocka_unit_test(test_effect),
	};

	return cmocka_run_group_tests_name("gate", tests, NULL, NULL);
}
