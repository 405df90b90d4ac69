/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_calibration.c - libFuzzer target: a history's calibration.json, any bytes: a calibration
 * whose metrics can be looked up, or an error naming the file, never a crash, a hang or a leak,
 * combined as ab combines the last three; then a callgrind dump's head read for its counts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge/calibration.h"
#include "hw/counter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size); /* what a parser of a string sees */
	struct calibration c;
	struct counter_reading r;
	struct mg_err err;

	if (!text)
		return 0;
	if (!calib_parse(&c, text, "fuzz.json", &err)) {
		/* As ab reads it: combined with the ones before it, here itself twice more. */
		const struct calibration *const each[] = {&c, &c, &c};
		struct calibration all;

		if (!calib_combine(&all, each, 3, &err)) {
			for (size_t i = 0; i < all.n; i++)
				calib_find(&all, "memslots.update.growth[impl=shift]",
					   all.e[i].key);
			calib_release(&all);
		}
		calib_release(&c);
	}
	counter_parse_dump(text, &r);
	free(text);
	return 0;
}
