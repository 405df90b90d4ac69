/* SPDX-License-Identifier: GPL-2.0-or-later */
/* man.c - `memgate man`: memgate(1) in roff, made from the option tables (usage.c). */
#include "cli/cli.h"

int cli_cmd_man(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "man");

	return ret ? ret : cli_print_man(stdout);
}
