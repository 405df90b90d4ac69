/* SPDX-License-Identifier: GPL-2.0-or-later */
/* merge.h - a run's shards (--shard I/N on several agents) put back together as one run. */
#ifndef MG_JUDGE_MERGE_H
#define MG_JUDGE_MERGE_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

/**
 * merge_shards() - the @n results documents @shards (named @names in messages) as one: the
 * cases of all, a "shards" list, the longest shard's time. They must be memgate results of
 * this format, of one host class and one memgate build, and no case may be in two of them.
 * Linear in the cases. Returns 0 with a new document in @out (json_decref it), or -EINVAL
 * with @err naming the shard and what is wrong, or -ENOMEM.
 */
int merge_shards(json_t *const *shards, const char *const *names, size_t n, json_t **out,
		 struct mg_err *err);

#endif
