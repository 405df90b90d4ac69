/* SPDX-License-Identifier: GPL-2.0-or-later */
/* busy.c - the kvm suite's busy_guest case: a real-mode vCPU increments bytes in 15 pages,
 * never exiting, while 256 slots are added and deleted; its access rate alone and meanwhile,
 * and the ioctls' cycles. */
#include "suites/kvm/busy.h"

#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "impl/kvm_guest.h"
#include "run/sampling.h"
#include "suites/kvm/vm.h"
#include "util/stats.h"
#include "util/util.h"

/*
 * The guest: 16-bit real mode, code at 0, data in the segment at 64 KiB: it increments one
 * byte in each of 15 pages, then a 32-bit pass counter in the 16th, forever, without exits.
 *   mov ax, 0x1000; mov ds, ax
 *   top: xor bx, bx
 *   next: inc byte [bx]; add bx, 0x1000; cmp bx, 0xf000; jb next
 *   inc dword [0xfff0]; jmp top
 */
static const uint8_t busy_code[] = {0xb8, 0x00, 0x10, 0x8e, 0xd8, 0x31, 0xdb, 0xfe, 0x07,
				    0x81, 0xc3, 0x00, 0x10, 0x81, 0xfb, 0x00, 0xf0, 0x72,
				    0xf4, 0x66, 0xff, 0x06, 0xf0, 0xff, 0xeb, 0xeb};
#define GUEST_BYTES (128u << 10)
#define PAGES_PER_PASS 15
#define COUNTER_OFFSET (0x10000 + 0xfff0)
/* Slots added and removed while the guest runs, per round, and the idle window. */
#define BUSY_SLOTS 256
#define IDLE_WINDOW_NS 50000000

struct busy_guest {
	struct kvm_guest kvm; /* impl/kvm_guest.c's, shaped as busy_shape() says */
	pthread_t thread;
	atomic_bool stop;
	int cpu; /* the PU the vCPU thread is bound to, -1: any */
	int error;
	unsigned int exit_reason; /* with error EPROTO */
};

static void kick(int sig)
{
	(void)sig;
}

static void *vcpu_main(void *arg)
{
	struct busy_guest *g = arg;

	if (g->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load(&g->stop)) {
		/* The guest never exits by itself: a return that is not a signal's is a broken
		 * guest (exit_reason says how). */
		if (!ioctl(g->kvm.vcpu, KVM_RUN, 0)) {
			g->exit_reason = ((struct kvm_run *)g->kvm.run)->exit_reason;
			g->error = EPROTO;
			break;
		}
		if (errno != EINTR) {
			g->error = errno;
			break;
		}
	}
	return NULL;
}

static void vcpu_failed(struct case_ctx *ctx, const struct busy_guest *g)
{
	if (g->error == EPROTO)
		case_error(ctx, "the guest left KVM_RUN with exit reason %u: it should never exit",
			   g->exit_reason);
	else
		case_error(ctx, "KVM_RUN of the busy guest: %s", strerror(g->error));
}

static uint32_t passes(const struct busy_guest *g)
{
	return atomic_load_explicit(
	    (_Atomic uint32_t *)(void *)((char *)g->kvm.mem + COUNTER_OFFSET),
	    memory_order_relaxed);
}

const struct metric_def kvm_busy_metrics[BUSY_METRICS] = {
    [BUSY_IDLE_RATE] = {"guest.idle_accesses_per_s", "accesses/s", HIGHER_IS_BETTER},
    [BUSY_RATE] = {"guest.busy_accesses_per_s", "accesses/s", HIGHER_IS_BETTER},
    [BUSY_OVER_IDLE] = {"guest.busy_over_idle", "x", HIGHER_IS_BETTER},
    [BUSY_INSERT_MEDIAN] = {"kvm.insert.median", "cycles", LOWER_IS_BETTER},
    [BUSY_INSERT_P99] = {"kvm.insert.p99", "cycles", LOWER_IS_BETTER},
    [BUSY_DELETE_MEDIAN] = {"kvm.delete.median", "cycles", LOWER_IS_BETTER},
    [BUSY_DELETE_P99] = {"kvm.delete.p99", "cycles", LOWER_IS_BETTER},
};

struct busy_case {
	struct case_ctx *ctx;
	struct kvm_vm vm;
	struct busy_guest g;
	double idle_rate;
	double cyc[2][BUSY_SLOTS];
};

/* Guest accesses per second over a span of @ns that started at @p0 passes. */
static double rate(const struct busy_guest *g, uint32_t p0, int64_t ns)
{
	return (double)(uint32_t)(passes(g) - p0) * PAGES_PER_PASS / ((double)ns / 1e9);
}

