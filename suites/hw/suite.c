/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the hw suite: do hwloc, libcpuid, sysfs and the TSC agree about this host? */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "hw/tsc.h"
#include "suites/suites.h"
#include "util/text.h"
#include "util/util.h"

/* The spec asks for a repeatable TSC calibration: five runs must agree within 1%. */
#define TSC_RUNS 5
#define TSC_WINDOW_MS 20
#define TSC_MAX_SPREAD 0.01
/* Timer reads per sample: 1000 reads make the two fenced TSC reads around them negligible. */
#define TIMER_READS 1000
/* 509 user memslots since 2014 (the 2014 memslot-sort thread); anything less is a kernel older than
 * that. */
#define KVM_MIN_MEMSLOTS 509

/*
 * The topology checks judge what memgate plans from (hwloc's topology) against the kernel's
 * and the CPU's own accounts. Those accounts are the platform's: a cgroup cpuset hides CPUs
 * from hwloc, a hypervisor's CPUID leaves describe whatever it likes, libcpuid may predate
 * the CPU. Such a disagreement is a WARN saying which source memgate trusts. A check FAILs
 * only where memgate's plan would be wrong: a PU it would bind a thread to that this process
 * may not run on, or a topology whose counts contradict each other.
 */
static bool kernel_facts_known(struct case_ctx *ctx)
{
	if (case_hw(ctx)->n_pus_online)
		return true;
	case_skip(ctx, "no kernel CPU facts for a topology loaded from hwloc XML alone (a host "
		       "record of `memgate hw --record` has them)");
	return false;
}

/* What CPUID says, beside the kernel: a WARN when it differs, never a failure. */
static void cpuid_warn(struct case_ctx *ctx, const char *what, int cpuid, unsigned int kernel)
{
	const struct hw_cpu *c = &case_hw(ctx)->cpu;

	case_warn(ctx,
		  "CPUID (libcpuid) says %d %s, the kernel's topology (hwloc) %u: CPUID's topology "
		  "leaves are %s; memgate plans from the kernel's topology",
		  cpuid, what, kernel,
		  strcmp(c->hypervisor, "none") ? "the hypervisor's, not the host's"
						: "read by a libcpuid that may not know this CPU");
}

static void check_pu_count(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);

	if (!kernel_facts_known(ctx))
		return;
	case_prop(ctx, "pus.hwloc", "%u", hw->n_pus);
	case_prop(ctx, "pus.sysfs_online", "%u", hw->n_pus_online);
	case_prop(ctx, "pus.allowed", "%u", hw->n_pus_allowed);
	if (hw->n_pus_unbindable)
		case_fail(ctx,
			  "hwloc holds %u PUs this process may not run on (sched_getaffinity): "
			  "threads bound there would fail",
			  hw->n_pus_unbindable);
	if (hw->n_pus != hw->n_pus_online)
		case_warn(ctx,
			  "hwloc counts %u PUs, sysfs lists %u online CPUs, this process may use "
			  "%u (a cgroup cpuset or affinity): memgate trusts hwloc, which keeps "
			  "only the allowed PUs, so every thread is placed where it may run",
			  hw->n_pus, hw->n_pus_online, hw->n_pus_allowed);
	if (!hw->cpu.known) {
		case_warn(ctx,
			  "libcpuid could not identify the CPU %s: its counts are not compared",
			  hw->cpu.brand);
		return;
	}
	case_prop(ctx, "pus.libcpuid", "%d", hw->cpu.logical_cpus);
	/* CPUID describes one package: its logical CPUs times the packages. */
	if ((unsigned int)hw->cpu.logical_cpus * hw->n_packages != hw->n_pus_online)
		cpuid_warn(ctx, "logical CPUs a package", hw->cpu.logical_cpus,
			   hw->n_packages ? hw->n_pus_online / hw->n_packages : 0);
}

static void check_core_count(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);

	if (!kernel_facts_known(ctx))
		return;
	case_prop(ctx, "cores.hwloc", "%u", hw->n_cores);
	case_prop(ctx, "cores.sysfs", "%u", hw->n_cores_sysfs);
	/* The planner divides PUs among cores. (A package may hold no core this process may use:
	 * a cpuset keeps its memory.) */
	if (!hw->n_cores || hw->n_cores > hw->n_pus)
		case_fail(ctx, "hwloc's topology contradicts itself: %u cores for %u PUs",
			  hw->n_cores, hw->n_pus);
	if (hw->n_cores_sysfs && hw->n_cores != hw->n_cores_sysfs)
		case_warn(ctx,
			  "hwloc counts %u cores, sysfs %u (package, core_id) pairs of the allowed "
			  "CPUs: memgate trusts hwloc, which binds the threads",
			  hw->n_cores, hw->n_cores_sysfs);
	if (!hw->cpu.known || hw->n_packages == 0)
		return;
	case_prop(ctx, "cores_per_package.libcpuid", "%d", hw->cpu.cores_per_package);
	if ((unsigned int)hw->cpu.cores_per_package * hw->n_packages != hw->n_cores)
		cpuid_warn(ctx, "cores a package", hw->cpu.cores_per_package,
			   hw->n_cores / hw->n_packages);
}

