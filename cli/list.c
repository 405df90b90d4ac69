/* SPDX-License-Identifier: GPL-2.0-or-later */
/* list.c - `memgate list`: the cases planned on this host, and the gates that judge them. */
#include "cli/cli.h"

int cli_cmd_list(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "list");

	return ret ? ret : session_list_cases(&c.cfg, c.list.json);
}
