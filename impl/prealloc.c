/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prealloc.c - fault in guest memory with a pool of threads, as QEMU's -mem-prealloc does. */
#include "impl/prealloc.h"

#include "util/text.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 uapi value; older headers lack it */
#endif

const char *const prealloc_method_names[PREALLOC_METHODS] = {
    [PREALLOC_TOUCH] = "touch",
    [PREALLOC_POPULATE] = "populate",
    [PREALLOC_MLOCK] = "mlock",
};

const char *prealloc_method_name(enum prealloc_method m)
{
	return (unsigned int)m < PREALLOC_METHODS ? prealloc_method_names[m] : "?";
}

int prealloc_method_parse(const char *name)
{
	return text_index(prealloc_method_names, PREALLOC_METHODS, name);
}

static unsigned int min_u(unsigned int a, size_t b)
{
	return b < a ? (unsigned int)b : a;
}

/* The rule, written once: min(requested, PUs, cap, pages, size / 64 MiB), at least 1. */
static unsigned int thread_rule(size_t size, size_t pages, unsigned int requested, unsigned int pus,
				unsigned int cap)
{
	unsigned int t = min_u(min_u(min_u(requested, pus), cap), pages);

	t = min_u(t, size / PREALLOC_MIN_BYTES_PER_THREAD);
	return t ? t : 1;
}

unsigned int prealloc_threads(size_t size, size_t page_size, unsigned int requested,
			      unsigned int pus, unsigned int cap)
{
	return thread_rule(size, size / page_size, requested, pus, cap);
}

/* Threads per region, in proportion to size, at least one each, summing to @total. */
static void share_threads(const struct prealloc_region *regions, size_t n, unsigned int total,
			  unsigned int *per)
{
	size_t bytes = 0;
	unsigned int given = 0;

	for (size_t i = 0; i < n; i++)
		bytes += regions[i].size;
	for (size_t i = 0; i < n; i++) {
		per[i] = (unsigned int)((double)total * (double)regions[i].size / (double)bytes);
		per[i] = per[i] ? per[i] : 1;
		given += per[i];
	}
	/* Rounding left threads over: each goes where a thread has the most bytes to do. */
	while (given < total) {
		size_t k = 0;

		for (size_t i = 1; i < n; i++)
			if (regions[i].size / per[i] > regions[k].size / per[k])
				k = i;
		per[k]++;
		given++;
	}
	/* The floor of one per region took too many: take from where they have least to do. */
	while (given > total) {
		size_t k = n;

		for (size_t i = 0; i < n; i++)
			if (per[i] > 1 &&
			    (k == n || regions[i].size / per[i] < regions[k].size / per[k]))
				k = i;
		if (k == n)
			break; /* one thread per region is the floor */
		per[k]--;
		given--;
	}
}

/*
 * The node whose CPUs a share of a region on @node runs on: that node, or -1 (unbound) when
 * it has no CPU this process may use (a cgroup cpuset elsewhere; hwloc's topology leaves such
 * a node's cpuset empty). Its memory still comes from the node: the region's binding.
 */
static int share_node(const struct prealloc_opts *o, int node)
{
	hwloc_obj_t obj;

	if (node < 0 || !o->topo)
		return node;
	obj = hwloc_get_obj_by_type(o->topo, HWLOC_OBJ_NUMANODE, (unsigned int)node);
	return obj && !hwloc_bitmap_iszero(obj->cpuset) ? node : -1;
}

int prealloc_plan(const struct prealloc_region *regions, size_t n, const struct prealloc_opts *o,
		  struct prealloc_share *out, unsigned int max)
{
	unsigned int per[PREALLOC_MAX_REGIONS], total, k = 0;
	size_t bytes = 0, pages = 0;

