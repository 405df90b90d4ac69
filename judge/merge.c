/* SPDX-License-Identifier: GPL-2.0-or-later */
/* merge.c - shards of one run as one results document: checked, de-duplicated, linear. */
#include "judge/merge.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "judge/history.h"

/* A string member of @o, or "" when it has none. */
static const char *member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
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

static int check_format(const json_t *doc, const char *name, struct mg_err *err)
{
	if (!json_is_object(doc) ||
	    json_integer_value(json_object_get(doc, "format")) != HISTORY_FORMAT ||
	    !json_is_array(json_object_get(doc, "cases")))
		return mg_err_set(err, EINVAL,
				  "%s: not memgate results of format %d (a \"format\" and a "
				  "\"cases\" array)",
				  name, HISTORY_FORMAT);
	return 0;
}

/* Append @shard's cases to @into, after checking it belongs to the same run. */
static int add_shard(json_t *into, json_t *seen, const char *first, const json_t *shard,
		     const char *name, struct mg_err *err)
{
	const json_t *hc = json_object_get(into, "host_class"),
		     *sc = json_object_get(shard, "host_class");
	json_t *c;
	size_t i;

	if (strcmp(member(hc, "hash"), member(sc, "hash")))
		return mg_err_set(err, EINVAL,
				  "%s is of host class %s, %s of %s: shards of one run share a "
				  "host class",
				  name, member(sc, "hash"), first, member(hc, "hash"));
	if (strcmp(member(into, "memgate_commit"), member(shard, "memgate_commit")))
		return mg_err_set(
		    err, EINVAL, "%s was measured by memgate %s, %s by %s: not one run", name,
		    member(shard, "memgate_commit"), first, member(into, "memgate_commit"));
	json_array_foreach(json_object_get(shard, "cases"), i, c)
	{
		if (!first_time(seen, c))
			return mg_err_set(err, EINVAL,
					  "%s: case %s.%s.%s is in an earlier shard too: shards of "
					  "one run do not overlap",
					  name, member(c, "suite"), member(c, "group"),
					  member(c, "name"));
		json_array_append(json_object_get(into, "cases"), c);
	}
	json_array_append_new(json_object_get(into, "shards"),
			      json_pack("{s:s, s:s, s:O*}", "path", name, "hostname",
					member(shard, "hostname"), "time_s",
					json_object_get(shard, "time_s")));
	/* The shards ran side by side: the run took as long as the longest. */
	if (json_number_value(json_object_get(shard, "time_s")) >
	    json_number_value(json_object_get(into, "time_s")))
		json_object_set(into, "time_s", json_object_get(shard, "time_s"));
	return 0;
}

int merge_shards(json_t *const *shards, const char *const *names, size_t n, json_t **out,
		 struct mg_err *err)
{
	json_t *into, *seen = json_object();
	int ret = 0;

	*out = NULL;
	if (!n)
		return mg_err_set(err, EINVAL, "no shard to merge");
	for (size_t i = 0; i < n && !ret; i++)
		ret = check_format(shards[i], names[i], err);
	into = ret ? NULL : json_deep_copy(shards[0]);
	if (!ret && (!into || !seen)) {
		ret = mg_err_set(err, ENOMEM, "out of memory merging the shards");
	} else if (!ret) {
		/* The first shard's cases start the set, and its own entry the list. */
		json_object_set_new(into, "cases", json_array());
		json_object_set_new(into, "shards", json_array());
		json_object_set_new(into, "time_s", json_real(0));
		ret = add_shard(into, seen, names[0], shards[0], names[0], err);
		for (size_t i = 1; i < n && !ret; i++)
			ret = add_shard(into, seen, names[0], shards[i], names[i], err);
	}
	json_decref(seen);
	if (ret) {
		json_decref(into);
		return ret;
	}
	*out = into;
	return 0;
}
