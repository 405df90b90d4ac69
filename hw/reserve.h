/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reserve.h - size a hugetlb pool for a run, under a host-wide lock, and put back what was
 * added on every way out: signals, and the next memgate after a SIGKILL. */
#ifndef MG_HW_RESERVE_H
#define MG_HW_RESERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* The host-wide state of reservations: the lock, and a file per reserving process. */
#define RESERVE_DIR "/run/memgate"
/* How long a second reserver waits for the first before it refuses. */
#define RESERVE_WAIT_S 900

/**
 * reserve_lock() - take the host-wide lock on hugetlb pool sizes (flock on
 * RESERVE_DIR/hugetlb.lock), waiting at most @wait_s seconds and saying so on stderr while
 * it waits; then put back what dead memgates left reserved. Held until the process ends.
 * Every process that resizes a pool, or needs a pool nobody else resizes (tests), takes it.
 * Returns 0, -EBUSY with @err naming the holder when the wait ran out, or -errno.
 */
int reserve_lock(unsigned int wait_s, struct mg_err *err);

/**
 * reserve_hugepages() - make at least @free_wanted pages of @page_bytes free in the system
 * pool by raising nr_hugepages (root only), under reserve_lock(). What it added is recorded
 * in RESERVE_DIR/reservations/PID first, and taken off again at exit, on SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT (then the signal takes its course), and by reserve_restore(): the
 * delta, never more than is free then, so other users' pages stay. Forked children do not
 * restore. Returns 0 (with @got free pages), or -errno with @err: EPERM when not root,
 * EBUSY when another reserver held the lock too long, ENOMEM when the kernel found fewer
 * pages than asked: the pool is then put back at once, or with @keep_short the pages it did
 * find stay, @got free pages then, for the cases they are enough for.
 */
int reserve_hugepages(uint64_t page_bytes, uint64_t free_wanted, bool keep_short, uint64_t *got,
		      struct mg_err *err);

/**
 * reserve_node_hugepages() - reserve_hugepages() of NUMA node @node's pool (its OS index,
 * /sys/devices/system/node/nodeN/hugepages/), the other nodes' pools left as they are; -1 is
 * the system's pool. Recorded, restored and recovered the same way.
 */
int reserve_node_hugepages(uint64_t page_bytes, int node, uint64_t free_wanted, bool keep_short,
			   uint64_t *got, struct mg_err *err);

/** reserve_restore() - take back every delta this process added. Async-signal-safe. */
void reserve_restore(void);

/**
 * reserve_recover() - put back the reservations of memgate processes that died without
 * restoring (SIGKILL, a power cut: their files are still there), saying so on @out; only
 * when the lock is free, held by this process, or held only by the dying children of a killed
 * memgate (then it waits for them, 30 s at most), and only as root. Returns how many
 * reservations it put back.
 */
int reserve_recover(FILE *out);

#endif
