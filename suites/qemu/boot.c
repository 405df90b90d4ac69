/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boot.c - the qemu suite's boot cases: a real QEMU boots memgate's guest kit (Debian's
 * cloud kernel, a busybox initramfs) with N disks, each a virtio-scsi-pci controller of its
 * own behind pci-bridges, the shape of the report in the 2017 malloc_trim thread. KVM where
 * /dev/kvm boots a stock kernel (not kvm_pvm), TCG otherwise: the accelerator is a property
 * of the case.
 */
#include "run/result.h"
#include "suites/qemu/boot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/guest.h"
#include "run/sampling.h"

#include "util/util.h"

/* 1 disk, and 60: the report; 200 with --long (a TCG boot of it takes about a minute). */
static const unsigned int boot_disks[] = {1, 60, 200};
#define LONG_ONLY_DISKS 100

/* A boot takes 2.5 s (1 disk) to 17 s (60) under TCG on a 2-vCPU agent: fewer rounds than the
 * default's, so that the default run stays within its minutes. The 1-disk case warms the
 * page cache (kernel, initramfs, QEMU) for the 60-disk one, which has no warm-up round. */
#define BOOT_SAMPLES 3
#define BOOT_WARMUP 1
/* --quick (without -n) boots each guest once: a smoke run of the boots, its figures without an
 * interval. Three 60-disk rounds under TCG are a minute, past what a smoke run may take. */
#define BOOT_QUICK_SAMPLES 1
/* The guest's idle pause before poweroff, after which QEMU's heap is read again. */
#define BOOT_HOLD_S 1.0

/* --quick without -n: the smoke run of the boots, each guest booted once, no warm-up boot and no
 * 1-disk arm beside the N-disk boot (so no per-disk figure). */
static bool boot_smoke(const struct run_opts *o)
{
	return o->quick && !o->samples_set;
}

/* Measured rounds: -n, at most BOOT_SAMPLES; one in the smoke run. */
static unsigned int boot_samples(const struct run_opts *o)
{
	if (boot_smoke(o))
		return BOOT_QUICK_SAMPLES;
	return o->samples < BOOT_SAMPLES ? o->samples : BOOT_SAMPLES;
}

/* A boot past this is broken, not slow: 60 s, and 2 s a disk beyond. */
static double boot_timeout_s(unsigned int disks)
{
	return 60.0 + 2.0 * disks;
}

const struct metric_def qemu_boot_metrics[QB_METRICS] = {
    [QB_INIT_MS] = {"boot.init_ms", "ms", LOWER_IS_BETTER},
    [QB_DISKS_MS] = {"boot.disks_ms", "ms", LOWER_IS_BETTER},
    [QB_GUEST_INIT_MS] = {"guest.init_uptime_ms", "ms", LOWER_IS_BETTER},
    [QB_GUEST_PROBE_MS] = {"guest.probe_ms", "ms", LOWER_IS_BETTER},
    [QB_HEAP_KIB] = {"qemu.heap_kib", "KiB", LOWER_IS_BETTER},
    [QB_ANON_KIB] = {"qemu.anon_kib", "KiB", LOWER_IS_BETTER},
    [QB_HEAP_IDLE_KIB] = {"qemu.heap_idle_kib", "KiB", LOWER_IS_BETTER},
    [QB_ANON_IDLE_KIB] = {"qemu.anon_idle_kib", "KiB", LOWER_IS_BETTER},
    [QB_MINFLT] = {"qemu.page_faults", "faults", LOWER_IS_BETTER},
    [QB_ONE_DISKS_MS] = {"one.disks_ms", "ms", LOWER_IS_BETTER},
    [QB_PER_DISK_MS] = {"per_disk_ms", "ms", LOWER_IS_BETTER},
};

unsigned int qemu_boot_expand(const struct hw_info *hw, const struct run_opts *opts,
			      struct case_params *out, unsigned int max)
{
	(void)hw;
	/* The smoke run boots the 60-disk guest alone: the 1-disk boot is there for the per-disk
	 * cost and to warm the page cache for the rounds, and the smoke run has neither. */
	if (boot_smoke(opts) && !opts->long_run)
		return case_expand_values("disks", &boot_disks[1], 1, 0, NULL, opts, out, max);
	return case_expand_values("disks", boot_disks, ARRAY_SIZE(boot_disks), LONG_ONLY_DISKS,
				  NULL, opts, out, max);
}

/* Arms: N disks, and for N > 1 the 1-disk boot in the same rounds (the per-disk cost). */
enum { ARM_N, ARM_ONE, ARMS };

struct boot_case {
	struct case_ctx *ctx;
	struct guest_boot_spec spec;
	unsigned int disks;
	double disks_ms[ARMS]; /* this round's */
	double cut_ms;	       /* --cut boot.disks_ms: the N-disk boot stops there (0: never) */
	unsigned int cuts;     /* boots stopped at the cut */
};

