/* SPDX-License-Identifier: GPL-2.0-or-later */
/* startup.c - the prealloc suite's perf case: start-up time per page kind, method and thread
 * count, beside memset, mlock, MAP_POPULATE and the reference at QEMU's thread count; and its
 * table beside the published figures. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "run/result.h"
#include "run/sampling.h"
#include "suites/pages.h"
#include "suites/prealloc/prealloc.h"

#include "util/util.h"

/* Metric METHOD.tN.ms, the SWEEP_POINTS thread counts of a sample in turn. */
/* clang-format off */
#define POINT_METRICS(m)						\
	{m ".t1.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t2.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t4.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t8.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t16.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t32.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t64.ms", "ms", LOWER_IS_BETTER},				\
	{m ".t128.ms", "ms", LOWER_IS_BETTER},				\
	{m ".tall.ms", "ms", LOWER_IS_BETTER}
/* clang-format on */
static_assert(sizeof((struct metric_def[]){POINT_METRICS("")}) ==
		  SWEEP_POINTS * sizeof(struct metric_def),
	      "POINT_METRICS() names each of the SWEEP_POINTS thread counts");

const struct metric_def prealloc_case_startup_metrics[STARTUP_METRICS] = {
    POINT_METRICS("touch"),
    POINT_METRICS("populate"),
    [STARTUP_IMPL_MS] = {"impl.ms", "ms", LOWER_IS_BETTER},
    [STARTUP_IMPL_THREADS] = {"impl.threads", "threads", HIGHER_IS_BETTER},
    [STARTUP_IMPL_IMBALANCE] = {"impl.slowest_over_fastest", "x", LOWER_IS_BETTER},
    [STARTUP_IMPL_CPU_MS] = {"impl.cpu_ms", "ms", LOWER_IS_BETTER},
    [STARTUP_IMPL_SPEEDUP] = {"impl.speedup", "x", HIGHER_IS_BETTER},
    [STARTUP_IMPL_EFFICIENCY] = {"impl.efficiency", "x", HIGHER_IS_BETTER},
    [STARTUP_MEMSET_MS] = {"memset.ms", "ms", LOWER_IS_BETTER},
    [STARTUP_MLOCK_MS] = {"mlock.ms", "ms", LOWER_IS_BETTER},
    [STARTUP_MAP_POPULATE_MS] = {"map_populate.ms", "ms", LOWER_IS_BETTER},
    [STARTUP_REF_MS] = {"ref.ms", "ms", LOWER_IS_BETTER},
};

/* Runs that are not a method at a thread count: the implementation under test, and the two
 * single-threaded alternatives of the 2017 parallel-prealloc thread (mlock; MAP_POPULATE, which
 * ignores failures). */
enum { RUN_IMPL = -1, RUN_MLOCK = -2, RUN_MAP_POPULATE = -3, RUN_REF = -4 };

struct run_spec {
	int method; /* SWEEP_TOUCH, SWEEP_POPULATE, or one of the RUN_ below */
	unsigned int threads;
	unsigned int metric;
};

/*
 * The runs of one sample: both methods at 1, 2, 4 ... threads below the PUs and at all; then
 * the reference at the thread count QEMU's rule gives a guest of the case's size with a vCPU
 * per PU (@ref_threads), in the method under test. The implementation is gated against it:
 * against the host's own scaling, which a VM's memory bandwidth may cap well under the PUs.
 */
static unsigned int run_list(unsigned int pus, unsigned int ref_threads, struct run_spec *runs)
{
	unsigned int n = 0;

	for (int m = 0; m < SWEEP_METHODS; m++) {
		for (unsigned int p = 0; p + 1 < SWEEP_POINTS && (1u << p) < pus; p++)
			runs[n++] =
			    (struct run_spec){m, 1u << p, (unsigned int)(m * SWEEP_POINTS) + p};
		runs[n++] =
		    (struct run_spec){m, pus, (unsigned int)(m * SWEEP_POINTS + SWEEP_POINTS - 1)};
	}
	runs[n++] = (struct run_spec){RUN_MLOCK, 1, STARTUP_MLOCK_MS};
	runs[n++] = (struct run_spec){RUN_MAP_POPULATE, 1, STARTUP_MAP_POPULATE_MS};
	runs[n++] = (struct run_spec){RUN_REF, ref_threads, STARTUP_REF_MS};
	/* The implementation under test comes last: perf_startup() reads its time there. */
	runs[n++] = (struct run_spec){RUN_IMPL, 0, STARTUP_IMPL_MS};
	return n;
}

/* 4 KiB and THP first touches are bimodal here (free page reporting): they are measured at
 * up to 1 GiB and reported, not gated; hugetlb, stable, gets the whole guest size. */
