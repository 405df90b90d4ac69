/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the kvm suite: the host kernel's KVM_SET_USER_MEMORY_REGION, timed per operation as
 * tools/testing/selftests/kvm/memslot_perf_test.c exercises it, beside the 2014 array (the
 * memslots case); the busy_guest case is busy.c, the VM both use vm.c. */
#include <assert.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "run/result.h"
#include "run/sampling.h"
#include "impl/memslots.h"
#include "suites/kvm/busy.h"
#include "suites/kvm/vm.h"
#include "suites/suites.h"

#include "util/embed.h"
#include "util/stats.h"
#include "util/util.h"

/* Its gates and tolerances (rules.conf beside this file), compiled in. */
EMBED_TEXT(suite_kvm_rules, "suites/kvm/rules.conf");

/* Operations timed per kind and round besides the inserts: deletes, moves, flag changes. */
#define OPS 256

static const unsigned int slot_counts[] = {1, 125, 509, 4096};

/* ---- the operation sequence, on the kernel and on the reference ---------------------------- */

enum op { O_INSERT, O_FLAGS, O_MOVE, O_DELETE_NEWEST, O_DELETE_OLDEST, O_KINDS };

static const char *const op_names[O_KINDS] = {"insert", "flags", "move", "delete_newest",
					      "delete_oldest"};

/* Cycles of each timed operation of one round, per kind. */
struct round_ops {
	double *cyc[O_KINDS];
	unsigned int n[O_KINDS];
};

static void record(struct round_ops *ro, enum op o, double c)
{
	ro->cyc[o][ro->n[o]++] = c;
}

/* Set slot @id at its place (or, with @delete, remove it), timed into @ro's @o unless @ro is
 * NULL. */
static int step(struct kvm_side *sd, const struct kvm_vm *v, unsigned int slots, unsigned int id,
		bool delete, struct round_ops *ro, enum op o, char *what, size_t what_len)
{
	struct memslot s = kvm_slot_at(id, slots, false, 0, v);
	double c;
	int ret;

	if (delete)
		s.npages = 0;
	ret = kvm_side_set(sd, &s, &c);
	if (!ret && ro && o != O_KINDS)
		record(ro, o, c);
	snprintf(what, what_len, "%s slot %u", delete ? "deleting" : "inserting", id);
	return ret;
}

/* Ops of each kind timed in a round at @slots slots. */
static unsigned int ops_at(unsigned int slots)
{
	return slots < OPS ? slots : OPS;
}

/*
 * Before the first round: the slots the rounds start from, the oldest slots - k, put in
 * untimed (the kernel's one by one, the reference's sorted in one go).
 */
