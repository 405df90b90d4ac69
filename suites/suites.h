/* suites.h - the suites memgate knows, in the order it runs them. */
#ifndef MG_SUITES_SUITES_H
#define MG_SUITES_SUITES_H

#include <stddef.h>

#include "suites/case.h"

extern const struct suite_def suite_hw;
extern const struct suite_def suite_memslots;
extern const struct suite_def suite_prealloc;
extern const struct suite_def suite_rcu;

/** prealloc_guest_size() - bytes of guest memory the prealloc cases use (--size or default). */
uint64_t prealloc_guest_size(const struct hw_info *hw, const struct run_opts *o);

/** prealloc_hugepages_wanted() - free 2 MiB pages --reserve-hugepages asks for. */
uint64_t prealloc_hugepages_wanted(const struct hw_info *hw, const struct run_opts *o);

/** prealloc_gigapages_wanted() - free 1 GiB pages --reserve-hugepages tries to get. */
uint64_t prealloc_gigapages_wanted(const struct hw_info *hw, const struct run_opts *o);

/** suites_all() - every suite, in run order; @n gets the count. */
const struct suite_def *const *suites_all(size_t *n);

#endif
