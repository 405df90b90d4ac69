/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the rcu suite: the N-disk boot (the 2017 malloc_trim thread): boot time and heap RSS
 * per trim policy. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/result.h"
#include "run/sampling.h"
#include "hw/counter.h"
#include "impl/kvm_guest.h"
#include "impl/rcu_boot.h"
#include "suites/suites.h"

#include "util/embed.h"
#include "util/util.h"

/* Its gates and tolerances (rules.conf beside this file), compiled in. */
EMBED_TEXT(suite_rcu_rules, "suites/rcu/rules.conf");

/* 1 and 8 disks: a small guest; 60: the report in the 2017 malloc_trim thread; 200 (with --long):
 * Paolo's reply to it. */
static const unsigned int boot_disks[] = {1, 8, 60, 200};

/* Past this many disks a sample (three boots) takes seconds here (16 s at 200 disks), and
 * no gate reads the figures: they are reported from at most this many samples. */
#define BOOT_REPORT_ONLY_DISKS 100
#define BOOT_REPORT_ONLY_SAMPLES 5

enum {
	B_BOOT_MS,
	B_HEAP_BOOT,
	B_HEAP_IDLE,
	B_RSS_IDLE,
	B_BATCHES,
	B_TRIMS,
	B_TRIM_MS,
	B_LOCK_WAIT,
	B_FAULTS,
	B_STATS
};

/* Metric POLICY.STAT, the three policies run in turn, each boot in a fresh process. */
/* clang-format off */
#define BOOT_METRICS(p)							\
	{p ".boot_ms", "ms", LOWER_IS_BETTER},				\
	{p ".anon_boot_kib", "KiB", LOWER_IS_BETTER},			\
	{p ".anon_idle_kib", "KiB", LOWER_IS_BETTER},			\
	{p ".rss_idle_kib", "KiB", LOWER_IS_BETTER},			\
	{p ".batches", "batches", LOWER_IS_BETTER},			\
	{p ".trims", "trims", LOWER_IS_BETTER},				\
	{p ".trim_ms", "ms", LOWER_IS_BETTER},				\
	{p ".lock_wait_ms", "ms", LOWER_IS_BETTER},			\
	{p ".page_faults", "faults", LOWER_IS_BETTER}
/* clang-format on */
static_assert(sizeof((struct metric_def[]){BOOT_METRICS("")}) ==
		  B_STATS * sizeof(struct metric_def),
	      "BOOT_METRICS() names each of the B_ stats, in their order");

/* The fourth group, impl, repeats the samples of the policy under test (--impl rcu.trim), so
 * that gates name one metric whatever the choice; no boot runs twice. */
#define IMPL_GROUP RCU_TRIM_POLICIES
static const struct metric_def boot_metrics[(RCU_TRIM_POLICIES + 1) * B_STATS] = {
    BOOT_METRICS("none"),
    BOOT_METRICS("every_batch"),
    BOOT_METRICS("idle"),
    BOOT_METRICS("impl"),
};
static_assert(RCU_TRIM_NONE == 0 && RCU_TRIM_EVERY_BATCH == 1 && RCU_TRIM_IDLE == 2,
	      "the metric groups follow enum rcu_trim");

/* Its --impl key: the trim policies impl/rcu.c names. */
static const struct impl_key rcu_trim_key = {
    .key = "rcu.trim",
    .names = rcu_trim_names,
    .n_names = RCU_TRIM_POLICIES,
    .def = RCU_TRIM_IDLE,
    .doc = "when the call_rcu thread calls malloc_trim (idle: what QEMU kept)"};

static unsigned int expand_disks(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max)
{
	(void)hw;
	/* The reported-only boots take minutes: with --long. */
	return case_expand_values("disks", boot_disks, ARRAY_SIZE(boot_disks),
				  BOOT_REPORT_ONLY_DISKS, &rcu_trim_key, opts, out, max);
}

