/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.c - `memgate ab`: head against base, round by round (session/ab.c runs it). */
#include "cli/cli.h"

struct session_ab cli_ab_request(const struct cli *c)
{
	return (struct session_ab){
	    .base = c->base,
	    .head = c->head,
	    .history = c->calibration,
	    .rounds = c->rounds,
	    .confirm_rounds = c->confirm_rounds,
	    .rounds_set = c->rounds_set,
	    .runs = c->runs,
	    .warmup_set = c->warmup_set,
	    .timeout_set = c->timeout_set,
	};
}

int cli_cmd_ab(int argc, char **argv)
{
	struct cli c;
	struct session_ab ab;
	int ret = cli_parse(&c, argc, argv, "ab");

	if (ret)
		return ret;
	if (!c.base || !c.head)
		return cli_usage_error(
		    "ab needs --base 'BINARY [OPTIONS]' and --head 'BINARY [OPTIONS]'");
	ab = cli_ab_request(&c);
	return session_ab(&c.cfg, &ab);
}