static int prepare(struct kvm_side *sd, const struct kvm_vm *v, unsigned int slots, char *what,
		   size_t what_len)
{
	unsigned int base = slots - ops_at(slots);
	struct memslot *all;
	int ret = 0;

	if (sd->vm) {
		for (unsigned int id = 0; !ret && id < base; id++)
			ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
		return ret;
	}
	if (!base)
		return 0;
	all = malloc(base * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (unsigned int id = 0; id < base; id++)
		all[id] = kvm_slot_at(id, slots, false, 0, v);
	snprintf(what, what_len, "loading %u slots", base);
	ret = memslots_load(sd->ref, all, base);
	free(all);
	return ret;
}

/*
 * A round, from and back to the prepared slots (the oldest slots - k, k = min(slots, OPS)):
 * the k newest inserted, growing the set to @slots; dirty logging on and off on k/2 slots
 * spread over it; k/2 of them moved past the others and back; the k newest deleted, newest
 * first, and put back; the k oldest deleted, oldest first, and put back; the k newest
 * deleted again. Returns 0, or the -errno of the operation that failed, named in @what.
 */
static int run_round(struct kvm_side *sd, const struct kvm_vm *v, unsigned int slots,
		     struct round_ops *ro, char *what, size_t what_len)
{
	unsigned int k = ops_at(slots), base = slots - k, spread;
	double c;
	int ret = 0;

	if (!slots)
		return -EINVAL;
	spread = slots / (k / 2 ? k / 2 : 1);
	memset(ro->n, 0, sizeof(ro->n));
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, false, ro, O_INSERT, what, what_len);
	for (unsigned int j = 0; !ret && j < k / 2; j++) {
		unsigned int id = j * spread < slots ? j * spread : slots - 1;

		for (int on = 1; !ret && on >= 0; on--) {
			struct memslot s =
			    kvm_slot_at(id, slots, false, on ? KVM_MEM_LOG_DIRTY_PAGES : 0, v);

			if (!(ret = kvm_side_set(sd, &s, &c)))
				record(ro, O_FLAGS, c);
			snprintf(what, what_len, "dirty logging %s on slot %u", on ? "on" : "off",
				 id);
		}
		for (int away = 1; !ret && away >= 0; away--) {
			struct memslot s = kvm_slot_at(id, slots, away, 0, v);

			if (!(ret = kvm_side_set(sd, &s, &c)))
				record(ro, O_MOVE, c);
			snprintf(what, what_len, "moving slot %u", id);
		}
	}
	for (unsigned int j = 0; !ret && j < k; j++)
		ret = step(sd, v, slots, slots - 1 - j, true, ro, O_DELETE_NEWEST, what, what_len);
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
	for (unsigned int id = 0; !ret && id < k; id++)
		ret = step(sd, v, slots, id, true, ro, O_DELETE_OLDEST, what, what_len);
	for (unsigned int id = 0; !ret && id < k; id++)
		ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, true, NULL, O_KINDS, what, what_len);
	return ret;
}

/* ---- the memslots case --------------------------------------------------------------------- */

enum { ARM_KVM, ARM_REF, ARMS };
enum { ST_MEDIAN, ST_P99, STATS };
#define METRIC(arm, op, st) (((arm)*O_KINDS + (op)) * STATS + (st))
#define M_MEMSLOTS (ARMS * O_KINDS * STATS)

/* In METRIC()'s order: arm, then operation (enum op), then statistic. */
// clang-format off
#define OP_METRICS(arm, op) \
	{arm "." op ".median", "cycles", LOWER_IS_BETTER}, \
	{arm "." op ".p99", "cycles", LOWER_IS_BETTER}
#define ARM_METRICS(arm) \
	OP_METRICS(arm, "insert"), OP_METRICS(arm, "flags"), OP_METRICS(arm, "move"), \
	OP_METRICS(arm, "delete_newest"), OP_METRICS(arm, "delete_oldest")
// clang-format on

static const struct metric_def memslots_metrics[] = {ARM_METRICS("kvm"), ARM_METRICS("ref")};

static_assert(ARRAY_SIZE(memslots_metrics) == M_MEMSLOTS, "a metric per arm, operation, statistic");
static_assert(STATS == 2 && O_KINDS == 5,
	      "OP_METRICS and ARM_METRICS name each statistic and operation");

struct memslots_case {
	struct case_ctx *ctx;
	unsigned int slots;
	struct kvm_vm vm;
	struct memslots ref;
	bool have_ref;
	struct round_ops ro;
};

static void record_round(struct memslots_case *mc, unsigned int arm)
{
	for (unsigned int o = 0; o < O_KINDS; o++) {
		double *x = mc->ro.cyc[o];
		unsigned int n = mc->ro.n[o];

		if (!n)
			continue;
		qsort(x, n, sizeof(*x), util_cmp_double);
		case_sample(mc->ctx, METRIC(arm, o, ST_MEDIAN), stats_quantile_sorted(x, n, 0.5),
			    NULL);
		case_sample(mc->ctx, METRIC(arm, o, ST_P99), stats_quantile_sorted(x, n, 0.99),
			    NULL);
	}
}

static int memslots_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct memslots_case *mc = arg;
	struct kvm_side sd = {.vm = arm == ARM_KVM ? &mc->vm : NULL, .ref = &mc->ref};
	char what[64] = "";
	int ret;

	(void)round;
	if (arm == ARM_REF && !mc->have_ref)
		return 0;
	ret = run_round(&sd, &mc->vm, mc->slots, &mc->ro, what, sizeof(what));
	if (ret) {
		case_error(mc->ctx, "%s (%s): %s",
			   arm == ARM_KVM ? "KVM_SET_USER_MEMORY_REGION" : "the reference", what,
			   strerror(-ret));
		return ret;
	}
	if (measured)
		record_round(mc, arm);
	return 0;
}