static void record(struct case_ctx *ctx, unsigned int policy, const struct rcu_boot_result *r)
{
	unsigned int b = policy * B_STATS;

	case_sample(ctx, b + B_BOOT_MS, r->boot_ms, NULL);
	case_sample(ctx, b + B_HEAP_BOOT, (double)r->heap_boot_kib, NULL);
	case_sample(ctx, b + B_HEAP_IDLE, (double)r->heap_idle_kib, NULL);
	case_sample(ctx, b + B_RSS_IDLE, (double)r->rss_idle_kib, NULL);
	case_sample(ctx, b + B_BATCHES, (double)r->rcu.batches, NULL);
	case_sample(ctx, b + B_TRIMS, (double)r->rcu.trims, NULL);
	case_sample(ctx, b + B_TRIM_MS, (double)r->rcu.trim_ns / 1e6, NULL);
	case_sample(ctx, b + B_LOCK_WAIT, r->main_lock_wait_ms, NULL);
	case_sample(ctx, b + B_FAULTS, (double)r->minor_faults, NULL);
}

/* One boot in a fresh process: a fresh heap, as a fresh QEMU has. */
static int boot_fresh(void *arg, void *out, struct mg_err *err)
{
	return rcu_boot_run(arg, out, err);
}

struct boot_case {
	struct case_ctx *ctx;
	unsigned int disks;
	int impl; /* the policy under test (--impl rcu.trim) */
	uint64_t seed;
	uint64_t model_exit_ns; /* 0: a real KVM guest */
	double exit_ns_sum;	/* the measured boots' mean round trips, summed */
	unsigned int boots;
};

/* One sample of policy @arm: boot, check the model's own arithmetic, record. */
static int boot_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct boot_case *bc = arg;
	struct rcu_boot_params p = {.disks = bc->disks,
				    .trim = (enum rcu_trim)arm,
				    .seed = bc->seed + round,
				    .guest = true,
				    .modelled_exit_ns = bc->model_exit_ns};
	struct rcu_boot_result r;
	struct mg_err err;

	if (case_fork(bc->ctx, boot_fresh, &p, &r, sizeof(r), &err)) {
		case_error(bc->ctx, "the boot of %u disks (%s): %s", bc->disks,
			   rcu_trim_name(p.trim), err.msg);
		return -1;
	}
	if (r.reader_bad) {
		case_fail(bc->ctx, "the vCPU saw a freed memory map %" PRIu64 " times (%s)",
			  r.reader_bad, rcu_trim_name(p.trim));
		return -1;
	}
	/* Every access a real exit, the commits counted. */
	if (r.guest_exits != (uint64_t)RCU_BOOT_ACCESSES_PER_DISK * bc->disks ||
	    r.commits != (uint64_t)RCU_BOOT_COMMITS_PER_DISK * bc->disks) {
		case_error(
		    bc->ctx,
		    "%u disks: %" PRIu64 " guest exits and %" PRIu64 " commits, expected %u and %u",
		    bc->disks, r.guest_exits, r.commits, RCU_BOOT_ACCESSES_PER_DISK * bc->disks,
		    RCU_BOOT_COMMITS_PER_DISK * bc->disks);
		return -1;
	}
	if (measured) {
		record(bc->ctx, arm, &r);
		bc->exit_ns_sum += r.guest_exit_ns;
		bc->boots++;
		if ((int)arm == bc->impl)
			record(bc->ctx, IMPL_GROUP, &r);
	}
	return 0;
}

/*
 * The vCPU behind the accesses: KVM's where /dev/kvm is usable (or asked for with --guest kvm),
 * else modelled (impl/kvm_guest.h), so that the 60-disk gates run on every agent. Both are said,
 * as a property and, where KVM is missing, as a WARN. Returns false when the case SKIPs.
 */
static bool choose_guest(struct case_ctx *ctx, struct boot_case *bc)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	bool kvm =
	    o->guest == RUN_GUEST_KVM || (o->guest == RUN_GUEST_AUTO && hw->kvm == HW_PROBE_YES);

	if (kvm && hw->kvm != HW_PROBE_YES) {
		case_skip(ctx, "--guest kvm: %s", hw->kvm_detail);
		return false;
	}
	bc->model_exit_ns = kvm ? 0 : o->guest_exit_ns ? o->guest_exit_ns : GUEST_MODEL_EXIT_NS;
	case_prop(ctx, "guest", "%s", kvm ? "kvm" : "modelled");
	if (kvm)
		return true;
	case_prop(ctx, "guest.model_exit_ns", "%" PRIu64, bc->model_exit_ns);
	if (o->guest == RUN_GUEST_AUTO)
		case_warn(ctx,
			  "%s: the guest is modelled, each exit %" PRIu64 " ns of the vCPU thread "
			  "outside the big lock (--guest-exit-ns)",
			  hw->kvm_detail, bc->model_exit_ns);
	return true;
}

