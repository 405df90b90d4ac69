/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suites.h - the suites memgate knows, in the order it runs them. */
#ifndef MG_SUITES_SUITES_H
#define MG_SUITES_SUITES_H

#include <stddef.h>

#include "judge/rules.h"
#include "run/case.h"
#include "util/err.h"

/* Each suite exports its definition and nothing else. */
extern const struct suite_def suite_hw;
extern const struct suite_def suite_kvm;
extern const struct suite_def suite_memslots;
extern const struct suite_def suite_prealloc;
extern const struct suite_def suite_qemu;
extern const struct suite_def suite_rcu;

/** suites_all() - every suite, in run order; @n gets the count. */
const struct suite_def *const *suites_all(size_t *n);

/**
 * suites_impl_keys() - every suite's --impl keys, in run order, into @keys (at most @max):
 * what --impl KEY=VALUE is checked against. Returns how many.
 */
size_t suites_impl_keys(const struct impl_key **keys, size_t max);

/**
 * suites_rules_load() - the rules in effect: the judge's defaults, every suite's own rules in
 * run order, and --rules @path over them (NULL: none). As rules_load().
 */
int suites_rules_load(struct rules *r, const char *path, struct mg_err *err);

#endif