/* Both sides at the slots the rounds start from. Returns 0 or -errno, @what saying where. */
static int prepare_sides(struct memslots_case *mc, char *what, size_t what_len)
{
	struct kvm_side kernel = {.vm = &mc->vm}, ref = {.ref = &mc->ref};
	int ret = prepare(&kernel, &mc->vm, mc->slots, what, what_len);

	return ret || !mc->have_ref ? ret : prepare(&ref, &mc->vm, mc->slots, what, what_len);
}

static void perf_memslots(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct memslots_case mc = {.ctx = ctx,
				   .slots = (unsigned int)atoi(case_param(ctx, "slots"))};
	struct case_arms arms = {.n = ARMS,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = memslots_sample,
				 .arg = &mc,
				 .ctx = ctx};
	struct mg_err err;
	char what[64] = "";
	int ret;

	if (!mc.slots || (int)mc.slots > case_hw(ctx)->kvm_max_memslots) {
		case_error(ctx, "%u slots: this KVM takes 1 to %d", mc.slots,
			   case_hw(ctx)->kvm_max_memslots);
		return;
	}
	for (unsigned int k = 0; k < O_KINDS; k++) {
		mc.ro.cyc[k] = malloc(sizeof(double) * OPS);
		if (!mc.ro.cyc[k]) {
			case_error(ctx, "out of memory");
			goto out;
		}
	}
	/* One past the slots: where the moved slot goes. */
	if ((ret = kvm_vm_open(&mc.vm, mc.slots + 1, &err)) || (ret = kvm_vm_fresh(&mc.vm, &err))) {
		if (ret == -EACCES || ret == -ENOENT)
			case_skip(ctx, "%s", err.msg);
		else
			case_error(ctx, "%s", err.msg);
		if (mc.vm.kvm >= 0)
			kvm_vm_close(&mc.vm);
		goto out;
	}
	/* The 2014 array holds 32,764 slots at most: beyond, the kernel runs alone. */
	mc.have_ref = !memslots_init(&mc.ref, mc.slots, MEMSLOTS_BY_GFN, MEMSLOTS_SHIFT,
				     MEMSLOTS_BINARY, true);
	if (!mc.have_ref)
		case_log(ctx, "no reference beside the kernel: the 2014 array takes 32,764 slots");
	for (unsigned int m = 0; m < M_MEMSLOTS; m++)
		case_counter(ctx, m, "tsc");
	case_prop(ctx, "tsc_mhz", "%.3f", case_hw(ctx)->tsc_hz / 1e6);
	kvm_prop_module(ctx);
	case_prop(ctx, "kvm_cap_nr_memslots", "%d", case_hw(ctx)->kvm_max_memslots);
	case_prop(ctx, "slot_mib", "%llu", SLOT_BYTES >> 20);
	case_prop(ctx, "ops_per_kind", "%u", ops_at(mc.slots));
	kvm_pin_first(ctx, NULL);
	if (!(ret = prepare_sides(&mc, what, sizeof(what))))
		case_interleave(&arms);
	else
		case_error(ctx, "preparing %u slots (%s): %s", mc.slots, what, strerror(-ret));
	if (mc.have_ref)
		memslots_release(&mc.ref);
	kvm_vm_close(&mc.vm);
out:
	for (unsigned int k = 0; k < O_KINDS; k++)
		free(mc.ro.cyc[k]);
}

static unsigned int expand_slots(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(slot_counts) && n < max; i++)
		if (hw->kvm != HW_PROBE_YES || (int)slot_counts[i] <= hw->kvm_max_memslots)
			case_params_add(&out[n++], "slots", "%u", slot_counts[i]);
	/* The host's own limit, asked of KVM_CHECK_EXTENSION, never assumed. */
	if (hw->kvm == HW_PROBE_YES && hw->kvm_max_memslots > 4096 && n < max)
		case_params_add(&out[n++], "slots", "%d", hw->kvm_max_memslots);
	return n;
}

