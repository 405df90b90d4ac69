/* SPDX-License-Identifier: GPL-2.0-or-later */
/* host.c - facts only this host can tell: hugetlb pools, THP mode, KVM, MADV_POPULATE_WRITE. */
#include "hw/detect.h"
#include "hw/hw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <linux/kvm.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/text.h"
#include "util/util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 uapi value; older headers lack it */
#endif

#define HUGEPAGES_DIR "/sys/kernel/mm/hugepages"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

unsigned int hw_hugepage_sizes(uint64_t *sizes, unsigned int max)
{
	DIR *d = opendir(HUGEPAGES_DIR);
	struct dirent *e;
	unsigned int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		unsigned long long kib;

		if (sscanf(e->d_name, "hugepages-%llukB", &kib) == 1)
			sizes[n++] = (uint64_t)kib * 1024;
	}
	closedir(d);
	qsort(sizes, n, sizeof(sizes[0]), cmp_u64);
	return n;
}

int hw_hugepage_pool(uint64_t size_bytes, int node, struct hw_page_pool *pool)
{
	char dir[160], path[200];
	int ret;

	if (node < 0)
		snprintf(dir, sizeof(dir), HUGEPAGES_DIR "/hugepages-%llukB",
			 (unsigned long long)(size_bytes / 1024));
	else
		snprintf(dir, sizeof(dir),
			 "/sys/devices/system/node/node%d/hugepages/hugepages-%llukB", node,
			 (unsigned long long)(size_bytes / 1024));
	pool->size_bytes = size_bytes;
	snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
	ret = text_read_u64(path, &pool->total);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/free_hugepages", dir);
	return text_read_u64(path, &pool->free);
}

static void probe_pools(struct hw_info *hw)
{
	uint64_t sizes[HW_MAX_PAGE_SIZES];
	unsigned int n = hw_hugepage_sizes(sizes, HW_MAX_PAGE_SIZES);

	hw->n_hugepages = 0;
	for (unsigned int i = 0; i < n; i++)
		if (!hw_hugepage_pool(sizes[i], -1, &hw->hugepages[hw->n_hugepages]))
			hw->n_hugepages++;
	/* hwloc gives per-node totals; the free counts come from the same sysfs files. */
	for (unsigned int i = 0; i < hw->n_numa; i++) {
		struct hw_numa_node *nd = &hw->nodes[i];

		for (unsigned int j = 0; j < nd->n_pages; j++) {
			struct hw_page_pool p;

			if (hw_hugepage_pool(nd->pages[j].size_bytes, (int)nd->os_index, &p))
				continue;
			nd->pages[j].total = p.total;
			nd->pages[j].free = p.free;
		}
	}
}

static void probe_meminfo(struct hw_info *hw)
{
	char *mi = text_read_file("/proc/meminfo", 16384);
	uint64_t kib;

	if (!mi)
		return;
	text_meminfo_kib(mi, "MemTotal", &hw->meminfo_total_kib);
	text_meminfo_kib(mi, "MemAvailable", &hw->meminfo_available_kib);
	if (!text_meminfo_kib(mi, "Hugepagesize", &kib))
		hw->default_hugepage_bytes = kib * 1024;
	free(mi);
}

static void probe_thp(struct hw_info *hw)
{
	char *s = text_read_file("/sys/kernel/mm/transparent_hugepage/enabled", 256);
	char *open, *close;

	/* The file reads "always [madvise] never": the bracketed word is the mode. */
	if (s && (open = strchr(s, '[')) && (close = strchr(open, ']'))) {
		*close = '\0';
		snprintf(hw->thp_mode, sizeof(hw->thp_mode), "%s", open + 1);
	}
	free(s);
}

/* The vendor module is read even where /dev/kvm cannot be opened: it says what KVM would be. */
static void probe_kvm_module(struct hw_info *hw)
{
	static const char *const mods[] = {"kvm_intel", "kvm_amd", "kvm_pvm"};
	char path[64];

	hw->kvm_module[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(mods); i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", mods[i]);
		if (!access(path, F_OK)) {
			snprintf(hw->kvm_module, sizeof(hw->kvm_module), "%s", mods[i]);
			return;
		}
	}
}

bool hw_kvm_boots_stock_guests(const struct hw_info *hw)
{
	return hw->kvm == HW_PROBE_YES && strcmp(hw->kvm_module, "kvm_pvm");
}

