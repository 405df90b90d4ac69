/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_text.c - XML-safe text, meminfo parsing, globs, input files and run folders. */
#include "tests/testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/text.h"
#include "util/tmpdir.h"

static void check_clean(const char *in, size_t len, const char *want)
{
	char *got = text_xml_clean(in, len);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

#define FFFD "\xEF\xBF\xBD"

static void test_xml_clean(void **state)
{
	(void)state;
	check_clean("plain text\n\ttab\r", 16, "plain text\n\ttab\r");
	/* é (2 bytes), € (3), 𝄞 (4) are valid and stay. */
	check_clean("\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E", 9,
		    "\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E");
	check_clean("a\x01"
		    "b\x1b"
		    "c",
		    5, "a" FFFD "b" FFFD "c");
	check_clean("nul\0byte", 8, "nul" FFFD "byte");
	/* A stray continuation byte, a truncated sequence, an overlong '/', a surrogate. */
	check_clean("x\x80y", 3, "x" FFFD "y");
	check_clean("x\xE2\x82", 3, "x" FFFD FFFD);
	check_clean("\xC0\xAF", 2, FFFD FFFD);
	check_clean("\xED\xA0\x80", 3, FFFD);
	/* U+FFFE is not an XML character. */
	check_clean("\xEF\xBF\xBE", 3, FFFD);
}

static void test_utf8_clean_keeps_controls(void **state)
{
	char *got = text_utf8_clean("bell\a\xff", 6);

	(void)state;
	assert_string_equal(got, "bell\a" FFFD);
	free(got);
}

static void test_meminfo(void **state)
{
	const char *mi = "MemTotal:       24683584 kB\nMemFree:  100 kB\nHugePages_Total:       7\n"
			 "Hugepagesize:       2048 kB\n";
	uint64_t v;

	(void)state;
	assert_int_equal(text_meminfo_kib(mi, "MemTotal", &v), 0);
	assert_int_equal(v, 24683584);
	assert_int_equal(text_meminfo_kib(mi, "HugePages_Total", &v), 0);
	assert_int_equal(v, 7);
	/* "Mem" is a prefix of two keys and a key of none. */
	assert_int_equal(text_meminfo_kib(mi, "Mem", &v), -ENOENT);
	assert_int_equal(text_meminfo_kib(mi, "SwapTotal", &v), -ENOENT);
}

static void test_read_u64(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(text_read_u64("/proc/sys/kernel/pid_max", &v), 0);
	assert_true(v > 0);
	assert_int_equal(text_read_u64("/nonexistent/file", &v), -ENOENT);
	assert_int_equal(text_read_u64("/proc/version", &v), -EINVAL);
}

/* A file of outside input is read only when it is a regular file of a bounded size; a FIFO is
 * refused without waiting for a writer (the test would hang otherwise). */
static void test_read_input(void **state)
{
	const char *file = test_tmp("input.txt"), *fifo = test_tmp("input.fifo");
	struct mg_err err;
	size_t len = 0;
	char *text;
	FILE *f;

	(void)state;
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("{\"a\": 1}\n", f);
	assert_int_equal(fclose(f), 0);
	text = text_read_input(file, 64, &len, &err);
	assert_non_null(text);
	assert_string_equal(text, "{\"a\": 1}\n");
	assert_int_equal(len, 9);
	free(text);
	assert_null(text_read_input(file, 8, NULL, &err));
	assert_int_equal(err.code, EFBIG);
	assert_non_null(strstr(err.msg, "9 bytes, more than such a file holds (8)"));
	assert_int_equal(text_input_check(file, 8, &err), -EFBIG);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(text_read_input(fifo, 64, NULL, &err));
	assert_non_null(strstr(err.msg, "input.fifo: a FIFO, not a regular file"));
	assert_int_equal(text_input_check(fifo, 64, &err), -EINVAL);
	assert_null(text_read_input(test_tmp_dir(), 64, NULL, &err));
	assert_int_equal(err.code, EISDIR);
	assert_null(text_read_input("/dev/null", 64, NULL, &err));
	assert_non_null(strstr(err.msg, "/dev/null: a character device"));
	assert_null(text_read_input("/nonexistent/file", 64, NULL, &err));
	assert_int_equal(err.code, ENOENT);
	unlink(fifo);
	unlink(file);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(text_glob("hw.*", "hw.tsc.calibration"));
	assert_true(text_glob("*pool\\[size=2MiB\\]", "hw.hugepages.pool[size=2MiB]"));
	assert_false(text_glob("memslots.*", "hw.tsc.calibration"));
}

/* A run's folder: removed whole (a read-only folder in it, a link never followed); a dead
 * memgate's swept by the next, never a live one's, another program's or one behind a link. */
static void test_tmpdir(void **state)
{
	static char cmd[65536];
	char base[4200], mine[4300], p[4400];
	const char *was = getenv("TMPDIR");
	char *old = was ? strdup(was) : NULL;
	struct stat st;
	int status = -1;
	pid_t pid;

	(void)state;
	snprintf(base, sizeof(base), "%s/tmpdir", test_tmp_dir());
	assert_int_equal(mkdir(base, 0700), 0);
	setenv("TMPDIR", base, 1);
	assert_int_equal(tmpdir_make(mine, sizeof(mine), "mine"), 0);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/a/b' '%s/elsewhere' && touch '%s/a/b/f' '%s/elsewhere/.owner' && "
		 "ln -s '%s/elsewhere' '%s/a/out' && chmod 555 '%s/a/b' && "
		 "mkdir '%s/memgate-other.x' && ln -s elsewhere '%s/memgate-link.x'",
		 mine, base, mine, base, base, mine, mine, base, base);
	assert_int_equal(system(cmd), 0);
	/* A memgate that dies with its folder made. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char dead[4200];

		_exit(tmpdir_make(dead, sizeof(dead), "dead") ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_int_equal(tmpdir_sweep(base), 1);
	snprintf(cmd, sizeof(cmd), "ls -d '%s'/memgate-dead.* 2>/dev/null", base);
	assert_int_not_equal(system(cmd), 0);
	/* This process's own, another program's, the link and what it leads to: all still there. */
	assert_int_equal(stat(mine, &st), 0);
	snprintf(p, sizeof(p), "%s/memgate-other.x", base);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/memgate-link.x", base);
	assert_int_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/elsewhere/.owner", base);
	assert_int_equal(stat(p, &st), 0);
	/* Removed whole, the link's target kept. */
	tmpdir_remove(mine);
	assert_int_equal(lstat(mine, &st), -1);
	assert_int_equal(stat(p, &st), 0);
	/* Let go of: the next sweep finds nothing of it. */
	assert_int_equal(tmpdir_sweep(base), 0);
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xml_clean), cmocka_unit_test(test_utf8_clean_keeps_controls),
	    cmocka_unit_test(test_meminfo),   cmocka_unit_test(test_read_u64),
	    cmocka_unit_test(test_glob),      cmocka_unit_test(test_read_input),
	    cmocka_unit_test(test_tmpdir),
	};

	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