/* The console's last lines into the case's log, each with its prefix. */
static void log_console(struct case_ctx *ctx, const struct guest_boot *b)
{
	const char *s = b->tail;

	case_log(ctx, "%s", b->argv_text);
	case_log(ctx, "the console's last lines:");
	while (*s) {
		size_t len = strcspn(s, "\n");

		case_log(ctx, "  | %.*s", (int)len, s);
		s += len + (s[len] == '\n');
	}
}

/* The console's last @n lines of @b, joined with " | ", into @out. */
static const char *console_last(const struct guest_boot *b, unsigned int n, char *out, size_t len)
{
	const char *end = b->tail + strlen(b->tail), *start = end;
	size_t used = 0;

	while (start > b->tail && (start[-1] == '\n' || start[-1] == ' '))
		end = --start;
	for (unsigned int seen = 0; start > b->tail && seen < n; start--)
		if (start[-1] == '\n' && ++seen == n)
			break;
	out[0] = '\0';
	while (start < end && used + 1 < len) {
		char ch = *start++;

		if (ch == '\n') {
			used += (size_t)snprintf(out + used, len - used, " | ");
			continue;
		}
		out[used++] = ch;
		out[used] = '\0';
	}
	return out;
}

static int boot_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct boot_case *bc = arg;
	struct guest_boot_spec spec = bc->spec;
	struct case_ctx *ctx = bc->ctx;
	struct guest_boot b;
	struct mg_err err;
	char last[600];
	int ret;

	(void)round;
	spec.disks = arm == ARM_ONE ? 1 : bc->disks;
	spec.timeout_s = boot_timeout_s(spec.disks);
	spec.cut_s = arm == ARM_N ? bc->cut_ms / 1e3 : 0;
	ret = guest_boot(&spec, &b, &err);
	/* Stopped at the bound: the boot took at least that long, and counts so. */
	if (ret == -ECANCELED && b.cut) {
		case_log(ctx, "%u disks: %s: counted at %.0f ms", spec.disks, err.msg, bc->cut_ms);
		bc->disks_ms[arm] = bc->cut_ms;
		bc->cuts++;
		if (measured)
			case_sample(ctx, QB_DISKS_MS, bc->cut_ms, NULL);
		return 0;
	}
	if (ret) {
		log_console(ctx, &b);
		/* The guest saw fewer disks than it was given: the boot is wrong, not broken. */
		if (ret == -EIO && b.con.done && b.con.disks >= 0 &&
		    (unsigned int)b.con.disks < spec.disks)
			case_fail(ctx, "%u disks: %s", spec.disks, err.msg);
		else if (strstr(b.tail, "Kernel panic"))
			case_error(ctx, "%u disks: %s; the guest's kernel: %.*s", spec.disks,
				   err.msg, (int)strcspn(strstr(b.tail, "Kernel panic"), "\n"),
				   strstr(b.tail, "Kernel panic"));
		else if (b.tail[0])
			case_error(ctx, "%u disks: %s; the console ended: %s", spec.disks, err.msg,
				   console_last(&b, 3, last, sizeof(last)));
		else
			case_error(ctx, "%u disks: %s (the console said nothing)", spec.disks,
				   err.msg);
		return -1;
	}
	bc->disks_ms[arm] = b.disks_ms;
	if (!measured)
		return 0;
	if (arm == ARM_ONE) {
		case_sample(ctx, QB_ONE_DISKS_MS, b.disks_ms, NULL);
		return 0;
	}
	case_sample(ctx, QB_INIT_MS, b.init_ms, NULL);
	case_sample(ctx, QB_DISKS_MS, b.disks_ms, NULL);
	case_sample(ctx, QB_GUEST_INIT_MS, b.con.init_s * 1e3, NULL);
	case_sample(ctx, QB_GUEST_PROBE_MS, (b.con.disks_s - b.con.init_s) * 1e3, NULL);
	if (b.at_disks.read) {
		case_sample(ctx, QB_HEAP_KIB, (double)b.at_disks.heap_kib, NULL);
		case_sample(ctx, QB_ANON_KIB, (double)b.at_disks.anon_kib, NULL);
	}
	if (b.after_idle.read) {
		case_sample(ctx, QB_HEAP_IDLE_KIB, (double)b.after_idle.heap_kib, NULL);
		case_sample(ctx, QB_ANON_IDLE_KIB, (double)b.after_idle.anon_kib, NULL);
	}
	case_sample(ctx, QB_MINFLT, (double)b.minflt, NULL);
	return 0;
}

/* The per-disk cost from the same round's two boots: (N-disk less 1-disk) over N - 1. */
static int boot_round_end(void *arg, unsigned int round, bool measured)
{
	struct boot_case *bc = arg;

	(void)round;
	if (measured && bc->disks > 1 && !boot_smoke(case_opts(bc->ctx)))
		case_sample(bc->ctx, QB_PER_DISK_MS,
			    (bc->disks_ms[ARM_N] - bc->disks_ms[ARM_ONE]) / (bc->disks - 1), NULL);
	return 0;
}

