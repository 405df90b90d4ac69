/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.c - `memgate ab`: head against base, round by round (session/ab.c runs it). */
#include "cli/cli.h"

int cli_cmd_ab(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "ab");

	if (ret)
		return ret;
	if (!c.ab.base || !c.ab.head)
		return cli_usage_error(
		    "ab needs --base 'BINARY [OPTIONS]' and --head 'BINARY [OPTIONS]'");
	return session_ab(&c.cfg, &c.ab);
}
