/* SPDX-License-Identifier: GPL-2.0-or-later */
/* impl_opts.h - which implementation is under test: `--impl KEY=VALUE`, defaults the landed code.
 */
#ifndef MG_RUN_IMPL_OPTS_H
#define MG_RUN_IMPL_OPTS_H

#include <stdio.h>

#include "util/err.h"

#define IMPL_MAX_KEYS 16

struct impl_opts {
	const char *value[IMPL_MAX_KEYS]; /* by key index; NULL: the default */
};

/**
 * impl_opts_set() - apply one "KEY=VALUE" from the command line. Returns 0, or -EINVAL with
 * @err naming the unknown key or listing the values the key takes.
 */
int impl_opts_set(struct impl_opts *o, const char *assignment, struct mg_err *err);

/** impl_get() - the value chosen for @key, or its default. @key must be a known key. */
const char *impl_get(const struct impl_opts *o, const char *key);

/**
 * impl_opts_key() - the name of key @i (the index of impl_opts.value[]), NULL past the last:
 * to hand the choices to another memgate process as --impl KEY=VALUE.
 */
const char *impl_opts_key(unsigned int i);

/** impl_opts_describe() - one line per key: name, values, default, for --help and list. */
void impl_opts_describe(FILE *out);

#endif
