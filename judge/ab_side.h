/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab_side.h - inside ab: a side, a memgate binary and its options, run as a child of its own:
 * its protocol checked, its cases listed, a round of one case run (ab_side.c). Prefix ab_side_;
 * ab_side_parse() and ab_check_protocol() are in ab.h for the command line. */
#ifndef MG_JUDGE_AB_SIDE_H
#define MG_JUDGE_AB_SIDE_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#include "judge/ab.h"
#include "util/err.h"

/* One side's cases, from `list --json`. */
struct ab_side_list {
	json_t *root;
	size_t n;
};

/**
 * ab_side_list() - @s's cases for ab's selection (@o->common), from its `list --json`.
 * Returns 0 (release @l->root), -EINVAL when the side refused its options (exit 2), -ECHILD
 * when it failed, -EPROTO when it printed no JSON array; each with @err.
 */
int ab_side_list(struct ab_side *s, const struct ab_opts *o, struct ab_side_list *l,
		 struct mg_err *err);

/** ab_side_listed() - the case of @l whose A/B key is @key, or NULL. */
json_t *ab_side_listed(const struct ab_side_list *l, const char *key);

/** ab_side_count() - how many cases of @l are of @kind ("check", "perf"). */
size_t ab_side_count(const struct ab_side_list *l, const char *kind);

/**
 * ab_side_run() - `memgate run` of side @s with @extra, its output into @log, and how it
 * ended: a side that hangs, dies or exits past @max_exit is its failure @doing (-ECANCELED,
 * saying so with @log's last line), not the harness's. Returns 0 with the exit status in
 * @code, or -errno.
 */
int ab_side_run(const struct ab_side *s, const struct ab_opts *o, const char *const *extra,
		int n_extra, const char *log, double timeout_s, int max_exit, const char *doing,
		int *code, struct mg_err *err);

/**
 * ab_side_guest_run() - a guest side's whole run: `MEMGATE vm VM_OPTIONS --json @json --
 * run [its own run options] @common @extra`, its output into @log, watched until
 * @timeout_s. Returns 0 with the exit status in @code (the guest's command's, or vm's own
 * 3 when the guest failed), or -ECANCELED (a hang or a crash, said in @err) or -errno.
 */
int ab_side_guest_run(const struct ab_side *s, const struct ab_opts *o, const char *const *extra,
		      int n_extra, const char *json, const char *log, double timeout_s, int *code,
		      struct mg_err *err);

/**
 * ab_side_guest_deadline() - how long ab lets guest side @s's whole run take: vm's own limit
 * (the side's --timeout, else ab's --timeout when given, else @dflt) and a margin for vm to
 * stop the guest and report that itself.
 */
double ab_side_guest_deadline(const struct ab_side *s, const struct ab_opts *o, double dflt);

/** ab_side_last_line() - the last line of @path that has text, for messages; "" when none. */
void ab_side_last_line(const char *path, char *buf, size_t len);

/** ab_side_string() - a JSON string's value, "" when it is none. */
const char *ab_side_string(const json_t *j);

#endif
