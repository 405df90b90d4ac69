/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_names.c - libFuzzer target: --impl assignments, -k globs against case names, and the
 * case identity A/B and baselines match by. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/case.h"
#include "run/impl_opts.h"
#include "suites/suites.h"
#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size); /* what a parser of a string sees */
	char key[256], *half;
	struct impl_opts o = {0};
	const struct impl_key *keys[IMPL_MAX_KEYS];
	size_t n = suites_impl_keys(keys, IMPL_MAX_KEYS);
	struct mg_err err;

	if (!text)
		return 0;
	(void)impl_opts_set(&o, keys, n, text, &err);
	(void)case_key(text, key, sizeof(key));
	half = text + strlen(text) / 2;
	(void)text_glob(text, half);
	(void)text_index((const char *const[]){"a", NULL, "b"}, 3, text);
	free(text);
	return 0;
}
