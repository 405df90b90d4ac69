/* SPDX-License-Identifier: GPL-2.0-or-later */
/* merge.c - `memgate merge` from start to end: the results of a run's shards (--shard I/N on
 * several agents of one host class) as one results file, the unit of history. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "judge/merge.h"
#include "reports/file.h"
#include "session/internal.h"
#include "util/json.h"

int session_merge(const struct session_config *cfg, const char *const *files, int n_files)
{
	json_t **shards, *out = NULL;
	struct mg_err err = {0};
	int ret, n = 0;

	if ((ret = session_check_reports(cfg)))
		return ret;
	shards = calloc((size_t)n_files, sizeof(json_t *));
	if (!shards)
		return EXIT_HARNESS;
	for (; n < n_files && !ret; n++) {
		shards[n] = json_doc_load(files[n], HIST_MAX_BYTES, NULL, &err);
		if (!shards[n]) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = EXIT_USAGE;
		}
	}
	if (!ret && merge_shards(shards, files, (size_t)n_files, &out, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	if (!ret && report_write_json(cfg->json_path, out, &err))
		ret = EXIT_HARNESS;
	if (ret == EXIT_HARNESS && err.msg[0])
		fprintf(stderr, "memgate: %s\n", err.msg);
	if (!ret)
		fprintf(stderr, "memgate: merged %d shards, %zu cases, into %s\n", n_files,
			json_array_size(json_object_get(out, "cases")), cfg->json_path);
	for (int i = 0; i < n; i++)
		json_decref(shards[i]);
	free(shards);
	json_decref(out);
	return ret;
}
