/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare.c - `memgate compare`: a results file judged against earlier ones (session/compare.c
 * runs it). */
#include "cli/cli.h"
#include "session/compare.h"

int cli_cmd_compare(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "compare");

	if (ret)
		return ret;
	if (c.n_args < 2)
		return cli_usage_error("compare needs BASE.json [BASE.json...] HEAD.json");
	return session_compare(&c.cfg, c.args, c.n_args, c.compare.any_host);
}