static size_t startup_size(const struct hw_info *hw, const struct run_opts *o, int k)
{
	uint64_t size = case_guest_size(hw, o);

	if (!kinds[k].hugetlb && size > GIB)
		size = GIB;
	/* 1 GiB pages: a whole number of them per PU, or the threads get unequal shares. */
	if (kinds[k].page == GIB)
		size = prealloc_case_gigapages(hw, size) * GIB;
	return (size_t)size;
}

/* Map, prealloc, (memset), unmap: one run. Returns 0 or -errno with @err filled. */
static int one_run(struct case_ctx *ctx, int k, size_t size, const struct prealloc_opts *o,
		   bool record, const struct run_spec *rs, double *ms, struct mg_err *err)
{
	struct prealloc_report rep;
	struct measure_span span;
	struct mapping m;
	bool map_populate = rs->method == RUN_MAP_POPULATE;
	int ret;

	/* MAP_POPULATE faults in inside mmap, before MADV_HUGEPAGE could apply: not for THP. */
	if (map_populate && k == K_THP)
		return 0;
	measure_span_begin(&span);
	ret = map_kind(k, size, map_populate ? MAP_POPULATE : 0, &m);
	if (map_populate)
		measure_span_end(&span);
	if (ret)
		return mg_err_set(err, -ret, "mapping %zu MiB of %s: %s", size >> 20, kinds[k].name,
				  strerror(-ret));
	struct prealloc_region r = {m.addr, size, kinds[k].page, -1};

	if (!map_populate) {
		measure_span_begin(&span);
		ret = prealloc_one(&r, o, &rep, err);
		measure_span_end(&span);
	}
	*ms = (double)span.wall_ns / 1e6;
	if (!ret && record) {
		case_sample(ctx, rs->metric, *ms, &span);
		if (rs->method == RUN_IMPL) {
			case_sample(ctx, STARTUP_IMPL_THREADS, rep.threads, &span);
			case_sample(ctx, STARTUP_IMPL_IMBALANCE, rep.slowest_ns / rep.fastest_ns,
				    &span);
			case_sample(ctx, STARTUP_IMPL_CPU_MS, rep.cpu_ns / 1e6, &span);
			/* The host's limit: writing memory that is already mapped, with as many
			 * threads; the second pass, as the first may still fault on the host side.
			 */
			parallel_memset(m.addr, size, rep.threads);
			measure_span_begin(&span);
			parallel_memset(m.addr, size, rep.threads);
			measure_span_end(&span);
			case_sample(ctx, STARTUP_MEMSET_MS, (double)span.wall_ns / 1e6, &span);
		}
	}
	unmap_kind(&m);
	return ret;
}

/* One start-up case: the runs of a round, their times, and what the speedup needs. */
struct startup_case {
	struct case_ctx *ctx;
	int kind;
	size_t size;
	struct prealloc_opts impl;
	struct run_spec runs[2 * SWEEP_POINTS + 4];
	unsigned int n;
	bool mlock_ok; /* false once mlock failed (no rlimit for it): not run again */
	double ms[2 * SWEEP_POINTS + 4];
	double base; /* this round's single-threaded run of the method under test */
};

static int startup_round_begin(void *arg, unsigned int round)
{
	(void)round;
	((struct startup_case *)arg)->base = 0;
	return 0;
}

static int startup_sample(void *arg, unsigned int q, unsigned int round, bool measured)
{
	struct startup_case *sc = arg;
	const struct run_spec *rs = &sc->runs[q];
	struct prealloc_opts po = sc->impl;
	struct mg_err err;
	int ret;

	(void)round;
	if (rs->method == RUN_REF) {
		po.requested = rs->threads; /* the method under test: sc->impl's */
		po.cap = PREALLOC_MAX_THREADS;
	} else if (rs->method >= 0) {
		po.method = rs->method == SWEEP_TOUCH ? PREALLOC_TOUCH : PREALLOC_POPULATE;
		po.requested = rs->threads;
		po.cap = PREALLOC_MAX_THREADS;
	} else if (rs->method == RUN_MLOCK) {
		if (!sc->mlock_ok)
			return 0;
		po.method = PREALLOC_MLOCK;
	}
	ret = one_run(sc->ctx, sc->kind, sc->size, &po, measured, rs, &sc->ms[q], &err);
	/* mlock is a measured alternative: without the rlimit for it, the others still run. */
	if (ret && rs->method == RUN_MLOCK) {
		case_log(sc->ctx, "mlock not measured: %s", err.msg);
		sc->mlock_ok = false;
		return 0;
	}
	if (ret == -ENOSYS)
		case_skip(sc->ctx, "%s", err.msg);
	else if (ret)
		case_error(sc->ctx, "%s", err.msg);
	if (ret)
		return ret;
	/* The single-threaded baseline of the method under test. */
	if (rs->threads == 1 &&
	    rs->method == (sc->impl.method == PREALLOC_TOUCH ? SWEEP_TOUCH : SWEEP_POPULATE))
		sc->base = sc->ms[q];
	return 0;
}

