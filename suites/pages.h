/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pages.h - the page kinds guest memory comes in, shared by the prealloc and qemu suites:
 * a fresh mapping of each, its pool, and memset as the host's limit. */
#ifndef MG_SUITES_PAGES_H
#define MG_SUITES_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/case.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

enum kind {
	K_ANON,	    /* 4 KiB anonymous */
	K_THP,	    /* anonymous with MADV_HUGEPAGE */
	K_HUGE_2M,  /* MAP_HUGETLB, 2 MiB */
	K_HUGE_1G,  /* MAP_HUGETLB, 1 GiB */
	K_MEMFD,    /* memfd, 4 KiB, shared */
	K_MEMFD_2M, /* memfd_create(MFD_HUGETLB), 2 MiB, shared */
	K_KINDS,
};

struct page_kind {
	const char *name;
	size_t page;
	bool hugetlb, memfd;
};

extern const struct page_kind kinds[K_KINDS];

/** kind_parse() - the kind named @name, or -1. */
int kind_parse(const char *name);

/** param_kind() - the instance's "kind" parameter; -1, with the case an ERROR, when it names none.
 */
int param_kind(struct case_ctx *ctx);

/** kind_offered() - does this kernel offer kind @k at all? (Pool sizes are asked later.) */
bool kind_offered(const struct hw_info *hw, int k);

/** pool_free() - free pages of @k's hugetlb pool now; UINT64_MAX for kinds without a pool. */
uint64_t pool_free(int k);

/**
 * pool_short() - when @k's pool has fewer than @pages free pages, make the case SKIP saying
 * what to reserve, and return true.
 */
bool pool_short(struct case_ctx *ctx, int k, uint64_t pages);

struct mapping {
	char *addr;
	size_t size;
	int fd;
};

/**
 * map_kind() - a fresh mapping of @size bytes of kind @k, @mflags added to an anonymous
 * one's flags (MAP_NORESERVE: hugetlb maps past the pool; MAP_POPULATE: faulted in by mmap).
 * Returns 0 with @m filled, or -errno with nothing left open.
 */
int map_kind(int k, size_t size, int mflags, struct mapping *m);

/** unmap_kind() - undo map_kind(). */
void unmap_kind(struct mapping *m);

/** parallel_memset() - memset of @len bytes split over @threads threads (the caller's too). */
void parallel_memset(char *p, size_t len, unsigned int threads);

#endif
