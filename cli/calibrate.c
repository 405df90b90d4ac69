/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibrate.c - `memgate calibrate`: this host class's A/A noise, filed in a history
 * (session/calibrate.c runs it). */
#include "cli/cli.h"
#include "session/ab.h"

int cli_cmd_calibrate(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "calibrate");
	const struct session_ab ab = {
	    .history = c.calibration,
	    .rounds = c.rounds,
	    .rounds_set = c.rounds_set,
	    .runs = c.runs,
	    .warmup_set = c.warmup_set,
	    .timeout_set = c.timeout_set,
	};

	if (ret)
		return ret;
	if (!c.calibration)
		return cli_usage_error("calibrate needs --history DIR: where the baselines of this "
				       "host class are kept");
	return session_calibrate(&c.cfg, &ab);
}
