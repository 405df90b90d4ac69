/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_qemu_check.c - the qemu suite's measurement on made-up launches and rounds: the fill read
 * from QEMU's resident memory, and the figures that cannot be true (an ERROR, never a PASS). */
#include "tests/testutil.h"

#include <string.h>

#include "run/qemu.h"
#include "suites/qemu/check.h"

#define MIB (1024UL) /* KiB in a MiB */
#define GIB_BYTES (1ULL << 30)

/* A launch polled every @step ms: QEMU's own 20 MiB, then 1 GiB filled at 1 GiB per @fill ms
 * from @begin ms on; the greeting @after ms past the fill's end. */
static struct qemu_launch *launch_of(double step, double begin, double fill, double after)
{
	static struct qemu_launch l;
	double end = begin + fill + after;

	memset(&l, 0, sizeof(l));
	for (double t = 0; t <= end && l.n_trace < QEMU_TRACE; t += step) {
		double done = t < begin ? 0 : t >= begin + fill ? 1 : (t - begin) / fill;

		l.trace_ms[l.n_trace] = t;
		l.trace_kib[l.n_trace++] = 20 * MIB + (unsigned long)(done * 1024 * MIB);
	}
	return &l;
}

static void test_fill(void **state)
{
	struct qemu_launch *l;

	(void)state;
	/* Polled each ms, a 40 ms fill reads 40 ms to within the polls at either end (x 4/3). */
	l = launch_of(1, 30, 40, 10);
	assert_float_equal(qemu_fill_ms(l, GIB_BYTES), 40, 3);
	/* Polls 4 ms apart: never shorter than the fill, at most two polls (x 4/3) longer. */
	l = launch_of(4, 30, 40, 10);
	assert_true(qemu_fill_ms(l, GIB_BYTES) >= 40);
	assert_true(qemu_fill_ms(l, GIB_BYTES) <= 40 + 8 * 4.0 / 3 + 1e-9);
	/* The first poll reads memgate's forked image (500 MiB): the least seen is QEMU's own. */
	l = launch_of(1, 30, 40, 10);
	l->trace_kib[0] = 500 * MIB;
	assert_float_equal(qemu_fill_ms(l, GIB_BYTES), 40, 3);
	/* Half resident at the greeting: no fill; nor with no trace at all. */
	l = launch_of(1, 30, 80, -40);
	assert_true(qemu_fill_ms(l, GIB_BYTES) < 0);
	memset(l, 0, sizeof(*l));
	assert_true(qemu_fill_ms(l, GIB_BYTES) < 0);
	/* All of it resident from the first poll on: no rise seen, so no fill to time. */
	l = launch_of(1, 0, 0, 10);
	assert_true(qemu_fill_ms(l, GIB_BYTES) < 0);
}

/* Five rounds of one arm: threads @seen, fill @fill ms, CPU @cpu ms, the write @write_ms ms. */
static void rounds(struct qemu_figures *f, double seen, double fill, double cpu, double write_ms)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 5; i++)
		qemu_figures_add(f, seen, fill, cpu, write_ms);
}

static void test_check(void **state)
{
	struct qemu_figures f;
	char why[400] = "";

	(void)state;
	/* Honest: two threads, each at work, as fast as writing the memory. */
	rounds(&f, 2, 30, 58, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), 0);
	/* A QEMU that truly runs one thread of two: its CPU says one too: a figure, not an
	 * ERROR (ab's verdict on qemu.tall.threads). */
	rounds(&f, 1, 60, 60, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), 0);
	/* Faster than writing the memory: 0.3x is no preallocation's. */
	rounds(&f, 2, 9, 18, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "in 0.30x the time writing the same memory took"));
	/* Just under the write (0.9x, as the reference itself is here) stands. */
	rounds(&f, 2, 27, 54, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), 0);
	/* Not resident at the greeting in most rounds: nothing preallocated by then. */
	rounds(&f, 1, -1, 0, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "was not resident when QMP spoke in 5 of 5 rounds"));
	/* One such round of five (a page reclaimed meanwhile) is not most. */
	rounds(&f, 2, 30, 58, 30);
	f.rounds = 4;
	f.n_memset = f.n_work = 4;
	qemu_figures_add(&f, 2, -1, 0, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), 0);
	/* One thread seen while the CPU shows two at work: the poll missed one. */
	rounds(&f, 1, 30, 58, 30);
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "the thread poll missed them"));
	/* No round, nothing to say; no write beside (one PU), only the other checks. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(qemu_figures_check(&f, 2, 1024, why, sizeof(why)), 0);
	rounds(&f, 1, 5, 5, 0);
	assert_int_equal(qemu_figures_check(&f, 1, 1024, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fill),
	    cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests_name("qemu_check", tests, NULL, NULL);
}
