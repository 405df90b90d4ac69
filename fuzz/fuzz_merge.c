/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_merge.c - libFuzzer target: results documents merged as the shards of one run: any
 * bytes get a merged run or an error naming the shard, never a crash, a hang or a leak. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge/merge.h"
#include "util/json.h"

#define MAX_SHARDS 4
#define SEP "\n@@\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[MAX_SHARDS] = {"a.json", "b.json", "c.json", "d.json"};
	json_t *shards[MAX_SHARDS], *out = NULL;
	const char *text = (const char *)data, *end = text + size;
	struct mg_err err;
	size_t n = 0;

	while (n < MAX_SHARDS && text <= end) {
		const char *sep = memmem(text, (size_t)(end - text), SEP, strlen(SEP));
		size_t len = sep ? (size_t)(sep - text) : (size_t)(end - text);

		shards[n] = json_doc_parse(text, len, "a shard", NULL, NULL);
		if (!shards[n])
			break;
		n++;
		if (!sep)
			break;
		text = sep + strlen(SEP);
	}
	if (n && !merge_shards(shards, names, n, &out, &err)) {
		char *dump = json_dumps(out, JSON_COMPACT);

		free(dump);
		json_decref(out);
	}
	for (size_t i = 0; i < n; i++)
		json_decref(shards[i]);
	return 0;
}
