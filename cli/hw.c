/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hw.c - `memgate hw`: the host described, as text or JSON, or recorded. */
#include "cli/cli.h"

int cli_cmd_hw(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "hw");

	return ret ? ret : session_hw(&c.cfg, c.hw.record_dir, c.hw.json);
}
