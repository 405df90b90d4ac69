/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - `memgate vm`: its options parsed and checked against each other; session/vm.c runs
 * the guest. */
#include "cli/cli.h"
#include "session/vm.h"

int cli_cmd_vm(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "vm");
	struct session_vm vm = {
	    .shape = c.shape,
	    .shape_of = c.shape_of,
	    .kernel = c.vm_kernel,
	    .modules = c.vm_modules,
	    .cpu = c.vm_cpu,
	    .no_icount = c.vm_no_icount,
	    .dry_run = c.vm_dry_run,
	    .timeout_set = c.timeout_set,
	    .args = c.args,
	    .n_args = c.n_args,
	};

	if (ret)
		return ret;
	if (c.shape && c.shape_of)
		return cli_usage_error("vm: --shape or --shape-of, not both");
	if (!c.vm_kernel && (c.vm_modules || c.vm_no_icount))
		return cli_usage_error("vm: --%s goes with --kernel",
				       c.vm_modules ? "modules" : "no-icount");
	if (c.n_args == 0)
		return cli_usage_error(
		    "vm needs a command to run in the guest: memgate vm -- run ...");
	return session_vm(&c.cfg, &vm);
}
