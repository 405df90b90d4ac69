/* boot.c - the N-disk boot model: devices, BARs, memory transactions, a vCPU reading. */
#include "impl/boot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "suites/measure.h"
#include "suites/stats.h"

/*
 * Sizes, and what in QEMU they stand for:
 * - RAM_RANGES: below-4G RAM, above-4G RAM, the BIOS and option ROMs.
 * - A disk (virtio-scsi) keeps 3 virtqueues of 256 entries (descriptor table, avail and used
 *   rings: about 6 KiB each), a pool of 64 request structs of 256 bytes, a 1 KiB config
 *   space and its name; realising it also allocates and frees 32 temporary 512-byte buffers
 *   (QOM properties, option parsing), which leaves holes between the long-lived chunks.
 * - Two BARs a disk: 4 KiB of registers and 16 KiB of virtio capabilities.
 * - A commit builds a new flat map of the system address space (a range array and a small
 *   ops struct per range) and, for every realised disk, that disk's bus-master dispatch
 *   table (one entry per range): QEMU rebuilds every address space on every transaction,
 *   O(disks) tables of O(disks) entries, which is why BAR setup "becomes very expensive as
 *   you add more devices" (seed 003). Old maps are freed with call_rcu.
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
#define MAP_MAGIC 0x4d4150u
#define POISON 0x6b

struct range {
	uint64_t start, size;
	void *ops;		/* per-range allocation, as QEMU's MemoryRegionSection owner refs */
};

struct flat_map {
	struct rcu_head head;	/* first: the callback gets the map back */
	unsigned int magic;
	unsigned int n;
	struct range *ranges;
};

struct dispatch {
	struct rcu_head head;
	uint64_t *entries;
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
	struct flat_map *system_map;	/* RCU-protected */
	struct dispatch **dispatch;	/* per disk, RCU-protected */
	uint64_t commits;
	int64_t lock_wait_ns;
	int boot_done;
	uint64_t seed, lookups, bad;
};

static const uint64_t bar_size[BARS] = {4096, 16384};

static void free_map(struct rcu_head *h)
{
	struct flat_map *m = (struct flat_map *)h;

	for (unsigned int i = 0; i < m->n; i++)
		free(m->ranges[i].ops);
	/* Poison first: a reader still holding the map would see it. */
	memset(m->ranges, POISON, m->n * sizeof(*m->ranges));
	free(m->ranges);
	memset(m, POISON, sizeof(*m));
	free(m);
}

static void free_dispatch(struct rcu_head *h)
{
	struct dispatch *d = (struct dispatch *)h;

	free(d->entries);
	free(d);
}

/* The ranges the system address space has now: RAM, then every decoding disk's BARs. */
static struct flat_map *build_map(const struct machine *m)
{
	struct flat_map *map = calloc(1, sizeof(*map));
	unsigned int cap = RAM_RANGES + BARS * m->realised, n = 0;

	if (!map || !(map->ranges = calloc(cap ? cap : 1, sizeof(*map->ranges)))) {
		free(map);
		return NULL;
	}
	for (unsigned int i = 0; i < RAM_RANGES; i++)
		map->ranges[n++] = (struct range){(uint64_t)i << 32, 1ULL << 30, malloc(OPS_BYTES)};
	for (unsigned int d = 0; d < m->realised; d++)
		for (unsigned int b = 0; m->disks[d].decoding && b < BARS; b++)
			map->ranges[n++] = (struct range){m->disks[d].bar_addr[b], bar_size[b],
							  malloc(OPS_BYTES)};
	map->n = n;
	map->magic = MAP_MAGIC;
	return map;
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
		struct dispatch *t = malloc(sizeof(*t)), *prev;

		if (!t || !(t->entries = malloc(map->n * sizeof(*t->entries)))) {
			free(t);
			return -ENOMEM;
		}
		for (unsigned int i = 0; i < map->n; i++)
			t->entries[i] = map->ranges[i].start ^ map->ranges[i].size;
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

