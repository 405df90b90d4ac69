/* SPDX-License-Identifier: GPL-2.0-or-later */
/* run.c - `memgate run`: its options into a session, planned and run (session/session.h). */
#include "cli/cli.h"

int cli_cmd_run(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "run");

	return ret ? ret : session_run_cases(&c.cfg);
}
