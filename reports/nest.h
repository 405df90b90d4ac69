/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nest.h - a guest's reports inside the host's: what `memgate vm` brings back, its suites
 * renamed PREFIX.SUITE (for example guest[sockets=2,nodes=2].prealloc) and the guest's shape
 * and accelerator added as properties, so that a guest's run and the host's sit side by side
 * in Jenkins and in history without sharing a name. */
#ifndef MG_REPORTS_NEST_H
#define MG_REPORTS_NEST_H

#include <stddef.h>

#include "util/err.h"

struct nest_prop {
	const char *name, *value;
};

/**
 * report_nest_json() - the results file @in (memgate's --json) as @out: each case's suite
 * PREFIX.SUITE, and a top-level object "vm" of @props. Returns 0, -EINVAL with @err naming
 * the file and what was wrong in it, or another -errno.
 */
int report_nest_json(const char *in, const char *out, const char *prefix,
		     const struct nest_prop *props, size_t n_props, struct mg_err *err);

/**
 * report_nest_junit() - the JUnit file @in as @out: each <testsuite> named PREFIX.NAME, each
 * <testcase>'s classname memgate.PREFIX.REST, and @props in each suite's <properties>.
 * The same returns.
 */
int report_nest_junit(const char *in, const char *out, const char *prefix,
		      const struct nest_prop *props, size_t n_props, struct mg_err *err);

#endif
