/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hw.h - what the suite plans from: topology (hwloc), CPU (libcpuid), kernel facts (sysfs). */
#ifndef MG_HW_HW_H
#define MG_HW_HW_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

#define HW_MAX_PAGE_SIZES 4 /* x86-64: 4 KiB, 2 MiB, 1 GiB, with room for one more */
#define HW_MAX_CACHES 8	    /* L1d, L1i, L2, L3, L4, L5 */

enum hw_source {
	HW_SOURCE_HOST,	     /* detected on this machine: binding works */
	HW_SOURCE_XML,	     /* loaded from hwloc XML: plans only */
	HW_SOURCE_SYNTHETIC, /* built from a synthetic string: plans only */
	HW_SOURCE_RECORD,    /* a host recorded by `memgate hw --record`: plans only */
};

/* A pool of pages of one size: hugetlb pools from sysfs, base pages from hwloc. */
struct hw_page_pool {
	uint64_t size_bytes;
	uint64_t total; /* pages in the pool (for base pages: pages of node memory) */
	uint64_t free;	/* free pages; UINT64_MAX when the source does not say */
};

struct hw_numa_node {
	unsigned int os_index;
	uint64_t memory_bytes; /* hwloc local_memory */
	unsigned int n_pus;
	unsigned int first_pu; /* lowest PU os_index, handy for messages */
	struct hw_page_pool pages[HW_MAX_PAGE_SIZES];
	unsigned int n_pages;
};

struct hw_cache {
	unsigned int level;
	char kind;	     /* 'd' data, 'i' instruction, 'u' unified */
	uint64_t size_bytes; /* of one instance */
	unsigned int count;  /* instances in the topology */
};

struct hw_cpu {
	bool known; /* libcpuid identified the CPU (host only) */
	char vendor[16];
	char brand[64];
	int family, model, stepping; /* display family and model, as /proc/cpuinfo has them */
	int cores_per_package;	     /* CPUID's view */
	int logical_cpus;	     /* CPUID's logical CPUs a package */
	bool invariant_tsc;	     /* CPUID 0x80000007 EDX[8] */
	bool erms;		     /* CPUID 7.0 EBX[9]: enhanced rep movsb/stosb */
	bool fsrm;		     /* CPUID 7.0 EDX[4]: fast short rep mov */
	char hypervisor[16];	     /* "none", "kvm", ... */
};

enum hw_probe {
	HW_PROBE_UNKNOWN, /* not probed (loaded topology) */
	HW_PROBE_YES,
	HW_PROBE_NO,
};

struct hw_info {
	enum hw_source source;
	char source_desc[512]; /* "this host", the XML path, or the synthetic string */
	hwloc_topology_t topo; /* owned; kept for binding on the host */
	bool can_bind;

	unsigned int n_packages, n_numa, n_cores, n_pus;
	uint64_t memory_bytes; /* sum of the NUMA nodes' local memory */
	struct hw_numa_node *nodes;
	struct hw_cache caches[HW_MAX_CACHES];
	unsigned int n_caches;
	char cpu_model[128]; /* from the topology (hwloc's CPUModel info) */
	char os_release[65]; /* kernel release: uname, or the XML's OSRelease */

	/* Host-only facts; left at "unknown" for a loaded topology. */
	struct hw_cpu cpu;
	double tsc_hz;					  /* calibrated, 0 when not measured */
	uint64_t meminfo_total_kib;			  /* /proc/meminfo MemTotal */
	uint64_t meminfo_available_kib;			  /* /proc/meminfo MemAvailable */
	struct hw_page_pool hugepages[HW_MAX_PAGE_SIZES]; /* system-wide hugetlb pools */
	unsigned int n_hugepages;
	uint64_t default_hugepage_bytes;
	char thp_mode[16]; /* always / madvise / never, "" when unknown */
	enum hw_probe kvm;
	char kvm_detail[160]; /* API version and memslot limit, or why not */
	int kvm_max_memslots;
	/* The vendor module: kvm_intel, kvm_amd, or kvm_pvm (paging-based, offered by some cloud
	 * VMs without hardware virtualisation; it runs only kernels built as PVM guests); "" if
	 * none. */
	char kvm_module[16];
	/* The kernel's view of the CPUs, beside hwloc's (0: not known, as for a loaded topology).
	 */
	unsigned int n_pus_online;     /* /sys/devices/system/cpu/online */
	unsigned int n_pus_allowed;    /* sched_getaffinity(): what this process may run on */
	unsigned int n_cores_sysfs;    /* distinct (package, core_id) pairs of those CPUs */
	unsigned int n_pus_unbindable; /* hwloc PUs outside the allowed set: binding there fails */
	enum hw_probe populate_write;
	char populate_detail[96];
	char glibc[16];

