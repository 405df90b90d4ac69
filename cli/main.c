/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main.c - memgate's entry: the command word, then that command's own table and code. The
 * only file of the command line that ends the process. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* "hw, list, ... or completion": the commands a user types. */
static void command_words(char *buf, size_t len)
{
	size_t n = 0, shown = 0, at = 0;

	for (const struct cli_command *k = cli_commands; k->name; k++)
		n += !k->hidden;
	buf[0] = '\0';
	for (const struct cli_command *k = cli_commands; k->name && at < len; k++) {
		if (k->hidden)
			continue;
		shown++;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       shown == 1   ? ""
				       : shown == n ? " or "
						    : ", ",
				       k->name);
	}
}

static int dispatch(int argc, char **argv)
{
	const char *word = argc > 1 ? argv[1] : NULL;
	const struct cli_command *cmd;
	char words[256];

	command_words(words, sizeof(words));
	if (!word)
		return cli_usage_error("missing command: %s", words);
	if (!strcmp(word, "--help") || !strcmp(word, "-h") || !strcmp(word, "help"))
		return cli_print_usage();
	if (!strcmp(word, "--version")) {
		printf("memgate %s\n", MEMGATE_VERSION);
		return EXIT_PASSED;
	}
	cmd = cli_command(word);
	if (!cmd)
		return cli_usage_error("unknown command '%s': expected %s", word, words);
	return cmd->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	int status;

	/* A closed stdout (`memgate run | head -1`) is an error to report, not a death: the
	 * reports are written all the same. */
	signal(SIGPIPE, SIG_IGN);
	/* Reports need a line-buffered stdout to interleave sanely with the children's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A memgate killed while it held hugetlb pages left a record: put them back now. */
	session_recover(stderr);
	status = dispatch(argc, argv);
	if (status == EXIT_HELP)
		status = EXIT_PASSED;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr,
			"memgate: writing to stdout failed: what was printed is incomplete\n");
		if (status == EXIT_PASSED || status == EXIT_FAILED)
			status = EXIT_HARNESS;
	}
	return status;
}
