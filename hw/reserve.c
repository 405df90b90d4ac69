/* reserve.c - hugetlb pool reservation with a restore that survives signals. */
#include "hw/reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw.h"
#include "util/util.h"

#define MAX_POOLS 4

/* What to write back, prepared in full before the pool changes: the signal handler only
 * opens, writes and closes, which are async-signal-safe. */
struct saved_pool {
	char path[96];
	char old[24];
	size_t old_len;
};

static struct saved_pool saved[MAX_POOLS];
static volatile sig_atomic_t n_saved;
static pid_t owner;
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static struct sigaction old_actions[ARRAY_SIZE(fatal_signals)];

static void write_back(const struct saved_pool *p)
{
	int fd = open(p->path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t w = write(fd, p->old, p->old_len);

		(void)w;
		close(fd);
	}
}

void reserve_restore(void)
{
	if (getpid() != owner)
		return;
	/* Newest first, so that each pool ends where it started. */
	while (n_saved > 0)
		write_back(&saved[--n_saved]);
}

static void on_fatal(int sig)
{
	reserve_restore();
	/* Then the signal does what it would have done: usually end the process. */
	for (size_t i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &old_actions[i], NULL);
	raise(sig);
}

static void arm_restore(void)
{
	static int armed;
	struct sigaction sa = {.sa_handler = on_fatal};

	if (armed && owner == getpid())
		return;
	/* A forked child starts its own list: what it inherited is its parent's to restore. */
	n_saved = 0;
	owner = getpid();
	if (armed)
		return; /* the handlers and the atexit came along with the fork */
	armed = 1;
	atexit(reserve_restore);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		sigaction(fatal_signals[i], &sa, &old_actions[i]);
}

static int write_count(const char *path, uint64_t v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	int len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

int reserve_hugepages(uint64_t page_bytes, uint64_t free_wanted, uint64_t *got, struct mg_err *err)
{
	struct hw_page_pool pool;
	struct saved_pool *s;
	int ret = hw_hugepage_pool(page_bytes, -1, &pool);

	if (ret)
		return mg_err_set(err, -ret, "no hugetlb pool of %llu KiB pages on this kernel",
				  (unsigned long long)(page_bytes >> 10));
	*got = pool.free;
	if (pool.free >= free_wanted)
		return 0;
	if (geteuid() != 0)
		return mg_err_set(err, EPERM, "reserving %llu hugetlb pages of %llu KiB needs root",
				  (unsigned long long)free_wanted,
				  (unsigned long long)(page_bytes >> 10));
	if (n_saved == MAX_POOLS)
		return mg_err_set(err, ENOSPC, "too many pool changes in one run");
	arm_restore();
	s = &saved[n_saved];
	snprintf(s->path, sizeof(s->path), "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
		 (unsigned long long)(page_bytes >> 10));
	s->old_len =
	    (size_t)snprintf(s->old, sizeof(s->old), "%llu\n", (unsigned long long)pool.total);
	n_saved++; /* saved before the change: a signal from here on restores it */
	ret = write_count(s->path, pool.total + (free_wanted - pool.free));
	if (!ret)
		ret = hw_hugepage_pool(page_bytes, -1, &pool);
	*got = ret ? 0 : pool.free;
	if (ret || pool.free < free_wanted) {
		write_back(&saved[--n_saved]); /* this pool only */
		return mg_err_set(err, ret ? -ret : ENOMEM,
				  "the kernel found %llu of %llu free "
				  "hugetlb pages of %llu KiB (memory too fragmented?)",
				  (unsigned long long)*got, (unsigned long long)free_wanted,
				  (unsigned long long)(page_bytes >> 10));
	}
	return 0;
}
