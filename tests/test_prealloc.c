/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_prealloc.c - the thread plan, residency, running out, and the pool put back. */
#include "tests/testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/hw.h"
#include "hw/reserve.h"
#include "impl/prealloc.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

static void test_thread_rule(void **state)
{
	(void)state;
	/* min(requested, PUs, cap, pages, size / 64 MiB), at least 1. */
	assert_int_equal(prealloc_threads(4096 * GIB, 2 * MIB, 64, 64, 16), 16);
	assert_int_equal(prealloc_threads(4096 * GIB, 2 * MIB, 64, 64, 32), 32);
	assert_int_equal(prealloc_threads(4 * GIB, 4096, 8, 2, 32), 2);
	assert_int_equal(prealloc_threads(128 * MIB, 4096, 16, 16, 32), 2);
	assert_int_equal(prealloc_threads(2 * MIB, 2 * MIB, 16, 16, 32), 1);
	assert_int_equal(prealloc_threads(4 * GIB, GIB, 16, 16, 32), 4);
}

/* Two regions of 3 and 1 GiB share 8 threads 6 to 2, each split into whole pages. */
static void test_plan_many(void **state)
{
	struct prealloc_region r[2] = {{NULL, 3 * GIB, 2 * MIB, 0}, {NULL, GIB, 2 * MIB, 1}};
	struct prealloc_opts o = {.requested = 8, .cap = 32, .host_pus = 8};
	struct prealloc_share s[16];
	int n = prealloc_plan(r, 2, &o, s, 16), per[2] = {0};
	size_t pages[2] = {0};

	(void)state;
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++) {
		per[s[i].region]++;
		pages[s[i].region] += s[i].n_pages;
		assert_int_equal(s[i].node, (int)s[i].region);
	}
	assert_int_equal(per[0], 6);
	assert_int_equal(per[1], 2);
	assert_int_equal(pages[0], 1536);
	assert_int_equal(pages[1], 512);
	/* A size that is not whole pages is refused. */
	r[0].size += 4096;
	assert_int_equal(prealloc_plan(r, 2, &o, s, 16), -EINVAL);
}

/* Method @m (0: touch, 1: populate) with two threads on a two-PU host. */
static struct prealloc_opts two_threads(int m)
{
	return (struct prealloc_opts){.method = m ? PREALLOC_POPULATE : PREALLOC_TOUCH,
				      .requested = 2,
				      .cap = 32,
				      .host_pus = 2};
}

static void test_resident_both_methods(void **state)
{
	(void)state;
	for (int m = 0; m < 2; m++) {
		size_t size = 128 * MIB;
		char *p =
		    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct prealloc_region r = {p, size, 4096, -1};
		struct prealloc_opts o = two_threads(m);
		struct prealloc_report rep;
		struct mg_err err;

		assert_true(p != MAP_FAILED);
		p[4096 * 5] = 42; /* contents written before must survive */
		assert_int_equal(prealloc_one(&r, &o, &rep, &err), 0);
		assert_int_equal(prealloc_resident_pages(&r), size / 4096);
		assert_int_equal(p[4096 * 5], 42);
		assert_int_equal(rep.threads, 2);
		munmap(p, size);
	}
}

static uint64_t pool_total(void)
{
	struct hw_page_pool p;

	return hw_hugepage_pool(2 * MIB, -1, &p) ? UINT64_MAX : p.total;
}

/* Root only, with a 2 MiB pool on this kernel and the host's hugetlb lock held (so nobody
 * resizes the pool meanwhile): the pool's size in *@total; else the test skips, saying why. */
static void lock_pool(uint64_t *total)
{
	struct mg_err err;

	test_root_setup("it sizes the 2 MiB hugetlb pool");
	if (pool_total() == UINT64_MAX)
		skip_because("no 2 MiB hugetlb pool on this kernel");
	if (reserve_lock(0, &err))
		skip_because("%s", err.msg);
	*total = pool_total();
}

static void mine(int sig)
{
	(void)sig;
}

