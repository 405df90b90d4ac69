/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_results.c - libFuzzer target: any bytes as a results (history) file, read back. */
#include <stdint.h>
#include <stdlib.h>

#include "judge/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hist_run r;
	struct mg_err err;

	if (hist_parse(&r, (const char *)data, size, "fuzz", &err))
		return 0;
	/* What a comparison reads of it: every case and metric by name. */
	for (size_t i = 0; i < r.n_cases; i++)
		for (size_t m = 0; m < r.cases[i].n_metrics; m++)
			(void)hist_metric(hist_case(&r, r.cases[i].full_name),
					  r.cases[i].metrics[m].name);
	hist_release(&r);
	return 0;
}