static unsigned int expand_hugepage_sizes(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max)
{
	(void)opts;
	uint64_t sizes[HW_MAX_PAGE_SIZES];
	unsigned int n = 0;

	/* This host's pools, or a recorded host's; a topology alone names its sizes in the XML. */
	if (hw->n_hugepages) {
		for (unsigned int i = 0; i < hw->n_hugepages; i++)
			sizes[n++] = hw->hugepages[i].size_bytes;
	} else if (hw->source != HW_SOURCE_HOST) {
		for (unsigned int j = 0; hw->n_numa && j < hw->nodes[0].n_pages; j++)
			if (hw->nodes[0].pages[j].size_bytes > 4096 && n < HW_MAX_PAGE_SIZES)
				sizes[n++] = hw->nodes[0].pages[j].size_bytes;
	} else {
		n = hw_hugepage_sizes(sizes, HW_MAX_PAGE_SIZES);
	}
	for (unsigned int i = 0; i < n && i < max; i++) {
		char b[32];

		hw_format_bytes(sizes[i], b, sizeof(b));
		/* "2 MiB" -> "2MiB": parameter values carry no spaces. */
		case_params_add(&out[i], "size", "%.*s%s", (int)strcspn(b, " "), b,
				strchr(b, ' ') ? strchr(b, ' ') + 1 : "");
	}
	return n < max ? n : max;
}

static uint64_t param_bytes(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 10);

	return n << (*end == 'G' ? 30 : *end == 'M' ? 20 : *end == 'K' ? 10 : 0);
}

/* Per-node pools must add up to the global one, and hwloc must have read the same counts. */
static void check_pool_nodes(struct case_ctx *ctx, uint64_t size, const struct hw_page_pool *all)
{
	const struct hw_info *hw = case_hw(ctx);
	uint64_t sum_total = 0, sum_free = 0;

	for (unsigned int i = 0; i < hw->n_numa; i++) {
		const struct hw_numa_node *nd = &hw->nodes[i];
		struct hw_page_pool p;

		if (hw_hugepage_pool(size, (int)nd->os_index, &p))
			continue;
		sum_total += p.total;
		sum_free += p.free;
		for (unsigned int j = 0; j < nd->n_pages; j++)
			if (nd->pages[j].size_bytes == size && nd->pages[j].total != p.total)
				case_fail(ctx,
					  "node %u: hwloc read %" PRIu64
					  " pages, sysfs now has %" PRIu64
					  " (did something resize the pool meanwhile?)",
					  nd->os_index, nd->pages[j].total, p.total);
	}
	case_prop(ctx, "nodes_total", "%" PRIu64, sum_total);
	if (sum_total != all->total || sum_free != all->free)
		case_fail(ctx,
			  "per-node pools add up to %" PRIu64 " pages (%" PRIu64 " free), the "
			  "global pool has %" PRIu64 " (%" PRIu64 " free)",
			  sum_total, sum_free, all->total, all->free);
}

static void check_pool_meminfo(struct case_ctx *ctx, const struct hw_page_pool *all)
{
	char *mi = text_read_file("/proc/meminfo", 16384);
	uint64_t total, free_pages;

	if (!mi) {
		case_error(ctx, "/proc/meminfo: %s", strerror(errno));
		return;
	}
	if (text_meminfo_kib(mi, "HugePages_Total", &total) ||
	    text_meminfo_kib(mi, "HugePages_Free", &free_pages)) {
		case_fail(ctx, "/proc/meminfo has no HugePages_Total/HugePages_Free lines");
	} else if (total != all->total || free_pages != all->free) {
		case_fail(ctx,
			  "/proc/meminfo says %" PRIu64 " pages (%" PRIu64 " free), sysfs %" PRIu64
			  " (%" PRIu64 " free)",
			  total, free_pages, all->total, all->free);
	}
	free(mi);
}

static void check_hugepage_pool(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	uint64_t size = param_bytes(case_param(ctx, "size"));
	struct hw_page_pool all;
	int ret = hw_hugepage_pool(size, -1, &all);

	if (ret) {
		case_error(ctx, "hugetlb pool of %s: %s", case_param(ctx, "size"), strerror(-ret));
		return;
	}
	case_prop(ctx, "total", "%" PRIu64, all.total);
	case_prop(ctx, "free", "%" PRIu64, all.free);
	check_pool_nodes(ctx, size, &all);
	/* /proc/meminfo's HugePages_* lines describe the default size only. */
	if (size == hw->default_hugepage_bytes)
		check_pool_meminfo(ctx, &all);
}

