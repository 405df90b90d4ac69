/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bisect.h - `memgate bisect`: a range of commits searched for the first on which a
 * regression appears (judge/bisect.h), each commit built and turned into a side by a command
 * of the caller's (ci/tree-side.sh), measured as ab measures a side, its figures kept in a
 * state folder so that an interrupted bisect goes on where it stopped; the culprit verified by
 * an ab of it against its parent.
 */
#ifndef MG_SESSION_BISECT_H
#define MG_SESSION_BISECT_H

#include <stdbool.h>
#include <stddef.h>

#include "session/session.h"

/* What a bisect is asked, beyond the session_config its sides' runs share. */
struct session_bisect {
	const char *side_of; /* --side-of CMD: CMD COMMIT builds COMMIT and prints its side */
	const char *commits; /* --commits FILE: HASH<TAB>SUBJECT<TAB>AUTHOR, GOOD first, BAD last */
	const char *state;   /* --state DIR: the figures of every commit measured (resume) */
	const char
	    *from_ab; /* --from-ab FILE: the metrics an ab of GOOD and BAD judged REGRESSION */
	const char *metrics[MAX_SUITE_ARGS]; /* --metric SUITE.CASE:METRIC */
	size_t n_metrics;
	unsigned long max_rounds; /* --max-rounds: a step's most rounds, then unknown */
	const char *report;	  /* --report FILE: the plain-text report */
	bool no_verify;		  /* --no-verify: no ab of the culprit against its parent */
};

/** session_bisect() - `memgate bisect`: the search, its reports; its exit status. */
int session_bisect(struct session_config *cfg, const struct session_bisect *b);

#endif
