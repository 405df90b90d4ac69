/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memslots.h - inside the memslots suite: what its checks, perf cases and table share. */
#ifndef MG_SUITES_MEMSLOTS_MEMSLOTS_H
#define MG_SUITES_MEMSLOTS_MEMSLOTS_H

#include "run/case.h"
#include "impl/memslots.h"

/* An update strategy with the name reports use. */
struct strategy {
	enum memslots_update update;
	const char *name;
};

/* Its --impl keys (suite.c): the update strategy and the lookup under test. */
extern const struct impl_key memslots_update_key, memslots_lookup_key;

/* Most strategies a check runs: the three references and one other under test. */
#define MEMSLOTS_CASE_MAX_STRATEGIES 4

/** memslots_case_strategies() - the references, and the one under test when it differs; the count.
 */
unsigned int memslots_case_strategies(const struct run_opts *opts, struct strategy *out);

/** memslots_case_param_order() - the instance's "order" parameter (size unless it says gfn). */
enum memslots_order memslots_case_param_order(struct case_ctx *ctx);

/** memslots_case_param_uint() - the instance's parameter @name as a number, 0 when absent. */
unsigned int memslots_case_param_uint(struct case_ctx *ctx, const char *name);

/* Checks (equivalence.c, regression.c). */
case_expand_fn memslots_case_expand_capacity_order;
/** memslots_case_check_equivalence() - seeded random operations: every strategy and lookup
 * agrees with the oracle. */
void memslots_case_check_equivalence(struct case_ctx *ctx);
case_expand_fn memslots_case_expand_regressions;
/** memslots_case_check_regression() - the named regressions of the reviews, each replayed. */
void memslots_case_check_regression(struct case_ctx *ctx);

/* Update cost (update.c): metric STRATEGY.STAT, the strategies in turn. */
enum { U_IMPL, U_HEAPSORT, U_SWAP, U_STRATEGIES };
/* Max, median and p99 of a sample's updates; the D1 and LL misses a update (simulated only). */
enum { M_UPD_MAX, M_UPD_MEDIAN, M_UPD_P99, M_UPD_D1, M_UPD_LL, M_UPD_STATS };
extern const struct metric_def memslots_case_update_metrics[U_STRATEGIES * M_UPD_STATS];

/* Linear growth, judged within one case: the impl at these two capacities in turn. */
#define GROWTH_SMALL 509
#define GROWTH_LARGE 4096
/* The median update at each capacity, then its D1 and LL misses (simulated only). */
enum { G_MEDIAN_SMALL, G_MEDIAN_LARGE, G_D1_SMALL, G_D1_LARGE, G_LL_SMALL, G_LL_LARGE, G_METRICS };
extern const struct metric_def memslots_case_growth_metrics[G_METRICS];

case_expand_fn memslots_case_expand_update;
case_expand_fn memslots_case_expand_growth;
/** memslots_case_perf_update_growing() - cycles per update, creates of growing size. */
void memslots_case_perf_update_growing(struct case_ctx *ctx);
/** memslots_case_perf_update_random() - cycles per update, random creates, deletes, moves. */
void memslots_case_perf_update_random(struct case_ctx *ctx);
/** memslots_case_perf_growth() - the median growing update at GROWTH_SMALL and GROWTH_LARGE. */
void memslots_case_perf_growth(struct case_ctx *ctx);

/* Lookup cost (lookup.c): metric MODE.DIST. */
enum { L_IMPL, L_LINEAR, L_BINARY, L_MODES };
enum { D_HIT_UNIFORM, D_HIT_SKEWED, D_MISS, D_DISTS };
/* MODE.DIST in cycles or instructions, then the same in D1 and in LL misses (simulated). */
enum { L_FIGURES = L_MODES * D_DISTS, L_METRICS = 3 * L_FIGURES };
extern const struct metric_def memslots_case_lookup_metrics[L_METRICS];

/* Lookups per timed batch: the two fenced TSC reads around it cost ~0.1 cycle a lookup. */
#define LOOKUP_BATCH 1024

case_expand_fn memslots_case_expand_lookup;
/** memslots_case_perf_lookup() - cycles per gfn lookup: uniform hits, skewed hits, misses. */
void memslots_case_perf_lookup(struct case_ctx *ctx);

#endif
