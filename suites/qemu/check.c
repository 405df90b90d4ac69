/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check.c - the qemu suite's figures that cannot be true (check.h). */
#include "suites/qemu/check.h"

#include <math.h>
#include <stdio.h>

#include "util/stats.h"

void qemu_figures_add(struct qemu_figures *f, double seen, double fill_ms, double cpu_ms,
		      double memset_ms)
{
	if (f->rounds == QEMU_CHECK_ROUNDS)
		return;
	f->seen[f->rounds++] = seen;
	if (fill_ms < 0) {
		f->unfilled++;
		return;
	}
	if (memset_ms > 0)
		f->over_memset[f->n_memset++] = fill_ms / memset_ms;
	/* Threads at work: a fill of a few ms says nothing of its threads. */
	if (fill_ms >= 5)
		f->at_work[f->n_work++] = (cpu_ms > 0 ? cpu_ms : 0) / fill_ms;
}

int qemu_figures_check(const struct qemu_figures *f, unsigned int want, size_t mib, char *why,
		       size_t len)
{
	double seen, work, fast;

	if (!f->rounds)
		return 0;
	if (f->unfilled * 2 > f->rounds) {
		snprintf(why, len,
			 "its preallocation of %zu MiB was not resident when QMP spoke in %u of %u "
			 "rounds: nothing was preallocated by its greeting, so no time measured is "
			 "a preallocation's",
			 mib, f->unfilled, f->rounds);
		return -1;
	}
	fast = f->n_memset ? stats_median(f->over_memset, f->n_memset) : NAN;
	if (fast < QEMU_FASTEST_FILL) {
		snprintf(why, len,
			 "its preallocation filled %zu MiB in %.2fx the time writing the same "
			 "memory took in the same rounds (median of %u): a preallocation writes "
			 "every page too, it cannot take less than %.1fx of that; the measurement "
			 "is wrong",
			 mib, fast, f->n_memset, QEMU_FASTEST_FILL);
		return -1;
	}
	seen = stats_median(f->seen, f->rounds);
	work = f->n_work ? stats_median(f->at_work, f->n_work) : NAN;
	if (seen < want && work >= seen + QEMU_MISSED_THREADS) {
		snprintf(why, len,
			 "its preallocation showed %.0f threads (median of %u rounds) where QEMU's "
			 "rule gives %u and its CPU time says %.1f were at work: the thread poll "
			 "missed them",
			 seen, f->rounds, want, work);
		return -1;
	}
	return 0;
}