static void perf_boot(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct boot_case bc = {.ctx = ctx,
			       .disks = (unsigned int)atoi(case_param(ctx, "disks")),
			       .impl = rcu_trim_parse(case_param(ctx, "impl")),
			       .seed = o->seed};
	/* The three policies in turn, each boot in a fresh process: so the smoke run (--quick
	 * without --warmup) warms nothing up, as it boots QEMU's guests. */
	struct case_arms arms = {.n = RCU_TRIM_POLICIES,
				 .warmup = o->quick && !o->warmup_set ? 0 : o->warmup,
				 .samples = o->samples,
				 .sample = boot_sample,
				 .arg = &bc,
				 .ctx = ctx};
	const char *no_trim = rcu_trim_unsupported();

	if (no_trim) {
		case_skip(ctx, "the trim policies cannot be compared: %s", no_trim);
		return;
	}
	if (!choose_guest(ctx, &bc))
		return;
	if (bc.disks > BOOT_REPORT_ONLY_DISKS) {
		arms.samples = arms.samples < BOOT_REPORT_ONLY_SAMPLES ? arms.samples
								       : BOOT_REPORT_ONLY_SAMPLES;
		arms.warmup = arms.warmup < 1 ? arms.warmup : 1;
	}
	for (unsigned int m = 0; m < ARRAY_SIZE(boot_metrics); m++)
		case_counter(ctx, m, "clock");
	case_interleave(&arms);
	/* The exits' measured mean round trip: where KVM ran, the figure to set the model by
	 * (--guest-exit-ns); where modelled, the model's own time and its overshoot. */
	if (bc.boots)
		case_prop(ctx, "guest.exit_ns", "%.0f", bc.exit_ns_sum / bc.boots);
}

/* ---- checks: the RCU's promises, in the child, on the real call_rcu thread ------------- */

#define STRESS_SECTIONS 20000
#define MAGIC_LIVE 0x600dcafeu

struct obj {
	struct rcu_head head; /* first: callbacks get the object back */
	unsigned int magic;
	unsigned long id; /* unique: a freed and reused object has another */
};

struct stress {
	struct obj *shared;
	unsigned long next_id, bad;
	int stop;
	int no_memory; /* a writer's malloc failed */
};

static void poison_free(struct rcu_head *h)
{
	memset(h, 0x6b, sizeof(struct obj));
	free(h);
}

static void *stress_reader(void *arg)
{
	struct stress *s = arg;

	rcu_register_thread();
	for (int k = 0; k < STRESS_SECTIONS; k++) {
		struct obj *o;
		unsigned long id;

		rcu_read_lock();
		o = rcu_dereference(s->shared);
		id = o ? __atomic_load_n(&o->id, __ATOMIC_RELAXED) : 0;
		/* Preempted inside now and then, as readers are: 2 ms lets the others run. */
		if ((k & 255) == 0)
			nanosleep(&(struct timespec){0, 2000000}, NULL);
		if (o && (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != MAGIC_LIVE ||
			  __atomic_load_n(&o->id, __ATOMIC_RELAXED) != id))
			__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return NULL;
}

static void *stress_writer(void *arg)
{
	struct stress *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct obj *o = malloc(sizeof(*o)), *old;

		if (!o) {
			__atomic_store_n(&s->no_memory, 1, __ATOMIC_RELAXED);
			break;
		}
		o->magic = MAGIC_LIVE;
		o->id = __atomic_add_fetch(&s->next_id, 1, __ATOMIC_RELAXED);
		old = __atomic_exchange_n(&s->shared, o, __ATOMIC_ACQ_REL);
		if (old)
			call_rcu(&old->head, poison_free);
	}
	return NULL;
}

