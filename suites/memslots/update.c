/* SPDX-License-Identifier: GPL-2.0-or-later */
/* update.c - memslots perf cases: cycles per update of each strategy, and their growth. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sampling.h"
#include "suites/memslots/memslots.h"
#include "suites/memslots/oracle.h"
#include "util/util.h"

/* 128: the published run (125 user + 3 private slots, 128 inserts); then 509, 4096, 32,764. */
static const unsigned int perf_capacities[] = {128, 509, 4096, 32764};

/*
 * One case per workload and capacity runs the implementation under test and the two
 * references in turn, sample by sample: the vCPUs' speed drifts by tens of percent
 * between runs here (swap at 509 slots measured 4,620 and 5,863 cycles in two runs), and
 * only interleaving keeps a 1.3x difference honest. Metric STRATEGY.STAT.
 */

const struct metric_def memslots_case_update_metrics[U_STRATEGIES * M_UPD_STATS] = {
    {"impl.update_max", "cycles", LOWER_IS_BETTER},
    {"impl.update_median", "cycles", LOWER_IS_BETTER},
    {"impl.update_p99", "cycles", LOWER_IS_BETTER},
    {"impl.update_d1_misses", "misses", LOWER_IS_BETTER},
    {"impl.update_ll_misses", "misses", LOWER_IS_BETTER},
    {"heapsort.update_max", "cycles", LOWER_IS_BETTER},
    {"heapsort.update_median", "cycles", LOWER_IS_BETTER},
    {"heapsort.update_p99", "cycles", LOWER_IS_BETTER},
    {"heapsort.update_d1_misses", "misses", LOWER_IS_BETTER},
    {"heapsort.update_ll_misses", "misses", LOWER_IS_BETTER},
    {"swap.update_max", "cycles", LOWER_IS_BETTER},
    {"swap.update_median", "cycles", LOWER_IS_BETTER},
    {"swap.update_p99", "cycles", LOWER_IS_BETTER},
    {"swap.update_d1_misses", "misses", LOWER_IS_BETTER},
    {"swap.update_ll_misses", "misses", LOWER_IS_BETTER},
};

/* Linear growth, judged within one case too: the impl at 509 and 4096 slots in turn. */
const struct metric_def memslots_case_growth_metrics[G_METRICS] = {
    {"update_median.509", "cycles", LOWER_IS_BETTER},
    {"update_median.4096", "cycles", LOWER_IS_BETTER},
    {"update_d1_misses.509", "misses", LOWER_IS_BETTER},
    {"update_d1_misses.4096", "misses", LOWER_IS_BETTER},
    {"update_ll_misses.509", "misses", LOWER_IS_BETTER},
    {"update_ll_misses.4096", "misses", LOWER_IS_BETTER},
};

/* Updates timed in one sample at the most: the published run's 128 inserts. */
#define MAX_OPS 128

/*
 * Updates timed per sample: the published 128, or fewer for heap sort at the large sizes,
 * where one update costs milliseconds (n log n compares and byte-wise swaps of 32 bytes);
 * simulated, where it costs seconds, a quarter of those: a count does not need the repeats.
 */
static unsigned int measured_ops(unsigned int capacity, enum memslots_update u,
				 enum counter_kind counter)
{
	unsigned int k = u != MEMSLOTS_HEAPSORT || capacity <= 509 ? MAX_OPS
			 : capacity <= 4096			   ? 16
								   : 4;

	if (u == MEMSLOTS_HEAPSORT && capacity > 509 && counter == COUNTER_SIMULATED)
		k /= 4;

	return k < capacity ? k : capacity;
}

unsigned int memslots_case_expand_update(const struct hw_info *hw, const struct run_opts *opts,
					 struct case_params *out, unsigned int max)
{
	(void)hw;
	return case_expand_values("capacity", perf_capacities, ARRAY_SIZE(perf_capacities), 0,
				  &memslots_update_key, opts, out, max);
}

unsigned int memslots_case_expand_growth(const struct hw_info *hw, const struct run_opts *opts,
					 struct case_params *out, unsigned int max)
{
	(void)hw;
	if (!max)
		return 0;
	case_params_add(&out[0], "impl", "%s", impl_get(opts->impl, &memslots_update_key));
	return 1;
}

static enum memslots_update param_update(struct case_ctx *ctx)
{
	int u = memslots_update_parse(case_param(ctx, "impl"));

	return u < 0 ? MEMSLOTS_SHIFT : (enum memslots_update)u;
}

/* Slot j of the growing workload: j + 1 pages right after slot j - 1, so every new slot is
 * the largest and the highest: it travels the whole array in either order. */
