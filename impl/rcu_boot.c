/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rcu_boot.c - the N-disk boot model: devices, BARs a real guest programs, memory transactions. */
#include "impl/rcu_boot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "impl/dispatch.h"
#include "impl/kvm_guest.h"
#include "hw/measure.h"
#include "util/stats.h"
#include "util/util.h"

/*
 * Sizes, and what in QEMU they stand for:
 * - RAM_RANGES: below-4G RAM, above-4G RAM, the BIOS and option ROMs.
 * - A disk (virtio-scsi) keeps 3 virtqueues of 256 entries (descriptor table, avail and used
 *   rings: about 6 KiB each), a pool of 64 request structs of 256 bytes, a 1 KiB config
 *   space and its name; realising it also allocates and frees 32 temporary 512-byte buffers
 *   (QOM properties, option parsing), which leaves holes between the long-lived chunks.
 * - Two BARs a disk: 4 KiB of registers and 16 KiB of virtio capabilities.
 * - A commit builds a new flat map of the system address space (a range array and a small
 *   ops struct per range) and, for every realised disk, the dispatch of that disk's
 *   bus-master address space, which sees the whole system map: QEMU rebuilds every address
 *   space on every transaction, O(disks) dispatches of O(disks) sections, which is why BAR
 *   setup "becomes very expensive as you add more devices" (the 2017 malloc_trim thread). The
 * dispatch is QEMU's shape (impl/dispatch.h): a 2 KiB-node radix tree in an array of 16 or more
 *   nodes, so each one allocates tens of KiB and writes whole pages. Old maps and
 *   dispatches are freed with call_rcu.
 * - 17 config-space accesses a disk (firmware 7, kernel 10: see firmware_accesses), each a
 *   real KVM exit of impl/kvm_guest.c's guest, so the big lock is free while the vCPU is in
 *   the guest, as it is in QEMU between two exits.
 */
#define RAM_RANGES 4
#define QUEUES 3
#define VRING_BYTES (6 * 1024)
#define REQUESTS 64
#define REQUEST_BYTES 256
#define CONFIG_BYTES 1024
#define TEMP_BUFFERS 32
#define TEMP_BYTES 512
#define BARS 2
#define OPS_BYTES 64
/* Where firmware puts the BARs: 64 KiB a disk from 3 GiB up, as the PCI hole starts. */
#define BAR_WINDOW 0xc0000000ULL
#define BAR_STRIDE 0x10000ULL
#define MAP_MAGIC 0x4d4150u
#define POISON 0x6b

struct flat_map {
	struct rcu_head head; /* first: the callback gets the map back */
	unsigned int magic;
	unsigned int n;
	struct dispatch_range *ranges; /* owner: a small per-range allocation (ops) */
};

struct disk {
	void *queues[QUEUES];
	void *requests[REQUESTS];
	void *config;
	char *name;
	uint64_t bar_addr[BARS];
	bool decoding;
};

struct machine {
	pthread_mutex_t big_lock;
	struct disk *disks;
	unsigned int n_disks, realised;
	struct flat_map *system_map; /* RCU-protected */
	struct dispatch **dispatch;  /* per disk, RCU-protected */
	unsigned int node_hint;	     /* QEMU's alloc_hint: the largest node array so far */
	uint64_t commits;
	int64_t lock_wait_ns;
	struct kvm_guest *guest; /* the vCPU the main thread runs; NULL: no exits */
	uint64_t accesses;
	int boot_done;
	uint64_t seed, lookups, bad;
};

static const uint64_t bar_size[BARS] = {4096, 16384};

static void free_map(struct rcu_head *h)
{
	struct flat_map *m = (struct flat_map *)h;

	for (unsigned int i = 0; i < m->n; i++)
		free(m->ranges[i].owner);
	/* Poison first: a reader still holding the map would see it. */
	memset(m->ranges, POISON, m->n * sizeof(*m->ranges));
	free(m->ranges);
	memset(m, POISON, sizeof(*m));
	free(m);
}

static void free_dispatch(struct rcu_head *h)
{
	dispatch_free((struct dispatch *)h);
}

/* The ranges the system address space has now: RAM, then every decoding disk's BARs. */
static struct flat_map *build_map(const struct machine *m)
{
	struct flat_map *map = calloc(1, sizeof(*map));
	unsigned int cap = RAM_RANGES + BARS * m->realised;

