/* SPDX-License-Identifier: GPL-2.0-or-later */
/* checks.c - the prealloc suite's checks: every page resident and its contents kept after a
 * prealloc, the thread rule and the page ranges on a table of guests, multi-node plans, and
 * a hugetlb pool too small for the region. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw/reserve.h"
#include "run/impl_opts.h"
#include "suites/pages.h"
#include "suites/prealloc/prealloc.h"
#include "util/util.h"

/* Checks fault this much: enough pages for every thread, little time. */
#define CHECK_BYTES (64 * MIB)
/* Pages the running-out check asks for beyond what the pool has free. */
#define OVERSHOOT_PAGES 8
/* Every 7th page gets a marker in the byte the touch method writes: it must survive. */
static void write_markers(const struct mapping *m, size_t page)
{
	for (size_t i = 0; i < m->size / page; i += 7)
		m->addr[i * page] = (char)(i * 31 + 7);
}

static size_t bad_marker(const struct mapping *m, size_t page)
{
	for (size_t i = 0; i < m->size / page; i += 7)
		if (m->addr[i * page] != (char)(i * 31 + 7))
			return i;
	return SIZE_MAX;
}

void prealloc_case_resident(struct case_ctx *ctx)
{
	int k = param_kind(ctx);
	size_t size, bad;
	struct prealloc_opts o = prealloc_case_impl_opts(ctx);
	struct prealloc_report rep;
	struct mapping m;
	struct mg_err err;
	int ret;

	if (k < 0)
		return;
	size = kinds[k].page == GIB ? GIB : CHECK_BYTES;
	if (kinds[k].hugetlb && pool_short(ctx, k, size / kinds[k].page))
		return;
	ret = map_kind(k, size, 0, &m);
	if (ret) {
		case_error(ctx, "mapping %zu MiB of %s: %s", size >> 20, kinds[k].name,
			   strerror(-ret));
		return;
	}
	write_markers(&m, kinds[k].page);
	struct prealloc_region r = {m.addr, size, kinds[k].page, -1};

	ret = prealloc_one(&r, &o, &rep, &err);
	if (ret == -ENOSYS)
		case_skip(ctx, "%s", err.msg);
	else if (ret)
		case_fail(ctx, "%s", err.msg);
	else if (prealloc_resident_pages(&r) != size / kinds[k].page)
		case_fail(ctx, "%zu of %zu pages resident after prealloc (%s, %u threads)",
			  prealloc_resident_pages(&r), size / kinds[k].page,
			  prealloc_method_name(rep.method), rep.threads);
	else if ((bad = bad_marker(&m, kinds[k].page)) != SIZE_MAX)
		case_fail(ctx, "page %zu lost its contents in the prealloc (%s)", bad,
			  prealloc_method_name(rep.method));
	case_log(ctx, "%s: %zu MiB in %zu pages, %s, %u threads", kinds[k].name, size >> 20,
		 size / kinds[k].page, prealloc_method_name(rep.method), rep.threads);
	unmap_kind(&m);
}

/* The thread rule on guests from QEMU's threads: (vCPUs, PUs, size, page, cap) -> threads. */
static const struct {
	unsigned int vcpus, pus;
	uint64_t size, page;
	unsigned int cap, want;
	const char *why;
} plan_table[] = {
    {64, 64, 4096 * GIB, 2 * MIB, 16, 16,
     "the 2017 parallel-prealloc thread: 16 threads for a 4 TB guest"},
    {64, 64, 4096 * GIB, 2 * MIB, 32, 32, "the 2025 thread-cap thread: the cap raised to 32"},
    {240, 240, 7680 * GIB, 2 * MIB, 32, 32, "the 2025 thread-cap thread: 240 vCPUs, still 32"},
    {8, 2, 4 * GIB, 4096, 32, 2, "no more threads than host PUs"},
    {4, 8, 4 * GIB, 4096, 32, 4, "no more threads than vCPUs"},
    {16, 16, 128 * MIB, 4096, 32, 2, "64 MiB a thread at least"},
    {16, 16, 4 * MIB, 2 * MIB, 32, 1, "under 64 MiB: one thread"},
    {16, 16, GIB, GIB, 32, 1, "one 1 GiB page: one thread"},
    {3, 16, 3 * GIB + 2 * MIB, 2 * MIB, 32, 3, "1537 pages split 513/512/512"},
    {2, 2, 256 * MIB, 2 * MIB, 1, 1, "a cap of 1"},
};

