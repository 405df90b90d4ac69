/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibrate.c - `memgate calibrate`: this host class's A/A noise, filed in a history
 * (session/calibrate.c runs it). */
#include "cli/cli.h"

int cli_cmd_calibrate(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "calibrate");

	if (ret)
		return ret;
	if (!c.ab.history)
		return cli_usage_error("calibrate needs --history DIR: where the baselines of this "
				       "host class are kept");
	return session_calibrate(&c.cfg, &c.ab);
}
