/* child.h - internal to the runner: the state a case's child process reports through. */
#ifndef MG_SUITES_CHILD_H
#define MG_SUITES_CHILD_H

#include "suites/case.h"

struct case_ctx {
	const struct case_inst *inst;
	const struct hw_info *hw;
	const struct run_opts *opts;
	int fd;		/* write end of the result pipe: one JSON object per line */
};

/** child_finish() - tell the parent the case's run() returned normally. */
void child_finish(struct case_ctx *ctx);

#endif
