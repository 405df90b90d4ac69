/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cli_hostile.c - build/memgate given what a shared CI host can throw at it: topologies and
 * host records made to break it, a closed stdout, runs interrupted or killed mid-case (what
 * was measured is kept, what was changed on the host is put back). */
#include "tests/testutil.h"
#include "tests/expect.h"

/*
 * Ctrl-C, a lost terminal and SIGQUIT end a run with its reports: exit 128 + the signal,
 * and the JSON holds what was measured and says what was not run.
 */
static void test_interrupted_runs_report(void **state)
{
	static const int sigs[] = {SIGINT, SIGHUP, SIGQUIT};

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		const char *json = test_tmp("interrupted.json");
		char *text;
		int st;
		pid_t pid;

		unlink(json);
		pid = memgate_start(
		    -1, -1, (const char *[]){"run", "-s", "memslots", "--json", json, NULL});
		/* Long enough for a case or two to end; the whole suite takes seconds more. */
		usleep(700 * 1000);
		kill(pid, sigs[i]);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		text = text_read_file(json, 16 << 20);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 128 + sigs[i] || !text ||
		    !strstr(text, "interrupted"))
			fail_msg("signal %d: exit %d, JSON %s", sigs[i],
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				 text ? "without it" : "missing");
		free(text);
		unlink(json);
	}
}

/* Hostile topologies: bounded before hwloc builds them, validated after, names made UTF-8. */
static void test_hostile_topologies(void **state)
{
	char cmd[5400], bad_name[4200];
	char *out;
	json_t *j;

	(void)state;
	expect(2, "has 100000 PUs; memgate plans for at most 16384",
	       "hw --topology synthetic:'pack:100 core:100 pu:10'");
	unlink(test_tmp("topo.fifo"));
	assert_int_equal(mkfifo(test_tmp("topo.fifo"), 0600), 0);
	expect(2, "not a regular file", "hw --topology $MG_TMP/topo.fifo");
	unlink(test_tmp("topo.fifo"));
	snprintf(cmd, sizeof(cmd),
		 "sed 's/local_memory=\"19316633600\"/local_memory="
		 "\"18446744073709551615\"/' %s/24em64t-2n6c2t-pci.xml > %s",
		 TOPO_DIR, test_tmp("huge.xml"));
	assert_int_equal(system(cmd), 0);
	expect(2, "NUMA node 0 claims 18446744073709551615 bytes",
	       "hw --topology "
	       "$MG_TMP/huge.xml");
	unlink(test_tmp("huge.xml"));
	/* A path that is not UTF-8: the JSON is still written, and valid. */
	snprintf(bad_name, sizeof(bad_name), "%s/\xff\xfe.xml", test_tmp_dir());
	snprintf(cmd, sizeof(cmd), "cp %s/16em64t-4s2c2t.xml '%s'", TOPO_DIR, bad_name);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "hw --json --topology '%s'", bad_name);
	assert_int_equal(memgate(&out, "%s", cmd), 0);
	j = json_loads(out, 0, NULL);
	if (!j)
		fail_msg("not JSON: %s", out);
	assert_non_null(
	    strstr(json_string_value(json_object_get(j, "source_desc")), "\xEF\xBF\xBD"));
	json_decref(j);
	free(out);
	unlink(bad_name);
}

/* `memgate run ... | head -1`: a closed stdout is an error to report, not a silent death: the
 * run ends with exit 3 and its JSON report written. (A pipe whose reader is already gone.) */
