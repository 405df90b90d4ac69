/* hw.c - the hw suite: do hwloc, libcpuid, sysfs and the TSC agree about this host? */
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
/* 509 user memslots since 2014 (seed 002); anything less is a kernel older than that. */
#define KVM_MIN_MEMSLOTS 509

#define MAX_CPUS 4096

/* Parse a sysfs CPU list ("0-3,8,10-11") into @on[]; returns the count or -errno. */
static int cpu_list(const char *path, unsigned char *on, int max)
{
	char *s = text_read_file(path, 65536), *p;
	int count = 0;

	if (!s)
		return -errno;
	for (p = s; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < max; c++, count++)
			on[c] = 1;
		p = *end == ',' ? end + 1 : end;
	}
	free(s);
	return count;
}

static void check_pu_count(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	static unsigned char online[MAX_CPUS];
	int n = cpu_list("/sys/devices/system/cpu/online", online, MAX_CPUS);

	if (n < 0) {
		case_error(ctx, "/sys/devices/system/cpu/online: %s", strerror(-n));
		return;
	}
	case_prop(ctx, "pus.hwloc", "%u", hw->n_pus);
	case_prop(ctx, "pus.sysfs_online", "%d", n);
	if ((int)hw->n_pus != n)
		case_fail(ctx, "hwloc counts %u PUs, sysfs lists %d online CPUs", hw->n_pus, n);
	if (!hw->cpu.known) {
		case_log(ctx, "libcpuid could not identify the CPU: its count is not compared");
		return;
	}
	case_prop(ctx, "pus.libcpuid", "%d", hw->cpu.logical_cpus);
	if (hw->cpu.logical_cpus != (int)hw->n_pus)
		case_fail(ctx, "libcpuid counts %d logical CPUs, hwloc %u PUs",
			  hw->cpu.logical_cpus, hw->n_pus);
}

/* Cores as sysfs sees them: distinct (physical_package_id, core_id) pairs of online CPUs. */
static int sysfs_cores(void)
{
	static unsigned char online[MAX_CPUS];
	static uint64_t keys[MAX_CPUS];
	int n = cpu_list("/sys/devices/system/cpu/online", online, MAX_CPUS), nk = 0;

	if (n < 0)
		return n;
	for (int c = 0; c < MAX_CPUS; c++) {
		char path[128];
		uint64_t pkg, core;
		int k = 0;

		if (!online[c])
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		if (text_read_u64(path, &pkg))
			return -ENOENT;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		if (text_read_u64(path, &core))
			return -ENOENT;
		while (k < nk && keys[k] != (pkg << 32 | core))
			k++;
		if (k == nk)
			keys[nk++] = pkg << 32 | core;
	}
	return nk;
}

static void check_core_count(struct case_ctx *ctx)
{
	const struct hw_info *hw = case_hw(ctx);
	int cores = sysfs_cores();

	if (cores < 0) {
		case_error(ctx, "sysfs CPU topology unreadable: %s", strerror(-cores));
		return;
	}
	case_prop(ctx, "cores.hwloc", "%u", hw->n_cores);
	case_prop(ctx, "cores.sysfs", "%d", cores);
	if ((int)hw->n_cores != cores)
		case_fail(ctx, "hwloc counts %u cores, sysfs %d", hw->n_cores, cores);
	if (!hw->cpu.known || hw->n_packages == 0)
		return;
	/* CPUID describes one package; compare it with hwloc's cores per package. */
	case_prop(ctx, "cores_per_package.libcpuid", "%d", hw->cpu.cores_per_package);
	if ((unsigned int)hw->cpu.cores_per_package * hw->n_packages != hw->n_cores)
		case_fail(ctx,
			  "libcpuid says %d cores per package; hwloc has %u cores in %u packages",
			  hw->cpu.cores_per_package, hw->n_cores, hw->n_packages);
}

static unsigned int expand_hugepage_sizes(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max)
{
	(void)opts;
	uint64_t sizes[HW_MAX_PAGE_SIZES];
	unsigned int n = 0;

	/* A loaded topology names its page sizes in the XML; this host's sysfs says nothing. */
	if (hw->source != HW_SOURCE_HOST) {
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
	if (spread > TSC_MAX_SPREAD)
		case_fail(ctx, "TSC calibration spread %.3f%%, threshold %.1f%%", spread * 100,
			  TSC_MAX_SPREAD * 100);
	if (hw->tsc_hz > 0 &&
	    (hz > hw->tsc_hz * (1 + TSC_MAX_SPREAD) || hz < hw->tsc_hz * (1 - TSC_MAX_SPREAD)))
		case_fail(ctx, "TSC %.3f MHz now, %.3f MHz at start-up: differ by more than %.1f%%",
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
		case_fail(ctx, "KVM_CAP_NR_MEMSLOTS %d, expected at least %d", slots,
			  KVM_MIN_MEMSLOTS);
	close(vm);
	close(kvm);
}

static const struct case_def hw_cases[] = {
    {.name = "pu_count",
     .group = "topology",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "hwloc PUs = sysfs online CPUs = libcpuid logical CPUs",
     .run = check_pu_count},
    {.name = "core_count",
     .group = "topology",
     .kind = CASE_CHECK,
     .needs = NEEDS_HOST,
     .doc = "hwloc cores = sysfs (package, core) pairs = libcpuid cores x packages",
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
     .metrics = timer_metrics,
     .n_metrics = 2,
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
    .cases = hw_cases,
    .n_cases = ARRAY_SIZE(hw_cases),
};
