/* SPDX-License-Identifier: GPL-2.0-or-later */
/* run.c - `memgate run`: its options into a session, planned and run (session/session.h). */
#include <stdio.h>

#include "cli/cli.h"

int cli_cmd_run(int argc, char **argv)
{
	struct cli c;
	struct session s;
	int ret = cli_parse(&c, argc, argv, "run");

	if (ret || (ret = session_plan(&s, &c.cfg)))
		return ret;
	ret = session_run(&s, stdout);
	session_close(&s);
	return ret;
}
