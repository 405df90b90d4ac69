/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regions.c - the prealloc suite's multi-node perf case: a guest's memory as one region per
 * NUMA node, each bound to its node, preallocated two ways side by side. In turn, each region
 * with all threads, unbound, as QEMU 7.2 does one memory backend after another; in parallel,
 * each with its node's share of the threads bound to the node's PUs, as the review of the
 * 2025 thread-cap thread proposed. Placement is the placement check's (checks.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "run/result.h"
#include "run/sampling.h"
#include "suites/pages.h"
#include "suites/prealloc/prealloc.h"

#include "util/util.h"

const struct metric_def prealloc_case_regions_metrics[REGIONS_METRICS] = {
    [REGIONS_IN_TURN_MS] = {"in_turn.ms", "ms", LOWER_IS_BETTER},
    [REGIONS_PARALLEL_MS] = {"parallel.ms", "ms", LOWER_IS_BETTER},
    [REGIONS_PARALLEL_OVER_IN_TURN] = {"parallel_over_in_turn", "x", LOWER_IS_BETTER},
    [REGIONS_THREADS] = {"parallel.threads", "threads", HIGHER_IS_BETTER},
};

struct regions_case {
	struct case_ctx *ctx;
	struct prealloc_case_nodes g;
	struct prealloc_opts o;
	double ms[2];	      /* this round's, by way */
	unsigned int threads; /* of the last way run */
};

unsigned int prealloc_case_expand_regions(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max)
{
	static const int kinds_measured[] = {K_ANON, K_HUGE_2M};
	unsigned int n = 0;

	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(kinds_measured) && n < max; i++)
		if (kind_offered(hw, kinds_measured[i]))
			case_params_add(&out[n++], "kind", "%s", kinds[kinds_measured[i]].name);
	return n;
}

