/* suite_rcu.c - the N-disk boot (seed 003): boot time and heap RSS per trim policy. */
#include <errno.h>
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

static const char *const policy_names[] = {"none", "every_batch", "idle"};
/* --impl rcu.trim values, in enum rcu_trim order. */
static const char *const trim_values[] = {"none", "every-batch", "idle"};

enum { B_BOOT_MS, B_HEAP_BOOT, B_HEAP_IDLE, B_RSS_IDLE, B_BATCHES, B_TRIMS, B_TRIM_MS, B_STATS };

/* Metric POLICY.STAT, the three policies run in turn, each boot in a fresh process. */
#define BOOT_METRICS(p)                                                                            \
	{p ".boot_ms", "ms", LOWER_IS_BETTER}, {p ".anon_boot_kib", "KiB", LOWER_IS_BETTER},       \
	{p ".anon_idle_kib", "KiB", LOWER_IS_BETTER}, {p ".rss_idle_kib", "KiB", LOWER_IS_BETTER}, \
	{p ".batches", "batches", LOWER_IS_BETTER}, {p ".trims", "trims", LOWER_IS_BETTER},        \
	{p ".trim_ms", "ms", LOWER_IS_BETTER}

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
		snprintf(out[n].p[0].name, sizeof(out[n].p[0].name), "disks");
		snprintf(out[n].p[0].value, sizeof(out[n].p[0].value), "%u", boot_disks[i]);
		snprintf(out[n].p[1].name, sizeof(out[n].p[1].name), "impl");
		snprintf(out[n].p[1].value, sizeof(out[n].p[1].value), "%s",
			 impl_get(opts->impl, "rcu.trim"));
		out[n].n = 2;
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
		struct boot_params p = {.disks = disks, .trim = trim, .seed = seed};
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
}

static void perf_boot(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	unsigned int disks = (unsigned int)atoi(case_param(ctx, "disks"));

	if (!rcu_can_trim()) {
		case_skip(ctx, "this allocator has no malloc_trim (jemalloc, tcmalloc)");
		return;
	}
	int impl = text_index(trim_values, 3, case_param(ctx, "impl"));

	for (unsigned int m = 0; m < 4 * B_STATS; m++)
		case_counter(ctx, m, "clock");
	for (unsigned int i = 0; i < o->warmup + o->samples; i++) {
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
			if (i < o->warmup)
				continue;
			record(ctx, policy, &r);
			if ((int)policy == impl)
				record(ctx, IMPL_GROUP, &r);
		}
	}
}

static const struct case_def rcu_cases[] = {
	{.name = "boot", .group = "perf", .kind = CASE_PERF, .needs = NEEDS_HOST,
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

		if (r->inst->def != &rcu_cases[0] || !med(r, B_BOOT_MS))
			continue;
		if (!f && !(f = open_memstream(&buf, &len)))
			return NULL;
		if (!len)
			fprintf(f, "rcu: %-6s %-12s %9s %15s %15s %8s %6s\n", "disks", "policy",
				"boot ms", "anon boot KiB", "anon idle KiB", "batches", "trims");
		for (unsigned int p = 0; p < 3; p++)
			fprintf(f, "     %-6s %-12s %9.1f %15.0f %15.0f %8.0f %6.0f\n",
				r->inst->params.p[0].value, policy_names[p], med(r, p * B_STATS),
				med(r, p * B_STATS + B_HEAP_BOOT), med(r, p * B_STATS + B_HEAP_IDLE),
				med(r, p * B_STATS + B_BATCHES), med(r, p * B_STATS + B_TRIMS));
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