static struct memslot growing_slot(unsigned int j)
{
	return (struct memslot){.id = (int32_t)j,
				.npages = j + 1,
				.base_gfn = (uint64_t)j * (j + 1) / 2,
				.userspace_addr = 0x7f0000000000ULL + (uint64_t)j * (j + 1) * 2048};
}

/* What a replay counted: per update, its count (cycles or instructions) and its misses. */
struct op_counts {
	double value[MAX_OPS];
	double d1, ll; /* misses over all the updates (simulated only) */
};

/*
 * Per-sample figures of @k updates' counts into metrics @base + max, median, p99, and under
 * the simulated counter the misses an update.
 */
static void record_ops(struct case_ctx *ctx, unsigned int base, const struct op_counts *oc,
		       unsigned int k, const struct measure_span *span)
{
	const double *cyc = oc->value;
	double sorted[MAX_OPS];

	memcpy(sorted, cyc, k * sizeof(*cyc));
	qsort(sorted, k, sizeof(*sorted), util_cmp_double);
	case_sample(ctx, base + M_UPD_MAX, sorted[k - 1], span);
	case_sample(ctx, base + M_UPD_MEDIAN, stats_quantile_sorted(sorted, k, 0.5), span);
	case_sample(ctx, base + M_UPD_P99, stats_quantile_sorted(sorted, k, 0.99), span);
	if (case_opts(ctx)->counter == COUNTER_SIMULATED) {
		case_sample(ctx, base + M_UPD_D1, oc->d1 / k, span);
		case_sample(ctx, base + M_UPD_LL, oc->ll / k, span);
	}
}

/*
 * Each timed update runs REPLAYS times from the same state and counts its cheapest run: a
 * timer interrupt or a vCPU preemption lands in one replay, not in all of them, so the max
 * over a sample stays the update's own cost (the 2014 profile "discarded spikes" by hand).
 * A simulated count has no spikes: one replay.
 */
#define REPLAYS 3

static int replays(const struct counter *c)
{
	return c->kind == COUNTER_SIMULATED ? 1 : REPLAYS;
}

/* What one sample replays: a set loaded in one go, then k updates to time one by one. */
struct workload {
	struct memslot *initial;
	unsigned int n_initial;
	struct memslot ops[MAX_OPS];
	unsigned int k;
};

/* Growing: capacity - k slots of growing size loaded, then the last k created. */
static int make_growing(unsigned int cap, unsigned int k, struct workload *w)
{
	w->initial = malloc(cap * sizeof(*w->initial));
	if (!w->initial)
		return -ENOMEM;
	w->n_initial = cap - k;
	w->k = k;
	for (unsigned int j = 0; j < cap; j++) {
		if (j < w->n_initial)
			w->initial[j] = growing_slot(j);
		else
			w->ops[j - w->n_initial] = growing_slot(j);
	}
	return 0;
}

/* Random: half the ids loaded, one every 1024 gfns; then k random updates the oracle accepts. */
static int make_random(unsigned int cap, unsigned int k, uint64_t seed, struct workload *w)
{
	struct stats_rng rng;
	struct oracle o;
	enum op_kind kind;

	w->initial = malloc(cap * sizeof(*w->initial));
	if (!w->initial || oracle_init(&o, cap))
		return -ENOMEM;
	stats_rng_seed(&rng, seed);
	w->n_initial = cap / 2;
	for (unsigned int i = 0; i < w->n_initial; i++)
		w->initial[i] = (struct memslot){.id = (int32_t)(i * 2 + stats_rng_below(&rng, 2)),
						 .base_gfn = (uint64_t)i * 1024,
						 .npages = 1 + stats_rng_below(&rng, 512)};
	oracle_load(&o, w->initial, w->n_initial);
	for (w->k = 0; w->k < k;) {
		/* The generator also proposes refused ops; only accepted ones are kept. */
		oracle_random_op(&o, &rng, 50, &w->ops[w->k], &kind);
		if (!oracle_set(&o, &w->ops[w->k]))
			w->k++;
	}
	oracle_release(&o);
	return 0;
}

/* Count each update of @w with @c, the cheapest of its replays, into @oc. */
static int replay(const struct workload *w, unsigned int cap, enum memslots_update u,
		  struct counter *c, struct op_counts *oc, struct measure_span *span)
{
	struct memslots s;
	int ret = memslots_init(&s, cap, MEMSLOTS_BY_SIZE, u, MEMSLOTS_LINEAR, false);

	if (ret)
		return ret;
	counter_span_begin(c, span);
	oc->d1 = oc->ll = 0;
	for (int r = 0; !ret && r < replays(c); r++) {
		ret = memslots_load(&s, w->initial, w->n_initial);
		for (unsigned int j = 0; !ret && j < w->k; j++) {
			struct counter_reading got;

			/* A workload the set refuses is a bug of the workload: never apply it. */
			ret = memslots_validate(&s, &w->ops[j]);
			if (ret)
				break;
			counter_start(c);
			memslots_apply(&s, &w->ops[j]);
			ret = counter_stop(c, &got);
			if (r == 0 || got.value < oc->value[j])
				oc->value[j] = got.value;
			oc->d1 += got.d1_misses;
			oc->ll += got.ll_misses;
		}
	}
	counter_span_end(c, span);
	memslots_release(&s);
	return ret;
}