#define STRESS_READERS 3
#define STRESS_WRITERS 2

/*
 * Start the readers and then the writers into @r and @w, stopping at the first failure:
 * *@nr and *@nw say how many run. Returns 0 or the error of pthread_create().
 */
static int stress_threads(struct stress *s, pthread_t *r, int *nr, pthread_t *w, int *nw)
{
	int ret = 0;

	for (*nr = 0; !ret && *nr < STRESS_READERS; *nr += !ret)
		ret = pthread_create(&r[*nr], NULL, stress_reader, s);
	for (*nw = 0; !ret && *nw < STRESS_WRITERS; *nw += !ret)
		ret = pthread_create(&w[*nw], NULL, stress_writer, s);
	return ret;
}

/* Readers never see freed memory while writers replace and call_rcu-free under them. */
static void check_stress(struct case_ctx *ctx)
{
	struct stress s = {0};
	pthread_t r[STRESS_READERS], w[STRESS_WRITERS];
	struct rcu_stats st;
	int ret, nr, nw;

	if (rcu_start(RCU_TRIM_NONE, NULL)) {
		case_error(ctx, "cannot start the call_rcu thread");
		return;
	}
	/* The readers run a fixed number of sections; the writers until they are told. */
	ret = stress_threads(&s, r, &nr, w, &nw);
	for (int i = 0; i < nr; i++)
		pthread_join(r[i], NULL);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	drain_call_rcu();
	rcu_get_stats(&st);
	rcu_stop();
	if (s.shared)
		poison_free(&s.shared->head);
	if (ret) {
		case_error(ctx, "cannot start the reader and writer threads: pthread_create: %s",
			   strerror(ret));
		return;
	}
	if (s.no_memory) {
		case_error(ctx, "a writer ran out of memory");
		return;
	}
	case_prop(ctx, "replacements", "%lu", s.next_id);
	case_prop(ctx, "batches", "%" PRIu64, st.batches);
	if (s.bad)
		case_fail(ctx,
			  "readers saw a freed object %lu times in %d sections x %d readers "
			  "(%lu replacements)",
			  s.bad, STRESS_SECTIONS, STRESS_READERS, s.next_id);
	/* Every replaced object was freed once, and drain_call_rcu() added one callback. */
	if (st.callbacks != s.next_id)
		case_fail(ctx, "%" PRIu64 " callbacks ran for %lu objects replaced and one drain",
			  st.callbacks, s.next_id - 1);
}

struct counted {
	struct rcu_head head;
	int *runs;
};

static void count_run(struct rcu_head *h)
{
	__atomic_fetch_add(((struct counted *)h)->runs, 1, __ATOMIC_RELAXED);
	free(h);
}

/* Queue @n counted callbacks; -ENOMEM when one could not be allocated. */
static int enqueue(int *runs, int n)
{
	for (int i = 0; i < n; i++) {
		struct counted *c = malloc(sizeof(*c));

		if (!c)
			return -ENOMEM;
		c->runs = &runs[i];
		call_rcu(&c->head, count_run);
	}
	return 0;
}

/*
 * Each callback once, drain_call_rcu() after all earlier ones, the batching rule on a known
 * arrival pattern (30 at once: one batch; 5 more: one more after the five sleeps), and each
 * trim policy trimming when it should (where malloc_trim gives nothing back, its calls are
 * still counted: the rule is checked, and the log says so).
 */