	if (!n || n > PREALLOC_MAX_REGIONS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!regions[i].page_size || regions[i].size % regions[i].page_size ||
		    !regions[i].size)
			return -EINVAL;
		bytes += regions[i].size;
		pages += regions[i].size / regions[i].page_size;
	}
	/* The rule on the whole guest: its size, its pages (each region has whole pages). */
	total = thread_rule(bytes, pages, o->requested, o->host_pus, o->cap);
	share_threads(regions, n, total < n ? (unsigned int)n : total, per);
	for (size_t i = 0; i < n; i++) {
		size_t rp = regions[i].size / regions[i].page_size, first = 0;
		unsigned int t = min_u(per[i], rp);

		for (unsigned int j = 0; j < t; j++) {
			/* Even split; the remainder one page each over the first threads. */
			size_t np = rp / t + (j < rp % t);

			if (k == max)
				return -EINVAL;
			out[k++] = (struct prealloc_share){.region = (unsigned int)i,
							   .first_page = first,
							   .n_pages = np,
							   .node = share_node(o, regions[i].node)};
			first += np;
		}
	}
	return (int)k;
}

/* ---- the workers -------------------------------------------------------------------------- */

struct worker {
	pthread_t tid;
	const struct prealloc_region *r;
	struct prealloc_share share;
	enum prealloc_method method;
	hwloc_topology_t topo; /* bind to share.node's CPUs when set */
	struct pool *pool;
	volatile size_t done_pages; /* progress, read after a SIGBUS unwound the loop */
	int err;		    /* 0, -EFAULT (out of pages), or -errno of madvise */
	int bind_err;	/* errno of a failed hwloc_set_cpubind, 0 when bound or unbound */
	bool fell_back; /* populate answered EINVAL here: touched instead */
	int64_t start_ns, end_ns, cpu_ns;
};

/* Workers wait on this until all exist; then they go together. */
struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state; /* 0 waiting, 1 go, -1 abort (creating a thread failed) */
};

/* The jump target of the SIGBUS handler: set only inside a worker's populate loop. */
static __thread sigjmp_buf *bus_jump;
static struct sigaction old_sigbus;
/* One preallocation at a time: the SIGBUS handler is the process's. */
static pthread_mutex_t prealloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (bus_jump)
		siglongjmp(*bus_jump, 1);
	/* Not ours: put the previous disposition back; the faulting access repeats and gets it. */
	sigaction(sig, &old_sigbus, NULL);
}

