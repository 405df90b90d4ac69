/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lookup.c - memslots perf cases: cycles per gfn lookup, linear and binary, hit and miss. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/sampling.h"
#include "suites/memslots/memslots.h"
#include "util/util.h"

/* 117 slots: where the published comparison was made (binary 180, linear 460 cycles). */
static const unsigned int lookup_capacities[] = {117, 509, 4096, 32764};

/*
 * One case per capacity times the implementation under test and both references, batch
 * after batch in the same process: the vCPUs' speed drifts by tens of percent between
 * runs here, and only interleaving keeps the comparison fair. Metric MODE.DIST.
 */

/* The nine lookups, MODE.DIST, with @suffix ("" or ".d1_misses" ...) in @unit. */
/* clang-format off */
#define LOOKUP_METRICS(suffix, unit)						\
	{"impl.hit_uniform" suffix, unit, LOWER_IS_BETTER},			\
	{"impl.hit_skewed" suffix, unit, LOWER_IS_BETTER},			\
	{"impl.miss" suffix, unit, LOWER_IS_BETTER},				\
	{"linear.hit_uniform" suffix, unit, LOWER_IS_BETTER},			\
	{"linear.hit_skewed" suffix, unit, LOWER_IS_BETTER},			\
	{"linear.miss" suffix, unit, LOWER_IS_BETTER},				\
	{"binary.hit_uniform" suffix, unit, LOWER_IS_BETTER},			\
	{"binary.hit_skewed" suffix, unit, LOWER_IS_BETTER},			\
	{"binary.miss" suffix, unit, LOWER_IS_BETTER}
/* clang-format on */

const struct metric_def memslots_case_lookup_metrics[L_METRICS] = {
    LOOKUP_METRICS("", "cycles"),
    LOOKUP_METRICS(".d1_misses", "misses"),
    LOOKUP_METRICS(".ll_misses", "misses"),
};

/* A booting guest hits its RAM and a few ROM and MMIO slots: 90% of hits on 3 slots. */
#define HOT_SLOTS 3
#define HOT_SHARE 90

unsigned int memslots_case_expand_lookup(const struct hw_info *hw, const struct run_opts *opts,
					 struct case_params *out, unsigned int max)
{
	(void)hw;
	return case_expand_values("capacity", lookup_capacities, ARRAY_SIZE(lookup_capacities), 0,
				  &memslots_lookup_key, opts, out, max);
}

struct lookup_set {
	struct memslots s;
	struct memslot *slots; /* what was loaded, to draw probes from */
	struct stats_rng rng;
	uint64_t probes[D_DISTS][LOOKUP_BATCH];
};

/*
 * Fresh probes for every sample: the same 1024 gfns batch after batch would let the branch
 * predictor learn the binary search's path, which no guest's accesses allow.
 */
static void lookup_probes(struct lookup_set *ls)
{
	unsigned int cap = ls->s.capacity;

	for (unsigned int k = 0; k < LOOKUP_BATCH; k++) {
		const struct memslot *u = &ls->slots[stats_rng_below(&ls->rng, cap)];
		const struct memslot *h =
		    stats_rng_below(&ls->rng, 100) < HOT_SHARE
			? &ls->slots[stats_rng_below(&ls->rng, HOT_SLOTS) * (cap / HOT_SLOTS)]
			: u;

		ls->probes[D_HIT_UNIFORM][k] = u->base_gfn + stats_rng_below(&ls->rng, u->npages);
		ls->probes[D_HIT_SKEWED][k] = h->base_gfn + stats_rng_below(&ls->rng, h->npages);
		/* The first free gfn after a slot: always in a gap. */
		ls->probes[D_MISS][k] = u->base_gfn + u->npages;
	}
}

/* @cap slots in gfn order, 1-512 pages each, 1-64 free gfns between. */
static int lookup_setup(struct lookup_set *ls, unsigned int cap, uint64_t seed)
{
	uint64_t gfn = 0;
	int ret;

	ls->slots = malloc(cap * sizeof(*ls->slots));
	if (!ls->slots)
		return -ENOMEM;
	ret = memslots_init(&ls->s, cap, MEMSLOTS_BY_GFN, MEMSLOTS_SHIFT, MEMSLOTS_LINEAR, false);
	stats_rng_seed(&ls->rng, seed);
	for (unsigned int i = 0; i < cap; i++) {
		ls->slots[i] = (struct memslot){.id = (int32_t)i,
						.base_gfn = gfn,
						.npages = 1 + stats_rng_below(&ls->rng, 512)};
		gfn += ls->slots[i].npages + 1 + stats_rng_below(&ls->rng, 64);
	}
	return ret ? ret : memslots_load(&ls->s, ls->slots, cap);
}