static void check_queue(struct case_ctx *ctx)
{
	static int runs[RCU_CALL_MIN_SIZE];
	struct rcu_stats st;
	const char *no_trim = rcu_trim_unsupported();

	if (no_trim)
		case_log(ctx, "the trims are no-ops here: %s", no_trim);
	for (int p = RCU_TRIM_NONE; p <= RCU_TRIM_IDLE; p++) {
		memset(runs, 0, sizeof(runs));
		if (rcu_start((enum rcu_trim)p, NULL)) {
			case_error(ctx, "cannot start the call_rcu thread");
			return;
		}
		if (enqueue(runs, RCU_CALL_MIN_SIZE)) {
			rcu_stop();
			case_error(ctx, "out of memory queueing callbacks");
			return;
		}
		drain_call_rcu();
		for (int i = 0; i < RCU_CALL_MIN_SIZE; i++)
			if (runs[i] != 1)
				case_fail(ctx, "%s: callback %d ran %d times before drain returned",
					  rcu_trim_name((enum rcu_trim)p), i, runs[i]);
		if (enqueue(runs, 5)) {
			rcu_stop();
			case_error(ctx, "out of memory queueing callbacks");
			return;
		}
		drain_call_rcu();
		/* The idle trim follows the thread's sleep: on a loaded machine, later (2 s at
		 * most). */
		if (p == RCU_TRIM_IDLE)
			rcu_wait_trims(1, 2000);
		rcu_stop();
		rcu_get_stats(&st);
		if (st.batches != 2)
			case_fail(ctx,
				  "%s: %" PRIu64 " batches for 31 then 6 callbacks, expected 2",
				  rcu_trim_name((enum rcu_trim)p), st.batches);
		if (p == RCU_TRIM_NONE && st.trims)
			case_fail(ctx, "none: %" PRIu64 " trims", st.trims);
		if (p == RCU_TRIM_EVERY_BATCH && st.trims != st.batches)
			case_fail(ctx, "every_batch: %" PRIu64 " trims for %" PRIu64 " batches",
				  st.trims, st.batches);
		if (p == RCU_TRIM_IDLE && (!st.trims || st.trims_not_idle))
			case_fail(ctx, "idle: %" PRIu64 " trims, %" PRIu64 " with callbacks queued",
				  st.trims, st.trims_not_idle);
	}
}

/* ---- the read side and the queue, counted (--counter) ----------------------------------- */

/* Read-side sections a sample counts, and callbacks queued: fewer than RCU_CALL_MIN_SIZE, so
 * that the call_rcu thread is woken but does not start a batch in the middle of them. */
#define OPS_READS 1024
#define OPS_CALLS 16

enum { O_READ, O_CALL, O_READ_D1, O_CALL_D1, O_READ_LL, O_CALL_LL, O_METRICS };

static const struct metric_def ops_metrics[O_METRICS] = {
    {"read_lock_unlock", "cycles", LOWER_IS_BETTER},
    {"call_rcu", "cycles", LOWER_IS_BETTER},
    {"read_lock_unlock.d1_misses", "misses", LOWER_IS_BETTER},
    {"call_rcu.d1_misses", "misses", LOWER_IS_BETTER},
    {"read_lock_unlock.ll_misses", "misses", LOWER_IS_BETTER},
    {"call_rcu.ll_misses", "misses", LOWER_IS_BETTER},
};

static void ops_nothing(struct rcu_head *head)
{
	(void)head;
}

struct ops_case {
	struct case_ctx *ctx;
	struct counter counter;
	struct rcu_head heads[OPS_CALLS];
};

/* One figure per operation of @what (O_READ or O_CALL), its misses beside it when simulated. */
static void ops_record(struct ops_case *oc, unsigned int what, const struct counter_reading *r,
		       double ops, const struct measure_span *span)
{
	case_sample(oc->ctx, what, r->value / ops, span);
	if (oc->counter.kind != COUNTER_SIMULATED)
		return;
	case_sample(oc->ctx, what + O_READ_D1, r->d1_misses / ops, span);
	case_sample(oc->ctx, what + O_READ_LL, r->ll_misses / ops, span);
}

/* A sample of arm 0: OPS_READS empty read-side sections; of arm 1: OPS_CALLS callbacks queued
 * on an empty queue, the call_rcu thread waiting (drained before, run after the count). */
static int ops_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct ops_case *oc = arg;
	struct measure_span span;
	struct counter_reading r;
	int ret;

	(void)round;
	if (arm == 1)
		drain_call_rcu();
	counter_span_begin(&oc->counter, &span);
	counter_start(&oc->counter);
	if (arm == 0) {
		for (unsigned int i = 0; i < OPS_READS; i++) {
			rcu_read_lock();
			rcu_read_unlock();
		}
	} else {
		for (unsigned int i = 0; i < OPS_CALLS; i++)
			call_rcu(&oc->heads[i], ops_nothing);
	}
	ret = counter_stop(&oc->counter, &r);
	counter_span_end(&oc->counter, &span);
	if (arm == 1)
		drain_call_rcu();
	if (ret) {
		case_error(oc->ctx, "the %s counter could not be read: %s",
			   counter_name(oc->counter.kind), strerror(-ret));
		return ret;
	}
	if (measured)
		ops_record(oc, arm, &r, arm == 0 ? OPS_READS : OPS_CALLS, &span);
	return 0;
}

