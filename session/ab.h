/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ab.h - `memgate ab` and `memgate calibrate`, start to end: two memgate builds (or one build
 * against itself) run case by case, round by round, head judged against base (judge/ab.h);
 * calibrate files the A/A noise of this host class in a history.
 */
#ifndef MG_SESSION_AB_H
#define MG_SESSION_AB_H

#include <stdbool.h>

#include "session/session.h"

/* calibrate: 4 A/A runs of 10 rounds, the 40 rounds a metric's noise needs. */
#define CALIB_DEFAULT_RUNS 4
#define CALIB_DEFAULT_ROUNDS 10

/* What an A/B is asked, beyond the session_config both sides' runs share. */
struct session_ab {
	const char *base,
	    *head; /* --base, --head: 'BINARY [OPTIONS]', both given (calibrate: this one) */
	const char *history; /* ab: --calibration DIR; calibrate: --history DIR */
	unsigned long rounds, confirm_rounds;
	bool rounds_set;
	unsigned long runs; /* calibrate: A/A runs */
};

/** session_ab() - `memgate ab`: head against base on @cfg's selection; its exit status. */
int session_ab(struct session_config *cfg, const struct session_ab *ab);

/** session_calibrate() - `memgate calibrate`: @ab->runs A/A runs filed in @ab->history. */
int session_calibrate(struct session_config *cfg, const struct session_ab *ab);

/** session_ab_protocol() - the line `memgate ab-protocol` says: what ab asks a side first. */
const char *session_ab_protocol(void);

#endif
