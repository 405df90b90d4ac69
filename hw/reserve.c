/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reserve.c - hugetlb pool reservation: a host-wide lock, a record of every delta, a restore
 * that survives signals, and recovery of what a killed memgate left behind. */
#include "hw/reserve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hw/hw.h"
#include "util/file.h"
#include "util/proc.h"
#include "util/util.h"

#define MAX_POOLS 4
#define STATE_DIR RESERVE_DIR "/reservations"
/* A killed memgate's children die with it: their exit takes milliseconds, a few seconds for
 * gigabytes of pages. The next memgate waits this long for them before it recovers. */
#define ORPHAN_WAIT_S 30
/* What a record may hold: a few lines, and deltas no pool of a real host reaches (16 TiB of
 * 4 MiB pages); a larger one is not memgate's. */
#define RESERVE_MAX_RECORD_BYTES 4096
#define RESERVE_MAX_PAGES (1ULL << 22)

/*
 * What to take back, prepared in full before the pool changes: the signal handler only
 * opens, reads, writes and closes, which are async-signal-safe.
 */
struct saved_pool {
	char nr_path[128];   /* .../hugepages-NkB/nr_hugepages */
	char free_path[128]; /* .../hugepages-NkB/free_hugepages */
	uint64_t page_kib;
	int node;	    /* a NUMA node's pool (OS index), -1: the system's */
	uint64_t old_total; /* the pool before this process grew it */
	uint64_t delta;	    /* pages it added */
};

static struct saved_pool saved[MAX_POOLS];
static volatile sig_atomic_t n_saved;
static pid_t owner;
static int lock_fd = -1;
static pid_t lock_owner;     /* the process that took the lock (a child inherits it) */
static char state_path[128]; /* this process's record; "" when it has none */

/* A decimal number from a sysfs file, without stdio (async-signal-safe). */
static int read_count(const char *path, uint64_t *v)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	*v = 0;
	for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		*v = *v * 10 + (uint64_t)(buf[i] - '0');
	return 0;
}

