/* suite_rcu.c - the N-disk boot (seed 003): boot time and heap RSS per trim policy. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl/boot.h"
#include "suites/gate.h"
#include "suites/runner.h"
#include "suites/suites.h"
#include "util/text.h"

/* 1 and 8 disks: a small guest; 60: the report in seed 003; 200: Paolo's reply to it. */
static const unsigned int boot_disks[] = {1, 8, 60, 200};

/* Past this many disks a sample (three boots) takes seconds here (16 s at 200 disks), and
 * no gate reads the figures: they are reported from at most this many samples. */
#define BOOT_REPORT_ONLY_DISKS 100
#define BOOT_REPORT_ONLY_SAMPLES 5

static const char *const policy_names[] = {"none", "every_batch", "idle"};
/* --impl rcu.trim values, in enum rcu_trim order. */
static const char *const trim_values[] = {"none", "every-batch", "idle"};

enum {
	B_BOOT_MS, B_HEAP_BOOT, B_HEAP_IDLE, B_RSS_IDLE, B_BATCHES, B_TRIMS, B_TRIM_MS, B_LOCK_WAIT,
	B_FAULTS,
	B_STATS
};

/* Metric POLICY.STAT, the three policies run in turn, each boot in a fresh process. */
#define BOOT_METRICS(p)                                                                            \
	{p ".boot_ms", "ms", LOWER_IS_BETTER}, {p ".anon_boot_kib", "KiB", LOWER_IS_BETTER},       \
	{p ".anon_idle_kib", "KiB", LOWER_IS_BETTER}, {p ".rss_idle_kib", "KiB", LOWER_IS_BETTER}, \
	{p ".batches", "batches", LOWER_IS_BETTER}, {p ".trims", "trims", LOWER_IS_BETTER},        \
	{p ".trim_ms", "ms", LOWER_IS_BETTER}, {p ".lock_wait_ms", "ms", LOWER_IS_BETTER},       \
	{p ".page_faults", "faults", LOWER_IS_BETTER}

/* The fourth group, impl, repeats the samples of the policy under test (--impl rcu.trim), so
 * that gates name one metric whatever the choice; no boot runs twice. */
#define IMPL_GROUP 3
static const struct metric_def boot_metrics[4 * B_STATS] = {
	BOOT_METRICS("none"), BOOT_METRICS("every_batch"), BOOT_METRICS("idle"),
	BOOT_METRICS("impl"),
};

static unsigned int expand_disks(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	for (size_t i = 0; i < sizeof(boot_disks) / sizeof(boot_disks[0]) && n < max; i++, n++) {
		case_params_add(&out[n], "disks", "%u", boot_disks[i]);
		case_params_add(&out[n], "impl", "%s", impl_get(opts->impl, "rcu.trim"));
	}
	return n;
}

/* One boot in a child process: a fresh heap, as a fresh QEMU has. */
static int boot_in_child(unsigned int disks, enum rcu_trim trim, uint64_t seed,
			 struct boot_result *r, struct mg_err *err)
{
	int fd[2], status;
	pid_t pid;
	ssize_t got;

	if (pipe(fd))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		struct boot_params p = {.disks = disks, .trim = trim, .seed = seed,
					.guest = true};
		struct boot_result res;
		struct mg_err e;
		int ok = !boot_run(&p, &res, &e);