/* The shares of one region: contiguous, covering it exactly, sizes within one page. */
static int check_shares(const struct prealloc_share *s, int n, size_t pages, char *why, size_t len)
{
	size_t next = 0;

	for (int i = 0; i < n; i++) {
		if (s[i].first_page != next || !s[i].n_pages)
			return snprintf(why, len, "share %d starts at page %zu, expected %zu", i,
					s[i].first_page, next);
		/* The remainder goes one page each to the first threads. */
		if (i && s[i].n_pages > s[i - 1].n_pages)
			return snprintf(why, len, "share %d has %zu pages, more than share %d", i,
					s[i].n_pages, i - 1);
		next += s[i].n_pages;
	}
	if (next != pages || (n && s[0].n_pages - s[n - 1].n_pages > 1))
		return snprintf(why, len, "shares cover %zu of %zu pages, spread %zu", next, pages,
				n ? s[0].n_pages - s[n - 1].n_pages : 0);
	return 0;
}

void prealloc_case_plan(struct case_ctx *ctx)
{
	static struct prealloc_share shares[PREALLOC_MAX_THREADS];

	for (size_t i = 0; i < ARRAY_SIZE(plan_table); i++) {
		struct prealloc_opts o = {.requested = plan_table[i].vcpus,
					  .cap = plan_table[i].cap,
					  .host_pus = plan_table[i].pus};
		struct prealloc_region r = {NULL, plan_table[i].size, plan_table[i].page, -1};
		int n = prealloc_plan(&r, 1, &o, shares, PREALLOC_MAX_THREADS);
		char why[200];

		if (n != (int)plan_table[i].want) {
			case_fail(ctx,
				  "%u vCPUs, %u PUs, %" PRIu64 " MiB in %" PRIu64 " KiB pages, cap "
				  "%u: %d threads, expected %u (%s)",
				  plan_table[i].vcpus, plan_table[i].pus, plan_table[i].size >> 20,
				  plan_table[i].page >> 10, plan_table[i].cap, n,
				  plan_table[i].want, plan_table[i].why);
			continue;
		}
		if (check_shares(shares, n, plan_table[i].size / plan_table[i].page, why,
				 sizeof(why)))
			case_fail(ctx, "%s: %s", plan_table[i].why, why);
	}
}

/* Multi-node plans on topologies we lack: the loaded one (--topology), and two synthetic. */
static const struct {
	const char *name;
	const char *spec;
} numa_topos[] = {
    {"2node", "synthetic:pack:2 [numa] core:4 pu:2"},
    {"4node", "synthetic:pack:4 [numa] core:6 pu:2"},
};

unsigned int prealloc_case_expand_numa(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)opts;
	if (hw->n_numa >= 2 && n < max) {
		case_params_add(&out[n++], "topology", "%s",
				hw->source == HW_SOURCE_HOST ? "host" : "loaded");
	}
	for (size_t i = 0; i < ARRAY_SIZE(numa_topos) && n < max; i++) {
		case_params_add(&out[n++], "topology", "%s", numa_topos[i].name);
	}
	return n;
}

