/* summary.c - a suite's table of figures beside the published ones. */
#include "suites/summary.h"

#include <stdlib.h>

char *summary_write(const struct summary_table *t, const struct case_result *results, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!t->wanted(&results[i]))
			continue;
		if (!f) {
			if (!(f = open_memstream(&buf, &len)))
				return NULL;
			if (t->header)
				fputs(t->header, f);
		}
		t->row(f, &results[i]);
	}
	if (!f)
		return NULL;
	if (t->published)
		fputs(t->published, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
