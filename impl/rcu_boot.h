/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rcu_boot.h - a guest booting with N disks: the memory-map churn behind the 2017 malloc_trim
 * thread's regression. */
#ifndef MG_IMPL_RCU_BOOT_H
#define MG_IMPL_RCU_BOOT_H

#include <stdbool.h>
#include <stdint.h>

#include "impl/rcu.h"
#include "util/err.h"

struct rcu_boot_params {
	unsigned int disks;
	enum rcu_trim trim;
	uint64_t seed; /* the reader's addresses */
	/* Each config-space access is a real KVM exit of a guest (impl/kvm_guest.h) the main thread
	 * runs. Without it the accesses follow each other with no guest time between them,
	 * and the call_rcu thread may not get the big lock for the whole boot. */
	bool guest;
	/* With @guest: 0 for a real KVM guest, else a modelled one whose exits take this long
	 * (kvm_guest_open_modelled()). */
	uint64_t modelled_exit_ns;
};

struct rcu_boot_result {
	double boot_ms;			      /* first disk realised to last BAR enabled */
	double main_lock_wait_ms;	      /* the main thread waiting for the big lock */
	uint64_t commits;		      /* memory transactions */
	uint64_t accesses;		      /* config-space accesses */
	uint64_t guest_exits;		      /* KVM exits they came from (0 without a guest) */
	double guest_exit_ns;		      /* the exits' mean round trip, real or modelled */
	uint64_t minor_faults;		      /* the process's page faults during the boot */
	uint64_t rss_boot_kib, heap_boot_kib; /* at the end of boot; heap: anonymous RSS */
	uint64_t rss_idle_kib, heap_idle_kib; /* after the idle pause */
	struct rcu_stats rcu;
	uint64_t reader_lookups;
	uint64_t reader_bad; /* lookups that saw a freed map: must be 0 */
};

/* After the boot the call_rcu thread drains and goes idle (the batching rule waits at most
 * 5 x 10 ms, an idle trim comes 10 ms after the last batch): the idle figures are read when it
 * is waiting for work again. Past this it is stuck, and the boot an error. */
#define RCU_BOOT_IDLE_TIMEOUT_MS 2000

/* Config-space accesses per disk: 7 from the firmware, 10 from the kernel. */
#define RCU_BOOT_ACCESSES_PER_DISK 17
/* Memory transactions per disk: its realisation, and decoding on, off, on. */
#define RCU_BOOT_COMMITS_PER_DISK 4

/**
 * rcu_boot_run() - realise @p->disks disks and program their BARs as firmware and a kernel do,
 * each change a memory transaction published with RCU, while a vCPU thread translates
 * addresses. Starts and stops the RCU thread with @p->trim. Meant for a fresh process: the
 * RSS figures are the process's. Returns 0 or -errno with @err.
 */
int rcu_boot_run(const struct rcu_boot_params *p, struct rcu_boot_result *r, struct mg_err *err);

#endif