/* One region per node, node i holding i + 1 GiB: threads must follow the sizes and the nodes. */
static void check_numa_region_shares(struct case_ctx *ctx, hwloc_topology_t topo,
				     const struct prealloc_region *r, unsigned int n_regions,
				     const struct prealloc_share *s, int n)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < n_regions; i++)
		total += r[i].size;
	for (unsigned int i = 0; i < n_regions; i++) {
		hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned int)i);
		int first = 0, count = 0;
		double fair = (double)n * (double)r[i].size / (double)total;
		char why[200], *list = NULL;

		while (first < n && s[first].region != i)
			first++;
		/* A node without a CPU this process may use (a cpuset): its threads run unbound. */
		bool cpus = node && !hwloc_bitmap_iszero(node->cpuset);
		int want = cpus ? r[i].node : -1;

		while (first + count < n && s[first + count].region == i) {
			if (s[first + count].node != want)
				case_fail(ctx,
					  "a share of node %u's region runs on node %d, not %d", i,
					  s[first + count].node, want);
			count++;
		}
		if (count < 1 || (count > 1 && (count > fair + 1 || count < fair - 1)))
			case_fail(ctx,
				  "node %u (%" PRIu64 " GiB of %" PRIu64 "): %d threads, its share "
				  "of %d is %.1f",
				  i, r[i].size >> 30, total >> 30, count, n, fair);
		if (check_shares(s + first, count, r[i].size / r[i].page_size, why, sizeof(why)))
			case_fail(ctx, "node %u: %s", i, why);
		if (cpus)
			hwloc_bitmap_list_asprintf(&list, node->cpuset);
		case_log(ctx, "node %u: %" PRIu64 " GiB, %d threads %s %s", i, r[i].size >> 30,
			 count, want < 0 ? "unbound (no CPU of the node allowed)" : "bound to PUs",
			 list ? list : "");
		free(list);
	}
}

void prealloc_case_numa_plan(struct case_ctx *ctx)
{
	const char *name = case_param(ctx, "topology");
	const struct hw_info *hw = case_hw(ctx);
	static struct prealloc_share s[PREALLOC_MAX_THREADS];
	struct prealloc_region r[PREALLOC_MAX_REGIONS];
	struct hw_info own = {0};
	struct mg_err err;
	struct prealloc_opts o;
	int n;
	unsigned int n_regions;

	for (size_t i = 0; i < ARRAY_SIZE(numa_topos); i++) {
		if (strcmp(name, numa_topos[i].name))
			continue;
		if (hw_detect(&own, numa_topos[i].spec, &err)) {
			case_error(ctx, "%s", err.msg);
			return;
		}
		hw = &own;
	}
	o = prealloc_case_impl_opts(ctx);
	o.requested = o.host_pus = hw->n_pus; /* a guest with a vCPU per PU of that machine */
	o.topo = hw->topo; /* the planned machine's, also for the synthetic ones */
	n_regions = hw->n_numa < PREALLOC_MAX_REGIONS ? hw->n_numa : PREALLOC_MAX_REGIONS;
	for (unsigned int i = 0; i < n_regions; i++)
		r[i] = (struct prealloc_region){NULL, (uint64_t)(i + 1) * GIB, 2 * MIB, (int)i};
	n = prealloc_plan(r, n_regions, &o, s, PREALLOC_MAX_THREADS);
	if (n <= 0)
		case_fail(ctx, "no plan for %u nodes", hw->n_numa);
	else
		check_numa_region_shares(ctx, hw->topo, r, n_regions, s, n);
	case_log(ctx, "%s: %u nodes, %u PUs, %d threads (cap %u)", name, hw->n_numa, hw->n_pus, n,
		 o.cap);
	if (hw == &own)
		hw_release(&own);
}

unsigned int prealloc_case_expand_methods(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max)
{
	static const enum prealloc_method methods[] = {PREALLOC_TOUCH, PREALLOC_POPULATE};
	unsigned int n = 0;

	(void)opts;
	if (!kind_offered(hw, K_HUGE_2M))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(methods) && n < max; i++)
		case_params_add(&out[n++], "method", "%s", prealloc_method_name(methods[i]));
	return n;
}

static void sentinel(int sig)
{
	(void)sig;
}

