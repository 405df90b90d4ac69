/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibrate.c - `memgate calibrate` from start to end: this build against itself, A/A runs of
 * rounds, every metric's noise between processes filed for this host class. */
#include "session/ab.h"
#include "session/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/calibration.h"
#include "session/ab_job.h"
#include "util/proc.h"
#include "util/util.h"

/* Feed one A/A run's rounds to the accumulators: every metric both sides measured. */
static int calib_take(const struct ab_outcome *out, struct calib_acc **acc, size_t *n_acc)
{
	for (size_t i = 0; i < out->verdicts.rows.n; i++) {
		const struct judged *j = &out->verdicts.judged[i];

		if (j->n_v &&
		    calib_add(acc, n_acc, j->case_name, j->metric, j->unit,
			      j->better == HIGHER_IS_BETTER, j->base_v, j->head_v, j->n_v))
			return -ENOMEM;
	}
	return 0;
}

/* The widest metrics, for the console: what this host class's noise is made of. */
static void calib_print(const struct calib_acc *acc, size_t n_acc)
{
	size_t shown = 0;
	bool *done = calloc(n_acc + 1, sizeof(*done));

	printf("%-72s %7s %8s %8s\n", "metric (the widest first)", "rounds", "sd", "width");
	while (done && shown < n_acc && shown < 25) {
		size_t best = n_acc;

		for (size_t i = 0; i < n_acc; i++)
			if (!done[i] && (best == n_acc || calib_noise(&acc[i]).width >
							      calib_noise(&acc[best]).width))
				best = i;
		done[best] = true;
		printf("%-72.72s %7zu %7.2f%% %7.2f%%\n", acc[best].key, acc[best].n,
		       100 * calib_noise(&acc[best]).sd, 100 * calib_noise(&acc[best]).width);
		shown++;
	}
	free(done);
}

/* A new calibration against the ones before it: how many metrics moved far from them. */
struct calib_change {
	unsigned int files;	       /* calibrations before it */
	size_t both, noisier, quieter; /* metrics in both; more than twice, less than half */
};

/*
 * The @n_acc metrics of a new calibration against the upper median of the ones already in the
 * history @dir: a noisy (or unusually quiet) hour shows as many metrics far from it.
 */
static struct calib_change calib_against_last(const struct calib_acc *acc, size_t n_acc,
					      const char *dir, const char *host_hash)
{
	struct calib_change d = {0};
	struct calibration c;
	struct mg_err err = {0};

	if (calib_load(&c, dir, host_hash, &err))
		return d;
	d.files = c.files;
	for (size_t i = 0; i < n_acc; i++) {
		const struct verdict_noise *was = calib_find_key(&c, acc[i].key);
		struct verdict_noise now = calib_noise(&acc[i]);

		if (!was || was->rounds < CALIB_MIN_ROUNDS || now.rounds < CALIB_MIN_ROUNDS)
			continue;
		d.both++;
		d.noisier += now.sd > 2 * was->sd;
		d.quieter += 2 * now.sd < was->sd;
	}
	calib_release(&c);
	return d;
}

/* @ab->runs A/A runs of @j, each metric's rounds fed to *@acc. Returns 0 or an exit status. */
static int aa_runs(struct ab_job *j, const struct session_config *cfg, const struct session_ab *ab,
		   struct calib_acc **acc, size_t *n_acc)
{
	struct ab_opts *o = &j->o;
	struct mg_err err = {0};
	int ret = 0;

	for (unsigned long r = 0; r < ab->runs && !proc_stop && !ret; r++) {
		struct ab_outcome out;
		int64_t t0 = util_now_ns();

		o->seed = cfg->opts.seed + r * 1000;
		ret = ab_run(&j->base, &j->head, o, &out, &err);
		if (ret) {
			fprintf(stderr, "memgate: calibrate: run %lu: %s\n", r + 1,
				ret == -EINTR ? "interrupted" : err.msg);
			ret = ret == -EINTR ? 128 + (out.interrupted ? out.interrupted : SIGINT)
					    : EXIT_HARNESS;
		} else {
			ret = calib_take(&out, acc, n_acc) ? EXIT_HARNESS : 0;
			fprintf(
			    stderr,
			    "memgate: calibrate: A/A run %lu of %lu: %zu metrics, %u rounds, %.0f "
			    "s\n",
			    r + 1, ab->runs, out.verdicts.rows.n, o->rounds,
			    (double)(util_now_ns() - t0) / 1e9);
		}
		ab_outcome_release(&out);
	}
	return ret ? ret : proc_stop ? 128 + proc_stop : 0;
}

