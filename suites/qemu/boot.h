/* SPDX-License-Identifier: GPL-2.0-or-later */
/* boot.h - the qemu suite's boot cases (qemu.perf.boot[disks=N]): a real QEMU booting
 * memgate's guest kit with N disks. */
#ifndef MG_SUITES_QEMU_BOOT_H
#define MG_SUITES_QEMU_BOOT_H

#include <stddef.h>

#include "run/case.h"
#include "run/result.h"

enum {
	QB_INIT_MS,	   /* QEMU's launch to the guest's init, host clock */
	QB_DISKS_MS,	   /* launch to every disk seen by the guest */
	QB_GUEST_INIT_MS,  /* the guest kernel's own uptime at init */
	QB_GUEST_PROBE_MS, /* the guest's init to every disk seen, its own clock */
	QB_HEAP_KIB,	   /* QEMU's [heap] RSS when the disks are seen */
	QB_ANON_KIB,	   /* its anonymous memory then */
	QB_HEAP_IDLE_KIB,  /* the same after the guest's idle pause */
	QB_ANON_IDLE_KIB,
	QB_MINFLT,	 /* QEMU's minor faults, launch to the guest's end */
	QB_ONE_DISKS_MS, /* N > 1: the 1-disk boot of the same rounds */
	QB_PER_DISK_MS,	 /* N > 1: (N-disk less 1-disk) / (N - 1) */
	QB_METRICS,
};

extern const struct metric_def qemu_boot_metrics[QB_METRICS];

/** qemu_boot_expand() - disks=1 and 60, 200 with --long. */
case_expand_fn qemu_boot_expand;

/* The boot cases' table: boot time, disks and QEMU's heap per round. */
extern const struct summary_table qemu_boot_table;

/** qemu_boot_run() - the case: rounds of the N-disk boot (and the 1-disk one beside it). */
void qemu_boot_run(struct case_ctx *ctx);

#endif