static void probe_kvm(struct hw_info *hw)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int api;

	hw->kvm = HW_PROBE_NO;
	probe_kvm_module(hw);
	if (fd < 0) {
		snprintf(hw->kvm_detail, sizeof(hw->kvm_detail), "/dev/kvm: %s%s", strerror(errno),
			 errno == EACCES   ? " (needs root or the kvm group)"
			 : errno == ENOENT ? " (no KVM module or no virtualisation support)"
					   : "");
		return;
	}
	api = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		snprintf(hw->kvm_detail, sizeof(hw->kvm_detail),
			 "KVM_GET_API_VERSION returned %d, expected %d", api, KVM_API_VERSION);
		close(fd);
		return;
	}
	hw->kvm_max_memslots = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_MEMSLOTS);
	hw->kvm = HW_PROBE_YES;
	snprintf(hw->kvm_detail, sizeof(hw->kvm_detail), "API %d, %d memslots", api,
		 hw->kvm_max_memslots);
	close(fd);
}

/* Only EINVAL means the kernel lacks MADV_POPULATE_WRITE; probe it on a real mapping. */
static void probe_populate(struct hw_info *hw)
{
	size_t len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		hw->populate_write = HW_PROBE_UNKNOWN;
		snprintf(hw->populate_detail, sizeof(hw->populate_detail), "mmap: %s",
			 strerror(errno));
		return;
	}
	if (!madvise(p, len, MADV_POPULATE_WRITE)) {
		hw->populate_write = HW_PROBE_YES;
		snprintf(hw->populate_detail, sizeof(hw->populate_detail), "supported");
	} else if (errno == EINVAL) {
		hw->populate_write = HW_PROBE_NO;
		snprintf(hw->populate_detail, sizeof(hw->populate_detail),
			 "EINVAL: kernel older than 5.14");
	} else {
		hw->populate_write = HW_PROBE_UNKNOWN;
		snprintf(hw->populate_detail, sizeof(hw->populate_detail), "madvise: %s",
			 strerror(errno));
	}
	munmap(p, len);
}

/* CPUs the kernel numbers up to this; more than hwloc's bound (hw/topo.c) is no real host. */
#define HOST_MAX_CPUS 16384

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

		if (end == p || a < 0)
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

/* Distinct (physical_package_id, core_id) pairs of the CPUs set in @on; -errno if unreadable. */
static int sysfs_cores(const unsigned char *on, int max)
{
	uint64_t *keys = calloc((size_t)max, sizeof(*keys));
	int nk = 0;

	if (!keys)
		return -ENOMEM;
	for (int c = 0; c < max; c++) {
		char path[128];
		uint64_t pkg, core;
		int k = 0;

		if (!on[c])
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		if (text_read_u64(path, &pkg))
			goto unreadable;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		if (text_read_u64(path, &core))
			goto unreadable;
		while (k < nk && keys[k] != (pkg << 32 | core))
			k++;
		if (k == nk)
			keys[nk++] = pkg << 32 | core;
	}
	free(keys);
	return nk;
unreadable:
	free(keys);
	return -ENOENT;
}

/*
 * The kernel's CPUs beside hwloc's: online (sysfs), allowed to this process (its affinity,
 * which a cgroup cpuset narrows), their cores, and hwloc PUs binding could not use.
 */
static void probe_cpus(struct hw_info *hw)
{
	unsigned char *online = calloc(HOST_MAX_CPUS, 1);
	cpu_set_t *allowed = CPU_ALLOC(HOST_MAX_CPUS);
	size_t set_size = CPU_ALLOC_SIZE(HOST_MAX_CPUS);
	hwloc_obj_t pu = NULL;
	int n;

	if (!online || !allowed)
		goto out;
	n = cpu_list("/sys/devices/system/cpu/online", online, HOST_MAX_CPUS);
	hw->n_pus_online = n > 0 ? (unsigned int)n : 0;
	if (sched_getaffinity(0, set_size, allowed))
		goto out;
	hw->n_pus_allowed = (unsigned int)CPU_COUNT_S(set_size, allowed);
	for (int c = 0; c < HOST_MAX_CPUS; c++)
		online[c] = online[c] && CPU_ISSET_S((size_t)c, set_size, allowed);
	n = sysfs_cores(online, HOST_MAX_CPUS);
	hw->n_cores_sysfs = n > 0 ? (unsigned int)n : 0;
	while ((pu = hwloc_get_next_obj_by_type(hw->topo, HWLOC_OBJ_PU, pu)))
		if (!CPU_ISSET_S(pu->os_index, set_size, allowed))
			hw->n_pus_unbindable++;
out:
	free(online);
	if (allowed)
		CPU_FREE(allowed);
}

void hw_reread_pools(struct hw_info *hw)
{
	if (hw->source != HW_SOURCE_HOST)
		return;
	probe_meminfo(hw);
	probe_pools(hw);
}

void hw_host_probe(struct hw_info *hw)
{
	probe_cpus(hw);
	probe_meminfo(hw);
	probe_pools(hw);
	probe_thp(hw);
	probe_kvm(hw);
	probe_populate(hw);
	snprintf(hw->glibc, sizeof(hw->glibc), "%s", gnu_get_libc_version());
}