	char fingerprint[256];	   /* stable host-class string keying baselines */
	char fingerprint_hash[17]; /* FNV-1a 64 of it, hex */
};

/**
 * hw_detect() - fill @hw for this host, or for the topology @spec names when it is not NULL:
 * "FILE.xml" (hwloc XML) or "synthetic:DESC" (an hwloc synthetic description).
 * Returns 0, or -errno with @err saying what was wrong (for a bad XML file: file, line and
 * what was expected). On failure @hw holds nothing to release.
 */
int hw_detect(struct hw_info *hw, const char *spec, struct mg_err *err);

/**
 * hw_load_record() - fill @hw from a host record folder (see hw_record()): the topology, the
 * CPU and the host facts as they were there. Plans are made from it, nothing is bound.
 * Returns 0, or -errno with @err naming the file and what was expected.
 */
int hw_load_record(struct hw_info *hw, const char *dir, struct mg_err *err);

/**
 * hw_record() - write what memgate reads of this host (@hw, detected here) into folder @dir:
 * topology.xml (hwloc), cpuid.raw (libcpuid) and host.json (the facts `hw --json` prints).
 * Returns 0, or -errno with @err.
 */
int hw_record(const struct hw_info *hw, const char *dir, struct mg_err *err);

/** hw_release() - free what hw_detect() allocated. */
void hw_release(struct hw_info *hw);

/** hw_print_text() - the human-readable description `memgate hw` prints. */
void hw_print_text(const struct hw_info *hw, FILE *out);

/** hw_to_json() - the description as a new JSON object (decref it), or NULL when out of memory. */
json_t *hw_to_json(const struct hw_info *hw);

/** hw_print_json() - the same as one JSON object. Returns 0 or -errno. */
int hw_print_json(const struct hw_info *hw, FILE *out);

/**
 * hw_reread_pools() - @hw's hugetlb pools (system-wide and per node) and meminfo read again,
 * after memgate resized a pool: the rest of the description stands. Only for this host.
 */
void hw_reread_pools(struct hw_info *hw);

/** hw_kvm_boots_stock_guests() - KVM is usable and runs an unmodified guest (a BIOS, a
 * distribution kernel): not kvm_pvm, where such a kernel stalls before its first word. */
bool hw_kvm_boots_stock_guests(const struct hw_info *hw);

/** hw_source_name() - "host", "xml", "record" or "synthetic". */
const char *hw_source_name(enum hw_source s);

/**
 * hw_hugepage_sizes() - the hugetlb page sizes this host's kernel offers, in bytes, from
 * /sys/kernel/mm/hugepages. Returns how many were written to @sizes (at most @max).
 */
unsigned int hw_hugepage_sizes(uint64_t *sizes, unsigned int max);

/**
 * hw_hugepage_pool() - read the pool of @size_bytes pages, system-wide when @node < 0 or of
 * NUMA node @node. Returns 0 or -errno (-ENOENT: no such pool).
 */
int hw_hugepage_pool(uint64_t size_bytes, int node, struct hw_page_pool *pool);

/** hw_format_bytes() - "4 KiB", "2 MiB", "23.5 GiB" into @buf; returns @buf. */
char *hw_format_bytes(uint64_t bytes, char *buf, size_t len);

#endif
