/* SPDX-License-Identifier: GPL-2.0-or-later */
/* run.c - `memgate list`, `memgate run` and `case-exec`: their options into a session, called. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "run/runner.h"

/* `list`, on the plan: the cases, their metrics and the gates, as text or JSON. */
static int list_planned(struct cli *c, struct session *p)
{
	return session_list(p, c->json_out, stdout);
}

/* `run`, on the plan: the session runs it, reports it and says how it went. */
static int run_planned(struct cli *c, struct session *p)
{
	(void)c;
	return session_run(p, stdout);
}

/* Parse, plan as list and run do, @act on the plan, end the session. */
static int with_plan(int argc, char **argv, const char *command,
		     int (*act)(struct cli *c, struct session *p))
{
	struct cli c;
	struct session s;
	int ret = cli_parse(&c, argc, argv, command);

	if (ret || (ret = session_plan(&s, &c.cfg)))
		return ret;
	ret = act(&c, &s);
	session_close(&s);
	return ret;
}

int cli_cmd_list(int argc, char **argv)
{
	return with_plan(argc, argv, "list", list_planned);
}

int cli_cmd_run(int argc, char **argv)
{
	return with_plan(argc, argv, "run", run_planned);
}

int cli_cmd_case_exec(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret;

	/* jansson seeds its hash tables at random: which buckets the events touch would move the
	 * misses from run to run. */
	json_object_seed(1);
	ret = cli_parse(&c, argc, argv, "case-exec");

	if (ret)
		return ret;
	if (c.cfg.n_names != 1 || !c.dump || !c.deadline_ns)
		return cli_usage_error(
		    "case-exec is memgate's own: --fd, --case, --deadline-ns and "
		    "--dump, from its runner");
	c.cfg.opts.counter = COUNTER_SIMULATED;
	c.cfg.opts.sim_dump = c.dump;
	/* No host: see runner.c on why a counted case plans without it. */
	memset(&hw, 0, sizeof(hw));
	ret = session_expand(&c.cfg, &hw, &insts, &n);
	if (!ret && n != 1)
		ret = cli_usage_error("case-exec: no case named %s", c.cfg.names[0]);
	if (!ret)
		runner_case_exec(&insts[0], &hw, &c.cfg.opts, (int)c.fd, c.deadline_ns);
	free(insts);
	hw_release(&hw);
	return ret;
}
