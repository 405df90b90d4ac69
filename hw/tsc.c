/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsc.c - TSC frequency calibration against CLOCK_MONOTONIC_RAW. */
#include "hw/tsc.h"

#include <stdlib.h>
#include <time.h>

#include "util/util.h"

/* A clock read costs ~100 cycles; 20,000 (about 10 us) means the pair was interrupted. */
#define PAIR_MAX_CYCLES 20000
#define PAIR_TRIES 100

static int64_t raw_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * One clock reading bracketed by two TSC reads; the TSC value paired with it is the midpoint,
 * which halves the error from the clock_gettime call itself (~60 cycles here).
 */
static int paired_read(int64_t *ns, uint64_t *tsc)
{
	for (int tries = 0; tries < PAIR_TRIES; tries++) {
		uint64_t a = tsc_begin(), b;

		*ns = raw_ns();
		b = tsc_end();
		*tsc = a + (b - a) / 2;
		if (*ns < 0)
			return -1;
		/* A preemption between the reads would skew the pair by up to a time slice. */
		if (b - a < PAIR_MAX_CYCLES)
			return 0;
	}
	return 0;
}

double tsc_calibrate_hz(unsigned int window_ms)
{
	int64_t ns0, ns1;
	uint64_t t0, t1;

	if (paired_read(&ns0, &t0))
		return 0;
	/*
	 * Spin rather than sleep: a preemption in the window delays both counters equally, so
	 * it costs accuracy nothing, while a sleep adds wake-up latency at neither end.
	 */
	do {
		if (paired_read(&ns1, &t1))
			return 0;
	} while (ns1 - ns0 < (int64_t)window_ms * 1000000);
	return (double)(t1 - t0) * 1e9 / (double)(ns1 - ns0);
}

double tsc_calibrate_median_hz(unsigned int runs, unsigned int window_ms, double *spread)
{
	double hz[32], med;

	if (runs == 0 || runs > 32)
		return 0;
	for (unsigned int i = 0; i < runs; i++) {
		hz[i] = tsc_calibrate_hz(window_ms);
		if (hz[i] <= 0)
			return 0;
	}
	qsort(hz, runs, sizeof(hz[0]), util_cmp_double);
	med = runs % 2 ? hz[runs / 2] : (hz[runs / 2 - 1] + hz[runs / 2]) / 2;
	if (spread)
		*spread = (hz[runs - 1] - hz[0]) / med;
	return med;
}