void qemu_boot_run(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	struct boot_case bc = {.ctx = ctx, .disks = (unsigned int)atoi(case_param(ctx, "disks"))};
	struct case_arms arms = {.n = bc.disks > 1 && !boot_smoke(o) ? ARMS : 1,
				 .warmup = bc.disks > 1 || boot_smoke(o) ? 0
					   : o->warmup < BOOT_WARMUP	 ? o->warmup
									 : BOOT_WARMUP,
				 .samples = boot_samples(o),
				 .sample = boot_sample,
				 .round_end = boot_round_end,
				 .arg = &bc,
				 .ctx = ctx};

	if (!o->kit || !o->kit->kernel[0]) {
		case_skip(ctx, "%s", o->kit ? o->kit->why : "no guest kit");
		return;
	}
	bc.spec = (struct guest_boot_spec){.qemu = o->qemu->path,
					   .kit = o->kit,
					   .kvm = hw_kvm_boots_stock_guests(hw),
					   .hold_s = BOOT_HOLD_S,
					   .preload = o->qemu_preload};
	case_prop(ctx, "accel", "%s", bc.spec.kvm ? "kvm" : "tcg");
	if (hw->kvm == HW_PROBE_YES && !bc.spec.kvm)
		case_warn(ctx, "%s runs only kernels built as PVM guests: the guest runs under TCG",
			  hw->kvm_module);
	else if (!bc.spec.kvm)
		case_warn(ctx, "%s: the guest runs under TCG", hw->kvm_detail);
	case_prop(ctx, "qemu.path", "%s", o->qemu->path);
	case_prop(ctx, "qemu.version", "%s", o->qemu->version);
	case_prop(ctx, "guest.kernel", "%s", o->kit->kernel);
	case_prop(ctx, "guest.initrd", "%s", o->kit->initrd);
	case_prop(ctx, "guest.vcpus", "%u", GUEST_VCPUS);
	if (o->qemu_preload)
		case_prop(ctx, "qemu.preload", "%s", o->qemu_preload);
	for (unsigned int m = 0; m < QB_METRICS; m++)
		case_counter(ctx, m,
			     m >= QB_HEAP_KIB && m <= QB_ANON_IDLE_KIB	       ? "smaps"
			     : m == QB_MINFLT				       ? "proc-stat"
			     : m == QB_GUEST_INIT_MS || m == QB_GUEST_PROBE_MS ? "guest-uptime"
									       : "clock");
	if (o->cut_value > 0 && !strcmp(o->cut_metric, qemu_boot_metrics[QB_DISKS_MS].name)) {
		bc.cut_ms = o->cut_value;
		case_prop(ctx, "cut_ms", "%.0f", bc.cut_ms);
	}
	case_interleave(&arms);
	if (bc.cuts)
		case_warn(
		    ctx,
		    "%u of the %u-disk boots stopped at %.0f ms (--cut), each counted at that "
		    "bound; their other figures are not measured",
		    bc.cuts, bc.disks, bc.cut_ms);
}

static bool boot_wanted(const struct case_result *r)
{
	return r->inst->def->run == qemu_boot_run && case_result_sampled(r, QB_DISKS_MS);
}

static void boot_row(FILE *f, const struct case_result *r)
{
	const char *accel = case_result_prop(r, "accel");

	fprintf(f, "  %5s  %-4s %8.0f %8.0f %10.0f", case_params_get(&r->inst->params, "disks"),
		accel ? accel : "?", case_result_median(r, QB_GUEST_INIT_MS),
		case_result_median(r, QB_INIT_MS), case_result_median(r, QB_DISKS_MS));
	if (case_result_sampled(r, QB_PER_DISK_MS))
		fprintf(f, " %8.1f", case_result_median(r, QB_PER_DISK_MS));
	else
		fprintf(f, " %8s", "-");
	fprintf(f, " %9.0f %9.0f %9.0f\n", case_result_median(r, QB_HEAP_KIB),
		case_result_median(r, QB_HEAP_IDLE_KIB), case_result_median(r, QB_ANON_IDLE_KIB));
}

const struct summary_table qemu_boot_table = {
    .header = "qemu: the guest kit's boot, medians: init by the guest's uptime and by QEMU's "
	      "launch, "
	      "every disk seen (ms);\n  QEMU's heap when they are and after the idle pause, "
	      "its anonymous memory then (KiB)\n"
	      "  disks accel  init(g)  init(h)  all disks per disk      heap heap idle "
	      "anon idle\n",
    .published = "published (2017 malloc_trim thread): 60 disks, a trim after every batch "
		 "made the boot 200+ s slower; rcu.perf.boot is the model of it\n",
    .wanted = boot_wanted,
    .row = boot_row};
