/* SPDX-License-Identifier: GPL-2.0-or-later */
/* child.h - internal to the runner: the state a case's child process reports through. */
#ifndef MG_RUN_CHILD_H
#define MG_RUN_CHILD_H

#include "run/case.h"

struct case_ctx {
	const struct case_inst *inst;
	const struct hw_info *hw;
	const struct run_opts *opts;
	int fd;		     /* write end of the result pipe: one JSON object per line */
	int64_t deadline_ns; /* CLOCK_MONOTONIC when the runner kills the case (--timeout) */
	/* The samples so far, kept in the child where the run may stop sampling early
	 * (run_opts.settled): NULL until the first sample, or when it may not. */
	struct case_result *partial;
};

/**
 * case_settled() - may the case stop sampling now: run_opts.settled says so of the samples
 * taken so far, each of its metrics with samples having at least CASE_MIN_SAMPLES of them.
 * False where the run samples a fixed number (no settled callback, or -n given).
 */
bool case_settled(struct case_ctx *ctx);

/** child_finish() - tell the parent the case's run() returned normally. */
void child_finish(struct case_ctx *ctx);

#endif
