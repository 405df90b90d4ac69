/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dispatch.h - an address space's page-table dispatch, shaped as QEMU's AddressSpaceDispatch. */
#ifndef MG_IMPL_DISPATCH_H
#define MG_IMPL_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "impl/rcu.h"

/*
 * QEMU translates a guest address in an address space through a radix tree over page
 * numbers whose leaves index a section array, and rebuilds that tree, for every address
 * space, on every memory transaction. What matters here is what the rebuild allocates and
 * writes, so the shapes are QEMU's (2.11, when the 2017 malloc_trim thread was posted):
 * - DISPATCH_LEVELS levels of 2 KiB nodes, 512 four-byte entries (a 6-bit skip and a
 *   26-bit index), for 52-bit guest physical addresses and 4 KiB pages;
 * - a node array sized for at least as many nodes as the largest any dispatch has needed
 *   (QEMU's alloc_hint, 16 at first), 3 x DISPATCH_LEVELS nodes reserved before each range
 *   is entered;
 * - 64-byte sections (MemoryRegionSection), the first four the dummies QEMU puts in every
 *   dispatch (unassigned, notdirty, rom, watch), the array doubling from 16.
 */
#define DISPATCH_LEVELS 5
#define DISPATCH_NODE_BITS 9
#define DISPATCH_NODE_HINT 16
#define DISPATCH_DUMMY_SECTIONS 4
#define DISPATCH_UNASSIGNED 0

struct dispatch_range {
	uint64_t start, size; /* page-aligned */
	void *owner;	      /* the region, as QEMU's MemoryRegion pointer */
};

struct dispatch_entry {
	uint32_t skip : 6; /* 0: a leaf, ptr is a section */
	uint32_t ptr : 26;
};

struct dispatch_node {
	struct dispatch_entry e[1u << DISPATCH_NODE_BITS];
};

struct dispatch_section {
	_Alignas(16) uint64_t size[2]; /* an Int128, as QEMU's */
	const void *owner, *view;
	uint64_t offset_in_region, offset_in_space;
	bool readonly;
};

struct dispatch {
	struct rcu_head head; /* first: a call_rcu callback gets the dispatch back */
	unsigned int magic;
	struct dispatch_entry root;
	struct dispatch_node *nodes;
	unsigned int nodes_used, nodes_alloc;
	struct dispatch_section *sections;
	unsigned int sections_used, sections_alloc;
};

/**
 * dispatch_build() - the dispatch for @n non-overlapping @ranges. @hint is the caller's
 * alloc_hint (start it at DISPATCH_NODE_HINT; it only grows). Range i gets section
 * DISPATCH_DUMMY_SECTIONS + i. Returns NULL when out of memory.
 */
struct dispatch *dispatch_build(const struct dispatch_range *ranges, unsigned int n,
				unsigned int *hint);

/**
 * dispatch_find() - the section @addr falls in (DISPATCH_UNASSIGNED if none), or -1 when
 * @d has been freed: dispatch_free() poisons it, and a reader that finds it so has read
 * past its grace period.
 */
int dispatch_find(const struct dispatch *d, uint64_t addr);

/** dispatch_free() - free @d, poisoning its header first. */
void dispatch_free(struct dispatch *d);

#endif