	if (!map || !(map->ranges = calloc(cap ? cap : 1, sizeof(*map->ranges)))) {
		free(map);
		return NULL;
	}
	/* map->n counts the ranges with an owner, so that free_map() frees just those. */
	for (unsigned int i = 0; i < RAM_RANGES; i++) {
		map->ranges[map->n] =
		    (struct dispatch_range){(uint64_t)i << 32, 1ULL << 30, malloc(OPS_BYTES)};
		if (!map->ranges[map->n++].owner)
			goto oom;
	}
	for (unsigned int d = 0; d < m->realised; d++) {
		for (unsigned int b = 0; m->disks[d].decoding && b < BARS; b++) {
			map->ranges[map->n] = (struct dispatch_range){
			    m->disks[d].bar_addr[b], bar_size[b], malloc(OPS_BYTES)};
			if (!map->ranges[map->n++].owner)
				goto oom;
		}
	}
	map->magic = MAP_MAGIC;
	return map;
oom:
	map->n--;
	free_map(&map->head);
	return NULL;
}

/* A memory transaction: new maps for every address space, the old ones to call_rcu. */
static int commit(struct machine *m)
{
	struct flat_map *map = build_map(m), *old;

	if (!map)
		return -ENOMEM;
	old = m->system_map;
	rcu_assign_pointer(m->system_map, map);
	if (old)
		call_rcu(&old->head, free_map);
	for (unsigned int d = 0; d < m->realised; d++) {
		struct dispatch *t = dispatch_build(map->ranges, map->n, &m->node_hint), *prev;

		if (!t)
			return -ENOMEM;
		prev = m->dispatch[d];
		rcu_assign_pointer(m->dispatch[d], t);
		if (prev)
			call_rcu(&prev->head, free_dispatch);
	}
	m->commits++;
	return 0;
}

static int realise(struct disk *d, unsigned int index)
{
	void *temp[TEMP_BUFFERS];
	char name[32];
	int ret = 0;

	/* Short-lived buffers of a realize, freed before it returns: free chunks in the heap. */
	for (int i = 0; i < TEMP_BUFFERS; i++)
		temp[i] = malloc(TEMP_BYTES);
	for (int q = 0; q < QUEUES; q++)
		if (!(d->queues[q] = calloc(1, VRING_BYTES)))
			ret = -ENOMEM;
	for (int r = 0; r < REQUESTS; r++)
		if (!(d->requests[r] = calloc(1, REQUEST_BYTES)))
			ret = -ENOMEM;
	d->config = calloc(1, CONFIG_BYTES);
	snprintf(name, sizeof(name), "scsi-disk%u", index);
	d->name = strdup(name);
	for (int i = 0; i < TEMP_BUFFERS; i++)
		free(temp[i]);
	return d->config && d->name ? ret : -ENOMEM;
}

static void unrealise(struct disk *d)
{
	for (int q = 0; q < QUEUES; q++)
		free(d->queues[q]);
	for (int r = 0; r < REQUESTS; r++)
		free(d->requests[r]);
	free(d->config);
	free(d->name);
}

/* What a config-space access does to the model (the ones that commit change decoding). */
enum access {
	SIZE_PROBE,  /* all-ones written or read back: decoding is off, nothing maps */
	BAR0_ASSIGN, /* the firmware writes a BAR's address */
	BAR1_ASSIGN,
	DECODE_ON, /* the command register's memory bit: a memory transaction */
	DECODE_OFF,
};

/*
 * One config-space access: the guest's port write exits KVM_RUN (the vCPU was in the guest
 * until then, outside the big lock), and the exit is handled under the big lock, as QEMU's
 * vCPU threads handle theirs.
 */
