/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json.h - the one way memgate reads JSON: a results file, a calibration, a host record, a
 * side's `list --json`, a child's events. A duplicate key is an error everywhere. */
#ifndef MG_UTIL_JSON_H
#define MG_UTIL_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

/**
 * json_doc_parse() - the one JSON document in the @len bytes at @text, which came from @name
 * (a path, or what the text is, for the errors) and should be @what (NULL: any document).
 * Returns it (json_decref() it) or NULL with @err (EINVAL) saying "NAME:LINE: what is wrong"
 * (with @what: "NAME:LINE: not WHAT (JSON): what is wrong"), a duplicated key named there.
 */
json_t *json_doc_parse(const char *text, size_t len, const char *name, const char *what,
		       struct mg_err *err);

/**
 * json_doc_load() - the JSON document in file @path, read as text_read_input() reads outside
 * input (a regular file of at most @max bytes), then parsed as json_doc_parse() does. Returns
 * it, or NULL with @err (@err->code ENOENT when there is no such file).
 */
json_t *json_doc_load(const char *path, size_t max, const char *what, struct mg_err *err);

#endif
