/* prealloc.c - the prealloc suite (seeds 000, 004): residency, plans, running out,
 * start-up time per page kind, method and thread count, and the scaling gates. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/memfd.h>
#include <linux/mman.h>
#include <sys/mman.h>
#include <unistd.h>

#include "judge/gate.h"
#include "run/sampling.h"
#include "impl/prealloc.h"
#include "suites/pages.h"
#include "suites/suites.h"
#include "suites/summary.h"
#include "util/util.h"

/* Checks fault this much: enough pages for every thread, little time. */
#define CHECK_BYTES (64 * MIB)
/* Pages the running-out check asks for beyond what the pool has free. */
#define OVERSHOOT_PAGES 8
/* Pages reserved beyond the guest size: the checks' 64 MiB and the running-out region. */
#define RESERVE_MARGIN_PAGES 64

/* 1 GiB pages for @size bytes, rounded up to a multiple of the PUs. */
static uint64_t gigapages_per_pu_multiple(const struct hw_info *hw, uint64_t size)
{
	uint64_t pus = hw->n_pus ? hw->n_pus : 1, pages = (size + GIB - 1) / GIB;

	return (pages + pus - 1) / pus * pus;
}

/*
 * --reserve-hugepages: the free pages of @page bytes these cases use: the guest size in 2 MiB
 * pages and a margin; in 1 GiB pages what startup_size() asks for, and one more for the
 * residency check.
 */
static uint64_t prealloc_hugepages(const struct hw_info *hw, const struct run_opts *o,
				   uint64_t page)
{
	uint64_t size = case_guest_size(hw, o);

	if (page == 2 * MIB)
		return size / page + RESERVE_MARGIN_PAGES;
	if (page == GIB)
		return gigapages_per_pu_multiple(hw, size) + 1;
	return 0;
}

