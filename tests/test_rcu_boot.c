/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_rcu_boot.c - the boot model's parts: the dispatch tree, the KVM guest, rcu_boot_run per
 * policy. */
#include "tests/testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "impl/rcu_boot.h"
#include "impl/dispatch.h"
#include "impl/kvm_guest.h"
#include "util/stats.h"
#include "util/util.h"

#define PAGE 4096ULL

/* The section that holds @addr by looking at every range, as the tree must agree. */
static int brute_find(const struct dispatch_range *r, unsigned int n, uint64_t addr)
{
	for (unsigned int i = 0; i < n; i++)
		if (addr >= r[i].start && addr - r[i].start < r[i].size)
			return DISPATCH_DUMMY_SECTIONS + (int)i;
	return DISPATCH_UNASSIGNED;
}

/*
 * Ranges of every shape the tree meets: aligned gigabytes (one leaf high up), a run that
 * starts mid-node and crosses node boundaries at two levels, single pages side by side,
 * and one ending at the top of the 52-bit space.
 */
static const struct dispatch_range shapes[] = {
    {0, 1ULL << 30, NULL},
    {1ULL << 32, 1ULL << 30, NULL},
    {0xc0000000ULL, PAGE, NULL},
    {0xc0001000ULL, PAGE, NULL},
    {0xc0008000ULL, 4 * PAGE, NULL},
    {(3ULL << 32) - (1ULL << 20), (1ULL << 20) + (1ULL << 30) + 3 * PAGE, NULL},
    {(1ULL << 52) - 16 * PAGE, 16 * PAGE, NULL},
};
#define N_SHAPES (ARRAY_SIZE(shapes))

static void test_dispatch_finds_every_range(void **state)
{
	unsigned int hint = DISPATCH_NODE_HINT;
	struct dispatch *d = dispatch_build(shapes, N_SHAPES, &hint);
	struct stats_rng rng;

	(void)state;
	assert_non_null(d);
	for (unsigned int i = 0; i < N_SHAPES; i++) {
		const struct dispatch_range *r = &shapes[i];
		int want = DISPATCH_DUMMY_SECTIONS + (int)i;

		assert_int_equal(dispatch_find(d, r->start), want);
		assert_int_equal(dispatch_find(d, r->start + r->size / 2), want);
		assert_int_equal(dispatch_find(d, r->start + r->size - 1), want);
		if (r->start)
			assert_int_equal(dispatch_find(d, r->start - 1),
					 brute_find(shapes, N_SHAPES, r->start - 1));
		assert_int_equal(dispatch_find(d, r->start + r->size),
				 brute_find(shapes, N_SHAPES, r->start + r->size));
	}
	/* Random addresses, mostly near the ranges: the tree and the list agree. */
	stats_rng_seed(&rng, 7);
	for (int k = 0; k < 100000; k++) {
		const struct dispatch_range *r = &shapes[stats_rng_below(&rng, N_SHAPES)];
		uint64_t addr = r->start - 64 * PAGE + stats_rng_below(&rng, r->size + 128 * PAGE);

		addr &= (1ULL << 52) - 1;
		assert_int_equal(dispatch_find(d, addr), brute_find(shapes, N_SHAPES, addr));
	}
	dispatch_free(d);
}

/* QEMU's sizes: a node per level for one page, the hint only grows, sections double. */
static void test_dispatch_shapes(void **state)
{
	struct dispatch_range page = {0xc0000000ULL, PAGE, NULL};
	struct dispatch_range many[40];
	unsigned int hint = DISPATCH_NODE_HINT;
	struct dispatch *d;

	(void)state;
	d = dispatch_build(&page, 1, &hint);
	assert_non_null(d);
	assert_int_equal(d->nodes_used, DISPATCH_LEVELS);
	assert_int_equal(d->nodes_alloc, DISPATCH_NODE_HINT); /* 15 reserved fit in 16 */
	assert_int_equal(d->sections_used, DISPATCH_DUMMY_SECTIONS + 1);
	assert_int_equal(d->sections_alloc, 16);
	dispatch_free(d);

	/* 40 BARs 64 KiB apart: 2.5 MiB, two leaf nodes; sections 44 of 64. */
	for (unsigned int i = 0; i < 40; i++)
		many[i] = (struct dispatch_range){0xc0000000ULL + i * 0x10000ULL, PAGE, NULL};
	d = dispatch_build(many, 40, &hint);
	assert_non_null(d);
	assert_int_equal(d->nodes_used, DISPATCH_LEVELS + 1);
	assert_int_equal(d->sections_used, DISPATCH_DUMMY_SECTIONS + 40);
	assert_int_equal(d->sections_alloc, 64);
	/* 6 used + 15 reserved: 21, and the hint grows with it. */
	assert_int_equal(d->nodes_alloc, DISPATCH_LEVELS + 1 + 3 * DISPATCH_LEVELS);
	assert_int_equal(hint, d->nodes_alloc);
	dispatch_free(d);
}

