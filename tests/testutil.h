/* testutil.h - what the cmocka test programs share: includes, skips with a reason, paths. */
#ifndef MG_TESTS_TESTUTIL_H
#define MG_TESTS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* cmocka's TAP output drops the reason of a skip: print it as a TAP comment first. */
#define skip_because(...)                                                                          \
	do {                                                                                       \
		printf("# skipped: ");                                                             \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		skip();                                                                            \
		return; /* skip() does not come back; say so to the analyzer */                    \
	} while (0)

/* The build directory (tests/run.sh passes it; `build` when run by hand). */
static inline const char *test_build_dir(void)
{
	const char *b = getenv("MEMGATE_BUILD");

	return b ? b : "build";
}

/* Under AddressSanitizer (make asan): malloc is ASan's, mallinfo and malloc_trim are not glibc's.
 */
static inline int test_under_asan(void)
{
	const char *s = getenv("MEMGATE_SAN");

	return s && !strcmp(s, "asan");
}

/* Where the two JUnit schemas are: $MEMGATE_SCHEMAS, else the shared folder beside the checkout. */
static inline const char *test_schema_dir(void)
{
	const char *d = getenv("MEMGATE_SCHEMAS");

	return d && *d ? d : "../shared/schemas";
}

/* Real machines' hwloc XML, in the repository (with hwloc's licence). */
#define TOPO_DIR "topologies"

#endif
