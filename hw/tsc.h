/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsc.h - the time-stamp counter, fenced, and its frequency calibrated against the clock. */
#ifndef MG_HW_TSC_H
#define MG_HW_TSC_H

#include <stdint.h>
#include <x86intrin.h>

/*
 * tsc_begin() - read the TSC at the start of a timed region. The lfence before rdtsc keeps
 * earlier instructions from drifting into the region; the one after keeps the region's
 * first instructions from starting before the read (Intel SDM, RDTSC).
 */
static inline uint64_t tsc_begin(void)
{
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
}

/*
 * tsc_end() - read the TSC at the end of a timed region. rdtscp waits for every earlier
 * instruction to finish; the lfence after it keeps later ones from starting before the read.
 */
static inline uint64_t tsc_end(void)
{
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
}

/**
 * tsc_calibrate_hz() - measure the TSC frequency against CLOCK_MONOTONIC_RAW over a busy
 * window of @window_ms milliseconds. Returns Hz, or 0 when the clock cannot be read.
 */
double tsc_calibrate_hz(unsigned int window_ms);

/**
 * tsc_calibrate_median_hz() - @runs calibrations of @window_ms each; returns their median and,
 * when @spread is not NULL, (max - min) / median. Returns 0 on failure.
 */
double tsc_calibrate_median_hz(unsigned int runs, unsigned int window_ms, double *spread);

#endif