/* A region larger than the pool's free pages: an error that says so, and the process lives. */
void prealloc_case_running_out(struct case_ctx *ctx)
{
	struct prealloc_opts o = prealloc_case_impl_opts(ctx);
	uint64_t have = pool_free(K_HUGE_2M);
	struct sigaction mine = {.sa_handler = sentinel}, now;
	struct prealloc_report rep;
	struct mapping m;
	struct mg_err err = {0};
	int ret, method = prealloc_method_parse(case_param(ctx, "method"));

	if (method < 0) {
		case_error(ctx, "no prealloc method named \"%s\"", case_param(ctx, "method"));
		return;
	}
	if (!have) {
		pool_short(ctx, K_HUGE_2M, 1);
		return;
	}
	o.method = (enum prealloc_method)method;
	/* MAP_NORESERVE: the mapping exceeds the pool, and the faults find out. */
	ret = map_kind(K_HUGE_2M, (have + OVERSHOOT_PAGES) * 2 * MIB, MAP_NORESERVE, &m);
	if (ret) {
		case_error(ctx, "mapping %" PRIu64 " hugetlb pages: %s", have + OVERSHOOT_PAGES,
			   strerror(-ret));
		return;
	}
	sigemptyset(&mine.sa_mask);
	if (sigaction(SIGBUS, &mine, NULL)) {
		case_error(ctx, "sigaction: %s", strerror(errno));
		unmap_kind(&m);
		return;
	}
	struct prealloc_region r = {m.addr, m.size, 2 * MIB, -1};

	ret = prealloc_one(&r, &o, &rep, &err);
	sigaction(SIGBUS, NULL, &now);
	if (ret != -EFAULT || !strstr(err.msg, "ran out"))
		case_fail(ctx,
			  "prealloc of %" PRIu64 " pages with %" PRIu64 " free returned %d (%s), "
			  "expected -EFAULT and a message saying the pool ran out",
			  have + OVERSHOOT_PAGES, have, ret, err.msg);
	if (now.sa_handler != sentinel)
		case_fail(ctx, "the SIGBUS handler installed before the prealloc is not back");
	if (rep.populated_bytes != have * 2 * MIB)
		case_fail(ctx, "populated %zu MiB, the pool had %" PRIu64 " MiB",
			  rep.populated_bytes >> 20, have * 2);
	case_log(ctx, "%s", err.msg);
	unmap_kind(&m);
}

/* ---- placement: regions bound to nodes, and every page where it was bound ---------------- */

/* A region per node, this large; its base pages are asked where they are in batches. */
#define PLACEMENT_BYTES (64 * MIB)
#define PLACEMENT_BATCH 1024

unsigned int prealloc_case_expand_ways(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max)
{
	static const char *const ways[] = {"in_turn", "parallel"};
	unsigned int n = 0;

	(void)hw;
	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(ways) && n < max; i++)
		case_params_add(&out[n++], "way", "%s", ways[i]);
	return n;
}

/* Where each base page of @m is (move_pages(2) in its query mode): how many are on OS node
 * @want, on another node (*@other; the first such node in *@seen), or not present. 0 or
 * -errno. */
static int count_placement(const struct mapping *m, int want, size_t *on, size_t *other,
			   size_t *absent, int *seen)
{
	void *pages[PLACEMENT_BATCH];
	int status[PLACEMENT_BATCH];
	size_t total = m->size / 4096;

	*on = *other = *absent = 0;
	*seen = -1;
	for (size_t first = 0; first < total; first += PLACEMENT_BATCH) {
		size_t n = total - first < PLACEMENT_BATCH ? total - first : PLACEMENT_BATCH;

		for (size_t i = 0; i < n; i++)
			pages[i] = m->addr + (first + i) * 4096;
		if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0))
			return -errno;
		for (size_t i = 0; i < n; i++) {
			*on += status[i] == want;
			*absent += status[i] < 0;
			if (status[i] >= 0 && status[i] != want && !(*other)++)
				*seen = status[i];
		}
	}
	return 0;
}

/*
 * One region per node, bound to it, preallocated in turn (each with all threads, unbound, the
 * memory bound: QEMU 7.2's way) or in parallel (each with its node's share of threads, bound
 * to its PUs: the review's proposal); then every page is looked up: one off its node fails.
 */