/* Write @v in decimal to @path, without stdio (async-signal-safe). Returns 0 or -errno. */
static int write_count(const char *path, uint64_t v)
{
	char buf[24];
	size_t len = sizeof(buf) - 1;
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	buf[len] = '\n';
	do {
		buf[--len] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (write(fd, buf + len, sizeof(buf) - len) != (ssize_t)(sizeof(buf) - len))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Take back what @p added: its delta, but never more than is free now (pages in use are
 * someone's) nor more than the pool grew since (someone may have shrunk it meanwhile).
 */
static void take_back(const struct saved_pool *p)
{
	uint64_t total, free_now, grown, back = p->delta;

	if (read_count(p->nr_path, &total) || read_count(p->free_path, &free_now))
		return;
	grown = total > p->old_total ? total - p->old_total : 0;
	if (back > free_now)
		back = free_now;
	if (back > grown)
		back = grown;
	if (back)
		write_count(p->nr_path, total - back);
}

void reserve_restore(void)
{
	if (getpid() != owner)
		return;
	/* Newest first, so that each pool ends where it started. */
	while (n_saved > 0)
		take_back(&saved[--n_saved]);
	if (state_path[0])
		unlink(state_path);
}

static void arm_restore(void)
{
	static int armed;
	if (armed && owner == getpid())
		return;
	/* A forked child starts its own list: what it inherited is its parent's to restore. */
	n_saved = 0;
	state_path[0] = '\0';
	owner = getpid();
	if (armed)
		return; /* the handlers and the atexit came along with the fork */
	armed = 1;
	atexit(reserve_restore);
	proc_stops_on_fatal(reserve_restore);
}

/*
 * @path as a folder only this user may write, made if missing: its files decide which pool
 * pages memgate gives back as root, so one that is a link, not a folder, someone else's, or
 * writable by others is refused (-EPERM).
 */
static int own_dir(const char *path)
{
	struct stat st;
	int ret = util_make_dir(path, 0755, &st);

	if (ret == -ENOTDIR || (!ret && (st.st_uid != geteuid() || (st.st_mode & 022))))
		return -EPERM;
	return ret;
}

/* This process's record, rewritten whole: a "pool PAGE_KIB NODE BEFORE AFTER" line a pool, the
 * sizes it found and left it at (before the change: the size it asks for). */
static int write_state(void)
{
	struct file_out out;
	struct mg_err err = {0};
	int ret = own_dir(STATE_DIR);

	if (ret)
		return ret;
	snprintf(state_path, sizeof(state_path), "%s/%d", STATE_DIR, (int)getpid());
	/* A new temporary beside it, renamed over it: a planted link is never followed. */
	if ((ret = file_out_create(&out, state_path, &err)))
		return ret;
	for (int i = 0; i < n_saved; i++)
		fprintf(out.f, "pool %llu %d %llu %llu\n", (unsigned long long)saved[i].page_kib,
			saved[i].node, (unsigned long long)saved[i].old_total,
			(unsigned long long)saved[i].old_total + saved[i].delta);
	return file_out_commit(&out, &err);
}

static void pool_paths(struct saved_pool *p, uint64_t page_kib, int node)
{
	char dir[96];

	if (node < 0)
		snprintf(dir, sizeof(dir), "/sys/kernel/mm/hugepages/hugepages-%llukB",
			 (unsigned long long)page_kib);
	else
		snprintf(dir, sizeof(dir),
			 "/sys/devices/system/node/node%d/hugepages/hugepages-%llukB", node,
			 (unsigned long long)page_kib);
	p->page_kib = page_kib;
	p->node = node;
	snprintf(p->nr_path, sizeof(p->nr_path), "%s/nr_hugepages", dir);
	snprintf(p->free_path, sizeof(p->free_path), "%s/free_hugepages", dir);
}

/*
 * Is process @pid gone? A killed memgate whose parent has not reaped it yet (an agent's init
 * that reaps late, or never) is a zombie: kill(pid, 0) still finds it, /proc says 'Z'.
 */
static bool pid_gone(long pid)
{
	char path[64], buf[256], *state;
	int fd;
	ssize_t n;

	if (pid <= 0)
		return false;
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses, the last ')' ends it. */
	state = strrchr(buf, ')');
	return state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X');
}

/* Is @kib a page size this kernel has a hugetlb pool of, on @node (-1: the system's)? */
static bool offered(unsigned long long kib, int node)
{
	struct saved_pool p;

	pool_paths(&p, kib, node);
	return access(p.nr_path, F_OK) == 0;
}

/*
 * The lines of one record, each "pool PAGE_KIB NODE BEFORE AFTER": a pool the kernel has, and
 * the size this run found it at and left it at. The lines memgate wrote before December 2026,
 * "PAGE_KIB DELTA BEFORE [NODE]", read as AFTER = BEFORE + DELTA. A record with any other
 * line, or a growth no run makes (none, or past RESERVE_MAX_PAGES), is refused whole (-EINVAL).
 */
static int read_record(FILE *f, struct saved_pool *p, int *n)
{
	char line[128];

	for (*n = 0; fgets(line, sizeof(line), f);) {
		unsigned long long kib, delta, before, after = 0;
		int node = -1, got;
		char end;

		if (sscanf(line, "pool %llu %d %llu %llu%c", &kib, &node, &before, &after, &end) ==
		    5) {
			delta = after > before ? after - before : 0;
			got = 5;
		} else {
			got =
			    sscanf(line, "%llu %llu %llu %d%c", &kib, &delta, &before, &node, &end);
			if (got == 3)
				got =
				    sscanf(line, "%llu %llu %llu%c", &kib, &delta, &before, &end) +
				    1;
			after = before + delta;
		}
		if (got != 5 || end != '\n' || node < -1 || node > 4095 || !offered(kib, node) ||
		    !delta || after > RESERVE_MAX_PAGES || *n == MAX_POOLS)
			return -EINVAL;
		pool_paths(&p[*n], kib, node);
		p[*n].delta = delta;
		p[(*n)++].old_total = before;
	}
	return 0;
}

/* One dead memgate's record: its pools, and which of them were put back. */
struct dead_record {
	char name[64];
	struct saved_pool p[MAX_POOLS];
	bool back[MAX_POOLS];
	int n;
};

/* Read record @name, or refuse it as no record of memgate's: -EINVAL, the message said. */
static int load_record(const char *name, struct dead_record *r, FILE *out)
{
	char path[512], refused[600];
	struct stat st;
	int fd, ret = -EINVAL;
	FILE *f = NULL;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%.63s", name); /* a pid: digits */
	snprintf(path, sizeof(path), "%s/%s", STATE_DIR, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    st.st_size <= RESERVE_MAX_RECORD_BYTES && (f = fdopen(fd, "r")))
		ret = read_record(f, r->p, &r->n);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	if (!ret)
		return 0;
	/* Kept for whoever wants to look, under a name no run reads again. */
	snprintf(refused, sizeof(refused), "%s.refused", path);
	rename(path, refused);
	fprintf(out,
		"memgate: refused the reservation record %s: not a regular file of this user of "
		"at most %d bytes holding \"pool PAGE_KIB NODE BEFORE AFTER\" lines of pools this "
		"kernel has, each grown by a run; no pool was changed (kept as %s)\n",
		path, RESERVE_MAX_RECORD_BYTES, refused);
	return ret;
}

/*
 * Put pool @p back to its size before the dead run grew it, if it still reads as that run left
 * it: its total the run's "after" and at least the run's pages free. Returns true when it did.
 */
static bool take_back_unchanged(const struct saved_pool *p)
{
	uint64_t total, free_now;

	if (read_count(p->nr_path, &total) || read_count(p->free_path, &free_now))
		return false;
	if (total != p->old_total + p->delta || free_now < p->delta)
		return false;
	return write_count(p->nr_path, p->old_total) == 0;
}

static void pool_where(const struct saved_pool *p, char *buf, size_t len)
{
	if (p->node < 0)
		snprintf(buf, len, "the pool of %llu KiB pages", (unsigned long long)p->page_kib);
	else
		snprintf(buf, len, "node %d's pool of %llu KiB pages", p->node,
			 (unsigned long long)p->page_kib);
}

/* What became of record @r: removed when every pool was put back (true), else kept as refused. */
static bool settle_record(const struct dead_record *r, FILE *out)
{
	char path[512], refused[600], where[96];
	bool all = true;

	snprintf(path, sizeof(path), "%s/%.63s", STATE_DIR, r->name);
	snprintf(refused, sizeof(refused), "%s.refused", path);
	for (int i = 0; i < r->n; i++) {
		const struct saved_pool *p = &r->p[i];
		uint64_t total = 0, free_now = 0;

		pool_where(p, where, sizeof(where));
		if (r->back[i]) {
			fprintf(
			    out,
			    "memgate: put back %llu hugetlb pages of %s that memgate %s reserved "
			    "and did not restore (it was killed): %llu -> %llu pages\n",
			    (unsigned long long)p->delta, where, r->name,
			    (unsigned long long)p->old_total + p->delta,
			    (unsigned long long)p->old_total);
			continue;
		}
		all = false;
		read_count(p->nr_path, &total);
		read_count(p->free_path, &free_now);
		fprintf(out,
			"memgate: refused the reservation record %s: it says memgate %s grew %s "
			"from %llu to %llu pages, and the pool holds %llu (%llu free)%s; nothing "
			"was changed (kept as %s)\n",
			path, r->name, where, (unsigned long long)p->old_total,
			(unsigned long long)p->old_total + p->delta, (unsigned long long)total,
			(unsigned long long)free_now,
			total != p->old_total + p->delta
			    ? ": it was resized since, or never that size"
			    : ": the pages it added are in use",
			refused);
	}
	if (all)
		unlink(path);
	else
		rename(path, refused);
	return all;
}

/*
 * Put back the records of dead memgates; the caller took the lock itself. Every reserver
 * holds the lock until it exits, so under it every other record is a dead one's, whatever
 * pid namespace it ran in and whoever has its pid now. A pool is put back only while it reads
 * as the dead run left it (take_back_unchanged()); records of one pool stacked by several runs
 * are taken newest first, whatever order the folder lists them in, by going over them again
 * while any was put back.
 */
static int recover_locked(FILE *out)
{
	struct dead_record recs[16];
	int n = 0, done = 0;
	bool progress = true;
	DIR *d;
	struct dirent *e;

	if (lock_owner != getpid())
		return 0; /* inherited: the one that took it recovered then */
	if (own_dir(STATE_DIR)) {
		fprintf(out,
			"memgate: %s is not a folder of this user that only it may write: its "
			"records are not trusted, no pool was changed\n",
			STATE_DIR);
		return 0;
	}
	d = opendir(STATE_DIR);
	while (d && (e = readdir(d)) && n < (int)ARRAY_SIZE(recs)) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end || pid == getpid())
			continue;
		if (!load_record(e->d_name, &recs[n], out))
			n++;
	}
	if (d)
		closedir(d);
	while (progress) {
		progress = false;
		for (int i = 0; i < n; i++)
			for (int j = recs[i].n - 1; j >= 0; j--)
				if (!recs[i].back[j] && take_back_unchanged(&recs[i].p[j]))
					progress = recs[i].back[j] = true;
	}
	for (int i = 0; i < n; i++) {
		done += settle_record(&recs[i], out);
	}
	return done;
}

/* Open (and create) the lock file. Returns its fd or -errno. */
static int open_lock(void)
{
	int fd;

	struct stat st;
	int ret = own_dir(RESERVE_DIR);

	if (ret)
		return ret;
	/* No link followed: a dangling one would make root create its target. */
	fd = open(RESERVE_DIR "/hugetlb.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Wait at most @wait_s seconds for the lock on @fd. Returns true once it is held. */
static bool wait_lock(int fd, unsigned int wait_s)
{
	const struct timespec tick = {0, 20000000};
	int64_t deadline = util_now_ns() + (int64_t)wait_s * 1000000000;

	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK || util_now_ns() >= deadline)
			return false;
		nanosleep(&tick, NULL);
	}
	return true;
}

int reserve_lock(unsigned int wait_s, struct mg_err *err)
{
	char holder[32] = "";
	int fd;

	if (lock_fd >= 0)
		return 0; /* held already: this process, or inherited from its parent */
	fd = open_lock();
	if (fd < 0)
		return mg_err_set(err, -fd, "%s: %s", RESERVE_DIR,
				  fd == -EPERM
				      ? "not a folder of this user that only it may write, "
					"or its lock is a link or another user's: not "
					"trusted"
				      : strerror(-fd));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n;

		if (wait_s && errno == EWOULDBLOCK)
			fprintf(stderr,
				"memgate: waiting for another memgate's hugetlb reservation "
				"to end (%u s at most)\n",
				wait_s);
		if (!wait_lock(fd, wait_s)) {
			n = pread(fd, holder, sizeof(holder) - 1, 0);
			holder[n > 0 ? n : 0] = '\0';
			holder[strcspn(holder, "\n")] = '\0';
			close(fd);
			return mg_err_set(err, EBUSY,
					  "another memgate (pid %s) holds the hugetlb "
					  "pools (%s/hugetlb.lock)%s",
					  holder[0] ? holder : "?", RESERVE_DIR,
					  wait_s ? "; gave up waiting" : "");
		}
	}
	/* Who holds it, for the next one's message. */
	if (ftruncate(fd, 0) == 0) {
		int len = snprintf(holder, sizeof(holder), "%d\n", (int)getpid());

		if (pwrite(fd, holder, (size_t)len, 0) != len)
			holder[0] = '\0';
	}
	lock_owner = getpid();
	lock_fd = fd;
	if (geteuid() == 0)
		recover_locked(stderr);
	return 0;
}