/* The speedup of the implementation under test over its method's single thread. */
static int startup_round_end(void *arg, unsigned int round, bool measured)
{
	struct startup_case *sc = arg;
	unsigned int pus = case_hw(sc->ctx)->n_pus;

	(void)round;
	if (measured && sc->base > 0) {
		case_sample(sc->ctx, STARTUP_IMPL_SPEEDUP, sc->base / sc->ms[sc->n - 1], NULL);
		case_sample(sc->ctx, STARTUP_IMPL_EFFICIENCY, sc->base / sc->ms[sc->n - 1] / pus,
			    NULL);
	}
	return 0;
}

/* Per round, in turn: each method at each thread count, mlock, MAP_POPULATE, the impl. */
void prealloc_case_startup(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	struct startup_case sc = {.ctx = ctx,
				  .kind = param_kind(ctx),
				  .impl = prealloc_case_impl_opts(ctx),
				  .mlock_ok = true};
	struct case_arms arms = {.warmup = o->warmup,
				 .samples = o->samples,
				 .round_begin = startup_round_begin,
				 .sample = startup_sample,
				 .round_end = startup_round_end,
				 .arg = &sc,
				 .ctx = ctx};

	if (sc.kind < 0)
		return;
	sc.size = startup_size(hw, o, sc.kind);
	sc.n = arms.n = run_list(
	    hw->n_pus,
	    prealloc_threads(sc.size, kinds[sc.kind].page, hw->n_pus, hw->n_pus, PREALLOC_CAP_QEMU),
	    sc.runs);
	if (kinds[sc.kind].hugetlb && pool_short(ctx, sc.kind, sc.size / kinds[sc.kind].page))
		return;
	for (unsigned int m = 0; m < STARTUP_METRICS; m++)
		case_counter(ctx, m, "clock");
	case_prop(ctx, "size_mib", "%zu", sc.size >> 20);
	case_interleave(&arms);
}

static void startup_row(FILE *f, const struct case_result *r)
{
	static const unsigned int extra[] = {STARTUP_MLOCK_MS, STARTUP_MAP_POPULATE_MS,
					     STARTUP_REF_MS};
	const struct metric_result *memset_m = case_result_sampled(r, STARTUP_MEMSET_MS);
	const char *mib = case_result_prop(r, "size_mib");
	double size_gib = mib ? atof(mib) / 1024 : 0, limit = 0;

	if (memset_m)
		limit = size_gib / (memset_m->sum.median / 1e3);
	fprintf(f, "%s, %.2f GiB (memset over faulted memory: %.1f GiB/s)\n", r->inst->name,
		size_gib, limit);
	for (unsigned int i = 0; i <= STARTUP_IMPL_MS + ARRAY_SIZE(extra); i++) {
		unsigned int m = i <= STARTUP_IMPL_MS ? i : extra[i - STARTUP_IMPL_MS - 1];
		const struct metric_result *mr = case_result_sampled(r, m);
		double gibs;

		if (!mr)
			continue;
		gibs = size_gib / (mr->sum.median / 1e3);
		fprintf(f, "  %-20s %9.1f ms %7.2f GiB/s %5.1f%% of memset%s\n", mr->def->name,
			mr->sum.median, gibs, limit > 0 ? 100 * gibs / limit : 0,
			m == STARTUP_IMPL_MS  ? " (the implementation under test)"
			: m == STARTUP_REF_MS ? " (the reference at QEMU's thread count)"
					      : "");
	}
	if (case_result_sampled(r, STARTUP_IMPL_THREADS) &&
	    case_result_sampled(r, STARTUP_IMPL_EFFICIENCY))
		fprintf(f,
			"  impl: %.0f threads, speedup %.2fx, efficiency %.2f, slowest/fastest "
			"worker %.2f\n",
			case_result_median(r, STARTUP_IMPL_THREADS),
			case_result_median(r, STARTUP_IMPL_SPEEDUP),
			case_result_median(r, STARTUP_IMPL_EFFICIENCY),
			case_result_median(r, STARTUP_IMPL_IMBALANCE));
}

static bool startup_wanted(const struct case_result *r)
{
	return r->inst->def->metrics == prealloc_case_startup_metrics &&
	       case_result_sampled(r, STARTUP_IMPL_MS);
}

const struct summary_table prealloc_case_startup_table = {
    .header = "prealloc: start-up time, median of the samples (4 KiB and THP are bimodal "
	      "here: freed memory goes back to the host; hugetlb does not, and only "
	      "hugetlb is gated)\n",
    .published = "published: 4 TB, 2 MiB pages: 1 thread 54m12s, 8 threads 5m01s, 16 "
		 "threads 1m59s (2017); 7.5 TB: 16 threads 2m42s, 32 threads 1m19s, 240 "
		 "threads ~50 s (2025)\n",
    .wanted = startup_wanted,
    .row = startup_row};
