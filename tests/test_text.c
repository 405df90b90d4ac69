/* test_text.c - XML-safe text, meminfo parsing and globs. */
#include "tests/testutil.h"

#include <errno.h>
#include <string.h>

#include "util/text.h"

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

static void test_glob(void **state)
{
	(void)state;
	assert_true(text_glob("hw.*", "hw.tsc.calibration"));
	assert_true(text_glob("*pool\\[size=2MiB\\]", "hw.hugepages.pool[size=2MiB]"));
	assert_false(text_glob("memslots.*", "hw.tsc.calibration"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xml_clean), cmocka_unit_test(test_utf8_clean_keeps_controls),
	    cmocka_unit_test(test_meminfo),   cmocka_unit_test(test_read_u64),
	    cmocka_unit_test(test_glob),
	};

	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
