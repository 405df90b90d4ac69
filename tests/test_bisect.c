/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bisect.c - the search for a regression's first bad commit on made-up ranges: exact
 * figures (one round a step), noisy ones (more rounds, then a decision or a range, never a
 * wrong commit), two culprits for two metrics, commits that do not build, nothing to bisect,
 * and the report's layout.
 */
#include "tests/testutil.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "judge/bisect.h"

/* A made-up range: metric m's figure is base[m] until commit culprit[m], then base x (1 + step). */
struct range {
	size_t culprit[2];
	double base[2], step[2];
	double noise;  /* the lognormal spread of one round; 0: exact */
	size_t broken; /* a commit that does not build (0: none) */
	uint64_t rng;
	unsigned int calls[64]; /* measure() calls per commit */
};

static double uniform(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(uint64_t *s)
{
	return sqrt(-2 * log(uniform(s))) * cos(2 * M_PI * uniform(s));
}

static int measure(void *arg, size_t idx, struct bisect_figures *f)
{
	struct range *r = arg;

	r->calls[idx]++;
	if (r->broken && idx == r->broken)
		return 125;
	for (size_t m = 0; m < 2; m++) {
		double v = r->base[m] * (idx >= r->culprit[m] ? 1 + r->step[m] : 1);

		f->v[m][f->n[m]++] = v * exp(r->noise * gauss(&r->rng));
	}
	return 0;
}

static const struct bisect_metric metrics[] = {
    {"kvm.perf.memslots[slots=509]", "kvm.insert.median", "instructions", LOWER_IS_BETTER, 0.01},
    {"kvm.perf.memslots[slots=509]", "kvm.move.median", "instructions", LOWER_IS_BETTER, 0.01},
};

/* Bisect @r over @n commits; the answers in @bs (released by the caller). */
static void run(struct range *r, size_t n, unsigned int max_rounds, struct bisect *bs)
{
	struct bisect_ops ops = {.measure = measure, .arg = r, .max_rounds = max_rounds};

	*bs = (struct bisect){.metrics = metrics, .n_metrics = 2, .n = n};
	assert_int_equal(bisect_run(bs, &ops), 0);
}

static void test_classify(void **state)
{
	const double g[] = {100, 100}, b[] = {104, 104}, near_g[] = {100.5}, near_b[] = {103.9};
	const double ng[] = {100, 102, 98, 101}, nb[] = {104, 106, 102, 105}, mid[] = {102, 102.1};

	(void)state;
	/* Exact figures: any side of the midpoint is a decision. */
	assert_int_equal(bisect_classify(g, 2, b, 2, near_g, 1), BISECT_GOOD);
	assert_int_equal(bisect_classify(g, 2, b, 2, near_b, 1), BISECT_BAD);
	/* Noisy ones at the midpoint: not shown either way. */
	assert_int_equal(bisect_classify(ng, 4, nb, 4, mid, 2), BISECT_UNKNOWN);
	/* BAD better than GOOD (higher is better, or an improvement): the sides still hold. */
	assert_int_equal(bisect_classify(b, 2, g, 2, near_g, 1), BISECT_BAD);
	assert_int_equal(bisect_classify(g, 2, g, 2, near_g, 1), BISECT_UNKNOWN);
}

/* Exact figures: every culprit of every range named, one round a step, log2(n) steps. */
static void test_exact(void **state)
{
	(void)state;
	for (size_t n = 2; n <= 17; n++)
		for (size_t k = 1; k < n; k++) {
			struct range r = {.culprit = {k, k},
					  .base = {23124, 40000},
					  .step = {0.03, 0.0},
					  .rng = 1};
			struct bisect bs;

			run(&r, n, 4, &bs);
			assert_int_equal(bs.answer[0].hi, k);
			assert_int_equal(bs.answer[0].lo, k - 1);
			assert_true(bs.answer[1].no_change);
			assert_true(bs.steps <= (size_t)ceil(log2((double)n)));
			for (size_t i = 1; i + 1 < n; i++)
				assert_true(r.calls[i] <= 1);
			bisect_release(&bs);
		}
}

/*
 * 40 ranges of 16 commits with noisy figures (2% a round) and a @step at commit 7: each step
 * near the middle takes more rounds, then is decided or stays unknown, and the answer is the
 * culprit or a range holding it: never a wrong commit. How many were named goes in @named.
 */
static void noisy(double step, size_t *named)
{
	size_t more = 0;

	*named = 0;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct range r = {.culprit = {7, 7},
				  .base = {1000, 1000},
				  .step = {step, 0.0},
				  .noise = 0.02,
				  .rng = seed * 2654435761u};
		struct bisect bs;

		run(&r, 16, 12, &bs);
		if (bs.answer[0].lo >= 7 || bs.answer[0].hi < 7)
			fail_msg("seed %" PRIu64 ": the answer %zu..%zu leaves out commit 7", seed,
				 bs.answer[0].lo, bs.answer[0].hi);
		*named += bs.answer[0].hi == bs.answer[0].lo + 1;
		for (size_t i = 1; i < 15; i++)
			more += r.calls[i] > 1;
		bisect_release(&bs);
	}
	assert_true(more > 0);
}