/*
 * The lock is held but the memgate that took it (its pid is in the file) is gone: what holds
 * it are that memgate's children, which inherited the descriptor and are being killed with it
 * (util/proc.c). Their exit releases the lock and, before that, unmaps their pages.
 */
static bool holder_dead(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid_gone(pid);
}

int reserve_recover(FILE *out)
{
	DIR *d = opendir(STATE_DIR);
	int fd, done;

	if (!d)
		return 0; /* nobody ever reserved here */
	closedir(d);
	if (geteuid() != 0)
		return 0; /* not ours to write */
	if (lock_fd >= 0)
		return recover_locked(out); /* held by this process already */
	fd = open_lock();
	if (fd == -EPERM)
		fprintf(
		    out,
		    "memgate: %s is not a folder of this user that only it may write, or its "
		    "lock is a link or another user's: its records are not trusted, no pool was "
		    "changed\n",
		    RESERVE_DIR);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) && !(holder_dead(fd) && wait_lock(fd, ORPHAN_WAIT_S))) {
		close(fd); /* busy: its holder recovered when it took it */
		return 0;
	}
	lock_owner = getpid();
	done = recover_locked(out);
	close(fd); /* and the lock with it */
	return done;
}

int reserve_hugepages(uint64_t page_bytes, uint64_t free_wanted, bool keep_short, uint64_t *got,
		      struct mg_err *err)
{
	return reserve_node_hugepages(page_bytes, -1, free_wanted, keep_short, got, err);
}

