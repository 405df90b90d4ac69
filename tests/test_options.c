/* test_options.c - the usage text, the option tables and memgate(1) agree: every option a
 * command takes is in --help and the man page, and --help names no option that none takes. */
#include "tests/testutil.h"

#include <ctype.h>
#include <string.h>

#include "cli/cli.h"
#include "util/util.h"

/* The tables of the commands a user types (case-exec is memgate's own, and not shown). */
static const struct option *const tables[] = {
    cli_hw_options,    cli_list_options,  cli_run_options,     cli_calibrate_options,
    cli_ab_options,    cli_merge_options, cli_compare_options, cli_rules_options,
    cli_plain_options, cli_model_options, cli_vm_options,
};

/* Is "--NAME" (@dashes spelled as in the text) in @text as a whole option word? */
static bool has_option(const char *text, const char *dashes, const char *name)
{
	size_t dl = strlen(dashes), nl = strlen(name);

	for (const char *p = strstr(text, dashes); p; p = strstr(p + 1, dashes)) {
		const char *end = p + dl + nl;

		if (!strncmp(p + dl, name, nl) && !isalnum((unsigned char)*end) && *end != '-' &&
		    (p == text || !isalnum((unsigned char)p[-1])))
			return true;
	}
	return false;
}

static bool in_some_table(const char *name, size_t len)
{
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++)
		for (const struct option *o = tables[t]; o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, name, len))
				return true;
	return !strncmp(name, "version", len) && len == 7;
}

static void test_every_option_in_usage(void **state)
{
	const char *usage = cli_usage_text();
	int missing = 0;

	(void)state;
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++)
		for (const struct option *o = tables[t]; o->name; o++)
			if (!has_option(usage, "--", o->name)) {
				print_message("--%s is taken but not in --help\n", o->name);
				missing++;
			}
	assert_int_equal(missing, 0);
}

static void test_usage_names_only_real_options(void **state)
{
	const char *usage = cli_usage_text();
	int unknown = 0;

	(void)state;
	for (const char *p = strstr(usage, "--"); p; p = strstr(p + 2, "--")) {
		size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");

		if (len && !in_some_table(p + 2, len)) {
			print_message("--help names --%.*s, which no command takes\n", (int)len,
				      p + 2);
			unknown++;
		}
	}
	assert_int_equal(unknown, 0);
}

static void test_man_page(void **state)
{
	char *page = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&page, &size);
	int missing = 0;

	(void)state;
	assert_non_null(f);
	assert_int_equal(cli_print_man(f), EXIT_PASSED);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(page, ".TH MEMGATE 1 "));
	assert_non_null(strstr(page, "\n.SH SYNOPSIS\n.nf\nmemgate [\\-\\-help]"));
	assert_non_null(strstr(page, "\n.SH COMMANDS\n"));
	assert_non_null(strstr(page, "\n.SH OPTIONS\n"));
	assert_non_null(strstr(page, "\n.SH IMPLEMENTATIONS UNDER TEST\n"));
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++)
		for (const struct option *o = tables[t]; o->name; o++) {
			char name[64];
			size_t j = 0;

			/* roff spells every hyphen \-. */
			for (const char *c = o->name; *c && j + 3 < sizeof(name); c++) {
				if (*c == '-')
					name[j++] = '\\';
				name[j++] = *c;
			}
			name[j] = '\0';
			if (!has_option(page, "\\-\\-", name)) {
				print_message("--%s is not in memgate(1)\n", o->name);
				missing++;
			}
		}
	assert_int_equal(missing, 0);
	/* Every line that starts with a dot is a request this page means to make. */
	for (const char *line = page; line; line = strchr(line, '\n')) {
		static const char *const requests[] = {".TH ",	".SH ", ".nf\n", ".fi\n",
						       ".TP\n", ".I ",	".BR ",	 ".\\\" "};
		bool known = false;

		line += *line == '\n';
		if (*line != '.')
			continue;
		for (size_t r = 0; r < ARRAY_SIZE(requests); r++)
			known |= !strncmp(line, requests[r], strlen(requests[r]));
		if (!known)
			fail_msg("a line of memgate(1) is read as a request: %.40s", line);
	}
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_option_in_usage),
	    cmocka_unit_test(test_usage_names_only_real_options),
	    cmocka_unit_test(test_man_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