		close(fd[0]);
		if (ok && write(fd[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(2);
		if (!ok)
			fprintf(stderr, "%s\n", e.msg);
		_exit(ok ? 0 : 1);
	}
	close(fd[1]);
	got = pid < 0 ? -1 : read(fd[0], r, sizeof(*r));
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || got != (ssize_t)sizeof(*r))
		return mg_err_set(err, EIO, "the boot of %u disks (%s) ended without a result",
				  disks, policy_names[trim]);
	return 0;
}

static void record(struct case_ctx *ctx, unsigned int policy, const struct boot_result *r)
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

static void perf_boot(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	unsigned int disks = (unsigned int)atoi(case_param(ctx, "disks"));
	unsigned int samples = o->samples, warmup = o->warmup;
	int impl = text_index(trim_values, 3, case_param(ctx, "impl"));
	const char *no_trim = rcu_trim_unsupported();

	if (no_trim) {
		case_skip(ctx, "the trim policies cannot be compared: %s", no_trim);
		return;
	}
	if (disks > BOOT_REPORT_ONLY_DISKS) {
		samples = samples < BOOT_REPORT_ONLY_SAMPLES ? samples : BOOT_REPORT_ONLY_SAMPLES;
		warmup = warmup < 1 ? warmup : 1;
	}
	for (unsigned int m = 0; m < 4 * B_STATS; m++)
		case_counter(ctx, m, "clock");
	for (unsigned int i = 0; i < warmup + samples; i++) {
		for (unsigned int j = 0; j < 3; j++) {
			unsigned int policy = (i + j) % 3;	/* in turn, rotating */
			struct boot_result r;
			struct mg_err err;

			if (boot_in_child(disks, (enum rcu_trim)policy, o->seed + i, &r, &err)) {
				case_error(ctx, "%s", err.msg);
				return;
			}
			if (r.reader_bad) {
				case_fail(ctx, "the vCPU saw a freed memory map %" PRIu64 " times (%s)",
					  r.reader_bad, policy_names[policy]);
				return;
			}
			/* The model's own arithmetic: every access a real exit, the commits counted. */
			if (r.guest_exits != (uint64_t)BOOT_ACCESSES_PER_DISK * disks ||
			    r.commits != (uint64_t)BOOT_COMMITS_PER_DISK * disks) {
				case_error(ctx, "%u disks: %" PRIu64 " guest exits and %" PRIu64
					   " commits, expected %u and %u", disks, r.guest_exits,
					   r.commits, BOOT_ACCESSES_PER_DISK * disks,
					   BOOT_COMMITS_PER_DISK * disks);
				return;
			}
			if (i < warmup)
				continue;
			record(ctx, policy, &r);
			if ((int)policy == impl)
				record(ctx, IMPL_GROUP, &r);
		}
	}
}

/* ---- checks: the RCU's promises, in the child, on the real call_rcu thread ------------- */

#define STRESS_SECTIONS 20000
#define MAGIC_LIVE 0x600dcafeu

struct obj {
	struct rcu_head head;	/* first: callbacks get the object back */
	unsigned int magic;
	unsigned long id;	/* unique: a freed and reused object has another */
};

struct stress {
	struct obj *shared;
	unsigned long next_id, bad;
	int stop;
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

		o->magic = MAGIC_LIVE;
		o->id = __atomic_add_fetch(&s->next_id, 1, __ATOMIC_RELAXED);
		old = __atomic_exchange_n(&s->shared, o, __ATOMIC_ACQ_REL);
		if (old)
			call_rcu(&old->head, poison_free);
	}
	return NULL;
}

/* Readers never see freed memory while writers replace and call_rcu-free under them. */
static void check_stress(struct case_ctx *ctx)
{
	struct stress s = {0};
	pthread_t r[3], w[2];
	struct rcu_stats st;

	if (rcu_start(RCU_TRIM_NONE, NULL)) {
		case_error(ctx, "cannot start the call_rcu thread");
		return;
	}
	for (int i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, stress_reader, &s);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, stress_writer, &s);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	drain_call_rcu();
	rcu_get_stats(&st);
	rcu_stop();
	if (s.shared)
		poison_free(&s.shared->head);
	case_prop(ctx, "replacements", "%lu", s.next_id);
	case_prop(ctx, "batches", "%" PRIu64, st.batches);
	if (s.bad)
		case_fail(ctx, "readers saw a freed object %lu times in %d sections x 3 readers "
			       "(%lu replacements)", s.bad, STRESS_SECTIONS, s.next_id);
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