/* An update case: the workload, the capacity, the strategies in turn. */
struct update_case {
	struct case_ctx *ctx;
	struct counter counter;
	bool growing;
	unsigned int cap;
	enum memslots_update strat[U_STRATEGIES];
};

/* One sample of strategy @s: build the workload, replay it, record its figures. */
static int update_sample(void *arg, unsigned int s, unsigned int round, bool measured)
{
	struct update_case *uc = arg;
	enum memslots_update u = uc->strat[s];
	struct workload w = {0};
	struct measure_span span;
	struct op_counts oc;
	unsigned int k = measured_ops(uc->cap, u, case_opts(uc->ctx)->counter);
	int ret = uc->growing ? make_growing(uc->cap, k, &w)
			      : make_random(uc->cap, k, case_opts(uc->ctx)->seed + round, &w);

	if (!ret)
		ret = replay(&w, uc->cap, u, &uc->counter, &oc, &span);
	if (!ret && measured)
		record_ops(uc->ctx, s * M_UPD_STATS, &oc, w.k, &span);
	free(w.initial);
	if (ret)
		case_error(uc->ctx, "%s workload at %u slots (%s): %s",
			   uc->growing ? "growing" : "random", uc->cap, memslots_update_name(u),
			   strerror(-ret));
	return ret;
}

/* The implementation under test, heap sort and swap in turn, sample by sample. */
static void perf_update(struct case_ctx *ctx, bool growing)
{
	const struct run_opts *o = case_opts(ctx);
	struct update_case uc = {.ctx = ctx,
				 .growing = growing,
				 .cap = memslots_case_param_uint(ctx, "capacity"),
				 .strat = {param_update(ctx), MEMSLOTS_HEAPSORT, MEMSLOTS_SWAP}};
	struct case_arms arms = {.n = U_STRATEGIES,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = update_sample,
				 .arg = &uc,
				 .ctx = ctx};

	if (case_counter_open(ctx, &uc.counter))
		return;
	for (unsigned int s = 0; s < U_STRATEGIES; s++)
		case_prop(ctx, memslots_case_update_metrics[s * M_UPD_STATS].name,
			  "%u updates timed a sample",
			  measured_ops(uc.cap, uc.strat[s], o->counter));
	case_interleave(&arms);
	counter_close(&uc.counter);
}

void memslots_case_perf_update_growing(struct case_ctx *ctx)
{
	perf_update(ctx, true);
}

void memslots_case_perf_update_random(struct case_ctx *ctx)
{
	perf_update(ctx, false);
}

/* A growth case: the implementation under test at the two capacities. */
struct growth_case {
	struct case_ctx *ctx;
	struct counter counter;
	enum memslots_update u;
};

/* One sample at capacity @c: the median update of the growing workload. */
static int growth_sample(void *arg, unsigned int c, unsigned int round, bool measured)
{
	static const unsigned int caps[2] = {GROWTH_SMALL, GROWTH_LARGE};
	struct growth_case *gc = arg;
	struct workload w = {0};
	struct measure_span span;
	struct op_counts oc;
	int ret =
	    make_growing(caps[c], measured_ops(caps[c], gc->u, case_opts(gc->ctx)->counter), &w);

	(void)round;
	if (!ret)
		ret = replay(&w, caps[c], gc->u, &gc->counter, &oc, &span);
	free(w.initial);
	if (ret)
		case_error(gc->ctx, "growing workload at %u slots: %s", caps[c], strerror(-ret));
	else if (measured)
		case_sample(gc->ctx, G_MEDIAN_SMALL + c, stats_median(oc.value, w.k), &span);
	if (!ret && measured && case_opts(gc->ctx)->counter == COUNTER_SIMULATED) {
		case_sample(gc->ctx, G_D1_SMALL + c, oc.d1 / w.k, &span);
		case_sample(gc->ctx, G_LL_SMALL + c, oc.ll / w.k, &span);
	}
	return ret;
}

/* The median update of the growing workload at 509 and at 4096 slots, in turn. */
void memslots_case_perf_growth(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct growth_case gc = {.ctx = ctx, .u = param_update(ctx)};
	struct case_arms arms = {.n = 2,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = growth_sample,
				 .arg = &gc,
				 .ctx = ctx};

	if (case_counter_open(ctx, &gc.counter))
		return;
	case_interleave(&arms);
	counter_close(&gc.counter);
}
