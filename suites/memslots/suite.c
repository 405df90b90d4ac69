/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the memslots suite (the 2014 memslot-sort thread): its case table, its gates, its
 * summary table. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/result.h"
#include "suites/memslots/memslots.h"
#include "suites/suites.h"
#include "util/embed.h"
#include "util/util.h"

/* Its gates and tolerances (rules.conf beside this file), compiled in. */
EMBED_TEXT(suite_memslots_rules, "suites/memslots/rules.conf");

/* Its --impl keys: the strategies impl/memslots.c names. */
const struct impl_key memslots_update_key = {
    .key = "memslots.update",
    .names = memslots_update_names,
    .n_names = MEMSLOTS_UPDATES,
    .def = MEMSLOTS_SHIFT,
    .doc = "how a changed slot is put back in order (shift: KVM since 2014)"};
const struct impl_key memslots_lookup_key = {
    .key = "memslots.lookup",
    .names = memslots_lookup_names,
    .n_names = MEMSLOTS_LOOKUP_MODES,
    .def = 3,
    .doc = "how a gfn finds its slot (binary+cache: KVM since December 2014)"};

/* The memslots_case_strategies a check runs: the references, and the one under test when it
 * differs. */
static_assert(MEMSLOTS_UPDATES <= MEMSLOTS_CASE_MAX_STRATEGIES, "every strategy fits in the list");

unsigned int memslots_case_strategies(const struct run_opts *opts, struct strategy *out)
{
	static const enum memslots_update refs[] = {MEMSLOTS_HEAPSORT, MEMSLOTS_SWAP,
						    MEMSLOTS_SHIFT};
	int impl = memslots_update_parse(impl_get(opts->impl, &memslots_update_key));
	unsigned int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(refs); i++)
		out[n++] = (struct strategy){refs[i], memslots_update_name(refs[i])};
	if (impl >= 0 && impl != MEMSLOTS_HEAPSORT && impl != MEMSLOTS_SWAP &&
	    impl != MEMSLOTS_SHIFT)
		out[n++] = (struct strategy){(enum memslots_update)impl,
					     memslots_update_name((enum memslots_update)impl)};
	return n;
}

enum memslots_order memslots_case_param_order(struct case_ctx *ctx)
{
	const char *o = case_param(ctx, "order");

	return o && !strcmp(o, "gfn") ? MEMSLOTS_BY_GFN : MEMSLOTS_BY_SIZE;
}

unsigned int memslots_case_param_uint(struct case_ctx *ctx, const char *name)
{
	const char *v = case_param(ctx, name);

	return v ? (unsigned int)strtoul(v, NULL, 10) : 0;
}

/* ---- the suite ----------------------------------------------------------------------------- */

/* Indices into the table below, for the summary. */
enum { C_EQUIVALENCE, C_REGRESSION, C_GROWING, C_RANDOM, C_GROWTH, C_FIND };

static const struct case_def memslots_cases[] = {
    {.name = "equivalence",
     .kind = CASE_CHECK,
     .doc = "seeded random operations: every strategy and lookup agrees with a plain oracle",
     .expand = memslots_case_expand_capacity_order,
     .run = memslots_case_check_equivalence},
    {.name = "regression",
     .kind = CASE_CHECK,
     .doc = "named regressions (the review's flags-only change, deletes, full set, ...)",
     .expand = memslots_case_expand_regressions,
     .run = memslots_case_check_regression},
    {.name = "growing",
     .group = "update",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "cycles (--counter: instructions) per update, creates of growing size (the published "
	    "worst case)",
     CASE_METRICS(memslots_case_update_metrics),
     .counted = true,
     .expand = memslots_case_expand_update,
     .run = memslots_case_perf_update_growing},
    {.name = "random",
     .group = "update",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "cycles (--counter: instructions) per update, random creates, deletes, moves, flag "
	    "changes",
     CASE_METRICS(memslots_case_update_metrics),
     .counted = true,
     .expand = memslots_case_expand_update,
     .run = memslots_case_perf_update_random},
    {.name = "growth",
     .group = "update",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "median update of the growing workload at 509 and 4096 slots, in turn",
     CASE_METRICS(memslots_case_growth_metrics),
     .counted = true,
     .expand = memslots_case_expand_growth,
     .run = memslots_case_perf_growth},
    {.name = "find",
     .group = "lookup",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "cycles (--counter: instructions) per gfn lookup: uniform hits, skewed hits, misses",
     CASE_METRICS(memslots_case_lookup_metrics),
     .counted = true,
     .expand = memslots_case_expand_lookup,
     .run = memslots_case_perf_lookup},
};

static void print_figure(FILE *f, const struct case_result *r, unsigned int m, int width)
{
	if (r->metrics && r->metrics[m].n)
		fprintf(f, " %*.0f", width, r->metrics[m].sum.median);
	else
		fprintf(f, " %*s", width, case_outcome_name(r->outcome));
}

/*
 * What the figures of  results count, for a table's title: the unit and counter of its
 * first metric that has samples ("cycles", "tsc" when none has). Sets .
 */
static void counted_as(const struct case_result *results, size_t n, const struct case_def *def,
		       const char **unit, const char **counter, bool *simulated)
{
	*unit = "cycles";
	*counter = "tsc";
	for (size_t i = 0; i < n; i++)
		if (results[i].inst->def == def && results[i].metrics && results[i].metrics[0].n) {
			*unit = results[i].metrics[0].def->unit;
			*counter = results[i].metrics[0].counter;
			break;
		}
	*simulated = !strcmp(*counter, "simulated");
}

