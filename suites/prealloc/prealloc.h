/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prealloc.h - inside the prealloc suite: what its checks (checks.c), its start-up perf case
 * (startup.c) and its case table (suite.c) share. Prefix prealloc_case_, which keeps these
 * apart from impl/prealloc.h's prealloc_ (the implementation they test). */
#ifndef MG_SUITES_PREALLOC_PREALLOC_H
#define MG_SUITES_PREALLOC_PREALLOC_H

#include "impl/prealloc.h"
#include "run/case.h"
#include "suites/pages.h"

/* Its --impl keys (suite.c): how pages are faulted in, threads asked for, the cap, and where
 * the placement check binds. */
extern const struct impl_key prealloc_method_key, prealloc_threads_key, prealloc_cap_key,
    prealloc_node_key;

/** prealloc_case_impl_opts() - the implementation under test, as --impl chose it, for a
 * guest with one vCPU per PU of the host @ctx plans for. */
struct prealloc_opts prealloc_case_impl_opts(struct case_ctx *ctx);

/** prealloc_case_gigapages() - 1 GiB pages for @size bytes, rounded up to a multiple of the
 * PUs (so that every thread gets the same share). */
uint64_t prealloc_case_gigapages(const struct hw_info *hw, uint64_t size);

/* The checks (checks.c). */
case_expand_fn prealloc_case_expand_numa;
case_expand_fn prealloc_case_expand_methods;
/** prealloc_case_resident() - after a prealloc every page is resident and kept its contents. */
void prealloc_case_resident(struct case_ctx *ctx);
/** prealloc_case_plan() - the thread rule and the page ranges on a table of guests. */
void prealloc_case_plan(struct case_ctx *ctx);
/** prealloc_case_numa_plan() - a region a node: threads in proportion, bound to its PUs. */
void prealloc_case_numa_plan(struct case_ctx *ctx);
/** prealloc_case_running_out() - a hugetlb pool too small: an error saying so, no death. */
void prealloc_case_running_out(struct case_ctx *ctx);
case_expand_fn prealloc_case_expand_ways;
/** prealloc_case_placement() - a region a node, in turn or in parallel: every page on it. */
void prealloc_case_placement(struct case_ctx *ctx);
/** prealloc_case_node_pool() - one node's pool alone: a region bound there takes its pages. */
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

/*
 * A region per node, each bound to its node as QEMU binds a memory backend's (host-nodes,
 * policy=bind), preallocated one of two ways (regions.c): in turn, each with all threads
 * unbound and the memory bound, as QEMU 7.2 does one backend after another; or in parallel,
 * prealloc_many() with each node's share of threads bound to its PUs (the review's proposal).
 */
struct prealloc_case_nodes {
	unsigned int n;				/* regions, one a node */
	int kind;				/* of kinds[] (suites/pages.h) */
	size_t bytes;				/* each */
	hwloc_obj_t node[PREALLOC_MAX_REGIONS]; /* each region's node: set before mapping */
	struct mapping m[PREALLOC_MAX_REGIONS]; /* valid up to .mapped */
	struct prealloc_region r[PREALLOC_MAX_REGIONS];
	unsigned int mapped;
};

/**
 * prealloc_case_nodes_map() - map @g's regions; in turn (not @parallel) bind each one's memory
 * to its node here. Returns 0, or -errno having said why (case_error); unmap in either case.
 */
int prealloc_case_nodes_map(struct case_ctx *ctx, struct prealloc_case_nodes *g,
			    hwloc_topology_t topo, bool parallel);

/**
 * prealloc_case_nodes_prealloc() - prealloc @g's mapped regions one way with @o's threads,
 * the wall time in @ms and what ran in @rep. Returns 0, or -errno with @err.
 */
int prealloc_case_nodes_prealloc(struct prealloc_case_nodes *g, const struct prealloc_opts *o,
				 bool parallel, struct prealloc_report *rep, double *ms,
				 struct mg_err *err);

/** prealloc_case_nodes_unmap() - unmap what prealloc_case_nodes_map() mapped. */
void prealloc_case_nodes_unmap(struct prealloc_case_nodes *g);

/* The perf case: both ways side by side. */
enum {
	REGIONS_IN_TURN_MS,
	REGIONS_PARALLEL_MS,
	REGIONS_PARALLEL_OVER_IN_TURN,
	REGIONS_THREADS,
	REGIONS_METRICS,
};
extern const struct metric_def prealloc_case_regions_metrics[REGIONS_METRICS];
case_expand_fn prealloc_case_expand_regions;
/** prealloc_case_regions() - a region a node, preallocated in turn and in parallel, timed. */
void prealloc_case_regions(struct case_ctx *ctx);
extern const struct summary_table prealloc_case_regions_table;
/** prealloc_case_startup() - start-up time per method and thread count; memset the limit. */
void prealloc_case_startup(struct case_ctx *ctx);
extern const struct summary_table prealloc_case_startup_table;

#endif
