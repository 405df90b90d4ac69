/* SPDX-License-Identifier: GPL-2.0-or-later */
/* testutil.h - what the cmocka test programs share: includes, skips with a reason, paths. */
#ifndef MG_TESTS_TESTUTIL_H
#define MG_TESTS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>

/* cmocka's TAP output drops the reason of a skip: print it as a TAP comment first. */
#define skip_because(...)                                                                          \
	do {                                                                                       \
		printf("# skipped: ");                                                             \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		skip();                                                                            \
		return; /* skip() does not come back; say so to the analyzer */                    \
	} while (0)

/* The build directory (tests/run.sh passes it; `build` when run by hand). */
static inline const char *test_build_dir(void)
{
	const char *b = getenv("MEMGATE_BUILD");

	return b ? b : "build";
}

/* This program's own folder for its files: made with mkdtemp() under $TMPDIR (or /tmp) at
 * first use and removed, with what is in it, when the program exits. Two `make check` runs on
 * one host, a shared agent's case, never write the same path. */
static char test_tmp_dir_path[4096];
static int test_tmp_owner; /* the pid that made it: a forked child that exits leaves it */

static inline void test_tmp_remove(void)
{
	char cmd[4200];

	if (!test_tmp_dir_path[0] || getpid() != test_tmp_owner)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_tmp_dir_path);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", test_tmp_dir_path);
}

static inline const char *test_tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (test_tmp_dir_path[0])
		return test_tmp_dir_path;
	/* The folder is quoted in one shell command: no quote may be in it. */
	if (!tmp || !*tmp || strchr(tmp, '\''))
		tmp = "/tmp";
	snprintf(test_tmp_dir_path, sizeof(test_tmp_dir_path), "%s/memgate-test.XXXXXX", tmp);
	if (!mkdtemp(test_tmp_dir_path)) {
		fprintf(stderr, "# mkdtemp %s failed\n", test_tmp_dir_path);
		abort();
	}
	test_tmp_owner = getpid();
	atexit(test_tmp_remove);
	return test_tmp_dir_path;
}

/* A mkdtemp() template for a folder of @what's inside test_tmp_dir(), in @buf: whatever an
 * assertion leaves there goes with the program's folder at exit. */
static inline char *test_tmp_template(char *buf, size_t len, const char *what)
{
	if (snprintf(buf, len, "%s/%s-XXXXXX", test_tmp_dir(), what) >= (int)len) {
		fprintf(stderr, "# %s: a temporary path longer than %zu bytes\n", what, len);
		abort();
	}
	return buf;
}

/*
 * The other side of a device fact on a host that has the device: run @fn(@arg) in a forked
 * child whose private mount namespace has a /dev of its own, the memory devices only (no
 * /dev/kvm there; nothing changes outside). @fn reports by its return value, 0 for right: the child
 * must not use cmocka's asserts. Returns that value, or -1 with @why when this host cannot make
 * such a namespace (it needs root).
 */
static inline int test_without_dev(int (*fn)(void *), void *arg, char *why, size_t len)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The memory devices every program may open come back; KVM does not. */
		static const struct {
			const char *path;
			unsigned int minor;
		} mem[] = {{"/dev/null", 3},
			   {"/dev/zero", 5},
			   {"/dev/full", 7},
			   {"/dev/random", 8},
			   {"/dev/urandom", 9}};

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("memgate-test", "/dev", "tmpfs", 0, "size=64k,mode=755"))
			_exit(125);
		for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
			if (mknod(mem[i].path, S_IFCHR | 0666, makedev(1, mem[i].minor)) ||
			    chmod(mem[i].path, 0666))
				_exit(125);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(why, len, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 125) {
		snprintf(why, len, "cannot hide /dev here: a private mount namespace needs root");
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* @name inside test_tmp_dir(); eight results may be held at once. */
static inline const char *test_tmp(const char *name)
{
	static char paths[8][4200];
	static unsigned int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", test_tmp_dir(), name);
	return p;
}

/* @path made to hold @text exactly (a test's fixture file); the test fails if it cannot. */
static inline void test_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) < 0, 0);
	assert_int_equal(fclose(f), 0);
}

/*
 * The tests' host-wide turn: tests that change or read back the host's shared state (hugetlb
 * pools, RESERVE_DIR) take it first, so that two `make check` runs on one host take turns
 * there instead of seeing each other's pages. Held until the program exits; memgate itself
 * never takes it (its own lock is RESERVE_DIR's).
 */
#define TEST_HOST_LOCK "/run/memgate-tests.lock"

static inline void test_host_turn(void)
{
	static int fd = -1;

	if (fd >= 0)
		return;
	fd = open(TEST_HOST_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		fprintf(stderr, "# %s: %s\n", TEST_HOST_LOCK, strerror(errno));
		abort();
	}
}

/* The one preamble of a root-only test: skip saying why without root, else take the turn. */
#define test_root_setup(why)                                                                       \
	do {                                                                                       \
		if (geteuid() != 0)                                                                \
			skip_because("needs root (%s)", why);                                      \
		test_host_turn();                                                                  \
	} while (0)

/* Under AddressSanitizer (make asan): malloc is ASan's, mallinfo and malloc_trim are not glibc's.
 */
static inline int test_under_asan(void)
{
	const char *s = getenv("MEMGATE_SAN");

	return s && !strcmp(s, "asan");
}

/* Where the two JUnit schemas are: $MEMGATE_SCHEMAS, else the copies in the repository. */
static inline const char *test_schema_dir(void)
{
	const char *d = getenv("MEMGATE_SCHEMAS");

	return d && *d ? d : "tests/schemas";
}

/* Real machines' hwloc XML, in the repository (with hwloc's licence). */
#define TOPO_DIR "topologies"

#endif