/* A small figure (misses a lookup) in thousandths, so that a table of integers shows it. */
static void print_thousandths(FILE *f, const struct case_result *r, unsigned int m, int width)
{
	if (r->metrics && r->metrics[m].n)
		fprintf(f, " %*.0f", width, 1000 * r->metrics[m].sum.median);
	else
		fprintf(f, " %*s", width, "-");
}

static void summary_updates(FILE *f, const struct case_result *results, size_t n)
{
	static const char *const role[U_STRATEGIES] = {"impl", "ref", "ref"};
	const char *unit, *counter;
	bool sim;

	counted_as(results, n, &memslots_cases[C_GROWING], &unit, &counter, &sim);
	fprintf(f,
		"memslots: %s per update (%s; per sample the max, median and p99 of its timed "
		"updates%s, the three strategies in turn; the median of the samples)\n",
		unit, counter, sim ? ", and the D1 and LL misses an update" : "");
	fprintf(f, "%-9s %9s %-13s %-5s %10s %10s %10s", "workload", "capacity", "strategy", "role",
		"max", "median", "p99");
	if (sim)
		fprintf(f, " %10s %10s", "D1 misses", "LL misses");
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct case_inst *in = results[i].inst;

		if (in->def != &memslots_cases[C_GROWING] && in->def != &memslots_cases[C_RANDOM])
			continue;
		for (unsigned int s = 0; s < U_STRATEGIES; s++) {
			fprintf(f, "%-9s %9s %-13s %-5s", in->def->name,
				case_params_get(&in->params, "capacity"),
				s == U_HEAPSORT ? "heapsort"
				: s == U_SWAP	? "swap"
						: case_params_get(&in->params, "impl"),
				role[s]);
			for (unsigned int m = 0; m < (sim ? M_UPD_STATS : M_UPD_P99 + 1); m++)
				print_figure(f, &results[i], s * M_UPD_STATS + m, 10);
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct metric_result *m = results[i].metrics;

		if (results[i].inst->def == &memslots_cases[C_GROWTH] && m[0].n && m[1].n)
			fprintf(f,
				"growth of %s, growing workload: median %.0f at %d slots, %.0f at "
				"%d: %.2fx for %.2fx the slots\n",
				case_params_get(&results[i].inst->params, "impl"), m[0].sum.median,
				GROWTH_SMALL, m[1].sum.median, GROWTH_LARGE,
				m[1].sum.median / m[0].sum.median,
				(double)GROWTH_LARGE / GROWTH_SMALL);
	}
	fprintf(f, "published in the 2014 memslot-sort thread, 128 inserts of growing size, "
		   "kernel, core cycles:\n"
		   "  heapsort max 249,747 (min 52,536); swap (v1) max 15,654 (~5,900 reprofiled "
		   "without spikes); shift (v2) max ~2,500\n");
}

static void summary_lookups(FILE *f, const struct case_result *results, size_t n)
{
	static const char *const role[L_MODES] = {"impl", "ref", "ref"};
	const char *unit, *counter;
	bool sim;

	counted_as(results, n, &memslots_cases[C_FIND], &unit, &counter, &sim);
	fprintf(f,
		"\nmemslots: %s per gfn lookup (%s; batches of %d, the three lookups in turn; "
		"median of the batches%s)\n",
		unit, counter, LOOKUP_BATCH,
		sim ? "; then the D1 misses a lookup, as thousandths" : "");
	fprintf(f, "%9s %-13s %-5s %12s %12s %12s", "capacity", "lookup", "role", "hit_uniform",
		"hit_skewed", "miss");
	if (sim)
		fprintf(f, " %8s %8s %8s", "D1 unif", "D1 skew", "D1 miss");
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct case_inst *in = results[i].inst;

		if (in->def != &memslots_cases[C_FIND])
			continue;
		for (unsigned int mode = 0; mode < L_MODES; mode++) {
			fprintf(f, "%9s %-13s %-5s", case_params_get(&in->params, "capacity"),
				mode == L_LINEAR   ? "linear"
				: mode == L_BINARY ? "binary"
						   : case_params_get(&in->params, "impl"),
				role[mode]);
			for (unsigned int d = 0; d < D_DISTS; d++)
				print_figure(f, &results[i], mode * D_DISTS + d, 12);
			for (unsigned int d = 0; sim && d < D_DISTS; d++)
				print_thousandths(f, &results[i], L_FIGURES + mode * D_DISTS + d,
						  8);
			fputc('\n', f);
		}
	}
	fprintf(f, "published December 2014, 117 slots: binary search 180, linear 460 cycles "
		   "average\n");
}

/* A perf case of the suite that passed: the tables are written. */
static bool memslots_wanted(const struct case_result *r)
{
	return r->inst->suite == &suite_memslots && r->inst->def->kind == CASE_PERF &&
	       r->outcome == OUTCOME_PASS;
}

/* The update and lookup tables, each with the published figures beside it. */
static void memslots_tables(FILE *f, const struct case_result *results, size_t n)
{
	summary_updates(f, results, n);
	summary_lookups(f, results, n);
}

static const struct summary_table memslots_table = {.wanted = memslots_wanted,
						    .write = memslots_tables};

const struct suite_def suite_memslots = {
    .name = "memslots",
    .doc = "KVM's memslot array: sorted updates (heap sort, swap, shift) and lookups",
    SUITE_CASES(memslots_cases),
    .tables = (const struct summary_table *const[]){&memslots_table, NULL},
    .impl_keys = (const struct impl_key *const[]){&memslots_update_key, &memslots_lookup_key, NULL},
    .rules = suite_memslots_rules,
    .rules_file = "suites/memslots/rules.conf",
};