/* Point the one set at a lookup mode: "linear", "binary", either with "+cache". */
static int lookup_mode(struct memslots *s, const char *mode)
{
	if (memslots_lookup_parse(mode, &s->lookup, &s->cache))
		return -EINVAL;
	s->last_used = -1;
	return 0;
}

/* Written after each batch so that the lookups cannot be optimised away. */
static volatile int lookup_sink;

/* A batch of lookups counted with @c: per lookup, into @got. Returns 0 or -errno. */
static int time_batch(struct memslots *s, const uint64_t *probes, struct counter *c,
		      struct counter_reading *got, struct measure_span *span)
{
	int acc = 0, ret;

	counter_span_begin(c, span);
	counter_start(c);
	for (unsigned int k = 0; k < LOOKUP_BATCH; k++)
		acc += memslots_find(s, probes[k]);
	ret = counter_stop(c, got);
	counter_span_end(c, span);
	lookup_sink = acc;
	got->value /= LOOKUP_BATCH;
	got->d1_misses /= LOOKUP_BATCH;
	got->ll_misses /= LOOKUP_BATCH;
	return ret;
}

struct lookup_case {
	struct case_ctx *ctx;
	struct counter counter;
	struct lookup_set *ls;
	const char *modes[L_MODES];
};

/* Fresh probes for the round: every mode looks up the same gfns. */
static int lookup_round(void *arg, unsigned int round)
{
	(void)round;
	lookup_probes(((struct lookup_case *)arg)->ls);
	return 0;
}

/* One sample of lookup mode @mode: a timed batch of each distribution. */
static int lookup_sample(void *arg, unsigned int mode, unsigned int round, bool measured)
{
	struct lookup_case *lc = arg;

	(void)round;
	if (lookup_mode(&lc->ls->s, lc->modes[mode])) {
		case_error(lc->ctx, "no lookup mode named \"%s\"", lc->modes[mode]);
		return -EINVAL;
	}
	for (unsigned int d = 0; d < D_DISTS; d++) {
		struct measure_span span;
		struct counter_reading got;
		unsigned int m = mode * D_DISTS + d;

		if (time_batch(&lc->ls->s, lc->ls->probes[d], &lc->counter, &got, &span)) {
			case_error(lc->ctx, "the %s counter could not be read",
				   counter_name(lc->counter.kind));
			return -EIO;
		}
		if (!measured)
			continue;
		case_sample(lc->ctx, m, got.value, &span);
		if (lc->counter.kind == COUNTER_SIMULATED) {
			case_sample(lc->ctx, L_FIGURES + m, got.d1_misses, &span);
			case_sample(lc->ctx, 2 * L_FIGURES + m, got.ll_misses, &span);
		}
	}
	return 0;
}

void memslots_case_perf_lookup(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct lookup_case lc = {.ctx = ctx,
				 .ls = calloc(1, sizeof(*lc.ls)),
				 .modes = {case_param(ctx, "impl"), "linear", "binary"}};
	/* The modes in turn, the first one rotating, so none always runs right after a new
	 * probe set. */
	struct case_arms arms = {.n = L_MODES,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .round_begin = lookup_round,
				 .sample = lookup_sample,
				 .arg = &lc,
				 .ctx = ctx};

	if (!lc.ls || lookup_setup(lc.ls, memslots_case_param_uint(ctx, "capacity"), o->seed)) {
		case_error(ctx, "cannot build a set of %u slots",
			   memslots_case_param_uint(ctx, "capacity"));
	} else if (!case_counter_open(ctx, &lc.counter)) {
		case_interleave(&arms);
		counter_close(&lc.counter);
	}
	if (lc.ls) {
		memslots_release(&lc.ls->s);
		free(lc.ls->slots);
	}
	free(lc.ls);
}