static void fault_pages(struct worker *w)
{
	char *base = w->r->addr + w->share.first_page * w->r->page_size;
	size_t len = w->share.n_pages * w->r->page_size;

	if (w->method == PREALLOC_POPULATE) {
		/* Holds the mmap lock for reading throughout; EFAULT: the pool ran dry. */
		if (!madvise(base, len, MADV_POPULATE_WRITE)) {
			w->done_pages = w->share.n_pages;
			return;
		}
		if (errno != EINVAL) {
			w->err = -errno;
			return;
		}
		w->fell_back = true; /* not on this area: touch it instead */
	}
	/*
	 * A locked add of 0 is a write: one write fault maps the page, and the byte keeps its
	 * value. "*p = *p" reads first, which maps the zero page and faults again on the
	 * write (0.70 against 1.01 GiB/s here, docs/figures.md).
	 */
	for (size_t i = 0; i < w->share.n_pages; i++) {
		__atomic_fetch_add(base + i * w->r->page_size, 0, __ATOMIC_RELAXED);
		w->done_pages = i + 1;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	sigjmp_buf env;
	int64_t cpu0;

	/* Binding is a syscall without the mmap lock; it happens before the release. */
	if (w->topo && w->share.node >= 0) {
		hwloc_obj_t node =
		    hwloc_get_obj_by_type(w->topo, HWLOC_OBJ_NUMANODE, (unsigned int)w->share.node);

		if (!node)
			w->bind_err = EINVAL;
		else if (hwloc_set_cpubind(w->topo, node->cpuset, HWLOC_CPUBIND_THREAD))
			w->bind_err = errno;
	}
	pthread_mutex_lock(&w->pool->lock);
	while (!w->pool->state)
		pthread_cond_wait(&w->pool->cond, &w->pool->lock);
	pthread_mutex_unlock(&w->pool->lock);
	if (w->pool->state < 0)
		return NULL;
	w->start_ns = util_clock_ns(CLOCK_MONOTONIC);
	cpu0 = util_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (sigsetjmp(env, 1)) {
		/* SIGBUS: a hugetlb page could not be had. done_pages says how far we got. */
		w->err = -EFAULT;
	} else {
		bus_jump = &env;
		fault_pages(w);
	}
	bus_jump = NULL;
	w->cpu_ns = util_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	w->end_ns = util_clock_ns(CLOCK_MONOTONIC);
	return NULL;
}

/* ---- the pool ----------------------------------------------------------------------------- */

size_t prealloc_resident_pages(const struct prealloc_region *r)
{
	size_t base = (size_t)sysconf(_SC_PAGESIZE), n = r->size / base, count = 0;
	unsigned char *vec = malloc(n ? n : 1);

	if (!vec || mincore(r->addr, r->size, vec)) {
		free(vec);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count / (r->page_size / base);
}

/*
 * Only EINVAL says MADV_POPULATE_WRITE cannot be used. A zero length asks the kernel without
 * faulting anything (QEMU probes the first page, which with 1 GiB pages is half the work of a
 * 2-page guest done before the workers start); each worker then asks on its own range and
 * falls back to touch there on EINVAL (a VM_PFNMAP area, say).
 */
static enum prealloc_method probe_method(const struct prealloc_region *r, enum prealloc_method m)
{
	if (m == PREALLOC_POPULATE && madvise(r->addr, 0, MADV_POPULATE_WRITE) && errno == EINVAL)
		return PREALLOC_TOUCH;
	return m;
}

static int run_mlock(const struct prealloc_region *regions, size_t n, struct prealloc_report *rep,
		     struct mg_err *err)
{
	int64_t t0 = util_clock_ns(CLOCK_MONOTONIC), c0 = util_clock_ns(CLOCK_THREAD_CPUTIME_ID);

	for (size_t i = 0; i < n; i++) {
		if (mlock(regions[i].addr, regions[i].size))
			return mg_err_set(err, errno,
					  "mlock of %zu MiB: %s (RLIMIT_MEMLOCK, or the "
					  "hugetlb pool ran out)",
					  regions[i].size >> 20, strerror(errno));
		munlock(regions[i].addr, regions[i].size);
		rep->populated_bytes += regions[i].size;
	}
	rep->threads = 1;
	rep->wall_ns = rep->slowest_ns = rep->fastest_ns =
	    (double)(util_clock_ns(CLOCK_MONOTONIC) - t0);
	rep->cpu_ns = (double)(util_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	return 0;
}

/* Start every worker (they wait), then release them together and wait for all. */
static int run_pool(struct worker *w, unsigned int n, struct pool *pool, struct mg_err *err)
{
	unsigned int made = 0;
	int ret = 0;

	for (; made < n; made++) {
		ret = pthread_create(&w[made].tid, NULL, worker_main, &w[made]);
		if (ret)
			break;
	}
	pthread_mutex_lock(&pool->lock);
	pool->state = ret ? -1 : 1;
	pthread_cond_broadcast(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned int i = 0; i < made; i++)
		pthread_join(w[i].tid, NULL);
	if (ret)
		return mg_err_set(err, ret, "creating prealloc thread %u of %u: %s", made + 1, n,
				  strerror(ret));
	return 0;
}

static void fill_report(const struct worker *w, unsigned int n, struct prealloc_report *rep)
{
	int64_t first = w[0].start_ns, last = w[0].end_ns;

	rep->threads = n;
	rep->slowest_ns = 0;
	rep->fastest_ns = 1e300;
	for (unsigned int i = 0; i < n; i++) {
		double t = (double)(w[i].end_ns - w[i].start_ns);

		first = w[i].start_ns < first ? w[i].start_ns : first;
		last = w[i].end_ns > last ? w[i].end_ns : last;
		rep->slowest_ns = t > rep->slowest_ns ? t : rep->slowest_ns;
		rep->fastest_ns = t < rep->fastest_ns ? t : rep->fastest_ns;
		rep->cpu_ns += (double)w[i].cpu_ns;
		rep->populated_bytes += w[i].done_pages * w[i].r->page_size;
	}
	rep->wall_ns = (double)(last - first);
}

/* The message a person reads when a worker failed: how far, and what to do. */
static int failure(const struct prealloc_region *regions, size_t n, const struct worker *w,
		   unsigned int nw, struct prealloc_report *rep, struct mg_err *err)
{
	size_t want = 0, have = 0, page = regions[0].page_size;
	int code = 0, node = -1;

	for (unsigned int i = 0; i < nw && !code; i++)
		if ((code = w[i].err))
			node = w[i].r->node;
	if (!code)
		return 0;
	for (size_t i = 0; i < n; i++) {
		want += regions[i].size / regions[i].page_size;
		have += prealloc_resident_pages(&regions[i]);
	}
	rep->populated_bytes = have * page;
	if (code != -EFAULT)
		return mg_err_set(err, -code, "prealloc (%s): %s after %zu of %zu pages",
				  prealloc_method_name(rep->method), strerror(-code), have, want);
	/* Bound to a node, a region faults only there: that node's pool is what ran short. */
	if (node >= 0)
		return mg_err_set(
		    err, EFAULT,
		    "prealloc (%s, %u threads): not enough hugepages on node %d: %zu of "
		    "%zu pages of %zu KiB populated; reserve them on that node (echo N > "
		    "/sys/devices/system/node/node%d/hugepages/hugepages-%zukB/"
		    "nr_hugepages, as root)",
		    prealloc_method_name(rep->method), nw, node, have, want, page >> 10, node,
		    page >> 10);
	return mg_err_set(
	    err, EFAULT,
	    "prealloc (%s, %u threads): the hugetlb pool ran out: %zu of %zu pages of "
	    "%zu KiB populated (%zu of %zu MiB); reserve at least %zu free pages "
	    "(echo N > /sys/kernel/mm/hugepages/hugepages-%zukB/nr_hugepages, as root, "
	    "or memgate run --reserve-hugepages)",
	    prealloc_method_name(rep->method), nw, have, want, page >> 10, (have * page) >> 20,
	    (want * page) >> 20, want, page >> 10);
}

/*
 * Can this host bind as the plan asks (threads to a node's CPUs, memory to the node)? hwloc
 * says what the OS supports; -ENOSYS when it cannot, which callers report as a SKIP.
 */
static int check_bind_support(const struct prealloc_region *regions, size_t n,
			      const struct prealloc_opts *o, struct mg_err *err)
{
	const struct hwloc_topology_support *sup;
	bool wanted = false;

	for (size_t i = 0; i < n; i++)
		wanted |= regions[i].node >= 0;
	if (!wanted || !o->bind || !o->topo)
		return 0;
	sup = hwloc_topology_get_support(o->topo);
	if (!sup->cpubind->set_thread_cpubind)
		return mg_err_set(err, ENOSYS,
				  "prealloc: this host cannot bind a thread to CPUs "
				  "(hwloc: no set_thread_cpubind)");
	if (!sup->membind->set_area_membind || !sup->membind->bind_membind)
		return mg_err_set(err, ENOSYS,
				  "prealloc: this host cannot bind memory to a NUMA "
				  "node (hwloc: no set_area_membind)");
	return 0;
}

/* Each region's pages to its node, before any is faulted. Returns 0 or -errno with @err. */
static int bind_memory(const struct prealloc_region *regions, size_t n,
		       const struct prealloc_opts *o, struct mg_err *err)
{
	int ret = check_bind_support(regions, n, o, err);

	for (size_t i = 0; !ret && o->bind && o->topo && i < n; i++) {
		hwloc_obj_t node = regions[i].node < 0
				       ? NULL
				       : hwloc_get_obj_by_type(o->topo, HWLOC_OBJ_NUMANODE,
							       (unsigned int)regions[i].node);

		if (regions[i].node >= 0 && !node)
			return mg_err_set(err, EINVAL,
					  "prealloc: region %zu names NUMA node %d, "
					  "which the topology does not have",
					  i, regions[i].node);
		/* STRICT: MPOL_BIND, as QEMU's policy=bind. Without it hwloc 2.9 asks for
		 * MPOL_PREFERRED_MANY where the kernel has it (5.15+), and a node short of pages
		 * quietly hands the region another node's. */
		if (node && hwloc_set_area_membind(o->topo, regions[i].addr, regions[i].size,
						   node->nodeset, HWLOC_MEMBIND_BIND,
						   HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT))
			return mg_err_set(err, errno, "prealloc: binding region %zu to node %d: %s",
					  i, regions[i].node, strerror(errno));
	}
	return ret;
}

/* A worker that could not bind ran where it liked: the plan was not carried out. */
static int bind_failure(const struct worker *w, unsigned int n, struct mg_err *err)
{
	for (unsigned int i = 0; i < n; i++)
		if (w[i].bind_err)
			return mg_err_set(err, w[i].bind_err,
					  "prealloc: binding worker %u to node "
					  "%d's CPUs: %s",
					  i, w[i].share.node, strerror(w[i].bind_err));
	return 0;
}

int prealloc_many(const struct prealloc_region *regions, size_t n, const struct prealloc_opts *o,
		  struct prealloc_report *rep, struct mg_err *err)
{
	struct prealloc_share shares[PREALLOC_MAX_THREADS];
	struct pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO};
	struct worker *w;
	int k, ret;

	memset(rep, 0, sizeof(*rep));
	k = prealloc_plan(regions, n, o, shares, PREALLOC_MAX_THREADS);
	if (k <= 0)
		return mg_err_set(err, EINVAL,
				  "prealloc: no valid plan (sizes must be whole pages)");
	rep->method = probe_method(&regions[0], o->method);
	ret = bind_memory(regions, n, o, err);
	if (ret)
		return ret;
	if (rep->method == PREALLOC_MLOCK)
		return run_mlock(regions, n, rep, err);
	w = calloc((size_t)k, sizeof(*w)); /* every allocation before the workers run */
	if (!w)
		return mg_err_set(err, ENOMEM, "prealloc: out of memory");
	for (int i = 0; i < k; i++)
		w[i] = (struct worker){.r = &regions[shares[i].region],
				       .share = shares[i],
				       .method = rep->method,
				       .pool = &pool,
				       .topo = o->bind ? o->topo : NULL};
	pthread_mutex_lock(&prealloc_lock);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old_sigbus)) {
		ret = mg_err_set(err, errno, "prealloc: cannot catch SIGBUS: %s", strerror(errno));
	} else {
		ret = run_pool(w, (unsigned int)k, &pool, err);
		/* The previous handler is back before anyone else can fault. */
		sigaction(SIGBUS, &old_sigbus, NULL);
	}
	pthread_mutex_unlock(&prealloc_lock);
	if (!ret)
		ret = bind_failure(w, (unsigned int)k, err);
	if (!ret) {
		fill_report(w, (unsigned int)k, rep);
		ret = failure(regions, n, w, (unsigned int)k, rep, err);
	}
	free(w);
	return ret;
}

int prealloc_one(const struct prealloc_region *r, const struct prealloc_opts *o,
		 struct prealloc_report *rep, struct mg_err *err)
{
	return prealloc_many(r, 1, o, rep, err);
}
