/* checks.c - the prealloc suite's checks: every page resident and its contents kept after a
 * prealloc, the thread rule and the page ranges on a table of guests, multi-node plans, and
 * a hugetlb pool too small for the region. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
