/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suites.c - the registry: a suite is its suite_def (declared in suites.h) and a line here. */
#include "suites/suites.h"

#include "util/util.h"

static const struct suite_def *const all_suites[] = {
    &suite_hw, &suite_memslots, &suite_kvm, &suite_prealloc, &suite_qemu, &suite_rcu,
};

const struct suite_def *const *suites_all(size_t *n)
{
	*n = ARRAY_SIZE(all_suites);
	return all_suites;
}

size_t suites_impl_keys(const struct impl_key **keys, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(all_suites); i++)
		for (const struct impl_key *const *k = all_suites[i]->impl_keys; k && *k; k++)
			if (n < max)
				keys[n++] = *k;
	return n;
}

int suites_rules_load(struct rules *r, const char *path, struct mg_err *err)
{
	struct rules_file files[ARRAY_SIZE(all_suites)];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(all_suites); i++)
		if (all_suites[i]->rules)
			files[n++] = (struct rules_file){all_suites[i]->rules_file,
							 all_suites[i]->rules, all_suites[i]->name};
	return rules_load(r, files, n, path, err);
}