/* The implementation under test, as --impl chose it, for a guest with one vCPU per PU. */
static struct prealloc_opts impl_opts(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	const char *threads = impl_get(o->impl, "prealloc.threads");
	int m = prealloc_method_parse(impl_get(o->impl, "prealloc.method"));

	return (struct prealloc_opts){
	    .method = m < 0 ? PREALLOC_POPULATE : (enum prealloc_method)m,
	    .requested = strcmp(threads, "vcpus") ? (unsigned int)atoi(threads) : hw->n_pus,
	    .cap = (unsigned int)atoi(impl_get(o->impl, "prealloc.cap")),
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

/* ---- checks ------------------------------------------------------------------------------- */

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

static void check_resident(struct case_ctx *ctx)
{
	int k = param_kind(ctx);
	size_t size, bad;
	struct prealloc_opts o = impl_opts(ctx);
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

static void check_plan(struct case_ctx *ctx)
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

static unsigned int expand_numa(const struct hw_info *hw, const struct run_opts *opts,
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

static void check_numa_plan(struct case_ctx *ctx)
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
	o = impl_opts(ctx);
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

static unsigned int expand_methods(const struct hw_info *hw, const struct run_opts *opts,
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
static void check_running_out(struct case_ctx *ctx)
{
	struct prealloc_opts o = impl_opts(ctx);
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

/* ---- perf: start-up time ------------------------------------------------------------------ */

/*
 * Per sample, in turn: each method at 1, 2, 4 ... threads and at all PUs (the scaling curve),
 * then the implementation under test; the ratio of the two runs of one sample is the speedup,
 * which cancels the drift between samples. Metric names: METHOD.tN.ms, impl.*, memset.ms.
 */
enum { P_TOUCH, P_POPULATE, P_METHODS };
#define P_POINTS 9 /* t1 t2 t4 ... t128, and tall */
enum {
	M_IMPL_MS = P_METHODS * P_POINTS,
	M_IMPL_THREADS,
	M_IMPL_IMBALANCE,
	M_IMPL_CPU_MS,
	M_IMPL_SPEEDUP,
	M_IMPL_EFFICIENCY,
	M_MEMSET_MS,
	M_MLOCK_MS,
	M_MAP_POPULATE_MS,
	M_REF_MS,
	M_STARTUP_METRICS,
};

#define POINT_METRICS(m)                                                                           \
	{m ".t1.ms", "ms", LOWER_IS_BETTER}, {m ".t2.ms", "ms", LOWER_IS_BETTER},                  \
	    {m ".t4.ms", "ms", LOWER_IS_BETTER}, {m ".t8.ms", "ms", LOWER_IS_BETTER},              \
	    {m ".t16.ms", "ms", LOWER_IS_BETTER}, {m ".t32.ms", "ms", LOWER_IS_BETTER},            \
	    {m ".t64.ms", "ms", LOWER_IS_BETTER}, {m ".t128.ms", "ms", LOWER_IS_BETTER},           \
	{                                                                                          \
		m ".tall.ms", "ms", LOWER_IS_BETTER                                                \
	}

static const struct metric_def startup_metrics[M_STARTUP_METRICS] = {
    POINT_METRICS("touch"),
    POINT_METRICS("populate"),
    [M_IMPL_MS] = {"impl.ms", "ms", LOWER_IS_BETTER},
    [M_IMPL_THREADS] = {"impl.threads", "threads", HIGHER_IS_BETTER},
    [M_IMPL_IMBALANCE] = {"impl.slowest_over_fastest", "x", LOWER_IS_BETTER},
    [M_IMPL_CPU_MS] = {"impl.cpu_ms", "ms", LOWER_IS_BETTER},
    [M_IMPL_SPEEDUP] = {"impl.speedup", "x", HIGHER_IS_BETTER},
    [M_IMPL_EFFICIENCY] = {"impl.efficiency", "x", HIGHER_IS_BETTER},
    [M_MEMSET_MS] = {"memset.ms", "ms", LOWER_IS_BETTER},
    [M_MLOCK_MS] = {"mlock.ms", "ms", LOWER_IS_BETTER},
    [M_MAP_POPULATE_MS] = {"map_populate.ms", "ms", LOWER_IS_BETTER},
    [M_REF_MS] = {"ref.ms", "ms", LOWER_IS_BETTER},
};

/* Runs that are not a method at a thread count: the implementation under test, and the two
 * single-threaded alternatives of the 2017 parallel-prealloc thread (mlock; MAP_POPULATE, which
 * ignores failures). */
enum { R_IMPL = -1, R_MLOCK = -2, R_MAP_POPULATE = -3, R_REF = -4 };

struct run_spec {
	int method; /* P_TOUCH, P_POPULATE, or one of the R_ below */
	unsigned int threads;
	unsigned int metric;
};

/*
 * The runs of one sample: both methods at 1, 2, 4 ... threads below the PUs and at all; then
 * the reference at the thread count QEMU's rule gives a guest of the case's size with a vCPU
 * per PU (@ref_threads), in the method under test. The implementation is gated against it:
 * against the host's own scaling, which a VM's memory bandwidth may cap well under the PUs.
 */
static unsigned int run_list(unsigned int pus, unsigned int ref_threads, struct run_spec *runs)
{
	unsigned int n = 0;

	for (int m = 0; m < P_METHODS; m++) {
		for (unsigned int p = 0; p + 1 < P_POINTS && (1u << p) < pus; p++)
			runs[n++] = (struct run_spec){m, 1u << p, (unsigned int)(m * P_POINTS) + p};
		runs[n++] = (struct run_spec){m, pus, (unsigned int)(m * P_POINTS + P_POINTS - 1)};
	}
	runs[n++] = (struct run_spec){R_MLOCK, 1, M_MLOCK_MS};
	runs[n++] = (struct run_spec){R_MAP_POPULATE, 1, M_MAP_POPULATE_MS};
	runs[n++] = (struct run_spec){R_REF, ref_threads, M_REF_MS};
	/* The implementation under test comes last: perf_startup() reads its time there. */
	runs[n++] = (struct run_spec){R_IMPL, 0, M_IMPL_MS};
	return n;
}

/* 4 KiB and THP first touches are bimodal here (free page reporting): they are measured at
 * up to 1 GiB and reported, not gated; hugetlb, stable, gets the whole guest size. */
static size_t startup_size(const struct hw_info *hw, const struct run_opts *o, int k)
{
	uint64_t size = case_guest_size(hw, o);

	if (!kinds[k].hugetlb && size > GIB)
		size = GIB;
	/* 1 GiB pages: a whole number of them per PU, or the threads get unequal shares. */
	if (kinds[k].page == GIB)
		size = gigapages_per_pu_multiple(hw, size) * GIB;
	return (size_t)size;
}

/* Map, prealloc, (memset), unmap: one run. Returns 0 or -errno with @err filled. */
static int one_run(struct case_ctx *ctx, int k, size_t size, const struct prealloc_opts *o,
		   bool record, const struct run_spec *rs, double *ms, struct mg_err *err)
{
	struct prealloc_report rep;
	struct measure_span span;
	struct mapping m;
	bool map_populate = rs->method == R_MAP_POPULATE;
	int ret;

	/* MAP_POPULATE faults in inside mmap, before MADV_HUGEPAGE could apply: not for THP. */
	if (map_populate && k == K_THP)
		return 0;
	measure_span_begin(&span);
	ret = map_kind(k, size, map_populate ? MAP_POPULATE : 0, &m);
	if (map_populate)
		measure_span_end(&span);
	if (ret)
		return mg_err_set(err, -ret, "mapping %zu MiB of %s: %s", size >> 20, kinds[k].name,
				  strerror(-ret));
	struct prealloc_region r = {m.addr, size, kinds[k].page, -1};

	if (!map_populate) {
		measure_span_begin(&span);
		ret = prealloc_one(&r, o, &rep, err);
		measure_span_end(&span);
	}
	*ms = (double)span.wall_ns / 1e6;
	if (!ret && record) {
		case_sample(ctx, rs->metric, *ms, &span);
		if (rs->method == R_IMPL) {
			case_sample(ctx, M_IMPL_THREADS, rep.threads, &span);
			case_sample(ctx, M_IMPL_IMBALANCE, rep.slowest_ns / rep.fastest_ns, &span);
			case_sample(ctx, M_IMPL_CPU_MS, rep.cpu_ns / 1e6, &span);
			/* The host's limit: writing memory that is already mapped, with as many
			 * threads; the second pass, as the first may still fault on the host side.
			 */
			parallel_memset(m.addr, size, rep.threads);
			measure_span_begin(&span);
			parallel_memset(m.addr, size, rep.threads);
			measure_span_end(&span);
			case_sample(ctx, M_MEMSET_MS, (double)span.wall_ns / 1e6, &span);
		}
	}
	unmap_kind(&m);
	return ret;
}

/* One start-up case: the runs of a round, their times, and what the speedup needs. */
struct startup_case {
	struct case_ctx *ctx;
	int kind;
	size_t size;
	struct prealloc_opts impl;
	struct run_spec runs[2 * P_POINTS + 4];
	unsigned int n;
	bool mlock_ok; /* false once mlock failed (no rlimit for it): not run again */
	double ms[2 * P_POINTS + 4];
	double base; /* this round's single-threaded run of the method under test */
};

static int startup_round_begin(void *arg, unsigned int round)
{
	(void)round;
	((struct startup_case *)arg)->base = 0;
	return 0;
}

static int startup_sample(void *arg, unsigned int q, unsigned int round, bool measured)
{
	struct startup_case *sc = arg;
	const struct run_spec *rs = &sc->runs[q];
	struct prealloc_opts po = sc->impl;
	struct mg_err err;
	int ret;

	(void)round;
	if (rs->method == R_REF) {
		po.requested = rs->threads; /* the method under test: sc->impl's */
		po.cap = PREALLOC_MAX_THREADS;
	} else if (rs->method >= 0) {
		po.method = rs->method == P_TOUCH ? PREALLOC_TOUCH : PREALLOC_POPULATE;
		po.requested = rs->threads;
		po.cap = PREALLOC_MAX_THREADS;
	} else if (rs->method == R_MLOCK) {
		if (!sc->mlock_ok)
			return 0;
		po.method = PREALLOC_MLOCK;
	}
	ret = one_run(sc->ctx, sc->kind, sc->size, &po, measured, rs, &sc->ms[q], &err);
	/* mlock is a measured alternative: without the rlimit for it, the others still run. */
	if (ret && rs->method == R_MLOCK) {
		case_log(sc->ctx, "mlock not measured: %s", err.msg);
		sc->mlock_ok = false;
		return 0;
	}
	if (ret == -ENOSYS)
		case_skip(sc->ctx, "%s", err.msg);
	else if (ret)
		case_error(sc->ctx, "%s", err.msg);
	if (ret)
		return ret;
	/* The single-threaded baseline of the method under test. */
	if (rs->threads == 1 &&
	    rs->method == (sc->impl.method == PREALLOC_TOUCH ? P_TOUCH : P_POPULATE))
		sc->base = sc->ms[q];
	return 0;
}

/* The speedup of the implementation under test over its method's single thread. */
static int startup_round_end(void *arg, unsigned int round, bool measured)
{
	struct startup_case *sc = arg;
	unsigned int pus = case_hw(sc->ctx)->n_pus;

	(void)round;
	if (measured && sc->base > 0) {
		case_sample(sc->ctx, M_IMPL_SPEEDUP, sc->base / sc->ms[sc->n - 1], NULL);
		case_sample(sc->ctx, M_IMPL_EFFICIENCY, sc->base / sc->ms[sc->n - 1] / pus, NULL);
	}
	return 0;
}

/* Per round, in turn: each method at each thread count, mlock, MAP_POPULATE, the impl. */
static void perf_startup(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	struct startup_case sc = {
	    .ctx = ctx, .kind = param_kind(ctx), .impl = impl_opts(ctx), .mlock_ok = true};
	struct case_arms arms = {.warmup = o->warmup,
				 .samples = o->samples,
				 .round_begin = startup_round_begin,
				 .sample = startup_sample,
				 .round_end = startup_round_end,
				 .arg = &sc};

	if (sc.kind < 0)
		return;
	sc.size = startup_size(hw, o, sc.kind);
	sc.n = arms.n = run_list(
	    hw->n_pus,
	    prealloc_threads(sc.size, kinds[sc.kind].page, hw->n_pus, hw->n_pus, PREALLOC_CAP_QEMU),
	    sc.runs);
	if (kinds[sc.kind].hugetlb && pool_short(ctx, sc.kind, sc.size / kinds[sc.kind].page))
		return;
	for (unsigned int m = 0; m < M_STARTUP_METRICS; m++)
		case_counter(ctx, m, "clock");
	case_prop(ctx, "size_mib", "%zu", sc.size >> 20);
	case_interleave(&arms);
}

/* ---- the suite ----------------------------------------------------------------------------- */

enum { C_RESIDENT, C_PLAN, C_NUMA, C_RUNNING_OUT, C_STARTUP };

static const struct case_def prealloc_cases[] = {
    [C_RESIDENT] = {.name = "resident",
		    .group = "check",
		    .kind = CASE_CHECK,
		    .needs = NEEDS_HOST,
		    .doc = "after a prealloc every page is resident and kept its contents",
		    .expand = expand_check_kinds,
		    .run = check_resident},
    [C_PLAN] = {.name = "plan",
		.group = "check",
		.kind = CASE_CHECK,
		.doc = "the thread rule and the page ranges on a table of guests",
		.run = check_plan},
    [C_NUMA] = {.name = "numa_plan",
		.group = "check",
		.kind = CASE_CHECK,
		.doc = "one region per node: threads in proportion, bound to the node's PUs",
		.expand = expand_numa,
		.run = check_numa_plan},
    [C_RUNNING_OUT] = {.name = "running_out",
		       .group = "check",
		       .kind = CASE_CHECK,
		       .needs = NEEDS_HOST,
		       .doc = "a hugetlb pool too small: an error saying so, the process lives",
		       .expand = expand_methods,
		       .run = check_running_out},
    [C_STARTUP] = {.name = "startup",
		   .group = "perf",
		   .kind = CASE_PERF,
		   .needs = NEEDS_HOST,
		   .doc = "start-up time per method and thread count; memset as the limit",
		   .metrics = startup_metrics,
		   .n_metrics = M_STARTUP_METRICS,
		   .expand = expand_perf_kinds,
		   .run = perf_startup},
};

static void summary_case(FILE *f, const struct case_result *r)
{
	static const unsigned int extra[] = {M_MLOCK_MS, M_MAP_POPULATE_MS, M_REF_MS};
	const struct metric_result *memset_m = case_result_sampled(r, M_MEMSET_MS);
	const char *mib = case_result_prop(r, "size_mib");
	double size_gib = mib ? atof(mib) / 1024 : 0, limit = 0;

	if (memset_m)
		limit = size_gib / (memset_m->sum.median / 1e3);
	fprintf(f, "%s, %.2f GiB (memset over faulted memory: %.1f GiB/s)\n", r->inst->name,
		size_gib, limit);
	for (unsigned int i = 0; i <= M_IMPL_MS + ARRAY_SIZE(extra); i++) {
		unsigned int m = i <= M_IMPL_MS ? i : extra[i - M_IMPL_MS - 1];
		const struct metric_result *mr = case_result_sampled(r, m);
		double gibs;

		if (!mr)
			continue;
		gibs = size_gib / (mr->sum.median / 1e3);
		fprintf(f, "  %-20s %9.1f ms %7.2f GiB/s %5.1f%% of memset%s\n", mr->def->name,
			mr->sum.median, gibs, limit > 0 ? 100 * gibs / limit : 0,
			m == M_IMPL_MS	? " (the implementation under test)"
			: m == M_REF_MS ? " (the reference at QEMU's thread count)"
					: "");
	}
	if (case_result_sampled(r, M_IMPL_THREADS) && case_result_sampled(r, M_IMPL_EFFICIENCY))
		fprintf(f,
			"  impl: %.0f threads, speedup %.2fx, efficiency %.2f, slowest/fastest "
			"worker %.2f\n",
			case_result_median(r, M_IMPL_THREADS),
			case_result_median(r, M_IMPL_SPEEDUP),
			case_result_median(r, M_IMPL_EFFICIENCY),
			case_result_median(r, M_IMPL_IMBALANCE));
}

static bool prealloc_wanted(const struct case_result *r)
{
	return r->inst->def == &prealloc_cases[C_STARTUP] && case_result_sampled(r, M_IMPL_MS);
}

static char *prealloc_summary(const struct case_result *results, size_t n)
{
	static const struct summary_table table = {
	    .header = "prealloc: start-up time, median of the samples (4 KiB and THP are bimodal "
		      "here: freed memory goes back to the host; hugetlb does not, and only "
		      "hugetlb is gated)\n",
	    .published = "published: 4 TB, 2 MiB pages: 1 thread 54m12s, 8 threads 5m01s, 16 "
			 "threads 1m59s (2017); 7.5 TB: 16 threads 2m42s, 32 threads 1m19s, 240 "
			 "threads ~50 s (2025)\n",
	    .wanted = prealloc_wanted,
	    .row = summary_case};

	return summary_write(&table, results, n);
}

const struct suite_def suite_prealloc = {
    .name = "prealloc",
    .doc = "parallel guest-memory preallocation: residency, plans, running out, start-up time",
    .cases = prealloc_cases,
    .n_cases = ARRAY_SIZE(prealloc_cases),
    .summary = prealloc_summary,
    .hugepages = prealloc_hugepages,
};