int prealloc_case_nodes_map(struct case_ctx *ctx, struct prealloc_case_nodes *g,
			    hwloc_topology_t topo, bool parallel)
{
	g->mapped = 0;
	for (unsigned int i = 0; i < g->n; i++) {
		int ret = map_kind(g->kind, g->bytes, 0, &g->m[i]);

		if (ret) {
			case_error(ctx, "mapping region %u (%zu MiB of %s): %s", i, g->bytes >> 20,
				   kinds[g->kind].name, strerror(-ret));
			return ret;
		}
		g->mapped++;
		g->r[i] = (struct prealloc_region){g->m[i].addr, g->bytes, kinds[g->kind].page,
						   (int)g->node[i]->logical_index};
		/* In turn, as QEMU 7.2: the backend binds its memory, its threads run anywhere. */
		if (!parallel &&
		    hwloc_set_area_membind(topo, g->m[i].addr, g->bytes, g->node[i]->nodeset,
					   HWLOC_MEMBIND_BIND,
					   HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT)) {
			ret = -errno;
			case_error(ctx, "binding region %u to node %u: %s", i,
				   g->node[i]->logical_index, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int prealloc_case_nodes_prealloc(struct prealloc_case_nodes *g, const struct prealloc_opts *o,
				 bool parallel, struct prealloc_report *rep, double *ms,
				 struct mg_err *err)
{
	struct measure_span span;
	int ret = 0;

	*rep = (struct prealloc_report){0};
	measure_span_begin(&span);
	for (unsigned int i = 0; !ret && !parallel && i < g->n; i++) {
		struct prealloc_region unbound = g->r[i];

		unbound.node = -1;
		ret = prealloc_one(&unbound, o, rep, err);
	}
	if (!ret && parallel)
		ret = prealloc_many(g->r, g->n, o, rep, err);
	measure_span_end(&span);
	*ms = (double)span.wall_ns / 1e6;
	return ret;
}

void prealloc_case_nodes_unmap(struct prealloc_case_nodes *g)
{
	for (unsigned int i = 0; i < g->mapped; i++)
		unmap_kind(&g->m[i]);
	g->mapped = 0;
}

/* Map the regions, prealloc them one way, time it, unmap. 0, or -errno having said why. */
static int one_way(struct regions_case *rc, bool parallel, double *ms)
{
	struct prealloc_report rep = {0};
	struct mg_err err = {0};
	int ret = prealloc_case_nodes_map(rc->ctx, &rc->g, rc->o.topo, parallel);

	if (!ret) {
		ret = prealloc_case_nodes_prealloc(&rc->g, &rc->o, parallel, &rep, ms, &err);
		if (ret && err.msg[0])
			case_error(rc->ctx, "%s", err.msg);
	}
	rc->threads = rep.threads;
	prealloc_case_nodes_unmap(&rc->g);
	return ret;
}

static int regions_sample(void *arg, unsigned int way, unsigned int round, bool measured)
{
	struct regions_case *rc = arg;
	int ret;

	(void)round;
	ret = one_way(rc, way == 1, &rc->ms[way]);
	if (!ret && measured)
		case_sample(rc->ctx, way ? REGIONS_PARALLEL_MS : REGIONS_IN_TURN_MS, rc->ms[way],
			    NULL);
	if (!ret && measured && way == 1)
		case_sample(rc->ctx, REGIONS_THREADS, rc->threads, NULL);
	return ret;
}

static int regions_round_end(void *arg, unsigned int round, bool measured)
{
	struct regions_case *rc = arg;

	(void)round;
	if (measured && rc->ms[0] > 0)
		case_sample(rc->ctx, REGIONS_PARALLEL_OVER_IN_TURN, rc->ms[1] / rc->ms[0], NULL);
	return 0;
}

void prealloc_case_regions(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	struct regions_case rc = {.ctx = ctx, .g.kind = param_kind(ctx)};
	struct case_arms arms = {.n = 2,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = regions_sample,
				 .round_end = regions_round_end,
				 .arg = &rc,
				 .ctx = ctx};
	uint64_t size = case_guest_size(hw, o), page;

	if (rc.g.kind < 0)
		return;
	if (hw->n_numa < 2) {
		case_skip(ctx,
			  "one NUMA node here, nothing to spread: `memgate vm -- run -s prealloc "
			  "-k '*regions*'` runs this in a two-node guest");
		return;
	}
	rc.o = prealloc_case_impl_opts(ctx);
	if (!hw->can_bind || !rc.o.topo) {
		case_skip(ctx, "this host cannot bind threads and memory to nodes (hwloc)");
		return;
	}
	rc.o.bind = true;
	rc.g.n = hw->n_numa < PREALLOC_MAX_REGIONS ? hw->n_numa : PREALLOC_MAX_REGIONS;
	page = kinds[rc.g.kind].page;
	/* 4 KiB first touches are bimodal here (startup.c): up to 1 GiB in all, as there. */
	if (!kinds[rc.g.kind].hugetlb && size > GIB)
		size = GIB;
	rc.g.bytes = (size_t)(size / rc.g.n / page * page);
	if (!rc.g.bytes) {
		case_skip(ctx, "%llu MiB is less than a page a node",
			  (unsigned long long)(size >> 20));
		return;
	}
	if (kinds[rc.g.kind].hugetlb && pool_short(ctx, rc.g.kind, rc.g.n * rc.g.bytes / page))
		return;
	for (unsigned int i = 0; i < rc.g.n; i++)
		rc.g.node[i] = hwloc_get_obj_by_type(rc.o.topo, HWLOC_OBJ_NUMANODE, i);
	for (unsigned int m = 0; m < REGIONS_METRICS; m++)
		case_counter(ctx, m, "clock");
	case_prop(ctx, "regions", "%u", rc.g.n);
	case_prop(ctx, "region_mib", "%zu", rc.g.bytes >> 20);
	/* What ran the vCPUs, as CPUID says: QEMU's TCG times nothing like hardware does. */
	case_prop(ctx, "accelerator", "%s",
		  !strcmp(hw->cpu.hypervisor, "qemu")
		      ? "under TCG (emulated: not the hardware's timing)"
		  : !strcmp(hw->cpu.hypervisor, "none") ? "on bare metal"
							: "under a hypervisor");
	case_interleave(&arms);
}

static bool regions_wanted(const struct case_result *r)
{
	return r->inst->def->metrics == prealloc_case_regions_metrics &&
	       case_result_sampled(r, REGIONS_PARALLEL_MS);
}

static void regions_row(FILE *f, const struct case_result *r)
{
	const char *regions = case_result_prop(r, "regions"),
		   *mib = case_result_prop(r, "region_mib");
	const char *cpu = case_result_prop(r, "accelerator");

	fprintf(f,
		"  %-12s %s x %4s MiB  in turn %9.1f ms  parallel %9.1f ms  %.2fx, %.0f threads, "
		"%s\n",
		case_params_get(&r->inst->params, "kind"), regions ? regions : "?", mib ? mib : "?",
		case_result_median(r, REGIONS_IN_TURN_MS),
		case_result_median(r, REGIONS_PARALLEL_MS),
		case_result_median(r, REGIONS_PARALLEL_OVER_IN_TURN),
		case_result_median(r, REGIONS_THREADS), cpu ? cpu : "?");
}

const struct summary_table prealloc_case_regions_table = {
    .header = "prealloc: a region per node, medians (in turn: each with all threads, "
	      "unbound, as QEMU 7.2; parallel: each node's share, bound to it)\n",
    .published = "asked in the 2025 thread-cap thread's review: with a memory backend per "
		 "node, can the nodes be preallocated in parallel, min(vCPUs, 16) / nodes "
		 "threads each?\n",
    .wanted = regions_wanted,
    .row = regions_row};
