/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bisect.c - `memgate bisect`: the first bad commit of a regression (session/bisect.c runs it). */
#include "cli/cli.h"
#include "session/bisect.h"

int cli_cmd_bisect(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "bisect");

	return ret ? ret : session_bisect(&c.cfg, &c.bisect);
}
