/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json.c - JSON read one way: whole, bounded, duplicate keys refused, errors with their line. */
#include "util/json.h"

#include <errno.h>
#include <stdlib.h>

#include "util/text.h"

json_t *json_doc_parse(const char *text, size_t len, const char *name, const char *what,
		       struct mg_err *err)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	/* jansson says line -1 of an empty text: line 1 is where a reader looks. */
	int line = jerr.line > 0 ? jerr.line : 1;

	if (!doc && what)
		mg_err_set(err, EINVAL, "%s:%d: not %s (JSON): %s", name, line, what, jerr.text);
	else if (!doc)
		mg_err_set(err, EINVAL, "%s:%d: %s", name, line, jerr.text);
	return doc;
}

json_t *json_doc_load(const char *path, size_t max, const char *what, struct mg_err *err)
{
	size_t len = 0;
	char *text = text_read_input(path, max, &len, err);
	json_t *doc;

	if (!text)
		return NULL;
	doc = json_doc_parse(text, len, path, what, err);
	free(text);
	return doc;
}
