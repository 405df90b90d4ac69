/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pages.c - page kinds: a fresh mapping of each, its pool, and memset over it. */
#include "suites/pages.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/memfd.h>
#include <linux/mman.h>
#include <sys/mman.h>
#include <unistd.h>

#include "impl/prealloc.h"

const struct page_kind kinds[K_KINDS] = {
    [K_ANON] = {"anon-4k", 4096, false, false},
    [K_THP] = {"thp", 4096, false, false},
    [K_HUGE_2M] = {"hugetlb-2m", 2 * MIB, true, false},
    [K_HUGE_1G] = {"hugetlb-1g", GIB, true, false},
    [K_MEMFD] = {"memfd-4k", 4096, false, true},
    [K_MEMFD_2M] = {"memfd-hugetlb-2m", 2 * MIB, true, true},
};

int kind_parse(const char *name)
{
	for (int k = 0; name && k < K_KINDS; k++)
		if (!strcmp(kinds[k].name, name))
			return k;
	return -1;
}

/* The instance's page kind; -1, with the case an ERROR, when its parameter names none. */
int param_kind(struct case_ctx *ctx)
{
	int k = kind_parse(case_param(ctx, "kind"));

	if (k < 0)
		case_error(ctx, "no page kind named \"%s\"", case_param(ctx, "kind"));
	return k;
}

/* Does this kernel offer the kind at all? (Whether a pool has pages is asked at run time.) */
bool kind_offered(const struct hw_info *hw, int k)
{
	if (k == K_THP)
		return hw->thp_mode[0] && strcmp(hw->thp_mode, "never");
	if (!kinds[k].hugetlb)
		return true;
	for (unsigned int i = 0; i < hw->n_hugepages; i++)
		if (hw->hugepages[i].size_bytes == kinds[k].page)
			return true;
	/* A loaded topology lists its page sizes in its NUMA nodes. */
	for (unsigned int j = 0;
	     hw->source != HW_SOURCE_HOST && hw->n_numa && j < hw->nodes[0].n_pages; j++)
		if (hw->nodes[0].pages[j].size_bytes == kinds[k].page)
			return true;
	return false;
}

/* Free pages of @k's pool now; UINT64_MAX for kinds without a pool. */
uint64_t pool_free(int k)
{
	struct hw_page_pool p;

	if (!kinds[k].hugetlb)
		return UINT64_MAX;
	return hw_hugepage_pool(kinds[k].page, -1, &p) ? 0 : p.free;
}

/* Skip, with what to do, when a hugetlb pool has fewer than @pages free pages. */
bool pool_short(struct case_ctx *ctx, int k, uint64_t pages)
{
	uint64_t have = pool_free(k);

	if (have >= pages)
		return false;
	/* Reserved and still short: the kernel found too few, which asking again will not fix. */
	if (case_opts(ctx)->hugepages_reserved) {
		case_skip(ctx,
			  "the %s pool has %" PRIu64 " free pages, %" PRIu64 " needed: "
			  "--reserve-hugepages could not get more, the kernel found too few%s",
			  kinds[k].name, have, pages,
			  kinds[k].page >= (1u << 30)
			      ? " (1 GiB pages are surest reserved at boot: hugepagesz=1G "
				"hugepages=N on the kernel command line)"
			      : "");
		return true;
	}
	/* An agent's pools are sized once by its administrator; a trusted job as root may
	 * size them for its run. Said for the page size the case needs. */
	if (kinds[k].page >= (1u << 30))
		case_skip(ctx,
			  "the %s pool has %" PRIu64 " free pages, %" PRIu64 " needed: reserve "
			  "them at boot (hugepagesz=1G hugepages=N on the kernel command line), "
			  "or run with --reserve-hugepages as root",
			  kinds[k].name, have, pages);
	else
		case_skip(ctx,
			  "the %s pool has %" PRIu64 " free pages, %" PRIu64 " needed: have the "
			  "agent's administrator size it once (vm.nr_hugepages in /etc/sysctl.d/, "
			  "as memgate's ci/qemu/hugepages.conf; then sysctl --system), or run "
			  "with --reserve-hugepages as root",
			  kinds[k].name, have, pages);
	return true;
}

int map_kind(int k, size_t size, int mflags, struct mapping *m)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | mflags, ret;
	size_t extra = k == K_THP ? 2 * MIB : 0;
	char *p;

	*m = (struct mapping){.addr = NULL, .size = size, .fd = -1};
	if (kinds[k].memfd) {
		m->fd =
		    memfd_create("memgate-prealloc",
				 MFD_CLOEXEC | (kinds[k].hugetlb ? MFD_HUGETLB | MFD_HUGE_2MB : 0));
		if (m->fd < 0 || ftruncate(m->fd, (off_t)size))
			goto fail;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	} else {
		if (kinds[k].hugetlb)
			flags |= MAP_HUGETLB | (kinds[k].page == GIB ? MAP_HUGE_1GB : MAP_HUGE_2MB);
		p = mmap(NULL, size + extra, PROT_READ | PROT_WRITE, flags, -1, 0);
	}
	if (p == MAP_FAILED)
		goto fail;
	if (k == K_THP) {
		/* Huge pages need 2 MiB alignment: trim the extra from both ends. */
		char *a = (char *)(((uintptr_t)p + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));

		if (a > p)
			munmap(p, (size_t)(a - p));
		if ((size_t)(a - p) < extra)
			munmap(a + size, extra - (size_t)(a - p));
		p = a;
		madvise(p, size, MADV_HUGEPAGE);
	}
	m->addr = p;
	return 0;
fail:
	ret = -errno; /* before close() can change it */
	if (m->fd >= 0)
		close(m->fd);
	return ret < 0 ? ret : -EIO;
}

void unmap_kind(struct mapping *m)
{
	munmap(m->addr, m->size);
	if (m->fd >= 0)
		close(m->fd);
}

struct memset_job {
	char *p;
	size_t len;
};

static void *memset_main(void *arg)
{
	struct memset_job *j = arg;

	memset(j->p, 1, j->len);
	return NULL;
}

void parallel_memset(char *p, size_t len, unsigned int threads)
{
	struct memset_job jobs[PREALLOC_MAX_THREADS] = {{0}};
	pthread_t tid[PREALLOC_MAX_THREADS];
	unsigned int made = 0;
	size_t part;

	threads = threads ? (threads > PREALLOC_MAX_THREADS ? PREALLOC_MAX_THREADS : threads) : 1;
	part = len / threads;
	for (unsigned int i = 0; i < threads; i++)
		jobs[i] =
		    (struct memset_job){p + i * part, i + 1 == threads ? len - i * part : part};
	for (unsigned int i = 1; i < threads; i++)
		if (!pthread_create(&tid[made], NULL, memset_main, &jobs[i]))
			made++;
		else
			memset_main(&jobs[i]);
	memset_main(&jobs[0]);
	for (unsigned int i = 0; i < made; i++)
		pthread_join(tid[i], NULL);
}
