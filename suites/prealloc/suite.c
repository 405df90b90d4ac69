/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the prealloc suite (the 2017 parallel-prealloc thread, the 2025 thread-cap
 * thread): its case table, the implementation under test as --impl chose it, and the hugetlb
 * pages its cases need. */
#include <stdlib.h>
#include <string.h>

#include "suites/pages.h"
#include "suites/prealloc/prealloc.h"
#include "suites/suites.h"

#include "util/embed.h"
#include "util/util.h"

/* Its gates and tolerances (rules.conf beside this file), compiled in. */
EMBED_TEXT(suite_prealloc_rules, "suites/prealloc/rules.conf");

/* Pages reserved beyond the guest size: the checks' 64 MiB and the running-out region. */
#define RESERVE_MARGIN_PAGES 64

uint64_t prealloc_case_gigapages(const struct hw_info *hw, uint64_t size)
{
	uint64_t pus = hw->n_pus ? hw->n_pus : 1, pages = (size + GIB - 1) / GIB;

	return (pages + pus - 1) / pus * pus;
}

/*
 * --reserve-hugepages: the free pages of @page bytes these cases use: the guest size in 2 MiB
 * pages and a margin; in 1 GiB pages what the start-up case asks for, and one more for the
 * residency check.
 */
static uint64_t prealloc_hugepages(const struct hw_info *hw, const struct run_opts *o,
				   uint64_t page)
{
	uint64_t size = case_guest_size(hw, o);

	if (page == 2 * MIB)
		return size / page + RESERVE_MARGIN_PAGES;
	if (page == GIB)
		return prealloc_case_gigapages(hw, size) + 1;
	return 0;
}

/* Its --impl keys. The thread count and the cap are not a module's names: "vcpus" is the
 * guest's vCPU count, the caps are QEMU's, and a whole number up to one more than any host's
 * PUs is taken too (the rule then uses the PUs). */
#define STR_(x) #x
#define STR(x) STR_(x)
#define NUMBER_MAX 4096
static const char *const threads_values[] = {"vcpus"};
static const char *const cap_values[] = {STR(PREALLOC_CAP_DEFAULT), STR(PREALLOC_CAP_QEMU)};
/* Not the implementation's: where the placement check binds each region (next: a planted
 * wrong binding, which the check must catch). */
static const char *const node_values[] = {"own", "next"};

const struct impl_key prealloc_method_key = {
    .key = "prealloc.method",
    .names = prealloc_method_names,
    .n_names = PREALLOC_METHODS,
    .def = PREALLOC_POPULATE,
    .doc = "how pages are faulted in (populate: MADV_POPULATE_WRITE, falls back to touch)"};
const struct impl_key prealloc_threads_key = {
    .key = "prealloc.threads",
    .names = threads_values,
    .n_names = ARRAY_SIZE(threads_values),
    .doc = "threads asked for (vcpus: the guest's vCPU count, here the host's PUs), or N",
    .max_number = NUMBER_MAX};
const struct impl_key prealloc_cap_key = {
    .key = "prealloc.cap",
    .names = cap_values,
    .n_names = ARRAY_SIZE(cap_values),
    .doc = "most threads used (32 proposed in 2025, 16 QEMU's today), or N",
    .max_number = NUMBER_MAX};
const struct impl_key prealloc_node_key = {
    .key = "prealloc.node",
    .names = node_values,
    .n_names = ARRAY_SIZE(node_values),
    .doc = "the node each region is bound to in the placement check (next: a planted wrong "
	   "one)"};

struct prealloc_opts prealloc_case_impl_opts(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	const char *threads = impl_get(o->impl, &prealloc_threads_key);
	int m = prealloc_method_parse(impl_get(o->impl, &prealloc_method_key));

	return (struct prealloc_opts){
	    .method = m < 0 ? PREALLOC_POPULATE : (enum prealloc_method)m,
	    .requested = strcmp(threads, "vcpus") ? (unsigned int)atoi(threads) : hw->n_pus,
	    .cap = (unsigned int)atoi(impl_get(o->impl, &prealloc_cap_key)),
	    .host_pus = hw->n_pus,
	    .topo = hw->topo,
	    .bind = hw->can_bind,
	};
}

static unsigned int expand_kinds(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max, bool perf)
{
	unsigned int n = 0;

	(void)opts;
	for (int k = 0; k < K_KINDS && n < max; k++) {
		/* The perf matrix skips the memfd kinds: they fault like their anon twins. */
		if (!kind_offered(hw, k) || (perf && kinds[k].memfd))
			continue;
		case_params_add(&out[n++], "kind", "%s", kinds[k].name);
	}
	return n;
}

static unsigned int expand_check_kinds(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max)
{
	return expand_kinds(hw, opts, out, max, false);
}

static unsigned int expand_perf_kinds(const struct hw_info *hw, const struct run_opts *opts,
				      struct case_params *out, unsigned int max)
{
	return expand_kinds(hw, opts, out, max, true);
}

static const struct case_def prealloc_cases[] = {
    {.name = "resident",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "after a prealloc every page is resident and kept its contents",
     .expand = expand_check_kinds,
     .run = prealloc_case_resident},
    {.name = "plan",
     .kind = CASE_CHECK,
     .doc = "the thread rule and the page ranges on a table of guests",
     .run = prealloc_case_plan},
    {.name = "numa_plan",
     .kind = CASE_CHECK,
     .doc = "one region per node: threads in proportion, bound to the node's PUs",
     .expand = prealloc_case_expand_numa,
     .run = prealloc_case_numa_plan},
    {.name = "running_out",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "a hugetlb pool too small: an error saying so, the process lives",
     .expand = prealloc_case_expand_methods,
     .run = prealloc_case_running_out},
    {.name = "placement",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "a region per node, bound to it, preallocated in turn or in parallel: every page "
	    "on its node (move_pages)",
     .expand = prealloc_case_expand_ways,
     .run = prealloc_case_placement},
    {.name = "node_pool",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "one node's 2 MiB pool reserved alone: a region bound there takes its pages, no "
	    "other node's; a node short of pages is an error naming it",
     .run = prealloc_case_node_pool},
    {.name = "startup",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "start-up time per method and thread count; memset as the limit",
     CASE_METRICS(prealloc_case_startup_metrics),
     .expand = expand_perf_kinds,
     .run = prealloc_case_startup},
    {.name = "regions",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "a region per node, preallocated in turn (QEMU 7.2) and in parallel, bound "
	    "(the review's proposal), side by side",
     CASE_METRICS(prealloc_case_regions_metrics),
     .expand = prealloc_case_expand_regions,
     .run = prealloc_case_regions},
};

const struct suite_def suite_prealloc = {
    .name = "prealloc",
    .doc = "parallel guest-memory preallocation: residency, plans, running out, start-up time",
    SUITE_CASES(prealloc_cases),
    /* Start-up time per page kind, then the regions per node. */
    .tables = (const struct summary_table *const[]){&prealloc_case_startup_table,
						    &prealloc_case_regions_table, NULL},
    .hugepages = prealloc_hugepages,
    .impl_keys = (const struct impl_key *const[]){&prealloc_method_key, &prealloc_threads_key,
						  &prealloc_cap_key, &prealloc_node_key, NULL},
    .rules = suite_prealloc_rules,
    .rules_file = "suites/prealloc/rules.conf",
};