/* Root only: a pool of 16 pages, a region of 24. Both methods fail cleanly. */
static void test_running_out(void **state)
{
	uint64_t got, before = 0;
	struct mg_err err;

	(void)state;
	lock_pool(&before);
	if (before != 0)
		skip_because("the 2 MiB pool is in use (%llu pages): not touching it",
			     (unsigned long long)before);
	assert_int_equal(reserve_hugepages(2 * MIB, 16, false, &got, &err), 0);
	signal(SIGBUS, mine);
	for (int m = 0; m < 2; m++) {
		size_t size = 24 * 2 * MIB;
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE, -1, 0);
		struct prealloc_region r = {p, size, 2 * MIB, -1};
		struct prealloc_opts o = two_threads(m);
		struct prealloc_report rep;
		struct sigaction now;

		assert_true(p != MAP_FAILED);
		assert_int_equal(prealloc_one(&r, &o, &rep, &err), -EFAULT);
		assert_non_null(strstr(err.msg, "ran out: 16 of 24 pages"));
		sigaction(SIGBUS, NULL, &now);
		assert_true(now.sa_handler == mine);
		munmap(p, size);
	}
	signal(SIGBUS, SIG_DFL);
	reserve_restore();
	assert_int_equal(pool_total(), before);
}

/*
 * A child that does @hold (0: it holds what it took) and stays, until SIGKILLed, holding it.
 * Returns its pid once it holds, or -1 (the child reaped) when @hold failed.
 */
static pid_t held_in_child(int (*hold)(void *), void *arg)
{
	int fds[2], status;
	char ready = 1;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (hold(arg) || write(fds[1], &ready, 1) != 1)
			_exit(3);
		pause(); /* until the SIGKILL */
		_exit(4);
	}
	assert_true(pid > 0);
	close(fds[1]);
	if (read(fds[0], &ready, 1) != 1) {
		waitpid(pid, &status, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

/* Eight pages more than *@before, as a reserver does. */
static int reserve_eight(void *before)
{
	struct mg_err err;
	uint64_t got;

	return reserve_hugepages(2 * MIB, *(uint64_t *)before + 8, false, &got, &err);
}

/* Under the pool's lock (the pool's size then in *@before): a reserver, ended by @sig. */
static void reserver_killed(int sig, uint64_t *before)
{
	int status;
	pid_t pid;

	lock_pool(before);
	pid = held_in_child(reserve_eight, before);
	assert_true(pid > 0);
	kill(pid, sig);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == sig);
}

/* Root only: a process that reserved and is killed by SIGTERM puts the pool back. */
static void test_restore_on_signal(void **state)
{
	uint64_t before = 0;

	(void)state;
	reserver_killed(SIGTERM, &before);
	assert_int_equal(pool_total(), before);
}

/*
 * Root only: SIGKILL cannot be caught, so the pool stays grown; the record the reserver left
 * lets the next memgate take its pages back, and only those.
 */
static void test_recover_after_kill(void **state)
{
	uint64_t before = 0;

	(void)state;
	reserver_killed(SIGKILL, &before);
	assert_true(pool_total() > before);
	/* This process holds the lock: as a new memgate would, it recovers under it. */
	assert_int_equal(reserve_recover(stderr), 1);
	assert_int_equal(pool_total(), before);
}

/* The host's hugetlb lock, taken as another memgate would, without waiting for it. */
static int take_lock(void *unused)
{
	int fd = open(RESERVE_DIR "/hugetlb.lock", O_RDWR | O_CREAT, 0644);

	(void)unused;
	return fd < 0 || flock(fd, LOCK_EX | LOCK_NB);
}

/*
 * Root only, and first: while another process holds the host's hugetlb lock, a reserver
 * that will not wait is refused, naming the holder (tests then SKIP; runs wait, then refuse).
 */
static void test_lock_held_elsewhere(void **state)
{
	struct mg_err err;
	int status, ret;
	pid_t pid;

	(void)state;
	test_root_setup("the lock lives in " RESERVE_DIR);
	if (mkdir(RESERVE_DIR, 0755) && errno != EEXIST)
		skip_because("cannot make " RESERVE_DIR ": %s", strerror(errno));
	pid = held_in_child(take_lock, NULL);
	if (pid < 0)
		skip_because("the hugetlb lock is held by a run on this host");
	ret = reserve_lock(0, &err);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_int_equal(ret, -EBUSY);
	assert_non_null(strstr(err.msg, "holds the hugetlb pools"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lock_held_elsewhere),
	    cmocka_unit_test(test_thread_rule),
	    cmocka_unit_test(test_plan_many),
	    cmocka_unit_test(test_resident_both_methods),
	    cmocka_unit_test(test_running_out),
	    cmocka_unit_test(test_restore_on_signal),
	    cmocka_unit_test(test_recover_after_kill),
	};

	return cmocka_run_group_tests_name("prealloc", tests, NULL, NULL);
}