static int busy_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct busy_case *bc = arg;
	struct timespec idle = {0, IDLE_WINDOW_NS};
	int64_t t0 = util_now_ns();
	uint32_t p0 = passes(&bc->g);
	int ret = 0;

	(void)round;
	if (bc->g.error) {
		vcpu_failed(bc->ctx, &bc->g);
		return -bc->g.error;
	}
	if (arm == 0) {
		/* The guest alone: this thread waits out the window, the vCPU works. */
		while (nanosleep(&idle, &idle) && errno == EINTR)
			;
		bc->idle_rate = rate(&bc->g, p0, util_now_ns() - t0);
		if (measured)
			case_sample(bc->ctx, BUSY_IDLE_RATE, bc->idle_rate, NULL);
		return 0;
	}
	struct kvm_side sd = {.vm = &bc->vm};

	for (unsigned int j = 0; !ret && j < BUSY_SLOTS; j++) {
		struct memslot s = kvm_slot_at(j, BUSY_SLOTS, false, 0, &bc->vm);

		ret = kvm_side_set(&sd, &s, &bc->cyc[0][j]);
	}
	for (unsigned int j = 0; !ret && j < BUSY_SLOTS; j++) {
		struct memslot s = kvm_slot_at(j, BUSY_SLOTS, false, 0, &bc->vm);

		s.npages = 0;
		ret = kvm_side_set(&sd, &s, &bc->cyc[1][j]);
	}
	if (ret) {
		case_error(bc->ctx, "KVM_SET_USER_MEMORY_REGION with a running vCPU: %s",
			   strerror(-ret));
		return ret;
	}
	if (measured) {
		double r = rate(&bc->g, p0, util_now_ns() - t0);

		case_sample(bc->ctx, BUSY_RATE, r, NULL);
		if (bc->idle_rate > 0)
			case_sample(bc->ctx, BUSY_OVER_IDLE, r / bc->idle_rate, NULL);
		for (int d = 0; d < 2; d++) {
			qsort(bc->cyc[d], BUSY_SLOTS, sizeof(double), util_cmp_double);
			case_sample(bc->ctx, d ? BUSY_DELETE_MEDIAN : BUSY_INSERT_MEDIAN,
				    stats_quantile_sorted(bc->cyc[d], BUSY_SLOTS, 0.5), NULL);
			case_sample(bc->ctx, d ? BUSY_DELETE_P99 : BUSY_INSERT_P99,
				    stats_quantile_sorted(bc->cyc[d], BUSY_SLOTS, 0.99), NULL);
		}
	}
	return 0;
}

/* The guest's memory at gpa 0 (slot BUSY_SLOTS, past the ones that come and go), its vCPU. */
static int busy_open(struct busy_case *bc, struct mg_err *err)
{
	const struct kvm_guest_shape shape = {.code = busy_code,
					      .code_len = sizeof(busy_code),
					      .mem_bytes = GUEST_BYTES,
					      .shared = true,
					      .slot = BUSY_SLOTS,
					      .vm = bc->vm.fd};

	return kvm_guest_open_shaped(&bc->g.kvm, &shape, err);
}

static void busy_stop(struct busy_guest *g)
{
	atomic_store(&g->stop, true);
	((struct kvm_run *)g->kvm.run)->immediate_exit = 1;
	/* The signal may land before KVM_RUN: immediate_exit then stops the next one. */
	for (;;) {
		struct timespec until;

		pthread_kill(g->thread, SIGUSR1);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 10000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (!pthread_timedjoin_np(g->thread, NULL, &until))
			return;
	}
}

void kvm_busy_run(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct busy_case *bc = calloc(1, sizeof(*bc));
	struct case_arms arms = {
	    .n = 2, .warmup = o->warmup, .samples = o->samples, .sample = busy_sample, .ctx = ctx};
	struct sigaction sa = {.sa_handler = kick};
	int ret;
	struct mg_err err;

	if (!bc) {
		case_error(ctx, "out of memory");
		return;
	}
	arms.arg = bc;
	bc->ctx = ctx;
	if ((ret = kvm_vm_open(&bc->vm, BUSY_SLOTS, &err)) || (ret = kvm_vm_fresh(&bc->vm, &err)) ||
	    (ret = busy_open(bc, &err))) {
		if (ret == -EACCES || ret == -ENOENT)
			case_skip(ctx, "%s", err.msg);
		else
			case_error(ctx, "%s", err.msg);
		goto out;
	}
	/* This thread on the first PU, the vCPU on another allowed one. With one PU the vCPU
	 * would share it with the updates, and its rate while they run would be its share of
	 * one CPU, which the scheduler sets: not what the updates cost it. (A one-vCPU guest
	 * of memgate vm --kernel: 6.1's busy guest kept 0.418 of its rate, 5.10's 0.470.) */
	kvm_pin_first(ctx, &bc->g.cpu);
	if (bc->g.cpu < 0) {
		case_skip(ctx,
			  "one PU allowed here: the vCPU would share it with the updates, and "
			  "its rate would be its share of one CPU, not what the updates cost it");
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) ||
	    (ret = pthread_create(&bc->g.thread, NULL, vcpu_main, &bc->g))) {
		case_error(ctx, "cannot start the vCPU thread: %s", strerror(ret ? ret : errno));
		goto out;
	}
	for (unsigned int m = 0; m < BUSY_METRICS; m++)
		case_counter(ctx, m, m < BUSY_INSERT_MEDIAN ? "clock" : "tsc");
	case_prop(ctx, "tsc_mhz", "%.3f", case_hw(ctx)->tsc_hz / 1e6);
	kvm_prop_module(ctx);
	case_prop(ctx, "slots_per_round", "%d", BUSY_SLOTS);
	case_prop(ctx, "guest_pages_touched", "%d", PAGES_PER_PASS);
	case_prop(ctx, "vcpu_pu", "%d", bc->g.cpu);
	case_interleave(&arms);
	busy_stop(&bc->g);
	if (bc->g.error)
		vcpu_failed(ctx, &bc->g);
out:
	kvm_guest_close(&bc->g.kvm);
	if (bc->vm.kvm > 0)
		kvm_vm_close(&bc->vm);
	free(bc);
}
