/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab_protocol.c - `memgate ab-protocol`: what `memgate ab` asks a side first. */
#include <stdio.h>

#include "cli/cli.h"
#include "session/ab.h"

int cli_cmd_ab_protocol(int argc, char **argv)
{
	struct cli c;
	/* A side's options, as its `run` takes them: a typo is refused before ab starts. */
	int ret = cli_parse(&c, argc, argv, "ab-protocol");

	if (ret)
		return ret;
	puts(session_ab_protocol());
	return EXIT_PASSED;
}
