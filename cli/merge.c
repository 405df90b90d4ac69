/* SPDX-License-Identifier: GPL-2.0-or-later */
/* merge.c - `memgate merge`: the results of a run's shards (--shard I/N on several agents of
 * one host class) as one results file, the unit of history that baselines and compare read. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "judge/history.h"
#include "judge/merge.h"
#include "reports/file.h"
#include "util/json.h"

int cli_cmd_merge(int argc, char **argv)
{
	struct cli c;
	json_t **shards, *out = NULL;
	struct mg_err err = {0};
	int ret = cli_parse(&c, argc, argv, "merge"), n = 0;

	if (ret)
		return ret;
	if (c.n_args < 1)
		return cli_usage_error("merge needs the results files of the shards");
	if (!c.cfg.json_path)
		return cli_usage_error("merge needs --json FILE: where the merged results go");
	if ((ret = session_check_reports(&c.cfg)))
		return ret;
	shards = calloc((size_t)c.n_args, sizeof(json_t *));
	if (!shards)
		return EXIT_HARNESS;
	for (; n < c.n_args && !ret; n++) {
		shards[n] = json_doc_load(c.args[n], HIST_MAX_BYTES, NULL, &err);
		if (!shards[n]) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = EXIT_USAGE;
		}
	}
	if (!ret &&
	    merge_shards(shards, (const char *const *)c.args, (size_t)c.n_args, &out, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	if (!ret && report_write_json(c.cfg.json_path, out, &err))
		ret = EXIT_HARNESS;
	if (ret == EXIT_HARNESS && err.msg[0])
		fprintf(stderr, "memgate: %s\n", err.msg);
	if (!ret)
		fprintf(stderr, "memgate: merged %d shards, %zu cases, into %s\n", c.n_args,
			json_array_size(json_object_get(out, "cases")), c.cfg.json_path);
	for (int i = 0; i < n; i++)
		json_decref(shards[i]);
	free(shards);
	json_decref(out);
	return ret;
}
