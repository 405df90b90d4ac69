/* suites.c - the list of suites: adding one is one line here and one in suites.h. */
#include "suites/suites.h"

static const struct suite_def *const all_suites[] = {
	&suite_hw,
	&suite_memslots,
	&suite_prealloc,
	&suite_rcu,
};

const struct suite_def *const *suites_all(size_t *n)
{
	*n = sizeof(all_suites) / sizeof(all_suites[0]);
	return all_suites;
}
