/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prealloc.h - parallel guest-memory preallocation, as QEMU's -mem-prealloc (the 2017
 * parallel-prealloc thread, the 2025 thread-cap thread; docs/figures.md names their sources). */
#ifndef MG_IMPL_PREALLOC_H
#define MG_IMPL_PREALLOC_H

#include <assert.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum prealloc_method {
	PREALLOC_TOUCH,	   /* write one byte per page, keeping its contents */
	PREALLOC_POPULATE, /* madvise(MADV_POPULATE_WRITE), Linux 5.14 */
	PREALLOC_MLOCK,	   /* mlock() then munlock(): one thread, measured alternative */
};
#define PREALLOC_METHODS 3

/* QEMU's MAX_MEM_PREALLOC_THREAD_COUNT: 16 since 2017, 32 proposed in 2025 (the 2025 thread-cap
 * thread). */
#define PREALLOC_CAP_QEMU 16
#define PREALLOC_CAP_DEFAULT 32
/* No thread for less than 64 MiB: creating it costs more than it saves. */
#define PREALLOC_MIN_BYTES_PER_THREAD (64ULL << 20)
#define PREALLOC_MAX_THREADS 256
/* Regions one plan may hold: one per NUMA node, and each gets a thread at least. */
#define PREALLOC_MAX_REGIONS 64
static_assert(PREALLOC_MAX_REGIONS <= PREALLOC_MAX_THREADS, "a thread per region at least");

struct prealloc_region {
	char *addr;
	size_t size;	  /* a multiple of page_size */
	size_t page_size; /* 4 KiB, 2 MiB, 1 GiB: what one fault maps */
	int node;	  /* NUMA node (hwloc logical index) to populate from, -1: any */
};

/* One worker's share: a page range of one region and the CPUs it may run on. */
struct prealloc_share {
	unsigned int region;
	size_t first_page, n_pages;
	int node; /* -1: not bound */
};

struct prealloc_opts {
	enum prealloc_method method;
	unsigned int requested; /* threads asked for: the guest's vCPU count by default */
	unsigned int cap;
	unsigned int host_pus; /* usable host PUs */
	hwloc_topology_t topo; /* for binding threads to their region's node; NULL: none */
	bool bind;	       /* bind (only when the topology is this host's) */
};

/* What a run did, for the report. */
struct prealloc_report {
	unsigned int threads;
	size_t populated_bytes;	       /* counted with mincore() after a failure */
	enum prealloc_method method;   /* after the fallback from populate to touch */
	double wall_ns;		       /* release of the workers to the last one done */
	double slowest_ns, fastest_ns; /* per worker */
	double cpu_ns;		       /* all workers' CPU time */
};

/**
 * prealloc_threads() - QEMU's rule, written once: min(@requested, @pus, @cap, pages,
 * size / 64 MiB), at least 1.
 */
unsigned int prealloc_threads(size_t size, size_t page_size, unsigned int requested,
			      unsigned int pus, unsigned int cap);

/**
 * prealloc_plan() - split @n regions among the threads the rule allows for their total
 * size: threads go to regions in proportion to their sizes (at least one each), and each
 * region's pages are split evenly, the remainder one page each over its first threads.
 * A share runs on its region's node's CPUs, unbound when that node has none this process may
 * use (@o->topo says).
 * Returns the number of shares written to @out (at most @max), or -EINVAL.
 */
int prealloc_plan(const struct prealloc_region *regions, size_t n, const struct prealloc_opts *o,
		  struct prealloc_share *out, unsigned int max);

/**
 * prealloc_many() - populate the @n regions at once, one pool of threads for all of them:
 * the workers are created (and bound) first and released together, and none of them takes
 * the mmap lock for writing after release (no malloc, no thread creation). SIGBUS from a
 * hugetlb pool running dry is caught per worker and any previous handler restored. Regions
 * with a node are bound to it, and their workers to its CPUs, when @o->bind.
 * Returns 0, or -errno with @err saying how much was populated and what to do; -ENOSYS
 * when the host cannot bind as asked (hwloc's support flags say so).
 */
int prealloc_many(const struct prealloc_region *regions, size_t n, const struct prealloc_opts *o,
		  struct prealloc_report *rep, struct mg_err *err);

/** prealloc_one() - prealloc_many() of one region. */
int prealloc_one(const struct prealloc_region *r, const struct prealloc_opts *o,
		 struct prealloc_report *rep, struct mg_err *err);

/** prealloc_resident_pages() - pages of @r resident now (mincore). */
size_t prealloc_resident_pages(const struct prealloc_region *r);

/* Names for the command line and reports, in enum order; parse gives -1 for none. */
extern const char *const prealloc_method_names[PREALLOC_METHODS];
/** prealloc_method_name() - @m's name, as --impl and the reports spell it. */
const char *prealloc_method_name(enum prealloc_method m);
/** prealloc_method_parse() - the method @name names, or -1. */
int prealloc_method_parse(const char *name);

#endif
