/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_options.c - the option tables give everything: every option a command's table holds is
 * in its --help, in its section of memgate(1) and in its case of the bash completion, and
 * cli_parse() takes it; --help names no option that no command takes. */
#include "tests/testutil.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "suites/suites.h"
#include "util/util.h"

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
	for (const struct cli_command *k = cli_commands; k->name; k++)
		for (const struct cli_opt *const *o = k->opts; *o; o++)
			if (strlen((*o)->name) == len && !strncmp((*o)->name, name, len))
				return true;
	return !strncmp(name, "version", len) && len == 7;
}

/* What @print writes, as a string (free it). */
static char *captured(void (*print)(const struct cli_command *cmd, FILE *f),
		      const struct cli_command *cmd)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	print(cmd, f);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void print_man(const struct cli_command *cmd, FILE *f)
{
	(void)cmd;
	assert_int_equal(cli_print_man(f), EXIT_PASSED);
}

static void print_completion(const struct cli_command *cmd, FILE *f)
{
	(void)cmd;
	assert_int_equal(cli_print_completion(f), EXIT_PASSED);
}

/* The part of @text from @start to the next @end (or the end), as a string (free it). */
static char *section(const char *text, const char *start, const char *end)
{
	const char *a = strstr(text, start), *b;

	if (!a)
		return NULL;
	a += strlen(start);
	b = strstr(a, end);
	return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

/* "--name" as roff spells it: every hyphen \-. */
static void roff_name(const char *name, char *buf, size_t len)
{
	size_t j = 0;

	for (const char *c = name; *c && j + 3 < len; c++) {
		if (*c == '-')
			buf[j++] = '\\';
		buf[j++] = *c;
	}
	buf[j] = '\0';
}

static void test_every_option_everywhere(void **state)
{
	char *man = captured(print_man, NULL), *comp = captured(print_completion, NULL);
	int missing = 0, commands = 0;

	(void)state;
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		char head[64], *help, *page, *cases;

		if (k->hidden)
			continue;
		commands++;
		help = captured(cli_print_help, k);
		snprintf(head, sizeof(head), "usage: memgate %s ", k->name);
		if (strncmp(help, head, strlen(head)) && strncmp(help, head, strlen(head) - 1))
			fail_msg("memgate %s --help does not start with its own usage", k->name);
		snprintf(head, sizeof(head), "\n.SS %s\n", k->name);
		page = section(man, head, "\n.S");
		snprintf(head, sizeof(head), "\n\t%s)\n", k->name);
		cases = section(comp, head, "\t\t;;\n");
		if (!page || !cases)
			fail_msg("%s: no section in memgate(1) or no case in the completion",
				 k->name);
		for (const struct cli_opt *const *p = k->opts; *p; p++) {
			const struct cli_opt *o = *p;
			char roff[64];

			roff_name(o->name, roff, sizeof(roff));
			if (!has_option(help, "--", o->name))
				print_message("%s --%s: not in its --help\n", k->name, o->name);
			else if (!has_option(page, "\\-\\-", roff))
				print_message("%s --%s: not in its section of memgate(1)\n",
					      k->name, o->name);
			else if (!has_option(cases, "--", o->name))
				print_message("%s --%s: not in its bash completion\n", k->name,
					      o->name);
			else
				continue;
			missing++;
		}
		free(help);
		free(page);
		free(cases);
	}
	free(man);
	free(comp);
	assert_true(commands >= 12);
	assert_int_equal(missing, 0);
}

/* The check itself: an option planted in a table but missing from a text is found. */
static void test_missing_option_is_found(void **state)
{
	char *man = captured(print_man, NULL);

	(void)state;
	assert_true(has_option(man, "\\-\\-", "reserve\\-hugepages"));
	assert_false(has_option(man, "\\-\\-", "reserve\\-huge"));
	assert_false(has_option(man, "\\-\\-", "no\\-such\\-option"));
	free(man);
}

static void test_usage_names_only_real_options(void **state)
{
	int unknown = 0;

	(void)state;
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		char *help = captured(cli_print_help, k);

		for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--")) {
			size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");

			if (len && !in_some_table(p + 2, len)) {
				print_message("%s --help names --%.*s, which no command takes\n",
					      k->name, (int)len, p + 2);
				unknown++;
			}
		}
		free(help);
	}
	assert_int_equal(unknown, 0);
}

/* Every command's -h and --help: its usage, and EXIT_HELP (main exits 0); never exit(). The
 * usages go to /dev/null: test_every_option_everywhere reads them. */
static void test_help_of_every_command(void **state)
{
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

	(void)state;
	assert_true(saved >= 0 && null >= 0);
	fflush(stdout);
	assert_int_equal(dup2(null, STDOUT_FILENO), STDOUT_FILENO);
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		char name[32], *argv_long[] = {name, "--help", NULL},
			       *argv_short[] = {name, "-h", NULL};
		struct cli c;

		snprintf(name, sizeof(name), "%s", k->name);
		if (!strcmp(k->name, "case-exec"))
			continue; /* memgate's own: no help */
		assert_int_equal(cli_parse(&c, 2, argv_long, k->name), EXIT_HELP);
		assert_int_equal(cli_parse(&c, 2, argv_short, k->name), EXIT_HELP);
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(null);
}

