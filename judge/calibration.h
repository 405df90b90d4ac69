/* calibration.h - each host class's own noise, per metric, from A/A rounds: memgate calibrate. */
#ifndef MG_JUDGE_CALIBRATION_H
#define MG_JUDGE_CALIBRATION_H

#include <stddef.h>

#include "judge/verdict.h"
#include "util/err.h"

/* Where a history keeps its host class's calibration: DIR/HOST_HASH/CALIB_FILE. */
#define CALIB_FILE "calibration.json"
#define CALIB_FORMAT 1

/* A metric's noise is used once this many A/A rounds measured it; fewer say little of a tail. */
#define CALIB_MIN_ROUNDS 40

struct calib_entry {
	char key[320]; /* "CASE_KEY:METRIC": the case's full name without impl=, the metric */
	char unit[16];
	struct verdict_noise noise;
};

struct calibration {
	char path[1100];
	char made[32];	  /* when it was measured, UTC */
	char memgate[96]; /* the build that measured it: version (commit) */
	char host_hash[17];
	unsigned int runs, rounds; /* A/A runs, and rounds in each */
	struct calib_entry *e;
	size_t n;
};

/*
 * Rounds of one metric gathered over A/A runs: calib_add() per run, calib_finish() then turns
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
 * calib_load() - the calibration of host class @host_hash in history @dir into @c. Returns 0,
 * -ENOENT when there is none (@c empty; not an error), or -errno with @err ("FILE: what was
 * expected") when it cannot be read.
 */
int calib_load(struct calibration *c, const char *dir, const char *host_hash, struct mg_err *err);

/** calib_parse() - the same from @text, named @name in messages (tests, the fuzz target). */
int calib_parse(struct calibration *c, const char *text, const char *name, struct mg_err *err);

/**
 * calib_find() - the noise of metric @metric of the case named @full_name (its impl= left
 * out), or NULL when it was not calibrated on at least CALIB_MIN_ROUNDS rounds.
 */
const struct verdict_noise *calib_find(const struct calibration *c, const char *full_name,
				       const char *metric);

/**
 * calib_add() - one A/A run's @n rounds of a metric (@base[i], @head[i], direction-aware by
 * @better) to the accumulator of its key in @acc (grown; *@n_acc counts). Returns 0 or -ENOMEM.
 */
int calib_add(struct calib_acc **acc, size_t *n_acc, const char *full_name, const char *metric,
	      const char *unit, int higher_is_better, const double *base, const double *head,
	      size_t n);

/**
 * calib_save() - the @n_acc accumulated metrics as DIR/@host_hash/CALIB_FILE, replacing the one
 * there; @memgate names the build, @runs and @rounds the campaign. Returns 0 or -errno with @err.
 */
int calib_save(const struct calib_acc *acc, size_t n_acc, const char *dir, const char *host_hash,
	       const char *host_class, const char *memgate, unsigned int runs, unsigned int rounds,
	       struct mg_err *err);

/** calib_noise() - the noise @acc measured: the rounds' sd, the sd of the runs' means. */
struct verdict_noise calib_noise(const struct calib_acc *acc);

void calib_acc_release(struct calib_acc *acc, size_t n_acc);
void calib_release(struct calibration *c);

#endif