static void perf_ops(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct ops_case oc = {.ctx = ctx};
	struct case_arms arms = {.n = 2,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = ops_sample,
				 .arg = &oc,
				 .ctx = ctx};
	int ret;

	if (case_counter_open(ctx, &oc.counter))
		return;
	ret = rcu_start(RCU_TRIM_NONE, NULL);
	if (ret) {
		case_error(ctx, "rcu_start: %s", strerror(-ret));
	} else {
		rcu_register_thread();
		case_interleave(&arms);
		rcu_unregister_thread();
		rcu_stop();
	}
	counter_close(&oc.counter);
}

static const struct case_def rcu_cases[] = {
    {.name = "stress",
     .kind = CASE_CHECK,
     .doc = "3 readers, 2 writers: no reader ever sees a freed object; every callback ran",
     .run = check_stress},
    {.name = "queue",
     .kind = CASE_CHECK,
     .doc = "callbacks once, drain, the batching rule, when each trim policy trims",
     .run = check_queue},
    {.name = "boot",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "N disks realised and their BARs programmed: boot time and heap RSS per policy",
     CASE_METRICS(boot_metrics),
     .expand = expand_disks,
     .run = perf_boot},
    {.name = "ops",
     .kind = CASE_PERF,
     .doc = "cycles (--counter: instructions) of an empty read-side section and of a call_rcu",
     CASE_METRICS(ops_metrics),
     .counted = true,
     .run = perf_ops},
};

static bool rcu_wanted(const struct case_result *r)
{
	return r->inst->def->run == perf_boot && case_result_median(r, B_BOOT_MS);
}

static void rcu_row(FILE *f, const struct case_result *r)
{
	for (unsigned int p = 0; p < RCU_TRIM_POLICIES; p++) {
		unsigned int b = p * B_STATS;

		fprintf(
		    f, "     %-6s %-12s %9.1f %14.0f %14.0f %8.0f %6.0f %8.1f %10.1f %9.0f\n",
		    case_params_get(&r->inst->params, "disks"), rcu_trim_name((enum rcu_trim)p),
		    case_result_median(r, b + B_BOOT_MS), case_result_median(r, b + B_HEAP_BOOT),
		    case_result_median(r, b + B_HEAP_IDLE), case_result_median(r, b + B_BATCHES),
		    case_result_median(r, b + B_TRIMS), case_result_median(r, b + B_TRIM_MS),
		    case_result_median(r, b + B_LOCK_WAIT), case_result_median(r, b + B_FAULTS));
	}
	fprintf(f, "     every_batch / none boot time: %.2f\n",
		case_result_median(r, B_STATS) / case_result_median(r, 0));
}

/* Boot time and heap per policy and disk count, the every-batch / none ratio beside. */
static const struct summary_table rcu_table = {
    .header = "rcu: disks  policy         boot ms  anon boot KiB  anon idle KiB  batches  "
	      "trims  trim ms  lock wait    faults\n",
    .published = "published (2017 malloc_trim thread): heap Rss 14,260 kB without trim, "
		 "6,940 kB with it; 60 disks booted 200+ s slower with a trim after "
		 "every batch\n",
    .wanted = rcu_wanted,
    .row = rcu_row};

const struct suite_def suite_rcu = {
    .name = "rcu",
    .doc = "RCU and malloc_trim: the N-disk boot per trim policy",
    SUITE_CASES(rcu_cases),
    .tables = (const struct summary_table *const[]){&rcu_table, NULL},
    .impl_keys = (const struct impl_key *const[]){&rcu_trim_key, NULL},
    .rules = suite_rcu_rules,
    .rules_file = "suites/rcu/rules.conf",
};
