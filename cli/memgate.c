/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memgate.c - the commands that only describe: `hw`, `man`, `completion`, `ab-protocol`. */
#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"
#include "judge/ab.h"

int cli_cmd_hw(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	int ret = cli_parse(&c, argc, argv, "hw");

	if (ret || (ret = session_load_host(&hw, c.cfg.topology, c.cfg.host_dir)))
		return ret;
	if (c.record_dir) {
		struct mg_err err = {0};

		/* What memgate read of this host, for a bug report or the recorded matrix. */
		if (hw_record(&hw, c.record_dir, &err)) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = err.code == EINVAL ? EXIT_USAGE : EXIT_HARNESS;
		} else {
			fprintf(stderr, "memgate: recorded this host in %s\n", c.record_dir);
		}
		hw_release(&hw);
		return ret;
	}
	if (c.json_out)
		ret = hw_print_json(&hw, stdout) ? EXIT_HARNESS : EXIT_PASSED;
	else
		hw_print_text(&hw, stdout);
	hw_release(&hw);
	return ret;
}

int cli_cmd_man(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "man");

	return ret ? ret : cli_print_man(stdout);
}

int cli_cmd_completion(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "completion");

	return ret ? ret : cli_print_completion(stdout);
}

/* The A/B protocol: what `memgate ab` asks a side first. */
int cli_cmd_ab_protocol(int argc, char **argv)
{
	struct cli c;
	/* A side's options, as its `run` takes them: a typo is refused before ab starts. */
	int ret = cli_parse(&c, argc, argv, "ab-protocol");

	if (ret)
		return ret;
	puts(AB_PROTOCOL_LINE);
	return EXIT_PASSED;
}
