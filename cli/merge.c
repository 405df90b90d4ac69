/* merge.c - `memgate merge`: the results of a run's shards (--shard I/N on several agents of
 * one host class) as one results file, the unit of history that baselines and compare read. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "harness/history.h"
#include "reports/file.h"

/* A string member of @o, or "" when it has none. */
static const char *member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Load @path as results of this memgate's format; NULL (said why) when it is not. */
static json_t *load_shard(const char *path)
{
	json_error_t e;
	json_t *root = json_load_file(path, 0, &e);

	if (!root) {
		fprintf(stderr, "memgate: %s:%d: %s\n", path, e.line, e.text);
		return NULL;
	}
	if (json_integer_value(json_object_get(root, "format")) != HISTORY_FORMAT ||
	    !json_is_array(json_object_get(root, "cases"))) {
		fprintf(stderr,
			"memgate: %s: not memgate results of format %d (a \"format\" and a "
			"\"cases\" array)\n",
			path, HISTORY_FORMAT);
		json_decref(root);
		return NULL;
	}
	return root;
}

/*
 * Note case @c in @seen (a JSON object used as a hash set: merging stays linear in the cases,
 * 40,000 of them once took minutes). Returns false when it was there already.
 */
static bool first_time(json_t *seen, const json_t *c)
{
	char id[1024];

	snprintf(id, sizeof(id), "%s\x1f%s\x1f%s", member(c, "suite"), member(c, "group"),
		 member(c, "name"));
	if (json_object_get(seen, id))
		return false;
	json_object_set_new(seen, id, json_true());
	return true;
}

/*
 * Append @shard's cases to @into. The shards must be of one host class and one memgate build,
 * and no case may be in two of them (the shards of one run partition its cases).
 */
static int add_shard(json_t *into, json_t *seen, const char *first, json_t *shard, const char *path)
{
	const json_t *hc = json_object_get(into, "host_class"),
		     *sc = json_object_get(shard, "host_class");
	json_t *c, *shards = json_object_get(into, "shards");
	size_t i;

	if (strcmp(member(hc, "hash"), member(sc, "hash"))) {
		fprintf(stderr,
			"memgate: %s is of host class %s, %s of %s: shards of one run share a "
			"host class\n",
			path, member(sc, "hash"), first, member(hc, "hash"));
		return EXIT_USAGE;
	}
	if (strcmp(member(into, "memgate_commit"), member(shard, "memgate_commit"))) {
		fprintf(stderr, "memgate: %s was measured by memgate %s, %s by %s: not one run\n",
			path, member(shard, "memgate_commit"), first,
			member(into, "memgate_commit"));
		return EXIT_USAGE;
	}
	json_array_foreach(json_object_get(shard, "cases"), i, c)
	{
		if (!first_time(seen, c)) {
			fprintf(stderr,
				"memgate: %s: case %s.%s.%s is in an earlier shard too: shards of "
				"one run do not overlap\n",
				path, member(c, "suite"), member(c, "group"), member(c, "name"));
			return EXIT_USAGE;
		}
		json_array_append(json_object_get(into, "cases"), c);
	}
	json_array_append_new(shards, json_pack("{s:s, s:s, s:O}", "path", path, "hostname",
						member(shard, "hostname"), "time_s",
						json_object_get(shard, "time_s")));
	/* The shards ran side by side: the run took as long as the longest. */
	if (json_real_value(json_object_get(shard, "time_s")) >
	    json_real_value(json_object_get(into, "time_s")))
		json_object_set(into, "time_s", json_object_get(shard, "time_s"));
	return 0;
}

int cli_cmd_merge(int argc, char **argv)
{
	struct cli c;
	json_t *out = NULL, *seen;
	struct report_file rf;
	struct mg_err err = {0};
	int ret = cli_parse(&c, argc, argv, cli_merge_options, "", MAX_SUITE_ARGS);

	if (ret)
		return ret;
	if (c.n_args < 1)
		return cli_usage_error("merge needs the results files of the shards");
	if (!c.json_path)
		return cli_usage_error("merge needs --json FILE: where the merged results go");
	if ((ret = cli_check_reports(&c)))
		return ret;
	seen = json_object();
	for (int i = 0; i < c.n_args && !ret; i++) {
		json_t *shard = load_shard(c.args[i]);

		if (!shard) {
			ret = EXIT_USAGE;
		} else if (!out) {
			out = shard;
			for (size_t k = 0; k < json_array_size(json_object_get(out, "cases")); k++)
				first_time(seen, json_array_get(json_object_get(out, "cases"), k));
			json_object_set_new(out, "shards", json_array());
			json_array_append_new(json_object_get(out, "shards"),
					      json_pack("{s:s, s:s, s:O}", "path", c.args[0],
							"hostname", member(out, "hostname"),
							"time_s", json_object_get(out, "time_s")));
		} else {
			ret = add_shard(out, seen, c.args[0], shard, c.args[i]);
			json_decref(shard);
		}
	}
	if (!ret && !(ret = report_file_open(&rf, c.json_path, &err) ? EXIT_HARNESS : 0)) {
		rf.failed = json_dumpf(out, rf.f, JSON_INDENT(1) | JSON_SORT_KEYS) != 0;
		ret = report_file_commit(&rf, &err) ? EXIT_HARNESS : 0;
	}
	if (ret == EXIT_HARNESS)
		fprintf(stderr, "memgate: %s\n", err.msg);
	if (!ret)
		fprintf(stderr, "memgate: merged %d shards, %zu cases, into %s\n", c.n_args,
			json_array_size(json_object_get(out, "cases")), c.json_path);
	json_decref(seen);
	json_decref(out);
	return ret;
}