static void test_closed_stdout(void **state)
{
	const char *json_path = test_tmp("pipe.json");
	char *json;
	int fds[2], st;
	pid_t pid;

	(void)state;
	unlink(json_path);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	pid = memgate_start(fds[1], -1,
			    (const char *[]){"run", "-s", "memslots", "-k", "*regression*",
					     "--json", json_path, NULL});
	close(fds[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	json = text_read_file(json_path, 1 << 22);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 3 || !json || !strstr(json, "lookup_bounds"))
		fail_msg("exit %d (signal %d), JSON %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			 WIFSIGNALED(st) ? WTERMSIG(st) : 0, json ? "incomplete" : "missing");
	free(json);
	unlink(json_path);
}

/* The console is a pipe in Jenkins: a case's line arrives when it ends, not with the rest. */
static void test_lines_as_cases_end(void **state)
{
	char line[512];
	int fds[2], st;
	FILE *in;
	pid_t pid, alive;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = memgate_start(fds[1], fds[0], (const char *[]){"run", "-s", "memslots", NULL});
	close(fds[1]);
	in = fdopen(fds[0], "r");
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	/* The first case's line is here while the suite (tens of cases) still runs. */
	alive = waitpid(pid, &st, WNOHANG);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	fclose(in);
	assert_non_null(strstr(line, "PASS  memslots.check.equivalence[capacity=125,order=size]"));
	assert_int_equal(alive, 0);
}

#define POOL_2M_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define POOL_2M POOL_2M_DIR "/nr_hugepages"
#define POOL_2M_FREE POOL_2M_DIR "/free_hugepages"

/* A pool an administrator sized (free pages before the test): a run then reserves nothing. */
static void need_unsized_pool(void)
{
	uint64_t free_pages = 0;

	if (!text_read_u64(POOL_2M_FREE, &free_pages) && free_pages)
		skip_because(
		    "the 2 MiB pool has %" PRIu64 " free pages already (sized by its "
		    "administrator): a run reserves nothing, so there is no reservation to "
		    "kill or to refuse; size it to 0 to run this",
		    free_pages);
}

/* The first child of @pid (/proc/PID/task/PID/children), 0 while it has none. */
static pid_t first_child(pid_t pid)
{
	char path[64], *s;
	long c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	s = text_read_file(path, 4096);
	c = s ? strtol(s, NULL, 10) : 0;
	free(s);
	return (pid_t)c;
}

/*
 * Jenkins aborts a build with SIGTERM, then SIGKILL. SIGKILL a run while its case child holds
 * the hugetlb lock and the pages it reserved: the child dies with it, and the very next
 * memgate command puts the pool back. The test is the orphans' reaper (a child subreaper), so it
 * sees how the case's child ended: killed, not at the end of its case.
 */
static void test_killed_run_restores(void **state)
{
	uint64_t before, during = 0;
	pid_t pid, child = 0;
	int status;

	(void)state;
	test_root_setup("it reserves hugetlb pages");
	if (text_read_u64(POOL_2M, &before))
		skip_because("no 2 MiB hugetlb pool on this kernel");
	need_unsized_pool();
	pid = memgate_start(-1, -1,
			    (const char *[]){"run", "-s", "prealloc", "-k",
					     "prealloc.perf.startup[[]kind=hugetlb-2m]",
					     "--reserve-hugepages", NULL});
	/* Until the pool has grown and the case's child runs: at most a minute. */
	for (int i = 0; i < 6000 && !(child && during > before); i++) {
		const struct timespec tick = {0, 10000000};

		assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
		if (text_read_u64(POOL_2M, &during))
			during = 0;
		child = first_child(pid);
		nanosleep(&tick, NULL);
	}
	if (!child || during <= before) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("the run did not reserve (pool %" PRIu64 " -> %" PRIu64
			 ") and start its case",
			 before, during);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	expect(0, "put back ", "run -s hw");
	assert_int_equal(text_read_u64(POOL_2M, &during), 0);
	assert_int_equal(during, before);
	/* It died with its parent: without that it would finish its case and exit 0. */
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (waitpid(-1, &status, WNOHANG) > 0)
		; /* the grandchildren it had, reparented here too */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* In a private mount namespace with a tmpfs over RESERVE_DIR: what a planted file gets. */
static int hostile_records_child(void)
{
	const char *dir = "/run/memgate", *rec = "/run/memgate/reservations";
	char cmd[600], *out;
	uint64_t before, after;
	int bad = 0;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    (mkdir(dir, 0755) && errno != EEXIST) || mount("tmpfs", dir, "tmpfs", 0, "mode=0755"))
		return 77; /* no namespace here: the caller skips */
	if (text_read_u64(POOL_2M, &before) || mkdir(rec, 0755))
		return 77;
	/* Forged (a delta no run makes), garbage, a link, another user's. */
	if (system("echo '2048 999999999 0' > /run/memgate/reservations/99990 && "
		   "echo hello > /run/memgate/reservations/99991 && "
		   "ln -s /etc/hostname /run/memgate/reservations/99992 && "
		   "echo '2048 8 0' > /run/memgate/reservations/99993 && "
		   "chown 65534 /run/memgate/reservations/99993"))
		return 77;
	snprintf(cmd, sizeof(cmd), "%s/memgate --version > %s/out 2>&1", test_build_dir(), dir);
	if (system(cmd) != 0)
		bad |= 1;
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	out = text_read_file(cmd, 1 << 16);
	for (const char *p = out; p && (p = strstr(p, "refused the reservation record")); p++)
		bad += 0x100;
	if (!out || strstr(out, "put back"))
		bad |= 2;
	printf("%s", out ? out : "(no output)\n");
	free(out);
	if (text_read_u64(POOL_2M, &after) || after != before)
		bad |= 4;
	/* A dangling link at the lock: refused, its target not made. */
	if (system("rm -rf /run/memgate/* && ln -s /run/memgate-target /run/memgate/hugetlb.lock"))
		return 77;
	snprintf(cmd, sizeof(cmd),
		 "%s/memgate run -s prealloc -k '*startup[[]kind=hugetlb-2m*' "
		 "--reserve-hugepages > /dev/null 2>&1",
		 test_build_dir());
	if (system(cmd) == 0 || access("/run/memgate-target", F_OK) == 0)
		bad |= 8;
	/* RESERVE_DIR writable by others: its records are not trusted. */
	if (system(
		"rm -rf /run/memgate/* && chmod 0777 /run/memgate && mkdir "
		"/run/memgate/reservations && echo '2048 8 0' > /run/memgate/reservations/99994"))
		return 77;
	snprintf(cmd, sizeof(cmd),
		 "%s/memgate --version 2>&1 | grep -q 'not a folder of this "
		 "user'",
		 test_build_dir());
	if (system(cmd) != 0 || access("/run/memgate/reservations/99994", F_OK))
		bad |= 16;
	return bad == 4 * 0x100 ? 0 : (bad & 0xff) | 32;
}

/*
 * Root only: the reservation records and the lock are trusted only as files of root's own
 * folder; a forged, garbage, linked or foreign record is refused with a message and no pool
 * changes; a planted link is never followed.
 */
static void test_hostile_records(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	test_root_setup("it plants files in " RESERVE_DIR);
	if (access(POOL_2M, F_OK))
		skip_because("no 2 MiB hugetlb pool on this kernel");
	need_unsized_pool();
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(hostile_records_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip_because("no private mount namespace here (unshare or mount refused)");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg(
		    "hostile records: status %d (1: memgate failed, 2: a pool put back, 4: the "
		    "pool changed, 8: a link followed or a run went on, 16: an open folder "
		    "trusted, 32: not four records refused)",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* A reservation record against a fake 2 MiB pool, and what recovery must make of it. */
struct record_case {
	const char *what;
	uint64_t total, free; /* the fake pool when the next memgate starts */
	const char *records;  /* "PID:LINE;PID:LINE": a dead memgate's record each */
	uint64_t want_total;  /* the pool afterwards */
	const char *want;     /* in memgate's words */
	bool kept;	      /* the first record is kept as .refused */
};

static const struct record_case record_cases[] = {
    {"consistent: a killed run grew 0 -> 300", 300, 300, "99980:pool 2048 -1 0 300", 0,
     "put back 300 hugetlb pages", false},
    {"consistent, as memgate wrote it before", 300, 300, "99980:2048 300 0", 0,
     "put back 300 hugetlb pages", false},
    {"stale: an operator sized it to 1024 since", 1024, 1024, "99980:pool 2048 -1 0 300", 1024,
     "the pool holds 1024 (1024 free): it was resized since", true},
    {"impossible: grown to 4,000,000 pages", 300, 300, "99980:2048 4000000 0", 300,
     "from 0 to 4000000 pages, and the pool holds 300", true},
    {"impossible: a delta larger than the pool", 300, 300, "99980:pool 2048 -1 0 500", 300,
     "from 0 to 500 pages, and the pool holds 300", true},
    {"in use: the pages it added are someone's now", 300, 100, "99980:pool 2048 -1 0 300", 300,
     "the pages it added are in use", true},
    {"two runs stacked on one pool, listed either way", 600, 600,
     "99980:pool 2048 -1 300 600;99981:pool 2048 -1 0 300", 0, "300 -> 0 pages", false},
    {"two runs stacked, the other order", 600, 600,
     "99981:pool 2048 -1 300 600;99980:pool 2048 -1 0 300", 0, "600 -> 300 pages", false},
};

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int fake_pool(uint64_t total, uint64_t free_pages)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64 "\n", total);
	if (write_text(POOL_2M, v))
		return -1;
	snprintf(v, sizeof(v), "%" PRIu64 "\n", free_pages);
	return write_text(POOL_2M_DIR "/free_hugepages", v);
}

/* One case of record_cases in the namespace: 0, or a bit of what went wrong. */
static int record_case_run(const struct record_case *c)
{
	char cmd[600], path[128], text[128], *out, *recs = strdup(c->records), *save = NULL;
	uint64_t total = 0;
	int bad = 0, first = 0;

	if (!recs || system("rm -rf /run/memgate/* && mkdir /run/memgate/reservations") ||
	    fake_pool(c->total, c->free)) {
		free(recs);
		return 64;
	}
	for (char *r = strtok_r(recs, ";", &save); r; r = strtok_r(NULL, ";", &save)) {
		char *line = strchr(r, ':');

		*line++ = '\0';
		snprintf(path, sizeof(path), "/run/memgate/reservations/%s", r);
		first = first ? first : atoi(r);
		snprintf(text, sizeof(text), "%s\n", line);
		if (write_text(path, text) || chmod(path, 0600))
			bad |= 64;
	}
	free(recs);
	snprintf(cmd, sizeof(cmd), "%s/memgate --version > /run/memgate/out 2>&1",
		 test_build_dir());
	if (system(cmd) != 0)
		bad |= 1;
	out = text_read_file("/run/memgate/out", 1 << 16);
	printf("%s:\n%s", c->what, out ? out : "(no output)\n");
	if (!out || !strstr(out, c->want))
		bad |= 2;
	free(out);
	if (text_read_u64(POOL_2M, &total) || total != c->want_total)
		bad |= 4;
	snprintf(path, sizeof(path), "/run/memgate/reservations/%d.refused", first);
	if ((access(path, F_OK) == 0) != c->kept)
		bad |= 8;
	snprintf(path, sizeof(path), "/run/memgate/reservations/%d", first);
	if (access(path, F_OK) == 0)
		bad |= 16;
	return bad;
}

/* In a private mount namespace, a tmpfs over RESERVE_DIR and one over the 2 MiB pool's sysfs
 * folder: every record of record_cases against a pool that is only files. */
static int records_child(void)
{
	int bad = 0;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    (mkdir("/run/memgate", 0755) && errno != EEXIST) ||
	    mount("tmpfs", "/run/memgate", "tmpfs", 0, "mode=0755") || access(POOL_2M_DIR, F_OK) ||
	    mount("tmpfs", POOL_2M_DIR, "tmpfs", 0, "mode=0755"))
		return 77;
	for (size_t i = 0; i < ARRAY_SIZE(record_cases); i++) {
		int b = record_case_run(&record_cases[i]);

		if (b)
			printf("FAILED (%d: 1 memgate failed, 2 its words, 4 the pool, 8 the "
			       ".refused copy, 16 the record left): %s\n",
			       b, record_cases[i].what);
		bad |= b ? 1 << (i % 30) : 0;
	}
	return bad ? 1 : 0;
}

/*
 * Root only: recovery puts a pool back only while it reads as the dead run left it, whatever
 * the record claims; a stale, impossible or in-use record is refused, kept, and changes
 * nothing; records stacked on one pool are all taken back. The pool is a fake one: files on a
 * tmpfs in a mount namespace of the test's own, so no real pool is touched.
 */
static void test_records_fake_pool(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	test_root_setup("it mounts over " RESERVE_DIR " and the pool's sysfs folder");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int st = records_child();

		fflush(NULL);
		_exit(st);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip_because("no private mount namespace, or no 2 MiB pool folder, here");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interrupted_runs_report),
	    cmocka_unit_test(test_hostile_topologies),
	    cmocka_unit_test(test_closed_stdout),
	    cmocka_unit_test(test_lines_as_cases_end),
	    cmocka_unit_test(test_killed_run_restores),
	    cmocka_unit_test(test_hostile_records),
	    cmocka_unit_test(test_records_fake_pool),
	};

	return cmocka_run_group_tests_name("cli_hostile", tests, NULL, NULL);
}
