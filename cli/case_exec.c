/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case_exec.c - `memgate case-exec`: memgate's own, one case in this process under callgrind
 * (run/runner.c starts it). */
#include "cli/cli.h"

int cli_cmd_case_exec(int argc, char **argv)
{
	struct cli c;
	int ret = cli_parse(&c, argc, argv, "case-exec");

	if (ret)
		return ret;
	if (c.cfg.n_names != 1 || !c.exec.dump || !c.exec.deadline_ns)
		return cli_usage_error(
		    "case-exec is memgate's own: --fd, --case, --deadline-ns and "
		    "--dump, from its runner");
	return session_case_exec(&c.cfg, (int)c.exec.fd, c.exec.deadline_ns, c.exec.dump);
}
