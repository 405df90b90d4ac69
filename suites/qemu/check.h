/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check.h - the figures of one of the qemu suite's QEMU arms that cannot be true: an ERROR
 * of the measurement, never a PASS or a verdict. Pure: tests give it recorded or made-up rounds. */
#ifndef MG_SUITES_QEMU_CHECK_H
#define MG_SUITES_QEMU_CHECK_H

#include <stddef.h>

/* Rounds whose figures an arm keeps for its check at the end (the rest are not checked). */
#define QEMU_CHECK_ROUNDS 64

/*
 * The fastest an honest preallocation can be, as a share of writing the same memory with as
 * many threads or more in the same round: it writes every page too (the kernel clears each one
 * as it faults it in). The reference's MADV_POPULATE_WRITE with all PUs takes 0.8x to 0.95x of
 * it here (clear_page's string stores are quicker than a user memset of faulted memory), QEMU
 * 7.2 and 10.0 0.85x to 1.1x with two threads, 1.5x to 1.8x with one.
 */
#define QEMU_FASTEST_FILL 0.5
/* Threads at work that more than the threads seen must show before a poll is said to have
 * missed some (the CPU a preallocation takes over its fill time). */
#define QEMU_MISSED_THREADS 0.75

/* One arm's measured rounds. */
struct qemu_figures {
	unsigned int rounds;		       /* rounds kept (QEMU_CHECK_ROUNDS at most) */
	double seen[QEMU_CHECK_ROUNDS];	       /* the most touch_pages threads alive at once */
	unsigned int unfilled;		       /* rounds not resident by QMP's greeting */
	unsigned int n_memset;		       /* rounds with a write of the memory beside */
	double over_memset[QEMU_CHECK_ROUNDS]; /* the fill over the round's write */
	unsigned int n_work;		       /* rounds whose fill took 5 ms or more */
	double at_work[QEMU_CHECK_ROUNDS];     /* the preallocation's CPU over its fill */
};

/* Keep one round: its threads seen, fill (< 0: none), CPU, and the round's write (0: none). */
void qemu_figures_add(struct qemu_figures *f, double seen, double fill_ms, double cpu_ms,
		      double memset_ms);

/**
 * qemu_figures_check() - 0 when @f can be a preallocation of @mib MiB that QEMU's rule gives
 * @want threads; else -1 with @why (starting "its preallocation ...") saying what was seen:
 * - the backend not resident at QMP's greeting in most rounds (nothing preallocated by then:
 *   no time measured is a preallocation's);
 * - a fill faster than QEMU_FASTEST_FILL of writing the same memory (median of the rounds);
 * - fewer threads seen than @want while its CPU time shows more at work (the poll missed them;
 *   a QEMU that truly runs fewer is a figure for the gates, its CPU says so too).
 */
int qemu_figures_check(const struct qemu_figures *f, unsigned int want, size_t mib, char *why,
		       size_t len);

#endif