void prealloc_case_placement(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	struct prealloc_opts o = prealloc_case_impl_opts(ctx);
	struct prealloc_case_nodes g = {.kind = K_ANON, .bytes = PLACEMENT_BYTES};
	hwloc_obj_t nodes[PREALLOC_MAX_REGIONS];
	bool parallel = !strcmp(case_param(ctx, "way"), "parallel");
	bool planted = !strcmp(impl_get(case_opts(ctx)->impl, &prealloc_node_key), "next");
	unsigned int n = hw->n_numa < PREALLOC_MAX_REGIONS ? hw->n_numa : PREALLOC_MAX_REGIONS, i;
	struct prealloc_report rep = {0};
	struct mg_err err = {0};
	char prop[32];
	double ms = 0;
	int ret;

	if (n < 2) {
		case_skip(ctx,
			  "one NUMA node here, nothing can land on another: `memgate vm -- run "
			  "-s prealloc -k '*placement*'` runs this in a two-node guest");
		return;
	}
	if (!hw->can_bind || !o.topo) {
		case_skip(ctx, "this host cannot bind threads and memory to nodes (hwloc)");
		return;
	}
	o.bind = true;
	g.n = n;
	for (i = 0; i < n; i++)
		nodes[i] = hwloc_get_obj_by_type(o.topo, HWLOC_OBJ_NUMANODE, i);
	/* The planted fault binds each region to the next node, and must be caught. */
	for (i = 0; i < n; i++)
		g.node[i] = nodes[planted ? (i + 1) % n : i];
	ret = prealloc_case_nodes_map(ctx, &g, o.topo, parallel);
	if (!ret)
		ret = prealloc_case_nodes_prealloc(&g, &o, parallel, &rep, &ms, &err);
	if (ret == -ENOSYS)
		case_skip(ctx, "%s", err.msg);
	else if (ret && err.msg[0])
		case_fail(ctx, "%s", err.msg);
	if (!ret)
		case_log(ctx, "%u regions of %llu MiB %s: %.1f ms, %u threads%s", n,
			 (unsigned long long)(PLACEMENT_BYTES >> 20),
			 parallel ? "in parallel" : "in turn", ms, rep.threads,
			 planted ? " (planted: each bound to the next node)" : "");
	for (i = 0; !ret && i < n; i++) {
		size_t on, other, absent;
		int seen, want = (int)nodes[i]->os_index;

		if ((ret = count_placement(&g.m[i], want, &on, &other, &absent, &seen))) {
			case_error(ctx, "move_pages of region %u: %s", i, strerror(-ret));
			break;
		}
		if (other)
			case_fail(
			    ctx,
			    "region %u, for node %d: %zu of its %zu pages on node %d (and %zu "
			    "there, %zu not present)",
			    i, want, other, on + other + absent, seen, on, absent);
		else if (absent)
			case_fail(ctx,
				  "region %u, for node %d: %zu of its %zu pages not present "
				  "after the prealloc",
				  i, want, absent, on + absent);
		case_log(ctx, "region %u: %zu of %zu pages on node %d", i, on, on + other + absent,
			 want);
		snprintf(prop, sizeof(prop), "node%d.pages", want);
		case_prop(ctx, prop, "%zu", on);
	}
	prealloc_case_nodes_unmap(&g);
}

/* ---- per-node pools: one node's reserved alone, and a node short of pages ---------------- */

#define NODE_POOL_PAGES 16

/* Free 2 MiB pages on OS node @node; UINT64_MAX when it cannot be read. */
static uint64_t node_free(int node)
{
	struct hw_page_pool p;

	return hw_hugepage_pool(2 * MIB, node, &p) ? UINT64_MAX : p.free;
}

/* A region of @pages 2 MiB pages bound to logical node @node, preallocated; the mapping stays
 * for the caller (@m). Returns prealloc's 0 or -errno, @err saying why. */
static int prealloc_on_node(const struct prealloc_opts *o, int node, uint64_t pages,
			    struct mapping *m, struct mg_err *err)
{
	struct prealloc_report rep;
	int ret = map_kind(K_HUGE_2M, pages * 2 * MIB, MAP_NORESERVE, m);

	if (ret)
		return mg_err_set(err, -ret, "mapping %llu hugetlb pages: %s",
				  (unsigned long long)pages, strerror(-ret));
	struct prealloc_region r = {m->addr, m->size, 2 * MIB, node};

	return prealloc_one(&r, o, &rep, err);
}