static int config_access(struct machine *m, struct disk *d, enum access a, struct mg_err *err)
{
	int64_t t0;
	int ret = 0;

	if (m->guest && (ret = kvm_guest_exit(m->guest, err)))
		return ret;
	t0 = util_now_ns();
	pthread_mutex_lock(&m->big_lock);
	m->lock_wait_ns += util_now_ns() - t0;
	m->accesses++;
	if (a == BAR0_ASSIGN || a == BAR1_ASSIGN) {
		int b = a == BAR0_ASSIGN ? 0 : 1;

		d->bar_addr[b] = BAR_WINDOW + (uint64_t)(d - m->disks) * BAR_STRIDE +
				 (uint64_t)b * (BAR_STRIDE / 2);
	}
	if ((a == DECODE_ON || a == DECODE_OFF) && d->decoding != (a == DECODE_ON)) {
		d->decoding = a == DECODE_ON;
		ret = commit(m);
		if (ret)
			mg_err_set(err, -ret, "commit: %s", strerror(-ret));
	}
	pthread_mutex_unlock(&m->big_lock);
	return ret;
}

/*
 * Translate @addr as a disk's DMA would, through its bus-master dispatch: the section found
 * must be the range that holds @addr. False if not, or if the dispatch was freed under us.
 */
static bool translate(const struct dispatch *d, uint64_t addr)
{
	int s = dispatch_find(d, addr);
	const struct dispatch_section *sec;

	if (s < 0)
		return false;
	if (s == DISPATCH_UNASSIGNED)
		return true;
	sec = &d->sections[s];
	return addr - sec->offset_in_space < sec->size[0];
}

/*
 * The reading vCPU: for as long as the boot runs, checks the system map is live and translates
 * addresses through a random disk's dispatch, half of them in the BAR window.
 */