/* The noise of the @n_acc metrics filed in @ab->history, and said. Returns an exit status. */
static int file_noise(const struct ab_job *j, const struct session_ab *ab,
		      const struct calib_acc *acc, size_t n_acc)
{
	const struct hw_info *hw = &j->ss.hw;
	struct mg_err err = {0};
	struct calib_change d;
	char who[160];

	if (!n_acc) {
		fprintf(stderr, "memgate: calibrate: no perf case was measured: nothing to file\n");
		return EXIT_FAILED;
	}
	d = calib_against_last(acc, n_acc, ab->history, hw->fingerprint_hash);
	snprintf(who, sizeof(who), "memgate %s (%s)", j->ss.cfg->version, j->ss.cfg->commit);
	if (calib_save(acc, n_acc, ab->history, hw->fingerprint_hash, hw->fingerprint, who,
		       (unsigned int)ab->runs, j->o.rounds, &err)) {
		fprintf(stderr, "memgate: calibrate: %s\n", err.msg);
		return EXIT_HARNESS;
	}
	calib_print(acc, n_acc);
	printf("%s/%s/%s: %zu metrics, %lu A/A runs of %u rounds (host class %s)\n", ab->history,
	       hw->fingerprint_hash, CALIB_FILE, n_acc, ab->runs, j->o.rounds, hw->fingerprint);
	if (d.both)
		printf("against the %u calibration%s before it: %zu of %zu metrics more than twice "
		       "as noisy a round, %zu less than half; verdicts take each metric's upper "
		       "median of the last %d\n",
		       d.files, d.files > 1 ? "s" : "", d.noisier, d.both, d.quieter, CALIB_KEEP);
	return EXIT_PASSED;
}

/* This build, as both sides: quoted, so that a path with blanks stays one word. */
static int this_build(char *spec, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		fprintf(stderr, "memgate: calibrate: which binary is this: %s\n", strerror(errno));
		return EXIT_HARNESS;
	}
	self[n] = '\0';
	snprintf(spec, len, "'%s'", self);
	return 0;
}

int session_calibrate(struct session_config *cfg, const struct session_ab *ab)
{
	struct ab_job j = {0};
	struct session_ab aa = *ab;
	struct calib_acc *acc = NULL;
	size_t n_acc = 0;
	char spec[4200];
	int ret;

	if ((ret = session_open(&j.ss, cfg)))
		return ret;
	/* The history is checked before the runs, not after the half hour they take. */
	if ((ret = session_history_dir(ab->history))) {
		fprintf(stderr, "memgate: calibrate: --history %s: %s\n", ab->history,
			util_make_dir_error(ret));
		ret = ret == -ENOTDIR ? EXIT_USAGE : EXIT_HARNESS;
		goto out;
	}
	if ((ret = this_build(spec, sizeof(spec))))
		goto out;
	aa.base = aa.head = spec;
	if ((ret = ab_job_setup(cfg, &aa, &j)))
		goto out;
	/* Rounds of one look: no second look is taken, every round is noise to measure. */
	j.o.rounds = ab->rounds_set ? (unsigned int)ab->rounds : CALIB_DEFAULT_ROUNDS;
	j.o.confirm_rounds = 0;
	if (!(ret = ab_job_start(cfg, &j)) && !(ret = aa_runs(&j, cfg, ab, &acc, &n_acc)))
		ret = file_noise(&j, ab, acc, n_acc);
out:
	calib_acc_release(acc, n_acc);
	return ab_job_end(&j, ret);
}
