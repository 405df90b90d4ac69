/* SPDX-License-Identifier: GPL-2.0-or-later */
/* err.c - filling struct mg_err. */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

int mg_err_set(struct mg_err *err, int code, const char *fmt, ...)
{
	if (err) {
		/* Through a copy: a message may be made from the one @err holds ("%s", err->msg).
		 */
		char msg[sizeof(err->msg)];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		memcpy(err->msg, msg, sizeof(msg));
		err->code = code;
	}
	return code > 0 ? -code : (code < 0 ? code : -1);
}

void mg_err_clear(struct mg_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
