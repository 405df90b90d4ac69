/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vm.h - `memgate vm`, start to end: a memgate command inside a QEMU guest of a chosen NUMA
 * shape (or of a kernel of the user's, with KVM in it), with this very build and its
 * libraries; a run's reports come back with the guest's suites named guest[SHAPE].SUITE and
 * the guest's facts as properties (run/vm.c, run/kernel.c, reports/nest.c).
 */
#ifndef MG_SESSION_VM_H
#define MG_SESSION_VM_H

#include <stdbool.h>

#include "session/session.h"

/* What `memgate vm` is asked, beyond the reports and the QEMU of its session_config. */
struct session_vm {
	const char *shape;	 /* --shape, NULL: the default (one for --kernel) */
	const char *shape_of;	 /* --shape-of: a topology whose shape the guest takes */
	const char *kernel;	 /* --kernel: a kernel of the user's, with KVM in the guest */
	const char *modules;	 /* --modules: its modules */
	const char *cpu;	 /* --guest-cpu */
	bool no_icount;		 /* --no-icount */
	bool dry_run;		 /* --dry-run: everything checked, nothing booted */
	const char *const *args; /* the command to run in the guest */
	int n_args;
};

/**
 * session_vm() - @vm's command in its guest, @cfg's --json and --junit the guest's reports
 * renamed into the host's (one ERROR row, with the console's end, when they cannot be had).
 * Returns the command's exit status in the guest, or an exit status of memgate's: 2 for bad
 * input, 3 when the guest did not boot or send its reports back, 128+N when stopped.
 */
int session_vm(const struct session_config *cfg, const struct session_vm *vm);

#endif
