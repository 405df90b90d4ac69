/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.c - `memgate ab`: head against base, round by round (session/ab.c runs it). */
#include "cli/cli.h"
#include "session/ab.h"

int cli_cmd_ab(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "ab");
	const struct session_ab ab = {
	    .base = c.base,
	    .head = c.head,
	    .history = c.calibration,
	    .rounds = c.rounds,
	    .confirm_rounds = c.confirm_rounds,
	    .rounds_set = c.rounds_set,
	    .warmup_set = c.warmup_set,
	    .timeout_set = c.timeout_set,
	};

	if (ret)
		return ret;
	if (!c.base || !c.head)
		return cli_usage_error(
		    "ab needs --base 'BINARY [OPTIONS]' and --head 'BINARY [OPTIONS]'");
	return session_ab(&c.cfg, &ab);
}
