/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_measure.c - the RSS, CPU-time, steal and cycle readers see real changes. */
#include "tests/testutil.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/counter.h"
#include "hw/measure.h"

#define MIB (1024 * 1024)

static void test_rss_follows_touched_memory(void **state)
{
	struct measure_rss before, after;
	size_t len = 64 * MIB;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	assert_int_equal(measure_rss(&before), 0);
	memset(p, 1, len);
	assert_int_equal(measure_rss(&after), 0);
	/* 64 MiB written: Rss and Anonymous grow by all of it (THP or not). */
	assert_true(after.rss_kib - before.rss_kib >= 60 * 1024);
	assert_true(after.anon_kib - before.anon_kib >= 60 * 1024);
	assert_true(after.peak_rss_kib >= after.rss_kib - 1024);
	munmap(p, len);
}

static void test_heap_and_mallinfo(void **state)
{
	struct measure_rss before, after;
	enum { N = 100000 };
	static void *chunks[N];

	(void)state;
	if (test_under_asan())
		skip_because(
		    "under AddressSanitizer: malloc is not glibc's, mallinfo2 says nothing");
	assert_int_equal(measure_rss(&before), 0);
	/* 100,000 chunks of 128 B come from the brk heap of the main arena: ~13 MB. */
	for (int i = 0; i < N; i++) {
		chunks[i] = malloc(128);
		memset(chunks[i], 2, 128);
	}
	assert_int_equal(measure_rss(&after), 0);
	assert_true(after.malloc_in_use - before.malloc_in_use >= (uint64_t)N * 128);
	assert_true(after.heap_rss_kib - before.heap_rss_kib >= (uint64_t)N * 128 / 1024 * 9 / 10);
	for (int i = 0; i < N; i++)
		free(chunks[i]);
}

static void test_span(void **state)
{
	struct measure_span s;
	volatile uint64_t x = 0;
	uint64_t steal0 = measure_steal_ticks();

	(void)state;
	measure_span_begin(&s);
	for (int i = 0; i < 20000000; i++)
		x += (uint64_t)i;
	measure_span_end(&s);
	assert_true(s.wall_ns > 0 && s.thread_cpu_ns > 0);
	/* A thread cannot use more CPU than wall time; 1 ms of slack for clock granularity. */
	assert_true(s.thread_cpu_ns <= s.wall_ns + 1000000);
	assert_true(s.process_cpu_ns >= s.thread_cpu_ns - 1000000);
	assert_true(measure_steal_ticks() >= steal0);
}

static void test_cycles(void **state)
{
	struct measure_cycles c;
	uint64_t a, b;

	(void)state;
	measure_cycles_open(&c, false);
	assert_string_equal(measure_cycles_name(&c), "tsc");
	a = measure_cycles_read(&c);
	b = measure_cycles_read(&c);
	assert_true(b > a);
	measure_cycles_close(&c);
	/* With perf asked for, either counter is fine; the name must say which one. */
	measure_cycles_open(&c, true);
	printf("# cycle counter here: %s\n", measure_cycles_name(&c));
	assert_true(!strcmp(measure_cycles_name(&c), "tsc") ||
		    !strcmp(measure_cycles_name(&c), "perf:cpu-cycles"));
	measure_cycles_close(&c);
}

/* The counters' plumbing: names, what each resolves to here, a callgrind dump read back. */
static void test_counters(void **state)
{
	/* The head of a dump of callgrind 3.19 (trailing zeros left out, as it writes them). */
	static const char dump[] = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n"
				   "pid: 6399\ncmd:  ./t\npart: 1\n\n"
				   "desc: D1 cache: 32768 B, 64 B, 8-way associative\n\n"
				   "positions: line\n"
				   "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
				   "summary: 6015 10 8 2 3 4 2 1\n\n"
				   "fn=(536) main\n0 6005 0 1 1 0 0 1\n";
	struct counter_reading r;
	struct counter c;
	struct mg_err err = {0};
	enum counter_kind k, k_auto;
	char why[256];

	(void)state;
	assert_int_equal(counter_parse("simulated", &k), 0);
	assert_int_equal(k, COUNTER_SIMULATED);
	assert_int_equal(counter_parse("cycles", &k), -EINVAL);
	assert_string_equal(counter_unit(COUNTER_TSC), "cycles");
	assert_string_equal(counter_unit(COUNTER_SIMULATED), "instructions");
	assert_int_equal(counter_parse_dump(dump, &r), 0);
	assert_true(r.value == 6015 && r.d1_misses == 7 && r.ll_misses == 1);
	assert_int_equal(counter_parse_dump("summary: 1 2\n", &r), -EINVAL);
	assert_int_equal(counter_parse_dump("events: Ir\n", &r), -EINVAL);
	/* auto is whatever this host counts with; instructions is the PMU's or a reason. */
	assert_int_equal(counter_resolve(COUNTER_AUTO, &k_auto, &err), 0);
	assert_int_not_equal(k_auto, COUNTER_AUTO);
	if (counter_pmu_works(why, sizeof(why))) {
		assert_int_equal(counter_resolve(COUNTER_INSTRUCTIONS, &k, &err), 0);
		assert_int_equal(k, COUNTER_INSTRUCTIONS);
	} else {
		assert_int_equal(counter_resolve(COUNTER_INSTRUCTIONS, &k, &err), -ENOTSUP);
		assert_non_null(strstr(err.msg, "perf_event_open"));
		assert_int_equal(k_auto == COUNTER_SIMULATED || k_auto == COUNTER_TSC, 1);
	}
	printf("# counters here: auto is %s; the PMU: %s\n", counter_name(k_auto),
	       counter_pmu_works(why, sizeof(why)) ? "counts" : why);
	/* The TSC counts, and a simulated counter refuses outside callgrind. */
	assert_int_equal(counter_open(&c, COUNTER_TSC, NULL, &err), 0);
	counter_start(&c);
	assert_int_equal(counter_stop(&c, &r), 0);
	counter_close(&c);
	if (!counter_under_valgrind()) {
		assert_int_equal(counter_open(&c, COUNTER_SIMULATED, "/nonexistent/cg", &err),
				 -ENOTSUP);
		assert_non_null(strstr(err.msg, "callgrind"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rss_follows_touched_memory),
	    cmocka_unit_test(test_heap_and_mallinfo),
	    cmocka_unit_test(test_span),
	    cmocka_unit_test(test_cycles),
	    cmocka_unit_test(test_counters),
	};

	return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}