static void test_noisy(void **state)
{
	size_t named;

	(void)state;
	/* A 10% step, 5 rounds' spreads: named nearly always (35 of 40 here). */
	noisy(0.10, &named);
	assert_true(named >= 30);
	/* A 4% step, 2 of them: mostly a range (38 of 40 here), still never a wrong commit. */
	noisy(0.04, &named);
	assert_true(named < 40);
}

/* Two metrics with two culprits: each gets its own answer, the commits measured shared. */
static void test_two_culprits(void **state)
{
	struct range r = {.culprit = {4, 11}, .base = {23124, 40000}, .step = {0.05, 0.08}};
	struct bisect bs;

	(void)state;
	r.rng = 7;
	run(&r, 16, 4, &bs);
	assert_true(bs.answer[0].lo == 3 && bs.answer[0].hi == 4);
	assert_true(bs.answer[1].lo == 10 && bs.answer[1].hi == 11);
	bisect_release(&bs);
}

/* A commit that does not build is skipped: the culprit is still named; when the culprit is the
 * one that does not build, the answer is the range of it and the next. */
static void test_skip(void **state)
{
	struct range r = {.culprit = {9, 9}, .base = {100, 100}, .step = {0.05, 0.05}, .broken = 8};
	struct bisect bs;

	(void)state;
	r.rng = 3;
	run(&r, 16, 4, &bs);
	assert_int_equal(bs.answer[0].hi, 9);
	assert_int_equal(bs.answer[0].lo, 7);
	assert_int_equal(bs.cls[8][0], BISECT_SKIP);
	bisect_release(&bs);
	r = (struct range){
	    .culprit = {8, 8}, .base = {100, 100}, .step = {0.05, 0.05}, .broken = 8, .rng = 3};
	run(&r, 16, 4, &bs);
	assert_true(bs.answer[0].lo == 7 && bs.answer[0].hi == 9);
	bisect_release(&bs);
}

/* GOOD and BAD the same: nothing to bisect, no commit between them measured. */
static void test_nothing(void **state)
{
	struct range r = {.culprit = {5, 5}, .base = {100, 200}, .step = {0.002, 0}, .noise = 0.01};
	struct bisect bs;

	(void)state;
	r.rng = 11;
	run(&r, 16, 6, &bs);
	assert_true(bs.answer[0].no_change && bs.answer[1].no_change);
	assert_int_equal(bs.steps, 0);
	for (size_t i = 1; i < 15; i++)
		assert_int_equal(r.calls[i], 0);
	bisect_release(&bs);
}

/* The report: the culprit, its author and subject, a row a metric, the host, the sides. */
static void test_report(void **state)
{
	struct range r = {.culprit = {2, 2}, .base = {23124, 40000}, .step = {0.04, 0.0}, .rng = 1};
	const struct bisect_commit commits[] = {
	    {"1111111111111111111111111111111111111111", "good", "A <a@example.org>"},
	    {"2222222222222222222222222222222222222222", "kvm: rename a helper", "B <b@x>"},
	    {"3333333333333333333333333333333333333333", "kvm: slower insert", "C <c@x>"},
	    {"4444444444444444444444444444444444444444", "bad", "D <d@x>"},
	};
	const char *want =
	    "The first bad commit:\n\ncommit 3333333333333333333333333333333333333333\n"
	    "Author: C <c@x>\n\n    kvm: slower insert\n\n"
	    "        parent     \xc2\xb1sd    %change       commit     \xc2\xb1sd\n"
	    "         23124 \xc2\xb1  0.0%      +4.0%        24049 \xc2\xb1  0.0%  "
	    "kvm.perf.memslots[slots=509] kvm.insert.median (instructions, lower is better)\n\n"
	    "kvm.perf.memslots[slots=509] kvm.move.median: GOOD and BAD do not differ past its "
	    "tolerance (1%): nothing to bisect\n"
	    "host: x86_64/test\nto reproduce, memgate ab of the culprit against its parent:\n"
	    "  --base 'memgate vm --kernel /k/2222 --'\n  --head 'memgate vm --kernel /k/3333 "
	    "--'\n";
	struct bisect bs;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	run(&r, 4, 2, &bs);
	bisect_report(&bs, commits, "x86_64/test", "memgate vm --kernel /k/2222 --",
		      "memgate vm --kernel /k/3333 --", f);
	fclose(f);
	if (strcmp(text, want))
		fail_msg("the report:\n%s\nwanted:\n%s", text, want);
	free(text);
	bisect_release(&bs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classify), cmocka_unit_test(test_exact),
	    cmocka_unit_test(test_noisy),    cmocka_unit_test(test_two_culprits),
	    cmocka_unit_test(test_skip),     cmocka_unit_test(test_nothing),
	    cmocka_unit_test(test_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
