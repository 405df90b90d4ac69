/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * impl_opts.h - which implementation is under test: `--impl KEY=VALUE`, defaults the landed
 * code. The keys belong to the suites (suite_def.impl_keys), their values to the impl modules;
 * this table of choices names neither.
 */
#ifndef MG_RUN_IMPL_OPTS_H
#define MG_RUN_IMPL_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

/* One --impl key: a choice its suite offers, its values as the owning impl module names them. */
struct impl_key {
	const char *key;	  /* "memslots.update": the suite, a dot, what is chosen */
	const char *const *names; /* the values */
	unsigned int n_names;
	unsigned int def; /* index of the default: what landed upstream */
	const char *doc;
	unsigned int max_number; /* > 0: a whole number from 1 to this is also accepted */
};

/* Most --impl choices one run takes: a key more than every suite's keys together. */
#define IMPL_MAX_KEYS 16

/* The choices made: each key given, with its value. */
struct impl_opts {
	const struct impl_key *key[IMPL_MAX_KEYS];
	const char *value[IMPL_MAX_KEYS];
	size_t n;
};

/**
 * impl_opts_set() - apply one "KEY=VALUE" from the command line, KEY one of the @n @keys (given
 * again, the last value wins). Returns 0, or -EINVAL with @err naming the unknown key or
 * listing the values the key takes.
 */
int impl_opts_set(struct impl_opts *o, const struct impl_key *const *keys, size_t n,
		  const char *assignment, struct mg_err *err);

/** impl_get() - the value chosen in @o (NULL: none chosen) for @key, one of the keys @o was
 * checked against (a suite's own), or its default. */
const char *impl_get(const struct impl_opts *o, const struct impl_key *key);

/** impl_opts_describe() - two lines a key of the @n @keys: values, what it picks, default. */
void impl_opts_describe(const struct impl_key *const *keys, size_t n, FILE *out);

#endif