static bool have_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* Every kvm_guest_exit() is one KVM_EXIT_IO of the guest's port write. */
static void test_guest_exits(void **state)
{
	struct kvm_guest g;
	struct mg_err err;

	(void)state;
	if (!have_kvm())
		skip_because("/dev/kvm: %s", strerror(errno));
	assert_int_equal(kvm_guest_open(&g, &err), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(kvm_guest_exit(&g, &err), 0);
	assert_int_equal(g.exits, 100);
	kvm_guest_close(&g);
}

/* Without /dev/kvm kvm_guest_open() says so, and leaves nothing open. */
/* Without /dev/kvm: kvm_guest_open fails saying which file; 0 when it did. */
static int open_without_kvm(void *arg)
{
	struct kvm_guest g;
	struct mg_err err;

	(void)arg;
	if (kvm_guest_open(&g, &err) >= 0)
		return 1;
	if (!strstr(err.msg, "/dev/kvm"))
		return 2;
	return g.kvm == -1 ? 0 : 3;
}

static void test_guest_missing_kvm(void **state)
{
	char why[128];
	int r;

	(void)state;
	/* Where KVM is usable, a namespace of this test's own hides it. */
	r = have_kvm() ? test_without_dev(open_without_kvm, NULL, why, sizeof(why))
		       : open_without_kvm(NULL);
	if (r < 0)
		skip_because("/dev/kvm is usable here and %s", why);
	assert_int_equal(r, 0);
}

/* A small boot per policy: the model's counts, a reader that never saw a freed map, and
 * each policy's trims. */
static void boot_policy(enum rcu_trim trim, bool guest, uint64_t modelled_exit_ns)
{
	struct rcu_boot_params p = {.disks = 6,
				    .trim = trim,
				    .seed = 3,
				    .guest = guest,
				    .modelled_exit_ns = modelled_exit_ns};
	struct rcu_boot_result r;
	struct mg_err err;

	assert_int_equal(rcu_boot_run(&p, &r, &err), 0);
	assert_int_equal(r.commits, RCU_BOOT_COMMITS_PER_DISK * p.disks);
	assert_int_equal(r.accesses, RCU_BOOT_ACCESSES_PER_DISK * p.disks);
	assert_int_equal(r.guest_exits, guest ? r.accesses : 0);
	/* A modelled exit takes at least its time; a real one was timed (it took some). */
	if (guest)
		assert_true(r.guest_exit_ns >= (double)modelled_exit_ns && r.guest_exit_ns > 0);
	assert_int_equal(r.reader_bad, 0);
	assert_true(r.rcu.batches >= 1);
	assert_true(r.heap_boot_kib > 0 && r.rss_idle_kib >= r.heap_idle_kib);
	switch (trim) {
	case RCU_TRIM_NONE:
		assert_int_equal(r.rcu.trims, 0);
		break;
	case RCU_TRIM_EVERY_BATCH:
		assert_int_equal(r.rcu.trims, r.rcu.batches);
		break;
	case RCU_TRIM_IDLE:
		/* Read once the thread found the queue empty and waits: it has trimmed. */
		assert_true(r.rcu.trims >= 1);
		assert_int_equal(r.rcu.trims_not_idle, 0);
		break;
	}
}

static void test_boot_policies(void **state)
{
	(void)state;
	for (int t = RCU_TRIM_NONE; t <= RCU_TRIM_IDLE; t++)
		boot_policy((enum rcu_trim)t, false, 0);
}

static void test_boot_in_guest(void **state)
{
	(void)state;
	if (!have_kvm())
		skip_because("/dev/kvm: %s", strerror(errno));
	boot_policy(RCU_TRIM_IDLE, true, 0);
}

/* Without KVM: every access is a modelled exit, counted and timed as a real one is. */
static void test_boot_modelled_guest(void **state)
{
	(void)state;
	for (int t = RCU_TRIM_NONE; t <= RCU_TRIM_IDLE; t++)
		boot_policy((enum rcu_trim)t, true, GUEST_MODEL_EXIT_NS);
}

/* A modelled guest opens anywhere and closes without touching a descriptor. */
static void test_guest_modelled(void **state)
{
	struct kvm_guest g;
	struct mg_err err;

	(void)state;
	kvm_guest_open_modelled(&g, 1000);
	for (int i = 0; i < 10; i++)
		assert_int_equal(kvm_guest_exit(&g, &err), 0);
	assert_int_equal(g.exits, 10);
	assert_true(g.exit_ns_total >= 10 * 1000);
	kvm_guest_close(&g);
	assert_int_equal(g.kvm, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dispatch_finds_every_range),
	    cmocka_unit_test(test_dispatch_shapes),
	    cmocka_unit_test(test_guest_exits),
	    cmocka_unit_test(test_guest_missing_kvm),
	    cmocka_unit_test(test_boot_policies),
	    cmocka_unit_test(test_boot_in_guest),
	    cmocka_unit_test(test_boot_modelled_guest),
	    cmocka_unit_test(test_guest_modelled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