static void *reader_main(void *arg)
{
	struct machine *m = arg;
	struct stats_rng rng;

	stats_rng_seed(&rng, m->seed);
	rcu_register_thread();
	while (!__atomic_load_n(&m->boot_done, __ATOMIC_ACQUIRE)) {
		unsigned int disk = (unsigned int)stats_rng_below(&rng, m->n_disks);
		uint64_t addr = stats_rng_next(&rng) & 1
				    ? stats_rng_below(&rng, (uint64_t)RAM_RANGES << 32)
				    : BAR_WINDOW + stats_rng_below(&rng, BAR_STRIDE * m->n_disks);
		struct flat_map *map;
		struct dispatch *d;

		rcu_read_lock();
		map = rcu_dereference(m->system_map);
		if (map && map->magic != MAP_MAGIC)
			m->bad++;
		d = rcu_dereference(m->dispatch[disk]);
		if (d && !translate(d, addr))
			m->bad++;
		rcu_read_unlock();
		m->lookups++;
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * The accesses per disk, as SeaBIOS and Linux make them: the firmware sizes each BAR
 * (all-ones, read back), assigns it and enables decoding; the kernel turns decoding off,
 * sizes each BAR again (read, all-ones, read back, restore) and turns it back on.
 */
static const enum access firmware_accesses[] = {
    SIZE_PROBE, SIZE_PROBE, BAR0_ASSIGN, SIZE_PROBE, SIZE_PROBE, BAR1_ASSIGN, DECODE_ON,
};
static const enum access kernel_accesses[] = {
    DECODE_OFF, SIZE_PROBE, SIZE_PROBE, SIZE_PROBE, SIZE_PROBE,
    SIZE_PROBE, SIZE_PROBE, SIZE_PROBE, SIZE_PROBE, DECODE_ON,
};

static int run_accesses(struct machine *m, const enum access *seq, size_t n, struct mg_err *err)
{
	int ret = 0;

	for (unsigned int d = 0; !ret && d < m->n_disks; d++)
		for (size_t i = 0; !ret && i < n; i++)
			ret = config_access(m, &m->disks[d], seq[i], err);
	return ret;
}

static int boot(struct machine *m, struct mg_err *err)
{
	int ret = 0;

	/* Machine init: each disk realised, its regions and address space appear. */
	for (unsigned int d = 0; !ret && d < m->n_disks; d++) {
		pthread_mutex_lock(&m->big_lock);
		ret = realise(&m->disks[d], d);
		m->realised = d + 1;
		if (!ret)
			ret = commit(m);
		pthread_mutex_unlock(&m->big_lock);
	}
	if (ret)
		return mg_err_set(err, -ret, "realising the disks: %s", strerror(-ret));
	ret = run_accesses(m, firmware_accesses, ARRAY_SIZE(firmware_accesses), err);
	if (!ret)
		ret = run_accesses(m, kernel_accesses, ARRAY_SIZE(kernel_accesses), err);
	return ret;
}

/*
 * The heap's RSS as anonymous memory (smaps_rollup): when a mapping sits right above the brk
 * area, glibc grows the main arena with mmap instead, and the [heap] line misses it (here a
 * forked case child had a 196 KiB [heap] and 14 MiB of arena).
 */
static void read_rss(uint64_t *rss, uint64_t *heap)
{
	struct measure_rss r;

	measure_rss(&r);
	*rss = r.rss_kib;
	*heap = r.anon_kib;
}

static void teardown(struct machine *m)
{
	if (m->system_map)
		free_map(&m->system_map->head);
	for (unsigned int d = 0; m->dispatch && d < m->n_disks; d++)
		if (m->dispatch[d])
			free_dispatch(&m->dispatch[d]->head);
	for (unsigned int d = 0; m->disks && d < m->realised; d++)
		unrealise(&m->disks[d]);
	free(m->dispatch);
	free(m->disks);
	if (m->guest)
		kvm_guest_close(m->guest);
}

int rcu_boot_run(const struct rcu_boot_params *p, struct rcu_boot_result *r, struct mg_err *err)
{
	struct machine m = {.big_lock = PTHREAD_MUTEX_INITIALIZER,
			    .n_disks = p->disks,
			    .seed = p->seed,
			    .node_hint = DISPATCH_NODE_HINT};
	struct kvm_guest guest;
	struct rusage ru0, ru1;
	pthread_t reader;
	int64_t t0;
	int ret;

	memset(r, 0, sizeof(*r));
	if (p->guest && p->modelled_exit_ns) {
		kvm_guest_open_modelled(&guest, p->modelled_exit_ns);
		m.guest = &guest;
	} else if (p->guest) {
		ret = kvm_guest_open(&guest, err);
		if (ret)
			return ret;
		m.guest = &guest;
	}
	m.disks = calloc(p->disks ? p->disks : 1, sizeof(*m.disks));
	m.dispatch = calloc(p->disks ? p->disks : 1, sizeof(struct dispatch *));
	if (!m.disks || !m.dispatch) {
		teardown(&m);
		return mg_err_set(err, ENOMEM, "boot: out of memory");
	}
	ret = rcu_start(p->trim, &m.big_lock);
	if (ret) {
		teardown(&m);
		return mg_err_set(err, -ret, "boot: cannot start the call_rcu thread: %s",
				  strerror(-ret));
	}
	ret = pthread_create(&reader, NULL, reader_main, &m);
	if (ret) {
		rcu_stop();
		teardown(&m);
		return mg_err_set(err, ret, "boot: cannot start the vCPU reader thread: %s",
				  strerror(ret));
	}
	getrusage(RUSAGE_SELF, &ru0);
	t0 = util_now_ns();
	ret = boot(&m, err);
	r->boot_ms = (double)(util_now_ns() - t0) / 1e6;
	getrusage(RUSAGE_SELF, &ru1);
	r->minor_faults = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
	read_rss(&r->rss_boot_kib, &r->heap_boot_kib);
	__atomic_store_n(&m.boot_done, 1, __ATOMIC_RELEASE);
	pthread_join(reader, NULL);
	/* Idle: everything queued runs, then the thread sleeps (and, idle policy, trims) and
	 * waits for work. */
	drain_call_rcu();
	if (!ret && !rcu_wait_idle(RCU_BOOT_IDLE_TIMEOUT_MS))
		ret = mg_err_set(err, ETIMEDOUT,
				 "boot: the call_rcu thread did not go idle within %u ms of the "
				 "boot",
				 RCU_BOOT_IDLE_TIMEOUT_MS);
	read_rss(&r->rss_idle_kib, &r->heap_idle_kib);
	rcu_get_stats(&r->rcu);
	rcu_stop();
	r->commits = m.commits;
	r->accesses = m.accesses;
	r->guest_exits = m.guest ? m.guest->exits : 0;
	if (r->guest_exits)
		r->guest_exit_ns = (double)m.guest->exit_ns_total / (double)r->guest_exits;
	r->main_lock_wait_ms = (double)m.lock_wait_ns / 1e6;
	r->reader_lookups = m.lookups;
	r->reader_bad = m.bad;
	teardown(&m);
	return ret;
}