int reserve_node_hugepages(uint64_t page_bytes, int node, uint64_t free_wanted, bool keep_short,
			   uint64_t *got, struct mg_err *err)
{
	struct hw_page_pool pool;
	struct saved_pool *s;
	uint64_t now_total;
	char where[32] = "";
	int ret = hw_hugepage_pool(page_bytes, node, &pool);

	if (node >= 0)
		snprintf(where, sizeof(where), " on node %d", node);
	if (ret)
		return mg_err_set(err, -ret, "no hugetlb pool of %llu KiB pages%s on this kernel",
				  (unsigned long long)(page_bytes >> 10), where);
	*got = pool.free;
	if (pool.free >= free_wanted)
		return 0;
	if (geteuid() != 0)
		return mg_err_set(err, EPERM, "reserving %llu hugetlb pages of %llu KiB needs root",
				  (unsigned long long)free_wanted,
				  (unsigned long long)(page_bytes >> 10));
	if (n_saved == MAX_POOLS)
		return mg_err_set(err, ENOSPC, "too many pool changes in one run");
	ret = reserve_lock(RESERVE_WAIT_S, err);
	/* Under the lock the pool may have changed: look again. */
	if (!ret)
		ret = hw_hugepage_pool(page_bytes, node, &pool);
	if (ret)
		return ret;
	*got = pool.free;
	if (pool.free >= free_wanted)
		return 0;
	arm_restore();
	s = &saved[n_saved];
	pool_paths(s, page_bytes >> 10, node);
	s->old_total = pool.total;
	s->delta = free_wanted - pool.free;
	n_saved++; /* recorded before the change: a signal from here on takes it back */
	ret = write_state();
	if (!ret)
		ret = write_count(s->nr_path, pool.total + s->delta);
	/* The kernel may find fewer pages than asked: the delta is what it did add. */
	if (!read_count(s->nr_path, &now_total))
		s->delta = now_total > s->old_total ? now_total - s->old_total : 0;
	if (!ret)
		ret = write_state();
	if (!ret)
		ret = hw_hugepage_pool(page_bytes, node, &pool);
	*got = ret ? 0 : pool.free;
	if (ret || pool.free < free_wanted) {
		/* Short: what was found stays, if asked, for the cases it is enough for (and is
		 * taken back at exit like any reservation); else the pool is put back now. */
		if (ret || !keep_short || !s->delta) {
			take_back(&saved[--n_saved]); /* this pool only */
			write_state();
			*got = 0;
		}
		return mg_err_set(err, ret ? -ret : ENOMEM,
				  "the kernel found %llu of %llu free "
				  "hugetlb pages of %llu KiB%s (memory too fragmented?)",
				  (unsigned long long)*got, (unsigned long long)free_wanted,
				  (unsigned long long)(page_bytes >> 10), where);
	}
	return 0;
}
