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
};

/** child_finish() - tell the parent the case's run() returned normally. */
void child_finish(struct case_ctx *ctx);

#endif
