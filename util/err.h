/* SPDX-License-Identifier: GPL-2.0-or-later */
/* err.h - the small error record public functions fill when a person will read the reason. */
#ifndef MG_UTIL_ERR_H
#define MG_UTIL_ERR_H

#include <stdarg.h>

struct mg_err {
	int code;      /* errno-style code, 0 when nothing went wrong */
	char msg[512]; /* what failed and what to do about it, for a person */
};

/**
 * mg_err_set() - record an error; a NULL @err is allowed and ignored.
 * Returns -@code (or -1 when @code is 0) so callers can "return mg_err_set(...)".
 */
int mg_err_set(struct mg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** mg_err_clear() - reset @err to "no error". */
void mg_err_clear(struct mg_err *err);

#endif
