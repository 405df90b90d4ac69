/* prealloc.h - inside the prealloc suite: what its checks (checks.c), its start-up perf case
 * (startup.c) and its case table (suite.c) share. Prefix prealloc_case_, which keeps these
 * apart from impl/prealloc.h's prealloc_ (the implementation they test). */
#ifndef MG_SUITES_PREALLOC_PREALLOC_H
#define MG_SUITES_PREALLOC_PREALLOC_H

#include "impl/prealloc.h"
#include "run/case.h"

/** prealloc_case_impl_opts() - the implementation under test, as --impl chose it, for a
 * guest with one vCPU per PU of the host @ctx plans for. */
struct prealloc_opts prealloc_case_impl_opts(struct case_ctx *ctx);

/** prealloc_case_gigapages() - 1 GiB pages for @size bytes, rounded up to a multiple of the
 * PUs (so that every thread gets the same share). */
uint64_t prealloc_case_gigapages(const struct hw_info *hw, uint64_t size);

/* The checks (checks.c). */
unsigned int prealloc_case_expand_numa(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max);
unsigned int prealloc_case_expand_methods(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max);
void prealloc_case_resident(struct case_ctx *ctx);
void prealloc_case_plan(struct case_ctx *ctx);
void prealloc_case_numa_plan(struct case_ctx *ctx);
void prealloc_case_running_out(struct case_ctx *ctx);
unsigned int prealloc_case_expand_ways(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max);
void prealloc_case_placement(struct case_ctx *ctx);
void prealloc_case_node_pool(struct case_ctx *ctx);

/*
 * Start-up time (startup.c). Each sample runs each method at 1, 2, 4 ... threads and at all
 * PUs (the scaling curve: metric METHOD.tN.ms), then the implementation under test (impl.*);
 * its metrics, the case, and its table beside the published figures.
 */
enum { SWEEP_TOUCH, SWEEP_POPULATE, SWEEP_METHODS };
#define SWEEP_POINTS 9 /* t1 t2 t4 ... t128, and tall */
enum {
	STARTUP_IMPL_MS = SWEEP_METHODS * SWEEP_POINTS,
	STARTUP_IMPL_THREADS,
	STARTUP_IMPL_IMBALANCE,
	STARTUP_IMPL_CPU_MS,
	STARTUP_IMPL_SPEEDUP,
	STARTUP_IMPL_EFFICIENCY,
	STARTUP_MEMSET_MS,
	STARTUP_MLOCK_MS,
	STARTUP_MAP_POPULATE_MS,
	STARTUP_REF_MS,
	STARTUP_METRICS,
};
extern const struct metric_def prealloc_case_startup_metrics[STARTUP_METRICS];

/* A region per node, in turn and in parallel (regions.c). */
enum {
	REGIONS_IN_TURN_MS,
	REGIONS_PARALLEL_MS,
	REGIONS_PARALLEL_OVER_IN_TURN,
	REGIONS_THREADS,
	REGIONS_METRICS,
};
extern const struct metric_def prealloc_case_regions_metrics[REGIONS_METRICS];
unsigned int prealloc_case_expand_regions(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max);
void prealloc_case_regions(struct case_ctx *ctx);
extern const struct summary_table prealloc_case_regions_table;
void prealloc_case_startup(struct case_ctx *ctx);
extern const struct summary_table prealloc_case_startup_table;

#endif
