/* host.c - facts only this host can tell: hugetlb pools, THP mode, KVM, MADV_POPULATE_WRITE. */
#include "hw/hw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/text.h"

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

	for (unsigned int i = 0; i < n; i++)
		if (!hw_hugepage_pool(sizes[i], -1, &hw->hugepages[hw->n_hugepages]))
			hw->n_hugepages++;
	/* hwloc gives per-node totals; the free counts come from the same sysfs files. */
	for (unsigned int i = 0; i < hw->n_numa; i++) {
		struct hw_numa_node *nd = &hw->nodes[i];

		for (unsigned int j = 0; j < nd->n_pages; j++) {
			struct hw_page_pool p;

			if (!hw_hugepage_pool(nd->pages[j].size_bytes, (int)nd->os_index, &p))
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

static void probe_kvm(struct hw_info *hw)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int api;

	hw->kvm = HW_PROBE_NO;
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

void hw_host_probe(struct hw_info *hw)
{
	probe_meminfo(hw);
	probe_pools(hw);
	probe_thp(hw);
	probe_kvm(hw);
	probe_populate(hw);
	snprintf(hw->glibc, sizeof(hw->glibc), "%s", gnu_get_libc_version());
}
