/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.c - `memgate rules`: the rules in effect, as text. */
#include "cli/cli.h"

int cli_cmd_rules(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "rules");

	return ret ? ret : session_rules(c.cfg.rules_path);
}
