/* SPDX-License-Identifier: GPL-2.0-or-later */
/* busy.h - the kvm suite's busy_guest case: a vCPU touching its memory while slots come
 * and go. */
#ifndef MG_SUITES_KVM_BUSY_H
#define MG_SUITES_KVM_BUSY_H

#include "run/case.h"

enum {
	BUSY_IDLE_RATE,
	BUSY_RATE,
	BUSY_OVER_IDLE,
	BUSY_INSERT_MEDIAN,
	BUSY_INSERT_P99,
	BUSY_DELETE_MEDIAN,
	BUSY_DELETE_P99,
	BUSY_METRICS,
};

extern const struct metric_def kvm_busy_metrics[BUSY_METRICS];

/** kvm_busy_run() - the case's run(): its rounds, in the forked child. */
void kvm_busy_run(struct case_ctx *ctx);

#endif
