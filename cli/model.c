/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model.c - `memgate model`: the A/B procedures' A/A rate and power, modelled
 * (session/model.c). */
#include "cli/cli.h"

int cli_cmd_model(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "model");

	return ret ? ret : session_model(&c.model.params, c.model.spreads, c.model.n_spreads);
}