	for (int i = 0; i < TEMP_BUFFERS; i++)
		temp[i] = malloc(TEMP_BYTES);
	for (int q = 0; q < QUEUES; q++)
		d->queues[q] = calloc(1, VRING_BYTES);
	for (int r = 0; r < REQUESTS; r++)
		d->requests[r] = calloc(1, REQUEST_BYTES);
	d->config = calloc(1, CONFIG_BYTES);
	snprintf(name, sizeof(name), "scsi-disk%u", index);
	d->name = strdup(name);
	for (int i = 0; i < TEMP_BUFFERS; i++)
		free(temp[i]);
	return d->config && d->name ? 0 : -ENOMEM;
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

/* Each step a guest's exit or a machine-init step: taken and released under the big lock. */
static int step(struct machine *m, struct disk *d, bool decoding, bool assign)
{
	int64_t t0 = measure_now_ns();
	int ret = 0;

	pthread_mutex_lock(&m->big_lock);
	m->lock_wait_ns += measure_now_ns() - t0;
	if (assign)
		for (int b = 0; b < BARS; b++)
			d->bar_addr[b] = 0xc0000000ULL + (uint64_t)(d - m->disks) * 0x10000 +
					 (uint64_t)b * 0x8000;
	/* Sizing writes all-ones with decoding off: nothing maps, nothing commits. */
	if (d->decoding != decoding) {
		d->decoding = decoding;
		ret = commit(m);
	}
	pthread_mutex_unlock(&m->big_lock);
	return ret;
}

/* The vCPU: translates addresses against the current map for as long as the boot runs. */
static void *vcpu_main(void *arg)
{
	struct machine *m = arg;
	struct stats_rng rng;

	stats_rng_seed(&rng, m->seed);
	rcu_register_thread();
	while (!__atomic_load_n(&m->boot_done, __ATOMIC_ACQUIRE)) {
		struct flat_map *map;
		uint64_t addr = stats_rng_below(&rng, 5ULL << 32);

		rcu_read_lock();
		map = rcu_dereference(m->system_map);
		if (map) {
			unsigned int lo = 0, hi = map->n;

			if (map->magic != MAP_MAGIC)
				m->bad++;
			/* RAM first, then BARs in address order: a binary search over both runs. */
			while (lo < hi && map->magic == MAP_MAGIC) {
				unsigned int mid = (lo + hi) / 2;

				if (addr < map->ranges[mid].start)
					hi = mid;
				else if (addr - map->ranges[mid].start >= map->ranges[mid].size)
					lo = mid + 1;
				else
					break;
			}
		}
		rcu_read_unlock();
		m->lookups++;
	}
	rcu_unregister_thread();
	return NULL;
}

/* Firmware sizes, assigns and enables every BAR; then the kernel sizes them again. */
static int program_bars(struct machine *m)
{
	int ret = 0;

	for (unsigned int d = 0; !ret && d < m->n_disks; d++)
		ret = step(m, &m->disks[d], true, true);
	for (unsigned int d = 0; !ret && d < m->n_disks; d++) {
		ret = step(m, &m->disks[d], false, false);
		if (!ret)
			ret = step(m, &m->disks[d], true, false);
	}
	return ret;
}

static int boot(struct machine *m)
{
	int ret = 0;

	for (unsigned int d = 0; !ret && d < m->n_disks; d++) {
		pthread_mutex_lock(&m->big_lock);
		ret = realise(&m->disks[d], d);
		m->realised = d + 1;
		if (!ret)
			ret = commit(m);	/* the disk's regions and address space appear */
		pthread_mutex_unlock(&m->big_lock);
	}
	return ret ? ret : program_bars(m);
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
}

int boot_run(const struct boot_params *p, struct boot_result *r, struct mg_err *err)
{
	struct machine m = {.big_lock = PTHREAD_MUTEX_INITIALIZER, .n_disks = p->disks,
			    .seed = p->seed};
	struct timespec pause = {BOOT_IDLE_PAUSE_MS / 1000, (BOOT_IDLE_PAUSE_MS % 1000) * 1000000L};
	pthread_t vcpu;
	int64_t t0;
	int ret;

	memset(r, 0, sizeof(*r));
	m.disks = calloc(p->disks ? p->disks : 1, sizeof(*m.disks));
	m.dispatch = calloc(p->disks ? p->disks : 1, sizeof(*m.dispatch));
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
	pthread_create(&vcpu, NULL, vcpu_main, &m);
	t0 = measure_now_ns();
	ret = boot(&m);
	r->boot_ms = (double)(measure_now_ns() - t0) / 1e6;
	read_rss(&r->rss_boot_kib, &r->heap_boot_kib);
	__atomic_store_n(&m.boot_done, 1, __ATOMIC_RELEASE);
	pthread_join(vcpu, NULL);
	/* Idle: everything queued runs, then the thread sleeps (and, idle policy, trims). */
	drain_call_rcu();
	nanosleep(&pause, NULL);
	read_rss(&r->rss_idle_kib, &r->heap_idle_kib);
	rcu_get_stats(&r->rcu);
	rcu_stop();
	r->commits = m.commits;
	r->main_lock_wait_ms = (double)m.lock_wait_ns / 1e6;
	r->reader_lookups = m.lookups;
	r->reader_bad = m.bad;
	teardown(&m);
	if (ret)
		return mg_err_set(err, -ret, "boot of %u disks: %s", p->disks, strerror(-ret));
	return 0;
}
