/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_rules.c - libFuzzer target: any bytes as a rules file; an error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size); /* what a parser of a string sees */
	struct rules r;
	struct mg_err err;

	if (!text)
		return 0;
	if (!rules_parse(&r, text, "fuzz", &err)) {
		/* Parsed: every lookup must hold up too. */
		struct metric_def m = {"impl.update_max", "cycles", LOWER_IS_BETTER};

		(void)rules_tolerance(&r, "memslots", "memslots.update.growing[capacity=128]", &m);
		rules_release(&r);
	}
	free(text);
	return 0;
}