static void enqueue(int *runs, int n)
{
	for (int i = 0; i < n; i++) {
		struct counted *c = malloc(sizeof(*c));

		c->runs = &runs[i];
		call_rcu(&c->head, count_run);
	}
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
		enqueue(runs, RCU_CALL_MIN_SIZE);
		drain_call_rcu();
		for (int i = 0; i < RCU_CALL_MIN_SIZE; i++)
			if (runs[i] != 1)
				case_fail(ctx, "%s: callback %d ran %d times before drain returned",
					  policy_names[p], i, runs[i]);
		enqueue(runs, 5);
		drain_call_rcu();
		rcu_stop();
		rcu_get_stats(&st);
		if (st.batches != 2)
			case_fail(ctx, "%s: %" PRIu64 " batches for 31 then 6 callbacks, expected 2",
				  policy_names[p], st.batches);
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

static const struct case_def rcu_cases[] = {
	{.name = "stress", .group = "check", .kind = CASE_CHECK,
	 .doc = "3 readers, 2 writers: no reader ever sees a freed object; every callback ran",
	 .run = check_stress},
	{.name = "queue", .group = "check", .kind = CASE_CHECK,
	 .doc = "callbacks once, drain, the batching rule, when each trim policy trims",
	 .run = check_queue},
	{.name = "boot", .group = "perf", .kind = CASE_PERF, .needs = NEEDS_HOST | NEEDS_KVM,
	 .doc = "N disks realised and their BARs programmed: boot time and heap RSS per policy",
	 .metrics = boot_metrics, .n_metrics = 4 * B_STATS, .expand = expand_disks,
	 .run = perf_boot},
};

#define BOOT60 "rcu.perf.boot\\[disks=60,*"
#define WHY_BOOT "trimming must not slow the 60-disk boot by more than 5% (seed 003: a trim " \
		 "after every batch made it 200+ s slower; QEMU kept the trim for when the queue " \
		 "is empty)"
#define WHY_RSS "the trim is there to give memory back: at most 70% of the untrimmed heap " \
		"after the idle pause (seed 003: 14,260 kB down to 6,940 kB, 49%)"

/* Paired: each sample boots every policy in turn, so the ratios cancel the drift. */
static const struct gate_def rcu_gates[] = {
	{.name = "boot_time[disks=60]", .kind = GATE_NOT_SLOWER, .paired = true,
	 .a = {BOOT60, "impl.boot_ms"}, .b = {BOOT60, "none.boot_ms"}, .threshold = 1.05,
	 .why = WHY_BOOT},
	{.name = "heap_after_idle[disks=60]", .kind = GATE_RATIO_AT_MOST, .paired = true,
	 .a = {BOOT60, "impl.anon_idle_kib"}, .b = {BOOT60, "none.anon_idle_kib"},
	 .threshold = 0.70, .why = WHY_RSS},
};

static double med(const struct case_result *r, unsigned int m)
{
	return r->metrics && r->metrics[m].n ? r->metrics[m].sum.median : 0;
}

/* Boot time and heap per policy and disk count, the every-batch / none ratio beside. */
static char *rcu_summary(const struct case_result *results, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct case_result *r = &results[i];

		if (r->inst->def->run != perf_boot || !med(r, B_BOOT_MS))
			continue;
		if (!f && !(f = open_memstream(&buf, &len)))
			return NULL;
		if (!len)
			fprintf(f, "rcu: %-6s %-12s %9s %14s %14s %8s %6s %8s %10s %9s\n", "disks",
				"policy", "boot ms", "anon boot KiB", "anon idle KiB", "batches",
				"trims", "trim ms", "lock wait", "faults");
		for (unsigned int p = 0; p < 3; p++) {
			unsigned int b = p * B_STATS;

			fprintf(f, "     %-6s %-12s %9.1f %14.0f %14.0f %8.0f %6.0f %8.1f %10.1f %9.0f\n",
				case_params_get(&r->inst->params, "disks"), policy_names[p],
				med(r, b + B_BOOT_MS), med(r, b + B_HEAP_BOOT),
				med(r, b + B_HEAP_IDLE), med(r, b + B_BATCHES), med(r, b + B_TRIMS),
				med(r, b + B_TRIM_MS), med(r, b + B_LOCK_WAIT), med(r, b + B_FAULTS));
		}
		fprintf(f, "     every_batch / none boot time: %.2f\n",
			med(r, B_STATS) / med(r, 0));
		fflush(f);
	}
	if (f) {
		fprintf(f, "published (seed 003): heap Rss 14,260 kB without trim, 6,940 kB with "
			   "it; 60 disks booted 200+ s slower with a trim after every batch\n");
		fclose(f);
	}
	return buf;
}

const struct suite_def suite_rcu = {
	.name = "rcu",
	.doc = "RCU and malloc_trim: the N-disk boot per trim policy",
	.cases = rcu_cases,
	.n_cases = sizeof(rcu_cases) / sizeof(rcu_cases[0]),
	.gates = rcu_gates,
	.n_gates = sizeof(rcu_gates) / sizeof(rcu_gates[0]),
	.summary = rcu_summary,
};
