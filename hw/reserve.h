/* reserve.h - size a hugetlb pool for a run, and put it back on every way out, signals too. */
#ifndef MG_HW_RESERVE_H
#define MG_HW_RESERVE_H

#include <stdint.h>

#include "util/err.h"

/**
 * reserve_hugepages() - make at least @free_wanted pages of @page_bytes free in the system
 * pool by raising nr_hugepages (root only). The old value is written back at exit, on
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT (then the signal takes its course), and by
 * reserve_restore(). Only the process that reserved restores: forked children do not.
 * Returns 0 (with @got free pages), or -errno with @err: EPERM when not root, ENOMEM when
 * the kernel found fewer pages than asked (the pool is then put back at once).
 */
int reserve_hugepages(uint64_t page_bytes, uint64_t free_wanted, uint64_t *got, struct mg_err *err);

/** reserve_restore() - write back every pool this process changed. Async-signal-safe. */
void reserve_restore(void);

#endif
