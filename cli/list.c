/* SPDX-License-Identifier: GPL-2.0-or-later */
/* list.c - `memgate list`: the cases planned on this host, and the gates that judge them. */
#include <stdio.h>

#include "cli/cli.h"

int cli_cmd_list(int argc, char **argv)
{
	struct cli c;
	struct session s;
	int ret = cli_parse(&c, argc, argv, "list");

	if (ret || (ret = session_plan(&s, &c.cfg)))
		return ret;
	ret = session_list(&s, c.json_out, stdout);
	session_close(&s);
	return ret;
}
