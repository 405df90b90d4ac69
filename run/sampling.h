/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sampling.h - how perf cases take samples: arms interleaved round by round, and a fresh
 * process per sample where a sample must start from a fresh heap. Called in a case's child. */
#ifndef MG_RUN_SAMPLING_H
#define MG_RUN_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>

#include "run/case.h"
#include "util/err.h"

/*
 * The arms of a perf case (the implementation under test and its references, the trim
 * policies, two capacities) are measured in the same process, in turn, sample by sample:
 * the vCPUs' speed drifts by tens of percent between runs here, and only interleaving lets a
 * paired ratio cancel it.
 */
struct case_arms {
	unsigned int n;		      /* arms, at least 1 */
	unsigned int warmup, samples; /* rounds: discarded ones first, then measured ones */
	/* Before each round (may be NULL): fresh inputs that every arm of the round shares. */
	int (*round_begin)(void *arg, unsigned int round);
	/* One sample of @arm; @measured is false in the warm-up rounds. */
	int (*sample)(void *arg, unsigned int arm, unsigned int round, bool measured);
	/* After each round (may be NULL): figures made of the round's arms, a speedup say. */
	int (*round_end)(void *arg, unsigned int round, bool measured);
	void *arg;
	/* The case (may be NULL): with it, the rounds stop early once case_settled() says the
	 * samples so far settle every verdict they feed (run_opts.settled). */
	struct case_ctx *ctx;
};

/**
 * case_interleave() - @arms->warmup + @arms->samples rounds; each runs every arm once,
 * starting one arm later than the round before, so that no arm always runs first (right
 * after fresh inputs, or right after the previous round's unmap). Stops at the first
 * callback that returns non-zero and returns that value: the callback has already said
 * what went wrong (case_error, case_fail). With @arms->ctx it stops after a measured round
 * where case_settled() is true, saying so in the case's log. Returns 0 when the rounds ran.
 */
int case_interleave(const struct case_arms *arms);

/*
 * case_fork() - run @fn(@arg, @out, @err) in a fresh process, as a fresh QEMU would start:
 * its own heap and RSS. @fn fills @size bytes of @out, which come back to the caller. The
 * process's stdout and stderr are the case's (the report keeps their tail); it is killed a
 * little before the case's --timeout, so the case can say which sample did not finish.
 * Returns 0, or -errno with @err saying why: @fn's own error (its message), a crash (the
 * signal), no result, or -ETIMEDOUT.
 */
int case_fork(struct case_ctx *ctx, int (*fn)(void *arg, void *out, struct mg_err *err), void *arg,
	      void *out, size_t size, struct mg_err *err);

#endif