/* Does the field at @at (of @size bytes) lie in [@lo, @lo + @len)? */
static bool inside(size_t at, size_t size, size_t lo, size_t len)
{
	return at >= lo && at + size <= lo + len;
}

/*
 * Each option writes into the struct of the command that takes it: the session's job (cfg),
 * the command's own (OWN() in its row), or --help; a flag or a string another command's
 * struct holds would be one command's option reading as another's.
 */
static void test_options_write_their_command(void **state)
{
	const size_t cfg_at = offsetof(struct cli, cfg), cfg_len = sizeof(((struct cli *)0)->cfg);
	size_t checked = 0;

	(void)state;
	for (const struct cli_command *k = cli_commands; k->name; k++)
		for (const struct cli_opt *const *o = k->opts; *o; o++) {
			size_t at = (*o)->field, size = (*o)->kind == CO_LIST ? sizeof(char *) : 1;

			if ((*o)->kind == CO_CALL)
				continue;
			checked++;
			if (inside(at, size, cfg_at, cfg_len) || at == offsetof(struct cli, help) ||
			    (k->own_size && inside(at, size, k->own_at, k->own_size)))
				continue;
			fail_msg("%s --%s writes outside cfg and the command's own struct", k->name,
				 (*o)->name);
		}
	assert_true(checked > 40);
}

/* model's options are parsed as every command's: values land, bad ones are refused. */
static void test_model_parses_like_the_others(void **state)
{
	char *good[] = {"model", "--spread", "0.01,0.02", "--runs", "50", "--seed", "7", NULL};
	char *bad[] = {"model", "--runs", "5", NULL}, *s[] = {"model", "-s", "0.02", NULL};
	struct cli c;

	(void)state;
	assert_int_equal(cli_parse(&c, 7, good, "model"), 0);
	assert_int_equal(c.model.n_spreads, 2);
	assert_int_equal(c.model.params.runs, 50);
	assert_int_equal(c.model.params.seed, 7);
	assert_int_equal(cli_parse(&c, 3, bad, "model"), EXIT_USAGE);
	/* -s is --suite wherever it is taken; model takes no suite. */
	assert_int_equal(cli_parse(&c, 3, s, "model"), EXIT_USAGE);
}

static void test_man_page_requests(void **state)
{
	char *page = captured(print_man, NULL);

	(void)state;
	assert_non_null(strstr(page, ".TH MEMGATE 1 "));
	assert_non_null(strstr(page, "\n.SH SYNOPSIS\n.nf\nmemgate hw "));
	assert_non_null(strstr(page, "\n.SH COMMANDS\n"));
	assert_non_null(strstr(page, "\n.SH EXIT STATUS\n"));
	assert_non_null(strstr(page, "\n.SH IMPLEMENTATIONS UNDER TEST\n"));
	/* Every line that starts with a dot is a request this page means to make. */
	for (const char *line = page; line; line = strchr(line, '\n')) {
		static const char *const requests[] = {".TH ",	".SH ", ".SS ", ".nf\n", ".fi\n",
						       ".TP\n", ".B ",	".I ",	".BR ",	 ".\\\" "};
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

/*
 * The suites' --impl keys fit the choices a run holds (IMPL_MAX_KEYS), each named once and
 * "SUITE.WHAT" after its suite; the last of a key given twice is the one in effect.
 */
static void test_impl_keys(void **state)
{
	const struct impl_key *keys[4 * IMPL_MAX_KEYS];
	size_t n = suites_impl_keys(keys, ARRAY_SIZE(keys)), n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	const struct impl_key *update = NULL;
	struct impl_opts o = {0};
	struct mg_err err;

	(void)state;
	assert_true(n > 0 && n <= IMPL_MAX_KEYS);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = i + 1; k < n; k++)
			assert_string_not_equal(keys[i]->key, keys[k]->key);
		if (!strcmp(keys[i]->key, "memslots.update"))
			update = keys[i];
	}
	assert_non_null(update);
	for (size_t s = 0; s < n_suites; s++)
		for (const struct impl_key *const *k = suites[s]->impl_keys; k && *k; k++)
			assert_int_equal(
			    strncmp((*k)->key, suites[s]->name, strlen(suites[s]->name)), 0);
	assert_int_equal(impl_opts_set(&o, keys, n, "memslots.update=swap", &err), 0);
	assert_int_equal(impl_opts_set(&o, keys, n, "memslots.update=heapsort", &err), 0);
	assert_int_equal(o.n, 1);
	assert_string_equal(impl_get(&o, update), "heapsort");
	assert_int_equal(impl_opts_set(&o, keys, n, "memslots.update=bubble", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "memslots.update takes shift, swap, heapsort"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_option_everywhere),
	    cmocka_unit_test(test_impl_keys),
	    cmocka_unit_test(test_missing_option_is_found),
	    cmocka_unit_test(test_usage_names_only_real_options),
	    cmocka_unit_test(test_help_of_every_command),
	    cmocka_unit_test(test_model_parses_like_the_others),
	    cmocka_unit_test(test_options_write_their_command),
	    cmocka_unit_test(test_man_page_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
