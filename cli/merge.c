/* SPDX-License-Identifier: GPL-2.0-or-later */
/* merge.c - `memgate merge SHARD.json... --json FILE`: the shards' results as one
 * (session/merge.c merges them). */
#include "cli/cli.h"

int cli_cmd_merge(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "merge");

	if (ret)
		return ret;
	if (c.n_args < 1)
		return cli_usage_error("merge needs the results files of the shards");
	if (!c.cfg.json_path)
		return cli_usage_error("merge needs --json FILE: where the merged results go");
	return session_merge(&c.cfg, c.args, c.n_args);
}
