/* SPDX-License-Identifier: GPL-2.0-or-later */
/* baseline.c - `memgate baseline add RESULTS.json DIR`: a run filed in a history
 * (session/baseline.c files it). */
#include <string.h>

#include "cli/cli.h"
#include "session/compare.h"

int cli_cmd_baseline(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "baseline");

	if (ret)
		return ret;
	if (c.n_args != 3 || strcmp(c.args[0], "add"))
		return cli_usage_error("expected: baseline add RESULTS.json DIR");
	return session_baseline_add(c.args[1], c.args[2]);
}