/*
 * The last node's pool grown alone (per-node sysfs, under the host's lock, put back after):
 * a region bound to it takes its pages there, every one, and node 0's pool is untouched; a
 * region bound to node 0 asking more than its pool has free is an error naming node 0, and
 * the process lives.
 */
void prealloc_case_node_pool(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	struct prealloc_opts o = prealloc_case_impl_opts(ctx);
	struct sigaction mine = {.sa_handler = sentinel}, now;
	hwloc_obj_t first, last;
	struct mapping m;
	struct mg_err err = {0};
	uint64_t got, before_first, before_last, after_first, after_last;
	size_t on, other, absent;
	int ret, seen;

	if (hw->n_numa < 2) {
		case_skip(ctx,
			  "one NUMA node here: `memgate vm -- run -s prealloc -k '*node_pool*' "
			  "--reserve-hugepages` runs this in a two-node guest");
		return;
	}
	if (!kind_offered(hw, K_HUGE_2M) || !hw->can_bind || !o.topo) {
		case_skip(ctx, "no 2 MiB hugetlb pages, or no binding to nodes, on this host");
		return;
	}
	if (geteuid() != 0) {
		case_skip(ctx, "needs root: it sizes one node's hugetlb pool");
		return;
	}
	o.bind = true;
	first = hwloc_get_obj_by_type(o.topo, HWLOC_OBJ_NUMANODE, 0);
	last = hwloc_get_obj_by_type(o.topo, HWLOC_OBJ_NUMANODE, hw->n_numa - 1);
	if (reserve_node_hugepages(2 * MIB, (int)last->os_index, NODE_POOL_PAGES, false, &got,
				   &err)) {
		case_skip(ctx, "%s", err.msg);
		return;
	}
	before_first = node_free((int)first->os_index);
	before_last = node_free((int)last->os_index);
	ret = prealloc_on_node(&o, (int)(hw->n_numa - 1), NODE_POOL_PAGES, &m, &err);
	after_first = node_free((int)first->os_index);
	after_last = node_free((int)last->os_index);
	if (ret)
		case_fail(ctx, "a region bound to node %u, whose pool has %llu free pages: %s",
			  last->os_index, (unsigned long long)before_last, err.msg);
	else if (count_placement(&m, (int)last->os_index, &on, &other, &absent, &seen) == 0 &&
		 (other || absent))
		case_fail(ctx, "%zu of its pages on node %d, %zu not present", other, seen, absent);
	if (!ret && after_first != before_first)
		case_fail(ctx, "node %u's pool went from %llu to %llu free pages: not its region",
			  first->os_index, (unsigned long long)before_first,
			  (unsigned long long)after_first);
	if (!ret && before_last - after_last != NODE_POOL_PAGES)
		case_fail(ctx, "node %u's pool gave %lld pages to a region of %d", last->os_index,
			  (long long)(before_last - after_last), NODE_POOL_PAGES);
	case_log(ctx,
		 "node %u: %llu free pages reserved there alone, %llu after the region; "
		 "node %u: %llu free before and after",
		 last->os_index, (unsigned long long)before_last, (unsigned long long)after_last,
		 first->os_index, (unsigned long long)before_first);
	case_prop(ctx, "reserved_node", "%u", last->os_index);
	unmap_kind(&m);
	/* Node 0 asked more than its pool has free: an error naming it, SIGBUS handled. */
	sigemptyset(&mine.sa_mask);
	sigaction(SIGBUS, &mine, NULL);
	ret = prealloc_on_node(&o, 0, node_free((int)first->os_index) + 8, &m, &err);
	sigaction(SIGBUS, NULL, &now);
	if (ret != -EFAULT || !strstr(err.msg, "not enough hugepages on node 0"))
		case_fail(ctx,
			  "a region bound to node 0 past its pool returned %d (%s), expected "
			  "-EFAULT and \"not enough hugepages on node 0\"",
			  ret, err.msg);
	else
		case_log(ctx, "%s", err.msg);
	if (now.sa_handler != sentinel)
		case_fail(ctx, "the SIGBUS handler installed before the prealloc is not back");
	unmap_kind(&m);
	reserve_restore();
}
