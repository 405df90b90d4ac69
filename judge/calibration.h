/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibration.h - each host class's own noise, per metric, from A/A rounds: memgate calibrate. */
#ifndef MG_JUDGE_CALIBRATION_H
#define MG_JUDGE_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>

#include "judge/verdict.h"
#include "util/err.h"

/*
 * Where a history keeps its host class's calibration: DIR/HOST_HASH/CALIB_FILE, the newest, and
 * the CALIB_KEEP - 1 before it as calibration.1.json (the last) and calibration.2.json. A
 * verdict uses each metric's upper median of them: one calibration made in a noisy hour (or an
 * unusually quiet one) does not set the tolerances alone.
 */
#define CALIB_FILE "calibration.json"
#define CALIB_KEEP 3
#define CALIB_FORMAT 1

/* A metric's noise is used once this many A/A rounds measured it; fewer say little of a tail. */
#define CALIB_MIN_ROUNDS 40

struct calib_entry {
	char key[320]; /* "CASE_KEY:METRIC": the case's full name without impl=, the metric */
	char unit[16];
	struct verdict_noise noise;
};

struct calibration {
	char path[1100];    /* the newest file */
	char made[32];	    /* when the newest was measured, UTC */
	char when[128];	    /* made, or "OLDEST to NEWEST, the upper median of N" */
	unsigned int files; /* the calibrations combined: 1 to CALIB_KEEP */
	char memgate[96];   /* the build that measured the newest: version (commit) */
	char host_hash[17];
	unsigned int runs, rounds; /* A/A runs, and rounds in each */
	struct calib_entry *e;
	size_t n;
};

/*
 * Rounds of one metric gathered over A/A runs: calib_add() per run, calib_noise() then turns
 * them into the entry's noise.
 */
struct calib_acc {
	char key[320], unit[16];
	double *d; /* every round's log ratio, run after run */
	size_t n, cap;
	double *run_mean; /* each run's mean */
	size_t runs, cap_runs;
};

/**
 * calib_load() - the calibrations of host class @host_hash in history @dir, combined into @c
 * (calib_combine()). Returns 0, -ENOENT when there is none (@c empty; not an error), or -errno
 * with @err ("FILE: what was expected") when one cannot be read.
 */
int calib_load(struct calibration *c, const char *dir, const char *host_hash, struct mg_err *err);

/** calib_parse() - one calibration file's @text, named @name in messages (the fuzz target). */
int calib_parse(struct calibration *c, const char *text, const char *name, struct mg_err *err);

/**
 * calib_combine() - @n calibrations of one host class, the newest first (the first CALIB_KEEP
 * of them), as one in @c: a metric's sd and width are the upper median (of two, the larger) of
 * those that calibrated it on at least CALIB_MIN_ROUNDS rounds, and its rounds are theirs
 * together; the rest is the newest's. Returns 0, or -ENOMEM with @err.
 */
int calib_combine(struct calibration *c, const struct calibration *const *each, size_t n,
		  struct mg_err *err);

/** calib_is_file() - whether the history's file @name is a calibration, and so no run. */
bool calib_is_file(const char *name);

/**
 * calib_find() - the noise of metric @metric of the case named @full_name (its impl= left
 * out), or NULL when it was not calibrated on at least CALIB_MIN_ROUNDS rounds.
 */
const struct verdict_noise *calib_find(const struct calibration *c, const char *full_name,
				       const char *metric);

/** calib_find_key() - a metric's noise by its key, "CASE_KEY:METRIC", whatever its rounds. */
const struct verdict_noise *calib_find_key(const struct calibration *c, const char *key);

/**
 * calib_add() - one A/A run's @n rounds of a metric (@base[i], @head[i], direction-aware by
 * @better) to the accumulator of its key in @acc (grown; *@n_acc counts). Returns 0 or -ENOMEM.
 */
int calib_add(struct calib_acc **acc, size_t *n_acc, const char *full_name, const char *metric,
	      const char *unit, int higher_is_better, const double *base, const double *head,
	      size_t n);

/**
 * calib_save() - the @n_acc accumulated metrics as DIR/@host_hash/CALIB_FILE; the one there
 * becomes calibration.1.json, that one .2, up to CALIB_KEEP files (the oldest goes); @memgate
 * names the build, @runs and @rounds the campaign. Returns 0 or -errno with @err.
 */
int calib_save(const struct calib_acc *acc, size_t n_acc, const char *dir, const char *host_hash,
	       const char *host_class, const char *memgate, unsigned int runs, unsigned int rounds,
	       struct mg_err *err);

/** calib_noise() - the noise @acc measured: the rounds' sd, the sd of the runs' means. */
struct verdict_noise calib_noise(const struct calib_acc *acc);

/** calib_acc_release() - free the @n_acc accumulators at @acc (NULL: nothing). */
void calib_acc_release(struct calib_acc *acc, size_t n_acc);
/** calib_release() - free what calib_load() or calib_parse() filled in @c. */
void calib_release(struct calibration *c);

#endif
