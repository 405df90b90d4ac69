/* SPDX-License-Identifier: GPL-2.0-or-later */
/* runner.h - expand suites over the host, run each case in a forked child, collect results. */
#ifndef MG_RUN_RUNNER_H
#define MG_RUN_RUNNER_H

#include <stddef.h>

#include "run/case.h"
#include "run/result.h"
#include "util/err.h"

/* Which cases to run: suite names (all when n_suites is 0), a glob on "suite.group.name[..]",
 * exact names (any when n_names is 0), kinds (bits 1 << enum case_kind; 0: all), and a
 * shard (--shard I/N: keep shard @shard, 0-based, of @shards; 0 shards: all). */
struct runner_filter {
	const char *const *suites;
	size_t n_suites;
	const char *glob;
	const char *const *names;
	size_t n_names;
	unsigned int kinds;
	unsigned int shard, shards;
};

/**
 * runner_expand() - the instances of the @n_suites suites that pass @filter, with their
 * parameter matrices built from @hw and @opts (quick mode, --impl). Returns 0 and a new array in
 * @out (free it) or -errno; -ENOENT with @err naming an unknown suite.
 */
int runner_expand(const struct suite_def *const *suites, size_t n_suites, const struct hw_info *hw,
		  const struct run_opts *opts, const struct runner_filter *filter,
		  struct case_inst **out, size_t *n_out, struct mg_err *err);

/**
 * runner_run() - run the @n instances one after another, each in a forked child with
 * @opts->timeout_s, filling @results[0..n). A crash, a timeout or a child that ends without
 * a result is an ERROR result, and the run goes on. Stops early only on SIGINT or SIGTERM:
 * the remaining results are then ERROR "not run: interrupted", and the signal number is
 * returned so the caller can report what was measured and exit 128 + it.
 * Returns 0, a signal number, or -errno when the harness itself failed (@err says why).
 */
int runner_run(const struct case_inst *insts, size_t n, const struct hw_info *hw,
	       const struct run_opts *opts, struct case_result *results, struct mg_err *err);

/**
 * runner_merge() - add the samples of @more, a later run of the same instance, to @into and
 * summarise again; a worse outcome of @more wins. Returns 0 or -ENOMEM.
 */
int runner_merge(struct case_result *into, const struct case_result *more,
		 const struct run_opts *opts);

/* For tests: the child side writes JSON lines on @fd; parse one into @r. Returns 0 or -EINVAL. */
int runner_apply_event(struct case_result *r, const char *line);

/**
 * runner_case_exec() - run @inst here, in this process, its events on @res_fd: what a counted
 * case's child does once it has become `memgate case-exec` under callgrind. Returns 0.
 */
int runner_case_exec(const struct case_inst *inst, const struct hw_info *hw,
		     const struct run_opts *opts, int res_fd, int64_t deadline_ns);

#endif
