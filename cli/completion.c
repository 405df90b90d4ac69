/* SPDX-License-Identifier: GPL-2.0-or-later */
/* completion.c - `memgate completion`: the bash completion, made from the option tables. */
#include "cli/cli.h"

int cli_cmd_completion(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "completion");

	return ret ? ret : cli_print_completion(stdout);
}