/* ---- the suite ----------------------------------------------------------------------------- */

enum { C_MEMSLOTS, C_BUSY };

static const struct case_def kvm_cases[] = {
    [C_MEMSLOTS] = {.name = "memslots",
		    .kind = CASE_PERF,
		    .needs = NEEDS_HOST | NEEDS_KVM,
		    .doc = "KVM_SET_USER_MEMORY_REGION per operation (insert, flags, move, "
			   "deletes), beside the 2014 array",
		    CASE_METRICS(memslots_metrics),
		    .expand = expand_slots,
		    .run = perf_memslots},
    [C_BUSY] = {.name = "busy_guest",
		.kind = CASE_PERF,
		.needs = NEEDS_HOST | NEEDS_KVM,
		.doc = "a vCPU touching its memory while 256 slots come and go: its accesses/s "
		       "and the ioctls' cycles",
		CASE_METRICS(kvm_busy_metrics),
		.run = kvm_busy_run},
};

static void summary_memslots(FILE *f, const struct case_result *r, double mhz)
{
	fprintf(f, "%s\n  %-14s %10s %10s %10s %10s %8s\n", r->inst->name, "operation", "kernel us",
		"p99 us", "ref us", "ref p99", "kern/ref");
	for (unsigned int o = 0; o < O_KINDS; o++) {
		const struct metric_result *k = case_result_sampled(r,
								    METRIC(ARM_KVM, o, ST_MEDIAN)),
					   *kp = case_result_sampled(r, METRIC(ARM_KVM, o, ST_P99)),
					   *rf = case_result_sampled(r,
								     METRIC(ARM_REF, o, ST_MEDIAN)),
					   *rp = case_result_sampled(r, METRIC(ARM_REF, o, ST_P99));

		if (!k || !kp)
			continue;
		fprintf(f, "  %-14s %10.2f %10.2f", op_names[o], k->sum.median / mhz,
			kp->sum.median / mhz);
		if (rf && rp)
			fprintf(f, " %10.3f %10.3f %7.2fx", rf->sum.median / mhz,
				rp->sum.median / mhz, k->sum.median / rf->sum.median);
		fputc('\n', f);
	}
}
/* The TSC rate the case measured its cycles at, 0 when it did not say. */
static double tsc_mhz(const struct case_result *r)
{
	const char *v = case_result_prop(r, "tsc_mhz");

	return v ? atof(v) : 0;
}

static bool kvm_wanted(const struct case_result *r)
{
	return r->inst->suite == &suite_kvm && case_result_sampled(r, 0) && tsc_mhz(r) > 0;
}

static void kvm_row(FILE *f, const struct case_result *r)
{
	double mhz = tsc_mhz(r);

	if (r->inst->def == &kvm_cases[C_MEMSLOTS]) {
		summary_memslots(f, r, mhz);
		return;
	}
	fprintf(f,
		"%s: guest %.3g accesses/s alone, %.3g while slots change (%.2fx); insert %.2f "
		"us, delete %.2f us (medians)\n",
		r->inst->name, case_result_median(r, BUSY_IDLE_RATE),
		case_result_median(r, BUSY_RATE), case_result_median(r, BUSY_OVER_IDLE),
		case_result_median(r, BUSY_INSERT_MEDIAN) / mhz,
		case_result_median(r, BUSY_DELETE_MEDIAN) / mhz);
}

static const struct summary_table kvm_table = {.wanted = kvm_wanted, .row = kvm_row};

const struct suite_def suite_kvm = {
    .name = "kvm",
    .doc = "the host kernel's memslot ioctls per operation and slot count, beside the 2014 "
	   "array; a running vCPU meanwhile",
    SUITE_CASES(kvm_cases),
    .tables = (const struct summary_table *const[]){&kvm_table, NULL},
    /* The 2014 array memgate runs beside the kernel's ioctls. */
    .reference = (const char *const[]){"ref.*", NULL},
    .rules = suite_kvm_rules,
    .rules_file = "suites/kvm/rules.conf",
};
