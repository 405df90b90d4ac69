/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - `memgate vm`: its options parsed and checked against each other; session/vm.c runs
 * the guest. */
#include "cli/cli.h"

int cli_cmd_vm(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "vm");

	if (ret)
		return ret;
	if (c.vm.shape && c.vm.shape_of)
		return cli_usage_error("vm: --shape or --shape-of, not both");
	if (!c.vm.kernel && (c.vm.modules || c.vm.no_icount))
		return cli_usage_error("vm: --%s goes with --kernel",
				       c.vm.modules ? "modules" : "no-icount");
	if (c.n_args == 0)
		return cli_usage_error(
		    "vm needs a command to run in the guest: memgate vm -- run ...");
	c.vm.args = c.args;
	c.vm.n_args = c.n_args;
	return session_vm(&c.cfg, &c.vm);
}
