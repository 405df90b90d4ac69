/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab_job.h - inside session/: an A/B under way, shared by ab.c and calibrate.c. */
#ifndef MG_SESSION_AB_JOB_H
#define MG_SESSION_AB_JOB_H

#include "judge/ab.h"
#include "session/ab.h"
#include "session/internal.h"

/* An A/B of two builds under way (ab, calibrate): its session, its sides and their options,
 * and what every side is run with: the options they share and the scratch folder. */
struct ab_job {
	struct session ss;
	struct ab_side base, head;
	struct ab_opts o;
	char context[1024], qemus[520];
	const char *common[4 * MAX_SUITE_ARGS + 8];
	char size[32], shard[32], dir[512];
};

/** ab_job_setup() - @j's sides and rounds from @ab, on @j's host and rules; 0 or a status. */
int ab_job_setup(const struct session_config *cfg, const struct session_ab *ab, struct ab_job *j);

/**
 * ab_job_start() - what ab and calibrate do before their first round: one pool reservation
 * for the whole A/B, the options every side gets, the scratch folder (from which on a stop
 * signal waits for the reports and the clean-up), each side asked the protocol. Returns 0 or
 * an exit status; ab_job_end() undoes what was done.
 */
int ab_job_start(struct session_config *cfg, struct ab_job *j);

/** ab_job_end() - the end of @j, however it went; a stop signal meanwhile makes @ret 128+N. */
int ab_job_end(struct ab_job *j, int ret);

#endif