static void check_tsc(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	double spread, hz;

	if (!hw->cpu.invariant_tsc) {
		case_skip(ctx,
			  "no invariant TSC (CPUID 0x80000007 EDX[8]): its rate may follow the "
			  "core clock, cycles are then not comparable");
		return;
	}
	hz = tsc_calibrate_median_hz(TSC_RUNS, TSC_WINDOW_MS, &spread);
	if (hz <= 0) {
		case_error(ctx, "CLOCK_MONOTONIC_RAW unreadable");
		return;
	}
	case_prop(ctx, "tsc_mhz", "%.3f", hz / 1e6);
	case_prop(ctx, "spread_pct", "%.4f", spread * 100);
	case_log(ctx, "%d calibrations of %d ms: median %.3f MHz, spread %.4f%%", TSC_RUNS,
		 TSC_WINDOW_MS, hz / 1e6, spread * 100);
	/* The host's clock, not memgate's code: steal time and a busy neighbour widen it. */
	if (spread > TSC_MAX_SPREAD)
		case_warn(ctx,
			  "TSC calibration spread %.3f%% (over %.1f%%): this host's clock is noisy "
			  "now (steal time?), cycle figures of this run are noisier too",
			  spread * 100, TSC_MAX_SPREAD * 100);
	if (hw->tsc_hz > 0 &&
	    (hz > hw->tsc_hz * (1 + TSC_MAX_SPREAD) || hz < hw->tsc_hz * (1 - TSC_MAX_SPREAD)))
		case_warn(ctx, "TSC %.3f MHz now, %.3f MHz at start-up: differ by more than %.1f%%",
			  hz / 1e6, hw->tsc_hz / 1e6, TSC_MAX_SPREAD * 100);
}

enum { M_RDTSCP, M_CLOCK_GETTIME };

static const struct metric_def timer_metrics[] = {
    [M_RDTSCP] = {"rdtscp", "cycles", LOWER_IS_BETTER},
    [M_CLOCK_GETTIME] = {"clock_gettime", "cycles", LOWER_IS_BETTER},
};

/* Cost of one fenced TSC read and of one clock_gettime(CLOCK_MONOTONIC), in TSC cycles. */
static void perf_timer_cost(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);

	case_counter(ctx, M_RDTSCP, "tsc");
	case_counter(ctx, M_CLOCK_GETTIME, "tsc");
	for (unsigned int s = 0; s < o->warmup + o->samples; s++) {
		struct measure_span span;
		struct timespec ts;
		uint64_t t0, t1, t2;

		measure_span_begin(&span);
		t0 = tsc_begin();
		for (int i = 0; i < TIMER_READS; i++)
			tsc_end();
		t1 = tsc_begin();
		for (int i = 0; i < TIMER_READS; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		t2 = tsc_end();
		measure_span_end(&span);
		if (s < o->warmup)
			continue;
		case_sample(ctx, M_RDTSCP, (double)(t1 - t0) / TIMER_READS, &span);
		case_sample(ctx, M_CLOCK_GETTIME, (double)(t2 - t1) / TIMER_READS, &span);
	}
}

/* A real VM through the real ioctls: API version, VM creation, the memslot limit. */
static void check_kvm(struct case_ctx *ctx)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm, api, slots;

	if (kvm < 0) {
		case_skip(ctx, "/dev/kvm: %s", strerror(errno));
		return;
	}
	api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION)
		case_fail(ctx, "KVM_GET_API_VERSION %d, expected %d", api, KVM_API_VERSION);
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		case_error(ctx, "KVM_CREATE_VM: %s", strerror(errno));
		close(kvm);
		return;
	}
	slots = ioctl(vm, KVM_CHECK_EXTENSION, KVM_CAP_NR_MEMSLOTS);
	case_prop(ctx, "max_memslots", "%d", slots);
	if (slots < KVM_MIN_MEMSLOTS)
		case_warn(ctx,
			  "KVM_CAP_NR_MEMSLOTS %d, fewer than the %d of every kernel since 2014",
			  slots, KVM_MIN_MEMSLOTS);
	close(vm);
	close(kvm);
}

static const struct case_def hw_cases[] = {
    {.name = "pu_count",
     .group = "topology",
     .kind = CASE_CHECK,
     .doc = "hwloc's PUs may all be bound; sysfs and CPUID counts beside (WARN if they differ)",
     .run = check_pu_count},
    {.name = "core_count",
     .group = "topology",
     .kind = CASE_CHECK,
     .doc = "hwloc's cores are consistent; sysfs and CPUID counts beside (WARN if they differ)",
     .run = check_core_count},
    {.name = "pool",
     .group = "hugepages",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "hugetlb pool: nodes add up, hwloc agrees, /proc/meminfo agrees (default size)",
     .expand = expand_hugepage_sizes,
     .run = check_hugepage_pool},
    {.name = "calibration",
     .group = "tsc",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "TSC frequency: 5 calibrations of 20 ms agree within 1%",
     .run = check_tsc},
    {.name = "read_cost",
     .group = "timer",
     .kind = CASE_PERF,
     .needs = NEEDS_HOST,
     .doc = "cycles per fenced rdtscp and per clock_gettime",
     CASE_METRICS(timer_metrics),
     .run = perf_timer_cost},
    {.name = "api",
     .group = "kvm",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST | NEEDS_KVM,
     .doc = "/dev/kvm: API 12, a VM can be created, at least 509 memslots",
     .run = check_kvm},
};

const struct suite_def suite_hw = {
    .name = "hw",
    .doc = "host facts agree with each other (hwloc, libcpuid, sysfs, TSC, KVM)",
    SUITE_CASES(hw_cases),
};
