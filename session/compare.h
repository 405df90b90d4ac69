/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare.h - `memgate compare` and `memgate baseline add`, start to end: a results file judged
 * against earlier ones of its host class, and a results file filed in a history.
 */
#ifndef MG_SESSION_COMPARE_H
#define MG_SESSION_COMPARE_H

#include <stdbool.h>

#include "session/session.h"

/**
 * session_compare() - the last of the @n @files (results, `run --json`) judged against the
 * others pooled; @any_host: base runs of another host class too. Returns its exit status.
 */
int session_compare(struct session_config *cfg, const char *const *files, int n, bool any_host);

/** session_baseline_add() - @results filed under @dir/HOST_HASH/; its exit status. */
int session_baseline_add(const char *results, const char *dir);

#endif
